"""Standardisation, ``(x - mean) / sqrt(var + eps)`` over some axes, and its gradient: the
rule layer norm and batch norm share, written against a namespace argument like every VJP.
Also the tensor twin of the backend's batch-norm backward kernel."""

from __future__ import annotations

from typing import Any

import autograd_core as ag
from autograd_core.tensor import Tensor


def standardized(ns: Any, x: Any, axes: tuple[int, ...], eps: float) -> tuple[Any, Any]:
    """`x` centred and scaled to unit (biased) variance over `axes`, and 1/std."""
    centred = x - ns.mean(x, axis=axes, keepdims=True)
    inverse_std = 1 / ns.sqrt(ns.mean(centred * centred, axis=axes, keepdims=True) + eps)
    return centred * inverse_std, inverse_std


def standardized_grad(ns: Any, g_normal: Any, x: Any, axes: tuple[int, ...], eps: float) -> Any:
    """The gradient of `x` through its standardisation over `axes`, given the gradient
    `g_normal` of the standardised values."""
    normal, inverse_std = standardized(ns, x, axes, eps)
    return inverse_std * (
        g_normal
        - ns.mean(g_normal, axis=axes, keepdims=True)
        - normal * ns.mean(g_normal * normal, axis=axes, keepdims=True)
    )


def batch_axes(x: Any) -> tuple[int, ...]:
    """The axes batch norm reduces over: all but the channels (axis 1)."""
    return (0, *range(2, x.ndim))


def per_channel(ns: Any, t: Any, ndim: int) -> Any:
    """A (C,) array or tensor shaped (C, 1, ...) to broadcast over an (N, C, ...) input."""
    return ns.reshape(t, (-1,) + (1,) * (ndim - 2))


def _layer_norm_backward(
    grad: Tensor, x: Tensor, normalized_shape: tuple[int, ...], weight: Tensor | None, eps: float, stats: Any, part: str
) -> Tensor:
    """The gradient of layer norm's `part` ("input" or "weight", the latter of the input's
    shape), on tensors: the twin of `Backend.layer_norm_backward`. The statistics are
    recomputed from `x` (not taken from `stats`) so that it is differentiable in `x` too."""
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    if part == "weight":
        return grad * standardized(ag, x, axes, eps)[0]
    return standardized_grad(ag, grad if weight is None else grad * weight, x, axes, eps)


def _batch_norm_backward(
    grad: Tensor, x: Tensor, weight: Tensor | None, mean: Any, var: Any, eps: float, part: str
) -> Tensor:
    """The gradient of training-mode batch norm's `part` ("input", "weight" or "bias"), on
    tensors. The statistics are recomputed from `x` so that this gradient is differentiable
    in `x` too; the raw twin (`Backend.batch_norm_backward`) reuses the forward's `mean`, `var`."""
    axes = batch_axes(x)
    if part == "bias":
        return ag.sum(grad, axis=axes)
    if part == "weight":
        return ag.sum(grad * standardized(ag, x, axes, eps)[0], axis=axes)
    return standardized_grad(ag, grad if weight is None else grad * per_channel(ag, weight, x.ndim), x, axes, eps)
