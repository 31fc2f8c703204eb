"""Batch and group normalisation layers; batch norm's running statistics are buffers."""

from __future__ import annotations

from typing import Any

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor
from nn import normalization
from nn.module import Module, Parameter


class _BatchNorm(Module):
    """Batch norm over the channel axis (1), with PyTorch's buffers: `running_mean` (zeros),
    `running_var` (ones) and `num_batches_tracked`, updated in training mode only. With
    ``momentum=None`` the running statistics are cumulative averages over the batches seen."""

    input_ndims: tuple[int, ...] = ()

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        dtype: Any = "float32",
    ) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(ag.ones(num_features, dtype=dtype)) if affine else None
        self.bias = Parameter(ag.zeros(num_features, dtype=dtype)) if affine else None
        tracked = track_running_stats
        self.register_buffer("running_mean", ag.zeros(num_features, dtype=dtype) if tracked else None)
        self.register_buffer("running_var", ag.ones(num_features, dtype=dtype) if tracked else None)
        self.register_buffer("num_batches_tracked", ag.zeros((), dtype=ag.int64) if tracked else None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            for buffer, value in ((self.running_mean, 0), (self.running_var, 1), (self.num_batches_tracked, 0)):
                buffer._take_array(ag.full_like(buffer, value).array, counted=True)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in self.input_ndims:
            raise ValueError(
                f"{type(self).__name__}: expected a {' or '.join(map(str, self.input_ndims))}-D input, "
                f"got shape {x.shape}"
            )
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with ag.no_grad():
                self.num_batches_tracked._take_array((self.num_batches_tracked + 1).array, counted=True)
            if self.momentum is None:
                factor = 1.0 / ag.astype(self.num_batches_tracked, x.dtype).array  # a cumulative average
        use_batch = self.training or self.running_mean is None
        stats = (
            (None, None) if self.training and not self.track_running_stats else (self.running_mean, self.running_var)
        )
        return normalization.batch_norm(x, *stats, self.weight, self.bias, use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch norm of (N, C) or (N, C, L) inputs.

    >>> import autograd_core as ag, nn
    >>> nn.BatchNorm1d(3)(ag.ones(4, 3)).shape
    (4, 3)
    """

    input_ndims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm of (N, C, H, W) inputs.

    >>> import autograd_core as ag, nn
    >>> bn = nn.BatchNorm2d(8)
    >>> sorted(bn.state_dict())
    ['bias', 'num_batches_tracked', 'running_mean', 'running_var', 'weight']
    """

    input_ndims = (4,)


class GroupNorm(Module):
    """Group norm: `num_channels` split into `num_groups` groups, each normalised over its
    channels and positions, then a per-channel scale (ones) and shift (zeros; none with
    ``bias=False``)."""

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        bias: bool = True,
        dtype: Any = "float32",
    ) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_groups={num_groups} must divide num_channels={num_channels}")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.weight = Parameter(ag.ones(num_channels, dtype=dtype)) if affine else None
        self.bias = Parameter(ag.zeros(num_channels, dtype=dtype)) if affine and bias else None

    def forward(self, x: Tensor) -> Tensor:
        return normalization.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class _InstanceNorm(Module):
    """Instance norm: each channel of each sample normalised over its positions; with `affine`,
    a per-channel scale (ones) and shift (zeros); with `track_running_stats`, PyTorch's
    running-statistics buffers, used in evaluation mode."""

    spatial: int = 1

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        dtype: Any = "float32",
    ) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(ag.ones(num_features, dtype=dtype)) if affine else None
        self.bias = Parameter(ag.zeros(num_features, dtype=dtype)) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", ag.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", ag.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", ag.asarray(0, dtype=ag.int64))
        else:
            self.running_mean = self.running_var = None

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in (self.spatial + 1, self.spatial + 2):
            raise ValueError(
                f"{type(self).__name__}: expected a {self.spatial + 1}-D or {self.spatial + 2}-D input, "
                f"got shape {x.shape}"
            )
        batched = x if x.ndim == self.spatial + 2 else ag.expand_dims(x, axis=0)
        out = normalization.instance_norm(
            batched,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum,
            self.eps,
        )
        return out if x.ndim == self.spatial + 2 else out[0]

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"track_running_stats={self.track_running_stats}"
        )


class InstanceNorm1d(_InstanceNorm):
    """Instance norm over (N, C, L) or (C, L).

    >>> import autograd_core as ag, nn
    >>> nn.InstanceNorm1d(3)(ag.zeros(2, 3, 5)).shape
    (2, 3, 5)
    """


class InstanceNorm2d(_InstanceNorm):
    spatial = 2


class InstanceNorm3d(_InstanceNorm):
    spatial = 3


class RMSNorm(Module):
    """`F.rms_norm` over the trailing `normalized_shape` axes, with a learnt elementwise scale
    `weight` (ones) when `elementwise_affine`.

    >>> import autograd_core as ag, nn
    >>> sorted(nn.RMSNorm(4).state_dict())
    ['weight']
    """

    def __init__(
        self,
        normalized_shape: int | tuple[int, ...],
        eps: float | None = None,
        elementwise_affine: bool = True,
        dtype: Any = "float32",
    ) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.weight = Parameter(ag.ones(shape, dtype=dtype)) if elementwise_affine else None

    def forward(self, x: Tensor) -> Tensor:
        return normalization.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    """`F.local_response_norm` across `size` neighbouring channels."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, x: Tensor) -> Tensor:
        return normalization.local_response_norm(x, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
