"""Every layer, loss and functional form run side by side with its PyTorch twin on the same
host inputs and weights: the harness shared by the empty-input and float16 sweeps.

A case builds our callable and torch's from a dtype; modules get the same random weights
(loaded into the twin by name). `run_ours` and `run_torch` return the outputs and the
gradients of ``sum(out * w)`` for every floating input and parameter, or the exception raised.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

import autograd_core as ag

TF = torch.nn.functional


@dataclass(frozen=True)
class Input:
    """One input: its shape and how it is drawn ("normal", "prob", "positive", "wide" for
    large offset values, "index:N" for integers below N, "bool" for a mask)."""

    shape: tuple[int, ...]
    kind: str = "normal"

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        if self.kind.startswith("index:"):
            return rng.integers(0, int(self.kind[6:]), self.shape)
        if self.kind == "bool":
            return rng.random(self.shape) < 0.5
        if self.kind == "prob":
            return rng.uniform(0.05, 0.95, self.shape)
        if self.kind == "wide":  # large values, offset: where float16 sums lose the most
            return 20 + 10 * rng.standard_normal(self.shape)
        if self.kind == "positive":
            return rng.uniform(0.5, 2.0, self.shape)
        return rng.standard_normal(self.shape)

    @property
    def floating(self) -> bool:
        return not self.kind.startswith("index:") and self.kind != "bool"


@dataclass(frozen=True)
class Case:
    """Our module class (or function) and torch's, with constructor arguments; `train`
    selects training mode for modules."""

    ours: Callable[..., Any]
    theirs: Callable[..., Any]
    args: tuple = ()
    kwargs: dict | None = None
    module: bool = True
    train: bool = False


def layer(ours: Any, theirs: Any, *args: Any, train: bool = False, **kwargs: Any) -> Case:
    return Case(ours, theirs, args, kwargs, module=True, train=train)


def function(ours: Callable, theirs: Callable, **kwargs: Any) -> Case:
    return Case(ours, theirs, (), kwargs, module=False)


@dataclass
class Outcome:
    """What one framework gave: outputs and gradients as float64 host arrays (None where no
    gradient reached), or the exception raised."""

    outputs: list[np.ndarray] | None = None
    grads: dict[str, np.ndarray | None] | None = None
    error: Exception | None = None
    dtypes: list[str] | None = None


def _floating_outputs(out: Any) -> list[Any]:
    """The floating tensors of a module's output (RNNs and attention return tuples)."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _floating_outputs(o)]
    if out is None or not out.dtype.is_floating_point:
        return []
    return [out]


def weights_for(case: Case, dtype: str, seed: int) -> tuple[Any, dict[str, np.ndarray]]:
    """Our module with random weights (host float64 arrays, rounded to `dtype`), and them."""
    kwargs = dict(case.kwargs or {})
    if "dtype" in inspect.signature(case.ours).parameters:
        kwargs["dtype"] = dtype
    module = case.ours(*case.args, **kwargs)
    rng = np.random.default_rng(seed)
    state = {k: rng.standard_normal(v.shape).astype(dtype) for k, v in module.state_dict().items()}
    for k, v in module.state_dict().items():
        if not v.dtype.is_floating_point:
            state[k] = v.numpy()
        elif "running_var" in k:
            state[k] = np.abs(state[k]) + 0.5
    module.load_state_dict(state)
    return module.train(case.train), state


def run_ours(case: Case, inputs: Sequence[Input], dtype: str, seed: int = 0) -> Outcome:
    hosts, weight_rng = _hosts(inputs, dtype, seed), np.random.default_rng(seed + 1)
    try:
        tensors = [ag.tensor(h, requires_grad=i.floating) for h, i in zip(hosts, inputs)]
        if case.module:
            fn, _ = weights_for(case, dtype, seed)
            params = dict(fn.named_parameters())
        else:
            fn, params = (lambda *xs: case.ours(*xs, **(case.kwargs or {}))), {}
        outs = _floating_outputs(fn(*tensors))
        total = None
        for o in outs:
            w = ag.tensor(weight_rng.standard_normal(o.shape).astype(dtype))
            term = (o * w).sum()
            total = term if total is None else total + term
        if total is not None:
            total.backward()
        grads = {f"input{i}": t.grad for i, t in enumerate(tensors) if inputs[i].floating}
        grads.update({k: p.grad for k, p in params.items()})
        return Outcome(
            [o.detach().numpy().astype(np.float64) for o in outs],
            {k: None if g is None else g.numpy().astype(np.float64) for k, g in grads.items()},
            dtypes=[o.dtype.name for o in outs] + [g.dtype.name for g in grads.values() if g is not None],
        )
    except Exception as e:  # noqa: BLE001 - the sweep compares what each framework raises
        return Outcome(error=e)


def run_torch(case: Case, inputs: Sequence[Input], dtype: str, seed: int = 0, compute: str | None = None) -> Outcome:
    """Torch's outcome on the same inputs (rounded to `dtype`), computed in `compute` (default
    `dtype`): the float16 sweep computes in float32 from float16-rounded values."""
    hosts, weight_rng = _hosts(inputs, dtype, seed), np.random.default_rng(seed + 1)
    tdtype = getattr(torch, compute or dtype)
    try:
        tensors = [
            torch.tensor(h.astype(compute or dtype) if i.floating else h, requires_grad=i.floating)
            for h, i in zip(hosts, inputs)
        ]
        if case.module:
            _, state = weights_for(case, dtype, seed)
            fn = case.theirs(*case.args, **(case.kwargs or {})).to(tdtype)
            fn.load_state_dict(
                {k: torch.tensor(v.astype(compute or dtype) if v.dtype.kind == "f" else v) for k, v in state.items()}
            )
            fn.train(case.train)
            params = dict(fn.named_parameters())
        else:
            fn, params = (lambda *xs: case.theirs(*xs, **(case.kwargs or {}))), {}
        outs = [o for o in _torch_floating(fn(*tensors))]
        total = None
        for o in outs:
            w = torch.tensor(weight_rng.standard_normal(tuple(o.shape)).astype(dtype).astype(compute or dtype))
            term = (o * w).sum()
            total = term if total is None else total + term
        if total is not None and total.requires_grad:
            total.backward()
        grads = {f"input{i}": t.grad for i, t in enumerate(tensors) if inputs[i].floating}
        grads.update({k: p.grad for k, p in params.items()})
        return Outcome(
            [o.detach().double().numpy() for o in outs],
            {k: None if g is None else g.double().numpy() for k, g in grads.items()},
        )
    except Exception as e:  # noqa: BLE001
        return Outcome(error=e)


def _torch_floating(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _torch_floating(o)]
    return [] if out is None or not out.is_floating_point() else [out]


def _hosts(inputs: Sequence[Input], dtype: str, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [i.draw(rng).astype(dtype) if i.floating else i.draw(rng) for i in inputs]
