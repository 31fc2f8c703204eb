"""Putting samples together into a batch, as PyTorch's ``torch.utils.data._utils.collate``:
`default_collate` (what a DataLoader with a batch size uses), `default_convert` (without one),
and `collate` with its table of functions per element type, `default_collate_fn_map`, which
a custom collate can extend.

Tensors, numpy arrays and numbers become tensors of the current backend (the one
``backends.current()`` names when the function runs); strings and bytes stay as they are;
dicts, named tuples, lists and tuples are walked as PyTorch walks them.

>>> default_collate([{"x": 1.0, "y": 0}, {"x": 2.0, "y": 1}])["x"].dtype
autograd_core.float64
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable
from typing import Any

import numpy as np

import autograd_core as ag

CollateFnMap = dict[type | tuple[type, ...], Callable[..., Any]]

_STRING_OR_OBJECT = re.compile(r"[SaUO]")  # numpy dtype codes no tensor holds
default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _is_numpy_value(data: Any) -> bool:
    """A numpy array or numpy scalar that a tensor can hold (not strings or objects)."""
    if isinstance(data, np.ndarray):
        return _STRING_OR_OBJECT.search(data.dtype.str) is None
    return isinstance(data, np.bool_ | np.number)


def _rebuilt(like: Any, values: dict | list) -> Any:
    """`values` in the container type of `like`: a copy of a mutable one updated, else its type
    called on them, else a plain dict or list (PyTorch's rule for Mappings and Sequences)."""
    try:
        if isinstance(like, collections.abc.MutableMapping | collections.abc.MutableSequence):
            clone = copy.copy(like)
            if isinstance(clone, collections.abc.MutableMapping):
                clone.update(values)
            else:
                clone[:] = values
            return clone
        return type(like)(values)
    except TypeError:
        return values


def default_convert(data: Any) -> Any:
    """Each numpy array (or numpy number) in `data` made a tensor of the current backend;
    containers walked as `default_collate` walks them (a tuple becomes a list, as in PyTorch);
    everything else unchanged. What a DataLoader with ``batch_size=None`` applies per sample.

    >>> import numpy as np
    >>> default_convert({"x": np.array([0, 1]), "n": 3})
    {'x': tensor([0, 1]), 'n': 3}
    """
    if isinstance(data, ag.Tensor):
        return data
    if _is_numpy_value(data):
        return ag.asarray(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuilt(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a named tuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, str | bytes):
        return _rebuilt(data, [default_convert(d) for d in data])
    return data


def collate(batch: list | tuple, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """`batch` (a list of samples) as one batch: the function `collate_fn_map` gives for the
    type of the first sample (its exact type, else the first entry it is an instance of), else
    a mapping, named tuple or sequence collated field by field.

    >>> collate([(1, "a"), (2, "b")], collate_fn_map=default_collate_fn_map)
    [tensor([1, 2]), ('a', 'b')]
    """
    elem = batch[0]
    if collate_fn_map is not None:
        kind = type(elem)
        if kind in collate_fn_map:
            return collate_fn_map[kind](batch, collate_fn_map=collate_fn_map)
        for key, fn in collate_fn_map.items():
            if isinstance(elem, key):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuilt(elem, {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a named tuple
        return type(elem)(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(sample) != len(elem) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        return fields if isinstance(elem, tuple) else _rebuilt(elem, fields)
    raise TypeError(default_collate_err_msg_format.format(type(elem)))


def _check_same_shapes(shapes: list[tuple[int, ...]]) -> None:
    for i, shape in enumerate(shapes):
        if shape != shapes[0]:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shapes[0])} at entry 0 and {list(shape)} "
                f"at entry {i}; pad the samples to one shape or pass a collate_fn that batches them"
            )


def collate_tensor_fn(batch: list, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Tensors stacked along a new first axis, on their backend."""
    _check_same_shapes([tuple(t.shape) for t in batch])
    return ag.stack(batch)


def collate_numpy_array_fn(batch: list, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Numpy arrays stacked on the host, then one tensor of the current backend."""
    if not _is_numpy_value(batch[0]):
        raise TypeError(default_collate_err_msg_format.format(batch[0].dtype))
    _check_same_shapes([b.shape for b in batch])
    return ag.asarray(np.stack(batch))


def collate_numpy_scalar_fn(batch: list, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Numpy numbers as one tensor of their dtype."""
    return ag.asarray(np.array(batch))


def collate_float_fn(batch: list, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Python floats as a float64 tensor (PyTorch's choice)."""
    return ag.tensor(batch, dtype=ag.float64)


def collate_int_fn(batch: list, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Python ints (or bools) as a tensor, by PyTorch's rule for Python values."""
    return ag.tensor(batch)


def collate_str_fn(batch: list, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Strings and bytes stay a list."""
    return batch


default_collate_fn_map: CollateFnMap = {
    ag.Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: list) -> Any:
    """Samples stacked into a batch along a new first axis, as PyTorch's ``default_collate``:
    tensors, numpy arrays and numbers become one tensor of the current backend (Python floats
    float64, ints int64), strings stay a list, and dicts, named tuples and sequences are
    collated field by field (a tuple gives a list).

    >>> default_collate([(0, 1.5), (1, 2.5)])
    [tensor([0, 1]), tensor([1.5, 2.5], dtype=float64)]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


__all__ = [
    "collate",
    "collate_float_fn",
    "collate_int_fn",
    "collate_numpy_array_fn",
    "collate_numpy_scalar_fn",
    "collate_str_fn",
    "collate_tensor_fn",
    "default_collate",
    "default_collate_err_msg_format",
    "default_collate_fn_map",
    "default_convert",
]
