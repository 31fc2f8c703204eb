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
import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor
from nn.functional_base import check_mask_is_drawn_per_call, dropout

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "dropout1d", "dropout2d", "interpolate", "pad"]

_PAD_MODES = ("constant", "reflect", "replicate", "circular")
_NEAREST_MODES = ("nearest", "nearest-exact")
_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3}  # mode: spatial axes
_INTERPOLATE_MODES = (*_NEAREST_MODES, *_LINEAR_MODES, "area")


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
    if mode in _LINEAR_MODES and _LINEAR_MODES[mode] != dims:
        fitting = next(m for m, d in _LINEAR_MODES.items() if d == dims)
        raise ValueError(
            f"interpolate: mode {mode!r} needs {_LINEAR_MODES[mode] + 2}-D input; for this "
            f"{input.ndim}-D one use mode={fitting!r}"
        )
    if align_corners is not None and mode not in _LINEAR_MODES:
        raise ValueError(
            f"interpolate: align_corners applies to the modes {', '.join(_LINEAR_MODES)} only, not {mode!r}"
        )
    if antialias:
        raise NotImplementedError(
            "interpolate: antialias=True is not supported; supported: antialias=False "
            f"with the modes {', '.join(_INTERPOLATE_MODES)}"
        )
    sizes, scales = _output_size(input.shape[2:], size, scale_factor, recompute_scale_factor)
    if mode == "area":
        return _adaptive_avg_pool(input, sizes, dims, "interpolate")
    if mode in _LINEAR_MODES:
        _check_floating("interpolate", input)
    opmath = "float64" if input.dtype == ag.float64 else "float32"  # the precision PyTorch's kernels compute in
    # PyTorch's CPU kernel for 2-D nearest resampling to outputs with H + W <= 128 has its own rule
    legacy = dims == 2 and sum(sizes) <= 128
    x = input
    for axis, n_in, n_out, scale in zip(range(2, input.ndim), input.shape[2:], sizes, scales):
        if mode in _NEAREST_MODES:
            x = ag.take(x, _nearest_source(n_in, n_out, scale, mode == "nearest-exact", opmath, legacy), axis=axis)
        else:
            x = _along(x, axis, _linear_weights(n_in, n_out, scale, bool(align_corners), opmath))
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


def _along(x: Tensor, axis: int, matrix: np.ndarray) -> Tensor:
    """`x` with the linear map `matrix` (out, in) applied along `axis`."""
    if axis == x.ndim - 1:
        return ag.matmul(x, _constant(np.ascontiguousarray(matrix.T), x))
    if axis == x.ndim - 2:
        return ag.matmul(_constant(matrix, x), x)
    return ag.moveaxis(_along(ag.moveaxis(x, axis, -2), x.ndim - 2, matrix), -2, axis)


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
        x = _along(x, axis, _window_means(n_in, n_out))
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
