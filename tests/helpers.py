"""Shared by the tests: per-dtype tolerances (the one place they live) and comparisons."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import numpy as np

import autograd_core as ag
import nn.functional as F
from autograd_core.graph.namespace import raw_namespace

# Agreement expected between two computations of the same thing in one dtype on different
# libraries or code paths (summation order and kernel choice differ).
TOLERANCES = {
    "float64": dict(rtol=1e-10, atol=1e-12),
    "float32": dict(rtol=1e-5, atol=1e-6),
}


def host(x: Any) -> np.ndarray:
    """Any tensor or array (numpy, torch...) as a float64-or-native numpy array."""
    if isinstance(x, ag.Tensor):
        return x.detach().numpy()
    if hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def assert_close(actual: Any, expected: Any, dtype: str = "float64", **override: float) -> None:
    tol = {**TOLERANCES[dtype], **override}
    np.testing.assert_allclose(host(actual), host(expected), **tol)


def kernel(backend: Any, primitive: Any, *args: Any, **options: Any) -> Any:
    """`backend`'s kernel of `primitive` (its own, or the portable default) on raw arrays."""
    return primitive(raw_namespace(backend), *args, **options)


def portable(backend: Any, primitive: Any, *args: Any, **options: Any) -> Any:
    """The portable default of `primitive` on `backend`'s raw arrays."""
    return primitive.default(raw_namespace(backend), *args, **options)


def holds(backend: Any, name: str) -> bool:
    """Whether `backend` has the standard's dtype `name`."""
    try:
        backend.dtype(name)
    except TypeError:
        return False
    return True


def dask_workers(backend: Any) -> set[str]:
    """The addresses of the workers a dask cluster backend's scheduler knows now."""
    return set(backend.client.scheduler_info()["workers"])


def kill_every_worker(backend: Any) -> None:
    """SIGKILL every worker of a dask cluster backend at once, then wait for their nannies' new ones."""
    killed = dask_workers(backend)
    for pid in backend.client.run(os.getpid).values():
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while (len(now := dask_workers(backend)) < len(killed) or now & killed) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(now) == len(killed) and not now & killed, "the nannies did not replace the workers"


def classification_step(model: Any, opt: Any) -> Any:
    """A training step of `model` by `opt`: ``step(x, y)`` takes one step on the cross-entropy
    of `model(x)` against the labels `y` and returns the loss."""

    def step(x: ag.Tensor, y: ag.Tensor) -> ag.Tensor:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step
