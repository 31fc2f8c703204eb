"""RMSprop, Adagrad and gradient clipping against PyTorch on every backend: 20-step float64
trajectories (loss per step to 1e-9, weights to 1e-8), float32 staying float32, state dict
round trips, argument checks, clipping values and gradients, a whole training loop with a
schedule and clipping, and the same inside a compiled step."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from test_torch_parity_nn import (
    F64,
    assert_same_weights,
    batch,
    mlp,
    torch_mlp,
    torch_twin,
)

import autograd_core as ag
import nn
import nn.functional as F
import optim
from helpers import assert_close

TF = torch.nn.functional


def pair(name: str, settings: dict, cls: str) -> object:
    return pytest.param(getattr(optim, cls), getattr(torch.optim, cls), settings, id=name)


BAD = [
    (optim.RMSprop, dict(lr=math.nan), "invalid lr"),
    (optim.RMSprop, dict(lr=-0.1), "invalid lr"),
    (optim.RMSprop, dict(alpha=-0.5), "invalid alpha"),
    (optim.RMSprop, dict(eps=-1e-8), "invalid eps"),
    (optim.RMSprop, dict(momentum=-0.9), "invalid momentum"),
    (optim.RMSprop, dict(weight_decay=math.nan), "invalid weight_decay"),
    (optim.Adagrad, dict(lr=-0.1), "invalid lr"),
    (optim.Adagrad, dict(lr_decay=-0.1), "invalid lr_decay"),
    (optim.Adagrad, dict(weight_decay=-0.1), "invalid weight_decay"),
    (optim.Adagrad, dict(initial_accumulator_value=-1.0), "invalid initial_accumulator_value"),
    (optim.Adagrad, dict(eps=math.nan), "invalid eps"),
]


@pytest.mark.parametrize(("cls", "settings", "message"), BAD, ids=[f"{c.__name__}-{m}" for c, _, m in BAD])
def test_out_of_range_or_nan_settings_are_refused(backend, cls, settings, message):
    with pytest.raises(ValueError, match=message):
        cls(nn.Linear(2, 1).parameters(), **settings)
    with pytest.raises(ValueError):  # as PyTorch refuses them
        getattr(torch.optim, cls.__name__)(torch.nn.Linear(2, 1).parameters(), **settings)


# --- gradient clipping ---------------------------------------------------------------------------
SHAPES = [(3, 4), (5,), ()]


def with_grads(grads: list, ours: bool, dtype: str = F64) -> list:
    """Parameters of either framework holding `grads` (None: no gradient)."""
    params = []
    for g in grads:
        if ours:
            p = ag.zeros(np.shape(g) if g is not None else (2,), dtype=dtype, requires_grad=True)
            p.grad = None if g is None else ag.tensor(g, dtype=dtype)
        else:
            p = torch.zeros(np.shape(g) if g is not None else (2,), dtype=getattr(torch, dtype), requires_grad=True)
            p.grad = None if g is None else torch.tensor(g, dtype=getattr(torch, dtype))
        params.append(p)
    return params


def random_grads(seed: int = 0, scale: float = 1.0) -> list:
    rng = np.random.default_rng(seed)
    return [scale * rng.standard_normal(s) for s in SHAPES] + [None]


def assert_same_grads(ours: list, theirs: list, **tol) -> None:
    for p, q in zip(ours, theirs):
        assert (p.grad is None) == (q.grad is None)
        if p.grad is not None:
            assert p.grad.shape == tuple(q.grad.shape)
            assert_close(p.grad, q.grad, **tol)


@pytest.mark.parametrize("norm_type", [2.0, 1, math.inf, 3.5])
@pytest.mark.parametrize("max_norm", [0.5, 1e3], ids=["clips", "no_clip"])
def test_clip_grad_norm_matches_torch(float64_backend, norm_type, max_norm):
    grads = random_grads()
    ours, theirs = with_grads(grads, True), with_grads(grads, False)
    total = nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert total.shape == () and total.dtype == ag.float64
    assert_close(total, expected, rtol=1e-13)
    assert_same_grads(ours, theirs, rtol=1e-13)
    clipped = max_norm < total.item()
    after = nn.utils.get_total_norm([p.grad for p in ours if p.grad is not None], norm_type)
    assert after.item() == (pytest.approx(max_norm, rel=1e-5) if clipped else total.item())


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # inf * 0, on purpose
@pytest.mark.parametrize("bad", [math.inf, math.nan])
def test_clip_grad_norm_of_nonfinite_gradients(float64_backend, bad):
    grads = random_grads()
    grads[0][1, 2] = bad
    for error_if_nonfinite in (False, True):
        ours, theirs = with_grads(grads, True), with_grads(grads, False)
        if error_if_nonfinite:
            with pytest.raises(RuntimeError, match="non-finite"):
                nn.utils.clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)
            with pytest.raises(RuntimeError, match="non-finite"):
                torch.nn.utils.clip_grad_norm_(theirs, 1.0, error_if_nonfinite=True)
        else:  # scaled by the non-finite norm anyway, as PyTorch does (NaN where inf * 0)
            total = nn.utils.clip_grad_norm_(ours, 1.0)
            assert_close(total, torch.nn.utils.clip_grad_norm_(theirs, 1.0))
        assert_same_grads(ours, theirs)


def test_clip_grad_norm_takes_one_tensor_nothing_or_an_empty_generator(backend):
    (p,) = with_grads([np.array([3.0, 4.0])], True, dtype="float32")
    total = nn.utils.clip_grad_norm_(p, 1.0)
    assert total.item() == pytest.approx(5.0) and p.grad.dtype == ag.float32
    assert p.grad.tolist() == pytest.approx([0.6, 0.8], rel=1e-6)
    assert nn.utils.clip_grad_norm_([], 1.0).item() == 0.0
    with pytest.warns(UserWarning, match="empty generator"):
        nn.utils.clip_grad_norm_((q for q in []), 1.0)


def test_clip_grad_norm_keeps_each_gradient_dtype(backend):
    ours = with_grads(random_grads(scale=10.0)[:2], True, dtype="float32")
    total = nn.utils.clip_grad_norm_(ours, 1.0)
    assert total.dtype == ag.float32
    assert all(p.grad.dtype == ag.float32 and backend.dtype_name(p.grad.array.dtype) == "float32" for p in ours)


@pytest.mark.parametrize("clip_value", [0.5, 10.0])
def test_clip_grad_value_matches_torch(float64_backend, clip_value):
    grads = random_grads(scale=2.0)
    grads[1][0] = math.nan
    ours, theirs = with_grads(grads, True), with_grads(grads, False)
    assert nn.utils.clip_grad_value_(ours, clip_value) is None
    torch.nn.utils.clip_grad_value_(theirs, clip_value)
    assert_same_grads(ours, theirs, rtol=0, atol=0)


def test_clipping_is_outside_the_graph(backend):
    w = ag.tensor([3.0, 4.0], requires_grad=True)
    (w * w).sum().backward(create_graph=True)
    total = nn.utils.clip_grad_norm_([w], 1.0)
    assert not total.requires_grad and not w.grad.requires_grad


# --- the training loop: schedule, clipping and optimizer together -------------------------
LOOPS = [
    pytest.param(
        lambda lib, ps: lib.optim.AdamW(ps, lr=3e-3),
        lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=20),
        lambda lib, ps: lib.nn.utils.clip_grad_norm_(ps, 0.5),
        id="adamw_one_cycle_clip_norm",
    ),
    pytest.param(
        lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
        lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.3, total_steps=20, three_phase=True),
        lambda lib, ps: lib.nn.utils.clip_grad_value_(ps, 0.05),
        id="sgd_nesterov_one_cycle_clip_value",
    ),
    pytest.param(
        lambda lib, ps: lib.optim.RMSprop(ps, lr=0.01, momentum=0.5),
        lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
            opt,
            [
                lib.optim.lr_scheduler.LinearLR(opt, 0.2, total_iters=4),
                lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=16),
            ],
            milestones=[4],
        ),
        lambda lib, ps: lib.nn.utils.clip_grad_norm_(ps, 1.0, norm_type=math.inf),
        id="rmsprop_warmup_cosine_clip_inf_norm",
    ),
]


class Lib:
    """`lib.optim`, `lib.nn` of one side."""

    def __init__(self, ours: bool) -> None:
        self.optim, self.nn = (optim, nn) if ours else (torch.optim, torch.nn)


def train_loop(model, lib: Lib, make_opt, make_sched, clip, loss_fn, x, y, steps: int = 20) -> list[float]:
    opt = make_opt(lib, model.parameters())
    sched = make_sched(lib, opt)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        clip(lib, list(model.parameters()))
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    return losses


@pytest.mark.parametrize(("make_opt", "make_sched", "clip"), LOOPS)
def test_training_loop_with_schedule_and_clipping_matches_torch(float64_backend, make_opt, make_sched, clip):
    model = mlp(F64)
    twin = torch_twin(model, torch_mlp)
    x, y = batch()
    losses = train_loop(model, Lib(True), make_opt, make_sched, clip, F.cross_entropy, ag.tensor(x), ag.tensor(y))
    expected = train_loop(
        twin, Lib(False), make_opt, make_sched, clip, TF.cross_entropy, torch.tensor(x), torch.tensor(y)
    )
    assert expected[-1] < expected[0]
    np.testing.assert_allclose(losses, expected, rtol=1e-9, atol=0)
    assert_same_weights(model, twin, rtol=1e-8, atol=1e-12)


# --- inside a compiled step ----------------------------------------------------------------------
COMPILED = {
    "rmsprop_clip_norm": (
        lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.9, centered=True, weight_decay=0.01),
        lambda ps: nn.utils.clip_grad_norm_(ps, 0.5),
    ),
    "adagrad_clip_value": (
        lambda ps: optim.Adagrad(ps, lr=0.1, lr_decay=0.1),
        lambda ps: nn.utils.clip_grad_value_(ps, 0.02),
    ),
}


def compiled_setup(make_optimizer, clip):
    ag.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3)).double()
    opt = make_optimizer(model.parameters())

    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        clip(model.parameters())
        opt.step()
        return loss

    return model, opt, step


@pytest.mark.parametrize(("make_optimizer", "clip"), COMPILED.values(), ids=COMPILED.keys())
def test_compiled_step_matches_the_op_by_op_step(float64_backend, make_optimizer, clip):
    if not float64_backend.can_compile:
        pytest.skip(f"{float64_backend.name} has no compiler: ag.compile runs op by op there")
    eager_model, _, eager_step = compiled_setup(make_optimizer, clip)
    model, opt, step = compiled_setup(make_optimizer, clip)
    compiled = ag.compile(step, modules=[model], optimizers=[opt])
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ag.CompileFallbackWarning)
        for _ in range(4):
            x, y = ag.tensor(rng.standard_normal((8, 6))), ag.tensor(rng.integers(0, 3, 8))
            assert compiled(x, y).item() == pytest.approx(eager_step(x, y).item(), rel=1e-12)
    for ours, reference in zip(model.parameters(), eager_model.parameters()):
        assert_close(ours, reference, rtol=1e-12)
