"""Averaged SGD in PyTorch's exact update order (``torch.optim.ASGD``, single-tensor path)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from autograd_core.autodiff.tensor import Tensor
from optim.optimizer import Optimizer, float32, gradient, hyperparameter, torch_flags


class ASGD(Optimizer):
    """Averaged SGD: SGD with the decaying rate ``eta_t = lr / (1 + lambd * lr * t) ** alpha``
    and a decay of the weights by ``1 - lambd * eta``; from step `t0` on, the state's ``ax``
    holds the running average of the iterates (before, their last value). `weight_decay` adds
    ``weight_decay * p`` to the gradient; `maximize` ascends. ``eta`` and ``mu`` are kept in
    float32, as PyTorch keeps them.

    >>> import autograd_core as ag, optim
    >>> w = ag.tensor([1.0], requires_grad=True)
    >>> (w * 3).sum().backward()
    >>> opt = optim.ASGD([w], lr=0.1)
    >>> opt.step()
    >>> round(w.item(), 4), round(opt.state[w]["ax"].item(), 4)
    (0.7, 0.7)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0.0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        super().__init__(
            params,
            dict(
                lr=hyperparameter("lr", lr),
                lambd=lambd,
                alpha=alpha,
                t0=t0,
                weight_decay=hyperparameter("weight_decay", weight_decay),
                **torch_flags(maximize=maximize, differentiable=differentiable, foreach=foreach, capturable=capturable),
            ),
        )

    def update(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        xp = p.backend.xp
        lr, lambd = group["lr"], group["lambd"]
        if not state:
            state.update(step=0, eta=float32(lr), mu=1.0, ax=xp.zeros_like(p.array))
        state["step"] += 1
        grad = gradient(p, group)
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p.array
        eta = state["eta"]
        p.array = p.array * (1 - lambd * eta)
        p.array = p.array - eta * grad
        if state["mu"] != 1:
            state["ax"] = state["ax"] + (p.array - state["ax"]) * state["mu"]
        else:
            state["ax"] = xp.asarray(p.array, copy=True)
        step = state["step"]
        state["eta"] = float32(lr / ((1 + lambd * lr * step) ** group["alpha"]))
        state["mu"] = float32(1 / max(1, step - group["t0"]))
