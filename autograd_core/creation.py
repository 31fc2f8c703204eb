"""Making tensors: from data, filled, ranges and random draws from the seeded host generator."""

from __future__ import annotations

from typing import Any

import backends
from autograd_core.dtypes import DType, as_dtype
from autograd_core.tensor import Tensor

ShapeArg = Any  # zeros(2, 3) or zeros((2, 3))


def _shape(size: tuple) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(n) for n in size)


def _backend(device: Any) -> backends.Backend:
    active = backends.current()
    return active if device is None or device == active.device else backends.get(active.name, device)


def _python_default_dtype(host: Any) -> DType:
    """What Python values become: floats float32 (as in PyTorch), ints int64, bools bool."""
    kind = host.dtype.kind
    names = {"f": "float32", "c": "complex64", "i": "int64", "u": "int64", "b": "bool"}
    if kind not in names:
        raise TypeError(f"cannot make a tensor from {type(host).__name__} data of numpy kind {host.dtype.kind!r}")
    return as_dtype(names[kind])


def to_array(data: Any, backend: backends.Backend, dtype: Any = None) -> Any:
    """A new backend array holding `data` (a Tensor, an array of any library, or Python values)."""
    target = None if dtype is None else backend.dtype(as_dtype(dtype).name)
    if isinstance(data, Tensor):
        if data.backend is not backend:
            data = data.numpy()
        else:
            return backend.xp.asarray(data.data, dtype=target, copy=True)
    if backend.is_native(data):
        return backend.xp.asarray(data, dtype=target, copy=True)
    host = backend.host_array(data)
    if target is None and not hasattr(data, "dtype"):
        target = backend.dtype(_python_default_dtype(host).name)
    return backend.asarray(host, target)


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> Tensor:
    """`obj` as a tensor: a tensor is returned as it is (so its graph carries on), converted
    only where `dtype` or `device` ask for it; anything else is copied onto the current
    backend, as in `tensor`.

    >>> import autograd_core as ag
    >>> x = ag.asarray([1.0, 2.0])
    >>> ag.asarray(x) is x
    True
    """
    from autograd_core import ops

    if isinstance(obj, Tensor):
        out = obj if device is None else obj.to_device(device)
        out = out if dtype is None else ops._cast(out, dtype)
        if copy is False and out is not obj:
            raise ValueError("asarray(copy=False): the dtype or device asked for needs a copy")
        return ops.clone(out) if copy and out is obj else out
    backend = _backend(device)
    if copy is False:
        if not backend.is_native(obj) or (dtype is not None and backend.dtype_name(obj.dtype) != as_dtype(dtype).name):
            raise ValueError("asarray(copy=False) needs an array of the current backend in the asked dtype")
        return Tensor._wrap(obj, backend)
    return Tensor._wrap(to_array(obj, backend, dtype), backend)


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A new leaf tensor on the current backend holding a copy of `data`.

    Python floats become float32, ints int64; an array keeps its dtype (a float64 numpy
    array stays float64) unless `dtype` is given.

    >>> import autograd_core as ag
    >>> ag.tensor([[1.0, 2.0]]).shape
    (1, 2)
    """
    backend = _backend(device)
    t = Tensor._wrap(to_array(data, backend, dtype), backend)
    return t.requires_grad_(requires_grad) if requires_grad else t


def _new(make: Any, dtype: Any, requires_grad: bool, device: Any) -> Tensor:
    backend = _backend(device)
    t = Tensor._wrap(make(backend, backend.dtype(as_dtype(dtype).name)), backend)
    return t.requires_grad_() if requires_grad else t


def full(size: ShapeArg, fill_value: float, dtype: Any = "float32", requires_grad: bool = False,
         device: Any = None) -> Tensor:
    """A tensor of `size` filled with `fill_value`."""
    shape = _shape((size,))
    return _new(lambda b, dt: b.xp.full(shape, fill_value, dtype=dt, device=b.device), dtype, requires_grad, device)


def zeros(*size: Any, dtype: Any = "float32", requires_grad: bool = False, device: Any = None) -> Tensor:
    """A tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))``."""
    return full(_shape(size), 0, dtype, requires_grad, device)


def ones(*size: Any, dtype: Any = "float32", requires_grad: bool = False, device: Any = None) -> Tensor:
    """A tensor of ones: ``ones(2, 3)`` or ``ones((2, 3))``."""
    return full(_shape(size), 1, dtype, requires_grad, device)


def _like(t: Tensor, fill_value: float, dtype: Any) -> Tensor:
    xp = t.backend.xp
    target = t.data.dtype if dtype is None else t.backend.dtype(as_dtype(dtype).name)
    return Tensor._wrap(xp.full(t.shape, fill_value, dtype=target, device=t.backend.device), t.backend)


def zeros_like(t: Tensor, dtype: Any = None) -> Tensor:
    return _like(t, 0, dtype)


def ones_like(t: Tensor, dtype: Any = None) -> Tensor:
    return _like(t, 1, dtype)


def full_like(t: Tensor, fill_value: float, dtype: Any = None) -> Tensor:
    return _like(t, fill_value, dtype)


def arange(start: float, end: float | None = None, step: float = 1, dtype: Any = None,
           requires_grad: bool = False, device: Any = None) -> Tensor:
    """Evenly spaced values in [start, end): int64 for integer arguments, else float32."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = "int64" if all(isinstance(v, int) for v in (start, end, step)) else "float32"
    return _new(lambda b, dt: b.xp.arange(start, end, step, dtype=dt, device=b.device), dtype, requires_grad, device)


def randn(*size: Any, dtype: Any = "float32", requires_grad: bool = False, device: Any = None) -> Tensor:
    """Standard normal draws from the seeded host generator (see `manual_seed`)."""
    shape = _shape(size)
    return _new(lambda b, dt: b.randn(shape, dt), dtype, requires_grad, device)


def rand(*size: Any, dtype: Any = "float32", requires_grad: bool = False, device: Any = None) -> Tensor:
    """Uniform draws in [0, 1) from the seeded host generator."""
    return uniform(_shape(size), 0.0, 1.0, dtype, requires_grad, device)


def uniform(size: ShapeArg, low: float, high: float, dtype: Any = "float32", requires_grad: bool = False,
            device: Any = None) -> Tensor:
    """Uniform draws in [low, high) from the seeded host generator."""
    shape = _shape((size,))
    return _new(lambda b, dt: b.uniform(shape, low, high, dt), dtype, requires_grad, device)


def manual_seed(seed: int) -> None:
    """Seed the generator every backend draws from: one seed, the same numbers everywhere."""
    backends.manual_seed(seed)
