"""`autograd_core.torch`'s shape, joining, splitting and indexing functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import autograd_core as ag
from autograd_core.ops import manipulation
from autograd_core.torch._adapt import as_tensor, dim_as_axis, method
from nn.spatial import grid_sampler_2d, grid_sampler_3d, pad

METHODS = (
    *("argsort", "argwhere", "chunk", "clone", "diag", "diag_embed", "diagflat", "diagonal", "diagonal_scatter"),
    *("diff", "dsplit", "flatten", "flip", "fliplr", "flipud", "gather", "hsplit", "index_add", "index_copy"),
    *("index_fill", "index_put", "index_reduce", "index_select", "kron", "masked_fill", "masked_scatter"),
    *("masked_select", "moveaxis", "movedim", "narrow", "nonzero", "nonzero_static", "permute", "put", "ravel"),
    *("repeat_interleave", "reshape", "roll", "rot90", "scatter", "scatter_add", "scatter_reduce", "select"),
    *("select_scatter", "slice_scatter", "sort", "split", "squeeze", "swapaxes", "swapdims", "t", "take"),
    *("take_along_dim", "tensor_split", "tile", "topk", "transpose", "tril", "triu", "unbind", "unflatten"),
    *("unique", "unique_consecutive", "unsqueeze", "vsplit", "adjoint"),
)


def _copy_of(name: str) -> Callable[..., Any]:
    """PyTorch's ``{name}_copy``: the Tensor method `name`'s result (each of them, for a
    tuple), as tensors of their own rather than views."""

    def call(input: Any, *args: Any, **kwargs: Any) -> Any:
        out = getattr(as_tensor(input), name)(*args, **kwargs)
        return tuple(t.clone() for t in out) if isinstance(out, tuple) else out.clone()

    call.__name__ = call.__qualname__ = f"{name}_copy"
    call.__doc__ = f"``input.{name}(*args, **kwargs)``, copied out of `input`'s storage."
    return call


def _tensors(tensors: tuple[Any, ...]) -> list[Any]:
    """PyTorch's ``f(a, b)`` or ``f([a, b])``: the tensors either way."""
    return list(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else list(tensors)


def _atleast(ndim: int) -> Callable[..., Any]:
    """``atleast_{ndim}d``: one tensor for one tensor, a tuple for several or a sequence."""

    def call(*tensors: Any) -> Any:
        made = tuple(manipulation.atleast(as_tensor(t), ndim) for t in _tensors(tensors))
        return made[0] if len(tensors) == 1 and not isinstance(tensors[0], (list, tuple)) else made

    call.__name__ = call.__qualname__ = f"atleast_{ndim}d"
    return call


def stack(tensors: Any, dim: int = 0) -> Any:
    return ag.stack(list(tensors), axis=dim)


def constant_pad_nd(input: Any, pad_: Any, value: float = 0) -> Any:
    """`input` padded (cropped where negative) by `pad_`'s pairs, the last dimension first, with `value`."""
    return pad(as_tensor(input), pad_, value=value)


FUNCTIONS: dict[str, Any] = {
    "grid_sampler_2d": grid_sampler_2d,
    "grid_sampler_3d": grid_sampler_3d,
    **{name: dim_as_axis(manipulation.cat, dim="axis", axis="dim") for name in ("cat", "concat", "concatenate")},
    "stack": stack,
    "hstack": manipulation.hstack,
    "vstack": manipulation.vstack,
    "row_stack": manipulation.vstack,
    "dstack": manipulation.dstack,
    "column_stack": manipulation.column_stack,
    "broadcast_tensors": lambda *tensors: tuple(ag.broadcast_arrays(*tensors)),
    "block_diag": manipulation.block_diag,
    "cartesian_prod": manipulation.cartesian_prod,
    "combinations": manipulation.combinations,
    "atleast_1d": _atleast(1),
    "atleast_2d": _atleast(2),
    "atleast_3d": _atleast(3),
    "slice": manipulation.slice_along,
    "constant_pad_nd": constant_pad_nd,
    "unsafe_chunk": method("chunk"),
    "unsafe_split": method("split"),
    "split_with_sizes": method("split"),
    "split_with_sizes_copy": _copy_of("split"),
    "alias_copy": method("clone"),
    "view_copy": _copy_of("reshape"),
    **{f"{name}_copy": _copy_of(name) for name in ("expand", "diagonal", "narrow", "permute", "unbind", "unfold")},
    **{f"{name}_copy": _copy_of(name) for name in ("squeeze", "unsqueeze", "transpose", "t")},
}
