"""This framework on one of its backends: the `nn` model, `optim.AdamW`, `F.cross_entropy`."""

from __future__ import annotations

from typing import Any

import autograd_core as ag
import backends
import nn
import nn.functional as F
import optim
from bench.impls.base import BatchPool, Impl, Runner
from bench.problems import ADAM_EPS, BETAS, Problem, build_model


class Ours(Impl):
    """``ours:<backend>``: the engine as a user would run it on that backend."""

    requires = ()

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.name = f"ours:{backend}"

    def unavailable(self) -> str | None:
        try:
            backends.get(self.backend)
        except Exception as e:  # noqa: BLE001 - an unknown, missing or broken backend is skipped
            return str(e).splitlines()[0] if str(e) else type(e).__name__
        return None

    def setup(self, problem: Problem) -> Runner:
        backend = backends.get(self.backend)
        with backends.use(backend):
            return _Chain(backend, problem) if problem.model == "chain" else _Model(backend, problem)


class OursCompiled(Ours):
    """``ours:<backend>+compile``: the same step through `autograd_core.compile`, for
    backends that can trace a whole step (jax)."""

    workloads = frozenset({"mlp", "char", "cnn", "gpt"})

    def __init__(self, backend: str) -> None:
        super().__init__(backend)
        self.name = f"ours:{backend}+compile"

    def unavailable(self) -> str | None:
        reason = super().unavailable()
        if reason is None and not backends.get(self.backend).can_compile:
            reason = f"the {self.backend} backend has no tracing compiler"
        return reason

    def setup(self, problem: Problem) -> Runner:
        backend = backends.get(self.backend)
        with backends.use(backend):
            return _CompiledModel(backend, problem)


class _Model(BatchPool):
    def __init__(self, backend: backends.Backend, problem: Problem) -> None:
        self.backend = backend
        self.model = build_model(nn, problem.model)
        self.model.load_state_dict(problem.weights)
        self.params = list(self.model.parameters())
        self.opt = optim.AdamW(self.params, lr=problem.lr, betas=BETAS, eps=ADAM_EPS,
                               weight_decay=problem.weight_decay)
        super().__init__([(ag.tensor(x), ag.tensor(y)) for x, y in problem.batches])
        self.loss: ag.Tensor | None = None

    def forward(self) -> None:
        with backends.use(self.backend):
            self.loss = F.cross_entropy(self.model(self.x), self.y)

    def backward(self) -> None:
        with backends.use(self.backend):
            self.opt.zero_grad()
            self.loss.backward()

    def optimizer(self) -> None:
        with backends.use(self.backend):
            self.opt.step()

    def sync(self) -> None:
        arrays: list[Any] = [p.data for p in self.params]
        arrays.extend(p.grad.data for p in self.params if p.grad is not None)
        if self.loss is not None:
            arrays.append(self.loss.data)
        self.backend.synchronize(*arrays)

    def check_value(self) -> float:
        return float(self.loss.item())


class _Chain(Runner):
    """``y = x * w * w * ... * w`` (2,000 multiplies of one-element tensors), then backward."""

    def __init__(self, backend: backends.Backend, problem: Problem) -> None:
        self.backend, self.length = backend, problem.chain
        self.x = ag.tensor(problem.weights["x"], requires_grad=True)
        self.w = ag.tensor(problem.weights["w"], requires_grad=True)

    def step(self) -> None:
        with backends.use(self.backend):
            self.x.grad = self.w.grad = None
            y, w = self.x, self.w
            for _ in range(self.length):
                y = y * w
            y.backward()

    def sync(self) -> None:
        self.backend.synchronize(*(t.grad.data for t in (self.x, self.w) if t.grad is not None))

    def check_value(self) -> float:
        return float(self.w.grad.item())


class _CompiledModel(_Model):
    """The whole step (forward, backward, AdamW) as one compiled call; no phase split."""

    def __init__(self, backend: backends.Backend, problem: Problem) -> None:
        super().__init__(backend, problem)

        def train_step(x: ag.Tensor, y: ag.Tensor) -> ag.Tensor:
            loss = F.cross_entropy(self.model(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            return loss

        self.compiled = ag.compile(train_step, modules=[self.model], optimizers=[self.opt])

    def step(self) -> None:
        with backends.use(self.backend):
            self.loss = self.compiled(self.x, self.y)
