"""Stochastic gradient descent with PyTorch's momentum, dampening and Nesterov rules."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from autograd_core.autodiff.tensor import Tensor
from optim.optimizer import Optimizer, gradient, hyperparameter, torch_flags


class SGD(Optimizer):
    """SGD as ``torch.optim.SGD``: the momentum buffer starts at the first gradient;
    `maximize` ascends.

    >>> import autograd_core as ag, optim
    >>> w = ag.tensor([1.0], requires_grad=True)
    >>> (w * 3).sum().backward()
    >>> optim.SGD([w], lr=0.1).step()
    >>> round(w.item(), 4)
    0.7
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        lr, momentum, dampening, weight_decay = (
            hyperparameter(name, value)
            for name, value in (
                ("lr", lr),
                ("momentum", momentum),
                ("dampening", dampening),
                ("weight_decay", weight_decay),
            )
        )
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum needs momentum > 0 and dampening = 0")
        flags = torch_flags(maximize=maximize, differentiable=differentiable, foreach=foreach, fused=fused)
        super().__init__(
            params,
            dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov, **flags),
        )

    def update(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        xp = p.backend.xp
        d_p = gradient(p, group)
        if group["weight_decay"]:
            d_p = d_p + group["weight_decay"] * p.array
        if group["momentum"]:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = xp.asarray(d_p, copy=True)
            else:
                buf = buf * group["momentum"] + (1 - group["dampening"]) * d_p
            state["momentum_buffer"] = buf
            d_p = d_p + group["momentum"] * buf if group["nesterov"] else buf
        p.array = p.array - group["lr"] * d_p
