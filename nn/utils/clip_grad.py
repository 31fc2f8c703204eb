"""Gradient clipping with PyTorch's names and arithmetic (``torch.nn.utils.clip_grad``).

The clipped gradients replace ``p.grad`` (a new tensor: arrays of some backends are
immutable). Nothing branches on a value unless `error_if_nonfinite` asks for it, so clipping
runs inside a compiled step.
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Iterable

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]

Parameters = Tensor | Iterable[Tensor]


def _with_grads(parameters: Parameters) -> list[Tensor]:
    """The parameters (one tensor or an iterable of them) that have a gradient."""
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return [p for p in params if p.grad is not None]


@ag.no_grad()
def get_total_norm(
    tensors: Parameters, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach: bool | None = None
) -> Tensor:
    """The `norm_type`-norm of all `tensors` together, as if concatenated into one vector
    (``inf`` for the largest magnitude); a 0-d tensor, 0.0 when there are none.

    `foreach` is accepted for PyTorch's signature and changes nothing here.

    >>> import autograd_core as ag, nn
    >>> nn.utils.get_total_norm([ag.tensor([3.0]), ag.tensor([4.0])]).item()
    5.0
    """
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if not tensors:
        return ag.tensor(0.0)
    norm_type = float(norm_type)
    norms = [ag.linalg.vector_norm(t, ord=norm_type) for t in tensors]
    total = ag.linalg.vector_norm(ag.stack(norms), ord=norm_type)
    if error_if_nonfinite and not bool(ag.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
            "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
            "norm anyway, set `error_if_nonfinite=False`"
        )
    return total


@ag.no_grad()
def clip_grads_with_norm_(
    parameters: Parameters, max_norm: float, total_norm: Tensor, foreach: bool | None = None
) -> None:
    """Scale every gradient by ``min(max_norm / (total_norm + 1e-6), 1)``: a multiplication
    by the clamped coefficient, never a branch on its value."""
    coef = ag.clip(float(max_norm) / (total_norm + 1e-6), max=1.0)
    for p in _with_grads(parameters):
        p.grad = p.grad * ag.astype(coef, p.grad.dtype, copy=False)


def clip_grad_norm_(
    parameters: Parameters,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Clip the gradients of `parameters` so that their total `norm_type`-norm is at most
    `max_norm`; returns the total norm before clipping (a 0-d tensor). `error_if_nonfinite`
    raises where that norm is NaN or infinite instead of scaling by it.

    >>> import autograd_core as ag, nn
    >>> w = ag.tensor([3.0, 4.0], requires_grad=True)
    >>> (w * w).sum().backward()  # grad [6, 8], norm 10
    >>> nn.utils.clip_grad_norm_([w], max_norm=1.0).item()
    10.0
    >>> [round(g, 4) for g in w.grad.tolist()]
    [0.6, 0.8]
    """
    if isinstance(parameters, types.GeneratorType):
        parameters = list(parameters)
        if not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    params = _with_grads(parameters)
    total = get_total_norm([p.grad for p in params], norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


@ag.no_grad()
def clip_grad_value_(parameters: Parameters, clip_value: float, foreach: bool | None = None) -> None:
    """Clip every gradient of `parameters` to [-clip_value, clip_value].

    >>> import autograd_core as ag, nn
    >>> w = ag.tensor([3.0, 4.0], requires_grad=True)
    >>> (w * w).sum().backward()
    >>> nn.utils.clip_grad_value_([w], 7.0); w.grad.tolist()
    [6.0, 7.0]
    """
    clip_value = float(clip_value)
    for p in _with_grads(parameters):
        p.grad = ag.clip(p.grad, min=-clip_value, max=clip_value)
