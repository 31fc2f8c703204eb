"""`compile(step)`: a whole training step (forward, backward, optimizer update) traced into
one compiled function by the backend's compiler (`jax.jit` on jax, `make_fx` and inductor on torch).

The step is traced once per input shape with the model's parameters and buffers (batch
norm's running statistics), the optimizer's state and its learning rates and betas (which
schedules change) as inputs, and their new values come back as outputs; the Python-side
objects (Parameters, optimizer state) are updated after every call, so the compiled and
the op-by-op step can be interleaved freely.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from autograd_core.graph.pytree import tree_map
from autograd_core.graph.tensor_base import TensorBase
from backends.contract import mask_stream


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


def _is_count(value: Any) -> bool:
    """Whether an optimizer state's `value` is a count (a step count, traced as a 0-d integer array)."""
    return getattr(value, "shape", None) == () and _is_integer(value.dtype)


@functools.cache
def _is_integer(dtype: Any) -> bool:  # cached: naming a dtype takes microseconds, and a step asks per state entry
    return "int" in str(dtype)


def _counts_of(opt_states: list) -> list:
    """The counts of `opt_states` (a list per optimizer of one state dict per parameter), in order."""
    return [v for states in opt_states for s in states for v in s.values() if _is_count(v)]


def _with_counts(opt_states: list, counts: Iterator[int]) -> list:
    """`opt_states` with each count replaced by the next of `counts` (Python ints, as an
    op-by-op step keeps them, so state dicts are the same either way)."""
    return [[{k: next(counts) if _is_count(v) else v for k, v in s.items()} for s in states] for states in opt_states]


class StepState:
    """The state a training step reads and writes besides its arguments: the parameters and
    buffers of `modules`, the optimizers' per-parameter state and their traced
    hyper-parameters; read as arrays and installed back. `compile` and ONNX export
    (`autograd_core.export.onnx.export_step`) trace `pure` over it.
    """

    def __init__(self, modules: Iterable[Any], optimizers: Iterable[Any]) -> None:
        modules, self.optimizers = list(modules), list(optimizers)
        self.params = _unique_parameters(modules, self.optimizers)
        self.buffers = list({id(b): b for m in modules for b in m.buffers()}.values())
        self.tensors = self.params + self.buffers  # the state a step reads and writes besides the optimizers'
        self.groups = [g for opt in self.optimizers for g in opt.param_groups]

    def state_of(self) -> tuple[list, list]:
        opt_states = [[dict(opt.state.get(p, {})) for p in self.params] for opt in self.optimizers]
        return [t.array for t in self.tensors], opt_states

    def install(self, tensor_data: list, opt_states: list, grads: list | None, backend: Any = None) -> None:
        """Set the arrays (and, where `backend` is given, the tensors' backend) back."""
        for t, data in zip(self.tensors, tensor_data):
            t.array = data
            if backend is not None:
                t.backend = backend
        if grads is not None:
            for p, grad in zip(self.params, grads):
                p.grad = None if grad is None else TensorBase._wrap(grad, p.backend)
        for opt, states in zip(self.optimizers, opt_states):
            opt.state = {p: s for p, s in zip(self.params, states) if s}

    def creates_optimizer_state(self) -> bool:
        """Whether a first step may create the optimizers' state (none has any yet): its trace
        would serve that one call, as the next has the state among its inputs."""
        return bool(self.optimizers) and not any(opt.state for opt in self.optimizers)

    def hyperparameters(self) -> tuple[list, tuple]:
        """The groups' traced hyper-parameters, and the others as a key (a change retraces)."""
        traced = [{k: g[k] for k in _TRACED_HYPERPARAMETERS if k in g} for g in self.groups]
        static = tuple(
            tuple((k, repr(v)) for k, v in g.items() if k not in _TRACED_HYPERPARAMETERS and k != "params")
            for g in self.groups
        )
        return traced, static

    def set_hyperparameters(self, traced: list) -> None:
        for group, values in zip(self.groups, traced):
            group.update(values)

    def traceable(self, step: Callable[..., Any], backend: Any) -> Callable:
        """`step` as a pure function of arrays of `backend`; a new function object each time, so
        that a compiler caching traces by function never hands one trace to two hyper-parameter
        keys. It returns the new tensors and optimizer states, the gradients, the step's result
        (a tree of tensors) as arrays, and the integers the host reads back: given the mask
        stream as an int64 array (key, counter), dropout draws its masks from it inside the
        trace (`backends.contract.mask_stream`), and the last output is one int64 vector, the counter
        after the step followed by the optimizers' counts (`_counts_of`), read in one transfer;
        given None, dropout in the trace is refused and the last output is None."""

        def pure(tensor_data: list, opt_states: list, traced: list, args: list, stream: Any = None) -> tuple:
            self.install(tensor_data, opt_states, [None] * len(self.params), backend)
            self.set_hyperparameters(traced)
            masks = contextlib.nullcontext(None) if stream is None else mask_stream.traced(stream[0], stream[1])
            with masks as reached:
                out = step(*[TensorBase._wrap(a, backend) for a in args])
            new_tensors, new_states = self.state_of()
            grads = [None if p.grad is None else p.grad.array for p in self.params]
            ints = None
            if reached is not None:
                xp = backend.xp
                integers = [reached.counter, *_counts_of(new_states)]
                ints = xp.stack([xp.astype(xp.asarray(n), xp.int64) for n in integers])
            return new_tensors, new_states, grads, tree_map(lambda t: t.array, out), ints

        return pure


def compile(  # noqa: A001 - the name users know from torch.compile
    step: Callable[..., TensorBase], *, modules: Iterable[Any] = (), optimizers: Iterable[Any] = ()
) -> Callable[..., TensorBase]:
    """Compile `step(*tensors) -> tensor` over the state of `modules` and `optimizers`.

    The step must be a pure function of its tensor arguments and that state: no `.item()`,
    no Python branches on values. Dropout draws its masks inside the trace from the mask
    stream (`manual_seed` seeds it), which each call advances: the masks change from step to
    step and are the ones an op-by-op step would draw. Where the backend has no compiler
    (numpy, array_api_strict), or the step cannot be traced, the step runs op by op, the
    latter with a `CompileFallbackWarning` saying why. A first step before the optimizers
    have any state runs op by op too (its trace would serve once). jax compiles with
    `jax.jit`; torch traces the step with ``make_fx`` and compiles it with inductor where a
    C++ compiler is found; the time each trace took is logged once (logger
    ``autograd_core.transforms.compile``).

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
    state = StepState(modules, optimizers)
    backend = state.params[0].backend if state.params else None

    compiled: dict[tuple, Callable] | None = {} if backend is not None and backend.can_compile else None

    calls = 0

    def run(*args: TensorBase) -> TensorBase:
        nonlocal compiled, calls
        calls += 1
        if compiled is None or (calls == 1 and state.creates_optimizer_state()):
            return step(*args)
        before = state.state_of()
        traced, static = state.hyperparameters()
        key, counter = mask_stream.get_state()
        stream = backend.asarray(np.array([key, counter], dtype=np.int64))
        try:
            function = compiled.get(static) or compiled.setdefault(
                static, backend.jit(state.traceable(step, backend), donate=(0, 1))
            )
            new_tensors, new_states, grads, out, ints = function(*before, traced, [a.array for a in args], stream)
        except Exception as e:  # the trace met something a compiler cannot follow
            state.install(*before, None)
            state.set_hyperparameters(traced)
            mask_stream.set_state((key, counter))
            compiled = None
            reason = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            warnings.warn(
                f"compile: the step cannot be traced, so it runs op by op from now on ({reason})",
                CompileFallbackWarning,
                stacklevel=2,
            )
            return step(*args)
        state.set_hyperparameters(traced)  # numbers again, not the trace's placeholders
        ints = iter(backend.to_numpy(ints).tolist())
        mask_stream.set_state((key, next(ints)))
        state.install(new_tensors, _with_counts(new_states, ints), grads)
        return tree_map(lambda a: TensorBase._wrap(a, backend), out)

    return functools.update_wrapper(run, step)  # run.__wrapped__: the step, op by op
