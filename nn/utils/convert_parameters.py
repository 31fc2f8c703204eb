"""Parameters as one vector and back (``torch.nn.utils.convert_parameters``)."""

from __future__ import annotations

from collections.abc import Iterable

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Every parameter flattened and joined into one vector, in order (differentiable).

    >>> import autograd_core as ag, nn
    >>> parameters_to_vector(nn.Linear(2, 3).parameters()).shape
    (9,)
    """
    return ag.concat([ag.reshape(p, (-1,)) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Write consecutive slices of `vec` into the parameters, in place, as their values.

    >>> import autograd_core as ag, nn
    >>> layer = nn.Linear(2, 1)
    >>> vector_to_parameters(ag.arange(3.0), layer.parameters())
    >>> layer.weight.tolist(), layer.bias.tolist()
    ([[0.0, 1.0]], [2.0])
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"vector_to_parameters expects a Tensor, got {type(vec).__name__}")
    start = 0
    for p in parameters:
        n = p.numel()
        p.data = ag.reshape(vec[start : start + n], p.shape).detach().to(p.dtype)
        start += n
    if start != vec.numel():
        raise ValueError(f"vector_to_parameters: the vector has {vec.numel()} elements, the parameters {start}")
