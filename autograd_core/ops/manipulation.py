"""The standard's manipulation functions beyond those in `ops` (reshape, permute_dims,
expand_dims, squeeze, broadcast_to, concat, stack), and `take_along_axis`; all differentiable.

Two are primitives with their own VJP: `flip` (undone by the same flip) and `roll` (undone by
rolling back). The others are compositions of differentiable ops, so their gradients follow:
`repeat` and `tile` sum the copies, `unstack` is indexing, `take_along_axis` is one `take` of
the flattened tensor, whose gradient is a scatter-add (right with repeated indices).

Beyond the standard, as PyTorch has them: `masked_fill` (a `where`), and `split` and `chunk`
(slices, so views).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from autograd_core.graph.registry import Primitive
from autograd_core.graph.tensor_base import TensorBase
from autograd_core.ops import core, layout
from autograd_core.ops.core import (
    _broadcast_shapes,
    _cast,
    _check_bounds,
    _index_array,
    _tensor,
    broadcast_to,
    expand_dims,
    getitem,
    permute_dims,
    reshape,
    take,
    where,
)

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
    axes = _positions(axis, x.ndim)
    return _FLIP.bind(x, axes)


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
    """`x` with `value` (a scalar or a 0-d tensor) where the boolean `mask` (broadcast to x's
    shape) is True, in x's dtype (PyTorch's `masked_fill`); no gradient flows to `x` there.

    >>> import autograd_core as ag
    >>> ag.masked_fill(ag.asarray([1.0, 2.0, 3.0]), ag.asarray([False, True, False]), -1.0).tolist()
    [1.0, -1.0, 3.0]
    """
    x = _tensor("masked_fill", x)
    if isinstance(mask, TensorBase) and mask.dtype != "bool":
        raise TypeError(f"masked_fill: the mask must be boolean, got {mask.dtype.name}")
    if isinstance(value, TensorBase) and value.ndim:
        raise ValueError(f"masked_fill: value must be a scalar or a 0-d tensor, got shape {value.shape}")
    filled = broadcast_to(where(mask, value, x), x.shape)
    return filled if filled.dtype == x.dtype else _cast(filled, x.dtype)


def unfold(x: TensorBase, dimension: int, size: int, step: int) -> TensorBase:
    """Every window of `size` elements along `dimension`, `step` apart, as a new last dimension
    (PyTorch's ``Tensor.unfold``): a view of `x`, which in-place changes can write through
    unless its windows overlap (``step < size``), as in PyTorch.

    >>> import autograd_core as ag
    >>> unfold(ag.arange(5), 0, 2, 2).tolist()
    [[0, 1], [2, 3]]
    """
    dim = dimension % max(x.ndim, 1)
    count = (x.shape[dim] - size) // step + 1 if size >= 1 and step >= 1 else 0
    if count < 1:
        raise ValueError(f"unfold: no window of size {size}, step {step} fits dimension {dim} of {x.shape}")
    before, after = x.shape[:dim], x.shape[dim + 1 :]
    if step >= size:  # apart: slices and reshapes of `x`, so a view like any other
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
