"""Convolution, transposed convolution, unfold and pooling over (N, C, H, W) images and
(N, C, L) sequences, with PyTorch's signatures and defaults.

Each is built on the `autograd_core.convolution` primitives or a gather (max pooling), so its
gradients come from those and are of any order; a 1-D op is the 2-D one on a height of 1.
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
    values = (value,) * size if isinstance(value, int) else tuple(value)
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
    padding: str | IntOrPair, kernel: tuple[int, int], stride: tuple[int, int], dilation: tuple[int, int], op: str
) -> tuple[tuple[int, int], tuple[int, int]]:
    if padding == "valid":
        return (0, 0), (0, 0)
    if padding == "same":
        if stride != (1, 1):
            raise ValueError(f"{op}: padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    if isinstance(padding, str):
        raise ValueError(f"{op}: padding must be 'valid', 'same', an int or a tuple of ints, got {padding!r}")
    rows, cols = _pair(padding, "padding")
    if rows < 0 or cols < 0:
        raise ValueError(f"{op}: padding must be non-negative, got {padding!r}")
    return (rows, rows), (cols, cols)


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
    x, unbatched = _batched(input, 2, "conv_transpose2d")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    padding, output_padding = _pair(padding, "padding"), _pair(output_padding, "output_padding")
    _check_conv("conv_transpose2d", x, weight, groups, weight.shape[0])
    if x.shape[1] != weight.shape[0]:
        raise ValueError(
            f"conv_transpose2d: the input has {x.shape[1]} channels, the weight {weight.shape} "
            f"expects {weight.shape[0]}"
        )
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        raise ValueError(
            f"conv_transpose2d: output_padding {output_padding} must be smaller than either "
            f"stride {stride} or dilation {dilation}"
        )
    size = tuple(
        (n - 1) * s - 2 * p + d * (k - 1) + op + 1
        for n, s, p, d, k, op in zip(x.shape[2:], stride, padding, dilation, weight.shape[2:], output_padding)
    )
    if min(size) < 1:
        raise ValueError(f"conv_transpose2d: the output size {size} is not positive")
    shape = (x.shape[0], weight.shape[1] * groups, *size)
    geometry = ConvGeometry(stride, tuple((p, p) for p in padding), dilation, groups)
    out = _with_bias(P.conv2d_grad_input.bind(x, weight, shape, geometry), bias)
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


def _pool_geometry(
    op: str,
    x: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None,
    padding: IntOrPair,
    dilation: IntOrPair,
    ceil_mode: bool,
) -> tuple[tuple[int, ...], ...]:
    if 0 in x.shape[1:]:  # as PyTorch: only the batch may be empty
        raise ValueError(
            f"{op}: expected an input with nonzero channel and spatial sizes (the batch may be 0), got shape {x.shape}"
        )
    kernel = _pair(kernel_size, "kernel_size")
    stride = kernel if stride is None or stride == () else _pair(stride, "stride")
    padding, dilation = _pair(padding, "padding"), _pair(dilation, "dilation")
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
    kernel, stride, padding, dilation, _ = _pool_geometry(
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
    kernel, stride, padding, _, out = _pool_geometry("avg_pool2d", x, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override <= 0:
        raise ValueError(f"avg_pool2d: divisor_override must be positive, got {divisor_override}")
    (n, c, h, w) = x.shape
    extra = [max((o - 1) * s + k - size - 2 * p, 0) for o, size, k, s, p in zip(out, (h, w), kernel, stride, padding)]
    pads = tuple((p, p + e) for p, e in zip(padding, extra))
    ones = ag.ones((1, 1, *kernel), dtype=x.dtype, device=x.device)
    sums = P.conv2d.bind(ag.reshape(x, (n * c, 1, h, w)), ones, ConvGeometry(stride, pads, (1, 1), 1))
    if divisor_override is not None:
        divisor: Any = divisor_override
    else:
        rows, cols = (
            _window_counts(o, size, k, s, p, count_include_pad)
            for o, size, k, s, p in zip(out, (h, w), kernel, stride, padding)
        )
        divisor = ag.asarray(np.outer(rows, cols), dtype=x.dtype, device=x.device)
    result = ag.reshape(sums / divisor, (n, c, *out))
    return result[0] if unbatched else result


def _window_counts(out: int, size: int, kernel: int, stride: int, padding: int, count_padding: bool) -> np.ndarray:
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
        (0, padding),
        (1, dilation),
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


__all__ = ["avg_pool1d", "avg_pool2d", "conv1d", "conv2d", "conv_transpose2d", "max_pool1d", "max_pool2d", "unfold"]
