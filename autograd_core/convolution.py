"""Convolution as three primitives closed under differentiation, and max pooling's backward.

A 2-D convolution ``y = conv(x, w)`` is bilinear, so each of its gradients is a linear map
computed by a kernel of the same family: the input's gradient is the transposed convolution
of the output gradient with `w` (`_conv2d_grad_input`), the weight's the correlation of `x`
with the output gradient (`_conv2d_grad_weight`). Their own VJPs are again these three
kernels, so gradients of any order stay within them. Each computes with the backend's
kernel (`Backend.conv2d`...), whose portable default is an im2col and one matmul.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from autograd_core.ops import _index_add, common_backend, reshape
from autograd_core.tensor import Tensor, record
from backends.base import flat_positions


class ConvGeometry(NamedTuple):
    """How a kernel slides: per axis (rows, columns), with padding ((top, bottom), (left, right))."""

    stride: tuple[int, int]
    padding: tuple[tuple[int, int], tuple[int, int]]
    dilation: tuple[int, int]
    groups: int


def _conv2d(x: Tensor, weight: Tensor, geometry: ConvGeometry) -> Tensor:
    """The cross-correlation of `x` (N, C, H, W) with `weight` (O, C/groups, kh, kw)."""
    backend = common_backend("conv2d", x, weight)
    data = backend.conv2d(x.data, weight.data, **geometry._asdict())
    return record("conv2d", data, backend, (x, weight, geometry), _CONV_VJPS)


def _conv2d_grad_input(grad: Tensor, weight: Tensor, input_shape: tuple[int, ...], geometry: ConvGeometry) -> Tensor:
    """The gradient of `_conv2d`'s input: the transposed convolution of `grad` with `weight`."""
    backend = common_backend("conv_transpose2d", grad, weight)
    data = backend.conv2d_grad_input(grad.data, weight.data, tuple(input_shape), **geometry._asdict())
    return record("conv2d_grad_input", data, backend, (grad, weight, input_shape, geometry), _GRAD_INPUT_VJPS)


def _conv2d_grad_weight(grad: Tensor, x: Tensor, weight_shape: tuple[int, ...], geometry: ConvGeometry) -> Tensor:
    """The gradient of `_conv2d`'s weight: the correlation of `x` with `grad`."""
    backend = common_backend("conv2d_grad_weight", grad, x)
    data = backend.conv2d_grad_weight(grad.data, x.data, tuple(weight_shape), **geometry._asdict())
    return record("conv2d_grad_weight", data, backend, (grad, x, weight_shape, geometry), _GRAD_WEIGHT_VJPS)


_CONV_VJPS = (
    lambda ns, g, out, x, w, geometry: ns._conv2d_grad_input(g, w, x.shape, geometry),
    lambda ns, g, out, x, w, geometry: ns._conv2d_grad_weight(g, x, w.shape, geometry),
    None,
)
# For gx = conv_grad_input(g, w) and an incoming gradient h of gx's shape:
# <h, gx> = <conv(h, w), g>, so d/dg = conv(h, w) and d/dw = conv_grad_weight(g, h).
_GRAD_INPUT_VJPS = (
    lambda ns, h, out, g, w, shape, geometry: ns._conv2d(h, w, geometry),
    lambda ns, h, out, g, w, shape, geometry: ns._conv2d_grad_weight(g, h, w.shape, geometry),
    None,
    None,
)
# For gw = conv_grad_weight(g, x): <h, gw> = <conv(x, h), g>, so d/dg = conv(x, h) and
# d/dx = conv_grad_input(g, h).
_GRAD_WEIGHT_VJPS = (
    lambda ns, h, out, g, x, shape, geometry: ns._conv2d(x, h, geometry),
    lambda ns, h, out, g, x, shape, geometry: ns._conv2d_grad_input(g, h, x.shape, geometry),
    None,
    None,
)


class PoolGeometry(NamedTuple):
    """How a pooling window slides: per axis (rows, columns); padding on both sides."""

    kernel_size: tuple[int, int]
    stride: tuple[int, int]
    padding: tuple[int, int]
    dilation: tuple[int, int]
    ceil_mode: bool


def _max_pool2d_backward(grad: Tensor, indices: Any, input_shape: tuple[int, ...], geometry: PoolGeometry) -> Tensor:
    """The gradient of max pooling's input on tensors: each window's gradient added at its
    maximum (`indices` in the flattened (H, W) planes), a scatter-add whose own VJP is the
    gather at the same positions. The raw twin is `Backend.max_pool2d_backward`."""
    flat = flat_positions(grad.backend.xp, indices, input_shape, grad.backend.device)
    return reshape(_index_add(reshape(grad, (-1,)), (math.prod(input_shape),), 0, flat), input_shape)
