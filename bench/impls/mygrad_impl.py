"""mygrad (``pip install mygrad``): the parameters are mygrad tensors, the forward pass
mygrad's operations (its ``softmax_crossentropy`` for the loss), the gradients its
``loss.backward()``. The update is numpy-by-hand's `InPlaceAdamW` on the tensors' own
float32 arrays (``Tensor.data``), which mygrad unlocks for writing once backward has
cleared the graph. mygrad's memory guarding stays on, as a user gets it by default.

(The module is not called ``mygrad.py``, which would read as the library itself.) No CNN or
GPT: as for numpy-by-hand, their layers would be models of our own written in mygrad."""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.impls.base import BatchPool, Impl, Runner
from bench.impls.by_hand import InPlaceAdamW
from bench.impls.peer_models import MODELS, Ops
from bench.problems import Problem


class MyGrad(Impl):
    name = "mygrad"
    workloads = frozenset({"mlp", "char", "ops", "phase"})
    requires = ("mygrad",)
    extra = "peers"

    def setup(self, problem: Problem) -> Runner:
        if problem.model == "chain":
            return _Chain(problem)
        return _Model(problem)


class _Model(BatchPool):
    def __init__(self, problem: Problem) -> None:
        import mygrad as mg

        super().__init__(problem.batches)
        self.ops = Ops(mg, mg.matmul, mg.nnet.relu)
        self.model = MODELS[problem.model]
        self.tensors = [mg.tensor(w, dtype=np.float32) for w in problem.weights.values()]
        self.grads: list[np.ndarray] = [np.zeros_like(t.data) for t in self.tensors]
        self.adam = InPlaceAdamW([t.data for t in self.tensors], self.grads, problem)
        self.loss: Any = None

    def forward(self) -> None:
        logits = self.model(self.ops, self.tensors, self.x)
        self.loss = self.ops.xp.nnet.softmax_crossentropy(logits, self.y)

    def backward(self) -> None:
        self.loss.backward()
        # mygrad's gradient of a weight used as ``W.T`` is a transposed (Fortran-ordered) view. It is
        # copied into C-ordered buffers like the parameters', so the AdamW phase is numpy-by-hand's
        # kernel on numpy-by-hand's layouts; the transposing copy counts as backward (on the views,
        # every AdamW operation mixes layouts and the optimizer phase took 3x as long: the same total).
        for buffer, t in zip(self.grads, self.tensors):
            np.copyto(buffer, t.grad)

    def optimizer(self) -> None:
        self.adam.step()

    def check_value(self) -> float:
        return float(self.loss.item())


class _Chain(Runner):
    """``y = x * w * w * ... * w`` (2,000 multiplies of one-element tensors), then backward."""

    def __init__(self, problem: Problem) -> None:
        import mygrad as mg

        self.length = problem.chain
        self.x, self.w = (mg.tensor(problem.weights[k], dtype=np.float32) for k in ("x", "w"))

    def step(self) -> None:
        y, w = self.x, self.w
        for _ in range(self.length):
            y = y * w
        y.backward()

    def check_value(self) -> float:
        return float(self.w.grad[0])
