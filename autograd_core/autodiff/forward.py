"""Forward mode: push tangents through a recorded graph, inputs first, with each primitive's
JVP rule (`autograd_core.graph.registry.Primitive.jvp`).

`autograd_core.transforms.func.jvp` records the function once, as reverse mode would, then sweeps the
graph forward from the inputs it was given tangents for. Each node's tangent comes from its
primitive's rule ``jvp(ns, tangents, out, *inputs)``; a node without one (a primitive that
declares no rule, a user's `Function`) gets its tangent from its VJPs, by the double-VJP
identity: ``u -> sum_i <vjp_i(u), t_i>`` is linear in ``u`` with gradient ``sum_i J_i t_i``.

Like the backward, the sweep runs on raw arrays with the backend's namespace, or, when the
tangents must themselves be differentiable (``grad`` of a ``jvp``), on tensors with
`autograd_core` as the namespace, so every rule serves both.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from autograd_core.autodiff.engine import grad as engine_grad, topological_order
from autograd_core.graph import grad_mode
from autograd_core.graph.levels import adopt, encloses, level_of
from autograd_core.graph.namespace import raw_namespace, tensor_namespace
from autograd_core.graph.registry import sum_to
from autograd_core.graph.tensor_base import TensorBase

FALLBACK_JVPS: set[str] = set()
"""The ops whose tangents came from the double-VJP fallback in this process (the tests list them)."""
_RULES_ON = [True]


@contextlib.contextmanager
def double_vjp_only() -> Iterator[None]:
    """Inside, every node's tangent comes from the double-VJP fallback: the oracle each
    native JVP rule is tested against.

    >>> import autograd_core as ag
    >>> from autograd_core import func
    >>> with double_vjp_only():
    ...     func.jvp(ag.exp, (ag.zeros(1),), (ag.ones(1),))[1].tolist()
    [1.0]
    """
    _RULES_ON[0] = False
    try:
        yield
    finally:
        _RULES_ON[0] = True


def push_forward(
    roots: Sequence[TensorBase], tangents: dict[int, TensorBase], differentiable: bool
) -> list[TensorBase | None]:
    """The tangent of each root (None where no tangent reaches it), given the tangents of
    some tensors of its graph by id. `differentiable`: compute on tensors, recording."""
    order = topological_order(roots, stop=tangents)
    if differentiable:
        known: dict[int, Any] = dict(tangents)
        with grad_mode.enable_grad():
            for node in order:
                if id(node) not in known and node._vjps:
                    _advance(node, known, tensor_namespace(), node, node._inputs, True)
        return [known.get(id(r)) for r in roots]
    known = {key: t.array for key, t in tangents.items()}
    backend_of = {key: t.backend for key, t in tangents.items()}
    with grad_mode.no_grad():
        for node in order:
            if id(node) not in known and node._vjps:
                inputs = node._raw or [x.array if isinstance(x, TensorBase) else x for x in node._inputs]
                backend = _widest(node.backend, (backend_of[id(x)] for x in node._parents if id(x) in known))
                out = node.array
                if not backend.defers_operators:  # its operators meet batched arrays only as batched arrays
                    inputs, out = [adopt(backend, x) for x in inputs], adopt(backend, out)
                    for x in node._parents:
                        if id(x) in known:
                            known[id(x)] = adopt(backend, known[id(x)])
                if _advance(node, known, raw_namespace(backend), out, inputs, False):
                    backend_of[id(node)] = level_of(backend, known[id(node)])
    return [None if id(r) not in known else TensorBase._wrap(known[id(r)], backend_of[id(r)]) for r in roots]


def _widest(backend: Any, others: Any) -> Any:
    """The backend whose namespace takes the arrays of all: a batched backend takes its inner
    backend's arrays as values shared by every example."""
    for other in others:
        if other is not backend and encloses(other, backend):
            backend = other
    return backend


def _advance(
    node: TensorBase, known: dict[int, Any], ns: Any, out: Any, inputs: Sequence[Any], on_tensors: bool
) -> bool:
    """Give `node` its tangent in `known` from its inputs' tangents; False when none reaches it."""
    given = [known.get(id(x)) if isinstance(x, TensorBase) else None for x in node._inputs]
    if all(t is None for t in given):
        return False
    if node._op.jvp is not None and _RULES_ON[0]:
        tangent = node._op.jvp(ns, given, out, *inputs)
    else:
        tangent = _double_vjp(node, known, ns, on_tensors)
    if tangent is None:
        return False
    known[id(node)] = tangent
    return True


def _double_vjp(node: TensorBase, known: dict[int, Any], ns: Any, on_tensors: bool) -> Any:
    """`node`'s tangent from its VJPs: the gradient in ``u`` of ``sum_i <vjp_i(u), t_i>``."""
    FALLBACK_JVPS.add(node._op.name)
    ag = tensor_namespace()
    if on_tensors:
        backend = _widest(node.backend, (known[id(p)].backend for p in node._parents if id(p) in known))
    else:
        backend = ns.backend

    def tensor(x: Any) -> Any:
        return x.detach() if isinstance(x, TensorBase) and not on_tensors else x

    with grad_mode.enable_grad():
        out = node if on_tensors else node.detach()
        inputs = [tensor(x) for x in node._inputs]
        # u lives where the tangents do: a batched tangent makes a batched gradient in u
        u = TensorBase._wrap(raw_namespace(backend).zeros_like(node.array), backend).requires_grad_()
        total = None
        for parent, vjp in zip(node._parents, node._vjps):
            t = known.get(id(parent))
            if t is None:
                continue
            if not on_tensors:
                t = TensorBase._wrap(t, backend)
            contribution = vjp(ag, u, out, *inputs)
            if contribution.shape != parent.shape:
                contribution = sum_to(ag, contribution, parent.shape)
            term = ag.sum(contribution * t)
            total = term if total is None else total + term
        if total is None or not total.requires_grad:
            return None
        (tangent,) = engine_grad(total, u, create_graph=on_tensors, allow_unused=True)
    if tangent is None:
        return None
    return tangent if on_tensors else tangent.array


__all__ = ["FALLBACK_JVPS", "double_vjp_only", "push_forward"]
