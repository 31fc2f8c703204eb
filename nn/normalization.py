"""Batch, instance, group, RMS and local response normalisation over (N, C, ...) inputs, with
PyTorch's signatures.

Batch norm in training is one primitive: the batch statistics, the normalisation and the
affine map in one forward (the backend's kernel), and a backward kernel per input that reuses
the forward's statistics, whose tensor twin is the standardisation rule layer norm uses too.
In evaluation it is an affine map by the running statistics, composed of primitives. Group
norm is layer norm over groups of channels; instance norm is batch norm of one sample whose
channels are the input's (sample, channel) pairs, as PyTorch computes it.
"""

from __future__ import annotations

import math

import autograd_core as ag
from autograd_core import primitives as P
from autograd_core.autodiff.tensor import Tensor
from autograd_core.graph.registry import common_backend
from autograd_core.primitives.normalization import per_channel
from nn.functional_base import check_same_dtype, in_float32, layer_norm


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel (axis 1) of `input` (N, C, ...) to zero mean and unit variance,
    then scale by `weight` and shift by `bias`.

    In training the statistics are the batch's (biased variance), and `running_mean` /
    `running_var` (when given) move towards them by `momentum`, the variance unbiased, as in
    PyTorch; otherwise the running statistics normalise.

    >>> import autograd_core as ag, nn.functional as F
    >>> x = ag.asarray([[1.0], [3.0]])
    >>> [round(v, 4) for v in F.batch_norm(x, None, None, training=True)[:, 0].tolist()]
    [-1.0, 1.0]
    """
    if input.ndim < 2 and not input.numel():  # as PyTorch: an empty 1-D input gives an empty result
        return ag.clone(input)
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected an input of shape (N, C, ...), got {input.shape}")
    channels = input.shape[1]
    tensors = [t for t in (input, running_mean, running_var, weight, bias) if t is not None]
    backend = common_backend("batch_norm", *tensors)
    check_same_dtype("batch_norm", input, weight)
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if t is not None and t.shape != (channels,):
            raise ValueError(f"batch_norm: {name} has shape {t.shape}, expected ({channels},) for {channels} channels")
    if not training:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: evaluation needs running_mean and running_var (or training=True)")
        scale = per_channel(ag, 1 / ag.sqrt(running_var + eps), input.ndim)
        return _affine((input - per_channel(ag, running_mean, input.ndim)) * scale, weight, bias)
    if input.dtype == "float16":  # the batch statistics in float32 (the running ones keep their dtype)
        return in_float32(
            lambda x, w, b: batch_norm(x, running_mean, running_var, w, b, True, momentum, eps), input, weight, bias
        )
    count = input.numel() // channels if channels else 0
    if count == 0:  # as PyTorch: an empty batch gives an empty result and leaves the statistics
        return _affine(input, weight, bias)
    if count == 1:
        raise ValueError(f"batch_norm: expected more than 1 value per channel when training, got input {input.shape}")
    out, mean, var = P.batch_norm.bind(input, weight, bias, eps, saved=(input, weight))
    with ag.no_grad():
        for buffer, statistic in ((running_mean, mean), (running_var, var * (count / (count - 1)))):
            if buffer is not None:
                new = buffer.array * (1 - momentum) + backend.xp.astype(statistic, buffer.array.dtype) * momentum
                buffer._take_array(new, counted=True)
    return out


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise `input` (N, C, ...) over each group of C/num_groups channels (and all their
    positions), then scale and shift per channel.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.group_norm(ag.ones(2, 4, 3), 2).shape
    (2, 4, 3)
    """
    if input.ndim < 2 or input.shape[1] % num_groups:
        raise ValueError(
            f"group_norm: num_groups={num_groups} must divide the channels of an (N, C, ...) input, "
            f"got shape {input.shape}"
        )
    check_same_dtype("group_norm", input, weight)
    grouped = ag.reshape(input, (input.shape[0], num_groups, math.prod(input.shape[1:]) // num_groups))
    return _affine(ag.reshape(layer_norm(grouped, (grouped.shape[-1],), eps=eps), input.shape), weight, bias)


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel of each sample of `input` (N, C, ...) over its positions, then
    scale and shift per channel. With `use_input_stats` (the default) the running statistics,
    when given, move towards the samples' mean statistics by `momentum`; without, they
    normalise instead.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.instance_norm(ag.asarray([[[1.0, 3.0]]])).tolist()
    [[[-0.99999..., 0.99999...]]]
    """
    if input.ndim < 3:
        raise ValueError(f"instance_norm: expected an input (N, C, *spatial), got shape {input.shape}")
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    n, c = input.shape[:2]
    if math.prod(input.shape[2:]) == 1:
        raise ValueError(f"instance_norm: expected more than 1 spatial element when training, got input {input.shape}")
    tiled = [None if t is None else ag.tile(t, (n,)) for t in (weight, bias)]
    stats = [None if t is None else ag.tile(t.detach(), (n,)) for t in (running_mean, running_var)]
    x = ag.reshape(input, (1, n * c, *input.shape[2:]))
    out = batch_norm(x, *stats, *tiled, True, momentum, eps)
    for buffer, statistic in zip((running_mean, running_var), stats):
        if buffer is not None:
            buffer._take_array(ag.mean(ag.reshape(statistic, (n, c)), axis=0).array, counted=True)
    return ag.reshape(out, input.shape)


def rms_norm(
    input: Tensor,
    normalized_shape: int | tuple[int, ...],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """`input` divided by its root mean square over the trailing `normalized_shape` axes (plus
    `eps`, by default the dtype's machine epsilon, under the root), times `weight`.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.rms_norm(ag.asarray([[3.0, 4.0]], dtype=ag.float64), (2,), eps=0.0).tolist()
    [[0.8485..., 1.1313...]]
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if input.shape[input.ndim - len(shape) :] != shape:
        raise ValueError(f"rms_norm: input shape {input.shape} does not end with normalized_shape {shape}")
    check_same_dtype("rms_norm", input, weight)
    if input.dtype == "float16":
        return in_float32(lambda x, w: rms_norm(x, shape, w, eps), input, weight)
    eps = ag.finfo(input.dtype).eps if eps is None else eps
    axes = tuple(range(input.ndim - len(shape), input.ndim))
    out = input / ag.sqrt(ag.mean(input * input, axis=axes, keepdims=True) + eps)
    return out if weight is None else out * weight


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """`input` (N, C, ...) divided by ``(k + alpha * mean of x**2 over `size` neighbouring
    channels) ** beta``, the neighbourhood zero-padded at the ends, as in PyTorch.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.local_response_norm(ag.ones(1, 3, 2), 2, alpha=1.0, beta=1.0, k=0.0)[0, :, 0].tolist()
    [2.0, 1.0, 1.0]
    """
    if input.ndim < 3:
        raise ValueError(f"local_response_norm: expected an input of 3 or more dimensions, got shape {input.shape}")
    if not input.numel():
        return input
    channels = input.shape[1]
    squares = input * input
    zeros = ag.zeros((input.shape[0], 1, *input.shape[2:]), dtype=input.dtype, device=input.device)
    padded = ag.concat([zeros] * (size // 2) + [squares] + [zeros] * ((size - 1) // 2), axis=1)
    window = sum(padded[:, i : i + channels] for i in range(1, size)) + padded[:, :channels]
    return input / (window * (alpha / size) + k) ** beta


def _affine(x: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    """`x` scaled by `weight` and shifted by `bias` per channel (axis 1), either may be None."""
    out = x if weight is None else x * per_channel(ag, weight, x.ndim)
    return out if bias is None else out + per_channel(ag, bias, x.ndim)


__all__ = ["batch_norm", "group_norm", "instance_norm", "local_response_norm", "rms_norm"]
