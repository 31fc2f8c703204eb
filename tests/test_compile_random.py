"""Randomness in compiled steps: dropout, `dropout2d` and attention's `dropout_p` draw their
masks inside the trace from the mask stream (`backends.contract.mask_stream`), which each compiled call
takes as an input and advances. A compiled run gives the op-by-op run's masks, step for step,
and the same seed gives the same masks again; on torch, both with the traced graph alone and
compiled by inductor."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

import autograd_core as ag
import backends
import nn
import optim
from backends.contract import mask_stream
from helpers import classification_step

TOLERANCE = {"float32": 1e-6, "float64": 1e-12}


def compiling(backend):
    if not backend.can_compile:
        pytest.skip(f"the {backend.name} backend has no tracing compiler: ag.compile runs op by op")
    return backend


class _Attention(nn.Module):
    """Self-attention with dropout on its weights (SDPA's dropout_p) and on its output. No
    projection biases: the key's has a gradient of zero but for rounding, which Adam would
    turn into steps of lr (as a convolution's bias before batch norm)."""

    def __init__(self) -> None:
        super().__init__()
        self.attention = nn.MultiheadAttention(8, 2, dropout=0.2, bias=False, batch_first=True)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        out, _ = self.attention(x, x, x, need_weights=False)
        return self.head(self.drop(out).mean(axis=1))


MODELS = {
    "mlp": lambda: nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 3)),
    "cnn": lambda: nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1, bias=False),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.Dropout2d(0.25),
        nn.Flatten(),
        nn.Linear(64, 3),
    ),
    "attention": _Attention,
}
INPUTS = {"mlp": (8, 6), "cnn": (8, 1, 4, 4), "attention": (4, 5, 8)}


def train(name: str, dtype: str, compiled: bool, steps: int = 20) -> tuple[list[float], list[np.ndarray]]:
    """The losses of `steps` AdamW steps of model `name` from seed 0, and its final state."""
    ag.manual_seed(0)
    model = MODELS[name]().to(dtype=getattr(ag, dtype))
    opt = optim.AdamW(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(1)
    x = ag.tensor(rng.standard_normal(INPUTS[name]), dtype=dtype)
    y = ag.tensor(rng.integers(0, 3, INPUTS[name][0]))

    step = classification_step(model, opt)

    run = ag.compile(step, modules=[model], optimizers=[opt]) if compiled else step
    with warnings.catch_warnings():
        warnings.simplefilter("error", ag.CompileFallbackWarning)
        losses = [float(run(x, y)) for _ in range(steps)]
    return losses, [t.detach().numpy() for t in model.state_dict().values()]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", MODELS)
def test_a_compiled_step_with_dropout_follows_the_op_by_op_step(backend, name, dtype):
    """20 steps through `ag.compile` against 20 op by op, from one seed: the same masks, so
    the same losses and weights (to 1e-6 in float32, 1e-12 in float64)."""
    compiling(backend)
    if dtype == "float64" and not backend.supports_float64:
        pytest.skip(f"{backend.name} has no float64")
    compiled_losses, compiled_state = train(name, dtype, compiled=True)
    losses, state = train(name, dtype, compiled=False)
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(compiled_losses, losses, rtol=tol, atol=tol)
    for got, expected in zip(compiled_state, state):
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)
    assert len(set(losses)) > 1


def _masks(backend, compiled: bool, seed: int, calls: int = 3) -> list[np.ndarray]:
    """The masks a dropout layer drew in `calls` calls of a (compiled) step from `seed`."""
    ag.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 4))  # the compiled step needs state to carry
    drop = nn.Dropout(0.5)

    def step(x):
        return drop(x)

    run = ag.compile(step, modules=[model]) if compiled else step
    x = ag.ones((16, 32), dtype=ag.float32)
    return [run(x).numpy() for _ in range(calls)]


def test_masks_change_from_step_to_step_and_come_back_with_the_seed(backend):
    compiling(backend)
    masks = _masks(backend, compiled=True, seed=3)
    assert not np.array_equal(masks[0], masks[1]) and not np.array_equal(masks[1], masks[2])
    for again, first in zip(_masks(backend, compiled=True, seed=3), masks):
        np.testing.assert_array_equal(again, first)
    for eager, compiled in zip(_masks(backend, compiled=False, seed=3), masks):
        np.testing.assert_array_equal(eager, compiled)
    assert not np.array_equal(_masks(backend, compiled=True, seed=4)[0], masks[0])
    kept = np.concatenate(masks) != 0
    assert 0.4 < kept.mean() < 0.6  # p = 0.5 over 1,536 draws: 6 standard deviations
    assert set(np.unique(np.concatenate(masks))) <= {0.0, 2.0}


def test_every_backend_draws_the_same_mask_bits(backend):
    """A backend's own kernel of the stream's hash (numpy's, in uint32) gives the portable bits."""
    xp = backend.xp
    for shape in [(), (7,), (3, 0, 2), (5, 37)]:
        got = backend.to_numpy(backend.random_bits(shape, 2**40 + 5, 9))
        expected = mask_stream.bits(np, shape, 2**40 + 5, 9)
        np.testing.assert_array_equal(got.astype(np.int64), expected)
    assert backend.to_numpy(xp.asarray(backend.random_bits((4,), 0, 0) < 2**32)).all()


def test_the_mask_stream_is_uniform_and_its_draws_independent():
    a, b = (mask_stream.bits(np, (200_000,), 11, counter) / 2**32 for counter in (0, 1))
    assert abs(a.mean() - 0.5) < 0.005 and abs(a.var() * 12 - 1) < 0.01
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.01 and abs(np.corrcoef(a[:-1], a[1:])[0, 1]) < 0.01
    counts = np.bincount((a * 64).astype(int), minlength=64)
    chi2 = ((counts - len(a) / 64) ** 2 / (len(a) / 64)).sum()
    assert chi2 < 120  # 63 degrees of freedom: below 120 with probability 1 - 1e-5
    other_key = mask_stream.bits(np, (200_000,), 12, 0) / 2**32
    assert abs(np.corrcoef(a, other_key)[0, 1]) < 0.01


def test_dropout_in_a_trace_that_would_freeze_its_mask_is_refused():
    jax = pytest.importorskip("jax")
    backend = backends.get("jax")
    with backends.use(backend):
        drop = nn.Dropout(0.5)

        def forward(data):
            return drop(ag.Tensor._wrap(data, backend)).array

        with pytest.raises(RuntimeError, match="dropout in a trace that freezes its mask"):
            jax.jit(forward)(jax.numpy.ones((4, 4)))


def test_checkpoint_replays_the_masks_of_its_forward(backend):
    """A checkpointed segment with dropout draws the same masks when run again in the backward,
    and leaves the stream where the forward left it."""
    from autograd_core.transforms.checkpoint import checkpoint

    layer = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5))
    x = ag.ones((4, 8), dtype=ag.float32, requires_grad=True)
    ag.manual_seed(2)
    layer(x).sum().backward()
    expected = x.grad.numpy()
    after = mask_stream.get_state()
    x.grad = None
    ag.manual_seed(2)
    checkpoint(layer, x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    assert mask_stream.get_state() == after


def test_torch_compile_time_is_logged_once_per_trace_and_a_new_shape_traces_again(caplog, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setenv("AUTOGRAD_TORCH_COMPILER", "none")
    backend = backends.get("torch")
    with backends.use(backend), caplog.at_level(logging.INFO, logger="autograd_core.transforms.compile"):
        ag.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            loss = (model(x) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

        run = ag.compile(step, modules=[model], optimizers=[opt])
        for batch in (4, 4, 4, 2, 2):
            run(ag.ones((batch, 3)))
    compiled = [r.getMessage() for r in caplog.records if r.getMessage().startswith("compile: a step of")]
    assert len(compiled) == 2, compiled  # the first call runs op by op: SGD's state is still empty
    assert all("traced in" in m and "uncompiled" in m for m in compiled), compiled


def test_an_unknown_torch_compiler_setting_is_refused(monkeypatch):
    from backends import torch_jit

    monkeypatch.setenv("AUTOGRAD_TORCH_COMPILER", "tvm")
    with pytest.raises(ValueError, match="AUTOGRAD_TORCH_COMPILER='tvm': choose one of inductor, none"):
        torch_jit.compiler()


@pytest.mark.parametrize("name", ["mlp", "attention"])
def test_inductor_compiled_steps_follow_the_op_by_op_steps(monkeypatch, name):
    """The graph compiled by inductor (where it finds a C++ compiler), float32, 20 steps."""
    pytest.importorskip("torch")
    from backends import torch_jit

    monkeypatch.setenv("AUTOGRAD_TORCH_COMPILER", "inductor")
    if torch_jit.compiler() != "inductor":
        pytest.skip("inductor found no C++ compiler: compiled steps run the traced graph")
    with backends.use(backends.get("torch")):
        compiled_losses, compiled_state = train(name, "float32", compiled=True)
        losses, state = train(name, "float32", compiled=False)
    np.testing.assert_allclose(compiled_losses, losses, rtol=1e-6, atol=1e-6)
    for got, expected in zip(compiled_state, state):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
