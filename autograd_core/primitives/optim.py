"""The optimizers' fused update."""

from __future__ import annotations

import math
from typing import Any

from autograd_core.registry import primitive


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
    if weight_decay:
        if decoupled:
            param = param * (1 - lr * weight_decay)
        else:
            grad = grad + weight_decay * param
    exp_avg = exp_avg + (1 - beta1) * (grad - exp_avg)
    exp_avg_sq = exp_avg_sq * beta2 + (1 - beta2) * grad * grad
    step_size = lr / (1 - beta1**step)
    bias2 = 1 - beta2**step  # math.sqrt of a Python float, as PyTorch
    denom = ns.sqrt(exp_avg_sq) / (math.sqrt(bias2) if isinstance(bias2, float) else ns.sqrt(bias2)) + eps
    return param - step_size * (exp_avg / denom), exp_avg, exp_avg_sq
