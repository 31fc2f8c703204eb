"""Adagrad in PyTorch's exact update order (``torch.optim.Adagrad``, dense single-tensor path)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from autograd_core.autodiff.tensor import Tensor
from optim.optimizer import Optimizer, gradient, hyperparameter, torch_flags


class Adagrad(Optimizer):
    """Adagrad: divide each step by the root of the running sum of squared gradients.

    The step size at step ``t`` is ``lr / (1 + (t - 1) * lr_decay)``; the sum starts at
    `initial_accumulator_value`; `weight_decay` adds ``weight_decay * p`` to the gradient;
    `maximize` ascends.

    >>> import autograd_core as ag, optim
    >>> w = ag.tensor([1.0], requires_grad=True)
    >>> (w * 3).sum().backward()
    >>> optim.Adagrad([w], lr=0.1).step()
    >>> round(w.item(), 4)  # 1 - 0.1 * 3 / sqrt(9)
    0.9
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            {
                name: hyperparameter(name, value)
                for name, value in (
                    ("lr", lr),
                    ("lr_decay", lr_decay),
                    ("weight_decay", weight_decay),
                    ("initial_accumulator_value", initial_accumulator_value),
                    ("eps", eps),
                )
            }
            | torch_flags(maximize=maximize, differentiable=differentiable, foreach=foreach, fused=fused),
        )

    def update(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        xp = p.backend.xp
        if not state:
            state.update(step=0, sum=xp.full_like(p.array, group["initial_accumulator_value"]))
        state["step"] += 1
        grad = gradient(p, group)
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p.array
        # `step` is an array inside a compiled step, a Python int otherwise.
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        state["sum"] = state["sum"] + grad * grad
        p.array = p.array - clr * grad / (xp.sqrt(state["sum"]) + group["eps"])
