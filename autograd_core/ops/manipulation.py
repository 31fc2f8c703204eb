"""The standard's manipulation functions beyond those in `ops` (reshape, permute_dims,
expand_dims, squeeze, broadcast_to, concat, stack), and `take_along_axis`; all differentiable.

Two are primitives with their own VJP: `flip` (undone by the same flip) and `roll` (undone by
rolling back). The others are compositions of differentiable ops, so their gradients follow:
`repeat` and `tile` sum the copies, `unstack` is indexing, `take_along_axis` is one `take` of
the flattened tensor, whose gradient is a scatter-add (right with repeated indices).

Beyond the standard, as PyTorch has them: `masked_fill` (a `where`), and `split` and `chunk`
(slices, so views); and, kept out of `__all__` (the standard's namespace), PyTorch's joining,
splitting, scattering and indexing functions that `autograd_core.torch` and the Tensor methods
call: compositions of the ops above, a 0-d input taken as one of shape (1,) where PyTorch
takes it so.
"""

from __future__ import annotations

import functools
import itertools
import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from autograd_core.graph.dtypes import result_type
from autograd_core.graph.registry import ALIAS, Primitive
from autograd_core.graph.tensor_base import TensorBase
from autograd_core.ops import core, creation, elementwise, layout, linalg
from autograd_core.ops.core import (
    _broadcast_shapes,
    _cast,
    _check_bounds,
    _index_array,
    _tensor,
    broadcast_to,
    clone,
    concat,
    expand_dims,
    getitem,
    permute_dims,
    reshape,
    swapaxes,
    take,
    where,
)
from autograd_core.primitives.indexing import index_add

__all__ = [
    "broadcast_arrays",
    "chunk",
    "flip",
    "masked_fill",
    "moveaxis",
    "repeat",
    "roll",
    "split",
    "take_along_axis",
    "tile",
    "unstack",
]

Axes = int | Sequence[int]


def _axis(axis: int, ndim: int) -> int:
    """`axis` counted from 0; out of [-ndim, ndim) is an IndexError, as in PyTorch."""
    if not -ndim <= axis < ndim:
        raise IndexError(f"axis {axis} is out of range for a tensor of {ndim} dimensions")
    return axis % ndim


def _positions(axis: Axes | None, ndim: int) -> tuple[int, ...]:
    """An int or a tuple of axes counted from 0, in the given order (None: every axis)."""
    if axis is None:
        return tuple(range(ndim))
    return tuple(_axis(a, ndim) for a in ((axis,) if isinstance(axis, int) else axis))


def broadcast_arrays(*arrays: TensorBase) -> list[TensorBase]:
    """The tensors broadcast to their common shape (views; the gradients are summed back).

    >>> import autograd_core as ag
    >>> [t.shape for t in ag.broadcast_arrays(ag.ones((3, 1)), ag.ones((4,)))]
    [(3, 4), (3, 4)]
    """
    tensors = [_tensor("broadcast_arrays", a) for a in arrays]
    shape = _broadcast_shapes(*(t.shape for t in tensors))
    return [broadcast_to(t, shape) for t in tensors]


def flip(x: TensorBase, /, *, axis: Axes | None = None) -> TensorBase:
    """The elements reversed along `axis` (an int, a tuple, or None for every axis); the
    gradient is flipped back.

    >>> import autograd_core as ag
    >>> ag.flip(ag.asarray([[1, 2], [3, 4]]), axis=-1).tolist()
    [[2, 1], [4, 3]]
    """
    x = _tensor("flip", x)
    axes = _positions(axis, max(x.ndim, 1))  # a 0-d tensor's one axis is 0 or -1, as in PyTorch
    return _FLIP.bind(x, axes) if axes and x.ndim else clone(x)


_FLIP = Primitive(
    "flip",
    lambda ns, x, axes: ns.flip(x, axis=axes),
    vjps=(lambda ns, g, out, x, axes: ns.flip(g, axis=axes), None),
    saves="none",
    jvp="linear",
    complex="safe",
)


def roll(x: TensorBase, /, shift: int | Sequence[int], *, axis: Axes | None = None) -> TensorBase:
    """The elements shifted by `shift` places along `axis`, wrapping around (the flattened
    tensor when `axis` is None); an int `shift` applies to every axis of a tuple `axis`. The
    gradient is rolled back.

    >>> import autograd_core as ag
    >>> ag.roll(ag.asarray([1, 2, 3, 4]), 1).tolist()
    [4, 1, 2, 3]
    """
    x = _tensor("roll", x)
    if axis is None:
        if not isinstance(shift, int):
            raise ValueError("roll: a tuple shift needs a tuple axis of the same length")
        axes, shifts = None, shift
    else:
        axes = _positions(axis, x.ndim)
        shifts = (shift,) * len(axes) if isinstance(shift, int) else tuple(shift)
        if len(shifts) != len(axes):
            raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    return _ROLL.bind(x, shifts, axes)


def _roll_back(ns: Any, g: Any, out: Any, x: Any, shifts: int | tuple[int, ...], axes: tuple[int, ...] | None) -> Any:
    back = -shifts if isinstance(shifts, int) else tuple(-s for s in shifts)
    return ns.roll(g, back, axis=axes)


_ROLL = Primitive(
    "roll",
    lambda ns, x, shifts, axes: ns.roll(x, shifts, axis=axes),
    vjps=(_roll_back, None, None),
    saves="none",
    jvp="linear",
    complex="safe",
)


def moveaxis(x: TensorBase, source: Axes, destination: Axes, /) -> TensorBase:
    """The axes `source` moved to the positions `destination`, the others kept in order (a view).

    >>> import autograd_core as ag
    >>> ag.moveaxis(ag.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    x = _tensor("moveaxis", x)
    sources, destinations = _positions(source, x.ndim), _positions(destination, x.ndim)
    if len(sources) != len(destinations):
        raise ValueError(f"moveaxis: {len(sources)} source axes for {len(destinations)} destinations")
    if len(set(sources)) != len(sources) or len(set(destinations)) != len(destinations):
        raise ValueError(f"moveaxis: repeated axis in {source} or {destination}")
    order = [a for a in range(x.ndim) if a not in sources]
    for d, s in sorted(zip(destinations, sources)):
        order.insert(d, s)
    return permute_dims(x, order)


def repeat(x: TensorBase, repeats: int | TensorBase, /, *, axis: int | None = None) -> TensorBase:
    """Each element repeated `repeats` times along `axis` (the flattened tensor when None);
    `repeats` is an int or a 1-D integer array of one count per element (or a single one).
    The gradient of each element is the sum over its copies.

    >>> import autograd_core as ag
    >>> ag.repeat(ag.asarray([1, 2, 3]), ag.asarray([2, 0, 1])).tolist()
    [1, 1, 3]
    """
    x = _tensor("repeat", x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = _axis(axis, x.ndim)
    before, n, after = x.shape[:axis], x.shape[axis], x.shape[axis + 1 :]
    if isinstance(repeats, numbers.Integral):  # every element the same number of times: a broadcast
        _check_counts(int(repeats))
        spread = broadcast_to(expand_dims(x, axis=axis + 1), (*before, n, int(repeats), *after))
        return reshape(spread, (*before, n * int(repeats), *after))
    xp, int64 = x.backend.xp, x.backend.dtype("int64")
    counts = _index_array(repeats, x.backend)
    if counts.ndim != 1 or counts.shape[0] not in (1, n):
        raise ValueError(f"repeat: repeats of shape {tuple(counts.shape)} for an axis of size {n}")
    _check_counts(int(xp.min(counts)) if n else 0)  # every backend refuses alike
    positions = xp.arange(n, dtype=int64, device=x.backend.device)
    return take(x, xp.repeat(positions, xp.astype(counts, int64)), axis=axis)


def _check_counts(smallest: int) -> None:
    if smallest < 0:
        raise ValueError(f"repeat: repeats must be non-negative, got {smallest}")


def tile(x: TensorBase, repetitions: Sequence[int], /) -> TensorBase:
    """`x` repeated `repetitions[i]` times along axis i (ones prepended to whichever of the
    shape and `repetitions` is shorter); the gradient sums the tiles.

    >>> import autograd_core as ag
    >>> ag.tile(ag.asarray([1, 2]), (2, 2)).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    x = _tensor("tile", x)
    ndim = max(x.ndim, len(repetitions))
    reps = (1,) * (ndim - len(repetitions)) + tuple(repetitions)
    shape = (1,) * (ndim - x.ndim) + x.shape
    # (1, n0, 1, n1, ...) -> (r0, n0, r1, n1, ...) -> (r0 * n0, r1 * n1, ...)
    interleaved = reshape(x, tuple(v for n in shape for v in (1, n)))
    spread = broadcast_to(interleaved, tuple(v for r, n in zip(reps, shape) for v in (r, n)))
    return reshape(spread, tuple(r * n for r, n in zip(reps, shape)))


def unstack(x: TensorBase, /, *, axis: int = 0) -> tuple[TensorBase, ...]:
    """The slices of `x` along `axis`, as views (PyTorch's `unbind`).

    >>> import autograd_core as ag
    >>> [t.tolist() for t in ag.unstack(ag.asarray([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    x = _tensor("unstack", x)
    axis = _axis(axis, x.ndim)
    return tuple(getitem(x, (*(slice(None),) * axis, i)) for i in range(x.shape[axis]))


def take_along_axis(x: TensorBase, indices: Any, /, *, axis: int = -1) -> TensorBase:
    """The elements of `x` at `indices` along `axis` (PyTorch's `take_along_dim`): `indices`
    has the rank of `x` and broadcasts with it on the other axes; negative indices count from
    the end and out-of-range ones raise on every backend. The gradient is a scatter-add.

    >>> import autograd_core as ag
    >>> x = ag.asarray([[10, 30, 20], [60, 40, 50]])
    >>> ag.take_along_axis(x, ag.asarray([[0, 2], [-1, -1]]), axis=1).tolist()
    [[10, 20], [50, 50]]
    """
    x = _tensor("take_along_axis", x)
    backend, xp = x.backend, x.backend.xp
    index = _index_array(indices, backend)
    if index.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices of {index.ndim} dimensions for a tensor of {x.ndim}")
    axis = _axis(axis, x.ndim)
    n = x.shape[axis]
    _check_bounds(backend, index, n)
    int64 = backend.dtype("int64")
    index = xp.astype(index, int64)
    others = _broadcast_shapes(*(s[:axis] + (1,) + s[axis + 1 :] for s in (x.shape, tuple(index.shape))))
    shape = others[:axis] + (index.shape[axis],) + others[axis + 1 :]
    # Each output element's position in the flattened `x`: its coordinates along the other
    # axes (0 where `x` is broadcast) and its index along `axis`, times x's strides.
    strides = [math.prod(x.shape[d + 1 :]) for d in range(x.ndim)]
    flat = xp.where(index < 0, index + n, index) * strides[axis]
    for d, size in enumerate(x.shape):
        if d != axis and size > 1:
            coordinate = xp.arange(size, dtype=int64, device=backend.device) * strides[d]
            flat = flat + xp.reshape(coordinate, tuple(size if i == d else 1 for i in range(x.ndim)))
    flat = xp.reshape(xp.broadcast_to(flat, shape), (-1,))
    return reshape(take(reshape(x, (-1,)), flat, axis=0), shape)


def masked_fill(x: TensorBase, mask: Any, value: Any) -> TensorBase:
    """`x` with `value` (a scalar or a 0-d tensor) where the boolean `mask` is True, in x's
    dtype, the two broadcast together (PyTorch's `masked_fill`); no gradient flows to `x` there.

    >>> import autograd_core as ag
    >>> ag.masked_fill(ag.asarray([1.0, 2.0, 3.0]), ag.asarray([False, True, False]), -1.0).tolist()
    [1.0, -1.0, 3.0]
    """
    x = _tensor("masked_fill", x)
    if isinstance(mask, TensorBase) and mask.dtype != "bool":
        raise TypeError(f"masked_fill: the mask must be boolean, got {mask.dtype.name}")
    if isinstance(value, TensorBase) and value.ndim:
        raise ValueError(f"masked_fill: value must be a scalar or a 0-d tensor, got shape {value.shape}")
    filled = where(mask, value, x)
    return filled if filled.dtype == x.dtype else _cast(filled, x.dtype)


def unfold(x: TensorBase, dimension: int, size: int, step: int) -> TensorBase:
    """Every window of `size` elements along `dimension`, `step` apart, as a new last dimension
    (PyTorch's ``Tensor.unfold``): a view of `x`, which in-place changes can write through
    unless its windows overlap (``step < size``), as in PyTorch.

    >>> import autograd_core as ag
    >>> unfold(ag.arange(5), 0, 2, 2).tolist()
    [[0, 1], [2, 3]]
    """
    if x.ndim == 0:  # PyTorch's 0-d tensor has one window of its one element
        if size != 1 or step < 1:
            raise ValueError(f"unfold: no window of size {size}, step {step} fits a 0-d tensor")
        return reshape(x, (1,))
    dim = _axis(dimension, x.ndim)
    count = (x.shape[dim] - size) // step + 1 if 0 <= size <= x.shape[dim] and step >= 1 else 0
    if count < 1:
        raise ValueError(f"unfold: no window of size {size}, step {step} fits dimension {dim} of {x.shape}")
    before, after = x.shape[:dim], x.shape[dim + 1 :]
    if step >= size and count * step <= x.shape[dim]:  # apart: slices and reshapes of `x`, a view like any other
        cut = getitem(x, (slice(None),) * dim + (slice(0, count * step),))
        rows = reshape(cut, (*before, count, step, *after))
        return moveaxis(getitem(rows, (slice(None),) * (dim + 1) + (slice(0, size),)), dim + 1, -1)
    positions = (np.arange(count)[:, None] * step + np.arange(size)).reshape(-1)
    windows = reshape(take(x, positions, axis=dim), (*before, count, size, *after))
    return core._view(moveaxis(windows, dim + 1, -1), x, ("unfold", (dim, size, step)))


def _unfold_layout(shape: tuple[int, ...], strides: tuple[int, ...], window: tuple[int, int, int]) -> layout.Layout:
    dim, size, step = window
    count = (shape[dim] - size) // step + 1
    return (*shape[:dim], count, *shape[dim + 1 :], size), (
        *strides[:dim],
        strides[dim] * step,
        *strides[dim + 1 :],
        strides[dim],
    )


core._VIEW_OPS["unfold"] = lambda x, window: unfold(x, *window)
core._VIEW_WRITES["unfold"] = core.refuse_writes("overlapping windows (unfold with step < size)")
layout.LAYOUTS["unfold"] = _unfold_layout


def split(x: TensorBase, split_size_or_sections: int | Sequence[int], axis: int = 0) -> tuple[TensorBase, ...]:
    """`x` cut along `axis` into pieces of `split_size_or_sections` elements (an int: the last
    piece may be smaller) or of the given sizes (which must add up to the axis's length); the
    pieces are views (PyTorch's `split`).

    >>> import autograd_core as ag
    >>> [t.tolist() for t in ag.split(ag.arange(5), 2)]
    [[0, 1], [2, 3], [4]]
    """
    x = _tensor("split", x)
    axis = _axis(axis, x.ndim)
    n = x.shape[axis]
    if isinstance(split_size_or_sections, numbers.Integral):
        size = int(split_size_or_sections)
        if size < 0 or (size == 0 and n):
            raise ValueError(f"split: split_size must be positive (0 only for an empty axis), got {size}")
        sizes = [min(size, n - start) for start in range(0, n, size)] if n else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if any(s < 0 for s in sizes) or sum(sizes) != n:
            raise ValueError(
                f"split: the sizes {sizes} must be non-negative and add up to {n}, the length of axis {axis}"
            )
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    lead = (slice(None),) * axis
    return tuple(getitem(x, (*lead, slice(start, start + size))) for start, size in zip(starts, sizes))


def chunk(x: TensorBase, chunks: int, axis: int = 0) -> tuple[TensorBase, ...]:
    """`x` cut along `axis` into `chunks` pieces of ceil(n / chunks) elements, so the last may
    be smaller and there may be fewer than `chunks` (PyTorch's `chunk`); views.

    >>> import autograd_core as ag
    >>> [t.tolist() for t in ag.chunk(ag.arange(5), 4)]
    [[0, 1], [2, 3], [4]]
    """
    x = _tensor("chunk", x)
    if chunks <= 0:
        raise ValueError(f"chunk: chunks must be positive, got {chunks}")
    n = x.shape[_axis(axis, x.ndim)]
    if n == 0:  # PyTorch gives `chunks` empty pieces
        return split(x, [0] * chunks, axis)
    return split(x, -(-n // chunks), axis)


# --- PyTorch's joining, splitting and indexing functions (not the standard's) -------------------
def _one_dim(x: TensorBase) -> TensorBase:
    """`x`, or a 0-d `x` as shape (1,): how PyTorch's indexing functions take a 0-d tensor."""
    return reshape(x, (1,)) if x.ndim == 0 else x


def scalar_as_vector(tensors: int) -> Callable[[Callable[..., TensorBase]], Callable[..., TensorBase]]:
    """A method ``f(self, dim, index, *rest)`` of PyTorch's index family (index_add, scatter...)
    that, on a 0-d `self`, runs on `self` as shape (1,), its 0-d `index` and the 0-d tensors
    among the first `tensors` of `rest` likewise, and gives the result back as 0-d, as PyTorch
    does."""

    def wrap(method: Callable[..., TensorBase]) -> Callable[..., TensorBase]:
        @functools.wraps(method)
        def call(self: TensorBase, dim: int, index: Any, *rest: Any, **options: Any) -> TensorBase:
            if self.ndim:
                return method(self, dim, index, *rest, **options)
            if not -1 <= dim <= 0:
                raise IndexError(f"dim {dim} is out of range for a 0-d tensor (it takes 0 or -1)")
            rest = tuple(_one_dim(r) if i < tensors and isinstance(r, TensorBase) else r for i, r in enumerate(rest))
            index = _one_dim(index) if isinstance(index, TensorBase) else index
            return reshape(method(reshape(self, (1,)), 0, index, *rest, **options), ())

        return call

    return wrap


def cat(tensors: Sequence[TensorBase], dim: int = 0) -> TensorBase:
    """The tensors joined along `dim`, as PyTorch's ``cat``: a 1-D empty tensor (shape (0,))
    is left out whatever the others' shape, and the dtype is the promoted one of all.

    >>> import autograd_core as ag
    >>> cat([ag.zeros(0), ag.ones((2, 2))], 1).shape
    (2, 2)
    """
    tensors = [_tensor("cat", t) for t in tensors]
    if not tensors:
        raise ValueError("cat: expected a non-empty list of tensors")
    kept = [t for t in tensors if t.shape != (0,)] or tensors
    return _cast(concat(kept, axis=dim), result_type(*tensors))


def atleast(x: TensorBase, ndim: int) -> TensorBase:
    """`x` with at least `ndim` (1 to 3) dimensions, as PyTorch's ``atleast_{ndim}d``: a vector
    becomes a row (1, n), then (1, n, 1); a matrix (m, n, 1).

    >>> import autograd_core as ag
    >>> atleast(ag.zeros(4), 3).shape
    (1, 4, 1)
    """
    x = _tensor(f"atleast_{ndim}d", x)
    if x.ndim >= ndim:
        return x
    if x.ndim == 0:
        return reshape(x, (1,) * ndim)
    if x.ndim == 1:
        x = expand_dims(x, axis=0)
    return expand_dims(x, axis=-1) if x.ndim < ndim else x


def hstack(tensors: Sequence[TensorBase]) -> TensorBase:
    """Joined along the columns: the first dim of vectors, the second of the others."""
    tensors = [atleast(t, 1) for t in tensors]
    return cat(tensors, 0 if tensors and tensors[0].ndim == 1 else 1)


def vstack(tensors: Sequence[TensorBase]) -> TensorBase:
    """Joined along the rows, vectors as rows (1, n)."""
    return cat([atleast(t, 2) for t in tensors], 0)


def dstack(tensors: Sequence[TensorBase]) -> TensorBase:
    """Joined along the third dim, as `atleast` 3-D tensors."""
    return cat([atleast(t, 3) for t in tensors], 2)


def column_stack(tensors: Sequence[TensorBase]) -> TensorBase:
    """Joined as columns: scalars and vectors as (n, 1) columns, the others along dim 1.

    >>> import autograd_core as ag
    >>> column_stack([ag.asarray([1, 2]), ag.asarray([[3], [4]])]).tolist()
    [[1, 3], [2, 4]]
    """
    tensors = [_tensor("column_stack", t) for t in tensors]
    return cat([reshape(t, (t.numel(), 1)) if t.ndim < 2 else t for t in tensors], 1)


def block_diag(*tensors: TensorBase) -> TensorBase:
    """The tensors (scalars, vectors as rows, matrices) on the diagonal of one matrix of zeros.

    >>> import autograd_core as ag
    >>> block_diag(ag.asarray([[1]]), ag.asarray([2, 3])).tolist()
    [[1, 0, 0], [0, 2, 3]]
    """
    mats = [atleast(_tensor("block_diag", t), 2) for t in tensors]
    if any(m.ndim != 2 for m in mats):
        raise ValueError(f"block_diag: tensors of at most 2 dimensions, got shapes {[m.shape for m in mats]}")
    if not mats:
        return creation.zeros((1, 0))
    dtype, width, left, rows = result_type(*mats), sum(m.shape[1] for m in mats), 0, []
    for m in mats:
        (r, c), device = m.shape, m.device
        parts = [creation.zeros((r, left), dtype=dtype, device=device), _cast(m, dtype)]
        rows.append(concat([*parts, creation.zeros((r, width - left - c), dtype=dtype, device=device)], axis=1))
        left += c
    return concat(rows, axis=0)


def cartesian_prod(*tensors: TensorBase) -> TensorBase:
    """Every combination of one element of each 1-D tensor, one row each, the last tensor's
    element changing fastest (one tensor: itself).

    >>> import autograd_core as ag
    >>> cartesian_prod(ag.asarray([1, 2]), ag.asarray([3, 4])).tolist()
    [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    tensors = [_tensor("cartesian_prod", t) for t in tensors]
    if any(t.ndim != 1 for t in tensors):
        raise ValueError(f"cartesian_prod: 1-D tensors only, got shapes {[t.shape for t in tensors]}")
    if len(tensors) == 1:
        return tensors[0]
    shape = tuple(t.shape[0] for t in tensors)
    grids = [
        broadcast_to(reshape(t, tuple(-1 if d == i else 1 for d in range(len(shape)))), shape)
        for i, t in enumerate(tensors)
    ]
    return core.stack([reshape(g, (-1,)) for g in grids], axis=1)


def combinations(x: TensorBase, r: int = 2, with_replacement: bool = False) -> TensorBase:
    """The length-`r` combinations of the elements of the 1-D `x`, one row each, in
    lexicographic order of positions (Python's ``itertools.combinations``).

    >>> import autograd_core as ag
    >>> combinations(ag.asarray([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    x = _tensor("combinations", x)
    if x.ndim != 1 or r < 0:
        raise ValueError(f"combinations: a 1-D tensor and r >= 0, got shape {x.shape} and r={r}")
    if r == 0:  # PyTorch's one empty combination: an empty vector
        return getitem(x, slice(0, 0))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = np.array(list(pick(range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return take(x, rows, axis=0)


def kron(a: TensorBase, b: TensorBase) -> TensorBase:
    """The Kronecker product: each element of `a` times the whole of `b`, in blocks (the
    shorter shape padded with leading ones).

    >>> import autograd_core as ag
    >>> kron(ag.asarray([1, 2]), ag.asarray([1, 10])).tolist()
    [1, 10, 2, 20]
    """
    a, b = _tensor("kron", a), _tensor("kron", b)
    ndim = max(a.ndim, b.ndim)
    sa, sb = (1,) * (ndim - a.ndim) + a.shape, (1,) * (ndim - b.ndim) + b.shape
    spread = core.multiply(
        reshape(a, tuple(v for n in sa for v in (n, 1))), reshape(b, tuple(v for n in sb for v in (1, n)))
    )
    return reshape(spread, tuple(m * n for m, n in zip(sa, sb)))


def rot90(x: TensorBase, k: int = 1, dims: Sequence[int] = (0, 1)) -> TensorBase:
    """`x` turned `k` quarter turns from the first of `dims` towards the second (a copy).

    >>> import autograd_core as ag
    >>> rot90(ag.asarray([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """
    x = _tensor("rot90", x)
    first, second = _positions(tuple(dims), x.ndim) if len(dims) == 2 else (0, 0)
    if first == second:
        raise ValueError(f"rot90: dims must be two different dimensions, got {dims}")
    k %= 4
    if k == 0:
        return clone(x)
    if k == 2:
        return flip(x, axis=(first, second))
    return swapaxes(flip(x, axis=second if k == 1 else first), first, second)


def sum_to_size(x: TensorBase, shape: Sequence[int]) -> TensorBase:
    """`x` summed down to `shape`, to which it must broadcast (broadcasting's adjoint).

    >>> import autograd_core as ag
    >>> sum_to_size(ag.ones((2, 3)), (1, 3)).tolist()
    [[2.0, 2.0, 2.0]]
    """
    x, shape = _tensor("sum_to_size", x), tuple(shape)
    if _broadcast_shapes(shape, x.shape) != x.shape:
        raise ValueError(f"sum_to_size: shape {x.shape} does not broadcast from {shape}")
    lead = x.ndim - len(shape)
    axes = (*range(lead), *(lead + i for i, n in enumerate(shape) if n == 1 and x.shape[lead + i] != 1))
    return reshape(core.sum(x, axis=axes, keepdims=True), shape) if axes else x


# --- the *_scatter functions: a view's values replaced, out of place ----------------------------
def _written(x: TensorBase, view_of: Callable[[TensorBase], TensorBase], src: TensorBase) -> TensorBase:
    """`x` with the view that `view_of` makes of it replaced by `src` (of the view's shape), out
    of place: the gradient goes to `src` inside the view, to `x` outside it."""
    x, src = _tensor("scatter", x), _tensor("scatter", src)
    root = ALIAS.bind(x)  # x's values as a tensor that is no view, so the view's steps start there
    view = view_of(root)
    if view.shape != src.shape:
        raise ValueError(f"the source has shape {src.shape}, the part of the input it replaces {view.shape}")
    return core._write_view(root, view._steps, src)


def select_scatter(x: TensorBase, src: TensorBase, dim: int, index: int) -> TensorBase:
    """`x` with its `index`-th slice along `dim` replaced by `src` (PyTorch's ``select_scatter``)."""
    return _written(x, lambda t: getitem(t, (slice(None),) * _axis(dim, t.ndim) + (index,)), src)


def _within(key: slice, n: int) -> slice:
    """A slice of an axis of length `n` with its bounds inside [0, n], as Python's slicing
    reads them (the standard leaves bounds outside unspecified)."""
    start, stop, step = key.indices(n)
    return slice(start, max(start, stop), step)


def slice_along(
    x: TensorBase, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
) -> TensorBase:
    """``x[start:end:step]`` along `dim`, a view (PyTorch's ``slice``)."""
    x = _tensor("slice", x)
    dim = _axis(dim, x.ndim)
    return getitem(x, (slice(None),) * dim + (_within(slice(start, end, step), x.shape[dim]),))


def slice_scatter(
    x: TensorBase, src: TensorBase, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
) -> TensorBase:
    """`x` with ``x[start:end:step]`` along `dim` replaced by `src` (PyTorch's ``slice_scatter``)."""
    return _written(x, lambda t: slice_along(t, dim, start, end, step), src)


def diagonal(x: TensorBase, offset: int = 0, dim1: int = 0, dim2: int = 1) -> TensorBase:
    """The `offset` diagonal of the matrices over `dim1` and `dim2`, as a last dimension (a view)."""
    x = _tensor("diagonal", x)
    return linalg.diagonal(moveaxis(x, (dim1, dim2), (-2, -1)), offset=offset)


def diagonal_scatter(x: TensorBase, src: TensorBase, offset: int = 0, dim1: int = 0, dim2: int = 1) -> TensorBase:
    """`x` with its `diagonal` replaced by `src` (PyTorch's ``diagonal_scatter``)."""
    return _written(x, lambda t: diagonal(t, offset, dim1, dim2), src)


# --- splitting ----------------------------------------------------------------------------------
def tensor_split(x: TensorBase, indices_or_sections: Any, dim: int = 0) -> tuple[TensorBase, ...]:
    """`x` cut along `dim` into `n` parts (the first ``size % n`` one longer) or at the given
    indices, as Python slices (PyTorch's ``tensor_split``; a tensor of indices, or a 0-d one
    of sections, too); views.

    >>> import autograd_core as ag
    >>> [t.tolist() for t in tensor_split(ag.arange(5), [1, 4])]
    [[0], [1, 2, 3], [4]]
    """
    x = _tensor("tensor_split", x)
    dim = _axis(dim, x.ndim)
    cuts = indices_or_sections
    if isinstance(cuts, TensorBase):
        cuts = int(cuts.item()) if cuts.ndim == 0 else [int(i) for i in cuts.tolist()]
    if isinstance(cuts, numbers.Integral):
        if cuts < 1:
            raise ValueError(f"tensor_split: the number of sections must be positive, got {cuts}")
        size, n = x.shape[dim], int(cuts)
        cuts = [i * (size // n) + min(i, size % n) for i in range(1, n)]
    bounds = [None, *(int(c) for c in cuts), None]
    lead = (slice(None),) * dim
    return tuple(getitem(x, (*lead, _within(slice(a, b), x.shape[dim]))) for a, b in zip(bounds, bounds[1:]))


def _split_along(name: str, dim: int, least: int) -> Callable[[TensorBase, Any], tuple[TensorBase, ...]]:
    """PyTorch's hsplit, vsplit or dsplit: `tensor_split` along `dim`, which needs `least`
    dimensions; a number of sections must divide the dimension."""

    def split_along(x: TensorBase, indices_or_sections: Any) -> tuple[TensorBase, ...]:
        x = _tensor(name, x)
        if x.ndim < least:
            raise ValueError(f"{name}: a tensor of at least {least} dimensions, got shape {x.shape}")
        along = 0 if name == "hsplit" and x.ndim == 1 else dim
        if isinstance(indices_or_sections, numbers.Integral) and x.shape[along] % indices_or_sections:
            raise ValueError(f"{name}: {indices_or_sections} sections do not divide dimension {along} of {x.shape}")
        return tensor_split(x, indices_or_sections, along)

    split_along.__name__ = split_along.__qualname__ = name
    split_along.__doc__ = f"`x` cut along dimension {dim} (PyTorch's ``{name}``)."
    return split_along


hsplit, vsplit, dsplit = _split_along("hsplit", 1, 1), _split_along("vsplit", 0, 2), _split_along("dsplit", 2, 3)


# --- indexing -----------------------------------------------------------------------------------
def take_along_dim(x: TensorBase, indices: Any, dim: int | None = None) -> TensorBase:
    """`take_along_axis` with PyTorch's signature: `x` and `indices` flattened when `dim` is None."""
    x = _tensor("take_along_dim", x)
    if dim is None:
        return take_along_axis(reshape(x, (-1,)), reshape(_tensor("take_along_dim", indices), (-1,)), axis=0)
    return take_along_axis(x, indices, axis=dim)


def gather(x: TensorBase, dim: int, index: TensorBase, *, sparse_grad: bool = False) -> TensorBase:
    """The elements along `dim` at `index`, in `index`'s shape, which may be smaller than `x`
    along the other dimensions (PyTorch's ``gather``; a 0-d tensor as one of shape (1,);
    `sparse_grad` changes nothing here).

    >>> import autograd_core as ag
    >>> gather(ag.asarray([[1, 2], [3, 4]]), 1, ag.asarray([[1], [0]])).tolist()
    [[2], [3]]
    """
    x, index = _tensor("gather", x), _tensor("gather", index)
    if index.numel() == 0:
        return reshape(getitem(reshape(x, (-1,)), slice(0, 0)), index.shape)
    if x.ndim == 0 or index.ndim == 0:
        return reshape(gather(_one_dim(x), dim, _one_dim(index)), index.shape)
    dim = _axis(dim, x.ndim)
    if index.ndim != x.ndim:
        raise ValueError(f"gather: index of {index.ndim} dimensions for a tensor of {x.ndim}")
    region = tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index.shape))
    return take_along_axis(getitem(x, region), index, axis=dim)


def index_select(x: TensorBase, dim: int, index: Any) -> TensorBase:
    """The slices of `x` along `dim` at the 1-D (or 0-d) `index` (PyTorch's ``index_select``)."""
    x = _tensor("index_select", x)
    index = _one_dim(index if isinstance(index, TensorBase) else creation.asarray(index))
    if x.ndim == 0:
        return reshape(index_select(_one_dim(x), dim, index), ())
    return take(x, index, axis=_axis(dim, x.ndim))


def _indices(x: TensorBase, array: Any) -> TensorBase:
    """The raw index `array` as an int64 tensor of `x`'s backend, outside the graph."""
    return TensorBase._wrap(x.backend.xp.astype(array, x.backend.dtype("int64")), x.backend)


def nonzero(x: TensorBase, *, as_tuple: bool = False) -> Any:
    """The indices of the nonzero elements: one row each (an int64 matrix), or with `as_tuple`
    one vector per dimension; a 0-d tensor has one dimension (tuple) or none (rows).

    >>> import autograd_core as ag
    >>> nonzero(ag.asarray([[0, 3], [4, 0]])).tolist()
    [[0, 1], [1, 0]]
    """
    x = _tensor("nonzero", x)
    xp = x.backend.xp
    found = xp.nonzero(xp.reshape(x.array, (1,)) if x.ndim == 0 else x.array)
    if as_tuple:
        return tuple(_indices(x, i) for i in found)
    if x.ndim == 0:
        return _indices(x, xp.zeros((found[0].shape[0], 0), dtype=found[0].dtype, device=x.backend.device))
    return _indices(x, xp.stack(found, axis=1))


def nonzero_static(x: TensorBase, *, size: int, fill_value: int = -1) -> TensorBase:
    """`nonzero`'s rows, cut or padded with `fill_value` to `size` rows."""
    rows = nonzero(x)
    kept = getitem(rows, slice(0, min(size, rows.shape[0])))
    pad = creation.full((size - kept.shape[0], rows.shape[1]), fill_value, dtype=rows.dtype, device=rows.device)
    return concat([kept, pad], axis=0)


def unique_consecutive(
    x: TensorBase, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
) -> Any:
    """Each run of equal consecutive elements (of the flattened `x`, or slices along `dim`)
    as one, with where requested each element's run and the runs' lengths (PyTorch's).

    >>> import autograd_core as ag
    >>> values, counts = unique_consecutive(ag.asarray([1, 1, 2, 1]), return_counts=True)
    >>> values.tolist(), counts.tolist()
    ([1, 2, 1], [2, 1, 1])
    """
    x = _tensor("unique_consecutive", x)
    along = reshape(x, (-1,)) if dim is None else x
    axis = 0 if dim is None else _axis(dim, x.ndim)
    host = np.moveaxis(x.backend.to_numpy(along.array), axis, 0)
    rows = host.reshape(host.shape[0], math.prod(host.shape[1:]))
    first = np.concatenate([np.ones(min(len(rows), 1), bool), (rows[1:] != rows[:-1]).any(axis=1)])  # run starts
    starts, run = np.flatnonzero(first), np.cumsum(first) - 1
    picked = take(along, starts, axis=axis)
    values = TensorBase._wrap(picked.array, picked.backend)  # outside the graph, as PyTorch's unique
    extras = []
    if return_inverse:
        extras.append(creation.asarray(run.reshape(x.shape if dim is None else (-1,)), device=x.device))
    if return_counts:
        extras.append(creation.asarray(np.diff(np.append(starts, len(rows))).astype(np.int64), device=x.device))
    return (values, *extras) if extras else values


def _put_flat(
    x: TensorBase, positions: Any, values: TensorBase, accumulate: bool, distinct: bool = False
) -> TensorBase:
    """`x` with the 1-D `values` written (or with `accumulate` added) at the raw int64
    `positions` of its flattened elements; a position named twice takes the last value, as
    PyTorch's loop does, unless `distinct` says none is."""
    backend, flat = x.backend, reshape(x, (-1,))
    values = _cast(values, x.dtype)
    if not (accumulate or distinct or backend.is_traced(positions)):
        named = backend.to_numpy(positions)
        last = len(named) - 1 - np.unique(named[::-1], return_index=True)[1]
        if len(last) < len(named):
            keep = np.sort(last)
            positions = backend.xp.take(positions, backend.asarray(keep, "int64"))
            values = take(values, keep, axis=0)
    addable = _cast(values, "uint8") if values.dtype == "bool" else values  # not every library adds booleans
    placed = _cast(index_add.bind(addable, (flat.shape[0],), 0, positions), x.dtype)
    if accumulate:
        return reshape(flat + placed, x.shape)
    ones = creation.ones((values.shape[0],), dtype=addable.dtype, device=x.device)
    hit = index_add.bind(ones, (flat.shape[0],), 0, positions) > 0
    return reshape(where(hit, placed, flat), x.shape)


def _flat_positions(x: TensorBase, index: Any) -> Any:
    """The raw int64 positions in flattened `x` that PyTorch's `put` index names (negative
    ones from the end), checked."""
    backend, n = x.backend, x.numel()
    index = backend.xp.reshape(_index_array(index, backend), (-1,))
    _check_bounds(backend, index, n)
    index = backend.xp.astype(index, backend.dtype("int64"))
    return backend.xp.where(index < 0, index + n, index)


def put(x: TensorBase, index: Any, source: TensorBase, accumulate: bool = False) -> TensorBase:
    """`x` with the elements of `source` written (added, with `accumulate`) at `index` of the
    flattened `x` (PyTorch's ``put``).

    >>> import autograd_core as ag
    >>> put(ag.zeros((2, 2)), ag.asarray([0, -1]), ag.asarray([1.0, 2.0])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    x, source = _tensor("put", x), _tensor("put", source)
    positions = _flat_positions(x, index)
    if source.numel() != positions.shape[0]:
        raise ValueError(f"put: {positions.shape[0]} indices for a source of {source.numel()} elements")
    return _put_flat(x, positions, reshape(source, (-1,)), accumulate)


def index_put(x: TensorBase, indices: Sequence[Any], values: Any, accumulate: bool = False) -> TensorBase:
    """`x` with `values` written (added, with `accumulate`) at ``x[indices]`` (integer and
    boolean tensors as in indexing), out of place (PyTorch's ``index_put``).

    >>> import autograd_core as ag
    >>> index_put(ag.zeros(3), (ag.asarray([0, 0]),), ag.asarray(1.0), accumulate=True).tolist()
    [2.0, 0.0, 0.0]
    """
    x = _tensor("index_put", x)
    xp, int64 = x.backend.xp, x.backend.dtype("int64")
    numbered = TensorBase._wrap(
        xp.reshape(xp.arange(x.numel(), dtype=int64, device=x.backend.device), x.shape), x.backend
    )
    named = getitem(numbered, tuple(slice(None) if i is None else i for i in indices))
    values = values if isinstance(values, TensorBase) else creation.asarray(values, dtype=x.dtype, device=x.device)
    spread = reshape(broadcast_to(values, named.shape), (-1,))
    return _put_flat(x, xp.reshape(named.array, (-1,)), spread, accumulate)


def masked_scatter(x: TensorBase, mask: TensorBase, source: TensorBase) -> TensorBase:
    """`x` with the elements of `source`, in order, where `mask` is True, the two broadcast
    together (PyTorch's ``masked_scatter``).

    >>> import autograd_core as ag
    >>> masked_scatter(ag.zeros(3), ag.asarray([True, False, True]), ag.asarray([1.0, 2.0])).tolist()
    [1.0, 0.0, 2.0]
    """
    x, mask, source = _tensor("masked_scatter", x), _tensor("masked_scatter", mask), _tensor("masked_scatter", source)
    shape = _broadcast_shapes(x.shape, mask.shape)
    xp = x.backend.xp
    positions = xp.nonzero(xp.reshape(broadcast_to(mask, shape).array, (-1,)))[0]
    taken = int(positions.shape[0])
    if source.numel() < taken:
        raise ValueError(f"masked_scatter: the mask selects {taken} elements but source has {source.numel()}")
    values = getitem(reshape(source, (-1,)), slice(0, taken))
    return _put_flat(broadcast_to(x, shape), positions, values, accumulate=False, distinct=True)


def diagflat(x: TensorBase, offset: int = 0) -> TensorBase:
    """The flattened `x` on diagonal `offset` of a square matrix of zeros (PyTorch's ``diagflat``)."""
    flat = reshape(_tensor("diagflat", x), (-1,))
    n = flat.shape[0] + abs(offset)
    matrix = creation.zeros((n, n), dtype=flat.dtype, device=flat.device)
    return _written(matrix, lambda t: linalg.diagonal(t, offset=offset), flat)


def ravel(x: TensorBase) -> TensorBase:
    """`x` flattened to 1-D (a view where PyTorch's is one)."""
    return reshape(_tensor("ravel", x), (-1,))


def _conj(x: TensorBase) -> TensorBase:
    """The conjugate of a complex `x`; a real `x` itself, so a view stays one (as PyTorch's conj)."""
    return elementwise.conj(x) if x.dtype.is_complex else x


def conj_transpose(x: TensorBase) -> TensorBase:
    """A matrix's conjugate transpose, a 0-d tensor's conjugate (PyTorch's ``H``; a view for
    a real tensor)."""
    x = _tensor("H", x)
    if x.ndim not in (0, 2):
        raise ValueError(f"H: a matrix (2-D tensor), got shape {x.shape}; use mH for batches of matrices")
    return _conj(permute_dims(x, tuple(reversed(range(x.ndim)))))


def adjoint(x: TensorBase) -> TensorBase:
    """The conjugate transpose of the matrices over the last two dimensions (PyTorch's ``mH``
    and ``adjoint``; a view for a real tensor)."""
    return _conj(core.matrix_transpose(_tensor("adjoint", x)))
