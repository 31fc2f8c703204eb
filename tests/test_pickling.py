"""Pickling and copying tensors, Parameters, models, optimizers and schedulers, as PyTorch does:
values, dtype, backend (by name) and requires_grad travel; the graph, `.grad` and hooks do not.
Training resumed from an unpickled model and optimizer continues exactly as uninterrupted
training does, and a model crosses to a spawned process and back."""

from __future__ import annotations

import copy
import multiprocessing
import pickle

import numpy as np
import pytest
import torch

import autograd_core as ag
import backends
import nn
import optim
from autograd_core import func
from helpers import holds
from optim import lr_scheduler

DTYPES = ["float32", "float64", "float16", "int64", "int32", "uint8", "bool", "complex64"]


def round_trip(obj):
    return pickle.loads(pickle.dumps(obj))


@pytest.mark.parametrize("shape", [(), (0,), (2, 3)], ids=["0-d", "empty", "2x3"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_tensor_round_trips_with_values_dtype_and_backend(backend, dtype, shape):
    if not holds(backend, dtype):
        pytest.skip(f"{backend.name} has no {dtype}")
    values = (np.arange(int(np.prod(shape))).reshape(shape) % 3).astype(dtype)
    t = ag.tensor(values)
    back = round_trip(t)
    assert type(back) is type(t) and back.backend is backend
    assert back.dtype == dtype and back.shape == shape and not back.requires_grad
    np.testing.assert_array_equal(back.numpy(), values)


def test_requires_grad_travels_and_a_result_comes_back_a_leaf_as_in_pytorch(backend):
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    for ours, theirs in ((x, tx), (x * 2, tx * 2), ((x * 2).detach(), (tx * 2).detach())):
        back, their_back = round_trip(ours), round_trip(theirs)
        assert (back.requires_grad, back.is_leaf) == (their_back.requires_grad, their_back.is_leaf)
        np.testing.assert_array_equal(back.detach().numpy(), their_back.detach().numpy())
    back = round_trip(x * 2)
    (back * back).sum().backward()  # a leaf of its own: the gradient stops there
    np.testing.assert_array_equal(back.grad.numpy(), [4.0, 8.0])
    assert x.grad is None


def test_grad_is_not_pickled_as_in_pytorch(backend):
    x, tx = ag.tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    (tx * tx).sum().backward()
    assert round_trip(tx).grad is None
    assert x.grad is not None and round_trip(x).grad is None


def test_hooks_are_not_pickled_and_a_warning_says_so_as_in_pytorch(backend):
    x, tx = ag.tensor([1.0], requires_grad=True), torch.tensor([1.0], requires_grad=True)
    x.register_hook(lambda g: g * 2)
    tx.register_hook(lambda g: g * 2)
    with pytest.warns(UserWarning, match="will not be serialized"):
        pickle.dumps(tx)
    with pytest.warns(UserWarning, match="hooks of a tensor are not pickled"):
        back = round_trip(x)
    (back * 3).sum().backward()
    assert back.grad.tolist() == [3.0]


def test_a_parameter_stays_a_parameter(backend):
    p = nn.Parameter(ag.tensor([1.0, -1.0]))
    frozen = nn.Parameter(ag.tensor([2.0]), requires_grad=False)
    assert type(round_trip(p)) is nn.Parameter and round_trip(p).requires_grad
    assert type(round_trip(frozen)) is nn.Parameter and not round_trip(frozen).requires_grad


def test_shared_tensors_stay_shared_within_one_pickle(backend):
    w = nn.Parameter(ag.ones(3))
    a, b = round_trip([w, w])
    assert a is b


def test_copy_shares_the_values_as_in_pytorch(backend):
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    ty = tx * 2
    for ours, theirs in ((x, tx), (y, ty)):
        c, tc = copy.copy(ours), copy.copy(theirs)
        assert c is not ours and c.array is ours.array and tc.data_ptr() == theirs.data_ptr()
        assert (c.requires_grad, c.is_leaf, c.grad) == (tc.requires_grad, tc.is_leaf, tc.grad)


def test_deepcopy_follows_pytorch(backend):
    x, tx = ag.tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0], requires_grad=True)
    p, tp = nn.Parameter(ag.ones(2)), torch.nn.Parameter(torch.ones(2))
    for a, b in ((x, p), (tx, tp)):
        (a * a).sum().backward()
        (b * b).sum().backward()
    assert copy.deepcopy(tx).grad is not None and copy.deepcopy(x).grad.tolist() == [2.0, 4.0]
    assert copy.deepcopy(tp).grad is None and copy.deepcopy(p).grad is None
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(tx * 2)
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(x * 2)


# --- every layer ------------------------------------------------------------------------------
LAYERS = {
    "Linear": (lambda: nn.Linear(4, 3), (2, 4)),
    "Bilinear-free MLP": (lambda: nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Dropout(0.5), nn.Linear(8, 2)), (3, 4)),
    "Conv1d": (lambda: nn.Conv1d(2, 3, 3, padding=1), (2, 2, 7)),
    "Conv2d": (lambda: nn.Conv2d(2, 3, 3, stride=2), (2, 2, 7, 7)),
    "ConvTranspose2d": (lambda: nn.ConvTranspose2d(2, 3, 3, stride=2), (1, 2, 4, 4)),
    "BatchNorm1d": (lambda: nn.BatchNorm1d(4), (5, 4)),
    "BatchNorm2d": (lambda: nn.BatchNorm2d(2), (3, 2, 4, 4)),
    "LayerNorm": (lambda: nn.LayerNorm(4), (2, 4)),
    "GroupNorm": (lambda: nn.GroupNorm(2, 4), (2, 4, 3)),
    "pools": (
        lambda: nn.Sequential(nn.MaxPool2d(2), nn.AvgPool2d(1), nn.AdaptiveAvgPool2d(1), nn.Flatten()),
        (2, 3, 4, 4),
    ),
    "pads": (lambda: nn.Sequential(nn.ZeroPad2d(1), nn.ReflectionPad2d(1), nn.Upsample(scale_factor=2)), (1, 1, 3, 3)),
    "activations": (
        lambda: nn.Sequential(nn.ReLU(), nn.SiLU(), nn.LeakyReLU(0.1), nn.ELU(), nn.Softplus(), nn.Softmax(dim=-1)),
        (2, 5),
    ),
    "RNN": (lambda: nn.RNN(3, 4, num_layers=2, batch_first=True), (2, 5, 3)),
    "LSTM": (lambda: nn.LSTM(3, 4, bidirectional=True), (5, 2, 3)),
    "GRU": (lambda: nn.GRU(3, 4), (5, 2, 3)),
    "LSTMCell": (lambda: nn.LSTMCell(3, 4), (2, 3)),
    "MultiheadAttention": (lambda: nn.MultiheadAttention(8, 2, batch_first=True), (2, 5, 8)),
    "TransformerEncoder": (
        lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True), 2),
        (2, 5, 8),
    ),
}


def first(output):
    """The output tensor of a layer that returns (output, state) or (output, weights)."""
    return output[0] if isinstance(output, tuple) else output


def run(layer, x):
    return first(layer(x, x, x) if isinstance(layer, nn.MultiheadAttention) else layer(x))


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
@pytest.mark.parametrize("name", LAYERS)
def test_every_layer_round_trips_and_computes_the_same(backend, name, how):
    make, shape = LAYERS[name]
    ag.manual_seed(0)
    layer = make()
    layer(ag.randn(*shape)) if isinstance(layer, (nn.BatchNorm1d, nn.BatchNorm2d)) else None  # running stats move
    layer.eval()
    back = round_trip(layer) if how == "pickle" else copy.deepcopy(layer)
    assert type(back) is type(layer) and not back.training
    assert list(back.state_dict()) == list(layer.state_dict())
    for (key, a), b in zip(layer.state_dict().items(), back.state_dict().values()):
        assert type(b) is type(a) and b.backend is backend, key
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=key)
    for a, b in zip(layer.parameters(), back.parameters()):
        assert type(b) is nn.Parameter and b.requires_grad == a.requires_grad and b is not a
    x = ag.randn(*shape)
    with ag.no_grad():
        np.testing.assert_array_equal(run(back, x).numpy(), run(layer, x).numpy())


# --- training resumed from a pickle -----------------------------------------------------------
def half_lr(epoch: int) -> float:
    return 0.5**epoch


OPTIMIZERS = {
    "SGD momentum": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    "Adam": lambda ps: optim.Adam(ps, lr=0.01),
    "AdamW": lambda ps: optim.AdamW(ps, lr=0.01, weight_decay=0.1),
    "RMSprop centered": lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True),
    "Adagrad": lambda ps: optim.Adagrad(ps, lr=0.1),
}
SCHEDULERS = {
    "none": None,
    "StepLR": lambda opt: lr_scheduler.StepLR(opt, step_size=2, gamma=0.5),
    "CosineAnnealingLR": lambda opt: lr_scheduler.CosineAnnealingLR(opt, T_max=5),
    "OneCycleLR": lambda opt: lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=10),
    "LambdaLR": lambda opt: lr_scheduler.LambdaLR(opt, half_lr),
    "ReduceLROnPlateau": lambda opt: lr_scheduler.ReduceLROnPlateau(opt, patience=0, factor=0.5),
}


def training(model, opt, scheduler, x, y, steps: int) -> list[float]:
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        if isinstance(scheduler, lr_scheduler.ReduceLROnPlateau):
            scheduler.step(loss.item() + 1.0)  # never better: the rate falls every step
        elif scheduler is not None:
            scheduler.step()
        losses.append(loss.item())
    return losses


# every optimizer alone, and every scheduler with one optimizer
RESUMED = [(name, "none") for name in OPTIMIZERS] + [("Adam", s) for s in SCHEDULERS if s != "none"]


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
@pytest.mark.parametrize("name, schedule", RESUMED)
def test_training_resumed_from_a_copy_continues_exactly(backend, name, schedule, how):
    ag.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.BatchNorm1d(8), nn.Linear(8, 1))
    opt = OPTIMIZERS[name](model.parameters())
    scheduler = SCHEDULERS[schedule](opt) if SCHEDULERS[schedule] else None
    x, y = ag.randn(6, 3), ag.randn(6, 1)
    training(model, opt, scheduler, x, y, 3)
    saved = (model, opt, scheduler)
    resumed_model, resumed_opt, resumed_scheduler = round_trip(saved) if how == "pickle" else copy.deepcopy(saved)
    assert resumed_opt.param_groups[0]["params"][0] is next(resumed_model.parameters())
    if scheduler is not None:
        assert resumed_scheduler.optimizer is resumed_opt
    continued = training(model, opt, scheduler, x, y, 4)
    resumed = training(resumed_model, resumed_opt, resumed_scheduler, x, y, 4)
    assert resumed == continued
    assert [g["lr"] for g in resumed_opt.param_groups] == [g["lr"] for g in opt.param_groups]
    for a, b in zip(model.parameters(), resumed_model.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_a_scheduler_with_a_lambda_cannot_be_pickled_as_in_pytorch(backend):
    w = ag.ones(1, requires_grad=True)
    tw = torch.ones(1, requires_grad=True)
    theirs = torch.optim.lr_scheduler.LambdaLR(torch.optim.SGD([tw], lr=0.1), lambda epoch: 0.5)
    ours = lr_scheduler.LambdaLR(optim.SGD([w], lr=0.1), lambda epoch: 0.5)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(theirs)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(ours)


# --- another process --------------------------------------------------------------------------
def test_a_model_crosses_to_a_spawned_process_and_back(backend):
    """The model itself is the worker's function (so the worker imports the project alone); its
    output, which requires grad, comes back a leaf, as a PyTorch tensor would."""
    ag.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).eval()
    x = ag.randn(5, 3)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        out = pool.apply(model, (x,))
    assert out.backend is backend and out.requires_grad and out.is_leaf
    np.testing.assert_array_equal(out.detach().numpy(), model(x).detach().numpy())


def test_a_tensor_inside_vmap_is_not_pickled(backend):
    def dumped(row):
        pickle.dumps(row)
        return row

    with pytest.raises(ValueError, match="not made by backends.get"):
        func.vmap(dumped)(ag.ones((2, 3)))


def test_the_backend_is_named_not_pickled(backend):
    data = pickle.dumps(ag.ones(2))
    assert b"Backend" not in data and backends.registered_as(backend)[0].encode() in data


def test_a_gpt_deep_copied_mid_training_continues_exactly(backend):
    """The GPT of examples/gpt.py (its classes are local to the builder, so, as in PyTorch, it is
    deep-copied rather than pickled) with AdamW and weight decay."""
    from bench.gpt_model import GPTConfig, gpt

    config = GPTConfig(block_size=8, vocab_size=11, n_layer=2, n_head=2, n_embd=8)
    ag.manual_seed(0)
    model = gpt(nn, config)
    opt = optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    tokens = np.random.default_rng(0).integers(0, config.vocab_size, (2, config.block_size + 1))
    idx, target = ag.tensor(tokens[:, :-1]), ag.tensor(tokens[:, 1:].reshape(-1))

    def steps(model, opt, n: int) -> list[float]:
        losses = []
        for _ in range(n):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(idx), target)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    steps(model, opt, 2)
    twin_model, twin_opt = copy.deepcopy((model, opt))
    assert steps(twin_model, twin_opt, 3) == steps(model, opt, 3)


@pytest.mark.parametrize("kind", ["Tensor", "Parameter"])
def test_attributes_a_user_gave_a_tensor_travel_as_in_pytorch(backend, kind):
    """Pickles and copies keep them; a Parameter's deep copy, made anew, does not."""
    t = ag.ones(2) if kind == "Tensor" else nn.Parameter(ag.ones(2))
    tt = torch.ones(2) if kind == "Tensor" else torch.nn.Parameter(torch.ones(2))
    t.note = tt.note = {"layer": 3}
    for make in (round_trip, copy.deepcopy, copy.copy):
        ours, theirs = make(t), make(tt)
        assert hasattr(ours, "note") == hasattr(theirs, "note"), make
        if hasattr(ours, "note"):
            assert ours.note == {"layer": 3} and (ours.note is t.note) == (theirs.note is tt.note), make
    assert kind == "Parameter" or hasattr(copy.deepcopy(t), "note")
    assert "note" not in vars(round_trip(ag.ones(2)))
