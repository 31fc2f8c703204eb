"""What an implementation is to the timer: a factory (`Impl`) and the object it sets up
for one point (`Runner`).

A runner is stepped through zero-argument calls so that the timer adds nothing but a clock
read between them: ``select(k)`` picks the k-th batch (untimed), then either ``step()`` or
the three phases ``forward()``, ``backward()``, ``optimizer()``; ``sync()`` waits for
queued work on asynchronous libraries before every clock read. ``check_value()`` is the
float compared across implementations: the loss of the last forward, or for the op
chain the gradient of its weight; a runner whose phases compute results of their own
(transforms) gives one float per phase, in a dict.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench.problems import Problem

CheckValue = float | dict[str, float]  # one for the whole step, or phase -> value


class Runner:
    """One implementation set up for one `Problem`. Subclasses implement what they support."""

    warmup_steps: int = 0  # the fewest untimed steps it needs before a step is what is to be timed (compiling)

    def select(self, k: int) -> None:
        """Make the k-th batch of the pool the current one."""

    def step(self) -> None:
        """One whole step on the current batch (by default the three phases in a row)."""
        self.forward()
        self.backward()
        self.optimizer()

    def forward(self) -> None:
        raise NotImplementedError

    def backward(self) -> None:
        raise NotImplementedError

    def optimizer(self) -> None:
        raise NotImplementedError

    def sync(self) -> None:
        """Wait until every queued computation has finished (synchronous libraries: nothing)."""

    def check_value(self) -> CheckValue:
        raise NotImplementedError


class BatchPool(Runner):
    """A runner whose batches were converted once, at setup, to its library's arrays."""

    def __init__(self, batches: Sequence[tuple[Any, Any]]) -> None:
        self.batches = list(batches)
        self.x, self.y = self.batches[0] if self.batches else (None, None)

    def select(self, k: int) -> None:
        if self.batches:
            self.x, self.y = self.batches[k % len(self.batches)]


class TransformsRunner(BatchPool):
    """transforms: ``per_sample()`` computes the gradient of each example's loss with respect to
    every parameter on the current batch (into `per_sample_grads`), ``hvp()`` the product of
    the Hessian of the batch's mean loss with the problem's direction (into `hvp_result`);
    both map the problem's parameter names to the library's arrays. Each is checked apart."""

    def __init__(self, problem: Problem, batches: Sequence[tuple[Any, Any]]) -> None:
        super().__init__(batches)
        self.probes = problem.probes
        self.per_sample_grads: dict[str, Any] = {}
        self.hvp_result: dict[str, Any] = {}

    def step(self) -> None:
        self.per_sample()
        self.hvp()

    def per_sample(self) -> None:
        raise NotImplementedError

    def hvp(self) -> None:
        raise NotImplementedError

    def to_numpy(self, array: Any) -> np.ndarray:
        return np.asarray(array)

    def results(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """The per-sample gradients and the HVP as numpy arrays, by parameter name."""
        as_numpy = lambda arrays: {name: self.to_numpy(a) for name, a in arrays.items()}
        return as_numpy(self.per_sample_grads), as_numpy(self.hvp_result)

    def check_value(self) -> dict[str, float]:
        per_sample, hvp = self.results()
        return {"per_sample": self.probes.per_sample_value(per_sample), "hvp": self.probes.hvp_value(hvp)}


class Impl:
    """A named implementation: which workloads it runs, whether it can run here, and how to
    set it up. `requires` lists the modules it imports; a missing one makes it unavailable.

    `masks` names the generator its dropout masks come from (the CNN and GPT draw them):
    implementations naming the same one draw the same masks at the same step, and only their
    losses are compared on those workloads; empty, it draws its own, compared with none."""

    name: str = ""
    masks: str = ""
    workloads: frozenset[str] = frozenset({"mlp", "char", "cnn", "gpt", "ops", "phase"})
    requires: tuple[str, ...] = ()
    extra: str = ""  # the project's extra that installs `requires`, named in the reason

    def unavailable(self) -> str | None:
        """None if it can run here, else the reason (a missing library...). Imports lazily."""
        for module in self.requires:
            try:
                importlib.import_module(module)
            except Exception as e:  # noqa: BLE001 - any import failure means "cannot run here"
                hint = f'; install it with: pip install -e ".[{self.extra}]"' if self.extra else ""
                return f"{module} cannot be imported ({type(e).__name__}: {e}){hint}"
        return None

    def setup(self, problem: Problem) -> Runner:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<impl {self.name}>"
