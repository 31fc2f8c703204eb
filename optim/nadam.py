"""NAdam in PyTorch's exact update order (``torch.optim.NAdam``, single-tensor path)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from autograd_core.autodiff.tensor import Tensor
from optim.adam import adam_moments, betas_checked, decayed
from optim.optimizer import Optimizer, float32, gradient, hyperparameter, torch_flags


class NAdam(Optimizer):
    """Adam with Nesterov momentum, whose momentum coefficient warms up as
    ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))``. `weight_decay` is L2, or
    AdamW's with `decoupled_weight_decay` (NAdamW); `maximize` ascends. The running product
    of the ``mu_t`` is kept in float32, as PyTorch keeps it (a float32 0-d tensor).

    >>> import autograd_core as ag, optim
    >>> w = ag.tensor([1.0], requires_grad=True)
    >>> (w * 3).sum().backward()
    >>> optim.NAdam([w], lr=0.1).step()
    >>> round(w.item(), 4)  # Nesterov's look-ahead: a first step a little over lr
    0.8944
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum_decay: float = 4e-3,
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
                momentum_decay=hyperparameter("momentum_decay", momentum_decay),
                decoupled_weight_decay=decoupled_weight_decay,
                **torch_flags(maximize=maximize, differentiable=differentiable, foreach=foreach, capturable=capturable),
            ),
        )

    def update(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        xp = p.backend.xp
        if not state:
            state.update(step=0, mu_product=1.0, exp_avg=xp.zeros_like(p.array), exp_avg_sq=xp.zeros_like(p.array))
        state["step"] += 1
        step, lr, (beta1, beta2) = state["step"], group["lr"], group["betas"]
        bias_correction2 = 1 - beta2**step
        grad = decayed(p, gradient(p, group), group)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * group["momentum_decay"])))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * group["momentum_decay"])))
        mu_product = state["mu_product"] = float32(state["mu_product"] * float32(mu))  # float32 arithmetic
        exp_avg, exp_avg_sq = adam_moments(grad, state, beta1, beta2)
        denom = xp.sqrt(exp_avg_sq / bias_correction2) + group["eps"]
        p.array = p.array + (-lr * (1.0 - mu) / (1.0 - mu_product)) * (grad / denom)
        p.array = p.array + ((-lr * mu_next) / (1.0 - mu_product * mu_next)) * (exp_avg / denom)
