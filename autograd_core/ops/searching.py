"""The standard's searching, sorting and set functions.

Their integer results (indices, counts) are int64 tensors outside the graph, as are the
values of the set functions: torch.unique has no gradient either. `sort` is differentiable:
it gathers `x` by `argsort` with `take_along_axis`, so its gradient is scattered back through
the permutation (ties go where the stable order put them, as in PyTorch).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import backends
from autograd_core.graph.dtypes import as_dtype
from autograd_core.graph.tensor_base import TensorBase
from autograd_core.ops.core import Axis, _as_operand, _index_array, _operands, _tensor, reshape
from autograd_core.ops.manipulation import _axis, take_along_axis

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
