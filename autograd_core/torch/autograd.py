"""`torch.autograd` over our tensors: `grad`, `backward`, `Function` and the gradient checks.

>>> import autograd_core.torch as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> torch.autograd.grad((x * x).sum(), x)[0].tolist()
[2.0, 4.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from autograd_core import Function, FunctionCtx, grad, gradcheck, gradgradcheck, once_differentiable
from autograd_core.graph.anomaly import detect_anomaly, set_detect_anomaly
from autograd_core.graph.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled

__all__ = [
    "Function",
    "FunctionCtx",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "no_grad",
    "once_differentiable",
    "set_detect_anomaly",
    "set_grad_enabled",
]


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Sequence[Any] | None = None,
) -> None:
    """Accumulate the gradients of `tensors` into the leaves' ``.grad`` (``torch.autograd.backward``)."""
    tensors = list(tensors) if isinstance(tensors, (list, tuple)) else [tensors]
    grads = grad_tensors if isinstance(grad_tensors, (list, tuple)) else [grad_tensors] * len(tensors)
    for i, (t, g) in enumerate(zip(tensors, grads)):
        t.backward(
            g, retain_graph=True if i < len(tensors) - 1 else retain_graph, create_graph=create_graph, inputs=inputs
        )
