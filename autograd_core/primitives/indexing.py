"""The index kernels the standard lacks, each the adjoint of another: basic indexing and
scatter, a gather along one axis (`take_rows`) and the scatter-add (`index_add`); and the
move between backends, whose adjoint is the move back."""

from __future__ import annotations

import math
from typing import Any

import backends
from autograd_core.graph.namespace import raw_namespace
from autograd_core.graph.registry import Primitive, primitive
from autograd_core.graph.tensor_base import TensorBase


def _getitem(ns: Any, x: Any, key: tuple) -> Any:
    """``x[key]`` for a basic (int, slice, None, Ellipsis) index; a library whose indexing
    falls short of the standard's (torch: no negative steps) registers its own kernel, and
    one for `scatter`."""
    return x[key]


def _scatter(ns: Any, values: Any, shape: tuple[int, ...], key: tuple) -> Any:
    """Zeros of `shape` with `values` written at the basic (slice/int) index `key`."""
    out = ns.zeros(tuple(shape), dtype=values.dtype, device=ns.backend.device)
    if any(k is None for k in key):  # the standard's setitem takes no new axes: drop them (size 1)
        key = tuple(k for k in key if k is not None)
        values = ns.reshape(values, out[key].shape)
    out[key] = values
    return out


basic_index = Primitive(
    "basic_index",
    _getitem,
    vjps=(lambda ns, g, out, x, key: scatter(ns, g, x.shape, key), None),
    saves="none",
    jvp="linear",
    complex="safe",
)
scatter = Primitive(
    "scatter",
    _scatter,
    vjps=(lambda ns, g, out, v, shape, key: basic_index(ns, g, key), None, None),
    saves="none",
    jvp="linear",
    complex="safe",
)


_ONE_HOT_LIMIT = 1 << 22  # elements of the one-hot matrix past which the sorted sums run instead


def _index_add(ns: Any, values: Any, shape: tuple[int, ...], axis: int, index: Any) -> Any:
    """Zeros of `shape` with `values` added at `index` along `axis`, summing repeats.

    `index` is 1-D; `values` has `shape` with `shape[axis]` replaced by `len(index)`. The
    portable default (the standard has no scatter) multiplies by a one-hot matrix, exact but
    O(n * len(index)); past `_ONE_HOT_LIMIT` elements it sums the values sorted by index
    instead (`_sorted_sums`), in O(len(index) log len(index)).
    """
    shape = tuple(shape)
    pre, post = math.prod(shape[:axis]), math.prod(shape[axis + 1 :])
    flat = ns.reshape(values, (pre, index.shape[0], post))
    if shape[axis] * index.shape[0] > _ONE_HOT_LIMIT:
        return ns.reshape(_sorted_sums(ns, flat, shape[axis], index), shape)
    positions = ns.arange(shape[axis], dtype=index.dtype, device=ns.backend.device)
    one_hot = ns.astype(positions[:, None] == index[None, :], values.dtype)
    return ns.reshape(one_hot @ flat, shape)


def _sorted_sums(ns: Any, flat: Any, size: int, index: Any) -> Any:
    """The sums of `flat`'s rows (axis 1) per index value in [0, size): the rows sorted by
    index, their running sums, and each value's sum as the difference of the running sums at
    the ends of its run (found by `searchsorted`). Each sum is exact up to the rounding of
    the running sums it is the difference of."""
    order = ns.argsort(index, stable=True)
    ends = ns.searchsorted(
        ns.take(index, order), ns.arange(size + 1, dtype=index.dtype, device=ns.backend.device), side="left"
    )
    running = ns.cumulative_sum(ns.take(flat, order, axis=1), axis=1, include_initial=True)
    return ns.take(running, ends[1:], axis=1) - ns.take(running, ends[:-1], axis=1)


@primitive()
def take_rows(ns: Any, x: Any, index: Any, axis: int) -> Any:
    """`take` along `axis` of a 1-D `index` whose values are already known to lie in [0, n):
    no wrapping of negative ones."""
    return ns.take(x, index, axis=axis)


# Both linear in their values; their rules apply the op to the tangent themselves, as "linear"
# would, because their index is a raw array, which the tensor namespace cannot classify.
index_add = Primitive(
    "index_add",
    _index_add,
    vjps=(lambda ns, g, out, v, shape, axis, index: ns.take(g, index, axis=axis), None, None, None),
    saves="none",
    jvp=lambda ns, tangents, out, v, shape, axis, index: index_add(ns, tangents[0], shape, axis, index),
    complex="safe",
)
take = Primitive(
    "take",
    lambda ns, x, index, axis: take_rows(ns, x, index, axis),
    vjps=(lambda ns, g, out, x, index, axis: index_add(ns, g, x.shape, axis, index), None, None),
    saves="none",
    jvp=lambda ns, tangents, out, x, index, axis: take(ns, tangents[0], index, axis),
    complex="safe",
)


def _to_backend(ns: Any, values: Any, target: Any, source: Any) -> Any:
    """`values` of the backend `source` as an array of `target` (through the host)."""
    return target.asarray(source.to_numpy(values), target.dtype(source.dtype_name(values.dtype)))


def move(x: TensorBase, target: backends.Backend) -> TensorBase:
    """`x`'s values on the backend `target`, differentiably (the gradient moves back)."""
    if target is x.backend:
        return x
    source = x.backend
    return to_backend.record(to_backend(raw_namespace(source), x.array, target, source), target, (x, target, source))


to_backend = Primitive(
    "to_backend",
    _to_backend,
    vjps=(lambda ns, g, out, x, target, source: to_backend(ns, g, source, target), None, None),
    differentiable=lambda ns, values, target, source: move(values, target),
    saves="none",
    jvp="linear",
)
