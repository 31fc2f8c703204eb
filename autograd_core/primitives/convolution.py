"""Convolution as three primitives closed under differentiation, max pooling, and the
window kernels (padding, im2col, col2im) their portable defaults are built from.

A 2-D convolution ``y = conv(x, w)`` is bilinear, so each of its gradients is a linear map
computed by a kernel of the same family: the input's gradient is the transposed convolution
of the output gradient with `w` (`conv2d_grad_input`), the weight's the correlation of `x`
with the output gradient (`conv2d_grad_weight`). Their own VJPs are again these three
kernels, so gradients of any order stay within them. The portable default of each is an
im2col and one matmul. Everything is NCHW; a 1-D op is the 2-D one on a height of 1.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from autograd_core.graph.levels import level_of
from autograd_core.graph.registry import Primitive, primitive
from autograd_core.graph.tensor_base import TensorBase
from autograd_core.primitives.indexing import index_add, take

Padding2d = tuple[tuple[int, int], tuple[int, int]]  # ((top, bottom), (left, right))


class ConvGeometry(NamedTuple):
    """How a kernel slides: per axis (rows, columns), with padding ((top, bottom), (left, right))."""

    stride: tuple[int, int]
    padding: Padding2d
    dilation: tuple[int, int]
    groups: int


class PoolGeometry(NamedTuple):
    """How a pooling window slides: per axis (rows, columns); padding on both sides."""

    kernel_size: tuple[int, int]
    stride: tuple[int, int]
    padding: tuple[int, int]
    dilation: tuple[int, int]
    ceil_mode: bool


# --- sizes and taps -------------------------------------------------------------------------
def conv_output_size(
    size: tuple[int, int],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: Padding2d,
    dilation: tuple[int, int],
) -> tuple[int, int]:
    """Height and width of a convolution's output, as PyTorch computes them."""
    return tuple(
        (n + lo + hi - d * (k - 1) - 1) // s + 1
        for n, k, s, (lo, hi), d in zip(size, kernel, stride, padding, dilation)
    )


def pool_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool) -> int:
    """One axis of a pooling output (PyTorch's rule: with ceil_mode, a last window must start
    inside the input or its left padding)."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def tap(i: int, j: int, stride: tuple[int, int], dilation: tuple[int, int], out_size: tuple[int, int]) -> tuple:
    """The index of a padded (N, C, H, W) input that kernel tap (i, j) sees at every output position."""
    (sh, sw), (dh, dw), (ho, wo) = stride, dilation, out_size
    return (..., slice(i * dh, i * dh + sh * (ho - 1) + 1, sh), slice(j * dw, j * dw + sw * (wo - 1) + 1, sw))


def _tap_inside(
    tap_ij: tuple[int, int],
    size: tuple[int, int],
    out: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
) -> np.ndarray:
    """Where kernel tap (i, j) lies inside the unpadded input, over the (Ho, Wo) windows."""
    rows, cols = (
        (np.arange(o) * s - p + t * d >= 0) & (np.arange(o) * s - p + t * d < n)
        for t, n, o, s, p, d in zip(tap_ij, size, out, stride, padding, dilation)
    )
    return np.logical_and.outer(rows, cols)


def pool_padding(size: tuple[int, int], geometry: PoolGeometry) -> tuple[tuple, Padding2d]:
    """A pooling's output height and width, and the padding its input gets: `padding` on both
    sides, more on the right where ceil_mode's last windows run past it."""
    kernel_size, stride, padding, dilation, ceil_mode = geometry
    out = tuple(
        pool_output_size(n, k, s, p, d, ceil_mode)
        for n, k, s, p, d in zip(size, kernel_size, stride, padding, dilation)
    )
    extra = [
        max((o - 1) * s + d * (k - 1) + 1 - n - 2 * p, 0)
        for o, n, k, s, p, d in zip(out, size, kernel_size, stride, padding, dilation)
    ]
    return out, tuple((p, p + e) for p, e in zip(padding, extra))


def _window_starts(out: tuple[int, int], width: int, stride: tuple[int, int], padding: tuple[int, int]) -> np.ndarray:
    """Each pooling window's first position in the flattened (unpadded) input plane, (Ho, Wo)."""
    rows, cols = (np.arange(o) * s - p for o, s, p in zip(out, stride, padding))
    return np.add.outer(rows * width, cols)


def flat_positions(xp: Any, indices: Any, input_shape: tuple[int, ...], device: Any) -> Any:
    """Positions in a (N, C, H, W) input's plane (`max_pool2d`'s indices) as positions in the
    whole flattened input, 1-D."""
    n, c, h, w = input_shape
    planes = xp.reshape(xp.arange(n * c, dtype=indices.dtype, device=device) * (h * w), (n, c, 1, 1))
    return xp.reshape(indices + planes, (-1,))


# --- window kernels -------------------------------------------------------------------------
@primitive()
def pad2d(ns: Any, x: Any, padding: Padding2d, value: float) -> Any:
    """`x` (N, C, H, W) with `padding` ((top, bottom), (left, right)) rows and columns of `value`."""
    (top, bottom), (left, right) = padding
    if not (top or bottom or left or right):
        return x
    n, c, h, w = x.shape

    def block(rows: int, cols: int) -> Any:
        return ns.full((n, c, rows, cols), value, dtype=x.dtype, device=ns.backend.device)

    x = ns.concat([block(top, w), x, block(bottom, w)], axis=2)
    return ns.concat([block(h + top + bottom, left), x, block(h + top + bottom, right)], axis=3)


@primitive()
def im2col(
    ns: Any,
    x: Any,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    dilation: tuple[int, int],
    out_size: tuple[int, int],
) -> Any:
    """The windows of the (already padded) `x` of shape (N, C, H, W): an array (N, C, kh*kw,
    Ho, Wo) whose [n, c, i*kw + j] is the input under kernel tap (i, j) for every output
    position. The portable default stacks one strided slice per tap."""
    return ns.stack(
        [x[tap(i, j, stride, dilation, out_size)] for i in range(kernel[0]) for j in range(kernel[1])], axis=2
    )


@primitive()
def col2im(
    ns: Any,
    cols: Any,
    shape: tuple[int, ...],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    dilation: tuple[int, int],
) -> Any:
    """The adjoint of `im2col`: windows (N, C, kh*kw, Ho, Wo) added back where they sat in
    a zero array of `shape` (N, C, H, W), tap by tap in order. The portable default adds
    one strided slice per tap."""
    out = ns.zeros(shape, dtype=cols.dtype, device=ns.backend.device)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            out[tap(i, j, stride, dilation, tuple(cols.shape[3:]))] += cols[:, :, i * kernel[1] + j, ...]
    return out


# --- convolution ----------------------------------------------------------------------------
def _conv2d(ns: Any, x: Any, weight: Any, geometry: ConvGeometry) -> Any:
    """The cross-correlation of `x` (N, C, H, W) with `weight` (O, C/groups, kh, kw), as
    PyTorch's conv2d: an im2col, then one (batched, grouped) matmul."""
    stride, padding, dilation, groups = geometry
    (n, _, h, w), (o, cg, kh, kw) = x.shape, weight.shape
    out = conv_output_size((h, w), (kh, kw), stride, padding, dilation)
    cols = im2col(ns, pad2d(ns, x, padding, 0.0), (kh, kw), stride, dilation, out)
    cols = ns.reshape(cols, (n, groups, cg * kh * kw, out[0] * out[1]))
    return ns.reshape(ns.reshape(weight, (groups, o // groups, -1)) @ cols, (n, o, *out))


def _conv2d_grad_weight(ns: Any, grad: Any, x: Any, weight_shape: tuple[int, ...], geometry: ConvGeometry) -> Any:
    """The gradient of conv2d's weight: each output's gradient times the window it saw."""
    stride, padding, dilation, groups = geometry
    n, (o, cg, kh, kw) = x.shape[0], weight_shape
    out = tuple(grad.shape[2:])
    cols = im2col(ns, pad2d(ns, x, padding, 0.0), (kh, kw), stride, dilation, out)
    cols = ns.reshape(cols, (n, groups, cg * kh * kw, out[0] * out[1]))
    g = ns.reshape(grad, (n, groups, o // groups, out[0] * out[1]))
    return ns.reshape(ns.sum(g @ ns.matrix_transpose(cols), axis=0), tuple(weight_shape))


def _conv2d_grad_input(ns: Any, grad: Any, weight: Any, input_shape: tuple[int, ...], geometry: ConvGeometry) -> Any:
    """The gradient of conv2d's input (PyTorch's conv_transpose2d): the weight's transpose
    times the output gradient gives each window's share, added back where the window sat
    (a col2im, one strided slice per kernel tap)."""
    stride, ((top, bottom), (left, right)), dilation, groups = geometry
    (n, c, h, w), (o, _, kh, kw) = input_shape, weight.shape
    ho, wo = grad.shape[2:]
    g = ns.reshape(grad, (n, groups, o // groups, ho * wo))
    shares = ns.reshape(ns.matrix_transpose(ns.reshape(weight, (groups, o // groups, -1))) @ g, (n, c, kh * kw, ho, wo))
    out = col2im(ns, shares, (n, c, h + top + bottom, w + left + right), (kh, kw), stride, dilation)
    return out[:, :, top : top + h, left : left + w]


def _cropped_to(x: Any, shape: tuple[int, ...]) -> Any:
    """`x` (N, C, H', W') cut to the (H, W) of `shape`: the convolution of a transposed
    convolution's output padding sees positions past the input it came from."""
    return x if tuple(x.shape) == tuple(shape) else x[:, :, : shape[2], : shape[3]]


conv2d = Primitive(
    "conv2d",
    _conv2d,
    vjps=(
        lambda ns, g, out, x, w, geometry: conv2d_grad_input(ns, g, w, x.shape, geometry),
        lambda ns, g, out, x, w, geometry: conv2d_grad_weight(ns, g, x, w.shape, geometry),
        None,
    ),
    jvp="multilinear",  # bilinear in (x, w), as are the two kernels of its gradients
)
# For gx = conv2d_grad_input(g, w) and an incoming gradient h of gx's shape:
# <h, gx> = <conv(h, w), g>, so d/dg = conv(h, w) and d/dw = conv2d_grad_weight(g, h).
conv2d_grad_input = Primitive(
    "conv2d_grad_input",
    _conv2d_grad_input,
    vjps=(
        lambda ns, h, out, g, w, shape, geometry: _cropped_to(conv2d(ns, h, w, geometry), g.shape),
        lambda ns, h, out, g, w, shape, geometry: conv2d_grad_weight(ns, g, h, w.shape, geometry),
        None,
        None,
    ),
    jvp="multilinear",
)
# For gw = conv2d_grad_weight(g, x): <h, gw> = <conv(x, h), g>, so d/dg = conv(x, h) and
# d/dx = conv2d_grad_input(g, h).
conv2d_grad_weight = Primitive(
    "conv2d_grad_weight",
    _conv2d_grad_weight,
    vjps=(
        lambda ns, h, out, g, x, shape, geometry: conv2d(ns, x, h, geometry),
        lambda ns, h, out, g, x, shape, geometry: conv2d_grad_input(ns, g, h, x.shape, geometry),
        None,
        None,
    ),
    jvp="multilinear",
)


# --- max pooling ----------------------------------------------------------------------------
def _max_pool2d(ns: Any, x: Any, geometry: PoolGeometry) -> tuple[Any, Any]:
    """The maximum of each window of `x` (N, C, H, W), and its position as an index into
    the flattened (H, W) plane, the first maximum where several tie (PyTorch's indices; a
    NaN is the maximum of its window; a position in the padding is never chosen). One
    strided slice per kernel tap, no window copy."""
    backend, (h, w) = ns.backend, x.shape[2:]
    kernel_size, stride, padding, dilation, _ = geometry
    out, pads = pool_padding((h, w), geometry)
    padded = pad2d(ns, x, pads, -math.inf)
    taps = [padded[tap(i, j, stride, dilation, out)] for i in range(kernel_size[0]) for j in range(kernel_size[1])]
    values = taps[0]
    for seen in taps[1:]:
        values = ns.maximum(values, seen)
    int64 = backend.dtype("int64")
    chosen = ns.zeros(values.shape, dtype=int64, device=backend.device)
    for k in reversed(range(len(taps))):  # the last assignment, the first tap, wins
        hit = (taps[k] == values) | ns.isnan(taps[k])
        inside = _tap_inside(divmod(k, kernel_size[1]), (h, w), out, stride, padding, dilation)
        chosen = ns.where(hit if inside.all() else hit & backend.asarray(inside), k, chosen)
    (kh, kw), (dh, dw) = kernel_size, dilation
    offsets = np.array([i * dh * w + j * dw for i in range(kh) for j in range(kw)])
    starts = _window_starts(out, w, stride, padding)
    picked = ns.take(backend.asarray(offsets, int64), ns.reshape(chosen, (-1,)))
    return values, ns.reshape(picked, chosen.shape) + backend.asarray(starts, int64)


def _max_pool2d_backward(ns: Any, grad: Any, indices: Any, input_shape: tuple[int, ...], geometry: PoolGeometry) -> Any:
    """The gradient of `max_pool2d`'s input: each window's gradient added at its maximum
    (`indices`, as `max_pool2d` gives them). The portable default goes tap by tap: where a
    window's maximum is under tap (i, j), its gradient is added through that tap's strided
    slice, as in `conv2d_grad_input`."""
    backend, (n, c, h, w) = ns.backend, input_shape
    (kh, kw), stride, padding, (dh, dw), _ = geometry
    ho, wo = grad.shape[2:]
    _, pads = pool_padding((h, w), geometry)
    out = ns.zeros((n, c, h + sum(pads[0]), w + sum(pads[1])), dtype=grad.dtype, device=backend.device)
    starts = _window_starts((ho, wo), w, stride, padding)
    for i in range(kh):
        for j in range(kw):
            under_tap = indices == backend.asarray(starts + i * dh * w + j * dw, indices.dtype)
            out[tap(i, j, stride, dilation=(dh, dw), out_size=(ho, wo))] += ns.where(under_tap, grad, 0.0)
    return out[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + w]


def scatter_to_maxima(ns: Any, grad: Any, indices: Any, input_shape: tuple[int, ...], geometry: PoolGeometry) -> Any:
    """`max_pool2d_backward` as one scatter-add over the flattened input: the kernel of the
    libraries whose index_add is fast, and the differentiable form (its own VJP a gather)."""
    backend = grad.backend if isinstance(grad, TensorBase) else ns.backend
    backend = level_of(backend, indices)  # inside vmap, the indices may be shared by every example
    flat = flat_positions(backend.xp, indices, input_shape, backend.device)
    summed = index_add(ns, ns.reshape(grad, (-1,)), (math.prod(input_shape),), 0, flat)
    return ns.reshape(summed, tuple(input_shape))


max_pool2d_backward = Primitive("max_pool2d_backward", _max_pool2d_backward, differentiable=scatter_to_maxima)


def _max_pool2d_tangent(ns: Any, tangents: tuple, out: Any, x: Any, geometry: PoolGeometry, indices: Any) -> Any:
    """Each window's maximum moves with the input's tangent at its position: a gather (the
    adjoint of the backward's scatter-add) at the forward's `indices`."""
    tangent = tangents[0]
    backend = tangent.backend if isinstance(tangent, TensorBase) else ns.backend
    flat = flat_positions(backend.xp, indices, tuple(x.shape), backend.device)
    return ns.reshape(take(ns, ns.reshape(tangent, (-1,)), flat, 0), tuple(out.shape))


max_pool2d = Primitive(
    "max_pool2d",
    _max_pool2d,
    vjps=(lambda ns, g, out, x, geometry, indices: max_pool2d_backward(ns, g, indices, x.shape, geometry), None, None),
    saves="none",
    jvp=_max_pool2d_tangent,
    side_outputs=1,
)
