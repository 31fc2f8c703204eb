"""Adamax in PyTorch's exact update order (``torch.optim.Adamax``, single-tensor path)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from autograd_core.autodiff.tensor import Tensor
from optim.adam import betas_checked
from optim.optimizer import Optimizer, gradient, hyperparameter, lerp, torch_flags


class Adamax(Optimizer):
    """Adam with the infinity norm: divide by ``exp_inf = max(beta2 * exp_inf, |g| + eps)``
    instead of the root of a second moment; `weight_decay` adds ``weight_decay * p`` to the
    gradient; `maximize` ascends.

    >>> import autograd_core as ag, optim
    >>> w = ag.tensor([1.0], requires_grad=True)
    >>> (w * 3).sum().backward()
    >>> optim.Adamax([w], lr=0.1).step()
    >>> round(w.item(), 4)
    0.9
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        super().__init__(
            params,
            dict(
                lr=hyperparameter("lr", lr),
                betas=betas_checked(betas),
                eps=hyperparameter("eps", eps),
                weight_decay=hyperparameter("weight_decay", weight_decay),
                **torch_flags(maximize=maximize, differentiable=differentiable, foreach=foreach, capturable=capturable),
            ),
        )

    def update(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        xp = p.backend.xp
        if not state:
            state.update(step=0, exp_avg=xp.zeros_like(p.array), exp_inf=xp.zeros_like(p.array))
        state["step"] += 1
        beta1, beta2 = group["betas"]
        grad = gradient(p, group)
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p.array
        exp_avg = state["exp_avg"] = lerp(state["exp_avg"], grad, 1 - beta1)
        exp_inf = state["exp_inf"] = xp.maximum(state["exp_inf"] * beta2, xp.abs(grad) + group["eps"])
        clr = group["lr"] / (1 - beta1 ** state["step"])
        p.array = p.array + (-clr) * (exp_avg / exp_inf)
