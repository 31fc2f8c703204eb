"""Convolution, transposed convolution, unfold and pooling over (N, C, D, H, W) volumes,
(N, C, H, W) images and (N, C, L) sequences, with PyTorch's signatures and defaults.

Each is built on the `autograd_core.convolution` primitives or a gather (max pooling), so its
gradients come from those and are of any order; a 1-D op is the 2-D one on a height of 1,
and a 3-D one the sum over the depth taps of 2-D ones on depth slices stacked in the batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import autograd_core as ag
from autograd_core import primitives as P
from autograd_core.autodiff.tensor import Tensor
from autograd_core.primitives.convolution import ConvGeometry, PoolGeometry, pool_output_size
from nn.functional_base import check_same_dtype

IntOrPair = int | Sequence[int]


def _pair(value: IntOrPair, name: str, size: int = 2) -> tuple[int, ...]:
    """`value` for each of `size` axes: an int for all, a sequence of one for all (as PyTorch
    takes them), or one per axis."""
    values = (value,) * size if isinstance(value, int) else tuple(value)
    values = values * size if len(values) == 1 else values
    if len(values) != size or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise ValueError(f"{name} must be an int or a tuple of {size} ints, got {value!r}")
    return values


def _batched(x: Tensor, spatial: int, op: str) -> tuple[Tensor, bool]:
    """`x` with a batch axis (added for an unbatched input, as PyTorch accepts), and whether one was added."""
    if x.ndim == spatial + 1:
        return ag.expand_dims(x, axis=0), True
    if x.ndim != spatial + 2:
        raise ValueError(
            f"{op}: expected a {spatial + 1}-D (unbatched) or {spatial + 2}-D (batched) input, got shape {x.shape}"
        )
    return x, False


def _conv_padding(
    padding: str | IntOrPair, kernel: tuple[int, ...], stride: tuple[int, ...], dilation: tuple[int, ...], op: str
) -> tuple[tuple[int, int], ...]:
    """(before, after) padding per spatial axis."""
    if padding == "valid":
        return ((0, 0),) * len(kernel)
    if padding == "same":
        if set(stride) != {1}:
            raise ValueError(f"{op}: padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    if isinstance(padding, str):
        raise ValueError(f"{op}: padding must be 'valid', 'same', an int or a tuple of ints, got {padding!r}")
    amounts = _pair(padding, "padding", len(kernel))
    if min(amounts) < 0:
        raise ValueError(f"{op}: padding must be non-negative, got {padding!r}")
    return tuple((p, p) for p in amounts)


def _check_conv(op: str, x: Tensor, weight: Tensor, groups: int, in_channels: int) -> None:
    if weight.ndim != 4:
        raise ValueError(f"{op}: expected a weight of {x.ndim - 1} dimensions, got shape {weight.shape}")
    if groups < 1 or in_channels % groups or weight.shape[0] % groups:
        raise ValueError(
            f"{op}: groups={groups} must divide the input channels ({in_channels}) and the "
            f"weight's first dimension ({weight.shape[0]})"
        )
    check_same_dtype(op, x, weight)


def _with_bias(out: Tensor, bias: Tensor | None) -> Tensor:
    return out if bias is None else out + ag.reshape(bias, (-1, 1, 1))


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrPair = 1,
    padding: str | IntOrPair = 0,
    dilation: IntOrPair = 1,
    groups: int = 1,
) -> Tensor:
    """2-D cross-correlation of `input` (N, C, H, W) with `weight` (out_channels, C/groups, kh, kw).

    `padding` is an int, a (rows, columns) pair, ``"valid"`` (none) or ``"same"`` (the output
    has the input's size; stride 1 only), as in PyTorch.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.conv2d(ag.ones(1, 1, 4, 4), ag.ones(2, 1, 3, 3), padding=1).shape
    (1, 2, 4, 4)
    """
    x, unbatched = _batched(input, 2, "conv2d")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    _check_conv("conv2d", x, weight, groups, x.shape[1])
    if x.shape[1] != weight.shape[1] * groups:
        raise ValueError(
            f"conv2d: the input has {x.shape[1]} channels, but the weight {weight.shape} with "
            f"groups={groups} expects {weight.shape[1] * groups}"
        )
    pads = _conv_padding(padding, weight.shape[2:], stride, dilation, "conv2d")
    for size, k, d, (lo, hi) in zip(x.shape[2:], weight.shape[2:], dilation, pads):
        if d * (k - 1) + 1 > size + lo + hi:
            raise ValueError(
                f"conv2d: the kernel {tuple(weight.shape[2:])} (dilation {dilation}) is larger than "
                f"the padded input {x.shape[2:]}"
            )
    out = _with_bias(P.conv2d.bind(x, weight, ConvGeometry(stride, pads, dilation, groups)), bias)
    return out[0] if unbatched else out


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrPair = 1,
    padding: str | IntOrPair = 0,
    dilation: IntOrPair = 1,
    groups: int = 1,
) -> Tensor:
    """1-D cross-correlation of `input` (N, C, L) with `weight` (out_channels, C/groups, k)."""
    x, unbatched = _batched(input, 1, "conv1d")
    if weight.ndim != 3:
        raise ValueError(f"conv1d: expected a weight of 3 dimensions, got shape {weight.shape}")
    padding = padding if isinstance(padding, str) else (0, *_pair(padding, "padding", 1))
    out = conv2d(
        ag.expand_dims(x, axis=2),
        ag.expand_dims(weight, axis=2),
        None,
        (1, *_pair(stride, "stride", 1)),
        padding,
        (1, *_pair(dilation, "dilation", 1)),
        groups,
    )
    out = ag.squeeze(out, axis=2)
    out = out if bias is None else out + ag.reshape(bias, (-1, 1))
    return out[0] if unbatched else out


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrPair = 1,
    padding: IntOrPair = 0,
    output_padding: IntOrPair = 0,
    groups: int = 1,
    dilation: IntOrPair = 1,
) -> Tensor:
    """The transposed 2-D convolution (the gradient of conv2d with respect to its input) of
    `input` (N, C, H, W) with `weight` (C, out_channels/groups, kh, kw), as in PyTorch.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.conv_transpose2d(ag.ones(1, 2, 3, 3), ag.ones(2, 1, 2, 2), stride=2).shape
    (1, 1, 6, 6)
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


def _conv_transpose(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: IntOrPair,
    padding: IntOrPair,
    output_padding: IntOrPair,
    groups: int,
    dilation: IntOrPair,
    dims: int,
) -> Tensor:
    """The transposed convolution over `dims` (1 to 3) spatial axes, its arguments checked."""
    op = f"conv_transpose{dims}d"
    x, unbatched = _batched(input, dims, op)
    stride, dilation = _pair(stride, "stride", dims), _pair(dilation, "dilation", dims)
    padding, output_padding = _pair(padding, "padding", dims), _pair(output_padding, "output_padding", dims)
    if weight.ndim != dims + 2:
        raise ValueError(f"{op}: expected a weight of {dims + 2} dimensions, got shape {weight.shape}")
    if groups < 1 or weight.shape[0] % groups:
        raise ValueError(f"{op}: groups={groups} must divide the weight's first dimension ({weight.shape[0]})")
    check_same_dtype(op, x, weight)
    if x.shape[1] != weight.shape[0]:
        raise ValueError(
            f"{op}: the input has {x.shape[1]} channels, the weight {weight.shape} expects {weight.shape[0]}"
        )
    if any(o >= s and o >= d for o, s, d in zip(output_padding, stride, dilation)):
        raise ValueError(
            f"{op}: output_padding {output_padding} must be smaller than either stride {stride} or dilation {dilation}"
        )
    size = tuple(
        (n - 1) * s - 2 * p + d * (k - 1) + o + 1
        for n, s, p, d, k, o in zip(x.shape[2:], stride, padding, dilation, weight.shape[2:], output_padding)
    )
    if min(size) < 1:
        raise ValueError(f"{op}: the output size {size} is not positive")
    if dims == 1:
        x, weight = ag.expand_dims(x, axis=2), ag.expand_dims(weight, axis=2)
        stride, dilation = (1, *stride), (1, *dilation)
        padding, output_padding = (0, *padding), (0, *output_padding)
    transpose = _conv_transpose3d if dims == 3 else _conv_transpose2d
    out = transpose(x, weight, stride, padding, output_padding, dilation, groups)
    out = ag.squeeze(out, axis=2) if dims == 1 else out
    out = out if bias is None else out + ag.reshape(bias, (-1,) + (1,) * dims)
    return out[0] if unbatched else out


def _conv_transpose2d(
    x: Tensor,
    weight: Tensor,
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    output_padding: tuple[int, ...],
    dilation: tuple[int, ...],
    groups: int,
) -> Tensor:
    """The transposed 2-D convolution of a batched, checked input: conv2d's input gradient.
    With output padding, the whole uncropped output is computed, then cropped by the padding
    and extended by zeros where the output padding reaches past it (no window reaches there)."""
    crop = tuple(0 if op else p for p, op in zip(padding, output_padding))
    size = tuple(
        (n - 1) * s - 2 * p + d * (k - 1) + 1
        for n, s, p, d, k in zip(x.shape[2:], stride, crop, dilation, weight.shape[2:])
    )
    shape = (x.shape[0], weight.shape[1] * groups, *size)
    geometry = ConvGeometry(stride, tuple((p, p) for p in crop), dilation, groups)
    out = P.conv2d_grad_input.bind(x, weight, shape, geometry)
    for axis, p, op, full in zip((2, 3), padding, output_padding, size):
        if op:
            kept = out[(slice(None),) * axis + (slice(p, full),)]
            out = _pad_axis(kept, axis, 0, max(op - p, 0))
            out = out[(slice(None),) * axis + (slice(0, full - 2 * p + op),)]
    return out


def _conv_transpose3d(
    x: Tensor,
    weight: Tensor,
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    output_padding: tuple[int, ...],
    dilation: tuple[int, ...],
    groups: int,
) -> Tensor:
    """The transposed 3-D convolution as a sum over the depth taps: each tap's transposed 2-D
    convolution of every depth slice (slices stacked in the batch), spread out by the depth
    stride and shifted by the tap's dilated offset, then cropped by the depth padding."""
    (n, _, depth), (kd, sd, pd, od, dd) = (
        x.shape[:3],
        (weight.shape[2], stride[0], padding[0], output_padding[0], dilation[0]),
    )
    planes = _depth_in_batch(x)
    spread, full = (depth - 1) * sd + 1, (depth - 1) * sd + dd * (kd - 1) + 1 + od
    total = None
    for k in range(kd):
        out = _conv_transpose2d(
            planes, weight[:, :, k], stride[1:], padding[1:], output_padding[1:], dilation[1:], groups
        )
        out = _spread(_depth_out_of_batch(out, n), sd)
        out = _pad_axis(out, 2, k * dd, full - k * dd - spread)
        total = out if total is None else total + out
    return total[:, :, pd : full - pd]


def _depth_in_batch(x: Tensor) -> Tensor:
    """(N, C, D, H, W) as (N * D, C, H, W)."""
    n, c, d, h, w = x.shape
    return ag.reshape(ag.moveaxis(x, 2, 1), (n * d, c, h, w))


def _depth_out_of_batch(x: Tensor, n: int) -> Tensor:
    """(N * D, C, H, W) as (N, C, D, H, W)."""
    return ag.moveaxis(ag.reshape(x, (n, x.shape[0] // n, *x.shape[1:])), 1, 2)


def _spread(x: Tensor, stride: int) -> Tensor:
    """`x` (N, C, D, ...) with ``stride - 1`` zeros between neighbours along D."""
    if stride == 1:
        return x
    zeros = ag.zeros_like(x)
    stacked = ag.stack([x] + [zeros] * (stride - 1), axis=3)
    merged = ag.reshape(stacked, (*x.shape[:2], x.shape[2] * stride, *x.shape[3:]))
    return merged[:, :, : (x.shape[2] - 1) * stride + 1]


def _pad_axis(x: Tensor, axis: int, before: int, after: int) -> Tensor:
    """`x` with zeros before and after along `axis`."""
    blocks = [
        ag.zeros((*x.shape[:axis], size, *x.shape[axis + 1 :]), dtype=x.dtype, device=x.device) if size else None
        for size in (before, after)
    ]
    parts = [part for part in (blocks[0], x, blocks[1]) if part is not None]
    return ag.concat(parts, axis=axis) if len(parts) > 1 else x


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrPair = 1,
    padding: IntOrPair = 0,
    output_padding: IntOrPair = 0,
    groups: int = 1,
    dilation: IntOrPair = 1,
) -> Tensor:
    """The transposed 1-D convolution of `input` (N, C, L) with `weight` (C, out_channels/groups, k).

    >>> import autograd_core as ag, nn.functional as F
    >>> F.conv_transpose1d(ag.ones(1, 2, 3), ag.ones(2, 1, 2), stride=2).shape
    (1, 1, 6)
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)


def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrPair = 1,
    padding: IntOrPair = 0,
    output_padding: IntOrPair = 0,
    groups: int = 1,
    dilation: IntOrPair = 1,
) -> Tensor:
    """The transposed 3-D convolution of `input` (N, C, D, H, W) with `weight`
    (C, out_channels/groups, kd, kh, kw).

    >>> import autograd_core as ag, nn.functional as F
    >>> F.conv_transpose3d(ag.ones(1, 2, 2, 2, 2), ag.ones(2, 1, 2, 2, 2), stride=2).shape
    (1, 1, 4, 4, 4)
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3)


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrPair = 1,
    padding: str | IntOrPair = 0,
    dilation: IntOrPair = 1,
    groups: int = 1,
) -> Tensor:
    """3-D cross-correlation of `input` (N, C, D, H, W) with `weight` (out_channels, C/groups,
    kd, kh, kw): the sum over the depth taps of 2-D convolutions of the depth slices each tap
    sees (stacked in the batch), so its gradients are the 2-D convolution's.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.conv3d(ag.ones(1, 1, 4, 4, 4), ag.ones(2, 1, 3, 3, 3), padding=1).shape
    (1, 2, 4, 4, 4)
    """
    x, unbatched = _batched(input, 3, "conv3d")
    stride, dilation = _pair(stride, "stride", 3), _pair(dilation, "dilation", 3)
    if weight.ndim != 5:
        raise ValueError(f"conv3d: expected a weight of 5 dimensions, got shape {weight.shape}")
    _check_conv("conv3d", x, weight[:, :, 0], groups, x.shape[1])
    if x.shape[1] != weight.shape[1] * groups:
        raise ValueError(
            f"conv3d: the input has {x.shape[1]} channels, but the weight {weight.shape} with "
            f"groups={groups} expects {weight.shape[1] * groups}"
        )
    pads = _conv_padding(padding, weight.shape[2:], stride, dilation, "conv3d")
    x = _pad_axis(x, 2, *pads[0])
    for size, k, d in zip(x.shape[2:], weight.shape[2:], dilation):
        if d * (k - 1) + 1 > size:
            raise ValueError(
                f"conv3d: the kernel {tuple(weight.shape[2:])} (dilation {dilation}) is larger than the input"
            )
    (n, _, depth), (kd, sd, dd) = x.shape[:3], (weight.shape[2], stride[0], dilation[0])
    out_depth = (depth - dd * (kd - 1) - 1) // sd + 1
    geometry = ConvGeometry(stride[1:], pads[1:], dilation[1:], groups)
    total = None
    for k in range(kd):
        slices = x[:, :, k * dd : k * dd + sd * (out_depth - 1) + 1 : sd]
        out = P.conv2d.bind(_depth_in_batch(slices), weight[:, :, k], geometry)
        total = out if total is None else total + out
    out = _depth_out_of_batch(total, n)
    out = out if bias is None else out + ag.reshape(bias, (-1, 1, 1, 1))
    return out[0] if unbatched else out


def unfold(
    input: Tensor,
    kernel_size: IntOrPair,
    dilation: IntOrPair = 1,
    padding: IntOrPair = 0,
    stride: IntOrPair = 1,
) -> Tensor:
    """The sliding windows of `input` (N, C, H, W) as columns: (N, C * kh * kw, windows), as
    PyTorch's unfold (im2col). A convolution with one-hot kernels, so it is differentiable.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.unfold(ag.ones(1, 3, 4, 4), 2).shape
    (1, 12, 9)
    """
    x, unbatched = _batched(input, 2, "unfold")
    (kh, kw), (n, c, h, w) = _pair(kernel_size, "kernel_size"), x.shape
    taps = ag.reshape(ag.eye(kh * kw, dtype=x.dtype, device=x.device), (kh * kw, 1, kh, kw))
    planes = ag.reshape(x, (n * c, 1, h, w))
    cols = conv2d(planes, taps, None, stride, padding, dilation)
    out = ag.reshape(cols, (n, c * kh * kw, cols.shape[-2] * cols.shape[-1]))
    return out[0] if unbatched else out


def pool_geometry(
    op: str,
    x: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None,
    padding: IntOrPair,
    dilation: IntOrPair,
    ceil_mode: bool,
    dims: int = 2,
) -> tuple[tuple[int, ...], ...]:
    """The kernel, stride, padding, dilation and output size per spatial axis of a pooling of
    the batched `x` over its last `dims` axes, checked as PyTorch checks them."""
    if 0 in x.shape[1:]:  # as PyTorch: only the batch may be empty
        raise ValueError(
            f"{op}: expected an input with nonzero channel and spatial sizes (the batch may be 0), got shape {x.shape}"
        )
    kernel = _pair(kernel_size, "kernel_size", dims)
    stride = kernel if stride is None or stride == () else _pair(stride, "stride", dims)
    padding, dilation = _pair(padding, "padding", dims), _pair(dilation, "dilation", dims)
    if any(p > (d * (k - 1) + 1) // 2 for p, k, d in zip(padding, kernel, dilation)):
        raise ValueError(f"{op}: padding {padding} should be at most half of the kernel size {kernel}")
    if min(*kernel, *stride, *dilation) < 1:
        raise ValueError(f"{op}: kernel_size, stride and dilation must be positive")
    out = tuple(
        pool_output_size(n, k, s, p, d, ceil_mode)
        for n, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation)
    )
    if min(out) < 1:
        raise ValueError(f"{op}: the input {x.shape[2:]} is too small for a kernel {kernel}, giving output {out}")
    return kernel, stride, padding, dilation, out


def max_pool2d(
    input: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None = None,
    padding: IntOrPair = 0,
    dilation: IntOrPair = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """The maximum over each window of `input` (N, C, H, W); with `return_indices`, also each
    maximum's position in its flattened (H, W) plane. The gradient goes to the first maximum
    of each window, as in PyTorch.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.max_pool2d(ag.arange(16.0).reshape(1, 1, 4, 4), 2).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    x, unbatched = _batched(input, 2, "max_pool2d")
    kernel, stride, padding, dilation, _ = pool_geometry(
        "max_pool2d", x, kernel_size, stride, padding, dilation, ceil_mode
    )
    geometry = PoolGeometry(kernel, stride, padding, dilation, ceil_mode)
    out, indices = P.max_pool2d.bind(x, geometry)
    if unbatched:
        out, indices = out[0], indices[0, ...]  # the VJP keeps the batched indices it was given
    return (out, P.constant(indices, x.backend)) if return_indices else out


def avg_pool2d(
    input: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None = None,
    padding: IntOrPair = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean over each window of `input` (N, C, H, W), PyTorch's divisor included: padding
    counts unless ``count_include_pad=False``, and ceil_mode's partial windows count only what
    lies within the input and its padding.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.avg_pool2d(ag.arange(16.0).reshape(1, 1, 4, 4), 2).tolist()
    [[[[2.5, 4.5], [10.5, 12.5]]]]
    """
    x, unbatched = _batched(input, 2, "avg_pool2d")
    kernel, stride, padding, _, out = pool_geometry("avg_pool2d", x, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override == 0:
        raise ValueError("avg_pool2d: divisor_override must not be 0")
    (n, c, h, w) = x.shape
    extra = [max((o - 1) * s + k - size - 2 * p, 0) for o, size, k, s, p in zip(out, (h, w), kernel, stride, padding)]
    pads = tuple((p, p + e) for p, e in zip(padding, extra))
    ones = ag.ones((1, 1, *kernel), dtype=x.dtype, device=x.device)
    sums = P.conv2d.bind(ag.reshape(x, (n * c, 1, h, w)), ones, ConvGeometry(stride, pads, (1, 1), 1))
    if divisor_override is not None:
        divisor: Any = divisor_override
    else:
        rows, cols = (
            window_counts(o, size, k, s, p, count_include_pad)
            for o, size, k, s, p in zip(out, (h, w), kernel, stride, padding)
        )
        divisor = ag.asarray(np.outer(rows, cols), dtype=x.dtype, device=x.device)
    result = ag.reshape(sums / divisor, (n, c, *out))
    return result[0] if unbatched else result


def window_counts(out: int, size: int, kernel: int, stride: int, padding: int, count_padding: bool) -> np.ndarray:
    """How many elements each window along one axis averages over (PyTorch's rule)."""
    start = np.arange(out) * stride - padding
    end = np.minimum(start + kernel, size + padding)
    if count_padding:
        return end - start
    return np.minimum(end, size) - np.maximum(start, 0)


def max_pool1d(
    input: Tensor,
    kernel_size: int,
    stride: int | None = None,
    padding: int = 0,
    dilation: int = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """`max_pool2d` over the last axis of `input` (N, C, L)."""
    x, unbatched = _batched(input, 1, "max_pool1d")
    pooled = max_pool2d(
        ag.expand_dims(x, axis=2),
        (1, *_pair(kernel_size, "kernel_size", 1)),
        None if stride is None else (1, *_pair(stride, "stride", 1)),
        (0, *_pair(padding, "padding", 1)),
        (1, *_pair(dilation, "dilation", 1)),
        ceil_mode,
        return_indices,
    )
    results = [ag.squeeze(t, axis=2) for t in (pooled if return_indices else (pooled,))]
    results = [t[0] for t in results] if unbatched else results
    return tuple(results) if return_indices else results[0]


def avg_pool1d(
    input: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None = None,
    padding: IntOrPair = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """`avg_pool2d` over the last axis of `input` (N, C, L)."""
    x, unbatched = _batched(input, 1, "avg_pool1d")
    out = ag.squeeze(
        avg_pool2d(
            ag.expand_dims(x, axis=2),
            (1, *_pair(kernel_size, "kernel_size", 1)),
            None if stride is None else (1, *_pair(stride, "stride", 1)),
            (0, *_pair(padding, "padding", 1)),
            ceil_mode,
            count_include_pad,
        ),
        axis=2,
    )
    return out[0] if unbatched else out


__all__ = [
    "avg_pool1d",
    "avg_pool2d",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "max_pool1d",
    "max_pool2d",
    "pool_geometry",
    "unfold",
    "window_counts",
]
