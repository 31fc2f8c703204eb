"""The three ops at the edge of a `vmap` batch, each the adjoint of another: entering the batch
(a tensor whose axis `dim` holds the examples becomes one example's worth, batched), leaving it
(the examples stacked again along `dim`), and summing a gradient over the batch (what a tensor
shared by every example receives). The batched backend (`autograd_core.transforms.vmap.backend.BatchedBackend`) does
the array work; these record it, so gradients and tangents cross the edge."""

from __future__ import annotations

from typing import Any

from autograd_core.graph.namespace import raw_namespace
from autograd_core.graph.registry import Primitive
from autograd_core.graph.tensor_base import TensorBase


def enter(x: TensorBase, dim: int, batched: Any) -> TensorBase:
    """`x` on the backend `batched`, its axis `dim` the batch."""
    data = enter_batch(raw_namespace(batched), x.array, dim, batched)
    return enter_batch.record(data, batched, (x, dim, batched))


def leave(y: TensorBase, dim: int, batched: Any) -> TensorBase:
    """The batched `y` back on the backend the batch wraps, its examples along axis `dim`."""
    data = exit_batch(raw_namespace(batched), y.array, dim, batched)
    return exit_batch.record(data, batched.inner, (y, dim, batched))


def shared(g: TensorBase, batched: Any) -> TensorBase:
    """The gradient `g` of a batched op summed over the batch, for a tensor every example shared."""
    data = sum_batch(raw_namespace(batched), g.array, batched)
    return sum_batch.record(data, batched.inner, (g, batched))


enter_batch = Primitive(
    "enter_batch",
    lambda ns, x, dim, batched: batched.enter(x, dim),
    vjps=(lambda ns, g, out, x, dim, batched: exit_batch(ns, g, dim, batched), None, None),
    differentiable=lambda ns, x, dim, batched: enter(x, dim, batched),
    saves="none",
    jvp="linear",
)
exit_batch = Primitive(
    "exit_batch",
    lambda ns, y, dim, batched: batched.exit(y, dim),
    vjps=(lambda ns, g, out, y, dim, batched: enter_batch(ns, g, dim, batched), None, None),
    differentiable=lambda ns, y, dim, batched: leave(y, dim, batched),
    saves="none",
    jvp="linear",
)
sum_batch = Primitive(
    "sum_batch",
    lambda ns, g, batched: batched.sum_batch(g),
    vjps=(lambda ns, g, out, x, batched: g, None),  # a value shared by every example
    differentiable=lambda ns, g, batched: shared(g, batched),
    saves="none",
    jvp="linear",
)

__all__ = ["enter", "enter_batch", "exit_batch", "leave", "shared", "sum_batch"]
