"""Adam and AdamW, in PyTorch's exact update order (the arithmetic lives in the backend's
`adam_update`, in place where the library allows it)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from autograd_core.autodiff.tensor import Tensor
from autograd_core.graph.registry import raw_namespace
from autograd_core.primitives import adam_update
from optim.optimizer import Optimizer, hyperparameter


class Adam(Optimizer):
    """Adam; `weight_decay` adds ``weight_decay * p`` to the gradient (L2), as in PyTorch."""

    decoupled = False

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        betas = tuple(hyperparameter(f"beta{i + 1}", b, high=1.0, high_included=False) for i, b in enumerate(betas))
        super().__init__(
            params,
            dict(
                lr=hyperparameter("lr", lr),
                betas=betas,
                eps=hyperparameter("eps", eps),
                weight_decay=hyperparameter("weight_decay", weight_decay),
            ),
        )

    def update(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        xp = p.backend.xp
        if not state:
            state.update(step=0, exp_avg=xp.zeros_like(p.array), exp_avg_sq=xp.zeros_like(p.array))
        state["step"] += 1
        beta1, beta2 = group["betas"]
        p.array, state["exp_avg"], state["exp_avg_sq"] = adam_update(
            raw_namespace(p.backend),
            p.array,
            p.grad.array,
            state["exp_avg"],
            state["exp_avg_sq"],
            step=state["step"],
            lr=group["lr"],
            beta1=beta1,
            beta2=beta2,
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            decoupled=self.decoupled,
        )


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p *= 1 - lr * weight_decay`` before the Adam step.

    >>> import nn, optim
    >>> optim.AdamW(nn.Linear(2, 1).parameters(), lr=1e-3).defaults["weight_decay"]
    0.01
    """

    decoupled = True

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay)
