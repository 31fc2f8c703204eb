"""Functions over the spatial axes of images and signals, shaped (N, C, *spatial): padding,
resampling, adaptive average pooling and channel dropout, with PyTorch's names, signatures
and results.

Each is composed of differentiable autograd_core ops, so its gradient is derived and of any
order. Padding gathers every padded axis with one `take` of a constant index array (reflect,
replicate, circular) or joins constant blocks with `concat`. Linear resampling and adaptive
pooling are linear maps along each axis: a constant (out, in) matrix of interpolation weights
or window averages, built on the host for the static shapes and applied with one matmul per
axis (its transpose is the backward). Nearest resampling gathers with `take`.

The index and weight rules are those of PyTorch's CPU kernels, down to their float32
roundings, so resampled results match PyTorch's index for index.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

import autograd_core as ag
from autograd_core import primitives as P
from autograd_core.autodiff.tensor import Tensor
from nn.convolution import IntOrPair, _batched, _pair, pool_geometry, window_counts
from nn.functional_base import check_mask_is_drawn_per_call, dropout

__all__ = [
    "fractional_max_pool2d",
    "fractional_max_pool3d",
    "grid_sample",
    "grid_sampler_2d",
    "grid_sampler_3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "along_axis",
    "avg_pool3d",
    "max_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "dropout1d",
    "dropout2d",
    "interpolate",
    "pad",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]

_PAD_MODES = ("constant", "reflect", "replicate", "circular")
_NEAREST_MODES = ("nearest", "nearest-exact")
_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3}  # mode: spatial axes
_INTERPOLATE_MODES = (*_NEAREST_MODES, *_LINEAR_MODES, "bicubic", "area")
_CUBIC_A = -0.75  # the cubic convolution's parameter in PyTorch's (and OpenCV's) bicubic


def _constant(values: np.ndarray, like: Tensor) -> Tensor:
    """A host array as a constant tensor of `like`'s dtype, on `like`'s backend and device."""
    return ag.tensor(values, dtype=like.dtype, device=like.device)


def _per_axis(value: Any, dims: int, caller: str, name: str) -> tuple:
    """An int (or float) for every one of `dims` axes, or a sequence with one per axis."""
    if not isinstance(value, (tuple, list)):
        return (value,) * dims
    if len(value) != dims:
        raise ValueError(f"{caller}: {name}={tuple(value)} has {len(value)} entries for {dims} spatial axes")
    return tuple(value)


def _check_floating(caller: str, x: Tensor) -> None:
    if not ag.isdtype(x.dtype, "real floating"):
        raise TypeError(
            f"{caller}: expected a floating-point input, got {x.dtype.name}; convert it with "
            "x.astype(autograd_core.float32)"
        )


# --- pad --------------------------------------------------------------------------------------
def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """`input` padded on its last ``len(pad) // 2`` axes, as PyTorch's ``F.pad``: `pad` holds
    (before, after) pairs, the last axis first. A negative amount crops. `mode` is "constant"
    (filled with `value`, default 0), "reflect" (mirrored about the edge, which is not
    repeated), "replicate" (the edge repeated) or "circular" (wrapped around). The non-constant
    modes pad any trailing axes of an input of any rank (PyTorch's take 1 to 3 axes of
    2-D to 5-D inputs); the result is the same where both apply.

    >>> import autograd_core as ag, nn.spatial
    >>> x = ag.asarray([[1.0, 2.0, 3.0]])
    >>> nn.spatial.pad(x, (2, 1), mode="reflect").tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
    >>> nn.spatial.pad(x, (1, -1, 1, 0), value=9.0).tolist()
    [[9.0, 9.0, 9.0], [9.0, 1.0, 2.0]]
    """
    pads = tuple(int(p) for p in pad)
    if len(pads) % 2:
        raise ValueError(
            f"pad: padding of odd length {len(pads)}; give a (before, after) pair for each padded "
            "axis, the last axis first"
        )
    if len(pads) // 2 > input.ndim:
        raise ValueError(
            f"pad: {len(pads)} numbers pad {len(pads) // 2} axes, but the input has {input.ndim} (shape {input.shape})"
        )
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: unknown mode {mode!r}; supported: {', '.join(_PAD_MODES)}")
    if mode != "constant" and value not in (None, 0):
        raise ValueError(f"pad: mode {mode!r} takes no value; only mode='constant' fills with one")
    x = input
    for i in range(len(pads) // 2):
        axis, before, after = input.ndim - 1 - i, pads[2 * i], pads[2 * i + 1]
        size = input.shape[axis]
        if size + before + after < 0:
            raise ValueError(
                f"pad: padding ({before}, {after}) would leave axis {axis} of size {size} with "
                f"size {size + before + after}"
            )
        if not before and not after:
            continue
        if mode == "constant":
            x = _pad_constant(x, axis, before, after, 0 if value is None else value)
        else:
            x = ag.take(x, _pad_source(mode, size, before, after), axis=axis)
    return x


def _pad_constant(x: Tensor, axis: int, before: int, after: int, value: float) -> Tensor:
    """`x` cropped by the negative amounts, then joined with blocks of `value`."""
    size = x.shape[axis]
    kept = x[(slice(None),) * axis + (slice(max(-before, 0), size - max(-after, 0)),)]

    def block(n: int) -> list[Tensor]:
        shape = x.shape[:axis] + (n,) + x.shape[axis + 1 :]
        return [ag.full(shape, value, dtype=x.dtype, device=x.device)] if n > 0 else []

    parts = block(before) + [kept] + block(after)
    return ag.concat(parts, axis=axis) if len(parts) > 1 else kept


@functools.lru_cache(maxsize=512)
def _pad_source(mode: str, size: int, before: int, after: int) -> np.ndarray:
    """The input position each position of a padded axis copies, positions counted from the
    input's first element (so the padded axis runs over [-before, size + after))."""
    j = np.arange(-before, size + after)
    if mode == "reflect":
        if before >= size or after >= size:
            raise ValueError(
                f"pad: reflect padding ({before}, {after}) must be smaller than the size {size} of "
                "the axis it pads; use mode='replicate' or 'circular' for wider padding"
            )
        return np.where(j < 0, -j, np.where(j >= size, 2 * (size - 1) - j, j))
    if size == 0:
        raise ValueError(f"pad: an axis of size 0 cannot be padded in mode {mode!r}")
    if mode == "replicate":
        return np.clip(j, 0, size - 1)
    # circular, as PyTorch: crop first, then wrap around what is left, at most once
    start = max(-before, 0)
    kept = size - start - max(-after, 0)
    if max(before, after) > kept:
        raise ValueError(
            f"pad: circular padding ({before}, {after}) of an axis of size {size} would wrap around "
            f"more than once; pad at most {kept}"
        )
    return start + (j - start) % max(kept, 1)


# --- interpolate ------------------------------------------------------------------------------
def interpolate(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """`input` (N, C, L), (N, C, H, W) or (N, C, D, H, W) resampled to `size`, or to
    ``floor(in * scale_factor)`` per spatial axis, as PyTorch's ``F.interpolate``.

    Modes: "nearest" (source index ``floor(dst * scale)``), "nearest-exact" (the pixel
    centres' rule), "linear" / "bilinear" / "trilinear" for 1 / 2 / 3 spatial axes (with
    `align_corners` False: pixel centres, source ``max((dst + 0.5) * scale - 0.5, 0)``;
    True: the corner pixels aligned, scale ``(in - 1) / (out - 1)``), and "area" (adaptive
    average pooling). With a `scale_factor` the scale is ``1 / scale_factor`` unless
    `recompute_scale_factor` is True, which takes ``in / out``.

    >>> import autograd_core as ag, nn.spatial
    >>> x = ag.asarray([[[0.0, 1.0, 2.0]]])
    >>> nn.spatial.interpolate(x, scale_factor=1.5).tolist()
    [[[0.0, 0.0, 1.0, 2.0]]]
    >>> nn.spatial.interpolate(x, size=5, mode="linear", align_corners=True).tolist()
    [[[0.0, 0.5, 1.0, 1.5, 2.0]]]
    """
    dims = input.ndim - 2
    if mode not in _INTERPOLATE_MODES:
        raise ValueError(f"interpolate: mode {mode!r} is not supported; supported: {', '.join(_INTERPOLATE_MODES)}")
    if not 1 <= dims <= 3:
        raise ValueError(
            f"interpolate: expected an input (N, C, L), (N, C, H, W) or (N, C, D, H, W), got shape {input.shape}"
        )
    if mode == "bicubic" and dims != 2:
        raise ValueError(f"interpolate: mode 'bicubic' needs 4-D input (N, C, H, W), got shape {input.shape}")
    if mode in _LINEAR_MODES and _LINEAR_MODES[mode] != dims:
        fitting = next(m for m, d in _LINEAR_MODES.items() if d == dims)
        raise ValueError(
            f"interpolate: mode {mode!r} needs {_LINEAR_MODES[mode] + 2}-D input; for this "
            f"{input.ndim}-D one use mode={fitting!r}"
        )
    if align_corners is not None and mode not in (*_LINEAR_MODES, "bicubic"):
        raise ValueError(
            f"interpolate: align_corners applies to the modes {', '.join(_LINEAR_MODES)} and bicubic only, not {mode!r}"
        )
    if antialias:
        raise NotImplementedError(
            "interpolate: antialias=True is not supported; supported: antialias=False "
            f"with the modes {', '.join(_INTERPOLATE_MODES)}"
        )
    sizes, scales = _output_size(input.shape[2:], size, scale_factor, recompute_scale_factor)
    if mode == "area":
        return _adaptive_avg_pool(input, sizes, dims, "interpolate")
    if mode in _LINEAR_MODES or mode == "bicubic":
        _check_floating("interpolate", input)
    opmath = "float64" if input.dtype == ag.float64 else "float32"  # the precision PyTorch's kernels compute in
    # PyTorch's CPU kernel for 2-D nearest resampling to outputs with H + W <= 128 has its own rule
    legacy = dims == 2 and sum(sizes) <= 128
    x = input
    for axis, n_in, n_out, scale in zip(range(2, input.ndim), input.shape[2:], sizes, scales):
        if mode in _NEAREST_MODES:
            x = ag.take(x, _nearest_source(n_in, n_out, scale, mode == "nearest-exact", opmath, legacy), axis=axis)
        elif mode == "bicubic":
            x = along_axis(x, axis, _cubic_weights(n_in, n_out, scale, bool(align_corners), opmath))
        else:
            x = along_axis(x, axis, _linear_weights(n_in, n_out, scale, bool(align_corners), opmath))
    return x


def _output_size(
    shape: tuple[int, ...], size: Any, scale_factor: Any, recompute_scale_factor: bool | None
) -> tuple[tuple[int, ...], tuple[float | None, ...]]:
    """The output's spatial sizes, and the scale factors the index rules use (None: in/out)."""
    dims = len(shape)
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give exactly one of size and scale_factor")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("interpolate: recompute_scale_factor is not meaningful with an explicit size")
        sizes, scales = _per_axis(size, dims, "interpolate", "size"), (None,) * dims
        if not all(isinstance(s, numbers.Integral) for s in sizes):
            raise TypeError(f"interpolate: size must be an int or a tuple of ints, got {size!r}")
        sizes = tuple(int(s) for s in sizes)
    else:
        factors = tuple(float(s) for s in _per_axis(scale_factor, dims, "interpolate", "scale_factor"))
        sizes = tuple(int(n * s) for n, s in zip(shape, factors))  # truncated, as PyTorch does
        scales = (None,) * dims if recompute_scale_factor else factors
    if min(shape) <= 0 or min(sizes) <= 0:
        raise ValueError(f"interpolate: input and output sizes must be positive, got input {shape} and output {sizes}")
    return sizes, scales


def _ratio(n_in: int, n_out: int, scale: float | None, t: type, align_corners: bool = False) -> Any:
    """Input pixels per output pixel, in precision `t`: ``1 / scale_factor`` or ``in / out``;
    with `align_corners`, ``(in - 1) / (out - 1)`` (0 for one output pixel)."""
    if align_corners:
        return t(n_in - 1) / t(n_out - 1) if n_out > 1 else t(0)
    return t(1.0 / scale) if scale is not None and scale > 0 else t(n_in) / t(n_out)


def _source_position(ratio: Any, n_out: int, align_corners: bool, t: type) -> np.ndarray:
    """Where each output pixel samples the input, rounded once to precision `t` as PyTorch's
    fused multiply-add does (exact in float64 for float32; float64 itself is not fused)."""
    i = np.arange(n_out, dtype=np.float64)
    ratio = np.float64(ratio)
    src = ratio * i if align_corners else np.maximum(ratio * (i + 0.5) - 0.5, 0.0)
    return src.astype(t)


def _floor_index(src: np.ndarray, n_in: int) -> np.ndarray:
    """PyTorch's ``min(floorf(src), in - 1)``: floorf rounds its argument to float32 first."""
    return np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n_in - 1)


@functools.lru_cache(maxsize=256)
def _nearest_source(n_in: int, n_out: int, scale: float | None, exact: bool, opmath: str, legacy: bool) -> np.ndarray:
    """The input index each output pixel copies, by PyTorch's CPU rules: in the precision of
    the input's dtype (`opmath`); or, in its `legacy` kernel, in float32 with the shortcuts
    for out == in and out == 2 * in."""
    if legacy:
        if not exact and n_out in (n_in, 2 * n_in):
            return np.arange(n_out) * n_in // n_out
        offset = 0.5 if exact else 0.0
        return _floor_index((np.arange(n_out) + offset) * np.float64(_ratio(n_in, n_out, scale, np.float32)), n_in)
    t = np.dtype(opmath).type
    ratio = _ratio(n_in, n_out, scale, t)
    if exact:  # round(centre - 0.5), as floor(max(centre - 0.5, 0) + 0.5)
        return _floor_index(_source_position(ratio, n_out, False, t) + 0.5, n_in)
    return _floor_index(_source_position(ratio, n_out, True, t), n_in)


@functools.lru_cache(maxsize=256)
def _linear_weights(n_in: int, n_out: int, scale: float | None, align_corners: bool, opmath: str) -> np.ndarray:
    """The (n_out, n_in) matrix of linear interpolation: each output pixel mixes the two input
    pixels around its source position (the last one twice at the far edge)."""
    if n_out == n_in:
        return np.eye(n_in)
    t = np.dtype(opmath).type
    src = _source_position(_ratio(n_in, n_out, scale, t, align_corners), n_out, align_corners, t)
    low = _floor_index(src, n_in)
    high = low + (low < n_in - 1)
    weight_high = np.clip(src - low.astype(t), 0, 1)
    rows, weights = np.arange(n_out), np.zeros((n_out, n_in), t)
    np.add.at(weights, (rows, low), 1 - weight_high)
    np.add.at(weights, (rows, high), weight_high)
    return weights


@functools.lru_cache(maxsize=256)
def _cubic_weights(n_in: int, n_out: int, scale: float | None, align_corners: bool, opmath: str) -> np.ndarray:
    """The (n_out, n_in) matrix of cubic convolution (Keys' kernel, a = -0.75), as PyTorch's
    bicubic: four taps around each source position, unclamped below 0, with the indices past
    either edge clamped to it."""
    t = np.dtype(opmath).type
    ratio = np.float64(_ratio(n_in, n_out, scale, t, align_corners))
    i = np.arange(n_out, dtype=np.float64)
    src = (ratio * i if align_corners else ratio * (i + 0.5) - 0.5).astype(t)
    low = np.floor(src).astype(np.int64)
    frac = (src - low.astype(t)).astype(t)
    a = _CUBIC_A

    def near(x: np.ndarray) -> np.ndarray:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    taps = (far(frac + 1), near(frac), near(1 - frac), far(2 - frac))
    rows, weights = np.arange(n_out), np.zeros((n_out, n_in), t)
    for k, tap in enumerate(taps):
        np.add.at(weights, (rows, np.clip(low - 1 + k, 0, n_in - 1)), tap.astype(t))
    return weights


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """`interpolate` in mode "nearest" (PyTorch's deprecated spelling).

    >>> import autograd_core as ag, nn.spatial
    >>> nn.spatial.upsample_nearest(ag.ones(1, 1, 2), scale_factor=2).shape
    (1, 1, 4)
    """
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """`interpolate` in mode "bilinear" with ``align_corners=True`` (PyTorch's deprecated spelling).

    >>> import autograd_core as ag, nn.spatial
    >>> nn.spatial.upsample_bilinear(ag.ones(1, 1, 2, 2), scale_factor=2).shape
    (1, 1, 4, 4)
    """
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def upsample(
    input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest", align_corners: bool | None = None
) -> Tensor:
    """`interpolate` (PyTorch's deprecated spelling)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def along_axis(x: Tensor, axis: int, matrix: np.ndarray) -> Tensor:
    """`x` with the linear map `matrix` (out, in) applied along `axis`."""
    if axis == x.ndim - 1:
        return ag.matmul(x, _constant(np.ascontiguousarray(matrix.T), x))
    if axis == x.ndim - 2:
        return ag.matmul(_constant(matrix, x), x)
    return ag.moveaxis(along_axis(ag.moveaxis(x, axis, -2), x.ndim - 2, matrix), -2, axis)


# --- adaptive average pooling -----------------------------------------------------------------
def adaptive_avg_pool1d(input: Tensor, output_size: int | Sequence[int]) -> Tensor:
    """Average pooling of (N, C, L) or (C, L) to `output_size` windows: window i covers
    ``[floor(i * L / out), ceil((i + 1) * L / out))``, as in PyTorch."""
    return _adaptive_avg_pool(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input: Tensor, output_size: int | Sequence[int | None]) -> Tensor:
    """Average pooling of (N, C, H, W) or (C, H, W) to `output_size` (an int for both axes, or
    a pair whose None entries keep the input's size): window i of an axis of size n pooled to
    `out` covers ``[floor(i * n / out), ceil((i + 1) * n / out))``, as in PyTorch, so windows
    may overlap or differ in size when `out` does not divide n.

    >>> import autograd_core as ag, nn.spatial
    >>> x = ag.reshape(ag.arange(12.0), (1, 3, 4))
    >>> nn.spatial.adaptive_avg_pool2d(x, (1, 2)).tolist()
    [[[4.5, 6.5]]]
    """
    return _adaptive_avg_pool(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input: Tensor, output_size: int | Sequence[int | None]) -> Tensor:
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) to `output_size`, windows as in
    `adaptive_avg_pool2d` along each of the three axes."""
    return _adaptive_avg_pool(input, output_size, 3, "adaptive_avg_pool3d")


def _adaptive_avg_pool(x: Tensor, output_size: Any, dims: int, caller: str) -> Tensor:
    if x.ndim not in (dims + 1, dims + 2):
        raise ValueError(f"{caller}: expected a {dims + 1}-D or {dims + 2}-D input, got shape {x.shape}")
    _check_floating(caller, x)
    spatial = x.shape[x.ndim - dims :]
    sizes = tuple(
        n if s is None else int(s) for n, s in zip(spatial, _per_axis(output_size, dims, caller, "output_size"))
    )
    if min(spatial) <= 0 or min(sizes) < 0:
        raise ValueError(
            f"{caller}: cannot pool spatial sizes {spatial} to {sizes}; the input's must be positive "
            "and the output's non-negative"
        )
    for axis, n_in, n_out in zip(range(x.ndim - dims, x.ndim), spatial, sizes):
        x = along_axis(x, axis, _window_means(n_in, n_out))
    return x


@functools.lru_cache(maxsize=256)
def _window_means(n_in: int, n_out: int) -> np.ndarray:
    """The (n_out, n_in) matrix averaging window i = [floor(i n_in / n_out), ceil((i+1) n_in / n_out))."""
    i = np.arange(n_out)
    start, end = i * n_in // n_out, -(-(i + 1) * n_in // n_out)
    j = np.arange(n_in)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return inside / (end - start)[:, None]


# --- channel dropout --------------------------------------------------------------------------
def dropout1d(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) with probability `p` and scale the others by
    1/(1-p), in training only; each channel's mask is drawn as `F.dropout` draws its."""
    if input.ndim not in (2, 3):
        raise ValueError(f"dropout1d: expected a 2-D (C, L) or 3-D (N, C, L) input, got shape {input.shape}")
    return _channel_dropout(input, p, training, input.shape[:-1])


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero whole channels (N, C) of (N, C, H, W) with probability `p` and scale the others by
    1/(1-p), in training only; each channel's mask is drawn as `F.dropout` draws its.

    As PyTorch 2.13 does (with the same warnings), a 3-D input is taken as (N, C, L), its
    channels dropped as `dropout1d` would, and inputs of other ranks drop their (N, C) slices.

    >>> import autograd_core as ag, nn.spatial
    >>> channels = ag.reshape(nn.spatial.dropout2d(ag.ones((2, 3, 4, 4)), p=0.5), (6, 16)).tolist()
    >>> all(set(channel) in ({0.0}, {2.0}) for channel in channels)
    True
    """
    if input.ndim < 2:
        raise ValueError(f"dropout2d: expected a 4-D (N, C, H, W) input, got shape {input.shape}")
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: received a 3-D input and takes it, as PyTorch does, as (N, C, L) with channel-wise "
            "1-D dropout; use dropout1d to say so (a future PyTorch takes it as (C, H, W))",
            stacklevel=2,
        )
    elif input.ndim != 4:
        warnings.warn(
            f"dropout2d: received a {input.ndim}-D input; it drops the (N, C) slices, but dropout2d is for "
            "4-D (N, C, H, W) inputs (PyTorch deprecates the others); use dropout instead",
            stacklevel=2,
        )
    return _channel_dropout(input, p, training, input.shape[:2])


def _channel_dropout(x: Tensor, p: float, training: bool, channels: tuple[int, ...]) -> Tensor:
    """`x` times a mask of shape `channels` (followed by ones), drawn by `F.dropout`."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    if not training or p == 0:
        return x
    check_mask_is_drawn_per_call(x)
    shape = channels + (1,) * (x.ndim - len(channels))
    return x * dropout(ag.ones(shape, dtype=x.dtype, device=x.device), p)


# --- pooling over windows gathered per axis -----------------------------------------------------
# A window of a pooling is a product of one range per axis, so gathering each axis's windows
# with one `take` of a constant (out, k) index array lays them all out as (..., out, k, ...);
# a max or a sum over the k axes pools. The gather's gradient scatter-adds, so pooling is
# differentiable to any order with no kernel of its own.
def _window_max(
    x: Tensor, windows: Sequence[np.ndarray], sources: Sequence[np.ndarray], sizes: Sequence[int]
) -> tuple[Tensor, Tensor]:
    """The maximum of each window of the batched `x` (N, C, *spatial) and its position in the
    flattened spatial plane of the input (the first maximum where several tie): `windows` holds
    per axis the (out, k) positions of `x` each window covers, `sources` the same positions
    in an input of spatial `sizes` (they differ by its padding)."""
    dims = len(windows)
    for a, index in enumerate(windows):
        axis = 2 + 2 * a
        picked = ag.take(x, ag.asarray(index.reshape(-1), dtype=ag.int64, device=x.device), axis=axis)
        x = ag.reshape(picked, (*picked.shape[:axis], *index.shape, *picked.shape[axis + 1 :]))
    outs = [2 + 2 * a for a in range(dims)]
    x = ag.permute_dims(x, (0, 1, *outs, *(o + 1 for o in outs)))
    out_shape = tuple(w.shape[0] for w in windows)
    x = ag.reshape(x, (*x.shape[: 2 + dims], -1))
    best = ag.argmax(x, axis=-1, keepdims=True)
    values = ag.squeeze(ag.take_along_axis(x, best, axis=-1), axis=-1)
    flat = np.zeros(out_shape + tuple(w.shape[1] for w in windows), dtype=np.int64)
    for a, source in enumerate(sources):
        shape = [1] * (2 * dims)
        shape[a], shape[dims + a] = source.shape
        flat = flat + source.reshape(shape) * math.prod(sizes[a + 1 :])
    flat = ag.broadcast_to(ag.asarray(flat.reshape(*out_shape, -1), device=x.device), x.shape)
    indices = ag.squeeze(ag.take_along_axis(flat, best, axis=-1), axis=-1)
    return values, indices


def _unbatched_results(values: Tensor, indices: Tensor, unbatched: bool, return_indices: bool) -> Any:
    if unbatched:
        values, indices = values[0], indices[0]
    return (values, indices.detach()) if return_indices else values


def max_pool3d(
    input: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None = None,
    padding: IntOrPair = 0,
    dilation: IntOrPair = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """The maximum over each window of `input` (N, C, D, H, W) or (C, D, H, W); with
    `return_indices`, also each maximum's position in its flattened (D, H, W) volume. The
    gradient goes to the first maximum of each window, as in PyTorch.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.max_pool3d(ag.reshape(ag.arange(8.0), (1, 1, 2, 2, 2)), 2).tolist()
    [[[[[7.0]]]]]
    """
    x, unbatched = _batched(input, 3, "max_pool3d")
    kernel, stride, padding, dilation, out = pool_geometry(
        "max_pool3d", x, kernel_size, stride, padding, dilation, ceil_mode, 3
    )
    windows, pads = [], []
    for n, k, s, p, d, o in zip(x.shape[2:], kernel, stride, padding, dilation, out):
        index = np.arange(o)[:, None] * s + np.arange(k)[None, :] * d
        windows.append(index)
        pads.append((p, max(int(index.max()) + 1 - n - p, 0)))
    flat_pads = [amount for pair in reversed(pads) for amount in pair]
    padded = pad(x, flat_pads, value=-math.inf)
    sources = [w - p for w, (p, _) in zip(windows, pads)]
    return _unbatched_results(*_window_max(padded, windows, sources, x.shape[2:]), unbatched, return_indices)


def _adaptive_windows(n_in: int, n_out: int) -> np.ndarray:
    """The (n_out, k) positions of adaptive window i = [floor(i n / out), ceil((i+1) n / out)),
    k the longest window's length, a shorter window repeating its last position."""
    i = np.arange(n_out)
    start, end = i * n_in // n_out, -(-(i + 1) * n_in // n_out)
    k = int((end - start).max()) if n_out else 1
    return np.minimum(start[:, None] + np.arange(k)[None, :], end[:, None] - 1)


def _adaptive_max_pool(input: Tensor, output_size: Any, dims: int, caller: str, return_indices: bool) -> Any:
    x, unbatched = _batched(input, dims, caller)
    spatial = x.shape[2:]
    sizes = tuple(
        n if s is None else int(s) for n, s in zip(spatial, _per_axis(output_size, dims, caller, "output_size"))
    )
    if 0 in x.shape[1:] or min(sizes) <= 0:
        raise ValueError(f"{caller}: cannot pool spatial sizes {spatial} to {sizes}; both must be positive")
    windows = [_adaptive_windows(n, o) for n, o in zip(spatial, sizes)]
    return _unbatched_results(*_window_max(x, windows, windows, spatial), unbatched, return_indices)


def adaptive_max_pool1d(input: Tensor, output_size: int | Sequence[int], return_indices: bool = False) -> Any:
    """Max pooling of (N, C, L) or (C, L) to `output_size` windows (those of `adaptive_avg_pool1d`)."""
    return _adaptive_max_pool(input, output_size, 1, "adaptive_max_pool1d", return_indices)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling of (N, C, H, W) or (C, H, W) to `output_size` (None keeps an axis's size),
    windows as in `adaptive_avg_pool2d`; with `return_indices`, each maximum's position in
    its flattened (H, W) plane.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.adaptive_max_pool2d(ag.reshape(ag.arange(12.0), (1, 3, 4)), (1, 2)).tolist()
    [[[9.0, 11.0]]]
    """
    return _adaptive_max_pool(input, output_size, 2, "adaptive_max_pool2d", return_indices)


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to `output_size`, as `adaptive_max_pool2d`."""
    return _adaptive_max_pool(input, output_size, 3, "adaptive_max_pool3d", return_indices)


def avg_pool3d(
    input: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None = None,
    padding: IntOrPair = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean over each window of `input` (N, C, D, H, W) or (C, D, H, W), PyTorch's divisor
    included (as `avg_pool2d`): a window sum along each axis is a constant (out, in) matrix,
    applied with a matmul, and the divisor the product of the axes' window counts.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.avg_pool3d(ag.reshape(ag.arange(8.0), (1, 1, 2, 2, 2)), 2).tolist()
    [[[[[3.5]]]]]
    """
    x, unbatched = _batched(input, 3, "avg_pool3d")
    kernel, stride, padding, _, out = pool_geometry("avg_pool3d", x, kernel_size, stride, padding, 1, ceil_mode, 3)
    if divisor_override == 0:
        raise ValueError("avg_pool3d: divisor_override must not be 0")
    divisor: Any = 1.0 if divisor_override is None else float(divisor_override)
    for axis, n, k, s, p, o in zip(range(2, 5), x.shape[2:], kernel, stride, padding, out):
        start = np.arange(o) * s - p
        inside = (np.arange(n)[None, :] >= start[:, None]) & (np.arange(n)[None, :] < start[:, None] + k)
        counts = window_counts(o, n, k, s, p, count_include_pad) if divisor_override is None else np.ones(o)
        x = along_axis(x, axis, inside / counts[:, None])
    result = x / divisor
    return result[0] if unbatched else result


def _max_unpool(
    input: Tensor,
    indices: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None,
    padding: IntOrPair,
    output_size: Sequence[int] | None,
    dims: int,
) -> Tensor:
    """Zeros of the pooled input's spatial size with each value of `input` written at its
    position in `indices` (what a max pooling returned): a scatter whose gradient gathers."""
    caller = f"max_unpool{dims}d"
    x, unbatched = _batched(input, dims, caller)
    kernel = _pair(kernel_size, "kernel_size", dims)
    stride = kernel if stride is None or stride == () else _pair(stride, "stride", dims)
    padding = _pair(padding, "padding", dims)
    if output_size is None:
        sizes = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(x.shape[2:], stride, padding, kernel))
    else:
        sizes = tuple(int(v) for v in tuple(output_size)[-dims:])
    if tuple(indices.shape) != tuple(input.shape):
        raise ValueError(f"{caller}: indices of shape {indices.shape} must have the input's shape {input.shape}")
    backend, xp = x.backend, x.backend.xp
    plane, rows = math.prod(sizes), x.shape[0] * x.shape[1]
    index = xp.reshape(xp.astype(indices.array, backend.dtype("int64")), (rows, -1))
    if index.shape[1] and rows and not backend.is_traced(index):
        low, high = backend.value_range(index)
        if low < 0 or high >= plane:
            raise IndexError(f"{caller}: indices must lie in [0, {plane}) for the output size {sizes}")
    offsets = xp.arange(rows, dtype=index.dtype, device=backend.device)[:, None] * plane
    flat = xp.reshape(index + offsets, (-1,))
    # a position several values point to keeps the last, as PyTorch's writes do, but every one
    # of them gets that position's gradient (PyTorch's gather): the others add x - x
    values = ag.reshape(x, (-1,))
    last = P.constant(_last_occurrences(xp, flat, backend.device), backend)
    values = ag.where(last, values, values - values.detach())
    out = P.index_add.bind(values, (rows * plane,), 0, flat)
    out = ag.reshape(out, (*x.shape[:2], *sizes))
    return out[0] if unbatched else out


def _last_occurrences(xp: Any, index: Any, device: Any) -> Any:
    """The mask of the entries of the 1-D `index` that no later entry repeats (a stable sort
    groups the repeats in order; the last of each run is kept, then unsorted)."""
    if index.shape[0] == 0:
        return xp.astype(index, xp.bool)
    order = xp.argsort(index, stable=True)
    ordered = xp.take(index, order)
    last = xp.concat([ordered[1:] != ordered[:-1], xp.ones((1,), dtype=xp.bool, device=device)])
    return xp.take(last, xp.argsort(order))


def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None = None,
    padding: IntOrPair = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """The partial inverse of `max_pool1d`: the maxima put back at their `indices`, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None = None,
    padding: IntOrPair = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """The partial inverse of `max_pool2d`: the maxima put back at their `indices` (positions in
    the flattened (H, W) plane), zeros elsewhere.

    >>> import autograd_core as ag, nn.functional as F
    >>> values, indices = F.max_pool2d(ag.reshape(ag.arange(4.0), (1, 1, 2, 2)), 2, return_indices=True)
    >>> F.max_unpool2d(values, indices, 2).tolist()
    [[[[0.0, 0.0], [0.0, 3.0]]]]
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(
    input: Tensor,
    indices: Tensor,
    kernel_size: IntOrPair,
    stride: IntOrPair | None = None,
    padding: IntOrPair = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """The partial inverse of `max_pool3d` (positions in the flattened (D, H, W) volume)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


# --- grid sampling ------------------------------------------------------------------------------
_GRID_MODES = ("bilinear", "nearest")
_GRID_PADDING = ("zeros", "border", "reflection")


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """`input` (N, C, H, W) (or (N, C, D, H, W)) sampled at the normalised positions `grid`
    (N, H', W', 2) (or (N, D', H', W', 3)), each (x, y[, z]) in [-1, 1] spanning the input's
    width, height and depth (the pixels' centres with `align_corners`, else their outer
    edges), as PyTorch's ``F.grid_sample``: "bilinear" (trilinear for volumes) or "nearest"
    (half to even), positions outside read zeros, the border, or the input reflected.
    Differentiable in the input and (bilinear) in the grid.

    >>> import autograd_core as ag, nn.functional as F
    >>> x = ag.reshape(ag.arange(4.0), (1, 1, 2, 2))
    >>> F.grid_sample(x, ag.zeros((1, 1, 1, 2)), align_corners=False).tolist()
    [[[[1.5]]]]
    """
    if mode not in _GRID_MODES:
        raise ValueError(f"grid_sample: mode must be one of {_GRID_MODES}, not {mode!r}")
    if padding_mode not in _GRID_PADDING:
        raise ValueError(f"grid_sample: padding_mode must be one of {_GRID_PADDING}, not {padding_mode!r}")
    dims = input.ndim - 2
    if dims not in (2, 3) or grid.ndim != input.ndim or grid.shape[-1] != dims or grid.shape[0] != input.shape[0]:
        raise ValueError(
            "grid_sample: expected an input (N, C, H, W) with a grid (N, H', W', 2), or (N, C, D, H, W) with "
            f"(N, D', H', W', 3); got {input.shape} and {grid.shape}"
        )
    _check_floating("grid_sample", input)
    align = bool(align_corners)
    sizes = input.shape[2:]
    coords = [
        _grid_padding(_unnormalize(grid[..., dims - 1 - a], n, align), n, padding_mode, align)
        for a, n in enumerate(sizes)
    ]
    n, c = input.shape[:2]
    flat = ag.reshape(input, (n, c, math.prod(sizes)))
    if mode == "nearest":
        return _grid_gather(flat, [ag.round(x) for x in coords], sizes, grid.shape[1:-1])
    lows = [ag.floor(x) for x in coords]
    fracs = [x - low for x, low in zip(coords, lows)]
    total = None
    for corner in range(2**dims):
        bits = [(corner >> (dims - 1 - a)) & 1 for a in range(dims)]
        weight = math.prod((f if b else 1 - f) for f, b in zip(fracs, bits))
        value = _grid_gather(flat, [low + b for low, b in zip(lows, bits)], sizes, grid.shape[1:-1], weight)
        total = value if total is None else total + value
    return total


def _unnormalize(x: Tensor, size: int, align_corners: bool) -> Tensor:
    """A normalised coordinate in [-1, 1] as a pixel position along an axis of `size`."""
    return (x + 1) / 2 * (size - 1) if align_corners else ((x + 1) * size - 1) / 2


def _grid_padding(x: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """Pixel positions moved inside the axis by `padding_mode` (zeros leaves them)."""
    if padding_mode == "zeros":
        return x
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
    return _clip_position(x, size)


def _clip_position(x: Tensor, size: int) -> Tensor:
    """x clamped to [0, size - 1], with PyTorch's zero gradient at and past the bounds."""
    inside = (x > 0) & (x < size - 1)
    return ag.where(inside, x, ag.where(x <= 0, ag.zeros_like(x), ag.full_like(x, float(size - 1))).detach())


def _reflect(x: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """x reflected about the bounds ``twice_low / 2`` and ``twice_high / 2`` until inside (PyTorch's rule)."""
    if twice_low == twice_high:
        return ag.zeros_like(x)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = ag.abs(x - low)
    extra = ag.remainder(distance, span)
    flips = ag.floor(distance / span)
    return ag.where(ag.remainder(flips, 2) == 0, extra + low, span - extra + low)


def _grid_gather(
    flat: Tensor, positions: Sequence[Tensor], sizes: Sequence[int], out: tuple[int, ...], weight: Tensor | None = None
) -> Tensor:
    """The values of `flat` (N, C, prod(sizes)) at the integral `positions` (one (N, *out)
    tensor per spatial axis), times `weight`, 0 where a position falls outside."""
    inside = None
    index = None
    for a, (x, n) in enumerate(zip(positions, sizes)):
        ok = (x >= 0) & (x <= n - 1)
        inside = ok if inside is None else inside & ok
        term = ag.astype(ag.clip(x.detach(), min=0, max=n - 1), ag.int64) * math.prod(sizes[a + 1 :])
        index = term if index is None else index + term
    n, c = flat.shape[:2]
    index = ag.broadcast_to(ag.reshape(index, (n, 1, -1)), (n, c, math.prod(out)))
    values = ag.take_along_axis(flat, index, axis=2)
    mask = ag.reshape(inside, (n, 1, -1))
    scale = ag.astype(mask, flat.dtype) if weight is None else ag.where(mask, ag.reshape(weight, (n, 1, -1)), 0.0)
    return ag.reshape(values * scale, (n, c, *out))


def grid_sampler_2d(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """`grid_sample` of a 4-D input with PyTorch's enum codes: interpolation 0 bilinear,
    1 nearest; padding 0 zeros, 1 border, 2 reflection (``torch.grid_sampler_2d``)."""
    return _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners, 2)


def grid_sampler_3d(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """`grid_sample` of a 5-D input with PyTorch's enum codes (``torch.grid_sampler_3d``)."""
    return _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners, 3)


def _grid_sampler(input: Tensor, grid: Tensor, mode: int, padding: int, align_corners: bool, dims: int) -> Tensor:
    if input.ndim != dims + 2:
        raise ValueError(f"grid_sampler_{dims}d: expected a {dims + 2}-D input, got shape {input.shape}")
    if mode not in (0, 1) or padding not in (0, 1, 2):
        raise ValueError(
            f"grid_sampler_{dims}d: interpolation_mode must be 0 (bilinear) or 1 (nearest) and padding_mode "
            f"0, 1 or 2; got {mode} and {padding} (bicubic, 2, is not supported)"
        )
    return grid_sample(input, grid, _GRID_MODES[mode], _GRID_PADDING[padding], align_corners)


# --- fractional max pooling -----------------------------------------------------------------------
def _fractional_starts(xp: Any, device: Any, sample: Any, n_in: int, n_out: int, kernel: int) -> Any:
    """PyTorch's pseudo-random window starts along one axis, for each plane's `sample` in
    [0, 1) (N, C): ``floor((i + u) alpha) - floor(u alpha)``, alpha = (in - k) / (out - 1), the
    last window ending at the edge. (N, C, out) int64."""
    i = xp.astype(xp.arange(n_out - 1, device=device), sample.dtype)
    alpha = (n_in - kernel) / (n_out - 1) if n_out > 1 else 0.0
    u = sample[..., None]
    starts = xp.astype(xp.floor((i + u) * alpha), xp.int64) - xp.astype(xp.floor(u * alpha), xp.int64)
    last = xp.full((*sample.shape, 1), n_in - kernel, dtype=xp.int64, device=device)
    return xp.concat([starts, last], axis=-1)


def _fractional_max_pool(
    input: Tensor,
    kernel_size: IntOrPair,
    output_size: Any,
    output_ratio: Any,
    return_indices: bool,
    random_samples: Any,
    dims: int,
) -> Any:
    caller = f"fractional_max_pool{dims}d"
    x, unbatched = _batched(input, dims, caller)
    _check_floating(caller, x)
    kernel = _pair(kernel_size, "kernel_size", dims)
    spatial = x.shape[2:]
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{caller}: give output_size or output_ratio")
        output_size = tuple(int(n * r) for n, r in zip(spatial, _per_axis(output_ratio, dims, caller, "output_ratio")))
    sizes = tuple(int(s) for s in _per_axis(output_size, dims, caller, "output_size"))
    if any(o + k - 1 > n or o < 1 for o, k, n in zip(sizes, kernel, spatial)):
        raise ValueError(f"{caller}: output size {sizes} with kernel {kernel} does not fit the input {spatial}")
    backend, xp = x.backend, x.backend.xp
    n, c = x.shape[:2]
    if random_samples is None:
        samples = backend.uniform((n, c, dims), 0.0, 1.0, x.array.dtype)
    else:
        samples = random_samples.array if isinstance(random_samples, Tensor) else random_samples
    samples = xp.astype(samples, x.array.dtype)
    order = (1, 0) if dims == 2 else (0, 1, 2)  # PyTorch's samples: (W, H) in 2-D, (T, H, W) in 3-D
    starts = [
        _fractional_starts(xp, backend.device, samples[:, :, j], size, o, k)
        for j, size, k, o in zip(order, spatial, kernel, sizes)
    ]
    windows = [s[..., None] + xp.arange(k, dtype=xp.int64, device=backend.device) for s, k in zip(starts, kernel)]
    for a, index in enumerate(windows):  # gather axis a's windows: (N, C, ..., out_a * k_a, rest)
        axis = 2 + a
        shape = list(x.shape)
        flat = xp.reshape(index, (n, c) + (1,) * a + (-1,) + (1,) * (dims - a - 1))
        shape[axis] = flat.shape[axis]
        x = ag.take_along_axis(x, P.constant(xp.broadcast_to(flat, tuple(shape)), backend), axis=axis)
    x = ag.reshape(x, (n, c, *(v for o, k in zip(sizes, kernel) for v in (o, k))))
    outs = [2 + 2 * a for a in range(dims)]
    x = ag.reshape(ag.permute_dims(x, (0, 1, *outs, *(o + 1 for o in outs))), (n, c, *sizes, -1))
    best = ag.argmax(x, axis=-1, keepdims=True)
    values = ag.squeeze(ag.take_along_axis(x, best, axis=-1), axis=-1)
    position = None
    for a, index in enumerate(windows):
        shape = [n, c] + [1] * (2 * dims)
        shape[2 + a], shape[2 + dims + a] = index.shape[2:]
        term = xp.reshape(index, tuple(shape)) * math.prod(spatial[a + 1 :])
        position = term if position is None else position + term
    position = xp.reshape(xp.broadcast_to(position, (n, c, *sizes, *kernel)), (n, c, *sizes, -1))
    indices = ag.squeeze(ag.take_along_axis(P.constant(position, backend), best, axis=-1), axis=-1)
    return _unbatched_results(values, indices, unbatched, return_indices)


def fractional_max_pool2d(
    input: Tensor,
    kernel_size: IntOrPair,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Any = None,
) -> Any:
    """Max pooling of (N, C, H, W) or (C, H, W) over `kernel_size` windows at pseudo-random
    starts (Graham's fractional max pooling, PyTorch's rule), to `output_size` or
    ``output_ratio * input size``; `_random_samples` (N, C, 2) in [0, 1) fix the starts (drawn
    per call otherwise).

    >>> import autograd_core as ag, nn.functional as F
    >>> F.fractional_max_pool2d(ag.ones(1, 1, 5, 5), 2, output_size=3).shape
    (1, 1, 3, 3)
    """
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 2)


def fractional_max_pool3d(
    input: Tensor,
    kernel_size: IntOrPair,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Any = None,
) -> Any:
    """`fractional_max_pool2d` over (N, C, D, H, W) or (C, D, H, W); `_random_samples` (N, C, 3)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 3)
