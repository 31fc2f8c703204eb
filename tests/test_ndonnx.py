"""The ndonnx backend's own checks: eager values, placeholders, the linalg it completes, its
device and the reason it gives when its libraries are missing."""

from __future__ import annotations

import math

import numpy as np
import pytest

ndx = pytest.importorskip("ndonnx", reason="the ndonnx backend needs ndonnx: pip install -e '.[onnx]'")
pytest.importorskip("onnxruntime", reason="the ndonnx backend computes with onnxruntime: pip install -e '.[onnx]'")

import autograd_core as ag  # noqa: E402
import backends  # noqa: E402
import backends.ndonnx as ndonnx_backend  # noqa: E402


@pytest.fixture
def nb():
    return backends.get("ndonnx")


def test_registered_through_the_entry_point(nb):
    assert "ndonnx" in backends.known() and "ndonnx" not in backends.BUILTINS
    assert nb.name == "ndonnx" and not nb.mutable and not nb.can_compile


def test_eager_values_and_gradients_equal_numpys(nb):
    host = np.random.default_rng(0).random((3, 4))
    results = {}
    for name in ("numpy", "ndonnx"):
        with backends.use(name):
            x = ag.tensor(host, requires_grad=True)
            y = (ag.tanh(x) @ x.mT).sum()
            y.backward()
            results[name] = (y.item(), x.grad.numpy())
    assert results["ndonnx"][0] == pytest.approx(results["numpy"][0], rel=1e-14)
    np.testing.assert_allclose(results["ndonnx"][1], results["numpy"][1], rtol=1e-13)


def test_placeholders_are_traced_and_have_no_values(nb):
    placeholder = ndx.argument(shape=(2,), dtype=ndx.float64)
    assert nb.is_traced(placeholder) and not nb.is_traced(nb.asarray(np.zeros(2)))
    assert not nb.is_traced(np.zeros(2))
    with pytest.raises(ndonnx_backend.TracedValueError, match="inside an ONNX trace.*Python branch on a value"):
        nb.to_numpy(placeholder)


@pytest.mark.parametrize("order", [2, 1, 3, 0, math.inf, -math.inf])
def test_vector_norm_equals_numpys(nb, order):
    host = np.array([[3.0, -4.0, 0.0], [1.0, 2.0, -2.0]])
    got = nb.to_numpy(nb.xp.linalg.vector_norm(nb.asarray(host), axis=1, ord=order))
    np.testing.assert_allclose(got, np.linalg.norm(host, ord=order, axis=1), rtol=1e-14)


def test_the_linalg_it_lacks_is_named(nb):
    with pytest.raises(AttributeError, match="ndonnx has no linalg.inv"):
        nb.xp.linalg.inv  # noqa: B018


def test_only_the_cpu():
    with pytest.raises(backends.BackendUnavailableError, match="CPU only"):
        ndonnx_backend.create("cuda")


def test_missing_libraries_are_the_reason_given(monkeypatch):
    monkeypatch.setattr(ndonnx_backend, "ndx", None)
    monkeypatch.setattr(ndonnx_backend, "_missing", ImportError("No module named 'ndonnx'"), raising=False)
    with pytest.raises(backends.BackendUnavailableError, match=r"needs ndonnx and onnxruntime .*\[onnx\]"):
        ndonnx_backend.create(None)
