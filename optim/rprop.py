"""Rprop in PyTorch's exact update order (``torch.optim.Rprop``, single-tensor path)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from autograd_core.autodiff.tensor import Tensor
from optim.optimizer import Optimizer, gradient, hyperparameter, torch_flags


class Rprop(Optimizer):
    """Resilient backpropagation: each weight moves by its own step size against the sign of
    its gradient; the step size grows by ``etas[1]`` while the gradient keeps its sign, shrinks
    by ``etas[0]`` when it flips (and that step is skipped), clamped to `step_sizes`; it starts
    at `lr`. `maximize` ascends.

    >>> import autograd_core as ag, optim
    >>> w = ag.tensor([1.0, -1.0], requires_grad=True)
    >>> (w * 3).sum().backward()
    >>> optim.Rprop([w], lr=0.1).step()
    >>> [round(v, 4) for v in w.tolist()]
    [0.9, -1.1]
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]} (they must satisfy 0 < etas[0] < 1 < etas[1])")
        super().__init__(
            params,
            dict(
                lr=hyperparameter("lr", lr),
                etas=tuple(etas),
                step_sizes=tuple(step_sizes),
                **torch_flags(maximize=maximize, differentiable=differentiable, foreach=foreach, capturable=capturable),
            ),
        )

    def update(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        xp = p.backend.xp
        if not state:
            state.update(step=0, prev=xp.zeros_like(p.array), step_size=xp.full_like(p.array, group["lr"]))
        state["step"] += 1
        (etaminus, etaplus), (step_size_min, step_size_max) = group["etas"], group["step_sizes"]
        grad = gradient(p, group)
        sign = xp.sign(grad * state["prev"])
        factor = xp.where(
            sign > 0, xp.full_like(sign, etaplus), xp.where(sign < 0, xp.full_like(sign, etaminus), xp.ones_like(sign))
        )
        step_size = state["step_size"] = xp.clip(state["step_size"] * factor, step_size_min, step_size_max)
        grad = xp.where(factor == etaminus, xp.zeros_like(grad), grad)  # after a sign flip: no step
        p.array = p.array - xp.sign(grad) * step_size
        state["prev"] = grad
