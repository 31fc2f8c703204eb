"""HIPS autograd (``pip install autograd``): the models as functions of a list of numpy
arrays, differentiated by ``autograd.value_and_grad``, which traces the forward pass and
sweeps it back in the same call. The gradients then go through numpy-by-hand's
`InPlaceAdamW`, the same AdamW update on the same float32 arrays.

No "phase" workload: ``value_and_grad`` computes the loss and its gradient in one call, so
forward and backward cannot be timed apart without tracing the forward twice. No CNN or
GPT: as for numpy-by-hand, their layers would be models of our own written in numpy."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bench.impls.base import BatchPool, Impl, Runner
from bench.impls.by_hand import InPlaceAdamW
from bench.impls.peer_models import MODELS, Ops
from bench.problems import Problem


class HipsAutograd(Impl):
    name = "hips-autograd"
    workloads = frozenset({"mlp", "char", "ops"})
    requires = ("autograd",)
    extra = "peers"

    def setup(self, problem: Problem) -> Runner:
        if problem.model == "chain":
            return _Chain(problem)
        return _Model(problem)


def _cross_entropy(anp: Any, getval: Any, logits: Any, targets: np.ndarray) -> Any:
    """The mean softmax cross-entropy; the row maxima are a constant shift (no gradient)."""
    shifted = logits - getval(logits).max(axis=1, keepdims=True)
    log_total = anp.log(anp.sum(anp.exp(shifted), axis=1))
    return anp.mean(log_total - shifted[np.arange(len(targets)), targets])


class _Model(BatchPool):
    def __init__(self, problem: Problem) -> None:
        import autograd
        import autograd.numpy as anp
        from autograd.tracer import getval

        super().__init__(problem.batches)
        model, ops = MODELS[problem.model], Ops(anp, anp.dot, lambda h: anp.maximum(h, 0))

        def loss(params: list[Any], x: np.ndarray, y: np.ndarray) -> Any:
            return _cross_entropy(anp, getval, model(ops, params, x), y)

        self.loss_and_grads = autograd.value_and_grad(loss)
        self.params = [w.copy() for w in problem.weights.values()]
        self.grads: list[np.ndarray] = [np.zeros_like(p) for p in self.params]
        self.adam = InPlaceAdamW(self.params, self.grads, problem)
        self.loss = math.nan

    def step(self) -> None:
        loss, grads = self.loss_and_grads(self.params, self.x, self.y)
        self.grads[:] = grads  # the optimizer reads this list: new arrays each step
        self.adam.step()
        self.loss = float(loss)

    def check_value(self) -> float:
        return self.loss


class _Chain(Runner):
    """``y = x * w * w * ... * w`` (2,000 multiplies of one-element arrays), differentiated in x and w."""

    def __init__(self, problem: Problem) -> None:
        import autograd

        length = problem.chain

        def chain(x: Any, w: Any) -> Any:
            y = x
            for _ in range(length):
                y = y * w
            return y

        self.grad = autograd.grad(chain, argnum=(0, 1))
        self.x, self.w = problem.weights["x"].copy(), problem.weights["w"].copy()
        self.grads: tuple[np.ndarray, np.ndarray] | None = None

    def step(self) -> None:
        self.grads = self.grad(self.x, self.w)

    def check_value(self) -> float:
        return float(self.grads[1][0])
