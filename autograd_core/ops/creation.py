"""Making tensors: the standard's creation functions (which also take PyTorch's forms:
``zeros(2, 3)``, ``requires_grad=True``), tensors from data, and random draws from the seeded
host generator.

Without a `dtype`, floating results are float32, integral ones int64 and complex ones
complex64 (``__array_namespace_info__().default_dtypes()``); ``full((2,), True)`` is bool.
`device` is a device of the current backend; the ``*_like`` functions keep their input's
backend, dtype and device unless told otherwise.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

import backends
from autograd_core.graph.dtypes import DType, as_dtype, result_type
from autograd_core.graph.registry import Primitive
from autograd_core.graph.tensor_base import Device, TensorBase, to_array
from autograd_core.ops import core as ops, random
from autograd_core.ops.info import __array_namespace_info__
from autograd_core.ops.random import Generator

__all__ = [
    "arange",
    "asarray",
    "empty",
    "empty_like",
    "eye",
    "from_dlpack",
    "full",
    "full_like",
    "linspace",
    "manual_seed",
    "meshgrid",
    "ones",
    "ones_like",
    "rand",
    "randn",
    "tensor",
    "tril",
    "triu",
    "uniform",
    "zeros",
    "zeros_like",
]

Shape = int | tuple[int, ...]
Scalar = bool | int | float | complex
_DEFAULTS = __array_namespace_info__().default_dtypes()


def _shape(shape: Any, more: tuple = ()) -> tuple[int, ...]:
    """The standard's ``shape`` (an int or a tuple), or PyTorch's sizes: ``zeros(2, 3)``."""
    if more:
        shape = (shape, *more)
    if isinstance(shape, (tuple, list)):
        return tuple(operator.index(n) for n in shape)
    return (operator.index(shape),)


def _sizes(sizes: tuple, size: Any = None) -> tuple[int, ...]:
    """PyTorch's ``randn(2, 3)``, ``randn((2, 3))`` or ``randn(size=(2, 3))``; ``randn()`` is a scalar."""
    if size is not None:
        return _shape(size)
    return _shape(sizes[0], sizes[1:]) if sizes else ()


def _backend(device: Any, like: backends.Backend | None = None) -> backends.Backend:
    """The backend arrays are made on: `like`'s library (else the current one) on `device`."""
    if isinstance(device, Device):
        return device.backend
    return backends.on_device(like or backends.current(), device)


def _made(data: Any, backend: backends.Backend, requires_grad: bool) -> TensorBase:
    t = TensorBase._wrap(data, backend)
    return t.requires_grad_() if requires_grad else t


# --- from data ---------------------------------------------------------------------------
def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> TensorBase:
    """`obj` as a tensor: a tensor is returned as it is (so its graph carries on), converted
    only where `dtype` or `device` ask for it; a (nested) sequence holding tensors is stacked,
    differentiably; anything else becomes a tensor of the current backend (its memory shared
    where the backend can and `copy` allows, as the standard asks).

    >>> import autograd_core as ag
    >>> x = ag.asarray([1.0, 2.0])
    >>> ag.asarray(x) is x, ag.asarray(x, copy=True) is x
    (True, False)
    >>> ag.asarray([x[1], 3.0, x[0]]).tolist()
    [2.0, 3.0, 1.0]
    """
    if isinstance(obj, TensorBase):
        out = obj if device is None else obj.to_device(device)
        out = out if dtype is None else ops.astype(out, dtype, copy=False)
        if copy is False and out is not obj:
            raise ValueError("asarray(copy=False): the dtype or device asked for needs a copy")
        return ops.clone(out) if copy and out is obj else out
    if isinstance(obj, (list, tuple)) and _holds_tensor(obj):
        if copy is False:
            raise ValueError("asarray(copy=False): a sequence of tensors must be copied into one tensor")
        return _stacked(obj, dtype, device)
    backend = _backend(device)
    native = backend.is_native(obj)
    if native and backend.holds(obj.dtype):
        target = None if dtype is None else backend.dtype(as_dtype(dtype).name)
        return TensorBase._wrap(backend.xp.asarray(obj, dtype=target, copy=copy), backend)
    if copy is False:
        what = f"an array of dtype {obj.dtype}" if native else f"a {type(obj).__name__}"
        raise ValueError(f"asarray(copy=False): {what} must be copied to make a tensor")
    return TensorBase._wrap(to_array(obj, backend, dtype), backend)


def _holds_tensor(obj: Any) -> bool:
    return isinstance(obj, TensorBase) or (isinstance(obj, (list, tuple)) and any(_holds_tensor(o) for o in obj))


def _leaves(obj: Any) -> list:
    return [leaf for o in obj for leaf in _leaves(o)] if isinstance(obj, (list, tuple)) else [obj]


def _stacked(obj: list | tuple, dtype: Any, device: Any) -> TensorBase:
    """A nested sequence of tensors and scalars stacked into one tensor, in the dtype the
    promotion rule gives its elements (scalars weak, as in arithmetic)."""
    leaves = _leaves(obj)
    dtype = result_type(*leaves) if dtype is None else dtype
    device = device if device is not None else next(t for t in leaves if isinstance(t, TensorBase)).device

    def build(o: Any) -> TensorBase:
        if isinstance(o, (list, tuple)):
            return ops.stack([build(i) for i in o])
        return asarray(o, dtype=dtype, device=device)

    return build(obj)


def from_dlpack(x: object, /, *, device: Any = None, copy: bool | None = None) -> TensorBase:
    """A tensor of the current backend sharing the memory of `x`, any DLPack-capable array
    (or copying it, when `copy` is True or the library cannot share). Outside any graph.

    >>> import numpy as np
    >>> from_dlpack(np.arange(3)).tolist()
    [0, 1, 2]
    """
    backend = _backend(device)
    options = {} if copy is None else {"copy": copy}
    if device is not None:
        options["device"] = backend.device
    source = x.array if isinstance(x, TensorBase) else x
    try:
        return TensorBase._wrap(backend.xp.from_dlpack(source, **options), backend)
    except (BufferError, RuntimeError) as e:  # a layout the library cannot share (jax: strided, read-only)
        if copy is False:
            raise BufferError(f"cannot share this array's memory ({e}); pass copy=None or True to copy it") from e
        return TensorBase._wrap(backend.asarray(backend.host_array(source)), backend)


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> TensorBase:
    """A new leaf tensor on the current backend holding a copy of `data`.

    Python floats become float32, ints int64; an array keeps its dtype (a float64 numpy
    array stays float64) unless `dtype` is given.

    >>> import autograd_core as ag
    >>> ag.tensor([[1.0, 2.0]]).shape
    (1, 2)
    """
    backend = _backend(device)
    return _made(to_array(data, backend, dtype), backend, requires_grad)


# --- filled ------------------------------------------------------------------------------
def _filled(
    make: Callable[[Any, Any, Any], Any],
    dtype: Any,
    default: DType,
    device: Any,
    requires_grad: bool,
    like: TensorBase | None = None,
) -> TensorBase:
    """``make(xp, dtype, device)`` on the backend `device` names (else `like`'s, else the current
    one), in `dtype` (else `like`'s, else `default`)."""
    backend = _backend(device, like.backend if like is not None else None)
    if dtype is not None:
        target = backend.dtype(as_dtype(dtype).name)
    else:
        target = like.array.dtype if like is not None else backend.dtype(default.name)
    return _made(make(backend.xp, target, backend.device), backend, requires_grad)


def full(
    shape: Shape, fill_value: Scalar, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> TensorBase:
    """A tensor of `shape` filled with `fill_value`, whose Python type gives the default dtype.

    >>> full((2,), 1).dtype, full((2,), 1.0).dtype, full((2,), True).dtype
    (autograd_core.int64, autograd_core.float32, autograd_core.bool)
    """
    shape = _shape(shape)
    return _filled(
        lambda xp, dt, dev: xp.full(shape, fill_value, dtype=dt, device=dev),
        dtype,
        result_type(fill_value),
        device,
        requires_grad,
    )


def _sized(name: str) -> Callable[..., TensorBase]:
    """zeros, ones or empty: ``f(shape)`` as the standard writes it, ``f(2, 3)`` as PyTorch does."""

    def create(
        shape: Shape, *sizes: int, dtype: Any = None, device: Any = None, requires_grad: bool = False
    ) -> TensorBase:
        dims = _shape(shape, sizes)
        return _filled(
            lambda xp, dt, dev: getattr(xp, name)(dims, dtype=dt, device=dev),
            dtype,
            _DEFAULTS["real floating"],
            device,
            requires_grad,
        )

    create.__name__ = create.__qualname__ = name
    create.__doc__ = (
        f"A tensor of {name}: ``{name}((2, 3))`` or ``{name}(2, 3)``; float32 unless `dtype` "
        f"says otherwise.\n\n    >>> {name}(2, 3).shape\n    (2, 3)\n    "
    )
    return create


def scalar_tensor(value: Scalar, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> TensorBase:
    """A 0-d tensor holding `value`, float32 unless `dtype` says otherwise (PyTorch's).

    >>> scalar_tensor(3).tolist(), scalar_tensor(3).dtype
    (3.0, autograd_core.float32)
    """
    dtype = _DEFAULTS["real floating"] if dtype is None else dtype
    return full((), value, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_strided(
    size: Shape, stride: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> TensorBase:
    """``empty(size)``: tensors here are laid out by their library, so `stride` is not kept."""
    return empty(_shape(size), dtype=dtype, device=device, requires_grad=requires_grad)


def empty_permuted(
    size: Shape, physical_layout: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> TensorBase:
    """``empty(size)``: tensors here are laid out by their library, so the layout is not kept."""
    return empty(_shape(size), dtype=dtype, device=device, requires_grad=requires_grad)


def _like(base: str) -> Callable[..., TensorBase]:
    """zeros_like, ones_like or empty_like: `base` in `x`'s shape, dtype, backend and device."""

    def create(x: TensorBase, /, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> TensorBase:
        x = asarray(x)
        return _filled(
            lambda xp, dt, dev: getattr(xp, base)(x.shape, dtype=dt, device=dev),
            dtype,
            x.dtype,
            device,
            requires_grad,
            like=x,
        )

    create.__name__ = create.__qualname__ = f"{base}_like"
    create.__doc__ = f"``{base}`` of `x`'s shape, in `x`'s dtype (unless `dtype`) on `x`'s backend."
    return create


zeros, ones, empty = (_sized(name) for name in ("zeros", "ones", "empty"))
zeros_like, ones_like, empty_like = (_like(name) for name in ("zeros", "ones", "empty"))


def full_like(
    x: TensorBase, /, fill_value: Scalar, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> TensorBase:
    """A tensor of `x`'s shape filled with `fill_value`, in `x`'s dtype (unless `dtype`) on
    `x`'s backend.

    >>> full_like(arange(3), 7).tolist()
    [7, 7, 7]
    """
    x = asarray(x)
    return _filled(
        lambda xp, dt, dev: xp.full(x.shape, fill_value, dtype=dt, device=dev),
        dtype,
        x.dtype,
        device,
        requires_grad,
        like=x,
    )


def eye(
    n_rows: int,
    n_cols: int | None = None,
    /,
    *,
    k: int = 0,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> TensorBase:
    """A `n_rows` x `n_cols` matrix with ones on diagonal `k` (above the main one if positive).

    >>> eye(2, 3, k=1).tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    return _filled(
        lambda xp, dt, dev: xp.eye(n_rows, n_cols, k=k, dtype=dt, device=dev),
        dtype,
        _DEFAULTS["real floating"],
        device,
        requires_grad,
    )


# --- ranges and grids ----------------------------------------------------------------------
def arange(
    start: int | float,
    /,
    stop: int | float | None = None,
    step: int | float = 1,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> TensorBase:
    """Evenly spaced values in [start, stop) (in [0, start) without `stop`): int64 when every
    argument is an int, else float32.

    >>> arange(4).tolist(), arange(0.0, 1.0, 0.25).tolist()
    ([0, 1, 2, 3], [0.0, 0.25, 0.5, 0.75])
    """
    if stop is None:
        start, stop = 0, start
    return _filled(
        lambda xp, dt, dev: xp.arange(start, stop, step, dtype=dt, device=dev),
        dtype,
        result_type(start, stop, step),
        device,
        requires_grad,
    )


def linspace(
    start: int | float | complex,
    stop: int | float | complex,
    /,
    num: int,
    *,
    dtype: Any = None,
    device: Any = None,
    endpoint: bool = True,
    requires_grad: bool = False,
) -> TensorBase:
    """`num` evenly spaced values from `start` to `stop` (included unless not `endpoint`);
    float32, or complex64 for complex ends.

    >>> linspace(0, 1, 5).tolist(), linspace(0, 1, 4, endpoint=False).tolist()
    ([0.0, 0.25, 0.5, 0.75, 1.0], [0.0, 0.25, 0.5, 0.75])
    """
    start, stop = (end.item() if isinstance(end, TensorBase) else end for end in (start, stop))  # PyTorch's 0-d ends
    return _filled(
        lambda xp, dt, dev: xp.linspace(start, stop, num, dtype=dt, device=dev, endpoint=endpoint),
        dtype,
        result_type(start, stop, 0.0),
        device,
        requires_grad,
    )


def logspace(
    start: Any,
    end: Any,
    steps: int,
    base: float = 10.0,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> TensorBase:
    """`steps` values from ``base ** start`` to ``base ** end``, their exponents evenly spaced
    (PyTorch's ``logspace``; `start` and `end` may be 0-d tensors); float32 unless `dtype`
    says otherwise, computed in float64 and rounded once.

    >>> logspace(0, 2, 3).tolist(), logspace(0, 3, 4, base=2).tolist()
    ([1.0, 10.0, 100.0], [1.0, 2.0, 4.0, 8.0])
    """
    values = np.power(float(base), np.linspace(float(start), float(end), operator.index(steps)))
    backend = _backend(device)
    target = backend.dtype(as_dtype(_DEFAULTS["real floating"] if dtype is None else dtype).name)
    return _made(backend.asarray(values.astype(backend.to_host_dtype(target)), target), backend, requires_grad)


def meshgrid(*arrays: TensorBase, indexing: str = "xy") -> list[TensorBase]:
    """Coordinate grids from 1-D tensors, differentiable (each is a broadcast of its input);
    ``indexing="xy"`` swaps the first two axes of the grid, ``"ij"`` does not.

    >>> gx, gy = meshgrid(arange(3), arange(2))
    >>> gx.shape, gy.tolist()
    ((2, 3), [[0, 0, 0], [1, 1, 1]])
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', not {indexing!r}")
    arrays = tuple(asarray(a) for a in arrays)
    axes = list(range(len(arrays)))
    if indexing == "xy" and len(arrays) > 1:
        axes[0], axes[1] = 1, 0
    shape = [0] * len(arrays)
    for axis, a in zip(axes, arrays):
        shape[axis] = a.shape[0]
    return [
        ops.broadcast_to(ops.reshape(a, tuple(-1 if i == axis else 1 for i in range(len(arrays)))), tuple(shape))
        for axis, a in zip(axes, arrays)
    ]


# --- triangles -----------------------------------------------------------------------------
def _triangle(name: str, below: bool) -> Callable[..., TensorBase]:
    """tril or triu: the forward and the VJP keep the same triangle (of `x`, of the gradient)."""

    def part(ns: Any, x: Any, k: int) -> Any:
        return ns.tril(x, k=k) if below else ns.triu(x, k=k)

    primitive = Primitive(name, part, vjps=(lambda ns, g, out, x, k: part(ns, g, k), None), saves="none", jvp="linear")

    def triangle(x: TensorBase, /, *, k: int = 0) -> TensorBase:
        x = asarray(x)
        return primitive.bind(x, k)

    side = "on and below" if below else "on and above"
    triangle.__name__ = triangle.__qualname__ = name
    triangle.__doc__ = (
        f"The elements of `x` (a matrix or a stack of them) {side} diagonal `k`, zeros "
        f"elsewhere; the gradient keeps the same triangle.\n\n"
        f"    >>> {name}(ones((2, 2))).tolist()\n"
        f"    {[[1.0, 0.0], [1.0, 1.0]] if below else [[1.0, 1.0], [0.0, 1.0]]}\n    "
    )
    return triangle


tril = _triangle("tril", below=True)
triu = _triangle("triu", below=False)


# --- random draws (`autograd_core.ops.random`: on the host, from a Generator or the default stream) ---
def randn(
    *sizes: Any,
    size: Any = None,
    dtype: Any = None,
    requires_grad: bool = False,
    device: Any = None,
    generator: Generator | None = None,
) -> TensorBase:
    """Standard normal draws, float32 unless `dtype` says otherwise, from `generator` (else the
    stream `manual_seed` seeds): ``randn(2, 3)`` or ``randn((2, 3))``."""
    backend = _backend(device)
    dtype = _DEFAULTS["real floating"] if dtype is None else dtype
    return _made(random.standard_normal(backend, _sizes(sizes, size), dtype, generator), backend, requires_grad)


def rand(
    *sizes: Any,
    size: Any = None,
    dtype: Any = None,
    requires_grad: bool = False,
    device: Any = None,
    generator: Generator | None = None,
) -> TensorBase:
    """Uniform draws in [0, 1), float32 unless `dtype` says otherwise, from `generator` (else
    the stream `manual_seed` seeds)."""
    return uniform(_sizes(sizes, size), 0.0, 1.0, dtype, requires_grad, device, generator=generator)


def uniform(
    size: Shape,
    low: float,
    high: float,
    dtype: Any = None,
    requires_grad: bool = False,
    device: Any = None,
    *,
    generator: Generator | None = None,
) -> TensorBase:
    """Uniform draws in [low, high) from `generator` (else the stream `manual_seed` seeds)."""
    backend = _backend(device)
    dtype = _DEFAULTS["real floating"] if dtype is None else dtype
    return _made(random.standard_uniform(backend, _shape(size), low, high, dtype, generator), backend, requires_grad)


def manual_seed(seed: int) -> None:
    """Seed the stream every backend draws from when no generator is given (and restart
    dropout's masks): one seed, the same numbers everywhere."""
    random.default_generator.manual_seed(seed)


def randint(
    low: int = 0,
    high: Any = None,
    size: Any = None,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> TensorBase:
    """Integers uniform in [low, high), int64 unless `dtype` says otherwise, PyTorch's forms:
    ``randint(high, size)``, ``randint(low, high, size)``, ``randint(high, size=size)``.

    >>> randint(3, (4,)).dtype, bool((randint(2, 5, (9,)) >= 2).all())
    (autograd_core.int64, True)
    """
    if size is None:
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    backend = _backend(device)
    dtype = _DEFAULTS["integral"] if dtype is None else dtype
    return _made(random.random_integers(backend, _shape(size), low, high, dtype, generator), backend, requires_grad)


def randperm(
    n: int, *, generator: Generator | None = None, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> TensorBase:
    """A random permutation of ``0 .. n-1``, int64 unless `dtype` says otherwise.

    >>> sorted(randperm(4).tolist())
    [0, 1, 2, 3]
    """
    backend = _backend(device)
    dtype = _DEFAULTS["integral"] if dtype is None else dtype
    drawn = random.draw(backend, (operator.index(n),), dtype, lambda rng, s: rng.permutation(s[0]), generator)
    return _made(drawn, backend, requires_grad)


def _drawn_like(name: str, draw: Callable[..., Any]) -> Callable[..., TensorBase]:
    """rand_like or randn_like: `draw(backend, shape, dtype, generator)` in `x`'s shape, dtype
    (unless `dtype`), backend and device (unless `device`)."""

    def like(
        x: TensorBase,
        /,
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        generator: Generator | None = None,
    ) -> TensorBase:
        x = asarray(x)
        backend = _backend(device, x.backend)
        return _made(draw(backend, x.shape, x.dtype if dtype is None else dtype, generator), backend, requires_grad)

    like.__name__ = like.__qualname__ = name
    like.__doc__ = f"``{name[:-5]}`` draws in `x`'s shape, dtype (unless `dtype`) and backend."
    return like


def _unit_uniform(backend: backends.Backend, shape: tuple[int, ...], dtype: Any, generator: Any) -> Any:
    return random.standard_uniform(backend, shape, 0.0, 1.0, dtype, generator)


randn_like = _drawn_like("randn_like", random.standard_normal)
rand_like = _drawn_like("rand_like", _unit_uniform)


def randint_like(
    x: TensorBase,
    low: int = 0,
    high: int | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    generator: Generator | None = None,
) -> TensorBase:
    """Integers uniform in [low, high) in `x`'s shape, dtype (unless `dtype`) and backend:
    ``randint_like(x, high)`` or ``randint_like(x, low, high)``.

    >>> randint_like(zeros(2), 1).tolist()
    [0.0, 0.0]
    """
    if high is None:
        low, high = 0, low
    x = asarray(x)
    backend = _backend(device, x.backend)
    drawn = random.random_integers(backend, x.shape, low, high, x.dtype if dtype is None else dtype, generator)
    return _made(drawn, backend, requires_grad)


def normal(
    mean: Any = 0.0,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> TensorBase:
    """Normal draws of mean `mean` and standard deviation `std`, PyTorch's forms: tensors (or a
    tensor and a number), giving their broadcast shape and a zero gradient for both, or two
    numbers and a `size`, float32 unless `dtype` says otherwise.

    >>> normal(2.0, 0.0, (2,)).tolist(), normal(zeros(2), 0.0).tolist()
    ([2.0, 2.0], [0.0, 0.0])
    """
    if isinstance(mean, TensorBase) or isinstance(std, TensorBase):
        return random.normal(mean, std, generator=generator)
    if size is None:
        raise TypeError("normal: with a number mean and std, pass the size of the result")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    backend = _backend(device)
    dtype = _DEFAULTS["real floating"] if dtype is None else dtype
    drawn = random.draw(backend, _shape(size), dtype, lambda rng, s: mean + std * rng.standard_normal(s), generator)
    return _made(drawn, backend, requires_grad)
