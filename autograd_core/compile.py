"""`compile(step)`: a whole training step (forward, backward, optimizer update) traced into
one compiled function by the backend's compiler (`jax.jit` on jax).

The step is traced once per input shape with the model's parameters and buffers (batch
norm's running statistics), the optimizer's state and its learning rates and betas (which
schedules change) as inputs, and their new values come back as outputs; the Python-side
objects (Parameters, optimizer state) are updated after every call, so the compiled and
the op-by-op step can be interleaved freely.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

from autograd_core.tensor_base import TensorBase


class CompileFallbackWarning(UserWarning):
    """A step could not be traced and runs op by op instead."""


def _unique_parameters(modules: Iterable[Any], optimizers: Iterable[Any]) -> list[TensorBase]:
    seen: dict[int, TensorBase] = {}
    for m in modules:
        for p in m.parameters():
            seen.setdefault(id(p), p)
    for opt in optimizers:
        for group in opt.param_groups:
            for p in group["params"]:
                seen.setdefault(id(p), p)
    return list(seen.values())


# What a schedule changes from step to step is an input of the trace, so one trace serves
# every value; the other hyper-parameters (momentum, weight decay...) steer Python branches
# in the optimizers, so a change of one traces the step again.
_TRACED_HYPERPARAMETERS = ("lr", "betas")


def _counts_as_ints(state: dict[str, Any]) -> dict[str, Any]:
    """An optimizer state with its 0-d integer arrays (step counts, traced as arrays) back as
    the Python ints an op-by-op step keeps, so state dicts are the same either way."""
    return {k: int(v) if getattr(v, "shape", None) == () and "int" in str(v.dtype) else v for k, v in state.items()}


def compile(  # noqa: A001 - the name users know from torch.compile
    step: Callable[..., TensorBase], *, modules: Iterable[Any] = (), optimizers: Iterable[Any] = ()
) -> Callable[..., TensorBase]:
    """Compile `step(*tensors) -> tensor` over the state of `modules` and `optimizers`.

    The step must be a pure function of its tensor arguments and that state: no `.item()`,
    no Python branches on values, no dropout (its mask is drawn on the host). Where the
    backend has no compiler (numpy, torch, array_api_strict), or the step cannot be traced,
    the step runs op by op, the latter with a `CompileFallbackWarning` saying why.

    >>> import autograd_core as ag, nn, optim, nn.functional as F
    >>> model = nn.Linear(3, 2); opt = optim.SGD(model.parameters(), lr=0.1)
    >>> def train_step(x, y):
    ...     loss = F.cross_entropy(model(x), y)
    ...     opt.zero_grad(); loss.backward(); opt.step()
    ...     return loss
    >>> fast_step = ag.compile(train_step, modules=[model], optimizers=[opt])
    >>> fast_step(ag.ones(4, 3), ag.tensor([0, 1, 0, 1])).shape
    ()
    """
    modules, optimizers = list(modules), list(optimizers)
    params = _unique_parameters(modules, optimizers)
    buffers = list({id(b): b for m in modules for b in m.buffers()}.values())
    tensors = params + buffers  # the state a step reads and writes besides the optimizers'
    backend = params[0].backend if params else None

    def state_of() -> tuple[list, list]:
        opt_states = [[dict(opt.state.get(p, {})) for p in params] for opt in optimizers]
        return [t.data for t in tensors], opt_states

    def install(tensor_data: list, opt_states: list, grads: list | None) -> None:
        for t, data in zip(tensors, tensor_data):
            t.data = data
        if grads is not None:
            for p, grad in zip(params, grads):
                p.grad = None if grad is None else TensorBase._wrap(grad, backend)
        for opt, states in zip(optimizers, opt_states):
            opt.state = {p: s for p, s in zip(params, states) if s}

    groups = [g for opt in optimizers for g in opt.param_groups]

    def hyperparameters() -> tuple[list, tuple]:
        """The groups' traced hyper-parameters, and the others as a key (a change retraces)."""
        traced = [{k: g[k] for k in _TRACED_HYPERPARAMETERS if k in g} for g in groups]
        static = tuple(
            tuple((k, repr(v)) for k, v in g.items() if k not in _TRACED_HYPERPARAMETERS and k != "params")
            for g in groups
        )
        return traced, static

    def set_hyperparameters(traced: list) -> None:
        for group, values in zip(groups, traced):
            group.update(values)

    def traceable() -> Callable:
        """The step as a pure function of arrays; a new function object each time, so that a
        compiler caching traces by function never hands one trace to two hyper-parameter keys."""

        def pure(tensor_data: list, opt_states: list, traced: list, args: list) -> tuple:
            install(tensor_data, opt_states, [None] * len(params))
            set_hyperparameters(traced)
            out = step(*[TensorBase._wrap(a, backend) for a in args])
            new_tensors, new_states = state_of()
            return new_tensors, new_states, [None if p.grad is None else p.grad.data for p in params], out.data

        return pure

    compiled: dict[tuple, Callable] | None = {} if backend is not None and backend.can_compile else None

    def run(*args: TensorBase) -> TensorBase:
        nonlocal compiled
        if compiled is None:
            return step(*args)
        before = state_of()
        traced, static = hyperparameters()
        try:
            function = compiled.get(static) or compiled.setdefault(static, backend.jit(traceable()))
            new_tensors, new_states, grads, out = function(*before, traced, [a.data for a in args])
        except Exception as e:  # the trace met something a compiler cannot follow
            install(*before, None)
            set_hyperparameters(traced)
            compiled = None
            reason = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            warnings.warn(
                f"compile: the step cannot be traced, so it runs op by op from now on ({reason})",
                CompileFallbackWarning,
                stacklevel=2,
            )
            return step(*args)
        set_hyperparameters(traced)  # numbers again, not the trace's placeholders
        install(new_tensors, [[_counts_as_ints(state) for state in states] for states in new_states], grads)
        return TensorBase._wrap(out, backend)

    return run
