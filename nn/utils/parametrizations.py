"""Weight and spectral normalisation as parametrizations (``torch.nn.utils.parametrizations``).

>>> import autograd_core as ag, nn
>>> layer = weight_norm(nn.Linear(3, 2))
>>> sorted(layer.state_dict())
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""

from __future__ import annotations

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor
from nn import functional as F
from nn.conv_layers import _ConvNd
from nn.module import Module
from nn.utils.parametrize import register_parametrization

__all__ = ["spectral_norm", "weight_norm"]


def norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of `v` over every dimension but `dim`, shaped to broadcast against `v`
    (the whole tensor's norm when `dim` is -1)."""
    if dim == -1:
        return ag.linalg.vector_norm(v)
    axes = tuple(a for a in range(v.ndim) if a != dim % v.ndim)
    return ag.linalg.vector_norm(v, axis=axes, keepdims=True)


class _WeightNorm(Module):
    """w = g v / ‖v‖, the norm over every dimension but `dim`; stored as (g, v)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as its direction and magnitude (Salimans & Kingma
    2016): ``original0`` is g, ``original1`` is v, as PyTorch stores them."""
    return register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


class _SpectralNorm(Module):
    """w / σ(w), σ the largest singular value of w as a matrix (`dim` first, the rest
    flattened), estimated by power iteration on the buffers ``_u`` and ``_v``: one step of it
    per forward in training mode, none in evaluation."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        if not -weight.ndim <= dim < weight.ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{weight.ndim}, {weight.ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}"
            )
        self.dim, self.eps, self.n_power_iterations = dim % weight.ndim, eps, n_power_iterations
        if weight.ndim > 1:
            matrix = self._matrix(weight)
            h, w = matrix.shape
            u = ag.asarray(weight.backend.randn((h,), weight.array.dtype))
            v = ag.asarray(weight.backend.randn((w,), weight.array.dtype))
            self.register_buffer("_u", F.normalize(u, dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=eps))
            self._power_method(matrix, 15)

    def _matrix(self, weight: Tensor) -> Tensor:
        if self.dim:
            weight = ag.moveaxis(weight, self.dim, 0)
        return ag.reshape(weight, (weight.shape[0], -1))

    def _power_method(self, matrix: Tensor, iterations: int) -> None:
        with ag.no_grad():
            for _ in range(iterations):
                self._u = F.normalize(matrix @ self._v, dim=0, eps=self.eps)
                self._v = F.normalize(matrix.mT @ self._u, dim=0, eps=self.eps)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        matrix = self._matrix(weight)
        if self.training:
            self._power_method(matrix, self.n_power_iterations)
        sigma = ag.vecdot(self._u, matrix @ self._v)
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(
    module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12, dim: int | None = None
) -> Module:
    """Divide ``module.<name>`` by its spectral norm (Miyato et al. 2018), estimated by
    `n_power_iterations` of power iteration per training forward. `dim` is the output
    dimension: 1 for the transposed convolutions, 0 otherwise, by default."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _ConvNd) and module.transposed else 0
    return register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
