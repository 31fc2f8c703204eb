"""Gradient checkpointing, as ``torch.utils.checkpoint.checkpoint``: a segment of the forward
keeps its inputs and the random generator's state instead of its intermediate graph, and is run
again, recording, when the backward reaches it.

The forward records the segment as usual, then finds the tensors it read that require a
gradient and were made before it (its boundary: the inputs, and the parameters or other
tensors the function closes over) and drops everything recorded in between: the outputs are
recorded anew as one node whose parents are the boundary. Its VJPs run the function again
from the same generator state (so dropout draws the same masks), with the boundary standing
as leaves for the while, and send the output's gradient through that fresh graph to the
boundary: one backward of the segment, freed as it goes (kept, and differentiable again, with
``create_graph=True``). Several differentiable outputs are packed into one flat node first,
so that the segment runs again once for all of them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import backends
from autograd_core.autodiff import engine
from autograd_core.graph import grad_mode
from autograd_core.graph.dtypes import result_type
from autograd_core.graph.registry import opaque
from autograd_core.graph.tensor_base import EPOCH, TensorBase, _take_graph, _with_graph_of, record
from autograd_core.ops.creation import zeros, zeros_like

CHECKPOINT, CHECKPOINT_OUTPUT = opaque("checkpoint"), opaque("checkpoint_output")


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool = False,
    preserve_rng_state: bool = True,
    **kwargs: Any,
) -> Any:
    """``function(*args, **kwargs)`` without keeping its intermediate graph: the backward runs
    it again to get its gradients, trading compute for memory. The gradients reach the tensor
    arguments and every tensor the function closes over (a module's parameters), as PyTorch's
    non-reentrant checkpoint does, with ``.backward()``, `grad` and ``create_graph=True``. A
    first-order backward gives the gradients of the same computation without checkpointing bit
    for bit; second-order terms may differ in the last bit (they are summed in another order).
    The function returns a tensor or a tuple (or list) of them, where other values pass through.

    `preserve_rng_state` runs it again from the random generator's state at the forward, so
    dropout draws the same masks. `use_reentrant` is accepted for PyTorch's signature, and
    True runs the same implementation: whatever PyTorch's reentrant variant computes, it
    computes alike (and it also serves `grad`, double backward, and parameters of a segment
    whose inputs need no gradient, where PyTorch's reentrant variant would not).

    >>> import autograd_core as ag
    >>> w = ag.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> x = ag.tensor([[0.5, -1.0]], requires_grad=True)
    >>> y = ag.checkpoint(lambda t: ag.tanh(t @ w) * 2, x)
    >>> (y * y).sum().backward()
    >>> grads = w.grad, x.grad
    >>> w.grad, x.grad = None, None
    >>> z = ag.tanh(x @ w) * 2
    >>> (z * z).sum().backward()
    >>> bool(ag.all(w.grad == grads[0])), bool(ag.all(x.grad == grads[1]))
    (True, True)
    """
    del use_reentrant  # one implementation serves both
    if not grad_mode.is_grad_enabled():
        return function(*args, **kwargs)
    rng_state = backends.get_rng_state() if preserve_rng_state else None
    # A new epoch: whatever the function records carries it or a later one, what it reads that
    # was recorded before carries an earlier one (a leaf: 0). As after an in-place change, the
    # backward then checks the versions of the nodes recorded before (in its Python loop).
    EPOCH[0] += 1
    start = EPOCH[0]
    result = function(*args, **kwargs)
    values = _outputs(result)
    positions = [k for k, v in enumerate(values) if isinstance(v, TensorBase) and v.requires_grad]
    if not positions:
        return result
    outputs = [values[k] for k in positions]
    boundary = _boundary(outputs, start)
    tensor_args = [a for a in (*args, *kwargs.values()) if isinstance(a, TensorBase)]
    segment = _Segment(function, args, kwargs, positions, outputs, boundary, rng_state)
    saved = list({id(t): t for t in (*boundary, *tensor_args)}.values())
    recorded = segment.record(outputs, saved)
    for k, r in zip(positions, recorded):
        values[k] = r
    return values[0] if isinstance(result, TensorBase) else type(result)(values)


def _outputs(result: Any) -> list[Any]:
    if isinstance(result, TensorBase):
        return [result]
    if isinstance(result, tuple | list):
        return list(result)
    raise TypeError(f"checkpoint: the function must return a tensor or a tuple of them, got {type(result).__name__}")


def _boundary(outputs: Sequence[TensorBase], start: int) -> list[TensorBase]:
    """The tensors requiring a gradient that the graph of `outputs` reaches and that were
    recorded before epoch `start`: what the segment's gradients go to."""
    found: list[TensorBase] = []
    seen: set[int] = set()
    stack = list(outputs)
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if t._saved[2] < start:
            found.append(t)
        else:
            stack.extend(t._parents)
    return found


class _Segment:
    """A checkpointed call: what runs it again, and the node its outputs are recorded as. The
    engine asks for each boundary tensor's gradient in turn with the same output gradient; the
    first asking runs the segment again and its backward, the others take their share."""

    def __init__(
        self,
        function: Callable[..., Any],
        args: tuple,
        kwargs: dict[str, Any],
        positions: list[int],
        outputs: Sequence[TensorBase],
        boundary: list[TensorBase],
        rng_state: tuple | None,
    ) -> None:
        self.function, self.args, self.kwargs, self.positions = function, args, kwargs, positions
        self.shapes = [o.shape for o in outputs]
        sizes = [o.numel() for o in outputs]
        self.bounds = [sum(sizes[:k]) for k in range(len(sizes) + 1)]  # each output's slice of a pack
        self.dtypes = [(o.array.dtype, o.dtype) for o in outputs]  # raw, then as the core names it
        self.boundary, self.rng_state = boundary, rng_state
        self.backend = outputs[0].backend
        # (the output gradient, one gradient per boundary tensor, the positions handed out so far)
        self.cache: tuple[Any, list, set[int]] | None = None

    def record(self, outputs: Sequence[TensorBase], saved: list[TensorBase]) -> list[TensorBase]:
        """The outputs recorded anew: the segment's node itself for one output; for several,
        children of one flat node (the segment's), each sending its gradient into its slice."""
        vjps = [functools.partial(self.vjp, j) for j in range(len(self.boundary))]
        if len(outputs) == 1:
            return [record(CHECKPOINT, outputs[0].array, self.backend, self.boundary, vjps, saved=saved)]
        bounds = self.bounds
        with grad_mode.no_grad():  # the values are never read: a broadcast zero serves as many
            one = zeros(1, dtype=result_type(*outputs), device=outputs[0].device)
        data = self.backend.xp.broadcast_to(one.array, (bounds[-1],))
        pack = record(CHECKPOINT, data, self.backend, self.boundary, vjps, saved=saved)
        return [
            record(CHECKPOINT_OUTPUT, o.array, self.backend, [pack], [functools.partial(_into_pack, a, b)], saved=[])
            for o, a, b in zip(outputs, bounds, bounds[1:])
        ]

    def vjp(self, j: int, ns: Any, grad: Any, out: Any, *inputs: Any) -> Any:
        """The gradient of boundary tensor `j` from `grad`, the segment node's."""
        if self.cache is None or self.cache[0] is not grad:
            self.cache = (grad, self.gradients(ns, grad), set())
        gradients, served = self.cache[1], self.cache[2]
        served.add(j)
        if len(served) == len(gradients):
            self.cache = None  # every boundary tensor has its share: keep nothing alive
        return gradients[j]

    def seeds(self, ns: Any, grad: Any) -> list[Any]:
        """One gradient per output, from the segment node's (for several, their flat pack)."""
        if len(self.shapes) == 1:
            return [grad]
        raw = not isinstance(grad, TensorBase)
        seeds = []
        for shape, (raw_dtype, dtype), a, b in zip(self.shapes, self.dtypes, self.bounds, self.bounds[1:]):
            seed = ns.reshape(grad[a:b], shape)
            target = raw_dtype if raw else dtype
            seeds.append(seed if seed.dtype == target else ns.astype(seed, target))
        return seeds

    def gradients(self, ns: Any, grad: Any) -> list[Any]:
        """Run the segment again and send `grad` back through it: one gradient per boundary
        tensor, raw arrays when `grad` is raw (a first-order backward), else recorded tensors."""
        raw = not isinstance(grad, TensorBase)
        seeds = self.seeds(ns, grad)
        with _as_leaves(self.boundary), grad_mode.enable_grad():
            with _replayed_rng(self.rng_state):
                values = _outputs(self.function(*self.args, **self.kwargs))
            outputs = [values[k] for k in self.positions]
            for o, shape in zip(outputs, self.shapes):
                if not isinstance(o, TensorBase) or o.shape != shape:
                    got = o.shape if isinstance(o, TensorBase) else type(o).__name__
                    raise RuntimeError(
                        f"checkpoint: run again for the backward, the function gave {got} where the forward gave "
                        f"shape {shape}; it must compute the same thing again (keep preserve_rng_state=True, and "
                        "change no state it reads between the forward and the backward)"
                    )
            pairs = [(o, TensorBase._wrap(s, self.backend) if raw else s) for o, s in zip(outputs, seeds)]
            pairs = [(o, s) for o, s in pairs if o.requires_grad]
            found: Sequence[TensorBase | None] = [None] * len(self.boundary)
            if pairs:
                found = engine.grad(
                    [o for o, _ in pairs],
                    self.boundary,
                    grad_outputs=[s for _, s in pairs],
                    retain_graph=not raw,
                    create_graph=not raw,
                    allow_unused=True,
                )
        if not raw:
            return [zeros_like(t) if g is None else g for t, g in zip(self.boundary, found)]
        # copies, since two boundary tensors may be handed the same array (see engine's OWNERSHIP)
        xp = self.backend.xp
        return [
            xp.zeros_like(t.array) if g is None else xp.asarray(g.array, copy=True)
            for t, g in zip(self.boundary, found)
        ]


def _into_pack(start: int, stop: int, ns: Any, grad: Any, out: Any, pack: Any) -> Any:
    """An output's gradient as the flat pack's: in its slice, zeros elsewhere."""
    flat = ns.reshape(grad, (-1,))
    flat = flat if flat.dtype == pack.dtype else ns.astype(flat, pack.dtype)
    return ns.concat([ns.zeros_like(pack[:start]), flat, ns.zeros_like(pack[stop:])])


@contextmanager
def _as_leaves(tensors: Sequence[TensorBase]) -> Iterator[None]:
    """The `tensors` as leaves without hooks for the while: a backward from the segment run
    again stops at them (its gradients are returned, the outer backward sends them on, and
    runs their hooks once); a graph recorded meanwhile still reaches their own afterwards."""
    held = [(t, _with_graph_of(t), t._hooks) for t in tensors]
    try:
        for t in tensors:
            _take_graph(t, TensorBase._wrap(t.array, t.backend))
            t._hooks = None
        yield
    finally:
        for t, graph, hooks in held:
            _take_graph(t, graph)
            t._hooks = hooks


@contextmanager
def _replayed_rng(state: tuple | None) -> Iterator[None]:
    """The random numbers (host generator and mask stream) at `state` for the while (nothing
    changed for None), then back where they were."""
    if state is None:
        yield
        return
    current = backends.get_rng_state()
    backends.set_rng_state(state)
    try:
        yield
    finally:
        backends.set_rng_state(current)


__all__ = ["checkpoint"]
