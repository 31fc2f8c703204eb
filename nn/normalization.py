"""Batch and group normalisation over (N, C, ...) inputs, with PyTorch's signatures.

Batch norm in training is one primitive: the batch statistics, the normalisation and the
affine map in one forward (the backend's kernel), and a backward kernel per input that reuses
the forward's statistics, whose tensor twin is the standardisation rule layer norm uses too.
In evaluation it is an affine map by the running statistics, composed of primitives. Group
norm is layer norm over groups of channels.
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


def _affine(x: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    """`x` scaled by `weight` and shifted by `bias` per channel (axis 1), either may be None."""
    out = x if weight is None else x * per_channel(ag, weight, x.ndim)
    return out if bias is None else out + per_channel(ag, bias, x.ndim)


__all__ = ["batch_norm", "group_norm"]
