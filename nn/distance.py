"""Norms and distances between vectors, PyTorch's `F.normalize`, `F.cosine_similarity` and
`F.pairwise_distance` with their eps conventions (and so their gradients at zero vectors)."""

from __future__ import annotations

import numpy as np

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor
from nn.module import Module


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """`input` divided by its `p`-norm along `dim`, the norm clamped below at `eps` (so a zero
    vector stays zero, with gradient ``1/eps``, as in PyTorch).

    >>> import autograd_core as ag, nn.functional as F
    >>> F.normalize(ag.asarray([[3.0, 4.0], [0.0, 0.0]], dtype=ag.float64)).tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    """
    norm = ag.linalg.vector_norm(input, ord=p, axis=dim, keepdims=True)
    return input / ag.clip(norm, min=eps)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between `x1` and `x2` (broadcast together) along `dim`: each is
    divided by its norm, clamped below at `eps`, before the dot product. As in PyTorch, the
    clamp changes the value but not the gradient, which flows through the norm as it is.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.cosine_similarity(ag.asarray([[1.0, 0.0]]), ag.asarray([[1.0, 1.0]])).tolist()
    [0.70710...]
    """
    x1, x2 = ag.broadcast_arrays(x1, x2)
    return ag.sum(_unit(x1, dim, eps) * _unit(x2, dim, eps), axis=dim)


def _unit(x: Tensor, dim: int, eps: float) -> Tensor:
    norm = ag.linalg.vector_norm(x, axis=dim, keepdims=True)
    return x / (norm + (ag.clip(norm, min=eps) - norm).detach())


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """The `p`-norm of ``x1 - x2 + eps`` along the last dimension (the eps keeps the gradient
    finite where the two are equal, as in PyTorch).

    >>> import autograd_core as ag, nn.functional as F
    >>> F.pairwise_distance(ag.asarray([[0.0, 0.0]]), ag.asarray([[3.0, 4.0]]), eps=0.0).tolist()
    [5.0]
    """
    return ag.linalg.vector_norm(x1 - x2 + eps, ord=p, axis=-1, keepdims=keepdim)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The `p`-norm distances between every pair of rows i < j of `input` (N, M), in the order
    of the upper triangle's rows: N (N - 1) / 2 values.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.pdist(ag.asarray([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])).tolist()
    [5.0, 1.0, 4.24264...]
    """
    if input.ndim != 2:
        raise ValueError(f"pdist: expected a 2-D input (N, M), got shape {input.shape}")
    if p < 0:
        raise ValueError(f"pdist: p must be non-negative, got {p}")
    first, second = np.triu_indices(input.shape[0], 1)
    rows = [ag.take(input, ag.asarray(i, dtype=ag.int64, device=input.device), axis=0) for i in (first, second)]
    return ag.linalg.vector_norm(rows[0] - rows[1], ord=p, axis=-1)


class CosineSimilarity(Module):
    """`cosine_similarity` as a layer."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """`pairwise_distance` as a layer."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
