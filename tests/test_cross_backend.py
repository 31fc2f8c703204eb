"""The backends against each other: one seed, one model, the same numbers everywhere."""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
import backends
import nn
import nn.functional as F
import optim


def mlp(seed: int = 0) -> nn.Module:
    ag.manual_seed(seed)
    return nn.Sequential(nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10))


def batches(steps: int, size: int = 32) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    return [(rng.random((size, 784)), rng.integers(0, 10, size)) for _ in range(steps)]


def train(dtype: str, steps: int = 20) -> list[float]:
    """Losses of 20 AdamW steps of the 784-64-10 MLP on the current backend."""
    model = mlp().to(dtype=dtype)
    opt = optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    losses = []
    for x, y in batches(steps):
        loss = F.cross_entropy(model(ag.tensor(x, dtype=dtype)), ag.tensor(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


_reference: dict[str, list[float]] = {}


def numpy_losses(dtype: str) -> list[float]:
    if dtype not in _reference:
        with backends.use("numpy"):
            _reference[dtype] = train(dtype)
    return _reference[dtype]


def test_same_seed_gives_bit_identical_weights(backend):
    here = {k: v.numpy() for k, v in mlp(3).state_dict().items()}
    with backends.use("numpy"):
        reference = {k: v.numpy() for k, v in mlp(3).state_dict().items()}
    for name, values in reference.items():
        assert here[name].dtype == values.dtype and np.array_equal(here[name], values), name


@pytest.mark.parametrize(("dtype", "rtol"), [("float64", 1e-10), ("float32", 1e-4)])
def test_training_matches_numpy(backend, dtype, rtol):
    if dtype == "float64" and not backend.supports_float64:
        pytest.skip(f"{backend.name} has no float64")
    losses = train(dtype)
    assert losses[-1] < losses[0]
    np.testing.assert_allclose(losses, numpy_losses(dtype), rtol=rtol, atol=0)


def test_model_moved_with_to_gives_the_same_outputs(backend):
    with backends.use("numpy"):
        model = mlp()
        x = ag.randn(5, 784)
        expected = model(x).detach().numpy()
    weight = model[0].weight
    model.to(backend.name)
    assert model[0].weight is weight and weight.backend is backend
    np.testing.assert_allclose(model(x.to(backend.name)).detach().numpy(), expected, rtol=1e-5, atol=1e-6)


def test_state_dict_file_loads_on_another_backend(backend, tmp_path):
    with backends.use("numpy"):
        model = mlp(5)
        nn.save(model.state_dict(), tmp_path / "mlp.npz")
        x = np.random.default_rng(0).random((3, 784)).astype(np.float32)
        expected = model(ag.tensor(x)).detach().numpy()
    fresh = mlp(6)
    fresh.load_state_dict(nn.load(tmp_path / "mlp.npz"))
    assert fresh[0].weight.backend is backend
    np.testing.assert_allclose(fresh(ag.tensor(x)).detach().numpy(), expected, rtol=1e-5, atol=1e-6)


def test_optimizer_state_follows_a_moved_model(backend):
    with backends.use("numpy"):
        model, reference = mlp(), mlp()
        opts = [optim.AdamW(m.parameters(), lr=1e-3) for m in (model, reference)]
        data = batches(4, size=8)
        x0, y0 = data[0]
        for m, opt in zip((model, reference), opts):
            F.cross_entropy(m(ag.tensor(x0, dtype="float32")), ag.tensor(y0)).backward()
            opt.step()
            opt.zero_grad()
    model.to(backend.name)  # the optimizer's state is still on numpy
    for x, y in data[1:]:
        for m in (model, reference):
            name = m[0].weight.backend.name
            loss = F.cross_entropy(m(ag.tensor(x, dtype="float32").to(name)), ag.tensor(y).to(name))
            loss.backward()
        for opt in opts:
            opt.step()
            opt.zero_grad()
    assert all(backend.is_native(v) for s in opts[0].state.values() for v in s.values() if hasattr(v, "shape"))
    np.testing.assert_allclose(
        model[0].weight.detach().numpy(), reference[0].weight.detach().numpy(), rtol=1e-5, atol=1e-6
    )
