"""The primitive operations, each declared once: a forward written against the array-API
namespace of its inputs, and one vector-Jacobian product per input.

A VJP is ``vjp(grad, out) -> grad_input`` where `grad` is the gradient of the output and
`out` the output tensor itself. VJPs are written with Tensor operations, so when the
engine runs them with recording on (``create_graph=True``) the gradients are themselves
differentiable. Composite functions (softmax, var, stack...) are built from primitives
and need no VJP of their own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import backends
from autograd_core import grad_mode
from autograd_core.creation import to_array
from autograd_core.dtypes import as_dtype
from autograd_core.tensor import Tensor, record

Scalar = (int, float, bool)
Axis = int | Sequence[int] | None


# --- operands and broadcasting -------------------------------------------------------------
def common_backend(op: str, *tensors: Tensor) -> backends.Backend:
    """The backend all `tensors` live on, or an error that says how to move one."""
    first = tensors[0].backend
    for t in tensors[1:]:
        if t.backend is not first:
            raise RuntimeError(
                f"{op}: the operands live on different backends ({first} and {t.backend}); "
                f"move one with .to({t.backend.name!r}) or .to({first.name!r}) first"
            )
    return first


def _operands(op: str, a: Any, b: Any) -> tuple[Any, Any, backends.Backend]:
    """Both operands of a binary op, with arrays and lists made tensors on the other's backend."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            return a, b, (a.backend if a.backend is b.backend else common_backend(op, a, b))
        if isinstance(b, Scalar):  # the hot path of `t * 2.0`
            return a, b, a.backend
    tensor = a if isinstance(a, Tensor) else b
    a, b = (_constant(x, tensor) for x in (a, b))
    return a, b, tensor.backend


def _constant(x: Any, like: Tensor) -> Any:
    """A Python scalar stays a scalar (so it never promotes a dtype); an array becomes a tensor."""
    if isinstance(x, (Tensor, *Scalar)):
        return x
    return Tensor._wrap(to_array(x, like.backend), like.backend)


def _data(x: Any) -> Any:
    return x.data if isinstance(x, Tensor) else x


def unbroadcast(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """The adjoint of broadcasting `shape` to ``grad.shape``: sum over the prepended axes
    and over the axes that were stretched from 1."""
    if grad.data.shape == shape:
        return grad
    shape = tuple(shape)
    lead = grad.ndim - len(shape)
    stretched = tuple(lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    return reshape(sum(grad, axis=tuple(range(lead)) + stretched), shape)


def _view(out: Tensor, x: Tensor) -> Tensor:
    """Mark `out` as sharing `x`'s memory, so in-place changes to `x` count against it."""
    out._base = x if x._base is None else x._base
    return out


def _binary(op: str, forward: Any, a: Any, b: Any, vjp_a: Any, vjp_b: Any, saves_inputs: bool = True,
            saves_output: bool = False) -> Tensor:
    a, b, backend = _operands(op, a, b)
    data = forward(a.data if isinstance(a, Tensor) else a, b.data if isinstance(b, Tensor) else b)
    if not grad_mode._enabled:  # the hot path of every backward: no closures, no record
        return Tensor._wrap(data, backend)
    return record(op, data, backend, (a, b), (
        lambda g, out: unbroadcast(vjp_a(g, out, a, b), a.data.shape),
        lambda g, out: unbroadcast(vjp_b(g, out, a, b), b.data.shape),
    ), saved=None if saves_inputs else (), saves_output=saves_output)


# --- arithmetic --------------------------------------------------------------------------
def add(a: Any, b: Any) -> Tensor:
    return _binary("add", lambda x, y: x + y, a, b, lambda g, o, a, b: g, lambda g, o, a, b: g, saves_inputs=False)


def subtract(a: Any, b: Any) -> Tensor:
    return _binary("subtract", lambda x, y: x - y, a, b, lambda g, o, a, b: g, lambda g, o, a, b: -g,
                   saves_inputs=False)


def multiply(a: Any, b: Any) -> Tensor:
    return _binary("multiply", lambda x, y: x * y, a, b, lambda g, o, a, b: g * b, lambda g, o, a, b: g * a)


def divide(a: Any, b: Any) -> Tensor:
    return _binary("divide", lambda x, y: x / y, a, b,
                   lambda g, o, a, b: g / b, lambda g, o, a, b: -g * a / (b * b))


def pow(a: Any, b: Any) -> Tensor:  # noqa: A001 - the standard's name
    return _binary("pow", lambda x, y: x**y, a, b,
                   lambda g, o, a, b: g * b * a ** (b - 1),
                   lambda g, o, a, b: g * o * (log(a) if isinstance(a, Tensor) else math.log(a)), saves_output=True)


def negative(x: Tensor) -> Tensor:
    return record("negative", -x.data, x.backend, (x,), (lambda g, out: -g,), saved=())


def _as_operand(value: Any, like: Tensor) -> Any:
    """A scalar as a 0-d array of `like`'s dtype, for functions that take arrays only."""
    if isinstance(value, Tensor):
        return value.data
    return like.backend.xp.asarray(value, dtype=like.data.dtype, device=like.backend.device)


# --- elementwise functions ----------------------------------------------------------------
def _unary(op: str, x: Tensor, forward: Any, vjp: Any, saves: str = "input") -> Tensor:
    """An elementwise primitive; `saves` says what its VJP reads: "input", "output" or "none"."""
    return record(op, forward(x.backend.xp, x.data), x.backend, (x,), (lambda g, out: vjp(g, out, x),),
                  saved=None if saves == "input" else (), saves_output=saves == "output")


def _mask(x: Tensor, array: Any) -> Tensor:
    """A constant tensor of `x`'s dtype from a boolean array."""
    return Tensor._wrap(x.backend.xp.astype(array, x.data.dtype), x.backend)


def exp(x: Tensor) -> Tensor:
    return _unary("exp", x, lambda xp, d: xp.exp(d), lambda g, out, x: g * out, "output")


def log(x: Tensor) -> Tensor:
    return _unary("log", x, lambda xp, d: xp.log(d), lambda g, out, x: g / x)


def log1p(x: Tensor) -> Tensor:
    return _unary("log1p", x, lambda xp, d: xp.log1p(d), lambda g, out, x: g / (1 + x))


def sqrt(x: Tensor) -> Tensor:
    return _unary("sqrt", x, lambda xp, d: xp.sqrt(d), lambda g, out, x: g / (2 * out), "output")


def tanh(x: Tensor) -> Tensor:
    return _unary("tanh", x, lambda xp, d: xp.tanh(d), lambda g, out, x: g * (1 - out * out), "output")


def _sigmoid(xp: Any, d: Any) -> Any:
    e = xp.exp(-xp.abs(d))  # never overflows
    return xp.where(d >= 0, 1 / (1 + e), e / (1 + e))


def sigmoid(x: Tensor) -> Tensor:
    return _unary("sigmoid", x, _sigmoid, lambda g, out, x: g * out * (1 - out), "output")


def relu(x: Tensor) -> Tensor:
    # the output is positive exactly where the input is, so the mask comes from it
    return _unary("relu", x, lambda xp, d: xp.maximum(d, 0.0), lambda g, out, x: g * _mask(out, out.data > 0),
                  "output")


def abs(x: Tensor) -> Tensor:  # noqa: A001 - the standard's name
    return _unary("abs", x, lambda xp, d: xp.abs(d), lambda g, out, x: g * _mask(x, x.backend.xp.sign(x.data)))


def erf(x: Tensor) -> Tensor:
    return _unary("erf", x, lambda xp, d: x.backend.erf(d),
                  lambda g, out, x: g * (2 / math.sqrt(math.pi)) * exp(-(x * x)))


def sin(x: Tensor) -> Tensor:
    return _unary("sin", x, lambda xp, d: xp.sin(d), lambda g, out, x: g * cos(x))


def cos(x: Tensor) -> Tensor:
    return _unary("cos", x, lambda xp, d: xp.cos(d), lambda g, out, x: -g * sin(x))


def _select(op: str, x: Tensor, other: Any, pick_x: Any) -> Tensor:
    """maximum/minimum: the gradient goes to the chosen operand, split evenly on ties."""
    x, other, backend = _operands(op, x, other)
    if not isinstance(x, Tensor):
        x, other = other, x
    xp = backend.xp
    xd, od = x.data, _as_operand(other, x)

    def share() -> Tensor:  # of the gradient that goes to x: 1 where chosen, 1/2 on ties
        return Tensor._wrap(xp.where(xd == od, 0.5, xp.astype(pick_x(xp, xd, od), xd.dtype)), backend)

    return record(op, xp.where(pick_x(xp, xd, od), xd, od), backend, (x, other), (
        lambda g, out: unbroadcast(g * share(), x.shape),
        lambda g, out: unbroadcast(g * (1 - share()), other.shape),
    ))


def maximum(a: Any, b: Any) -> Tensor:
    return _select("maximum", a, b, lambda xp, x, y: x > y)


def minimum(a: Any, b: Any) -> Tensor:
    return _select("minimum", a, b, lambda xp, x, y: x < y)


def where(condition: Any, a: Any, b: Any) -> Tensor:
    """Elements of `a` where `condition` holds, else of `b` (either may be a scalar)."""
    a, b, backend = _operands("where", a, b)
    cond = condition.data if isinstance(condition, Tensor) else to_array(condition, backend, "bool")
    like = a if isinstance(a, Tensor) else b
    c = Tensor._wrap(cond, backend)
    return record("where", backend.xp.where(cond, _as_operand(a, like), _as_operand(b, like)), backend, (a, b), (
        lambda g, out: unbroadcast(where(c, g, 0.0), a.shape),
        lambda g, out: unbroadcast(where(c, 0.0, g), b.shape),
    ), saved=())


def clip(x: Tensor, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002
    """Values limited to [min, max]; the gradient passes where min <= x <= max."""
    xp = x.backend.xp

    def vjp(g: Tensor, out: Tensor) -> Tensor:
        inside = xp.ones(x.data.shape, dtype=xp.bool, device=x.backend.device)
        if min is not None:
            inside = inside & (x.data >= min)
        if max is not None:
            inside = inside & (x.data <= max)
        return where(Tensor._wrap(inside, x.backend), g, 0.0)

    return record("clip", xp.clip(x.data, min=min, max=max), x.backend, (x,), (vjp,))


# --- comparisons and logic (never differentiable) -----------------------------------------------
def _compare(op: str, forward: Any, a: Any, b: Any) -> Tensor:
    a, b, backend = _operands(op, a, b)
    return Tensor._wrap(forward(_data(a), _data(b)), backend)


def less(a: Any, b: Any) -> Tensor:
    return _compare("less", lambda x, y: x < y, a, b)


def less_equal(a: Any, b: Any) -> Tensor:
    return _compare("less_equal", lambda x, y: x <= y, a, b)


def greater(a: Any, b: Any) -> Tensor:
    return _compare("greater", lambda x, y: x > y, a, b)


def greater_equal(a: Any, b: Any) -> Tensor:
    return _compare("greater_equal", lambda x, y: x >= y, a, b)


def equal(a: Any, b: Any) -> Tensor:
    return _compare("equal", lambda x, y: x == y, a, b)


def not_equal(a: Any, b: Any) -> Tensor:
    return _compare("not_equal", lambda x, y: x != y, a, b)


def logical_and(a: Any, b: Any) -> Tensor:
    return _compare("logical_and", lambda x, y: x & y, a, b)


def logical_or(a: Any, b: Any) -> Tensor:
    return _compare("logical_or", lambda x, y: x | y, a, b)


def logical_not(x: Tensor) -> Tensor:
    return Tensor._wrap(~x.data, x.backend)


# --- linear algebra ---------------------------------------------------------------------------
def matmul(a: Tensor, b: Tensor) -> Tensor:
    """The matrix product with the standard's rules: batched, broadcast, 1-D on either side."""
    a, b, backend = _operands("matmul", a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul needs tensors of at least 1 dimension, got shapes {a.shape} and {b.shape}")
    # VJPs work on the 2-D-at-least views: a 1-D `a` is a row, a 1-D `b` a column.
    a2 = a if a.ndim > 1 else reshape(a, (1, -1))
    b2 = b if b.ndim > 1 else reshape(b, (-1, 1))

    def grad_2d(g: Tensor) -> Tensor:
        batch = _broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
        return reshape(g, (*batch, a2.shape[-2], b2.shape[-1]))

    return record("matmul", a.data @ b.data, backend, (a, b), (
        lambda g, out: reshape(unbroadcast(matmul(grad_2d(g), matrix_transpose(b2)), a2.shape), a.shape),
        lambda g, out: reshape(unbroadcast(matmul(matrix_transpose(a2), grad_2d(g)), b2.shape), b.shape),
    ))


def _broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    ndim = builtin_max((len(s) for s in shapes), default=0)
    out = []
    for i in range(-ndim, 0):
        sizes = {s[i] for s in shapes if len(s) >= -i} - {1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {shapes} cannot be broadcast together")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def matrix_transpose(x: Tensor) -> Tensor:
    """Swap the last two axes."""
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least 2 dimensions, got shape {x.shape}")
    return permute_dims(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))


# --- shapes -------------------------------------------------------------------------------
def reshape(x: Tensor, shape: Sequence[int]) -> Tensor:
    shape = tuple(shape)
    if shape == x.shape:
        return x
    return _view(record("reshape", x.backend.xp.reshape(x.data, shape), x.backend, (x,),
                        (lambda g, out: reshape(g, x.shape),), saved=()), x)


def permute_dims(x: Tensor, axes: Sequence[int]) -> Tensor:
    axes = tuple(a % x.ndim for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"permute_dims: {axes} is not a permutation of the {x.ndim} axes")
    inverse = tuple(sorted(range(x.ndim), key=axes.__getitem__))
    return _view(record("permute_dims", x.backend.xp.permute_dims(x.data, axes), x.backend, (x,),
                        (lambda g, out: permute_dims(g, inverse),), saved=()), x)


def swapaxes(x: Tensor, axis1: int, axis2: int) -> Tensor:
    axes = list(range(x.ndim))
    axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
    return permute_dims(x, axes)


def expand_dims(x: Tensor, axis: int = 0) -> Tensor:
    axis = axis % (x.ndim + 1)
    return reshape(x, (*x.shape[:axis], 1, *x.shape[axis:]))


def squeeze(x: Tensor, axis: Axis = None) -> Tensor:
    """Drop axes of size 1 (all of them when `axis` is None, as PyTorch does)."""
    if axis is None:
        axes = {i for i, n in enumerate(x.shape) if n == 1}
    else:
        axes = set(_axes(axis, x.ndim))
        if any(x.shape[i] != 1 for i in axes):
            raise ValueError(f"squeeze: axis {axis} of shape {x.shape} does not have size 1")
    return reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in axes))


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if x.ndim == 0:
        return reshape(x, (1,))
    start, end = start_dim % x.ndim, end_dim % x.ndim
    return reshape(x, (*x.shape[:start], math.prod(x.shape[start : end + 1]), *x.shape[end + 1 :]))


def broadcast_to(x: Tensor, shape: Sequence[int]) -> Tensor:
    shape = tuple(shape)
    if shape == x.shape:
        return x
    return _view(record("broadcast_to", x.backend.xp.broadcast_to(x.data, shape), x.backend, (x,),
                        (lambda g, out: unbroadcast(g, x.shape),), saved=()), x)


def concat(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    tensors = list(tensors)
    backend = common_backend("concat", *tensors)
    axis = axis % tensors[0].ndim
    bounds = [0]
    for t in tensors:
        bounds.append(bounds[-1] + t.shape[axis])

    def piece(i: int) -> Any:
        key = (slice(None),) * axis + (slice(bounds[i], bounds[i + 1]),)
        return lambda g, out: g[key]

    data = backend.xp.concat([t.data for t in tensors], axis=axis)
    return record("concat", data, backend, tensors, [piece(i) for i in range(len(tensors))], saved=())


def stack(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    tensors = list(tensors)
    axis = axis % (tensors[0].ndim + 1)
    return concat([expand_dims(t, axis) for t in tensors], axis=axis)


def astype(x: Tensor, dtype: Any) -> Tensor:
    target = x.backend.dtype(as_dtype(dtype).name)
    if x.data.dtype == target:
        return x
    return record("astype", x.backend.xp.astype(x.data, target), x.backend, (x,),
                  (lambda g, out: astype(g, x.dtype),), saved=())


def clone(x: Tensor) -> Tensor:
    """A copy that owns its memory; the gradient passes through unchanged."""
    return record("clone", x.backend.xp.asarray(x.data, copy=True), x.backend, (x,), (lambda g, out: g,), saved=())


def to_backend(x: Tensor, backend: backends.Backend) -> Tensor:
    """The same values on another backend (or device), through the host; differentiable."""
    if backend is x.backend:
        return x
    data = backend.asarray(x.numpy(), backend.dtype(x.dtype.name))
    return record("to", data, backend, (x,), (lambda g, out: to_backend(g, x.backend),), saved=())


# --- reductions -----------------------------------------------------------------------------
builtin_max = max  # the builtin, before `max` below takes its name


def _axes(axis: Axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for a in axes:
        if not -builtin_max(ndim, 1) <= a < builtin_max(ndim, 1):
            raise ValueError(f"axis {a} is out of range for a tensor of {ndim} dimensions")
    return tuple(sorted(a % builtin_max(ndim, 1) for a in axes)) if ndim else ()


def _kept_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _expand_back(g: Tensor, shape: tuple[int, ...], axes: tuple[int, ...]) -> Tensor:
    """A reduction's output gradient spread back over the reduced axes."""
    return broadcast_to(reshape(g, _kept_shape(shape, axes)), shape)


def sum(x: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:  # noqa: A001
    axes = _axes(axis, x.ndim)
    return record("sum", x.backend.xp.sum(x.data, axis=axes, keepdims=keepdims), x.backend, (x,),
                  (lambda g, out: _expand_back(g, x.shape, axes),), saved=())


def mean(x: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    axes = _axes(axis, x.ndim)
    return sum(x, axes, keepdims) / math.prod(x.shape[a] for a in axes)


def _extreme(op: str, x: Tensor, axis: Axis, keepdims: bool) -> Tensor:
    """max/min; the gradient is shared evenly among tied extremes."""
    xp, axes = x.backend.xp, _axes(axis, x.ndim)
    if x.numel() == 0:
        raise ValueError(f"{op} of an empty tensor")
    data = getattr(xp, op)(x.data, axis=axes, keepdims=keepdims)

    def vjp(g: Tensor, out: Tensor) -> Tensor:
        hits = xp.astype(x.data == xp.reshape(out.data, _kept_shape(x.shape, axes)), x.data.dtype)
        return _expand_back(g, x.shape, axes) * Tensor._wrap(hits / xp.sum(hits, axis=axes, keepdims=True), x.backend)

    return record(op, data, x.backend, (x,), (vjp,), saves_output=True)


def max(x: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:  # noqa: A001
    return _extreme("max", x, axis, keepdims)


def min(x: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:  # noqa: A001
    return _extreme("min", x, axis, keepdims)


def logsumexp(x: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """log(sum(exp(x))) computed without overflow, for logits of any size."""
    xp, axes = x.backend.xp, _axes(axis, x.ndim)
    shift = xp.max(x.data, axis=axes, keepdims=True)
    shift = xp.where(xp.isfinite(shift), shift, xp.zeros_like(shift))
    kept = xp.log(xp.sum(xp.exp(x.data - shift), axis=axes, keepdims=True)) + shift
    data = kept if keepdims else xp.reshape(kept, tuple(n for i, n in enumerate(x.shape) if i not in axes))
    return record("logsumexp", data, x.backend, (x,), (
        lambda g, out: _expand_back(g, x.shape, axes) * exp(x - _expand_back(out, x.shape, axes)),
    ), saves_output=True)


def var(x: Tensor, axis: Axis = None, correction: float = 0.0, keepdims: bool = False) -> Tensor:
    """Variance; `correction=1` gives the unbiased estimate (the standard's default is 0)."""
    axes = _axes(axis, x.ndim)
    centred = x - mean(x, axes, keepdims=True)
    count = math.prod(x.shape[a] for a in axes)
    return sum(centred * centred, axes, keepdims) / builtin_max(count - correction, 0)


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    return exp(log_softmax(x, axis))


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    return x - logsumexp(x, axis, keepdims=True)


# --- indexing -------------------------------------------------------------------------------
def _basic_index(x: Tensor, key: tuple) -> Tensor:
    return _view(record("getitem", x.backend.getitem(x.data, key), x.backend, (x,),
                        (lambda g, out: _scatter(g, x.shape, key),), saved=()), x)


def _scatter(g: Tensor, shape: tuple[int, ...], key: tuple) -> Tensor:
    """The adjoint of basic indexing: zeros of `shape` with `g` written at `key`."""
    return record("scatter", g.backend.scatter(shape, key, g.data), g.backend, (g,),
                  (lambda gg, out: _basic_index(gg, key),), saved=())


def take(x: Tensor, indices: Any, axis: int = 0) -> Tensor:
    """Elements of `x` at the 1-D integer `indices` along `axis` (a gather); its gradient is
    an accumulating scatter-add, right with repeated indices."""
    axis = axis % x.ndim
    index = _index_array(indices, x.backend)
    return record("take", x.backend.xp.take(x.data, index, axis=axis), x.backend, (x,),
                  (lambda g, out: _index_add(g, x.shape, axis, index),), saved=())


def _index_add(g: Tensor, shape: tuple[int, ...], axis: int, index: Any) -> Tensor:
    return record("index_add", g.backend.index_add(shape, axis, index, g.data), g.backend, (g,),
                  (lambda gg, out: take(gg, index, axis),), saved=())


def _index_array(indices: Any, backend: backends.Backend) -> Any:
    if isinstance(indices, Tensor):
        return indices.data
    if backend.is_native(indices):
        return indices
    return to_array(indices, backend, "int64")


def _is_array_key(k: Any) -> bool:
    return not isinstance(k, (int, slice, type(None), type(Ellipsis)))


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]`` for basic keys (ints, slices, None, ...) and for integer arrays on adjacent
    axes, the other axes taken whole or sliced (``x[idx]``, ``x[:, idx]``, ``x[rows, cols]``)."""
    key = key if isinstance(key, tuple) else (key,)
    if not any(_is_array_key(k) for k in key):
        return _basic_index(x, key if any(k is Ellipsis for k in key) else (*key, Ellipsis))
    if any(isinstance(k, (int, type(None))) for k in key):
        raise IndexError("an index mixing integer arrays with ints or None is not supported; index in two steps")
    if any(k is Ellipsis for k in key):
        i = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (slice(None),) * (x.ndim - len(key) + 1) + key[i + 1 :]
    key = key + (slice(None),) * (x.ndim - len(key))
    positions = [i for i, k in enumerate(key) if _is_array_key(k)]
    if positions != list(range(positions[0], positions[-1] + 1)):
        raise IndexError("integer array indices must be on adjacent axes")
    sliced = getitem(x, tuple(slice(None) if _is_array_key(k) else k for k in key))
    first, arrays = positions[0], [_index_array(key[i], x.backend) for i in positions]
    for a in arrays:
        if a.dtype == x.backend.xp.bool:
            raise IndexError("boolean mask indexing is not supported; use where(mask, x, 0) instead")
    return _gather(sliced, first, arrays)


def _gather(x: Tensor, first: int, arrays: list) -> Tensor:
    """Index axes first..first+len(arrays) of `x` by the broadcast integer `arrays`: the axes
    are merged into one and the arrays into one flat index, so one `take` does it."""
    xp, sizes = x.backend.xp, x.shape[first : first + len(arrays)]
    flat, stride = 0, 1
    for a, n in zip(reversed(arrays), reversed(sizes)):
        checkable = a.shape and not x.backend.is_traced(a)  # a trace has no values to check
        if checkable and (int(xp.max(a)) >= n or int(xp.min(a)) < -n):
            raise IndexError(f"index out of range for an axis of size {n}")
        flat = flat + xp.where(a < 0, a + n, a) * stride
        stride *= n
    index_shape = tuple(flat.shape)
    merged = reshape(x, (*x.shape[:first], stride, *x.shape[first + len(arrays) :]))
    picked = take(merged, xp.reshape(flat, (-1,)), axis=first)
    return reshape(picked, (*x.shape[:first], *index_shape, *x.shape[first + len(arrays) :]))


def index_put(x: Tensor, key: Any, value: Any) -> Tensor:
    """`x` with `value` written at the basic index `key`, out of place (``x[key] = value``
    on a Tensor uses it); the gradient goes to `x` outside `key` and to `value` inside."""
    key = key if isinstance(key, tuple) else (key,)
    if any(_is_array_key(k) for k in key):
        raise IndexError("assignment through integer-array indices is not supported; use where(mask, value, x)")
    key = key if any(k is Ellipsis for k in key) else (*key, Ellipsis)
    xp, backend = x.backend.xp, x.backend
    region = tuple(x.data[key].shape)
    if not isinstance(value, Tensor):
        value = Tensor._wrap(to_array(value, backend, x.dtype), backend)
    inside = backend.scatter(x.shape, key, xp.ones(region, dtype=xp.bool, device=backend.device))
    written = _scatter(broadcast_to(astype(value, x.dtype), region), x.shape, key)
    return where(Tensor._wrap(inside, backend), written, x)
