"""RMSprop in PyTorch's exact update order (``torch.optim.RMSprop``, single-tensor path)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from autograd_core.autodiff.tensor import Tensor
from optim.optimizer import Optimizer, gradient, hyperparameter, lerp, torch_flags


class RMSprop(Optimizer):
    """RMSprop: divide the gradient by a running root mean square of its recent values.

    ``square_avg = alpha * square_avg + (1 - alpha) * g * g``; `centered` also tracks the mean
    gradient and divides by the estimated standard deviation instead; `momentum` keeps a
    buffer of the scaled steps; `weight_decay` adds ``weight_decay * p`` to the gradient;
    `maximize` ascends.

    >>> import autograd_core as ag, optim
    >>> w = ag.tensor([1.0], requires_grad=True)
    >>> (w * 3).sum().backward()
    >>> optim.RMSprop([w], lr=0.01).step()
    >>> round(w.item(), 4)  # 1 - 0.01 * 3 / sqrt(0.01 * 9)
    0.9
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        settings = {
            name: hyperparameter(name, value)
            for name, value in (
                ("lr", lr),
                ("alpha", alpha),
                ("eps", eps),
                ("weight_decay", weight_decay),
                ("momentum", momentum),
            )
        }
        flags = torch_flags(maximize=maximize, differentiable=differentiable, capturable=capturable, foreach=foreach)
        super().__init__(params, dict(**settings, centered=centered, **flags))

    def update(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        xp = p.backend.xp
        alpha, momentum = group["alpha"], group["momentum"]
        state.setdefault("step", 0)
        for key, wanted in (("square_avg", True), ("momentum_buffer", momentum > 0), ("grad_avg", group["centered"])):
            if wanted and key not in state:  # made at the first step (or when a schedule turns momentum on)
                state[key] = xp.zeros_like(p.array)
        state["step"] += 1
        grad = gradient(p, group)
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p.array
        square_avg = state["square_avg"] = state["square_avg"] * alpha + (1 - alpha) * grad * grad
        if group["centered"]:
            grad_avg = state["grad_avg"] = lerp(state["grad_avg"], grad, 1 - alpha)
            square_avg = square_avg - grad_avg * grad_avg
        avg = xp.sqrt(square_avg) + group["eps"]
        if momentum > 0:
            state["momentum_buffer"] = state["momentum_buffer"] * momentum + grad / avg
            p.array = p.array - group["lr"] * state["momentum_buffer"]
        else:
            p.array = p.array - group["lr"] * grad / avg
