"""`torch.masked` over our tensors: reductions and normalisations that leave out the masked-out elements.

As PyTorch's ``torch.masked`` on strided tensors: `mask` (broadcast to the input's shape) says
which elements take part; the others are replaced by the operation's identity (0 for sum, 1
for prod, -inf for amax and softmax, +inf for amin and softmin, nan for median) before the
plain operation runs, so they get no gradient. A reduction over elements that are all masked
out gives the identity (nan for mean, median, var and std). ``mask=None`` is the plain
operation. `dim` None or ``()`` is every axis.

>>> import autograd_core.torch as torch
>>> x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> keep = torch.tensor([[True, False], [True, True]])
>>> torch.masked.sum(x, 1, mask=keep).tolist(), torch.masked.amax(x, 1, mask=keep).tolist()
([1.0, 7.0], [1.0, 4.0])
>>> round(torch.masked.mean(x, mask=keep).item(), 4)
2.6667
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import autograd_core as ag
from autograd_core.torch._adapt import as_tensor

__all__ = [
    "amax",
    "amin",
    "argmax",
    "argmin",
    "cumprod",
    "cumsum",
    "log_softmax",
    "logaddexp",
    "logsumexp",
    "mean",
    "median",
    "norm",
    "normalize",
    "prod",
    "softmax",
    "softmin",
    "std",
    "sum",
    "var",
]

Dims = int | Sequence[int] | None


# --- the mask, the identities and the axes ---------------------------------------------------------
def _mask(x: Any, mask: Any) -> Any:
    """`mask` as booleans of `x`'s shape (None stays None)."""
    if mask is None:
        return None
    mask = as_tensor(mask)
    if mask.ndim > x.ndim:
        raise IndexError("masked: the mask has more dimensions than the input; it must broadcast to the input")
    return ag.broadcast_to(ag.astype(mask, ag.bool), x.shape)


def _filled(x: Any, mask: Any, identity: float) -> Any:
    """`x` with the masked-out elements replaced by `identity`."""
    return x if mask is None else ag.where(mask, x, ag.asarray(identity, dtype=x.dtype, device=x.device))


def _axes(dim: Dims, ndim: int) -> tuple[int, ...] | None:
    """The reduced axes (None: every one; a 0-d input reduces as a whole, as PyTorch lets dim 0 or -1 name it)."""
    if dim is None or dim == () or ndim == 0:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    axes = []
    for d in dims:
        if not -ndim <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
        if d % ndim in axes:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        axes.append(d % ndim)
    return tuple(sorted(axes))


def _one_axis(dim: int, ndim: int) -> int:
    return 0 if ndim == 0 else _axes(dim, ndim)[0]


def _cast(x: Any, dtype: Any) -> Any:
    return x if dtype is None else ag.astype(x, dtype)


def _counting(x: Any) -> Any:
    """`x` in the dtype a sum of it has: integers and booleans sum in int64."""
    return x if x.dtype.is_floating_point or x.dtype.is_complex or x.dtype == ag.int64 else ag.astype(x, ag.int64)


# --- reductions -----------------------------------------------------------------------------------
def sum(input: Any, dim: Dims = None, *, keepdim: bool = False, dtype: Any = None, mask: Any = None) -> Any:  # noqa: A001
    """The sum of the masked-in elements over `dim` (0 where none is)."""
    x = as_tensor(input)
    x = _filled(_counting(_cast(x, dtype)), _mask(x, mask), 0)
    return ag.sum(x, axis=_axes(dim, x.ndim), keepdims=bool(keepdim))


def prod(input: Any, dim: Dims = None, *, keepdim: bool = False, dtype: Any = None, mask: Any = None) -> Any:
    """The product of the masked-in elements over `dim` (1 where none is)."""
    x = as_tensor(input)
    x = _filled(_counting(_cast(x, dtype)), _mask(x, mask), 1)
    return ag.prod(x, axis=_axes(dim, x.ndim), keepdims=bool(keepdim))


def cumsum(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """The running sum along `dim`, the masked-out elements counting as 0."""
    x = as_tensor(input)
    x = _filled(_cast(x, dtype), _mask(x, mask), 0)
    return x.cumsum(_one_axis(dim, x.ndim)) if x.ndim else x


def cumprod(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """The running product along `dim`, the masked-out elements counting as 1."""
    x = as_tensor(input)
    x = _filled(_cast(x, dtype), _mask(x, mask), 1)
    return x.cumprod(_one_axis(dim, x.ndim)) if x.ndim else x


def _extreme(largest: bool) -> Any:
    identity = -math.inf if largest else math.inf
    reduce = ag.max if largest else ag.min

    def extreme(input: Any, dim: Dims = None, *, keepdim: bool = False, dtype: Any = None, mask: Any = None) -> Any:
        x = as_tensor(input)
        out = reduce(_filled(x, _mask(x, mask), identity), axis=_axes(dim, x.ndim), keepdims=bool(keepdim))
        return _cast(out, dtype)

    extreme.__name__ = extreme.__qualname__ = "amax" if largest else "amin"
    extreme.__doc__ = (
        f"The {'largest' if largest else 'smallest'} masked-in element over `dim` ({identity} where none is)."
    )
    return extreme


def _position(largest: bool) -> Any:
    identity = -math.inf if largest else math.inf
    find = ag.argmax if largest else ag.argmin

    def position(
        input: Any, dim: int | None = None, *, keepdim: bool = False, dtype: Any = None, mask: Any = None
    ) -> Any:
        x = as_tensor(input)
        filled = _filled(x, _mask(x, mask), identity)
        axis = None if dim is None or x.ndim == 0 else _one_axis(dim, x.ndim)
        # PyTorch's masked argmax/argmin return the indices in the input's dtype
        return ag.astype(find(filled, axis=axis, keepdims=bool(keepdim) and axis is not None), dtype or x.dtype)

    position.__name__ = position.__qualname__ = "argmax" if largest else "argmin"
    position.__doc__ = f"The index of the {'largest' if largest else 'smallest'} masked-in element along `dim`."
    return position


amax, amin = _extreme(True), _extreme(False)
argmax, argmin = _position(True), _position(False)


def _count(x: Any, mask: Any, axes: tuple[int, ...] | None, keepdim: bool) -> Any:
    """How many elements are masked in over `axes`, in `x`'s dtype."""
    if mask is None:  # the same count everywhere: a 0-d tensor broadcasts to any shape
        kept = [x.shape[a] for a in (range(x.ndim) if axes is None else axes)]
        return ag.asarray(float(math.prod(kept)), dtype=x.dtype, device=x.device)
    return ag.astype(ag.sum(ag.astype(mask, ag.int64), axis=axes, keepdims=keepdim), x.dtype)


def mean(input: Any, dim: Dims = None, *, keepdim: bool = False, dtype: Any = None, mask: Any = None) -> Any:
    """The mean of the masked-in elements over `dim` (nan where none is)."""
    x = _cast(as_tensor(input), dtype)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise ValueError(
            f"mean(): Could not infer output dtype. Input dtype must be floating point or complex, got {x.dtype}"
        )
    mask, axes = _mask(x, mask), _axes(dim, x.ndim)
    total = ag.sum(_filled(x, mask, 0), axis=axes, keepdims=bool(keepdim))
    return total / _count(x, mask, axes, bool(keepdim))


def median(input: Any, dim: int = -1, *, keepdim: bool = False, dtype: Any = None, mask: Any = None) -> Any:
    """The lower median of the masked-in elements along `dim` (PyTorch's nanmedian of the
    input with nan at the masked-out elements; nan where none is masked in)."""
    x = as_tensor(input)
    if not x.dtype.is_floating_point:
        x = ag.astype(x, ag.float32)
    x = _filled(x, _mask(x, mask), math.nan)
    if x.ndim == 0:
        return x
    axis = _one_axis(dim, x.ndim)
    ordered = ag.sort(x, axis=axis)  # nan last
    valid = ag.sum(ag.astype(~ag.isnan(x), ag.int64), axis=axis, keepdims=True)
    middle = ag.clip((valid - 1) // 2, min=0)
    out = ag.take_along_axis(ordered, middle, axis=axis)
    return out if keepdim else ag.squeeze(out, axis=axis)


def logsumexp(input: Any, dim: Dims = None, *, keepdim: bool = False, dtype: Any = None, mask: Any = None) -> Any:
    """log(sum(exp(x))) of the masked-in elements over `dim` (-inf where none is)."""
    x = as_tensor(input)
    filled = _filled(x, _mask(x, mask), -math.inf)
    axes = _axes(dim, x.ndim)
    return _cast(filled.logsumexp(dim=tuple(range(x.ndim)) if axes is None else axes, keepdim=bool(keepdim)), dtype)


def logaddexp(input: Any, other: Any, *, dtype: Any = None, input_mask: Any = None, other_mask: Any = None) -> Any:
    """log(exp(input) + exp(other)), each masked-out element counting as -inf."""
    x, y = as_tensor(input), as_tensor(other)
    return _cast(
        ag.logaddexp(_filled(x, _mask(x, input_mask), -math.inf), _filled(y, _mask(y, other_mask), -math.inf)), dtype
    )


def norm(
    input: Any, ord: float | None = 2.0, dim: Dims = None, *, keepdim: bool = False, dtype: Any = None, mask: Any = None
) -> Any:
    """The vector `ord`-norm of the masked-in elements over `dim`."""
    x = _cast(as_tensor(input), dtype)
    ord = 2.0 if ord is None else ord
    filled = _filled(x, _mask(x, mask), math.inf if ord == -math.inf else 0)
    return ag.linalg.vector_norm(filled, axis=_axes(dim, x.ndim), keepdims=bool(keepdim), ord=ord)


def _spread(take_sqrt: bool) -> Any:
    def spread(
        input: Any,
        dim: Dims = None,
        unbiased: bool | None = None,
        *,
        correction: float | None = None,
        keepdim: bool = False,
        dtype: Any = None,
        mask: Any = None,
    ) -> Any:
        if unbiased is not None and correction is not None:
            raise ValueError("Only one of unbiased and correction may be given")
        correction = (1.0 if unbiased is None or unbiased else 0.0) if correction is None else float(correction)
        x = as_tensor(input)
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            x = ag.astype(x, ag.float32)
        x = _cast(x, dtype)
        mask, axes = _mask(x, mask), _axes(dim, x.ndim)
        centred = x - ag.sum(_filled(x, mask, 0), axis=axes, keepdims=True) / _count(x, mask, axes, True)
        total = ag.sum(_filled(centred * ag.conj(centred), mask, 0), axis=axes, keepdims=bool(keepdim))
        out = total / ag.clip(_count(x, mask, axes, bool(keepdim)) - correction, min=0.0)
        return ag.sqrt(out) if take_sqrt else out

    spread.__name__ = spread.__qualname__ = "std" if take_sqrt else "var"
    spread.__doc__ = f"The {'standard deviation' if take_sqrt else 'variance'} of the masked-in elements over `dim`."
    return spread


var, std = _spread(False), _spread(True)


# --- normalisations ------------------------------------------------------------------------------
def softmax(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """The softmax along `dim` over the masked-in elements (0 at the others; nan where none is)."""
    x = _cast(as_tensor(input), dtype)
    filled = _filled(x, _mask(x, mask), -math.inf)
    return filled.softmax(_one_axis(dim, x.ndim)) if x.ndim else filled.softmax(0)


def log_softmax(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """The log-softmax along `dim` over the masked-in elements (-inf at the others)."""
    x = _cast(as_tensor(input), dtype)
    filled = _filled(x, _mask(x, mask), -math.inf)
    return filled.log_softmax(_one_axis(dim, x.ndim)) if x.ndim else filled.log_softmax(0)


def softmin(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """The softmax of -input along `dim` over the masked-in elements."""
    x = _cast(as_tensor(input), dtype)
    filled = -_filled(x, _mask(x, mask), math.inf)
    return filled.softmax(_one_axis(dim, x.ndim)) if x.ndim else filled.softmax(0)


def normalize(input: Any, ord: float, dim: int, *, eps: float = 1e-12, dtype: Any = None, mask: Any = None) -> Any:
    """The masked-in elements over their `ord`-norm along `dim` (at least `eps`); 0 at the others."""
    x = _cast(as_tensor(input), dtype)
    size = norm(x, ord, dim, keepdim=True, mask=mask)
    return _filled(x, _mask(x, mask), 0) / ag.clip(size, min=eps)
