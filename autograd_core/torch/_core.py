"""`autograd_core.torch`'s arithmetic, elementwise functions, reductions and statistics."""

from __future__ import annotations

from typing import Any

import autograd_core as ag
from autograd_core.torch._adapt import as_tensor

METHODS = (
    *("abs", "acos", "acosh", "add", "addcdiv", "addcmul", "addmm", "all", "allclose", "amax", "amin", "any"),
    *("argmax", "argmin", "asin", "asinh", "atan", "atanh", "bmm", "ceil", "clamp", "clip", "conj", "cos"),
    *("cosh", "count_nonzero", "cross", "cummax", "cummin", "cumprod", "cumsum", "div", "divide", "dot", "eq"),
    *("equal", "erf", "exp", "exp2", "expm1", "floor", "fmod", "frac", "ge", "greater", "greater_equal", "gt"),
    *("imag", "inner", "isclose", "isfinite", "isinf", "isnan", "kthvalue", "le", "lerp", "less", "less_equal"),
    *("log", "log10", "log1p", "log2", "log_softmax", "logcumsumexp", "logical_and", "logical_not", "logical_or"),
    *("logical_xor", "logsumexp", "lt", "matmul", "max", "maximum", "mean", "median", "min", "minimum", "mm"),
    *("mul", "multiply", "mv", "nan_to_num", "nanmean", "nansum", "ne", "neg", "negative", "norm", "outer"),
    *("pow", "prod", "real", "reciprocal", "relu", "remainder", "round", "rsqrt", "sgn", "sigmoid", "sign"),
    *("sin", "sinh", "softmax", "sqrt", "square", "std", "sub", "subtract", "sum", "tan", "tanh", "trace"),
    *("true_divide", "trunc", "var", "numel"),
)


def where(condition: Any, input: Any = None, other: Any = None) -> Any:
    """`input` where `condition` holds, else `other`; with the condition alone, its nonzero
    indices as a tuple (PyTorch's ``torch.where``)."""
    if input is None and other is None:
        return as_tensor(condition).nonzero(as_tuple=True)
    return ag.where(as_tensor(condition), input, other)


FUNCTIONS: dict[str, Any] = {
    "where": where,
}
