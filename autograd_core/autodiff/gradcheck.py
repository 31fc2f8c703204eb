"""Checking a backward against central finite differences."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import backends
from autograd_core.autodiff.engine import grad
from autograd_core.graph.grad_mode import enable_grad, no_grad
from autograd_core.graph.tensor_base import TensorBase
from autograd_core.ops.core import concat, reshape
from autograd_core.ops.creation import tensor


class GradcheckError(AssertionError):
    """The analytic and numerical gradients disagree."""


def gradcheck(
    fn: Callable[..., TensorBase],
    inputs: Sequence[TensorBase],
    *,
    eps: float = 1e-6,
    atol: float = 1e-6,
    rtol: float = 1e-4,
    seed: int = 0,
    raise_exception: bool = True,
) -> bool:
    """Compare the gradient that backward gives for ``fn(*inputs)`` with central differences.

    The output is weighted by a random projection `w` first, so the check covers every
    output element, and a backward that mixes up elements cannot pass as it could with
    ``sum()``: the checked scalar is ``sum(w * fn(*inputs))``. Inputs must be float64;
    only those with ``requires_grad=True`` are checked. Returns True, or raises (or
    returns False with ``raise_exception=False``) naming the worst element.

    >>> import autograd_core as ag
    >>> x = ag.tensor([0.5, -1.0], dtype="float64", requires_grad=True)
    >>> ag.gradcheck(ag.tanh, [x])
    True
    """
    for i, x in enumerate(inputs):
        if x.requires_grad and x.dtype != "float64":
            raise TypeError(f"gradcheck needs float64 inputs; input {i} is {x.dtype.name}")
    leaves = [x.detach().requires_grad_(x.requires_grad) for x in inputs]
    out = fn(*leaves)
    rng = _host_generator(seed)
    weights = tensor(rng.standard_normal(out.shape), dtype="float64", device=out.device)
    (out * weights).sum().backward()

    def objective(values: list[TensorBase]) -> float:
        with no_grad():
            return (fn(*values) * weights).sum().item()

    worst = (0.0, "")
    for i, x in enumerate(leaves):
        if not x.requires_grad:
            continue
        host = x.detach().numpy()
        analytic = x.grad.detach().numpy() if x.grad is not None else 0 * host
        for index in _indices(host.shape):
            values = []
            for step in (eps, -eps):
                moved = host.copy()
                moved[index] += step
                values.append(objective([*leaves[:i], tensor(moved, device=x.device), *leaves[i + 1 :]]))
            numeric = (values[0] - values[1]) / (2 * eps)
            error = abs(analytic[index] - numeric) - (atol + rtol * abs(numeric))
            if math.isnan(error):  # a NaN on either side is a mismatch, not a pass
                error = math.inf
            if error > worst[0]:
                worst = (
                    error,
                    f"input {i}, element {index}: backward gave {analytic[index]!r}, finite differences {numeric!r}",
                )
    if worst[1]:
        if raise_exception:
            raise GradcheckError(f"gradient mismatch at {worst[1]}")
        return False
    return True


def _indices(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = [()]
    for n in shape:
        out = [(*index, i) for index in out for i in range(n)]
    return out


def _host_generator(seed: int) -> Any:
    return backends.contract.backend.np.random.default_rng(seed)


def gradgradcheck(fn: Callable[..., TensorBase], inputs: Sequence[TensorBase], **options: Any) -> bool:
    """Check second derivatives: `gradcheck` of the VJP ``(inputs, v) -> v^T J_fn(inputs)``,
    whose backward runs through the gradients recorded with ``create_graph=True``.

    >>> import autograd_core as ag
    >>> x = ag.tensor([0.5, -1.0], dtype="float64", requires_grad=True)
    >>> ag.gradgradcheck(ag.tanh, [x])
    True
    """
    checked = [x for x in inputs if x.requires_grad]
    with no_grad():
        out = fn(*inputs)
    rng = _host_generator(options.get("seed", 0) + 1)
    v = tensor(rng.standard_normal(out.shape), dtype="float64", device=out.device).requires_grad_()

    def vjp(*args: TensorBase) -> TensorBase:
        *xs, cotangent = args
        # The finite-difference pass calls this with plain tensors under no_grad; the VJP
        # still needs a graph to differentiate, so those inputs become fresh leaves.
        xs = [
            x.detach().requires_grad_() if original.requires_grad and not x.requires_grad else x
            for x, original in zip(xs, inputs)
        ]
        wrt = [x for x, original in zip(xs, inputs) if original.requires_grad]
        with enable_grad():
            grads = grad(fn(*xs), wrt, grad_outputs=cotangent, create_graph=True, allow_unused=True)
            return concat([reshape(g if g is not None else 0 * x, (-1,)) for g, x in zip(grads, wrt)])

    if not checked:
        raise ValueError("gradgradcheck needs at least one input with requires_grad=True")
    return gradcheck(vjp, [*inputs, v], **options)
