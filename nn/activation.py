"""Activation modules with PyTorch's names, constructor arguments and reprs; each calls its
function in `nn.functional`. `inplace` is accepted where PyTorch has it (and shown in the repr
where PyTorch shows it); the result is always a new tensor."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor
from nn import functional as F
from nn.module import Module, Parameter


class _Unparameterised(Module):
    """An activation whose only setting is PyTorch's `inplace` flag."""

    function: Callable[[Tensor], Tensor]
    repr_inplace = True  # whether PyTorch's repr shows inplace=True

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return type(self).function(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace and self.repr_inplace else ""


def _inplace(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


class SELU(_Unparameterised):
    function = staticmethod(F.selu)


class SiLU(_Unparameterised):
    """``x * sigmoid(x)``.

    >>> import autograd_core as ag, nn
    >>> nn.SiLU()(ag.asarray([0.0])).tolist()
    [0.0]
    """

    function = staticmethod(F.silu)


class Mish(_Unparameterised):
    function = staticmethod(F.mish)


class ReLU6(_Unparameterised):
    function = staticmethod(F.relu6)


class Hardsigmoid(_Unparameterised):
    function = staticmethod(F.hardsigmoid)
    repr_inplace = False


class Hardswish(_Unparameterised):
    function = staticmethod(F.hardswish)
    repr_inplace = False


class Softsign(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class LogSigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace(self.inplace)}"


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace(self.inplace)}"


class CELU(ELU):
    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha)


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """x clamped to [min_val, max_val] (PyTorch's deprecated `min_value`/`max_value` override them)."""

    def __init__(
        self,
        min_val: float = -1.0,
        max_val: float = 1.0,
        inplace: bool = False,
        min_value: float | None = None,
        max_value: float | None = None,
    ) -> None:
        super().__init__()
        self.min_val = min_val if min_value is None else min_value
        self.max_val = max_val if max_value is None else max_value
        self.inplace = inplace
        if self.min_val > self.max_val:
            raise ValueError(f"Hardtanh: min_val ({self.min_val}) must not be greater than max_val ({self.max_val})")

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace(self.inplace)}"


class _AlongDim(Module):
    """A normalisation along `dim` (None: PyTorch's deprecated implicit choice, with its warning)."""

    function: Callable[..., Tensor]

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return type(self).function(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_AlongDim):
    function = staticmethod(F.softmax)


class LogSoftmax(_AlongDim):
    function = staticmethod(F.log_softmax)


class Softmin(_AlongDim):
    function = staticmethod(F.softmin)


class GLU(Module):
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Tanhshrink(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


class _Shrink(Module):
    """A shrinkage by `lambd` (PyTorch's argument name)."""

    function: Callable[..., Tensor]

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return type(self).function(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Softshrink(_Shrink):
    function = staticmethod(F.softshrink)


class Hardshrink(_Shrink):
    function = staticmethod(F.hardshrink)


class Threshold(Module):
    """x where ``x > threshold``, else `value`.

    >>> import autograd_core as ag, nn
    >>> nn.Threshold(0.5, -1.0)(ag.asarray([0.0, 1.0])).tolist()
    [-1.0, 1.0]
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace(self.inplace)}"


class RReLU(Module):
    """The randomised leaky ReLU: random slopes in U(lower, upper) in training, their mean in evaluation."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace(self.inplace)}"


class PReLU(Module):
    """x where x > 0, else ``weight * x``, with a learnt slope: one, or one per channel
    (`num_parameters`), each starting at `init` (the parameter `weight`, as PyTorch's).

    >>> import autograd_core as ag, nn
    >>> nn.PReLU()(ag.asarray([-4.0, 2.0])).tolist()
    [-1.0, 2.0]
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(ag.full((num_parameters,), init, dtype=dtype or ag.float32, device=device))

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"
