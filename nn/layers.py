"""Layers with PyTorch's names, shapes and default initialisation."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

import autograd_core as ag
from autograd_core.tensor import Tensor
from nn import functional as F
from nn import init
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
    """A lookup table of `num_embeddings` vectors of size `embedding_dim`, drawn from N(0, 1)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, dtype: Any = "float32") -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = Parameter(ag.randn(num_embeddings, embedding_dim, dtype=dtype))

    def forward(self, indices: Any) -> Tensor:
        return F.embedding(indices, self.weight)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


class LayerNorm(Module):
    """Normalise over the trailing `normalized_shape` axes, then scale and shift."""

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float = 1e-5,
                 elementwise_affine: bool = True, dtype: Any = "float32") -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.weight = Parameter(ag.ones(shape, dtype=dtype)) if elementwise_affine else None
        self.bias = Parameter(ag.zeros(shape, dtype=dtype)) if elementwise_affine else None

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
    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x)


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


class ModuleList(Module):
    """A list of modules, registered so their parameters are found."""

    def __init__(self, modules: Iterable[Module] = ()) -> None:
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, module: Module) -> ModuleList:
        setattr(self, str(len(self._modules)), module)
        return self

    def __getitem__(self, index: int) -> Module:
        return list(self._modules.values())[index]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())


class Sequential(ModuleList):
    """Modules applied one after another.

    >>> import nn
    >>> nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))[0].out_features
    4
    """

    def __init__(self, *modules: Module) -> None:
        super().__init__(modules)

    def forward(self, x: Any) -> Any:
        for m in self:
            x = m(x)
        return x
