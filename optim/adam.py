"""Adam and AdamW, in PyTorch's exact update order (the arithmetic lives in the backend's
`adam_update`, in place where the library allows it; `amsgrad` runs the portable update here)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from autograd_core.autodiff.tensor import Tensor
from autograd_core.graph.registry import raw_namespace
from autograd_core.primitives import adam_update
from optim.optimizer import Optimizer, gradient, hyperparameter, lerp, torch_flags


def betas_checked(betas: tuple[Any, Any]) -> tuple[float, float]:
    """`betas`, each a number (or 0-d tensor) in [0, 1)."""
    return tuple(hyperparameter(f"beta{i + 1}", b, high=1.0, high_included=False) for i, b in enumerate(betas))


def adam_moments(grad: Any, state: dict[str, Any], beta1: Any, beta2: Any) -> tuple[Any, Any]:
    """The running moments after `grad`, stored in `state`: ``exp_avg`` (a lerp towards the
    gradient) and ``exp_avg_sq`` (of its square), in PyTorch's order (Adam, NAdam, RAdam)."""
    state["exp_avg"] = lerp(state["exp_avg"], grad, 1 - beta1)
    state["exp_avg_sq"] = state["exp_avg_sq"] * beta2 + (1 - beta2) * grad * grad
    return state["exp_avg"], state["exp_avg_sq"]


def decayed(p: Tensor, grad: Any, group: dict[str, Any]) -> Any:
    """Weight decay before an Adam-family step: decoupled where the group says so
    (``p *= 1 - lr * weight_decay``, AdamW's) or L2 (``grad + weight_decay * p``, returned)."""
    weight_decay = group["weight_decay"]
    if weight_decay and group.get("decoupled_weight_decay"):
        p.array = p.array * (1 - group["lr"] * weight_decay)
    elif weight_decay:
        grad = grad + weight_decay * p.array
    return grad


class Adam(Optimizer):
    """Adam; `weight_decay` adds ``weight_decay * p`` to the gradient (L2), or, with
    `decoupled_weight_decay` (AdamW), shrinks the parameter first; `amsgrad` divides by the
    running maximum of the second moment; `maximize` ascends. As ``torch.optim.Adam``.

    >>> import autograd_core as ag, optim
    >>> w = ag.tensor([1.0], requires_grad=True)
    >>> (w * 3).sum().backward()
    >>> optim.Adam([w], lr=0.1, amsgrad=True).step()
    >>> round(w.item(), 4)  # the first step moves by lr, whatever the gradient's scale
    0.9
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        super().__init__(
            params,
            dict(
                lr=hyperparameter("lr", lr),
                betas=betas_checked(betas),
                eps=hyperparameter("eps", eps),
                weight_decay=hyperparameter("weight_decay", weight_decay),
                amsgrad=amsgrad,
                **torch_flags(
                    maximize=maximize,
                    differentiable=differentiable,
                    foreach=foreach,
                    capturable=capturable,
                    fused=fused,
                ),
                decoupled_weight_decay=decoupled_weight_decay,
            ),
        )

    def update(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        xp = p.backend.xp
        if not state:
            state.update(step=0, exp_avg=xp.zeros_like(p.array), exp_avg_sq=xp.zeros_like(p.array))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = xp.zeros_like(p.array)
        state["step"] += 1
        if group["amsgrad"]:
            self._amsgrad_update(p, group, state)
            return
        beta1, beta2 = group["betas"]
        p.array, state["exp_avg"], state["exp_avg_sq"] = adam_update(
            raw_namespace(p.backend),
            p.array,
            gradient(p, group),
            state["exp_avg"],
            state["exp_avg_sq"],
            step=state["step"],
            lr=group["lr"],
            beta1=beta1,
            beta2=beta2,
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            decoupled=group["decoupled_weight_decay"],
        )

    @staticmethod
    def _amsgrad_update(p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        """torch.optim.Adam's single-tensor step with ``amsgrad=True``."""
        xp = p.backend.xp
        beta1, beta2 = group["betas"]
        grad = decayed(p, gradient(p, group), group)
        exp_avg, exp_avg_sq = adam_moments(grad, state, beta1, beta2)
        step_size = group["lr"] / (1 - beta1 ** state["step"])
        state["max_exp_avg_sq"] = xp.maximum(state["max_exp_avg_sq"], exp_avg_sq)
        denom = xp.sqrt(state["max_exp_avg_sq"]) / (1 - beta2 ** state["step"]) ** 0.5 + group["eps"]
        p.array = p.array - step_size * (exp_avg / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p *= 1 - lr * weight_decay`` before the Adam step.

    >>> import nn, optim
    >>> optim.AdamW(nn.Linear(2, 1).parameters(), lr=1e-3).defaults["weight_decay"]
    0.01
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )
