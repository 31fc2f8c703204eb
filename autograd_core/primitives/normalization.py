"""Layer norm and training-mode batch norm: each a forward kernel that also returns the
statistics its backward reuses, and a backward kernel per part, whose differentiable form
recomputes the statistics from `x` so that the gradient can be differentiated again."""

from __future__ import annotations

import math
from typing import Any

from autograd_core.graph.registry import Primitive
from autograd_core.primitives.linear import tangent_sum


def standardized(ns: Any, x: Any, axes: tuple[int, ...], eps: float) -> tuple[Any, Any]:
    """`x` centred and scaled to unit (biased) variance over `axes`, and 1/std."""
    centred = x - ns.mean(x, axis=axes, keepdims=True)
    inverse_std = 1 / ns.sqrt(ns.mean(centred * centred, axis=axes, keepdims=True) + eps)
    return centred * inverse_std, inverse_std


def standardized_grad(ns: Any, g_normal: Any, normal: Any, inverse_std: Any, axes: tuple[int, ...]) -> Any:
    """The gradient of `x` through its standardisation over `axes` (`normal`, with 1/std
    `inverse_std`), given the gradient `g_normal` of the standardised values."""
    return inverse_std * (
        g_normal
        - ns.mean(g_normal, axis=axes, keepdims=True)
        - normal * ns.mean(g_normal * normal, axis=axes, keepdims=True)
    )


def affine_tangent(
    ns: Any, d_normal: Any, normal: Any, weight: Any, d_weight: Any, d_bias: Any, shape: tuple[int, ...]
) -> Any:
    """The tangent of ``normal * weight + bias`` (weight and bias shaped to broadcast, or None)
    from those of its three parts (None where a part has none)."""
    scaled = d_normal if d_normal is None or weight is None else d_normal * weight
    return tangent_sum(ns, (scaled, None if d_weight is None else normal * d_weight, d_bias), shape)


def batch_axes(x: Any) -> tuple[int, ...]:
    """The axes batch norm reduces over: all but the channels (axis 1)."""
    return (0, *range(2, x.ndim))


def per_channel(ns: Any, t: Any, ndim: int) -> Any:
    """A (C,) array or tensor shaped (C, 1, ...) to broadcast over an (N, C, ...) input."""
    return ns.reshape(t, (-1,) + (1,) * (ndim - 2))


def _trailing(x: Any, normalized_shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(range(x.ndim - len(normalized_shape), x.ndim))


# --- layer norm ---------------------------------------------------------------------------
def _layer_norm_backward(
    ns: Any, grad: Any, x: Any, normalized_shape: tuple[int, ...], weight: Any, eps: float, stats: Any, part: str
) -> Any:
    """The gradient of `layer_norm`'s `part` from the forward's `stats` (mean, 1/std):
    "input", or "weight" (of the input's shape: the engine sums it over the leading axes;
    a kernel may return it summed)."""
    mean, inverse_std = stats
    normal = (x - mean) * inverse_std
    if part == "weight":
        return grad * normal
    return standardized_grad(
        ns, grad if weight is None else grad * weight, normal, inverse_std, _trailing(x, normalized_shape)
    )


def _layer_norm_backward_recomputed(
    ns: Any, grad: Any, x: Any, normalized_shape: tuple[int, ...], weight: Any, eps: float, stats: Any, part: str
) -> Any:
    return _layer_norm_backward(
        ns, grad, x, normalized_shape, weight, eps, _moments(ns, x, normalized_shape, eps), part
    )


def _moments(ns: Any, x: Any, normalized_shape: tuple[int, ...], eps: float) -> tuple[Any, Any]:
    axes = _trailing(x, normalized_shape)
    mean = ns.mean(x, axis=axes, keepdims=True)
    centred = x - mean
    return mean, 1 / ns.sqrt(ns.mean(centred * centred, axis=axes, keepdims=True) + eps)


layer_norm_backward = Primitive(
    "layer_norm_backward", _layer_norm_backward, differentiable=_layer_norm_backward_recomputed
)


def _layer_norm(
    ns: Any, x: Any, weight: Any, bias: Any, normalized_shape: tuple[int, ...], eps: float
) -> tuple[Any, tuple[Any, Any]]:
    """`x` normalised over its trailing `normalized_shape` axes (biased variance), then
    scaled by `weight` and shifted by `bias` where they are given; and the statistics
    `layer_norm_backward` reuses: the mean and 1/std, of x's shape with those axes of size 1."""
    mean, inverse_std = _moments(ns, x, normalized_shape, eps)
    out = (x - mean) * inverse_std
    out = out if weight is None else out * weight
    return (out if bias is None else out + bias), (mean, inverse_std)


def _layer_norm_tangent(
    ns: Any,
    tangents: tuple,
    out: Any,
    x: Any,
    weight: Any,
    bias: Any,
    normalized_shape: tuple[int, ...],
    eps: float,
    stats: Any,
) -> Any:
    """Standardisation's Jacobian is symmetric (``1/std (I - 11^T/n - normal normal^T/n)`` over
    the normalised axes), so `standardized_grad` maps the tangent of `x` to that of the
    standardised values as it maps a gradient. The statistics are recomputed from `x`: `stats`
    are raw arrays, which a tangent computed on tensors could not differentiate."""
    dx, d_weight, d_bias = tangents[:3]
    axes = _trailing(x, normalized_shape)
    mean, inverse_std = _moments(ns, x, normalized_shape, eps)
    normal = (x - mean) * inverse_std
    d_normal = None if dx is None else standardized_grad(ns, dx, normal, inverse_std, axes)
    return affine_tangent(ns, d_normal, normal, weight, d_weight, d_bias, tuple(out.shape))


layer_norm = Primitive(  # the engine sums the weight's and bias's gradients over the leading axes
    "layer_norm",
    _layer_norm,
    vjps=tuple(
        lambda ns, g, out, x, weight, bias, shape, eps, stats, part=part: layer_norm_backward(
            ns, g, x, shape, weight, eps, stats, part
        )
        for part in ("input", "weight")
    )
    + (lambda ns, g, out, x, weight, bias, shape, eps, stats: g, None, None, None),
    jvp=_layer_norm_tangent,
    side_outputs=1,
)


# --- batch norm ---------------------------------------------------------------------------
def _batch_norm_backward(ns: Any, grad: Any, x: Any, weight: Any, mean: Any, var: Any, eps: float, part: str) -> Any:
    """The gradient of `batch_norm`'s `part` ("input", "weight" or "bias") from the
    output's gradient and the forward's batch `mean` and `var` (C,)."""
    axes, channel = batch_axes(x), (-1,) + (1,) * (x.ndim - 2)
    if part == "bias":
        return ns.sum(grad, axis=axes)
    inverse_std = 1 / ns.sqrt(var + eps)
    centred = x - ns.reshape(mean, channel)
    g_centred = ns.sum(grad * centred, axis=axes)
    if part == "weight":
        return g_centred * inverse_std
    # With s = weight / std: grad * s - mean(grad) * s - centred * s * mean(grad * centred) / var,
    # per-channel factors computed first so the full-size arrays are passed over few times.
    scale = inverse_std if weight is None else weight * inverse_std
    slope = ns.reshape(scale * inverse_std * inverse_std * g_centred / (math.prod(x.shape) // x.shape[1]), channel)
    return (grad - ns.mean(grad, axis=axes, keepdims=True)) * ns.reshape(scale, channel) - centred * slope


def _batch_norm_backward_recomputed(
    ns: Any, grad: Any, x: Any, weight: Any, mean: Any, var: Any, eps: float, part: str
) -> Any:
    axes = batch_axes(x)
    if part == "bias":
        return ns.sum(grad, axis=axes)
    normal, inverse_std = standardized(ns, x, axes, eps)
    if part == "weight":
        return ns.sum(grad * normal, axis=axes)
    g_normal = grad if weight is None else grad * per_channel(ns, weight, x.ndim)
    return standardized_grad(ns, g_normal, normal, inverse_std, axes)


batch_norm_backward = Primitive(
    "batch_norm_backward", _batch_norm_backward, differentiable=_batch_norm_backward_recomputed
)


def _batch_norm(ns: Any, x: Any, weight: Any, bias: Any, eps: float) -> tuple[Any, Any, Any]:
    """`x` (N, C, ...) normalised per channel by its batch statistics, scaled by `weight`
    and shifted by `bias` where given; and the channels' mean and biased variance (C,)."""
    axes, channel = batch_axes(x), (-1,) + (1,) * (x.ndim - 2)
    mean = ns.mean(x, axis=axes, keepdims=True)
    centred = x - mean
    var = ns.mean(centred * centred, axis=axes, keepdims=True)
    scale = 1 / ns.sqrt(var + eps)  # per channel, so the full-size array is passed over once
    out = centred * (scale if weight is None else scale * ns.reshape(weight, channel))
    out = out if bias is None else out + ns.reshape(bias, channel)
    return out, ns.reshape(mean, (-1,)), ns.reshape(var, (-1,))


def _batch_norm_tangent(
    ns: Any, tangents: tuple, out: Any, x: Any, weight: Any, bias: Any, eps: float, mean: Any, var: Any
) -> Any:
    """As layer norm's, over the batch axes; the batch statistics recomputed from `x` (`mean`
    and `var` are constants)."""
    dx, d_weight, d_bias = tangents[:3]
    axes = batch_axes(x)
    normal, inverse_std = standardized(ns, x, axes, eps)
    d_normal = None if dx is None else standardized_grad(ns, dx, normal, inverse_std, axes)
    weight, d_weight, d_bias = (None if t is None else per_channel(ns, t, x.ndim) for t in (weight, d_weight, d_bias))
    return affine_tangent(ns, d_normal, normal, weight, d_weight, d_bias, tuple(out.shape))


batch_norm = Primitive(  # the backward kernels reuse the forward's batch statistics
    "batch_norm",
    _batch_norm,
    vjps=tuple(
        lambda ns, g, out, x, weight, bias, eps, mean, var, part=part: batch_norm_backward(
            ns, g, x, weight, mean, var, eps, part
        )
        for part in ("input", "weight", "bias")
    )
    + (None, None, None),
    jvp=_batch_norm_tangent,
    side_outputs=2,
)
