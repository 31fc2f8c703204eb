"""The optimizers' fused update."""

from __future__ import annotations

import math
from typing import Any

from autograd_core.graph.registry import primitive


@primitive()
def adam_update(
    ns: Any,
    param: Any,
    grad: Any,
    exp_avg: Any,
    exp_avg_sq: Any,
    *,
    step: Any,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    decoupled: bool,
) -> tuple[Any, Any, Any]:
    """One Adam/AdamW update in PyTorch's order; returns (param, exp_avg, exp_avg_sq).

    The portable default is functional (new arrays); a kernel for a mutable library may
    update the arrays in place and return them. `step` is an array inside a compiled step,
    a Python int otherwise.
    """
    step_size, bias2_sqrt = adam_step_scalars(ns, step, lr, beta1, beta2)
    return adam_apply(
        ns, param, grad, exp_avg, exp_avg_sq, step_size, bias2_sqrt, lr, beta1, beta2, eps, weight_decay, decoupled
    )


def adam_step_scalars(ns: Any, step: Any, lr: Any, beta1: Any, beta2: Any) -> tuple[Any, Any]:
    """The step's scalars: lr / (1 - beta1**step) and sqrt(1 - beta2**step) (floats, or 0-d
    arrays inside a compiled step)."""
    bias2 = 1 - beta2**step  # math.sqrt of a Python float, as PyTorch
    return lr / (1 - beta1**step), math.sqrt(bias2) if isinstance(bias2, float) else ns.sqrt(bias2)


def adam_apply(
    ns: Any,
    param: Any,
    grad: Any,
    exp_avg: Any,
    exp_avg_sq: Any,
    step_size: Any,
    bias2_sqrt: Any,
    lr: Any,
    beta1: Any,
    beta2: Any,
    eps: float,
    weight_decay: float,
    decoupled: bool,
) -> tuple[Any, Any, Any]:
    """The elementwise part of `adam_update`, given `adam_step_scalars`."""
    if weight_decay:
        if decoupled:
            param = param * (1 - lr * weight_decay)
        else:
            grad = grad + weight_decay * param
    exp_avg = exp_avg + (1 - beta1) * (grad - exp_avg)
    exp_avg_sq = exp_avg_sq * beta2 + (1 - beta2) * grad * grad
    denom = ns.sqrt(exp_avg_sq) / bias2_sqrt + eps
    return param - step_size * (exp_avg / denom), exp_avg, exp_avg_sq
