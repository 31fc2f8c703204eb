"""Adadelta in PyTorch's exact update order (``torch.optim.Adadelta``, single-tensor path)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from autograd_core.autodiff.tensor import Tensor
from optim.optimizer import Optimizer, gradient, hyperparameter, torch_flags


class Adadelta(Optimizer):
    """Adadelta: the step is the gradient scaled by ``sqrt(acc_delta + eps) / sqrt(square_avg
    + eps)``, both running averages (factor `rho`) of the squared steps and gradients, times
    `lr`; `weight_decay` adds ``weight_decay * p`` to the gradient; `maximize` ascends.

    >>> import autograd_core as ag, optim
    >>> w = ag.tensor([1.0], requires_grad=True)
    >>> (w * 3).sum().backward()
    >>> optim.Adadelta([w]).step()
    >>> round(w.item(), 4)  # 1 - sqrt(1e-6) / sqrt(0.1 * 9 + 1e-6) * 3
    0.9968
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        super().__init__(
            params,
            dict(
                lr=hyperparameter("lr", lr),
                rho=hyperparameter("rho", rho, high=1.0),
                eps=hyperparameter("eps", eps),
                weight_decay=hyperparameter("weight_decay", weight_decay),
                **torch_flags(maximize=maximize, differentiable=differentiable, capturable=capturable, foreach=foreach),
            ),
        )

    def update(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        xp = p.backend.xp
        if not state:
            state.update(step=0, square_avg=xp.zeros_like(p.array), acc_delta=xp.zeros_like(p.array))
        state["step"] += 1
        rho, eps = group["rho"], group["eps"]
        grad = gradient(p, group)
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p.array
        square_avg = state["square_avg"] = state["square_avg"] * rho + (1 - rho) * grad * grad
        delta = xp.sqrt(state["acc_delta"] + eps) / xp.sqrt(square_avg + eps) * grad
        state["acc_delta"] = state["acc_delta"] * rho + (1 - rho) * delta * delta
        p.array = p.array - group["lr"] * delta
