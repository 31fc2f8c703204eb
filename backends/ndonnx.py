"""ndonnx: arrays that build an ONNX graph. An array made from values (a constant) carries them
too, computed by onnxruntime as each op is added (spox's value propagation), so the engine runs
eagerly on it like on any library; an array made by `ndonnx.argument` (a placeholder) has a
shape and a dtype but no values, and everything computed from it is a graph that
`ndonnx.build` turns into an ONNX model. `autograd_core.export.onnx` exports models and training
steps that way.

Arrays are immutable as the engine sees them (item assignment makes a new graph node, which
views taken before do not see), so the kernels that update in place elsewhere are functional
here, as on jax.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from backends import BackendUnavailableError
from backends.contract.backend import Backend
from backends.contract.namespaces import CompletedNamespace

try:
    import ndonnx as ndx
    import onnxruntime  # noqa: F401 - computes every eager value
except ImportError as e:  # `create` reports it as the reason the backend is unavailable
    ndx, _missing = None, e


class TracedValueError(ValueError):
    """Python asked for the values of an array inside an ONNX trace, which has none until run."""


def _values(x: Any) -> np.ndarray:
    """The values of the ndonnx array `x`; a placeholder has none, and says so."""
    try:
        return x.unwrap_numpy()
    except ValueError:
        raise TracedValueError(
            f"the values of an array of shape {x.shape} ({x.dtype}) are asked for inside an ONNX trace, where "
            "they are unknown until the graph runs: a Python branch on a value (bool(), item(), float(), "
            "int(), numpy(), printing) cannot be exported; compute on tensors instead (ag.where for a branch)"
        ) from None


def _array(x: Any, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
    """numpy's view of an ndonnx array (``np.asarray(x)``): its values."""
    values = _values(x)
    return values if dtype is None else values.astype(dtype, copy=False)


class Linalg:
    """The one function of the standard's linalg extension the engine's common paths need
    (gradient clipping, normalisation), which ndonnx lacks, written over its namespace."""

    @staticmethod
    def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: float = 2) -> Any:  # noqa: A002
        magnitude = ndx.abs(x)
        if ord == math.inf:
            return ndx.max(magnitude, axis=axis, keepdims=keepdims)
        if ord == -math.inf:
            return ndx.min(magnitude, axis=axis, keepdims=keepdims)
        if ord == 0:
            return ndx.sum(ndx.astype(magnitude != 0, x.dtype), axis=axis, keepdims=keepdims)
        if ord == 1:
            return ndx.sum(magnitude, axis=axis, keepdims=keepdims)
        if ord == 2:
            return ndx.sqrt(ndx.sum(magnitude * magnitude, axis=axis, keepdims=keepdims))
        return ndx.sum(magnitude**ord, axis=axis, keepdims=keepdims) ** (1 / ord)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"ndonnx has no linalg.{name}", name=f"linalg.{name}", obj=ndx)


class Namespace(CompletedNamespace):
    """ndonnx's namespace, with `linalg.vector_norm` completed."""

    module = ndx
    linalg = Linalg()


class NdonnxBackend(Backend):
    name = "ndonnx"
    mutable = False

    def asarray(self, host: np.ndarray, dtype: Any = None) -> Any:
        host = np.asarray(host, dtype=None if dtype is None else self.to_host_dtype(dtype))
        return ndx.asarray(host)

    def to_numpy(self, x: Any) -> np.ndarray:
        return _values(x)

    def is_traced(self, x: Any) -> bool:
        if not isinstance(x, ndx.Array):
            return False
        try:
            x.unwrap_numpy()
        except ValueError:
            return True
        return False

    def dlpack_exporter(self, x: Any) -> np.ndarray:
        return self.to_numpy(x)

    def dlpack_device(self, x: Any) -> tuple[int, int]:
        return (1, 0)  # the host: values live in numpy arrays

    def describe(self) -> str:
        return "ONNX graphs, values computed by onnxruntime"


# `np.asarray(x)` (tests' oracles, tensors made from a foreign array): the one method added to
# ndonnx's class, only where it has none; ndonnx 0.23 has none, and numpy made a 0-d object
# array of an ndonnx array.
if ndx is not None and not hasattr(ndx.Array, "__array__"):
    ndx.Array.__array__ = _array


def create(device: str | None = None) -> Backend:
    """The ndonnx backend (it has one device: onnxruntime on the host CPU)."""
    if ndx is None:
        raise BackendUnavailableError(
            f'the ndonnx backend needs ndonnx and onnxruntime ({_missing}); install them with: pip install -e ".[onnx]"'
        )
    if device not in (None, "cpu"):
        raise BackendUnavailableError(
            f"the ndonnx backend runs on the CPU only (onnxruntime); device {device!r} is not available"
        )
    return NdonnxBackend(Namespace(), ndx.Array, None)
