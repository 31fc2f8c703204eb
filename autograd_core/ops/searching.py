"""The standard's searching, sorting and set functions.

Their integer results (indices, counts) are int64 tensors outside the graph, as are the
values of the set functions: torch.unique has no gradient either. `sort` is differentiable:
it gathers `x` by `argsort` with `take_along_axis`, so its gradient is scattered back through
the permutation (ties go where the stable order put them, as in PyTorch).
"""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple

import backends
from autograd_core.graph.dtypes import as_dtype
from autograd_core.graph.tensor_base import TensorBase
from autograd_core.ops.core import (
    Axis,
    _as_operand,
    _axes,
    _cast,
    _index_array,
    _operands,
    _tensor,
    clone,
    reshape,
    squeeze as _squeeze,
)
from autograd_core.ops.manipulation import _axis, moveaxis, take_along_axis
from autograd_core.ops.statistics import _dims, _zero_index

__all__ = [
    "argmax",
    "argmin",
    "argsort",
    "count_nonzero",
    "nonzero",
    "searchsorted",
    "sort",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]


def _indices(backend: backends.Backend, data: Any) -> TensorBase:
    """An integer result in the standard's default index dtype (int64), outside the graph."""
    int64 = backend.dtype("int64")
    return TensorBase._wrap(data if data.dtype == int64 else backend.xp.astype(data, int64), backend)


# --- searching ------------------------------------------------------------------------------
def _index_reduction(name: str, doc: str) -> Callable[..., TensorBase]:
    def op(x: TensorBase, /, *, axis: Axis = None, keepdims: bool = False) -> TensorBase:
        x = _tensor(name, x)
        return _indices(x.backend, getattr(x.backend.xp, name)(x.array, axis=axis, keepdims=keepdims))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


argmax = _index_reduction(
    "argmax",
    """The index of the first largest element along `axis` (of the
    flattened tensor when None), an int64 tensor outside the graph.

    >>> import autograd_core as ag
    >>> ag.argmax(ag.asarray([[1, 5, 5], [7, 0, 7]]), axis=1).tolist()
    [1, 0]
    """,
)
argmin = _index_reduction(
    "argmin",
    """The index of the first smallest element along `axis` (of
    the flattened tensor when None), an int64 tensor outside the graph.""",
)
count_nonzero = _index_reduction(
    "count_nonzero",
    """The number of non-zero (True) elements over
    `axis` (an int, a tuple, or None for all), an int64 tensor outside the graph.

    >>> import autograd_core as ag
    >>> ag.count_nonzero(ag.asarray([[0.0, 1.5], [2.0, 3.0]]), axis=0).tolist()
    [1, 2]
    """,
)


def nonzero(x: TensorBase, /) -> tuple[TensorBase, ...]:
    """The indices of the non-zero elements, one int64 tensor per axis, in row-major order.

    >>> import autograd_core as ag
    >>> [i.tolist() for i in ag.nonzero(ag.asarray([[0, 3], [4, 0]]))]
    [[0, 1], [1, 0]]
    """
    x = _tensor("nonzero", x)
    if x.ndim == 0:
        raise ValueError("nonzero of a 0-d tensor; reshape it to (1,) first")
    return tuple(_indices(x.backend, i) for i in x.backend.xp.nonzero(x.array))


def searchsorted(
    x1: TensorBase, x2: Any, /, *, side: Literal["left", "right"] = "left", sorter: Any = None
) -> TensorBase:
    """Where each element of `x2` would be inserted into the ascending 1-D `x1` (sorted by the
    indices `sorter`, if given) to keep it sorted: before equal elements for ``side="left"``,
    after them for ``"right"``. An int64 tensor of `x2`'s shape, outside the graph.

    >>> import autograd_core as ag
    >>> ag.searchsorted(ag.asarray([1.0, 2.0, 2.0, 3.0]), ag.asarray([2.0, 5.0]), side="right").tolist()
    [3, 4]
    """
    a, b, backend = _operands("searchsorted", x1, x2)
    if not isinstance(a, TensorBase) or a.ndim != 1:
        raise ValueError("searchsorted: x1 must be a 1-D tensor")
    xp, values = backend.xp, _as_operand(b, a).array
    order = None if sorter is None else _index_array(sorter, backend)
    # searched as 1-D and reshaped back: array_api_strict refuses a 0-d x2
    found = xp.searchsorted(a.array, xp.reshape(values, (-1,)), side=side, sorter=order)
    return _indices(backend, xp.reshape(found, tuple(values.shape)))


# --- sorting --------------------------------------------------------------------------------
def _one_element_0d(sorting: Callable[..., TensorBase]) -> Callable[..., TensorBase]:
    """A 0-d tensor sorted as one element (as PyTorch does; axis 0 or -1)."""

    @functools.wraps(sorting)
    def wrapper(x: TensorBase, /, **options: Any) -> TensorBase:
        x = _tensor(sorting.__name__, x)
        return reshape(sorting(reshape(x, (1,)), **options), ()) if x.ndim == 0 else sorting(x, **options)

    return wrapper


@_one_element_0d
def argsort(x: TensorBase, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> TensorBase:
    """The indices that sort `x` along `axis` (an int64 tensor outside the graph); with
    `stable`, equal elements keep their order, in descending sorts too.

    >>> import autograd_core as ag
    >>> ag.argsort(ag.asarray([3, 1, 3, 2]), descending=True).tolist()
    [0, 2, 3, 1]
    """
    axis, xp = _axis(axis, x.ndim), x.backend.xp
    if not descending:
        return _indices(x.backend, xp.argsort(x.array, axis=axis, stable=stable))
    # In the standard's calls alone (numpy's argsort has no `descending`): sort the reversed
    # values ascending, reverse that order, and map its positions back to unreversed ones.
    ascending = xp.argsort(xp.flip(x.array, axis=axis), axis=axis, stable=stable)
    return _indices(x.backend, (x.shape[axis] - 1) - xp.flip(ascending, axis=axis))


@_one_element_0d
def sort(x: TensorBase, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> TensorBase:
    """`x` sorted along `axis`; differentiable: the gradient goes back to the element that
    moved to each position (ties: by the stable order).

    >>> import autograd_core as ag
    >>> x = ag.tensor([2.0, 3.0, 1.0], requires_grad=True)
    >>> y = ag.sort(x, descending=True)
    >>> y.tolist()
    [3.0, 2.0, 1.0]
    >>> (y * ag.asarray([1.0, 10.0, 100.0])).sum().backward()
    >>> x.grad.tolist()
    [10.0, 1.0, 100.0]
    """
    return take_along_axis(x, argsort(x, axis=axis, descending=descending, stable=stable), axis=axis)


# --- sets -----------------------------------------------------------------------------------
class UniqueAllResult(NamedTuple):
    values: TensorBase
    indices: TensorBase
    inverse_indices: TensorBase
    counts: TensorBase


class UniqueCountsResult(NamedTuple):
    values: TensorBase
    counts: TensorBase


class UniqueInverseResult(NamedTuple):
    values: TensorBase
    inverse_indices: TensorBase


def _ascending(backend: backends.Backend, values: Any) -> Any:
    """The positions that sort the 1-D `values` ascending (NaNs last): the standard leaves the
    order of the set functions free and numpy's hash-based ones return another, but callers
    (scikit-learn's label code among them) rely on sorted values, as every other library gives.
    Booleans sort as 0 and 1, complex numbers by real part, then imaginary part (as numpy's)."""
    xp, dtype = backend.xp, as_dtype(backend.dtype_name(values.dtype))
    if dtype == "bool":
        return xp.argsort(xp.astype(values, xp.uint8), stable=True)
    if dtype.is_complex:  # two stable sorts: the second, by real part, keeps the first's order in ties
        by_imag = xp.argsort(xp.imag(values), stable=True)
        return xp.take(by_imag, xp.argsort(xp.take(xp.real(values), by_imag), stable=True))
    return xp.argsort(values, stable=True)


def _sorted_unique_inverse(x: TensorBase) -> tuple[Any, Any]:
    """The backend's `unique_inverse` of `x` with the values sorted and the inverse following them."""
    xp = x.backend.xp
    values, inverse = xp.unique_inverse(x.array)
    order = _ascending(x.backend, values)
    rank = xp.argsort(order)  # where each value lands once sorted
    sorted_inverse = xp.reshape(xp.take(rank, xp.reshape(inverse, (-1,))), tuple(inverse.shape))
    return xp.take(values, order), sorted_inverse


def unique_values(x: TensorBase, /) -> TensorBase:
    """The distinct elements of `x` (flattened), sorted ascending, NaNs each distinct and last.
    Outside the graph, as torch.unique has no gradient.

    >>> import autograd_core as ag
    >>> ag.unique_values(ag.asarray([[3, 1], [3, -2]])).tolist()
    [-2, 1, 3]
    """
    x = _tensor("unique_values", x)
    values = x.backend.xp.unique_values(x.array)
    return TensorBase._wrap(x.backend.xp.take(values, _ascending(x.backend, values)), x.backend)


def unique_counts(x: TensorBase, /) -> UniqueCountsResult:
    """`unique_values` and how many times each occurs: a namedtuple ``(values, counts)``.

    >>> import autograd_core as ag
    >>> values, counts = ag.unique_counts(ag.asarray([7, -1, 7]))
    >>> values.tolist(), counts.tolist()
    ([-1, 7], [1, 2])
    """
    x = _tensor("unique_counts", x)
    xp = x.backend.xp
    values, counts = xp.unique_counts(x.array)
    order = _ascending(x.backend, values)
    return UniqueCountsResult(
        TensorBase._wrap(xp.take(values, order), x.backend), _indices(x.backend, xp.take(counts, order))
    )


def unique_inverse(x: TensorBase, /) -> UniqueInverseResult:
    """`unique_values` and, for each element of `x`, the index of its value among them: a
    namedtuple ``(values, inverse_indices)``, ``inverse_indices`` of `x`'s shape.

    >>> import autograd_core as ag
    >>> values, inverse = ag.unique_inverse(ag.asarray([7, -1, 7]))
    >>> values.tolist(), inverse.tolist()
    ([-1, 7], [1, 0, 1])
    """
    x = _tensor("unique_inverse", x)
    values, inverse = _sorted_unique_inverse(x)
    return UniqueInverseResult(TensorBase._wrap(values, x.backend), _indices(x.backend, inverse))


def unique_all(x: TensorBase, /) -> UniqueAllResult:
    """A namedtuple ``(values, indices, inverse_indices, counts)``: the distinct values, the
    index of each one's first occurrence in the flattened `x`, the index of each element's
    value, and the counts.

    >>> import autograd_core as ag
    >>> values, indices, inverse, counts = ag.unique_all(ag.asarray([5, 2, 5, 5]))
    >>> values.tolist(), indices.tolist(), inverse.tolist(), counts.tolist()
    ([2, 5], [1, 0], [1, 0, 1, 1], [1, 3])
    """
    x = _tensor("unique_all", x)
    backend, xp = x.backend, x.backend.xp
    # From the sorted unique_inverse with the standard's calls (array_api_compat's torch has
    # no unique_all): the positions grouped by value, in order, give each group's first
    # occurrence and, from its bounds, its count.
    values, inverse = _sorted_unique_inverse(x)
    flat = xp.reshape(inverse, (-1,))
    order = xp.argsort(flat, stable=True)
    grouped = xp.take(flat, order)
    groups = xp.arange(values.shape[0], dtype=flat.dtype, device=backend.device)
    starts = xp.searchsorted(grouped, groups)
    counts = xp.searchsorted(grouped, groups, side="right") - starts
    return UniqueAllResult(
        TensorBase._wrap(values, backend),
        _indices(backend, xp.take(order, starts)),
        _indices(backend, inverse),
        _indices(backend, counts),
    )


# --- PyTorch's searching and counting beyond the standard (`autograd_core.torch`'s rows; not in
# `__all__`): outside the graph, by comparisons that take any number of leading axes ------------
def _insertion_points(xp: Any, sequence: Any, values: Any, right: bool) -> Any:
    """Where each of `values` goes in the ascending last axis of `sequence` (a 1-D `sequence`
    serves every value, else its leading axes pair with those of `values`): before the first
    element not below it, or with `right` not above it, by PyTorch's binary search, whose
    comparisons put a NaN value last and stop at NaNs in `sequence` as it does."""
    n, int64 = sequence.shape[-1], xp.int64
    if n == 0:
        return xp.zeros(values.shape, dtype=int64)
    rows = xp.reshape(sequence, (-1, n))
    flat = xp.reshape(values, (rows.shape[0], -1)) if sequence.ndim > 1 else xp.reshape(values, (1, -1))
    base = xp.reshape(xp.arange(rows.shape[0], dtype=int64) * n, (-1, 1)) if sequence.ndim > 1 else 0
    elements = xp.reshape(rows, (-1,))
    low = xp.zeros(flat.shape, dtype=int64)
    high = xp.full(flat.shape, n, dtype=int64)
    for _ in builtins.range(n.bit_length()):  # each step halves every interval [low, high)
        middle = (low + high) // 2
        at = xp.take(elements, xp.reshape(base + xp.clip(middle, 0, n - 1), (-1,)))
        at = xp.reshape(at, flat.shape)
        later = ~(at > flat) if right else ~(at >= flat)
        moving = low < high
        low = xp.where(moving & later, middle + 1, low)
        high = xp.where(moving & ~later, middle, high)
    return xp.reshape(low, values.shape)


def sorted_positions(
    sorted_sequence: TensorBase,
    values: Any,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Any = None,
) -> TensorBase:
    """Where each of `values` would be inserted into the ascending last axis of `sorted_sequence`
    (sorted by the indices `sorter`, if given) to keep it sorted, PyTorch's ``searchsorted``:
    after equal elements with ``right=True`` or ``side="right"``; int64, or int32 with `out_int32`.

    >>> import autograd_core as ag
    >>> sorted_positions(ag.asarray([[1, 3], [2, 4]]), ag.asarray([[3], [3]]), right=True).tolist()
    [[2], [1]]
    """
    seq, values, backend = _operands("searchsorted", sorted_sequence, values)
    values = _as_operand(values, seq)
    if sorter is not None:
        seq = take_along_axis(seq, _tensor("searchsorted", sorter), axis=-1)
    if seq.ndim > 1 and seq.shape[:-1] != values.shape[:-1]:
        raise ValueError(
            f"searchsorted: the leading dimensions of sorted_sequence {seq.shape} and values {values.shape} differ"
        )
    xp = backend.xp
    found = _insertion_points(xp, seq.array, values.array, right or side == "right")
    return TensorBase._wrap(xp.astype(found, backend.dtype("int32" if out_int32 else "int64")), backend)


def bucketize(input: Any, boundaries: TensorBase, *, out_int32: bool = False, right: bool = False) -> TensorBase:  # noqa: A002
    """The bucket of each element of `input` among the ascending 1-D `boundaries`:
    ``boundaries[i - 1] < x <= boundaries[i]`` (``<=`` and ``<`` with `right`).

    >>> import autograd_core as ag
    >>> bucketize(ag.asarray([0.5, 2.0, 9.0]), ag.asarray([1.0, 2.0, 3.0])).tolist()
    [0, 1, 3]
    """
    return sorted_positions(boundaries, input, out_int32=out_int32, right=right)


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False) -> TensorBase:
    """Whether each of `elements` equals one of `test_elements`, a boolean tensor of `elements`'
    shape (the opposite with `invert`).

    >>> import autograd_core as ag
    >>> isin(ag.asarray([1, 2, 3]), ag.asarray([3, 1])).tolist()
    [True, False, True]
    """
    a, b, backend = _operands("isin", elements, test_elements)
    a, b = (_as_operand(v, b if v is a else a) for v in (a, b))
    xp = backend.xp
    found = xp.any(a.array[..., None] == xp.reshape(b.array, (-1,)), axis=-1)
    return TensorBase._wrap(~found if invert else found, backend)


# --- histograms -------------------------------------------------------------------------------------------
class Histogram(NamedTuple):
    hist: TensorBase
    bin_edges: Any


def _counts(backend: backends.Backend, cells: Any, inside: Any, weight: Any, size: int, dtype: Any) -> Any:
    """How many of the flat `cells` fall in each of `size` cells (the sum of their `weight`
    where given), those not `inside` left out, as a 1-D array of `dtype`."""
    xp = backend.xp
    hits = (cells[:, None] == xp.arange(size, dtype=cells.dtype, device=backend.device)[None, :]) & inside[:, None]
    each = xp.ones(cells.shape, dtype=dtype, device=backend.device) if weight is None else xp.astype(weight, dtype)
    return xp.sum(xp.where(hits, each[:, None], xp.zeros_like(each)[:, None]), axis=0)


def _outer_edges(xp: Any, column: Any, span: Any, widen: float) -> tuple[float, float]:
    """The outer bin edges: `span`, or the range of `column`, moved apart by `widen` if equal."""
    if span is not None:
        low, high = (float(v) for v in span)
    elif column.shape[0]:
        low, high = float(xp.min(column)), float(xp.max(column))
    else:
        low = high = 0.0
    return (low - widen, high + widen) if low == high else (low, high)


def _even_edges(xp: Any, low: float, high: float, count: int, dtype: Any, device: Any) -> Any:
    """`count` evenly spaced edges from `low` to `high`, both exact, by PyTorch's ``linspace``
    rule (the first half counted from `low`, the second back from `high`)."""
    i = xp.arange(count, dtype=dtype, device=device)
    step = (high - low) / builtins.max(count - 1, 1)
    return xp.where(i < count // 2, low + step * i, high - step * (count - 1 - i))


def _bin_of(xp: Any, column: Any, edges: Any) -> tuple[Any, Any]:
    """The bin of each value among ascending `edges` (the last bin closed on the right) and
    whether it lies within them."""
    bins = edges.shape[0] - 1
    cell = xp.clip(_insertion_points(xp, edges, column, right=True) - 1, 0, bins - 1)
    return cell, (column >= edges[0]) & (column <= edges[-1])


def histogramdd(
    input: TensorBase,  # noqa: A002
    bins: Any = 10,
    *,
    range: Sequence[float] | None = None,  # noqa: A002
    weight: TensorBase | None = None,
    density: bool = False,
) -> Histogram:
    """The histogram of the points in the rows of `input` (its last axis the coordinates):
    `bins` a count for every axis, one count per axis, or one tensor of ascending edges per
    axis; `range` the outer edges, ``[low0, high0, low1, ...]`` (by default each coordinate's
    range); `weight` each point's weight; with `density`, normalised to integrate to 1.
    ``(hist, bin_edges)``, outside the graph, as PyTorch's ``histogramdd``.

    >>> import autograd_core as ag
    >>> hist, edges = histogramdd(ag.tensor([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]), bins=2)
    >>> hist.tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    x = _tensor("histogramdd", input)
    backend, xp = x.backend, x.backend.xp
    points = xp.reshape(x.array, (-1, x.shape[-1]))
    dims = points.shape[1]
    bins = [bins] * dims if isinstance(bins, int) else list(bins)
    spans = [None] * dims if range is None else [range[2 * d : 2 * d + 2] for d in builtins.range(dims)]
    edges = []
    for d, b in enumerate(bins):
        if isinstance(b, TensorBase):
            edges.append(xp.astype(b.array, points.dtype))
        else:
            low, high = _outer_edges(xp, points[:, d], spans[d], 0.5)
            edges.append(_even_edges(xp, low, high, b + 1, points.dtype, backend.device))
    shape = tuple(e.shape[0] - 1 for e in edges)
    cells = xp.zeros(points.shape[:1], dtype=xp.int64, device=backend.device)
    inside = xp.ones(points.shape[:1], dtype=xp.bool, device=backend.device)
    for d, e in enumerate(edges):
        cell, within = _bin_of(xp, points[:, d], e)
        cells, inside = cells * shape[d] + cell, inside & within
    w = None if weight is None else xp.reshape(_tensor("histogramdd", weight).array, (-1,))
    hist = xp.reshape(_counts(backend, cells, inside, w, math.prod(shape), points.dtype), shape)
    if density:
        hist = hist / xp.sum(hist)
        for d, e in enumerate(edges):
            hist = hist / xp.reshape(e[1:] - e[:-1], tuple(-1 if i == d else 1 for i in builtins.range(dims)))
    return Histogram(TensorBase._wrap(hist, backend), tuple(TensorBase._wrap(e, backend) for e in edges))


def histogram(
    input: TensorBase,  # noqa: A002
    bins: Any = 100,
    *,
    range: Sequence[float] | None = None,  # noqa: A002
    weight: TensorBase | None = None,
    density: bool = False,
) -> Histogram:
    """The histogram of all the elements of `input`: `bins` a count of equal bins over `range`
    (by default the elements' range) or a 1-D tensor of ascending edges. ``(hist, bin_edges)``,
    outside the graph, as PyTorch's ``histogram``.

    >>> import autograd_core as ag
    >>> histogram(ag.tensor([1.0, 2.0, 1.0, 4.0]), bins=3).hist.tolist()
    [2.0, 1.0, 1.0]
    """
    x = _tensor("histogram", input)
    hist, (edges,) = histogramdd(reshape(x, (-1, 1)), [bins], range=range, weight=weight, density=density)
    return Histogram(hist, edges)


def histc(input: TensorBase, bins: int = 100, min: float = 0, max: float = 0) -> TensorBase:  # noqa: A002
    """The counts of the elements of `input` in `bins` equal bins over [min, max] (by default,
    when min == max, the elements' range), those outside left out, as PyTorch's ``histc``.

    >>> import autograd_core as ag
    >>> histc(ag.tensor([1.0, 2.0, 1.0, 4.0]), bins=4, min=0, max=4).tolist()
    [0.0, 2.0, 1.0, 1.0]
    """
    x = _tensor("histc", input)
    backend, xp = x.backend, x.backend.xp
    values = xp.reshape(x.array, (-1,))
    low, high = _outer_edges(xp, values, None if min == max else (min, max), 1.0)
    cell = xp.astype(xp.floor((values - low) * bins / (high - low)), xp.int64)
    cell = xp.where(values == high, xp.full_like(cell, bins - 1), cell)
    inside = (values >= low) & (values <= high)
    return TensorBase._wrap(_counts(backend, cell, inside, None, bins, values.dtype), backend)


class ValuesIndices(NamedTuple):
    values: TensorBase
    indices: TensorBase


# --- order statistics: medians, quantiles, mode --------------------------------------------------
def _sorted_along(x: TensorBase, axis: int) -> tuple[TensorBase, TensorBase]:
    """`x` sorted along `axis` (NaNs last) and the order that sorts it."""
    order = argsort(x, axis=axis, stable=True)
    return take_along_axis(x, order, axis=axis), order


def nanmedian(x: TensorBase, /, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median of the elements that are not NaN (NaN where all are): of all elements,
    or ``(values, indices)`` along `dim`, as PyTorch's ``nanmedian``.

    >>> import autograd_core as ag
    >>> nanmedian(ag.tensor([3.0, float("nan"), 1.0, 2.0])).item()
    2.0
    """
    x = _tensor("nanmedian", x)
    if dim is None:
        return nanmedian(reshape(x, (-1,)), 0).values
    if _dims(x, dim) is None:
        return ValuesIndices(clone(x), _zero_index(x))
    (axis,) = _axes(dim, x.ndim)
    order = argsort(x, axis=axis, stable=True)
    backend, xp = x.backend, x.backend.xp
    present = xp.sum(xp.astype(~xp.isnan(x.array), backend.dtype("int64")), axis=axis, keepdims=True)
    k = xp.where(present > 0, (present - 1) // 2, xp.zeros_like(present))
    indices = take_along_axis(order, TensorBase._wrap(k, backend), axis=axis)
    values = take_along_axis(x, indices, axis=axis)
    if not keepdim:
        values, indices = _squeeze(values, axis), _squeeze(indices, axis)
    return ValuesIndices(values, indices)


def mode(x: TensorBase, /, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """The most frequent value along `dim` (the smallest of equally frequent ones) and the index
    of its last occurrence, as PyTorch's ``mode``; the gradient goes to that element.

    >>> import autograd_core as ag
    >>> [t.item() for t in mode(ag.tensor([1.0, 2.0, 2.0, 1.0, 3.0]))]
    [1.0, 3]
    """
    x = _tensor("mode", x)
    if _dims(x, dim) is None:
        return ValuesIndices(clone(x), _zero_index(x))
    (axis,) = _axes(dim, x.ndim)
    backend, xp = x.backend, x.backend.xp
    data = xp.moveaxis(x.array, axis, -1)
    n = data.shape[-1]
    counts = xp.sum(xp.astype(data[..., :, None] == data[..., None, :], backend.dtype("int32")), axis=-1)
    frequent = counts == xp.max(counts, axis=-1, keepdims=True)
    value = xp.min(xp.where(frequent, data, xp.full_like(data, math.inf)), axis=-1, keepdims=True)
    last = (n - 1) - xp.argmax(
        xp.astype(xp.flip(data == value, axis=-1), backend.dtype("int8")), axis=-1, keepdims=True
    )
    index = xp.moveaxis(xp.astype(last, backend.dtype("int64")), -1, axis)
    indices = TensorBase._wrap(index, backend)
    values = take_along_axis(x, indices, axis=axis)
    if not keepdim:
        values, indices = _squeeze(values, axis), _squeeze(indices, axis)
    return ValuesIndices(values, indices)


_QUANTILE_RANKS = {
    "lower": lambda xp, r: xp.floor(r),
    "higher": lambda xp, r: xp.ceil(r),
    "nearest": lambda xp, r: xp.round(r),
}


def quantile(
    x: TensorBase,
    q: Any,
    /,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
    ignore_nan: bool = False,
) -> TensorBase:
    """The `q`-th quantiles (q in [0, 1], a number or a 1-D tensor, whose axis comes first in the
    result) over `dim` (of all elements when None), by PyTorch's ``quantile``: ``interpolation``
    linear, lower, higher, midpoint or nearest between the two order statistics around the rank
    ``q (n - 1)``. A NaN makes the quantile NaN, unless `ignore_nan` (``nanquantile``), which
    ranks the other elements.

    >>> import autograd_core as ag
    >>> quantile(ag.tensor([1.0, 2.0, 3.0, 4.0]), ag.tensor([0.25, 0.5])).tolist()
    [1.75, 2.5]
    """
    x = _tensor("quantile", x)
    if interpolation not in (*_QUANTILE_RANKS, "linear", "midpoint"):
        raise ValueError(
            f"quantile: interpolation must be linear, lower, higher, midpoint or nearest, not {interpolation!r}"
        )
    backend, xp = x.backend, x.backend.xp
    qs = _as_operand(q, x) if not isinstance(q, TensorBase) else _cast(q, x.dtype)
    if qs.ndim > 1:
        raise ValueError(f"quantile: q must be a number or a 1-D tensor, got {qs.ndim} dimensions")
    probabilities = xp.reshape(qs.array, (-1,))
    if bool(xp.any((probabilities < 0) | (probabilities > 1))):
        raise ValueError("quantile: q must lie in [0, 1]")
    original_ndim, dim = x.ndim, _dims(x, dim)
    flat = reshape(x, (-1,)) if dim is None else x
    axis = 0 if dim is None else _axes(dim, flat.ndim)[0]
    ordered = moveaxis(_sorted_along(flat, axis)[0], axis, -1)
    n, nan = ordered.shape[-1], xp.isnan(ordered.array)
    last = n - 1
    if ignore_nan:
        count = xp.sum(xp.astype(~nan, x.array.dtype), axis=-1, keepdims=True)
        ranks = probabilities * (count - 1)
        ranks = xp.where(ranks < 0, xp.full_like(ranks, last), ranks)
    else:
        ranks = probabilities * xp.ones((*ordered.shape[:-1], 1), dtype=x.array.dtype, device=backend.device) * last
        ranks = xp.where(xp.any(nan, axis=-1, keepdims=True), xp.full_like(ranks, last), ranks)
    int64 = backend.dtype("int64")

    def at(r: Any) -> TensorBase:
        return take_along_axis(ordered, TensorBase._wrap(xp.astype(r, int64), backend), axis=-1)

    if interpolation in _QUANTILE_RANKS:
        out = at(_QUANTILE_RANKS[interpolation](xp, ranks))
    else:
        below, above = xp.floor(ranks), xp.ceil(ranks)
        weights = (
            ranks - below if interpolation == "linear" else xp.where(below == ranks, 0.0 * ranks, 0.5 + 0.0 * ranks)
        )
        low = at(below)
        out = low + TensorBase._wrap(weights, backend) * (at(above) - low)
    out = moveaxis(out, -1, 0)  # the quantiles' axis first
    if keepdim:
        kept = (1,) * original_ndim if dim is None else tuple(1 if i == axis else n for i, n in enumerate(x.shape))
        out = reshape(out, (out.shape[0], *kept))
    return reshape(out, out.shape[1:]) if qs.ndim == 0 else out


def nanquantile(
    x: TensorBase, q: Any, /, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear"
) -> TensorBase:
    """`quantile` of the elements that are not NaN (NaN where all are)."""
    return quantile(x, q, dim, keepdim, interpolation=interpolation, ignore_nan=True)
