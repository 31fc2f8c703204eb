"""Layers with PyTorch's names, shapes and default initialisation."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor
from nn import functional as F, init, spatial
from nn.containers import (
    ModuleList as ModuleList,
    Sequential as Sequential,
)  # nn.transformer takes ModuleList from here
from nn.module import Module, Parameter


class Linear(Module):
    """``y = x @ weight.T + bias``; weight (out_features, in_features) and bias drawn from
    U(-1/sqrt(in_features), 1/sqrt(in_features)) as in PyTorch.

    >>> import autograd_core as ag, nn
    >>> nn.Linear(3, 2)(ag.zeros(4, 3)).shape
    (4, 2)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, dtype: Any = "float32") -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(ag.zeros(out_features, in_features, dtype=dtype))
        self.bias = Parameter(ag.zeros(out_features, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A lookup table of `num_embeddings` vectors of size `embedding_dim`, drawn from N(0, 1),
    with PyTorch's options: the row `padding_idx` starts at zero and gets no gradient;
    `max_norm`, `norm_type` and `scale_grad_by_freq` as in `nn.functional.embedding`.

    >>> import autograd_core as ag, nn
    >>> table = nn.Embedding(4, 2, padding_idx=0)
    >>> table(ag.asarray([0, 3])).shape, table.weight[0].tolist()
    ((2, 2), [0.0, 0.0])
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        _freeze: bool = False,
        device: Any = None,
        dtype: Any = "float32",
    ) -> None:
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.max_norm, self.norm_type, self.scale_grad_by_freq, self.sparse = (
            max_norm,
            norm_type,
            scale_grad_by_freq,
            sparse,
        )
        if _weight is None:
            self.weight = Parameter(ag.randn(num_embeddings, embedding_dim, dtype=dtype, device=device))
            if padding_idx is not None:
                with ag.no_grad():
                    self.weight[padding_idx] = 0.0
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def forward(self, indices: Any) -> Tensor:
        return F.embedding(
            indices, self.weight, self.padding_idx, self.max_norm, self.norm_type, self.scale_grad_by_freq, self.sparse
        )

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An Embedding whose table is `embeddings` (2-D), fixed unless `freeze` is False."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, dim = embeddings.shape
        return cls(rows, dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, embeddings, freeze)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        return text + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")


class LayerNorm(Module):
    """Normalise over the trailing `normalized_shape` axes, then scale and shift."""

    def __init__(
        self,
        normalized_shape: int | tuple[int, ...],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        dtype: Any = "float32",
    ) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.weight = Parameter(ag.ones(shape, dtype=dtype)) if elementwise_affine else None
        self.bias = Parameter(ag.zeros(shape, dtype=dtype)) if elementwise_affine and bias else None

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"


class Dropout(Module):
    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class ReLU(Module):
    """max(x, 0); with `inplace`, written into `x` itself (``x.relu_()``), as PyTorch's."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return x.relu_() if self.inplace else F.relu(x)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


class Sigmoid(Module):
    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)


class GELU(Module):
    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return ag.flatten(x, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Identity(Module):
    """Returns its input unchanged; takes (and ignores) any arguments, as PyTorch's does."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, x: Any) -> Any:
        return x


class Unflatten(Module):
    """Axis `dim` reshaped to `unflattened_size` (which may hold one -1), a view.

    >>> import autograd_core as ag, nn
    >>> nn.Unflatten(1, (2, -1))(ag.zeros((5, 12))).shape
    (5, 2, 6)
    """

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)) or not all(isinstance(n, int) for n in unflattened_size):
            raise TypeError(f"Unflatten: unflattened_size must be a tuple of ints, got {unflattened_size!r}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, x: Tensor) -> Tensor:
        if not -x.ndim <= self.dim < x.ndim:
            raise IndexError(f"Unflatten: dim {self.dim} is out of range for an input of shape {x.shape}")
        dim = self.dim % x.ndim
        return ag.reshape(x, x.shape[:dim] + tuple(self.unflattened_size) + x.shape[dim + 1 :])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Dropout1d(Dropout):
    """Zero whole channels of (N, C, L) or (C, L) with probability `p` (training only)."""

    def forward(self, x: Tensor) -> Tensor:
        return spatial.dropout1d(x, self.p, self.training)


class Dropout2d(Dropout):
    """Zero whole channels of (N, C, H, W) with probability `p` (training only)."""

    def forward(self, x: Tensor) -> Tensor:
        return spatial.dropout2d(x, self.p, self.training)


class AdaptiveAvgPool1d(Module):
    """Average pooling of (N, C, L) to `output_size` windows, whatever L is."""

    def __init__(self, output_size: int) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return spatial.adaptive_avg_pool1d(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(AdaptiveAvgPool1d):
    """Average pooling of (N, C, H, W) to `output_size` (an int, or a pair whose None entries
    keep the input's size), whatever H and W are."""

    def __init__(self, output_size: int | tuple[int | None, int | None]) -> None:
        super().__init__(output_size)  # type: ignore[arg-type]

    def forward(self, x: Tensor) -> Tensor:
        return spatial.adaptive_avg_pool2d(x, self.output_size)


class Upsample(Module):
    """`F.interpolate` as a layer: to `size`, or by `scale_factor`, with `mode` "nearest",
    "nearest-exact", "linear", "bilinear", "trilinear" or "area"."""

    def __init__(
        self,
        size: int | tuple[int, ...] | None = None,
        scale_factor: float | tuple[float, ...] | None = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.size, self.mode = size, mode
        if isinstance(scale_factor, tuple):
            self.scale_factor: float | tuple[float, ...] | None = tuple(float(s) for s in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, x: Tensor) -> Tensor:
        return spatial.interpolate(
            x,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self) -> str:
        shown = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return f"{shown}, mode={self.mode!r}"


class _Pad2d(Module):
    """Padding of the last two axes by `padding`: an int for all four sides, or (left, right,
    top, bottom)."""

    mode = "constant"

    def __init__(self, padding: int | tuple[int, int, int, int]) -> None:
        super().__init__()
        self.padding = tuple(padding) if isinstance(padding, Iterable) else (padding,) * 4
        if len(self.padding) != 4:
            raise ValueError(
                f"{type(self).__name__}: padding must be an int or (left, right, top, bottom), got {padding!r}"
            )

    def forward(self, x: Tensor) -> Tensor:
        return spatial.pad(x, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad2d(_Pad2d):
    """Padding of the last two axes by their reflection about the edge (not repeated)."""

    mode = "reflect"


class ReplicationPad2d(_Pad2d):
    """Padding of the last two axes by copies of the edge."""

    mode = "replicate"


class ConstantPad2d(_Pad2d):
    """Padding of the last two axes with `value`."""

    def __init__(self, padding: int | tuple[int, int, int, int], value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, x: Tensor) -> Tensor:
        return spatial.pad(x, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ZeroPad2d(ConstantPad2d):
    """Padding of the last two axes with zeros.

    >>> import autograd_core as ag, nn
    >>> nn.ZeroPad2d((1, 0, 0, 1))(ag.ones((1, 1, 1, 2))).tolist()
    [[[[0.0, 1.0, 1.0], [0.0, 0.0, 0.0]]]]
    """

    def __init__(self, padding: int | tuple[int, int, int, int]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class Dropout3d(Dropout):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability `p` (training only)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout3d(x, self.p, self.training)


class AlphaDropout(Dropout):
    """`F.alpha_dropout` (for SELU networks) in training."""

    def forward(self, x: Tensor) -> Tensor:
        return F.alpha_dropout(x, self.p, self.training)


class FeatureAlphaDropout(Dropout):
    """`F.feature_alpha_dropout` (whole channels) in training."""

    def forward(self, x: Tensor) -> Tensor:
        return F.feature_alpha_dropout(x, self.p, self.training)


class PixelShuffle(Module):
    """(*, C r^2, H, W) to (*, C, H r, W r).

    >>> import autograd_core as ag, nn
    >>> nn.PixelShuffle(2)(ag.zeros(1, 4, 3, 3)).shape
    (1, 1, 6, 6)
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return F.pixel_shuffle(x, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) to (*, C r^2, H, W)."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return F.pixel_unshuffle(x, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """The channels of (N, C, *) dealt out from `groups` groups in turn."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, x: Tensor) -> Tensor:
        return F.channel_shuffle(x, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class Bilinear(Module):
    """``y_o = x1^T weight_o x2 + bias_o``: weight (out_features, in1_features, in2_features) and
    bias drawn from U(-1/sqrt(in1_features), 1/sqrt(in1_features)), as PyTorch's.

    >>> import autograd_core as ag, nn
    >>> nn.Bilinear(3, 4, 2)(ag.zeros(5, 3), ag.zeros(5, 4)).shape
    (5, 2)
    """

    def __init__(
        self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, dtype: Any = "float32"
    ) -> None:
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(ag.zeros(out_features, in1_features, in2_features, dtype=dtype))
        self.bias = Parameter(ag.zeros(out_features, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.in1_features) if self.in1_features > 0 else 0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class UpsamplingNearest2d(Upsample):
    """`Upsample` in mode "nearest"."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """`Upsample` in mode "bilinear" with ``align_corners=True``."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
