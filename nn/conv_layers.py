"""Convolution and pooling layers with PyTorch's names, parameter shapes and initialisation."""

from __future__ import annotations

import math
from typing import Any

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor
from nn import convolution as C, init, spatial
from nn.module import Module, Parameter

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What Conv1d, Conv2d and ConvTranspose2d share: the settings, the weight and bias, and
    PyTorch's initialisation (kaiming uniform with a = sqrt(5); bias U(-1/sqrt(fan_in), ...))."""

    spatial: int = 2
    transposed: bool = False

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: C.IntOrPair,
        stride: C.IntOrPair = 1,
        padding: str | C.IntOrPair = 0,
        dilation: C.IntOrPair = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        dtype: Any = "float32",
    ) -> None:
        super().__init__()
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ValueError(
                f"{type(self).__name__}: groups={groups} must divide in_channels={in_channels} and "
                f"out_channels={out_channels}"
            )
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, not {padding_mode!r}")
        n = self.spatial
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = C._pair(kernel_size, "kernel_size", n)
        self.stride, self.dilation = C._pair(stride, "stride", n), C._pair(dilation, "dilation", n)
        self.padding = padding if isinstance(padding, str) else C._pair(padding, "padding", n)
        self.padding_mode = padding_mode
        shape = (in_channels, out_channels // groups) if self.transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(ag.zeros((*shape, *self.kernel_size), dtype=dtype))
        self.bias = Parameter(ag.zeros(out_channels, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = init.fan_in_and_fan_out(self.weight)[0]
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def _padded(self, x: Tensor) -> tuple[Tensor, str | tuple[int, ...]]:
        """The input padded by `padding_mode` (for modes other than zeros), and the padding left
        for the convolution itself."""
        if self.padding_mode == "zeros":
            return x, self.padding
        pads = C._conv_padding(self.padding, self.kernel_size, self.stride, self.dilation, type(self).__name__)
        return spatial.pad(x, [amount for pair in reversed(pads) for amount in pair], mode=self.padding_mode), 0

    def extra_repr(self) -> str:
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding not in ((0,) * self.spatial, "valid"):
            text += f", padding={self.padding}"
        if getattr(self, "output_padding", (0,) * self.spatial) != (0,) * self.spatial:
            text += f", output_padding={self.output_padding}"
        if self.dilation != (1,) * self.spatial:
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L): weight (out_channels, in_channels/groups, k).

    >>> import autograd_core as ag, nn
    >>> nn.Conv1d(2, 4, 3, padding=1)(ag.zeros(5, 2, 10)).shape
    (5, 4, 10)
    """

    spatial = 1

    def forward(self, x: Tensor) -> Tensor:
        x, padding = self._padded(x)
        return C.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W): weight (out_channels, in_channels/groups, kh, kw).

    >>> import autograd_core as ag, nn
    >>> nn.Conv2d(1, 8, 3, padding=1)(ag.zeros(2, 1, 28, 28)).shape
    (2, 8, 28, 28)
    """

    def forward(self, x: Tensor) -> Tensor:
        x, padding = self._padded(x)
        return C.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W): weight (out_channels, in_channels/groups, kd, kh, kw).

    >>> import autograd_core as ag, nn
    >>> nn.Conv3d(1, 2, 3, padding=1)(ag.zeros(1, 1, 4, 4, 4)).shape
    (1, 2, 4, 4, 4)
    """

    spatial = 3

    def forward(self, x: Tensor) -> Tensor:
        x, padding = self._padded(x)
        return C.conv3d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution: weight (in_channels, out_channels/groups, *kernel_size)."""

    transposed = True
    function: Any = None

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: C.IntOrPair,
        stride: C.IntOrPair = 1,
        padding: C.IntOrPair = 0,
        output_padding: C.IntOrPair = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: C.IntOrPair = 1,
        padding_mode: str = "zeros",
        dtype: Any = "float32",
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f"{type(self).__name__} supports padding_mode='zeros' only, not {padding_mode!r}")
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode, dtype
        )
        self.output_padding = C._pair(output_padding, "output_padding", self.spatial)

    def forward(self, x: Tensor, output_size: Any = None) -> Tensor:
        """`output_size` (the output's spatial sizes, or its whole shape) picks the output
        padding among the sizes the stride makes possible, as PyTorch's."""
        output_padding = self.output_padding if output_size is None else self._output_padding(x, output_size)
        return type(self).function(
            x, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups, self.dilation
        )

    def _output_padding(self, x: Tensor, output_size: Any) -> tuple[int, ...]:
        sizes = tuple(output_size)[-self.spatial :]
        if len(sizes) != self.spatial:
            raise ValueError(f"output_size must have {self.spatial} or {self.spatial + 2} elements, got {output_size}")
        padding = []
        for d, wanted in enumerate(sizes):
            smallest = (
                (x.shape[-self.spatial + d] - 1) * self.stride[d]
                - 2 * self.padding[d]
                + self.dilation[d] * (self.kernel_size[d] - 1)
                + 1
            )
            if not smallest <= wanted < smallest + self.stride[d]:
                raise ValueError(
                    f"requested an output size of {list(sizes)}, but valid sizes range from "
                    f"{smallest} to {smallest + self.stride[d] - 1} (for an input of {list(x.shape[2:])})"
                )
            padding.append(wanted - smallest)
        return tuple(padding)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution: weight (in_channels, out_channels/groups, k)."""

    spatial = 1
    function = staticmethod(C.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution: weight (in_channels, out_channels/groups, kh, kw).

    >>> import autograd_core as ag, nn
    >>> nn.ConvTranspose2d(4, 2, 2, stride=2)(ag.zeros(1, 4, 5, 5)).shape
    (1, 2, 10, 10)
    """

    function = staticmethod(C.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution: weight (in_channels, out_channels/groups, kd, kh, kw)."""

    spatial = 3
    function = staticmethod(C.conv_transpose3d)


class _Pool(Module):
    """A pooling layer: its settings, passed to the function of the same name; `shown` names
    the settings its repr prints (PyTorch's choice)."""

    function: Any = None
    shown: tuple[str, ...] = ("kernel_size", "stride", "padding")

    def __init__(self, **settings: Any) -> None:
        super().__init__()
        self.settings = settings
        for name, value in settings.items():
            object.__setattr__(self, name, value)

    def forward(self, x: Tensor) -> Any:
        return type(self).function(x, **self.settings)

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={self.settings[k]}" for k in self.shown)


class MaxPool2d(_Pool):
    """Max over windows of (N, C, H, W); `stride` defaults to `kernel_size`.

    >>> import autograd_core as ag, nn
    >>> nn.MaxPool2d(2)(ag.zeros(1, 3, 28, 28)).shape
    (1, 3, 14, 14)
    """

    function = staticmethod(C.max_pool2d)
    shown = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")

    def __init__(
        self,
        kernel_size: C.IntOrPair,
        stride: C.IntOrPair | None = None,
        padding: C.IntOrPair = 0,
        dilation: C.IntOrPair = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__(
            kernel_size=kernel_size,
            stride=kernel_size if stride is None else stride,
            padding=padding,
            dilation=dilation,
            ceil_mode=ceil_mode,
            return_indices=return_indices,
        )


class MaxPool1d(_Pool):
    """Max over windows of (N, C, L)."""

    function = staticmethod(C.max_pool1d)
    shown = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")

    def __init__(
        self,
        kernel_size: int,
        stride: int | None = None,
        padding: int = 0,
        dilation: int = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__(
            kernel_size=kernel_size,
            stride=kernel_size if stride is None else stride,
            padding=padding,
            dilation=dilation,
            ceil_mode=ceil_mode,
            return_indices=return_indices,
        )


class AvgPool2d(_Pool):
    """Mean over windows of (N, C, H, W); `stride` defaults to `kernel_size`."""

    function = staticmethod(C.avg_pool2d)

    def __init__(
        self,
        kernel_size: C.IntOrPair,
        stride: C.IntOrPair | None = None,
        padding: C.IntOrPair = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__(
            kernel_size=kernel_size,
            stride=kernel_size if stride is None else stride,
            padding=padding,
            ceil_mode=ceil_mode,
            count_include_pad=count_include_pad,
            divisor_override=divisor_override,
        )


class AvgPool1d(_Pool):
    """Mean over windows of (N, C, L)."""

    function = staticmethod(C.avg_pool1d)

    def __init__(
        self,
        kernel_size: int,
        stride: int | None = None,
        padding: int = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        # stored as 1-tuples, as PyTorch stores (and prints) them
        super().__init__(
            kernel_size=(kernel_size,),
            stride=(kernel_size if stride is None else stride,),
            padding=(padding,),
            ceil_mode=ceil_mode,
            count_include_pad=count_include_pad,
        )


class MaxPool3d(MaxPool2d):
    """Max over windows of (N, C, D, H, W); `stride` defaults to `kernel_size`."""

    function = staticmethod(spatial.max_pool3d)


class AvgPool3d(AvgPool2d):
    """Mean over windows of (N, C, D, H, W); `stride` defaults to `kernel_size`."""

    function = staticmethod(spatial.avg_pool3d)


class _AdaptiveMaxPool(_Pool):
    """Max pooling to a fixed output size."""

    shown = ("output_size",)

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size=output_size, return_indices=return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    function = staticmethod(spatial.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """Max pooling of (N, C, H, W) to `output_size`.

    >>> import autograd_core as ag, nn
    >>> nn.AdaptiveMaxPool2d((2, 3))(ag.zeros(1, 3, 7, 9)).shape
    (1, 3, 2, 3)
    """

    function = staticmethod(spatial.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    function = staticmethod(spatial.adaptive_max_pool3d)


class AdaptiveAvgPool3d(_Pool):
    function = staticmethod(spatial.adaptive_avg_pool3d)
    shown = ("output_size",)

    def __init__(self, output_size: Any) -> None:
        super().__init__(output_size=output_size)


class _MaxUnpool(Module):
    """The partial inverse of a max pooling: `forward(input, indices, output_size=None)`."""

    function: Any = None

    def __init__(self, kernel_size: C.IntOrPair, stride: C.IntOrPair | None = None, padding: C.IntOrPair = 0) -> None:
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, kernel_size if stride is None else stride, padding

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return type(self).function(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpool):
    function = staticmethod(spatial.max_unpool1d)


class MaxUnpool2d(_MaxUnpool):
    function = staticmethod(spatial.max_unpool2d)


class MaxUnpool3d(_MaxUnpool):
    function = staticmethod(spatial.max_unpool3d)


class _FractionalMaxPool(_Pool):
    """Fractional max pooling to `output_size` or ``output_ratio * input size``, new window starts each call."""

    shown = ()

    def __init__(
        self,
        kernel_size: C.IntOrPair,
        output_size: Any = None,
        output_ratio: Any = None,
        return_indices: bool = False,
        _random_samples: Any = None,
    ) -> None:
        if (output_size is None) == (output_ratio is None):
            raise ValueError(f"{type(self).__name__}: give exactly one of output_size and output_ratio")
        super().__init__(
            kernel_size=kernel_size,
            output_size=output_size,
            output_ratio=output_ratio,
            return_indices=return_indices,
            _random_samples=_random_samples,
        )


class FractionalMaxPool2d(_FractionalMaxPool):
    function = staticmethod(spatial.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPool):
    function = staticmethod(spatial.fractional_max_pool3d)
