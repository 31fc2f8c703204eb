"""PyTorch as a differential oracle for nn and optim: modules, losses and whole optimizer
trajectories in float64, dtype preservation in float32, and optimizer state round-trips.

Each module is built here, given random weights, and its torch twin loads the same weights
through ``state_dict`` (so the parameter names must match PyTorch's too).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

import autograd_core as ag
import nn
import nn.functional as F
import optim
from helpers import assert_close
from torch_oracle import Arg, compare_with_torch, const, normal

TF = torch.nn.functional
F64 = "float64"


# --- modules: (ours, the torch twin, input) --------------------------------------------------
def module_case(name: str, ours: Callable, theirs: Callable, arg) -> object:
    return pytest.param(ours, theirs, arg, id=name)


MODULES = [
    module_case("linear", lambda: nn.Linear(5, 4, dtype=F64), lambda: torch.nn.Linear(5, 4), normal(3, 5)),
    module_case(
        "linear_no_bias",
        lambda: nn.Linear(5, 4, bias=False, dtype=F64),
        lambda: torch.nn.Linear(5, 4, bias=False),
        normal(3, 5),
    ),
    module_case("linear_batched", lambda: nn.Linear(5, 4, dtype=F64), lambda: torch.nn.Linear(5, 4), normal(2, 3, 5)),
    module_case("linear_1d_input", lambda: nn.Linear(5, 4, dtype=F64), lambda: torch.nn.Linear(5, 4), normal(5)),
    module_case(
        "embedding_repeated",
        lambda: nn.Embedding(6, 3, dtype=F64),
        lambda: torch.nn.Embedding(6, 3),
        const([[0, 5, 2], [2, 2, 0]]),
    ),
    module_case("layer_norm", lambda: nn.LayerNorm(4, dtype=F64), lambda: torch.nn.LayerNorm(4), normal(3, 4)),
    module_case(
        "layer_norm_2d",
        lambda: nn.LayerNorm((3, 4), eps=1e-3, dtype=F64),
        lambda: torch.nn.LayerNorm((3, 4), eps=1e-3),
        normal(2, 3, 4),
    ),
    module_case(
        "layer_norm_no_bias",
        lambda: nn.LayerNorm(4, bias=False, dtype=F64),
        lambda: torch.nn.LayerNorm(4, bias=False),
        normal(3, 4),
    ),
    module_case(
        "layer_norm_no_affine",
        lambda: nn.LayerNorm(4, elementwise_affine=False, dtype=F64),
        lambda: torch.nn.LayerNorm(4, elementwise_affine=False),
        normal(3, 4),
    ),
    module_case("relu", nn.ReLU, torch.nn.ReLU, normal(3, 4)),
    module_case("tanh", nn.Tanh, torch.nn.Tanh, normal(3, 4)),
    module_case("sigmoid", nn.Sigmoid, torch.nn.Sigmoid, normal(3, 4)),
    module_case("gelu", nn.GELU, torch.nn.GELU, normal(3, 4)),
    module_case("gelu_tanh", lambda: nn.GELU("tanh"), lambda: torch.nn.GELU("tanh"), normal(3, 4)),
    module_case("flatten", nn.Flatten, torch.nn.Flatten, normal(2, 3, 4)),
    module_case("dropout_eval", lambda: nn.Dropout(0.5).eval(), lambda: torch.nn.Dropout(0.5).eval(), normal(3, 4)),
    module_case(
        "sequential",
        lambda: nn.Sequential(
            nn.Linear(5, 8, dtype=F64), nn.GELU(), nn.LayerNorm(8, dtype=F64), nn.Linear(8, 3, dtype=F64), nn.Tanh()
        ),
        lambda: torch.nn.Sequential(
            torch.nn.Linear(5, 8), torch.nn.GELU(), torch.nn.LayerNorm(8), torch.nn.Linear(8, 3), torch.nn.Tanh()
        ),
        normal(4, 5),
    ),
]


def torch_twin(ours: nn.Module, make_twin: Callable[[], torch.nn.Module]) -> torch.nn.Module:
    """The torch module holding exactly our weights (float64), loaded by name, strictly."""
    twin = make_twin().double()
    twin.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    return twin


@pytest.mark.parametrize(("make_ours", "make_twin", "arg"), MODULES)
def test_module_matches_torch(float64_backend, make_ours, make_twin, arg):
    ours = make_ours()
    # Random weights (not the init's ones and zeros), loaded from numpy arrays.
    rng = np.random.default_rng(1)
    ours.load_state_dict({k: rng.standard_normal(v.shape) for k, v in ours.state_dict().items()})
    twin = torch_twin(ours, make_twin)
    compare_with_torch(ours, twin, [arg])
    theirs = dict(twin.named_parameters())
    assert [name for name, _ in ours.named_parameters()] == list(theirs)
    for name, p in ours.named_parameters():
        assert p.grad is not None, name
        assert_close(p.grad, theirs[name].grad)


# --- functional losses and layers ------------------------------------------------------------
def loss_case(name: str, ours: Callable, theirs: Callable, *args) -> object:
    return pytest.param(ours, theirs, args, id=name)


TARGETS = const([0, 3, 1, 3, 2])
IGNORED = const([0, -100, 1, 3, -100])
REDUCTIONS = ("mean", "sum", "none")
SOFT_LABELS = Arg(lambda r: r.uniform(0, 1, (3, 4)), grad=False)

LOSSES = (
    [
        loss_case(
            f"cross_entropy-{red}-{name}",
            lambda x, t, r=red, k=kw: F.cross_entropy(x, t, reduction=r, **k),
            lambda x, t, r=red, k=kw: TF.cross_entropy(x, t, reduction=r, **k),
            logits,
            target,
        )
        for red in REDUCTIONS
        for name, logits, target, kw in (
            ("plain", normal(5, 4), TARGETS, {}),
            ("ignored_default", normal(5, 4), IGNORED, {}),
            ("ignore_index_3", normal(5, 4), TARGETS, {"ignore_index": 3}),
            ("huge_logits", normal(5, 4, scale=1e4), TARGETS, {}),
        )
    ]
    + [
        loss_case(
            f"nll_loss-{red}-{name}",
            lambda x, t, r=red, k=kw: F.nll_loss(x, t, reduction=r, **k),
            lambda x, t, r=red, k=kw: TF.nll_loss(x, t, reduction=r, **k),
            normal(5, 4),
            target,
        )
        for red in REDUCTIONS
        for name, target, kw in (
            ("plain", TARGETS, {}),
            ("ignored", IGNORED, {}),
            ("ignore_index_3", TARGETS, {"ignore_index": 3}),
        )
    ]
    + [
        loss_case(
            f"mse_loss-{red}",
            lambda x, t, r=red: F.mse_loss(x, t, reduction=r),
            lambda x, t, r=red: TF.mse_loss(x, t, reduction=r),
            normal(3, 4),
            normal(3, 4),
        )
        for red in REDUCTIONS
    ]
    + [
        loss_case(
            f"bce_with_logits-{red}-{name}",
            lambda x, t, *w, r=red, k=keys: F.binary_cross_entropy_with_logits(x, t, reduction=r, **dict(zip(k, w))),
            lambda x, t, *w, r=red, k=keys: TF.binary_cross_entropy_with_logits(x, t, reduction=r, **dict(zip(k, w))),
            normal(3, 4, scale=scale),
            SOFT_LABELS,
            *weights,
        )
        for red in REDUCTIONS
        for name, scale, keys, weights in (
            ("plain", 3, (), ()),
            ("weight", 3, ("weight",), (const([0.5, 1.0, 2.0, 0.0]),)),
            ("pos_weight", 3, ("pos_weight",), (const([3.0, 1.0, 0.5, 2.0]),)),
            (
                "weight_and_pos_weight",
                3,
                ("weight", "pos_weight"),
                (const([[0.5], [1.0], [2.0]]), const([3.0, 1.0, 0.5, 2.0])),
            ),
            ("huge_logits", 1e3, ("pos_weight",), (const([3.0, 1.0, 0.5, 2.0]),)),
        )
    ]
    + [
        loss_case(
            "layer_norm_affine",
            lambda x, w, b: F.layer_norm(x, (4,), w, b),
            lambda x, w, b: TF.layer_norm(x, (4,), w, b),
            normal(3, 4),
            normal(4),
            normal(4),
        ),
        loss_case(
            "layer_norm_2d_eps",
            lambda x: F.layer_norm(x, (3, 4), eps=0.1),
            lambda x: TF.layer_norm(x, (3, 4), eps=0.1),
            normal(2, 3, 4),
        ),
        loss_case("embedding_repeated", F.embedding, TF.embedding, const([[1, 4, 1], [1, 0, 4]]), normal(5, 3)),
        loss_case("linear", F.linear, TF.linear, normal(3, 5), normal(4, 5), normal(4)),
        loss_case("softmax_dim0", lambda x: F.softmax(x, dim=0), lambda x: TF.softmax(x, dim=0), normal(3, 4)),
        loss_case("log_softmax", F.log_softmax, lambda x: TF.log_softmax(x, dim=-1), normal(3, 4)),
        loss_case(
            "dropout_not_training",
            lambda x: F.dropout(x, 0.3, training=False),
            lambda x: TF.dropout(x, 0.3, training=False),
            normal(3, 4),
        ),
    ]
)


@pytest.mark.parametrize(("ours", "theirs", "args"), LOSSES)
def test_functional_matches_torch(float64_backend, ours, theirs, args):
    compare_with_torch(ours, theirs, args)


# --- optimizer trajectories --------------------------------------------------------------------
def pair(name: str, settings: dict, cls: str) -> object:
    return pytest.param(getattr(optim, cls), getattr(torch.optim, cls), settings, id=name)


OPTIMIZERS = [
    pytest.param(optim.SGD, torch.optim.SGD, dict(lr=0.1), id="sgd"),
    pytest.param(optim.SGD, torch.optim.SGD, dict(lr=0.1, momentum=0.9), id="sgd_momentum"),
    pytest.param(optim.SGD, torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True), id="sgd_nesterov"),
    pytest.param(
        optim.SGD,
        torch.optim.SGD,
        dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.05),
        id="sgd_dampening_weight_decay",
    ),
    pytest.param(
        optim.Adam, torch.optim.Adam, dict(lr=0.02, betas=(0.8, 0.99), weight_decay=0.05), id="adam_weight_decay"
    ),
    pytest.param(optim.AdamW, torch.optim.AdamW, dict(lr=0.02, weight_decay=0.01), id="adamw"),
    pair("rmsprop", dict(lr=0.01), "RMSprop"),
    pair("rmsprop_centered", dict(lr=0.01, alpha=0.9, centered=True), "RMSprop"),
    pair("rmsprop_centered_small_alpha", dict(lr=0.003, alpha=0.3, centered=True), "RMSprop"),  # lerp's other form
    pair("rmsprop_momentum", dict(lr=0.005, momentum=0.9, eps=1e-6), "RMSprop"),
    pair("rmsprop_weight_decay", dict(lr=0.01, weight_decay=0.1), "RMSprop"),
    pair("rmsprop_everything", dict(lr=0.01, alpha=0.95, weight_decay=0.05, momentum=0.5, centered=True), "RMSprop"),
    pair("adagrad", dict(lr=0.1), "Adagrad"),
    pair("adagrad_lr_decay", dict(lr=0.1, lr_decay=0.05), "Adagrad"),
    pair("adagrad_weight_decay", dict(lr=0.1, weight_decay=0.05), "Adagrad"),
    pair("adagrad_initial_accumulator", dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-6), "Adagrad"),
    pair("adagrad_everything", dict(lr=0.2, lr_decay=0.1, weight_decay=0.01, initial_accumulator_value=0.1), "Adagrad"),
]


def mlp(dtype: str) -> nn.Module:
    return nn.Sequential(nn.Linear(6, 8, dtype=dtype), nn.Tanh(), nn.Linear(8, 3, dtype=dtype))


def torch_mlp() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))


def batch(seed: int = 2) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((10, 6)), rng.integers(0, 3, 10)


def train(model, opt, loss_fn, x, y, steps: int) -> list[float]:
    """`steps` optimizer steps on one batch (either framework); the loss before each step."""
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return losses


def train_ours(model, opt, steps: int, dtype: str = F64) -> list[float]:
    x, y = batch()
    return train(model, opt, F.cross_entropy, ag.tensor(x, dtype=dtype), ag.tensor(y), steps)


def train_twin(model, opt, steps: int, dtype: torch.dtype = torch.float64) -> list[float]:
    x, y = batch()
    return train(model, opt, TF.cross_entropy, torch.tensor(x, dtype=dtype), torch.tensor(y), steps)


def assert_same_weights(ours: nn.Module, twin: torch.nn.Module, **tol) -> None:
    theirs = twin.state_dict()
    for name, p in ours.state_dict().items():
        assert_close(p, theirs[name], **tol)


@pytest.mark.parametrize(("ours_cls", "torch_cls", "settings"), OPTIMIZERS)
def test_optimizer_trajectory_matches_torch(float64_backend, ours_cls, torch_cls, settings):
    ag.manual_seed(0)  # the same initial weights whichever tests ran before
    model = mlp(F64)
    twin = torch_twin(model, torch_mlp)
    losses = train_ours(model, ours_cls(model.parameters(), **settings), steps=20)
    expected = train_twin(twin, torch_cls(twin.parameters(), **settings), steps=20)
    assert expected[-1] < expected[0]  # the run really trains
    # Mandated tolerances: every step's loss to 1e-9, the final weights to 1e-8 (relative).
    np.testing.assert_allclose(losses, expected, rtol=1e-9, atol=0)
    assert_same_weights(model, twin, rtol=1e-8, atol=1e-12)


FLOAT32_OPTIMIZERS = [
    pytest.param(optim.SGD, torch.optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.01), id="sgd_momentum"),
    pytest.param(optim.AdamW, torch.optim.AdamW, dict(lr=0.02), id="adamw"),
    pair("rmsprop_centered_momentum", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.01), "RMSprop"),
    pair("adagrad_lr_decay", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1), "Adagrad"),
]


def state_arrays(opt: optim.Optimizer) -> list:
    return [v for s in opt.state.values() for v in s.values() if not isinstance(v, (int, float))]


@pytest.mark.parametrize(("ours_cls", "torch_cls", "settings"), FLOAT32_OPTIMIZERS)
def test_float32_model_stays_float32(backend, ours_cls, torch_cls, settings):
    model = mlp("float32")
    twin = torch_mlp()
    twin.load_state_dict({k: torch.tensor(v.numpy()) for k, v in model.state_dict().items()})
    opt = ours_cls(model.parameters(), **settings)
    losses = train_ours(model, opt, steps=3, dtype="float32")
    expected = train_twin(twin, torch_cls(twin.parameters(), **settings), steps=3, dtype=torch.float32)
    for p in model.parameters():
        assert p.dtype == ag.float32 and p.grad.dtype == ag.float32
        assert backend.dtype_name(p.array.dtype) == "float32"
    state = state_arrays(opt)
    assert len(state) >= len(list(model.parameters()))
    assert all(backend.is_native(v) and backend.dtype_name(v.dtype) == "float32" for v in state)
    assert_close(losses, expected, "float32")
    assert_same_weights(model, twin, dtype="float32")


ROUND_TRIP_OPTIMIZERS = [
    pytest.param(optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01), id="sgd_nesterov"),
    pytest.param(optim.Adam, dict(lr=0.02, betas=(0.8, 0.99), weight_decay=0.05), id="adam"),
    pytest.param(optim.AdamW, dict(lr=0.02, weight_decay=0.01), id="adamw"),
    pytest.param(optim.RMSprop, dict(lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.01), id="rmsprop"),
    pytest.param(optim.Adagrad, dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.2), id="adagrad"),
]


@pytest.mark.parametrize(("cls", "settings"), ROUND_TRIP_OPTIMIZERS)
def test_optimizer_state_dict_round_trip(float64_backend, cls, settings):
    """A fresh optimizer (built with default settings) loaded from the state of one that
    took 3 steps continues exactly as that one does; the state holds what PyTorch's holds."""
    model = mlp(F64)
    opt = cls(model.parameters(), **settings)
    train_ours(model, opt, steps=3)
    twin = torch_mlp().double()
    torch_opt = getattr(torch.optim, cls.__name__)(twin.parameters(), **settings)
    train_twin(twin, torch_opt, steps=1)
    assert set(opt.state_dict()["state"][0]) == set(torch_opt.state_dict()["state"][0])

    resumed = mlp(F64)
    resumed.load_state_dict({k: v.numpy() for k, v in model.state_dict().items()})
    resumed_opt = cls(resumed.parameters())
    resumed_opt.load_state_dict(opt.state_dict())
    assert {k: v for k, v in resumed_opt.param_groups[0].items() if k != "params"} == {
        k: v for k, v in opt.param_groups[0].items() if k != "params"
    }

    expected = train_ours(model, opt, steps=4)
    assert_close(train_ours(resumed, resumed_opt, steps=4), expected)
    for p, q in zip(model.parameters(), resumed.parameters()):
        assert_close(q, p)
