"""Where a view's elements would lie in its base's memory, were the base laid out as PyTorch lays
out a new tensor (row-major): the shape and strides (in elements) each view step gives. Nothing
here touches an array; `reshape` asks it whether PyTorch would return a view or a copy, `view`
whether PyTorch would refuse, `contiguous` whether PyTorch would copy, so that in-place changes
reach exactly the tensors they reach in PyTorch.

>>> row_major((2, 3))
(3, 1)
>>> reshaped((3, 2), (1, 3), (6,)) is None  # a transposed matrix flattened: PyTorch copies
True
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

Layout = tuple[tuple[int, ...], tuple[int, ...]]  # (shape, strides)

# kind of view step -> (shape, strides, argument) -> the view's (shape, strides); filled by the
# modules that make each kind of view, beside their `_VIEW_OPS` entries
LAYOUTS: dict[str, Callable[[tuple[int, ...], tuple[int, ...], Any], Layout]] = {}


def row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides of a new tensor of `shape`."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def of_steps(root_shape: tuple[int, ...], steps: tuple) -> Layout:
    """The shape and strides of the view `steps` make of a new tensor of `root_shape`."""
    shape, strides = tuple(root_shape), row_major(root_shape)
    for kind, argument in steps:
        shape, strides = LAYOUTS[kind](shape, strides, argument)
    return shape, strides


def is_contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether the elements lie in row-major order with no gaps (dims of size 1 aside)."""
    if 0 in shape:
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def reshaped(shape: tuple[int, ...], strides: tuple[int, ...], new_shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The strides of `new_shape` over the same elements, or None where no strides can say it
    (where PyTorch's ``reshape`` copies and its ``view`` refuses): PyTorch's rule, grouping the
    old dims that are contiguous with each other and splitting each group into new dims."""
    if math.prod(shape) == 0 or not shape:
        return row_major(new_shape)
    new_strides = [0] * len(new_shape)
    view_d, chunk_stride = len(new_shape) - 1, strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_stride, tensor_numel, view_numel = strides[d - 1], 1, 1
    return tuple(new_strides) if view_d == -1 else None


def _indexed(shape: tuple[int, ...], strides: tuple[int, ...], key: tuple) -> Layout:
    explicit = sum(k is not None and k is not Ellipsis for k in key)
    new_shape, new_strides, axis = [], [], 0
    for k in key:
        if k is Ellipsis:
            new_shape += shape[axis : axis + len(shape) - explicit]
            new_strides += strides[axis : axis + len(shape) - explicit]
            axis += len(shape) - explicit
        elif k is None:
            new_shape.append(1)
            new_strides.append(0)
        elif isinstance(k, slice):
            start, stop, step = k.indices(shape[axis])
            new_shape.append(len(range(start, stop, step)))
            new_strides.append(strides[axis] * step)
            axis += 1
        else:
            operator.index(k)
            axis += 1
    return tuple(new_shape), tuple(new_strides)


def _reshaped(shape: tuple[int, ...], strides: tuple[int, ...], new_shape: tuple[int, ...]) -> Layout:
    known = math.prod(n for n in new_shape if n != -1)
    new_shape = tuple(math.prod(shape) // max(known, 1) if n == -1 else n for n in new_shape)
    return new_shape, reshaped(shape, strides, new_shape)  # a step only where this is not None


def _broadcast(shape: tuple[int, ...], strides: tuple[int, ...], new_shape: tuple[int, ...]) -> Layout:
    lead = len(new_shape) - len(shape)
    kept = [0 if n != m else s for n, m, s in zip(shape, new_shape[lead:], strides)]
    return tuple(new_shape), (0,) * lead + tuple(kept)


LAYOUTS.update(
    index=_indexed,
    reshape=_reshaped,
    permute=lambda shape, strides, axes: (tuple(shape[a] for a in axes), tuple(strides[a] for a in axes)),
    broadcast=_broadcast,
    detach=lambda shape, strides, _: (shape, strides),
    data=lambda shape, strides, _: (shape, strides),
)
