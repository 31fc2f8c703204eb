"""The standard's statistical and utility functions that `ops` lacks: prod, std,
cumulative_sum, cumulative_prod and diff (differentiable), any and all (outside the graph).

Every gradient here is a polynomial in the inputs, never a division by them, so it is
right where elements are zero, to every order (``create_graph=True``):

- prod: each element's gradient is the product of the others, the exclusive prefix product
  times the exclusive suffix product (PyTorch's ``prod_safe_zeros_backward``);
- cumulative_sum: a reversed cumulative sum;
- cumulative_prod: ``grad_i = prod_{k<i} x_k * R_i`` with ``R_i = g_i + x_{i+1} R_{i+1}``, a
  linear recurrence solved by doubling in log2(n) steps (PyTorch's cumprod_backward gives the
  same values; it divides by the input when no element is zero and falls back to O(n^2)
  under create_graph).

Reversals along an axis are the standard's `flip` (differentiable in `autograd_core`, from
`manipulation`).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any, NamedTuple

from autograd_core.graph.dtypes import as_dtype
from autograd_core.graph.namespace import raw_namespace, tensor_namespace
from autograd_core.graph.registry import Primitive
from autograd_core.graph.tensor_base import TensorBase
from autograd_core.ops.core import (
    Axis,
    _axes,
    _basic_index,
    _cast,
    _tensor,
    clip as _clip,
    concat,
    expand_back,
    matmul as _matmul,
    matrix_transpose as _matrix_transpose,
    max as _ops_max,
    mean as _ops_mean,
    min as _ops_min,
    not_equal,
    reshape,
    subtract,
    sum as _ops_sum,
    unary_op,
    var as _variance,
)
from autograd_core.ops.elementwise import conj as _conj, sqrt as _sqrt
from autograd_core.primitives.indexing import basic_index, scatter

__all__ = ["all", "any", "cumulative_prod", "cumulative_sum", "diff", "prod", "std", "var"]


# --- helpers: dtypes and moves along one axis ------------------------------------------------
def _accumulated(x: TensorBase, dtype: Any) -> tuple[TensorBase, Any]:
    """`x` cast to the dtype it accumulates in, and the dtype of the result if another: `dtype`,
    or by the standard's rule when None: integers (and bools, as in PyTorch) accumulate in
    int64, and unsigned ones give uint64 (computed in int64, which every library has kernels
    for, then cast: torch has no uint64 arithmetic)."""
    if dtype is not None:
        return _cast(x, as_dtype(dtype)), None
    kind = x.dtype.kind
    if kind == "unsigned integer" and x.dtype != "uint64":
        return _cast(x, "int64"), "uint64"
    return _cast(
        x, "uint64" if kind == "unsigned integer" else "int64" if kind in ("bool", "signed integer") else x.dtype
    ), None


def _along(axis: int, index: slice) -> tuple:
    """The basic index that applies `index` along `axis` and takes everything elsewhere."""
    return (slice(None),) * axis + (index, Ellipsis)


def _shifted(ns: Any, a: Any, step: int, axis: int) -> Any:
    """``a[i + step]`` along `axis`, zero past the end."""
    n = a.shape[axis]
    step = min(step, n)  # array_api_strict refuses a slice that starts past the end
    return scatter(ns, basic_index(ns, a, _along(axis, slice(step, None))), a.shape, _along(axis, slice(0, n - step)))


def _exclusive_prod(ns: Any, a: Any, axis: int) -> Any:
    """``prod(a[:i])`` along `axis` at each i (1 at the first position)."""
    inclusive = ns.cumulative_prod(a, axis=axis, include_initial=True)
    return basic_index(ns, inclusive, _along(axis, slice(None, -1)))


# --- prod and std -----------------------------------------------------------------------------
def prod(x: TensorBase, /, *, axis: Axis = None, dtype: Any = None, keepdims: bool = False) -> TensorBase:
    """The product over `axis` (all axes when None); ints narrower than int64 give int64.

    The gradient of each element is the product of the others in its group, right where
    elements are zero (one zero: the others' product at it; two: zero everywhere).

    >>> import autograd_core as ag
    >>> x = ag.tensor([[2.0, 0.0, 3.0], [1.0, 4.0, 5.0]], requires_grad=True)
    >>> ag.prod(x, axis=1).sum().backward()
    >>> x.grad.tolist()
    [[0.0, 6.0, 0.0], [20.0, 5.0, 4.0]]
    """
    x, result = _accumulated(_tensor("prod", x), dtype)
    axes = _axes(axis, x.ndim)
    out = _PROD.bind(x, axes, keepdims)
    return out if result is None else _cast(out, result)


def _cofactor(ns: Any, x: Any, axes: tuple[int, ...]) -> Any:
    """The product of the other elements of each one's group, the derivative of the product:
    the reduced axes are moved last and merged into one, where it is the exclusive prefix
    product times the exclusive suffix product; then the axes go back."""
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    order, last = kept + axes, len(kept)
    moved = tuple(x.shape[i] for i in order)
    groups = ns.reshape(ns.permute_dims(x, order), (*moved[:last], math.prod(moved[last:])))
    before = _exclusive_prod(ns, groups, last)
    after = ns.flip(_exclusive_prod(ns, ns.flip(groups, axis=last), last), axis=last)
    inverse = tuple(sorted(range(x.ndim), key=order.__getitem__))
    return ns.permute_dims(ns.reshape(before * after, moved), inverse)


_PROD = Primitive(
    "prod",
    lambda ns, x, axes, keepdims: ns.prod(x, axis=axes, keepdims=keepdims, dtype=x.dtype),
    vjps=(lambda ns, g, out, x, axes, keepdims: expand_back(ns, g, x.shape, axes) * _cofactor(ns, x, axes), None, None),
    jvp=lambda ns, tangents, out, x, axes, keepdims: ns.sum(
        tangents[0] * _cofactor(ns, x, axes), axis=axes, keepdims=keepdims
    ),
)


def _root_vjp(ns: Any, g: Any, out: Any, v: Any) -> Any:
    """sqrt's gradient g / (2 sqrt(v)), and 0 where sqrt(v) is 0 (PyTorch's std_backward)."""
    zero = out == 0
    return ns.where(zero, 0.0, g / (2 * ns.where(zero, 1.0, out)))


_std_root = unary_op("std", lambda ns, d: ns.sqrt(d), _root_vjp, "output")


def var(
    x: TensorBase,
    /,
    axis: Axis | bool = None,
    unbiased: bool | None = None,
    keepdims: bool = False,
    *,
    correction: float | None = None,
    ddof: float | None = None,
    dim: Axis = None,
    keepdim: bool = False,
) -> TensorBase:
    """The variance over `axis` (all axes when None): the sum of squared deviations from the
    mean divided by ``n - correction``. Every library's spelling is taken: the standard's
    ``axis``/``correction``/``keepdims``, PyTorch's ``dim``/``unbiased``/``keepdim`` (positionally
    too: ``var(x, dim, unbiased, keepdim)``, or ``var(x, unbiased)``) and numpy's ``ddof``.

    Without a correction the standard's 0 applies (the population variance), except in a call
    spelled PyTorch's way (``dim=`` or ``keepdim=``), which gets PyTorch's 1 (the sample variance).

    >>> import autograd_core as ag
    >>> x = ag.tensor([1.0, 2.0, 3.0, 4.0], dtype="float64")
    >>> ag.var(x).item(), ag.var(x, ddof=1).item(), ag.var(x, True).item(), ag.var(x, dim=0).item()
    (1.25, 1.6666666666666667, 1.6666666666666667, 1.6666666666666667)
    """
    axis, correction, keepdims = spread_arguments(
        "var", axis, unbiased, keepdims, correction=correction, ddof=ddof, dim=dim, keepdim=keepdim
    )
    return _variance(x, axis=axis, correction=correction, keepdims=keepdims)


def std(
    x: TensorBase,
    /,
    axis: Axis | bool = None,
    unbiased: bool | None = None,
    keepdims: bool = False,
    *,
    correction: float | None = None,
    ddof: float | None = None,
    dim: Axis = None,
    keepdim: bool = False,
) -> TensorBase:
    """The standard deviation, ``sqrt(var(x, ...))``, taking `var`'s arguments in every
    spelling; where it is zero (all the elements equal) the gradient is zero, as PyTorch
    gives, not nan.

    >>> import autograd_core as ag
    >>> x = ag.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    >>> s = ag.std(x, correction=1)
    >>> round(s.item(), 4)
    1.291
    """
    axis, correction, keepdims = spread_arguments(
        "std", axis, unbiased, keepdims, correction=correction, ddof=ddof, dim=dim, keepdim=keepdim
    )
    return _std_root(_variance(x, axis=axis, correction=correction, keepdims=keepdims))


def spread_arguments(
    name: str,
    axis: Any,
    unbiased: Any,
    keepdims: bool,
    *,
    correction: float | None,
    ddof: float | None,
    dim: Any,
    keepdim: bool,
    default: float | None = None,
) -> tuple[Axis, float, bool]:
    """var's or std's arguments, in whichever spelling, as the standard's ``(axis, correction,
    keepdims)``: a bool where the axes go is PyTorch's `unbiased` (``t.std(True)``), and at
    most one of correction, ddof and unbiased may be given. Without any, the correction is
    `default`, or when None PyTorch's 1 for a call that names ``dim`` or ``keepdim`` and the
    standard's 0 otherwise."""
    if isinstance(axis, bool):  # var(x, True): PyTorch's var(input, unbiased)
        if unbiased is not None:
            raise TypeError(f"{name}: unbiased given twice, as {axis} in the place of dim and as {unbiased}")
        axis, unbiased = None, axis
    if axis is not None and dim is not None:
        raise TypeError(f"{name}: pass the dimensions to reduce as axis or dim, not both")
    axis = dim if axis is None else axis
    axes = (axis,) if isinstance(axis, int) else axis
    if axes is not None and not (
        isinstance(axes, (tuple, list)) and builtins.all(isinstance(a, int) and not isinstance(a, bool) for a in axes)
    ):
        raise TypeError(f"{name}: dim must be an int, a sequence of ints or None, got {axis!r}")
    if unbiased is not None and not isinstance(unbiased, bool):
        raise TypeError(
            f"{name}: unbiased must be a bool (True: divide by n - 1), got {unbiased!r}; to reduce over "
            f"several dims pass them as one tuple: {name}(({axis}, {unbiased}))"
        )
    given = {k: v for k, v in (("correction", correction), ("ddof", ddof), ("unbiased", unbiased)) if v is not None}
    if len(given) > 1:
        raise TypeError(f"{name}: pass only one of correction, ddof and unbiased, got {', '.join(given)}")
    if given:
        correction = int(unbiased) if unbiased is not None else next(iter(given.values()))
    elif default is not None:
        correction = default
    else:
        correction = 1 if dim is not None or keepdim else 0
    return None if axes is None else tuple(axes), correction, bool(keepdims or keepdim)


# --- cumulative sums and products ---------------------------------------------------------------
def cumulative_sum(
    x: TensorBase, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> TensorBase:
    """Running sums along `axis` (optional for a 1-D `x`); `include_initial` puts a 0 first.
    The gradient is the reversed running sum of the output's gradient.

    >>> import autograd_core as ag
    >>> ag.cumulative_sum(ag.tensor([1.0, 2.0, 3.0]), include_initial=True).tolist()
    [0.0, 1.0, 3.0, 6.0]
    """
    return _cumulative("cumulative_sum", x, axis, dtype, include_initial)


def cumulative_prod(
    x: TensorBase, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> TensorBase:
    """Running products along `axis` (optional for a 1-D `x`); `include_initial` puts a 1
    first. The gradient is right where elements are zero, to every order.

    >>> import autograd_core as ag
    >>> x = ag.tensor([2.0, 0.0, 3.0], requires_grad=True)
    >>> ag.cumulative_prod(x).sum().backward()
    >>> x.grad.tolist()
    [1.0, 8.0, 0.0]
    """
    return _cumulative("cumulative_prod", x, axis, dtype, include_initial)


def _cumsum_grad(ns: Any, g: Any, out: Any, x: Any, axis: int) -> Any:
    """The reversed running sum: d/dx_i of sum_j g_j sum_{k<=j} x_k is sum_{j>=i} g_j."""
    return ns.flip(ns.cumulative_sum(ns.flip(g, axis=axis), axis=axis), axis=axis)


def _cumprod_grad(ns: Any, g: Any, out: Any, x: Any, axis: int) -> Any:
    """d/dx_i of sum_j g_j prod_{k<=j} x_k = prod_{k<i} x_k * R_i, where
    R_i = sum_{j>=i} g_j prod_{i<k<=j} x_k, that is R_i = g_i + x_{i+1} R_{i+1}."""
    return _exclusive_prod(ns, x, axis) * _reverse_recurrence(ns, _shifted(ns, x, 1, axis), g, axis)


def _cumprod_jvp(ns: Any, tangents: list, out: Any, x: Any, axis: int) -> Any:
    """The transpose of `_cumprod_grad`: d out_i = sum_{k<=i} prod_{j<k} x_j * t_k *
    prod_{k<j<=i} x_j, that is D_i = prod_{j<i} x_j * t_i + x_i D_{i-1}, the same recurrence
    run from the other end."""
    drive = _exclusive_prod(ns, x, axis) * tangents[0]
    return ns.flip(_reverse_recurrence(ns, ns.flip(x, axis=axis), ns.flip(drive, axis=axis), axis), axis=axis)


def _reverse_recurrence(ns: Any, a: Any, b: Any, axis: int) -> Any:
    """R with R_i = b_i + a_i R_{i+1} along `axis` (R = 0 past the end), by doubling: after
    the step of size s, R_i = b_i + a_i R_{i+2s}, so log2(n) steps reach the end."""
    step = 1
    while step < b.shape[axis]:
        b = b + a * _shifted(ns, b, step, axis)
        a = a * _shifted(ns, a, step, axis)
        step *= 2
    return b


def _running(name: str, grad: Callable[..., Any], saves: str, jvp: Callable[..., Any] | str) -> Primitive:
    """cumulative_sum or cumulative_prod along one axis, in the input's dtype (torch widens
    integers otherwise)."""
    return Primitive(
        name,
        lambda ns, x, axis: getattr(ns, name)(x, axis=axis, dtype=x.dtype),
        vjps=(grad, None),
        saves=saves,
        jvp=jvp,
    )


# name: (the identity the initial slab holds, the primitive)
_CUMULATIVE = {
    "cumulative_sum": (0, _running("cumulative_sum", _cumsum_grad, saves="none", jvp="linear")),
    "cumulative_prod": (1, _running("cumulative_prod", _cumprod_grad, saves="inputs", jvp=_cumprod_jvp)),
}


def _cumulative(name: str, x: TensorBase, axis: int | None, dtype: Any, include_initial: bool) -> TensorBase:
    x, result = _accumulated(_tensor(name, x), dtype)
    out = _cumulative_of(name, x, axis, include_initial)
    return out if result is None else _cast(out, result)


def _cumulative_of(name: str, x: TensorBase, axis: int | None, include_initial: bool) -> TensorBase:
    if axis is None and x.ndim > 1:
        raise ValueError(f"{name}: axis is required for a tensor of {x.ndim} dimensions")
    axes = _axes(0 if axis is None else axis, x.ndim)
    if x.ndim == 0:  # as PyTorch: one element, and a 0-d result (unless include_initial)
        out = _cumulative_of(name, reshape(x, (1,)), 0, include_initial)
        return out if include_initial else reshape(out, ())
    identity, running = _CUMULATIVE[name]
    xp, (axis,) = x.backend.xp, axes
    out = running.bind(x, axis)
    if not include_initial:
        return out
    shape = tuple(1 if i == axis else n for i, n in enumerate(x.shape))
    initial = TensorBase._wrap(xp.full(shape, identity, dtype=x.array.dtype, device=x.backend.device), x.backend)
    return concat([initial, out], axis=axis)


# --- running extremes and log-sum-exp: prefix scans by doubling ------------------------------------
def _shifted_back(ns: Any, a: Any, step: int, axis: int, fill: Any) -> Any:
    """``a[i - step]`` along `axis`, `fill` before the start (0 < step < n)."""
    n = a.shape[axis]
    head = ns.full_like(basic_index(ns, a, _along(axis, slice(0, step))), fill)
    return ns.concat([head, basic_index(ns, a, _along(axis, slice(0, n - step)))], axis=axis)


def _scan(ns: Any, combine: Callable[[tuple, tuple], tuple], parts: tuple, fills: tuple, axis: int) -> tuple:
    """The inclusive prefix scan along `axis` of an associative ``combine(earlier, later)`` on
    tuples of arrays, by doubling: after the step of size s each position holds the
    combination of the 2s elements ending at it, so log2(n) steps reach the start; `fills`
    pad before the start and must be absorbed by `combine`."""
    step = 1
    while step < parts[0].shape[axis]:
        parts = combine(tuple(_shifted_back(ns, p, step, axis, f) for p, f in zip(parts, fills)), parts)
        step *= 2
    return parts


def _log_scan(ns: Any, x: Any, axis: int) -> Any:
    """``log(cumsum(exp(x)))`` along `axis`, without overflow: a scan of logaddexp."""
    return _scan(ns, lambda earlier, later: (ns.logaddexp(earlier[0], later[0]),), (x,), (-math.inf,), axis)[0]


def _steps_down(ns: Any, out: Any, axis: int) -> Any:
    """``exp(out_i - out_{i+1})`` along `axis` for a running log-sum-exp `out` (nondecreasing,
    so each is at most 1; past the end, where it is never used, capped at 1 too)."""
    step = out - _shifted(ns, out, 1, axis)
    return ns.exp(ns.where(step > 0, 0.0, step))


def _logcumsumexp_grad(ns: Any, g: Any, out: Any, x: Any, axis: int) -> Any:
    """d/dx_i of sum_j g_j out_j is exp(x_i - out_i) R_i with R_i = sum_{j>=i} g_j
    exp(out_i - out_j), that is R_i = g_i + exp(out_i - out_{i+1}) R_{i+1}: linear in g and
    every factor at most 1, so nothing overflows (nan where out_i is -inf, as PyTorch)."""
    return ns.exp(x - out) * _reverse_recurrence(ns, _steps_down(ns, out, axis), g, axis)


def _logcumsumexp_jvp(ns: Any, tangents: list, out: Any, x: Any, axis: int) -> Any:
    """d out_i = sum_{k<=i} exp(x_k - out_i) t_k, that is D_i = exp(x_i - out_i) t_i +
    exp(out_{i-1} - out_i) D_{i-1}: the gradient's recurrence run from the other end. Where
    out_i is -inf (every x_k so far is -inf) the tangent is 0, as PyTorch's, not -inf - -inf."""
    empty = ns.flip(out == -math.inf, axis=axis)
    drive = ns.where(empty, 0.0, ns.flip(ns.exp(x - out) * tangents[0], axis=axis))
    decay = ns.where(empty, 0.0, _shifted(ns, ns.flip(_steps_down(ns, out, axis), axis=axis), 1, axis))
    return ns.flip(_reverse_recurrence(ns, decay, drive, axis), axis=axis)


_LOGCUMSUMEXP = Primitive("logcumsumexp", _log_scan, vjps=(_logcumsumexp_grad, None), jvp=_logcumsumexp_jvp)


def logcumsumexp(x: TensorBase, /, *, axis: int) -> TensorBase:
    """``log(cumulative_sum(exp(x)))`` along `axis`, computed without overflow or underflow.

    >>> import autograd_core as ag
    >>> [round(v, 2) for v in logcumsumexp(ag.tensor([1000.0, 1000.0, -1000.0]), axis=0).tolist()]
    [1000.0, 1000.69, 1000.69]
    """
    x = _tensor("logcumsumexp", x)
    if not x.dtype.is_floating_point:
        raise TypeError(f"logcumsumexp needs a floating-point tensor, not {x.dtype}; cast it first")
    if x.ndim == 0:
        return reshape(logcumsumexp(reshape(x, (1,)), axis=0), ())
    (axis,) = _axes(axis, x.ndim)
    return _LOGCUMSUMEXP.bind(x, axis)


def segmented_cumulative_prod(x: TensorBase, starts: Any) -> TensorBase:
    """Running products along the 1-D `x` that start again wherever the raw boolean `starts`
    is True: a scan of multiplications, differentiable to every order, zeros included.

    >>> import autograd_core as ag
    >>> starts = ag.asarray([True, False, True, False]).array
    >>> segmented_cumulative_prod(ag.tensor([2.0, 3.0, 0.0, 5.0]), starts).tolist()
    [2.0, 6.0, 0.0, 0.0]
    """
    ns = tensor_namespace()
    flags = TensorBase._wrap(starts, x.backend)

    def combine(earlier: tuple, later: tuple) -> tuple:
        (product, started), (value, starts_here) = earlier, later
        return ns.where(starts_here, value, product * value), started | starts_here

    return _scan(ns, combine, (x, flags), (1.0, True), 0)[0]


def running_extreme_indices(x: TensorBase, axis: int, largest: bool) -> TensorBase:
    """Where the running maximum (or minimum) along `axis` sits at each position, outside the
    graph, by PyTorch's rule for cummax/cummin: the later of tied extremes; once a NaN is met
    it stays the extreme, the first NaN.

    >>> import autograd_core as ag
    >>> running_extreme_indices(ag.tensor([1.0, 3.0, 3.0, 2.0]), 0, largest=True).tolist()
    [0, 1, 2, 2]
    """
    x = _tensor("cummax" if largest else "cummin", x)
    backend, ns = x.backend, raw_namespace(x.backend)
    data = ns.reshape(x.array, (1,)) if x.ndim == 0 else x.array
    if x.dtype == "bool":
        data = ns.astype(data, backend.dtype("int8"))
    (axis,) = _axes(axis, data.ndim)
    along = tuple(-1 if d == axis else 1 for d in range(data.ndim))
    int64 = backend.dtype("int64")
    positions = ns.arange(data.shape[axis], dtype=int64, device=backend.device)
    positions = ns.broadcast_to(ns.reshape(positions, along), data.shape)

    def combine(earlier: tuple, later: tuple) -> tuple:
        (old, old_at), (new, new_at) = earlier, later
        ahead = new >= old if largest else new <= old
        # old_at < 0: the padding before the start, which any element replaces
        take = (old_at < 0) | (~ns.isnan(old) & (ns.isnan(new) | ahead))
        return ns.where(take, new, old), ns.where(take, new_at, old_at)

    _, indices = _scan(ns, combine, (data, positions), (0, -1), axis)
    return TensorBase._wrap(ns.reshape(indices, x.shape), backend)


# --- any, all and diff ---------------------------------------------------------------------------
def _logical_reduction(name: str, verb: str) -> Callable[..., TensorBase]:
    def op(x: TensorBase, /, *, axis: Axis = None, keepdims: bool = False) -> TensorBase:
        x = _tensor(name, x)
        data = getattr(x.backend.xp, name)(x.array, axis=_axes(axis, x.ndim), keepdims=keepdims)
        return TensorBase._wrap(data, x.backend)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (
        f"Whether {verb} element over `axis` (all axes when None) is nonzero (NaN counts): a "
        "boolean tensor, outside the graph."
    )
    return op


any = _logical_reduction("any", "any")  # noqa: A001
all = _logical_reduction("all", "every")  # noqa: A001


def diff(
    x: TensorBase, /, *, axis: int = -1, n: int = 1, prepend: TensorBase | None = None, append: TensorBase | None = None
) -> TensorBase:
    """The `n`-th forward difference along `axis`, ``out[i] = x[i+1] - x[i]`` applied `n`
    times, after joining `prepend` and `append` to `x` (dtypes promoted); boolean `x`
    differs by ``!=``, as in PyTorch. Differentiable in `x`, `prepend` and `append`.

    >>> import autograd_core as ag
    >>> ag.diff(ag.tensor([1.0, 4.0, 9.0, 16.0]), n=2).tolist()
    [2.0, 2.0]
    """
    x = _tensor("diff", x)
    if x.ndim == 0:
        raise ValueError("diff needs a tensor of at least 1 dimension")
    if n < 0:
        raise ValueError(f"diff: n must be non-negative, got {n}")
    (axis,) = _axes(axis, x.ndim)
    parts = [_tensor("diff", p) for p in (prepend, x, append) if p is not None]
    x = concat(parts, axis=axis) if len(parts) > 1 else x
    step = not_equal if x.dtype == "bool" else subtract
    for _ in range(min(n, x.shape[axis])):  # past the length, the axis is already empty
        x = step(_basic_index(x, _along(axis, slice(1, None))), _basic_index(x, _along(axis, slice(None, -1))))
    return x


# --- PyTorch's statistics beyond the standard (`autograd_core.torch`'s rows; not in `__all__`) ----
class MinMax(NamedTuple):
    min: TensorBase
    max: TensorBase


def _dims(x: TensorBase, dim: Axis) -> Axis:
    """PyTorch's `dim` for `x`: a 0-d tensor takes dim 0 or -1 as all of it (None)."""
    if x.ndim == 0 and dim is not None:
        for d in (dim,) if isinstance(dim, int) else dim:
            if d not in (0, -1):
                raise IndexError(f"dim {d} is out of range for a 0-d tensor (0 or -1)")
        return None
    return dim


def _zero_index(x: TensorBase) -> TensorBase:
    """The index 0 as a 0-d int64 tensor: where a 0-d tensor's one element sits."""
    backend = x.backend
    return TensorBase._wrap(backend.xp.zeros((), dtype=backend.dtype("int64"), device=backend.device), backend)


def aminmax(x: TensorBase, /, *, dim: int | None = None, keepdim: bool = False) -> MinMax:
    """The smallest and the largest element over `dim` (all when None), a namedtuple ``(min, max)``.

    >>> import autograd_core as ag
    >>> [t.tolist() for t in aminmax(ag.tensor([[1.0, 5.0], [3.0, 2.0]]), dim=1)]
    [[1.0, 2.0], [5.0, 3.0]]
    """
    x = _tensor("aminmax", x)
    axis = _dims(x, dim)
    return MinMax(_ops_min(x, axis=axis, keepdims=keepdim), _ops_max(x, axis=axis, keepdims=keepdim))


def _moments(name: str, spread: Callable[..., TensorBase]) -> Callable[..., tuple[TensorBase, TensorBase]]:
    def op(
        x: TensorBase,
        dim: Any = None,
        unbiased: bool | None = None,
        keepdim: bool = False,
        *,
        correction: float | None = None,
    ) -> tuple[TensorBase, TensorBase]:
        x = _tensor(name, x)
        axis, correction, keepdims = spread_arguments(
            name, dim, unbiased, False, correction=correction, ddof=None, dim=None, keepdim=keepdim, default=1
        )
        return spread(x, axis=axis, correction=correction, keepdims=keepdims), _ops_mean(
            x, axis=axis, keepdims=keepdims
        )

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (
        f"The {name.split('_')[0]} (by default the unbiased one) and the mean over `dim` as one tuple, "
        f"PyTorch's ``{name}(input, dim=None, unbiased=True, keepdim=False, *, correction=1)``."
    )
    return op


var_mean = _moments("var_mean", _variance)
std_mean = _moments("std_mean", lambda x, **k: _std_root(_variance(x, **k)))


def cov(
    x: TensorBase, /, *, correction: int = 1, fweights: TensorBase | None = None, aweights: TensorBase | None = None
) -> TensorBase:
    """The covariance matrix of the variables in the rows of `x` (observations in the columns),
    with integer frequency weights and float observation weights, as PyTorch's ``cov``.

    >>> import autograd_core as ag
    >>> cov(ag.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    x = _tensor("cov", x)
    if x.ndim > 2:
        raise ValueError(f"cov: x must have at most 2 dimensions (variables by observations), got {x.ndim}")
    x = reshape(x, (1, -1)) if x.ndim < 2 else x
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = _cast(x, "float32")
    weights = [_tensor("cov", w) for w in (fweights, aweights) if w is not None]  # each in its own dtype, as PyTorch
    w = None if not weights else weights[0] if len(weights) == 1 else weights[0] * weights[1]
    if w is None:
        average, total = _ops_mean(x, axis=1, keepdims=True), x.shape[1]
        scale = builtins.max(total - correction, 0)
    else:
        total = _ops_sum(w)
        average = _ops_sum(x * w, axis=1, keepdims=True) / total
        if correction == 0:
            scale = total
        elif aweights is None:
            scale = total - correction
        else:
            scale = total - correction * _ops_sum(w * weights[-1]) / total
        scale = _clip(scale, min=0)
    centred = x - average
    weighted = centred if w is None else centred * w
    product = _matmul(weighted, _matrix_transpose(_conj(centred) if x.dtype.is_complex else centred))
    return squeeze_all(product / scale)


def squeeze_all(x: TensorBase) -> TensorBase:
    """`x` without its axes of length 1."""
    return reshape(x, tuple(n for n in x.shape if n != 1))


def corrcoef(x: TensorBase, /) -> TensorBase:
    """Pearson's correlation coefficients of the variables in the rows of `x`, clipped to [-1, 1].

    >>> import autograd_core as ag
    >>> corrcoef(ag.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(x)
    if c.ndim == 0:
        return c / c
    n = c.shape[0]
    diagonal = _ops_sum(c * _eye_like(c, n), axis=1)
    deviation = _sqrt(diagonal)
    c = c / reshape(deviation, (n, 1)) / reshape(deviation, (1, n))
    return c if c.dtype.is_complex else _clip(c, min=-1.0, max=1.0)


def _eye_like(x: TensorBase, n: int) -> TensorBase:
    backend = x.backend
    return TensorBase._wrap(backend.xp.eye(n, dtype=x.array.dtype, device=backend.device), backend)


# --- integrals and derivatives of sampled functions ---------------------------------------------------
def _spacing_along(y: TensorBase, x: Any, dx: Any, axis: int) -> Any:
    """The widths between neighbouring samples along `axis`: of the coordinates `x` (1-D along
    `axis`, or broadcasting with `y`), or the constant `dx` (1 when both are None)."""
    if x is None:
        return 1.0 if dx is None else dx
    x = _tensor("trapezoid", x)
    if x.ndim == 1:
        widths = diff(x)
        return reshape(widths, tuple(-1 if i == axis else 1 for i in range(y.ndim)))
    return diff(x, axis=axis - y.ndim)


def _neighbour_sums(y: TensorBase, axis: int) -> TensorBase:
    """``y[i] + y[i + 1]`` along `axis`."""
    return _basic_index(y, _along(axis, slice(1, None))) + _basic_index(y, _along(axis, slice(None, -1)))


def trapezoid(y: TensorBase, x: Any = None, *, dx: Any = None, dim: int = -1) -> TensorBase:
    """The integral of the samples `y` along `dim` by the trapezoidal rule, at the coordinates
    `x` or the constant spacing `dx` (PyTorch's ``trapezoid`` and ``trapz``).

    >>> import autograd_core as ag
    >>> trapezoid(ag.tensor([1.0, 2.0, 3.0]), dx=2.0).item()
    8.0
    """
    y = _tensor("trapezoid", y)
    (axis,) = _axes(dim, y.ndim)
    if y.shape[axis] == 0:
        return _ops_sum(y, axis=axis)
    return _ops_sum(_spacing_along(y, x, dx, axis) * _neighbour_sums(y, axis), axis=axis) / 2


def cumulative_trapezoid(y: TensorBase, x: Any = None, *, dx: Any = None, dim: int = -1) -> TensorBase:
    """The running trapezoidal integral of `y` along `dim`, one element shorter than `y` there.

    >>> import autograd_core as ag
    >>> cumulative_trapezoid(ag.tensor([1.0, 2.0, 3.0])).tolist()
    [1.5, 4.0]
    """
    y = _tensor("cumulative_trapezoid", y)
    (axis,) = _axes(dim, y.ndim)
    return cumulative_sum(_spacing_along(y, x, dx, axis) * _neighbour_sums(y, axis) / 2, axis=axis)


def gradient(input: TensorBase, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1) -> tuple[TensorBase, ...]:  # noqa: A002 - PyTorch's name
    """The derivative of the samples `input` along each of `dim` (all axes when None) by central
    differences inside and one-sided ones of `edge_order` (1 or 2) at the ends, the samples
    spaced by `spacing` (a number, one per axis, or one tensor of coordinates per axis), as
    PyTorch's (and numpy's) ``gradient``.

    >>> import autograd_core as ag
    >>> gradient(ag.tensor([1.0, 4.0, 9.0, 16.0]))[0].tolist()
    [3.0, 4.0, 6.0, 7.0]
    """
    f = _tensor("gradient", input)
    axes = tuple(range(f.ndim)) if dim is None else _axes(dim, f.ndim)
    if edge_order not in (1, 2):
        raise ValueError(f"gradient: edge_order must be 1 or 2, got {edge_order}")
    spacing = 1 if spacing is None else spacing
    spacings = list(spacing) if isinstance(spacing, (list, tuple)) else [spacing] * len(axes)
    if len(spacings) != len(axes):
        raise ValueError(f"gradient: {len(spacings)} spacings for {len(axes)} dimensions")
    for axis in axes:
        if f.shape[axis] < edge_order + 1:
            raise ValueError(f"gradient: dimension {axis} needs at least {edge_order + 1} samples")
    return tuple(_derivative(f, axis, h, edge_order) for axis, h in zip(axes, spacings))


def _derivative(f: TensorBase, axis: int, h: Any, edge_order: int) -> TensorBase:
    """`gradient` along one axis: the widths `dx` between samples are the same number or
    those of the coordinates `h`, and each estimate weighs its three samples by them."""

    def part(start: int | None, stop: int | None) -> TensorBase:
        return _basic_index(f, _along(axis, slice(start, stop)))

    if isinstance(h, TensorBase):
        widths = diff(h)
        dx = reshape(widths, tuple(-1 if i == axis else 1 for i in range(f.ndim)))

        def width(start: int | None, stop: int | None) -> TensorBase:
            return _basic_index(dx, _along(axis, slice(start, stop)))
    else:

        def width(start: int | None, stop: int | None) -> Any:
            return h

    d1, d2 = width(None, -1), width(1, None)
    inside = (-d2 / (d1 * (d1 + d2))) * part(None, -2) + ((d2 - d1) / (d1 * d2)) * part(1, -1)
    inside = inside + (d1 / (d2 * (d1 + d2))) * part(2, None)
    if edge_order == 1:
        first = (part(1, 2) - part(0, 1)) / width(0, 1)
        last = (part(-1, None) - part(-2, -1)) / width(-1, None)
    else:
        a, b = width(0, 1), width(1, 2)
        first = (-(2 * a + b) / (a * (a + b))) * part(0, 1) + ((a + b) / (a * b)) * part(1, 2)
        first = first - (a / (b * (a + b))) * part(2, 3)
        a, b = width(-2, -1), width(-1, None)
        last = (b / (a * (a + b))) * part(-3, -2) - ((a + b) / (a * b)) * part(-2, -1)
        last = last + ((2 * b + a) / (b * (a + b))) * part(-1, None)
    return concat([first, inside, last], axis=axis)
