"""What an implementation is to the timer: a factory (`Impl`) and the object it sets up
for one point (`Runner`).

A runner is stepped through zero-argument calls so that the timer adds nothing but a clock
read between them: ``select(k)`` picks the k-th batch (untimed), then either ``step()`` or
the three phases ``forward()``, ``backward()``, ``optimizer()``; ``sync()`` waits for
queued work on asynchronous libraries before every clock read. ``check_value()`` is the
float compared across implementations: the loss of the last forward, or for the op
chain the gradient of its weight.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from bench.problems import Problem


class Runner:
    """One implementation set up for one `Problem`. Subclasses implement what they support."""

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

    def check_value(self) -> float:
        raise NotImplementedError


class BatchPool(Runner):
    """A runner whose batches were converted once, at setup, to its library's arrays."""

    def __init__(self, batches: Sequence[tuple[Any, Any]]) -> None:
        self.batches = list(batches)
        self.x, self.y = self.batches[0] if self.batches else (None, None)

    def select(self, k: int) -> None:
        if self.batches:
            self.x, self.y = self.batches[k % len(self.batches)]


class Impl:
    """A named implementation: which workloads it runs, whether it can run here, and how to
    set it up. `requires` lists the modules it imports; a missing one makes it unavailable."""

    name: str = ""
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
