"""`autograd_core.torch`'s shape, joining, splitting and indexing functions."""

from __future__ import annotations

from typing import Any

import autograd_core as ag
from autograd_core.torch._adapt import dim_as_axis

METHODS = (
    *("argsort", "chunk", "clone", "diag", "diag_embed", "diagonal", "diff", "flatten", "flip", "fliplr"),
    *("flipud", "gather", "index_add", "index_copy", "index_fill", "index_select", "masked_fill"),
    *("masked_scatter", "masked_select", "moveaxis", "movedim", "narrow", "nonzero", "permute"),
    *("repeat_interleave", "reshape", "roll", "scatter", "scatter_add", "scatter_reduce", "select", "sort"),
    *("split", "squeeze", "swapaxes", "swapdims", "t", "take", "tensor_split", "tile", "topk", "transpose"),
    *("tril", "triu", "unbind", "unflatten", "unique", "unsqueeze"),
)

FUNCTIONS: dict[str, Any] = {
    "cat": dim_as_axis(ag.concat),
    "concat": dim_as_axis(ag.concat),
    "concatenate": dim_as_axis(ag.concat),
    "stack": dim_as_axis(ag.stack),
}
