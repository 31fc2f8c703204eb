"""The functions the rest of `nn.functional` builds on: `linear`, `layer_norm`, `dropout` and
the dtype check of layers. They sit below `nn.functional`, `nn.attention`, `nn.convolution`,
`nn.normalization` and `nn.spatial`, which import them; `nn.functional` re-exports them."""

from __future__ import annotations

from collections.abc import Callable

import autograd_core as ag
from autograd_core import primitives as P
from autograd_core.autodiff.tensor import Tensor
from autograd_core.graph.registry import common_backend
from backends.contract import mask_stream


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ weight.T + bias`` with weight of shape (out_features, in_features).

    One primitive rather than matmul of a transpose: its weight gradient ``g^T x`` is
    computed in the weight's own layout, where the transpose of ``x^T g`` would be a
    strided view that slows every optimizer pass over it.
    """
    out_features, in_features = weight.shape
    if x.shape[-1:] != (in_features,):
        raise ValueError(f"linear: input shape {x.shape} does not end with in_features={in_features}")
    common_backend("linear", *(t for t in (x, weight, bias) if t is not None))
    check_same_dtype("linear", x, weight)
    return P.linear.bind(x, weight, bias, saved=(x, weight))


def layer_norm(
    x: Tensor,
    normalized_shape: tuple[int, ...] | int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise over the trailing `normalized_shape` axes with the biased variance, then scale
    by `weight` and shift by `bias`: one primitive (the backend's fused kernel where it has one)."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if x.shape[x.ndim - len(shape) :] != shape:
        raise ValueError(f"layer_norm: input shape {x.shape} does not end with normalized_shape {shape}")
    common_backend("layer_norm", *(t for t in (x, weight, bias) if t is not None))
    check_same_dtype("layer_norm", x, weight)
    if x.dtype == "float16":
        return in_float32(lambda *wide: layer_norm(wide[0], shape, *wide[1:], eps=eps), x, weight, bias)
    out, _ = P.layer_norm.bind(x, weight, bias, shape, eps, saved=(x, weight))
    return out


def in_float32(compute: Callable[..., Tensor], *tensors: Tensor | None) -> Tensor:
    """``compute(*tensors)`` for float16 `tensors` run in float32 and its result cast back to
    float16, as PyTorch's float16 kernels accumulate (a float16 sum of a few thousand values
    overflows or loses every bit of the smaller ones). The casts are differentiable."""
    wide = [None if t is None else ag.astype(t, "float32") for t in tensors]
    return ag.astype(compute(*wide), "float16")


def check_same_dtype(layer: str, x: Tensor, weight: Tensor | None) -> None:
    """Refuse an input of another float dtype than the layer's weights (as PyTorch does)."""
    if weight is not None and x.array.dtype != weight.array.dtype and x.dtype != weight.dtype:
        raise TypeError(
            f"{layer}: the input is {x.dtype.name} but the weights are {weight.dtype.name}; convert "
            f"one: x.astype(...) or model.to(dtype=...) (model.double() for float64)"
        )


def check_mask_is_drawn_per_call(x: Tensor) -> None:
    """Refuse a dropout mask inside a trace that does not draw it per call: one that does not
    take the mask stream as an input (ONNX export, a foreign jit) would freeze one mask."""
    if x.backend.is_traced(x.array) and not mask_stream.in_trace():
        raise RuntimeError(
            "dropout in a trace that freezes its mask: only ag.compile passes the mask stream into a trace; "
            "export a model in eval() mode, or run this step through ag.compile or eagerly"
        )


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability `p` and scale the rest by 1/(1-p) (training only)."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    if not training or p == 0:
        return x
    if p == 1:
        return x * 0.0
    check_mask_is_drawn_per_call(x)
    keep = x.backend.bernoulli(x.shape, 1 - p)
    return x * P.constant(x.backend.xp.astype(keep, x.array.dtype), x.backend) * (1 / (1 - p))


__all__ = ["check_mask_is_drawn_per_call", "check_same_dtype", "dropout", "in_float32", "layer_norm", "linear"]
