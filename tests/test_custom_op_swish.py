"""The worked registered primitive, swish (examples/custom_op_swish.py), on every backend: values
and gradients against PyTorch's SiLU, finite differences to the second order, each backend's
kernel against the portable default, the numba kernels numpy runs (and the fallback without
numba), the compiled step on jax, the error for a wrong input, and the example's training run."""

from __future__ import annotations

import doctest
import sys
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import autograd_core as ag
import backends
import nn
import optim
from examples import custom_op_swish as example
from examples.custom_op_swish import swish, swish_backward, swish_primitive
from helpers import assert_close, kernel, portable

# a wide range, so that the stable sigmoid's two branches and its saturation are exercised
HOST = np.concatenate([np.random.default_rng(0).standard_normal(40) * 4, [-800.0, -30.0, 0.0, 30.0, 800.0]])


def _dtypes(backend: backends.Backend) -> list[str]:
    return ["float32", "float64"] if backend.supports_float64 else ["float32"]


def test_values_and_gradients_match_pytorch(backend):
    weights = np.random.default_rng(1).standard_normal(HOST.shape)
    for dtype in _dtypes(backend):
        x = ag.tensor(HOST, dtype=dtype, requires_grad=True)
        y = swish(x)
        (y * ag.tensor(weights, dtype=dtype)).sum().backward()
        xt = torch.tensor(HOST, dtype=getattr(torch, dtype), requires_grad=True)
        yt = torch.nn.functional.silu(xt)
        (yt * torch.tensor(weights, dtype=getattr(torch, dtype))).sum().backward()
        assert y.dtype == dtype and x.grad.dtype == dtype
        assert_close(y, yt, dtype)
        assert_close(x.grad, xt.grad, dtype)


def test_gradcheck_and_gradgradcheck(float64_backend):
    host = np.concatenate([np.random.default_rng(2).standard_normal(9) * 3, [-40.0, 0.0, 40.0]])  # 0: both branches
    x = ag.tensor(host.reshape(3, 4), dtype="float64", requires_grad=True)
    assert ag.gradcheck(swish, [x])
    assert ag.gradgradcheck(swish, [x])


def test_each_backend_runs_a_kernel_equal_to_the_portable_default(backend):
    grad_host = np.random.default_rng(3).standard_normal(HOST.shape)
    for dtype in _dtypes(backend):
        x, grad = (backend.asarray(a, backend.dtype(dtype)) for a in (HOST, grad_host))
        assert_close(kernel(backend, swish_primitive, x), portable(backend, swish_primitive, x), dtype)
        assert_close(kernel(backend, swish_backward, grad, x), portable(backend, swish_backward, grad, x), dtype)


def _spy(ufuncs: SimpleNamespace, calls: list[str]) -> SimpleNamespace:
    """`ufuncs` with each call recorded by name in `calls`."""

    def recorded(name: str):
        return lambda *args: calls.append(name) or getattr(ufuncs, name)(*args)

    return SimpleNamespace(forward=recorded("forward"), backward=recorded("backward"))


def test_numpy_runs_the_numba_kernels(monkeypatch):
    pytest.importorskip("numba", reason="the numba kernels need numba (pip install -e '.[fast]')")
    ufuncs, calls = example.numba_kernels(), []
    monkeypatch.setattr(example, "numba_kernels", lambda: _spy(ufuncs, calls))
    with backends.use("numpy"):
        for dtype in ("float32", "float64"):
            host = HOST.astype(dtype)
            x = ag.tensor(host, requires_grad=True)
            y = swish(x)
            y.backward(ag.ones_like(y))
            np.testing.assert_array_equal(y.detach().numpy(), ufuncs.forward(host))
            np.testing.assert_array_equal(x.grad.numpy(), ufuncs.backward(np.ones_like(host), host))
        assert calls == ["forward", "backward"] * 2
        calls.clear()
        half = ag.tensor(HOST[:5], dtype="float16", requires_grad=True)  # no loop for it: the portable default
        swish(half).sum().backward()
        assert swish(half).dtype == "float16" and half.grad.dtype == "float16"
        assert calls == []


def test_without_numba_numpy_runs_the_portable_default(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` now raises ImportError
    assert example.numba_kernels.__wrapped__() is None
    monkeypatch.setattr(example, "numba_kernels", lambda: None)
    numpy = backends.get("numpy")
    with backends.use(numpy):
        x = ag.tensor(HOST, dtype="float64", requires_grad=True)
        y = swish(x)
        y.backward(ag.ones_like(y))
    np.testing.assert_array_equal(y.detach().numpy(), portable(numpy, swish_primitive, HOST))
    np.testing.assert_array_equal(x.grad.numpy(), portable(numpy, swish_backward, np.ones_like(HOST), HOST))


def test_the_compiled_step_matches_the_op_by_op_step(float64_backend):
    def setup():
        ag.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 8), example.Swish(), nn.Linear(8, 1)).double()
        opt = optim.AdamW(model.parameters(), lr=1e-2)
        runs = []

        def step(x, y):
            runs.append(1)
            loss = ((model(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

        return model, opt, step, runs

    eager_model, _, eager, _ = setup()
    model, opt, step, runs = setup()
    compiled = ag.compile(step, modules=[model], optimizers=[opt])
    rng = np.random.default_rng(4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ag.CompileFallbackWarning)  # traced whole where the backend compiles
        for _ in range(4):
            x, y = ag.tensor(rng.standard_normal((8, 3))), ag.tensor(rng.standard_normal((8, 1)))
            assert compiled(x, y).item() == pytest.approx(eager(x, y).item(), rel=1e-12)
    if float64_backend.can_compile:  # traced (once without the optimizer's state, once with), not run per step
        assert len(runs) < 4
    for ours, reference in zip(model.parameters(), eager_model.parameters()):
        assert_close(ours, reference)


def test_a_wrong_input_is_named(backend):
    with pytest.raises(TypeError, match="swish expects a tensor of a real floating dtype, got a tensor of dtype int64"):
        swish(ag.tensor([1, 2, 3], dtype="int64"))
    with pytest.raises(TypeError, match="swish expects a tensor of a real floating dtype, got list"):
        swish([1.0, 2.0])


def test_the_example_trains(backend, capsys):
    losses = example.main(steps=30)
    assert losses[-1] < 0.5 * losses[0]
    assert capsys.readouterr().out.splitlines() == [
        "<primitive swish: kernels for numpy, torch>",
        f"{backend.name}: mean squared error {losses[0]:.4f} -> {losses[-1]:.5f} in 30 Adam steps",
    ]


def test_docstring_examples():
    with backends.use("numpy"):
        assert doctest.testmod(example).failed == 0
