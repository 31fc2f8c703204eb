"""The reverse sweep: topological order, gradient sums, hooks, leaf accumulation, and the
release of each node's saved tensors once it has been used."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import backends
from autograd_core import anomaly, grad_mode
from autograd_core.namespace import RawNamespace, raw_namespace
from autograd_core.tensor import NOTHING_SAVED, RETAIN_GRAD, Tensor


def topological_order(roots: Tensor | Sequence[Tensor]) -> list[Tensor]:
    """Every tensor the roots depend on that requires a gradient, inputs before outputs.

    Iterative depth-first search, so a chain of any length fits.
    """
    order: list[Tensor] = []
    visited: set[int] = set()
    stack: list[tuple[Tensor, bool]] = [(r, False) for r in ([roots] if isinstance(roots, Tensor) else roots)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
        elif id(node) not in visited:
            visited.add(id(node))
            stack.append((node, True))
            stack.extend((p, False) for p in node._parents if id(p) not in visited)
    return order


def _seed(root: Tensor, gradient: object) -> Tensor:
    from autograd_core.creation import ones_like, to_array

    if not root.requires_grad:
        raise RuntimeError(
            "backward() on a tensor that does not require grad: no input had requires_grad=True, "
            "or it was computed under no_grad()"
        )
    if gradient is None:
        if root.numel() != 1:
            raise RuntimeError(
                f"backward() needs a `gradient` argument for a non-scalar output (shape {root.shape}); "
                "reduce it first (e.g. loss.sum()) or pass gradient=<tensor of the same shape>"
            )
        return ones_like(root)
    if not isinstance(gradient, Tensor):
        gradient = Tensor._wrap(to_array(gradient, root.backend, root.dtype), root.backend)
    if gradient.shape != root.shape:
        raise RuntimeError(f"backward(): gradient has shape {gradient.shape}, the output has shape {root.shape}")
    return gradient


def _check_versions(node: Tensor) -> None:
    tensors, saves_output = node._saved
    for t, version in tensors:
        if t._version + (0 if t._base is None else t._base._version) != version:  # t.version, inlined
            _version_error(node, t, version)
    if saves_output and node.version != 0:
        _version_error(node, node, 0)


def _version_error(node: Tensor, t: Tensor, version: int) -> None:
    raise RuntimeError(
        f"a tensor that the backward of {node._op} needs (shape {t.shape}) was modified by an in-place "
        f"operation: it is at version {t.version}, the forward saw version {version}. "
        "Use an out-of-place operation, or .clone() the tensor before changing it."
    )


def run_backward(roots: Sequence[Tensor], seeds: Sequence[Tensor], *, retain_graph: bool, create_graph: bool,
                 capture: Sequence[Tensor] | None = None) -> dict[int, Tensor]:
    """Send `seeds` back from `roots`. Without `capture`, gradients accumulate into the leaves'
    ``.grad``; with it, the gradients of the `capture` tensors are returned by id instead.

    Each node's VJPs run once per input that needs a gradient. Without `create_graph` they
    run on the backend's raw arrays with its own namespace (nothing is recorded, no Tensor is
    made per step); with it, on Tensors with `autograd_core` as the namespace, so the
    gradients are recorded and can be differentiated again. The same rules serve both.
    """
    import autograd_core

    sweep = _TensorSweep(autograd_core) if create_graph else _RawSweep()
    grads: dict[int, Any] = {}
    for root, seed in zip(roots, seeds):
        seed = sweep.unwrap(seed)
        grads[id(root)] = seed if id(root) not in grads else grads[id(root)] + seed
    wanted = None if capture is None else {id(t) for t in capture}
    captured: dict[int, Tensor] = {}
    with grad_mode.enable_grad() if create_graph else grad_mode.no_grad():
        for node in reversed(topological_order(roots)):
            grad = grads.pop(id(node), None)
            if grad is None:
                continue
            if node._hooks:
                grad = _run_hooks(node, grad, sweep, store=wanted is None)
            if wanted is not None and id(node) in wanted:
                captured[id(node)] = sweep.wrap(grad, node.backend)
            if node._vjps is None:
                raise RuntimeError(
                    f"backward through the graph a second time (at {node._op or 'an op'}): its saved tensors "
                    "were released by the first backward; pass retain_graph=True to the first call if you need "
                    "to go through it again"
                )
            if not node._vjps:  # a leaf
                if wanted is None:
                    sweep.accumulate(node, grad)
                continue
            if node._saved is not NOTHING_SAVED:
                _check_versions(node)
            ns, out, inputs = sweep.call_arguments(node)
            for i, (parent, vjp) in enumerate(zip(node._parents, node._vjps)):
                contribution = vjp(ns, grad, out, *inputs)
                if contribution.shape != parent.data.shape:
                    raise RuntimeError(
                        f"the VJP of {node._op} gave a gradient of shape {tuple(contribution.shape)} "
                        f"for an input of shape {parent.shape}"
                    )
                if anomaly._enabled:
                    anomaly.check_finite(sweep.unwrap(contribution), node.backend, node._op, i, node._trace)
                previous = grads.get(id(parent))
                grads[id(parent)] = contribution if previous is None else previous + contribution
            if not retain_graph:  # release the saved tensors
                node._parents, node._vjps, node._inputs, node._saved = (), None, (), NOTHING_SAVED
    return captured


class _RawSweep:
    """First-order backward: gradients are the backends' raw arrays."""

    def __init__(self) -> None:
        self._namespaces: dict[int, RawNamespace] = {}

    @staticmethod
    def unwrap(grad: Any) -> Any:
        return grad.data if isinstance(grad, Tensor) else grad

    @staticmethod
    def wrap(grad: Any, backend: backends.Backend) -> Tensor:
        return Tensor._wrap(grad, backend)

    def call_arguments(self, node: Tensor) -> tuple[Any, Any, tuple]:
        backend = node.backend
        ns = self._namespaces.get(id(backend))
        if ns is None:
            ns = self._namespaces[id(backend)] = raw_namespace(backend)
        return ns, node.data, tuple(x.data if isinstance(x, Tensor) else x for x in node._inputs)

    @staticmethod
    def accumulate(leaf: Tensor, grad: Any) -> None:
        """Add `grad` into ``leaf.grad``, in the leaf's dtype; the first one is copied, so that
        a leaf's gradient never aliases another's (ownership rule)."""
        backend, data = leaf.backend, leaf.data
        if grad.dtype != data.dtype:
            grad = backend.xp.astype(grad, data.dtype)
        if leaf.grad is None:
            leaf.grad = Tensor._wrap(backend.xp.asarray(grad, copy=True) if backend.mutable else grad, backend)
        else:
            leaf.grad = Tensor._wrap(leaf.grad.data + grad, backend)


class _TensorSweep:
    """Higher-order backward: gradients are Tensors and every VJP step is recorded."""

    def __init__(self, namespace: Any) -> None:
        self._namespace = namespace

    @staticmethod
    def unwrap(grad: Any) -> Any:
        return grad

    @staticmethod
    def wrap(grad: Tensor, backend: backends.Backend) -> Tensor:
        return grad

    def call_arguments(self, node: Tensor) -> tuple[Any, Any, tuple]:
        return self._namespace, node, node._inputs

    @staticmethod
    def accumulate(leaf: Tensor, grad: Tensor) -> None:
        from autograd_core.ops import astype, clone

        grad = astype(grad, leaf.dtype)
        leaf.grad = clone(grad) if leaf.grad is None else leaf.grad + grad


def _run_hooks(node: Tensor, grad: Any, sweep: _RawSweep | _TensorSweep, store: bool) -> Any:
    """Call `node`'s hooks on its gradient in order; a hook's return value replaces it."""
    for hook in node._hooks:
        as_tensor = sweep.wrap(grad, node.backend)
        if hook is RETAIN_GRAD:
            if store:
                node.grad = as_tensor.detach() if node.grad is None else node.grad + as_tensor.detach()
        elif (replaced := hook(as_tensor)) is not None:
            if not isinstance(replaced, Tensor) or replaced.shape != node.shape:
                got = replaced.shape if isinstance(replaced, Tensor) else type(replaced).__name__
                raise RuntimeError(f"a hook on a tensor of shape {node.shape} returned {got}; "
                                   "a hook must return None or a tensor of the gradient's shape")
            grad = sweep.unwrap(replaced)
    return grad


def backward(root: Tensor, gradient: Tensor | None = None, retain_graph: bool | None = None,
             create_graph: bool = False) -> None:
    """Accumulate the gradient of `root` (times `gradient`) into every leaf's ``.grad``."""
    run_backward([root], [_seed(root, gradient)], retain_graph=create_graph if retain_graph is None else retain_graph,
                 create_graph=create_graph)


def grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor],
         grad_outputs: Tensor | Sequence[Tensor | None] | None = None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool = False) -> tuple[Tensor | None, ...]:
    """The gradients of `outputs` with respect to `inputs`, returned rather than accumulated.

    With ``create_graph=True`` they are recorded, so they can be differentiated again:

    >>> import autograd_core as ag
    >>> x = ag.tensor(3.0, requires_grad=True)
    >>> (dx,) = ag.grad(x ** 3, x, create_graph=True)
    >>> (d2x,) = ag.grad(dx, x)
    >>> dx.item(), d2x.item()
    (27.0, 18.0)
    """
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs] * len(outputs)
    for i, x in enumerate(inputs):
        if not x.requires_grad:
            raise RuntimeError(f"input {i} of grad() does not require grad")
    seeds = [_seed(out, g) for out, g in zip(outputs, grad_outputs)]
    captured = run_backward(outputs, seeds, retain_graph=create_graph if retain_graph is None else retain_graph,
                            create_graph=create_graph, capture=inputs)
    results = tuple(captured.get(id(x)) for x in inputs)
    unused = [i for i, r in enumerate(results) if r is None]
    if unused and not allow_unused:
        raise RuntimeError(f"input(s) {unused} of grad() were not used to compute the outputs; "
                           "pass allow_unused=True to get None for them")
    return results
