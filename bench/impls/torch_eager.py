"""PyTorch eager on the CPU: the same model and weights, ``torch.optim.AdamW`` with its
default (single-tensor) implementation, or ``fused=True``; for transforms, ``torch.func``."""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.impls.base import BatchPool, Impl, Runner, TransformsRunner
from bench.problems import ADAM_EPS, BETAS, Problem, build_model


class TorchEager(Impl):
    requires = ("torch",)
    masks = "torch"
    extra = "torch"

    def __init__(self, fused: bool = False) -> None:
        self.fused = fused
        self.name = "torch-fused" if fused else "torch"
        # The op chain and the transforms have no optimizer, so the fused variant would repeat the plain one.
        self.workloads = frozenset(
            {"mlp", "char", "cnn", "gpt", "phase"}
            if fused
            else {"mlp", "char", "cnn", "gpt", "ops", "phase", "transforms"}
        )

    def setup(self, problem: Problem) -> Runner:
        if problem.workload == "transforms":
            return _Transforms(problem)
        return _Chain(problem) if problem.model == "chain" else TorchModel(problem, self.fused)


class TorchModel(BatchPool):
    """The model in training mode, `forward` / `backward` / `optimizer` eagerly. With dropout,
    torch's generator is reseeded before each step with the problem's seed of that step."""

    def __init__(self, problem: Problem, fused: bool) -> None:
        import torch

        self.torch, self.F, self.problem = torch, torch.nn.functional, problem
        self.model = build_model(torch.nn, problem.model, problem.dropout)
        self.model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in problem.weights.items()})
        self.opt = torch.optim.AdamW(
            self.model.parameters(),
            lr=problem.lr,
            betas=BETAS,
            eps=ADAM_EPS,
            weight_decay=problem.weight_decay,
            fused=fused or None,
        )
        super().__init__([(torch.from_numpy(x), torch.from_numpy(y)) for x, y in problem.batches])
        self.loss = None

    def select(self, k: int) -> None:
        super().select(k)
        if self.problem.dropout:
            self.torch.manual_seed(self.problem.mask_seed(k))

    def forward(self) -> None:
        self.loss = self.F.cross_entropy(self.model(self.x), self.y)

    def backward(self) -> None:
        self.opt.zero_grad()
        self.loss.backward()

    def optimizer(self) -> None:
        self.opt.step()

    def check_value(self) -> float:
        return float(self.loss.item())


class _Chain(Runner):
    def __init__(self, problem: Problem) -> None:
        import torch

        self.length = problem.chain
        self.x, self.w = (torch.from_numpy(problem.weights[k].copy()).requires_grad_() for k in ("x", "w"))

    def step(self) -> None:
        self.x.grad = self.w.grad = None
        y, w = self.x, self.w
        for _ in range(self.length):
            y = y * w
        y.backward()

    def check_value(self) -> float:
        return float(self.w.grad.item())


class _Transforms(TransformsRunner):
    """``torch.func``: ``vmap(grad(loss of one example), in_dims=(None, 0, 0))`` through
    ``functional_call``, and the HVP as ``jvp`` of ``grad`` (forward over reverse)."""

    def __init__(self, problem: Problem) -> None:
        import torch
        from torch.func import functional_call, grad, jvp, vmap

        model = build_model(torch.nn, problem.model)
        as_tensors = lambda arrays: {k: torch.from_numpy(v.copy()) for k, v in arrays.items()}
        self.params, self.direction = as_tensors(problem.weights), as_tensors(problem.probes.direction)
        super().__init__(problem, [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in problem.batches])

        def loss(params: dict[str, Any], x: Any, y: Any) -> Any:
            return torch.nn.functional.cross_entropy(functional_call(model, params, (x,)), y)

        self.per_sample_grads_of = vmap(grad(lambda p, x, y: loss(p, x[None], y[None])), in_dims=(None, 0, 0))
        self.hvp_of = lambda p, v, x, y: jvp(lambda q: grad(loss)(q, x, y), (p,), (v,))[1]

    def per_sample(self) -> None:
        self.per_sample_grads = self.per_sample_grads_of(self.params, self.x, self.y)

    def hvp(self) -> None:
        self.hvp_result = self.hvp_of(self.params, self.direction, self.x, self.y)

    def to_numpy(self, array: Any) -> np.ndarray:
        return array.detach().numpy()
