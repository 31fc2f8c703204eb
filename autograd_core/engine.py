"""The reverse sweep: topological order, gradient sums, leaf accumulation."""

from __future__ import annotations

from autograd_core import grad_mode
from autograd_core.tensor import Tensor


def topological_order(root: Tensor) -> list[Tensor]:
    """Every tensor `root` depends on that requires a gradient, inputs before outputs.

    Iterative depth-first search, so a chain of any length fits.
    """
    order: list[Tensor] = []
    visited: set[int] = set()
    stack: list[tuple[Tensor, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
        elif id(node) not in visited:
            visited.add(id(node))
            stack.append((node, True))
            stack.extend((p, False) for p in node._parents if id(p) not in visited)
    return order


def backward(root: Tensor, gradient: Tensor | None = None, create_graph: bool = False) -> None:
    """Send `gradient` (ones for a one-element root) back through the graph of `root`."""
    from autograd_core import ops

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
        gradient = ops.ones_like(root)
    elif not isinstance(gradient, Tensor):
        gradient = Tensor._wrap(ops.to_array(gradient, root.backend, root.dtype), root.backend)
    if gradient.shape != root.shape:
        raise RuntimeError(f"backward(): gradient has shape {gradient.shape}, the output has shape {root.shape}")

    grads: dict[int, Tensor] = {id(root): gradient}
    with grad_mode.enable_grad() if create_graph else grad_mode.no_grad():
        for node in reversed(topological_order(root)):
            grad = grads.pop(id(node), None)
            if grad is None:
                continue
            if node.is_leaf:
                node.grad = ops.clone(grad) if node.grad is None else node.grad + grad
                continue
            for parent, vjp in zip(node._parents, node._vjps):
                contribution = vjp(grad, node)
                if contribution.shape != parent.shape:
                    raise RuntimeError(
                        f"the VJP of {node._op} gave a gradient of shape {contribution.shape} "
                        f"for an input of shape {parent.shape}"
                    )
                previous = grads.get(id(parent))
                grads[id(parent)] = contribution if previous is None else previous + contribution
