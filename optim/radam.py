"""RAdam in PyTorch's exact update order (``torch.optim.RAdam``, single-tensor path)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from autograd_core.autodiff.tensor import Tensor
from optim.adam import adam_moments, betas_checked, decayed
from optim.optimizer import Optimizer, gradient, hyperparameter, torch_flags


class RAdam(Optimizer):
    """Rectified Adam: while the variance of the adaptive rate is not yet tractable (the
    approximated SMA length ``rho_t <= 5``), the step is SGD with momentum (the bias-corrected
    first moment); afterwards Adam's step times the rectification term. `weight_decay` is L2,
    or AdamW's with `decoupled_weight_decay`; `maximize` ascends.

    >>> import autograd_core as ag, optim
    >>> w = ag.tensor([1.0], requires_grad=True)
    >>> (w * 3).sum().backward()
    >>> optim.RAdam([w], lr=0.1).step()
    >>> round(w.item(), 4)  # the first steps are momentum SGD: 1 - 0.1 * 3
    0.7
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        super().__init__(
            params,
            dict(
                lr=hyperparameter("lr", lr),
                betas=betas_checked(betas),
                eps=hyperparameter("eps", eps),
                weight_decay=hyperparameter("weight_decay", weight_decay),
                decoupled_weight_decay=decoupled_weight_decay,
                **torch_flags(maximize=maximize, differentiable=differentiable, foreach=foreach, capturable=capturable),
            ),
        )

    def update(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        xp = p.backend.xp
        if not state:
            state.update(step=0, exp_avg=xp.zeros_like(p.array), exp_avg_sq=xp.zeros_like(p.array))
        state["step"] += 1
        step, lr, (beta1, beta2) = state["step"], group["lr"], group["betas"]
        grad = decayed(p, gradient(p, group), group)
        exp_avg, exp_avg_sq = adam_moments(grad, state, beta1, beta2)
        bias_correction2 = 1 - beta2**step
        bias_corrected_exp_avg = exp_avg / (1 - beta1**step)
        rho_inf = 2 / (1 - beta2) - 1  # the SMA's maximum length, and its length now:
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            adaptive_lr = bias_correction2**0.5 / (xp.sqrt(exp_avg_sq) + group["eps"])
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            p.array = p.array - bias_corrected_exp_avg * lr * adaptive_lr * rect
        else:
            p.array = p.array - bias_corrected_exp_avg * lr
