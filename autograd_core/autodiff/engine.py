"""The reverse sweep: topological order, gradient sums, hooks, leaf accumulation, and the
release of each node's saved tensors once it has been used."""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from typing import Any

import backends
from autograd_core.graph import anomaly, grad_mode
from autograd_core.graph.levels import adopt, encloses, level_of
from autograd_core.graph.namespace import raw_namespace, tensor_namespace
from autograd_core.graph.tensor_base import (
    COMPLEX,
    EPOCH,
    NOTHING_SAVED,
    REBOUND,
    RETAIN_GRAD,
    GraphFields,
    TensorBase,
    _sweep,
    changes_since,
    to_array,
)
from autograd_core.ops.core import _cast, clone, sum_to
from autograd_core.ops.creation import zeros_like


def topological_order(roots: TensorBase | Sequence[TensorBase], stop: Container[int] = frozenset()) -> list[TensorBase]:
    """Every tensor the roots depend on that requires a gradient, inputs before outputs, not
    looking past the tensors whose ids are in `stop` (forward mode's inputs). A parent changed
    in place since its child was recorded stands for the graph it had then (`_parents_then`).

    Iterative depth-first search, so a chain of any length fits.
    """
    roots = [roots] if isinstance(roots, TensorBase) else list(roots)
    if _sweep is not None and not stop:
        return surveyed_order(roots)[0]
    return _ordered_then(roots, stop)


def surveyed_order(roots: list[TensorBase]) -> tuple[list[TensorBase], bool, int]:
    """`topological_order` of `roots` and its `survey`: the order follows the graphs parents
    had when their children were recorded where a node is marked `REBOUND`."""
    backend = roots[0].backend
    order = _sweep.topological_order(roots) if _sweep is not None else _ordered_then(roots)
    elsewhere, marks = survey(order, backend)
    if _sweep is not None and marks & REBOUND:
        order = _ordered_then(roots)
        elsewhere, more = survey(order, backend)
        marks |= more
    return order, elsewhere, marks


def _ordered_then(roots: list[TensorBase], stop: Container[int] = frozenset()) -> list[TensorBase]:
    """The depth-first search of `topological_order`, through `_parents_then`."""
    order: list[TensorBase] = []
    visited: set[int] = set()
    for root in roots:
        if id(root) in visited:
            continue
        visited.add(id(root))
        stack = [(root, iter(() if id(root) in stop else _parents_then(root)))]
        while stack:
            node, parents = stack[-1]
            for parent in parents:
                if id(parent) not in visited:
                    visited.add(id(parent))
                    stack.append((parent, iter(() if id(parent) in stop else _parents_then(parent))))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def survey(order: list[TensorBase], backend: backends.Backend) -> tuple[bool, int]:
    """What a sweep over `order` must take into account, read off its nodes once: whether one
    lives on another backend than `backend` (a vmap batch's edge), and the union of their
    marks (`tensor_base.REBOUND`, `tensor_base.COMPLEX`)."""
    if _sweep is not None:
        return _sweep.survey(order, backend)
    elsewhere, marks = False, 0
    for node in order:
        elsewhere = elsewhere or node.backend is not backend
        marks |= node._marks or 0
    return elsewhere, marks


def _parents_then(node: TensorBase) -> list[TensorBase]:
    """`node`'s parents with the graphs they had when `node` was recorded: a parent changed in
    place afterwards hands over the tensor that kept its former graph (as PyTorch's edges
    point to the old grad_fn)."""
    epoch = node._saved[2]
    return [_as_of(p, epoch) if p._former else p for p in node._parents]


def _as_of(t: TensorBase, epoch: int) -> TensorBase:
    for changed, former in t._former:
        if changed > epoch:
            return former
    return t


def _seed(root: TensorBase, gradient: object) -> TensorBase:
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
        return TensorBase._wrap(raw_namespace(root.backend).ones_like(root.array), root.backend)
    if not isinstance(gradient, TensorBase):
        gradient = TensorBase._wrap(to_array(gradient, root.backend, root.dtype), root.backend)
    if gradient.shape != root.shape:
        raise RuntimeError(f"backward(): gradient has shape {gradient.shape}, the output has shape {root.shape}")
    return gradient


def _check_versions(node: TensorBase) -> None:
    """Refuse to run `node`'s VJPs if a tensor they read changed in place after the forward."""
    saved, saves_output, epoch = node._saved
    for t in node._inputs if saved is None else saved:
        if isinstance(t, TensorBase) and (changed := changes_since(t, epoch)):
            _version_error(node, t, t.version - changed)
    if saves_output and (changed := changes_since(node, epoch)):
        _version_error(node, node, node.version - changed)


def _version_error(node: TensorBase, t: TensorBase, version: int) -> None:
    raise RuntimeError(
        f"a tensor that the backward of {node._op} needs (shape {t.shape}) was modified by an in-place "
        f"operation: it is at version {t.version}, the forward saw version {version}. "
        "Use an out-of-place operation, or .clone() the tensor before changing it."
    )


def run_backward(
    roots: Sequence[TensorBase],
    seeds: Sequence[TensorBase],
    *,
    retain_graph: bool,
    create_graph: bool,
    capture: Sequence[TensorBase] | None = None,
    inputs: Sequence[TensorBase] | None = None,
) -> dict[int, TensorBase]:
    """Send `seeds` back from `roots`. Without `capture`, gradients accumulate into the
    ``.grad`` of the leaves, or of the `inputs` alone (leaves or not) where given; with it, the
    gradients of the `capture` tensors are returned by id instead.

    Each node's VJPs run once per input that needs a gradient. Without `create_graph` they
    run on the backend's raw arrays with its own namespace (nothing is recorded, no Tensor is
    made per step); with it, on Tensors with `autograd_core` as the namespace, so the
    gradients are recorded and can be differentiated again. The same rules serve both.
    """
    sweep = Sweep(roots, seeds, retain_graph, create_graph, capture, inputs)
    recording, grad_mode.state.grad = grad_mode.state.grad, create_graph  # enable_grad / no_grad, unwrapped
    try:
        with sweep.backend.silent_errors():
            if sweep.compiled:
                released = None if retain_graph else RELEASED
                _sweep.sweep(
                    sweep.order,
                    sweep.grads,
                    sweep.handed,
                    raw_namespace(sweep.backend),
                    sweep.backend,
                    EPOCH,
                    released,
                    sweep.visit,
                    _reduce_to_input,
                )
            else:
                for node in reversed(sweep.order):
                    if id(node) in sweep.grads:  # popped: a leaf's gradient is then held by the sweep alone
                        sweep.visit(node, sweep.grads.pop(id(node)))
    finally:
        grad_mode.state.grad = recording
    return sweep.captured


class Sweep:
    """One reverse sweep: the gradients sent so far, and what varies from sweep to sweep,
    decided once from the graph being swept (`survey`): the namespace (raw arrays, or tensors
    for ``create_graph``), the batch level of a vmap, capture for `grad`, the complex checks,
    the graphs of tensors changed in place, anomaly mode. `compiled` says whether the C loop
    may run it (it calls `visit` for every node but the plain ones)."""

    def __init__(
        self,
        roots: Sequence[TensorBase],
        seeds: Sequence[TensorBase],
        retain_graph: bool,
        create_graph: bool,
        capture: Sequence[TensorBase] | None,
        inputs: Sequence[TensorBase] | None = None,
    ) -> None:
        self.raw, self.retain_graph = not create_graph, retain_graph
        self.grads: dict[int, Any] = {}  # id(node) -> the gradient sent to it so far
        self.handed: set[int] = set()  # the ids whose gradient was handed in, not made by the sweep (OWNERSHIP)
        for root, seed in zip(roots, seeds):
            _add_gradient(self.grads, self.handed, id(root), seed.array if self.raw else seed)
        self.wanted = None if capture is None else {id(t) for t in capture}
        self.only = None if inputs is None else {id(t) for t in inputs}  # backward(inputs=...)'s
        self.captured: dict[int, TensorBase] = {}
        self.backend = backend = roots[0].backend
        # a batched seed of an unbatched graph (a VJP inside vmap) makes the whole sweep batched
        self.seeded = next(
            (s.backend for s in seeds if s.backend is not backend and encloses(s.backend, backend)), None
        )
        self.order, elsewhere, marks = surveyed_order(list(roots))
        self.batched = self.seeded is not None or elsewhere or backend.batch is not None
        self.rebound, self.check_complex = bool(marks & REBOUND), bool(marks & COMPLEX)
        self.check_finite = anomaly.checks_gradients()
        plain = not (self.check_finite or self.check_complex or self.rebound or self.batched)
        self.compiled = _sweep is not None and self.raw and self.wanted is None and self.only is None and plain

    def visit(self, node: TensorBase, grad: Any) -> None:
        """Send `grad`, the whole gradient of `node`, on to its parents (or into ``.grad``)."""
        sweep_owns = id(node) not in self.handed
        if node._hooks:
            grad = _run_hooks(node, grad, self.raw, store=self.wanted is None)
            sweep_owns = False  # a hook saw it, and may keep it
        if self.wanted is not None and id(node) in self.wanted:
            self.captured[id(node)] = self._tensor(grad, node)
        if not node._vjps:
            self._end(node, grad, sweep_owns)
            return
        if self.only is not None and id(node) in self.only and RETAIN_GRAD not in (node._hooks or ()):
            _keep(node, self._tensor(grad, node))
        if node._saved[2] != EPOCH[0]:
            _check_versions(node)
        ns, grad, out, inputs = self._arguments(node, grad)
        parents = _parents_then(node) if self.rebound else node._parents
        for position, (parent, vjp) in enumerate(zip(parents, node._vjps)):
            self._send(ns, vjp(ns, grad, out, *inputs), (grad, out, *inputs), parent, node, position)
        if not self.retain_graph:
            _release(node)

    def _end(self, node: TensorBase, grad: Any, sweep_owns: bool) -> None:
        """A node without VJPs: a leaf takes its gradient; a released graph refuses."""
        if node._vjps is None:
            raise RuntimeError(
                f"backward through the graph a second time (at {node._op or 'an op'}): its saved "
                "tensors were released by the first backward; pass retain_graph=True to the first "
                "call if you need to go through it again"
            )
        if self.wanted is None and (self.only is None or id(node) in self.only):
            _accumulate(node, grad, self.raw, sweep_owns)

    def _arguments(self, node: TensorBase, grad: Any) -> tuple[Any, Any, Any, Sequence[Any]]:
        """The namespace a node's VJPs compute in, and the gradient, output and inputs they take."""
        if self.raw:
            wide = _wider(self.seeded, node.backend)
            ns, out = raw_namespace(wide), node.array
            inputs = node._raw or [x.array if isinstance(x, TensorBase) else x for x in node._inputs]
            if self.batched and not wide.defers_operators:  # its operators meet batched arrays only as batched
                grad, out, inputs = adopt(wide, grad), adopt(wide, out), [adopt(wide, x) for x in inputs]
        else:
            ns, out, inputs = tensor_namespace(), node, node._inputs
        if self.check_complex and node.dtype.is_complex:
            out, inputs = _complex_arguments(ns, node, out, inputs)
        return ns, grad, out, inputs

    def _send(self, ns: Any, contribution: Any, arguments: tuple, parent: TensorBase, node: TensorBase, i: int) -> None:
        """Add a VJP's `contribution` to `parent`'s gradient: summed over the batch where it
        leaves a vmap batch, summed back to the shape of a broadcast parent."""
        made = all(contribution is not x for x in arguments)
        if self.batched and parent.backend is not node.backend and encloses(node.backend, parent.backend):
            contribution, made = node.backend.batch.shared_gradient(ns, contribution), True
        if contribution.shape != parent.array.shape:
            contribution, made = _reduce_to_input(ns, contribution, parent, node), True
        if self.check_finite:
            data = contribution if self.raw else contribution.array
            anomaly.check_finite(data, node.backend, node._op, i, node._trace)
        _add_gradient(self.grads, self.handed, id(parent), contribution, made)

    def _tensor(self, grad: Any, node: TensorBase) -> TensorBase:
        """A captured gradient as a tensor, at the batch level its array has."""
        return TensorBase._wrap(grad, level_of(_wider(self.seeded, node.backend), grad)) if self.raw else grad


def _wider(seeded: Any, backend: Any) -> Any:
    """The backend a node's VJPs compute in: the seeds' when they batch the node's."""
    return seeded if seeded is not None and encloses(seeded, backend) else backend


def _add_gradient(grads: dict[int, Any], handed: set[int], key: int, contribution: Any, made: bool = False) -> None:
    """Add `contribution` to the gradient of the node `key`. The sweep owns a sum and a
    contribution a VJP `made` (see OWNERSHIP); any other first contribution is `handed` in."""
    previous = grads.get(key)
    if previous is None:
        grads[key] = contribution
        if not made:
            handed.add(key)
    else:
        grads[key] = previous + contribution
        handed.discard(key)


RELEASED = ((), None, (), None, NOTHING_SAVED)  # a node's _parents, _vjps, _inputs, _raw, _saved once used


def _release(node: TensorBase) -> None:
    """Drop what `node`'s VJPs needed, so its saved tensors go back during the backward."""
    node._parents, node._vjps, node._inputs, node._raw, node._saved = RELEASED


def _complex_arguments(ns: Any, node: TensorBase, out: Any, inputs: Any) -> tuple[Any, Any]:
    """The output and inputs a complex node's VJP is called with, by its op's `complex` fact
    (`registry.COMPLEX`)."""
    fact = node._op.complex
    if fact == "holomorphic":
        conj = [x.conjugate() if isinstance(x, complex | float | int) else ns.conj(x) for x in inputs]
        return ns.conj(out), conj
    if fact != "safe":
        raise NotImplementedError(
            f"backward of {node._op} through complex values is not supported; take abs(), real() or imag() of "
            "complex results first"
        )
    return out, inputs


def _reduce_to_input(ns: Any, grad: Any, parent: TensorBase, node: TensorBase) -> Any:
    """A gradient of a broadcast input, summed back to the input's shape (as PyTorch's engine
    does, so elementwise VJPs need not); any other mismatch is a wrong VJP."""
    shape, got = tuple(parent.array.shape), tuple(grad.shape)
    lead = len(got) - len(shape)
    if lead < 0 or any(n != 1 and n != m for n, m in zip(shape, got[lead:])):
        raise RuntimeError(f"the VJP of {node._op} gave a gradient of shape {got} for an input of shape {shape}")
    return sum_to(ns, grad, shape)


# OWNERSHIP. A leaf's ``.grad`` never shares memory with another array: users and optimizers
# change it in place (``clip_grad_norm_``, ``+=``). So its first gradient is copied, unless the
# sweep provably owns that array and no hook has seen it, and the backend says it is no view
# (``owns_memory``). The sweep owns what it made: the sum of two contributions, the cast to the
# leaf's dtype, a sum back to a broadcast input's shape, and the result of a VJP that is none
# of the VJP's arguments (its incoming gradient, the output, an input). A VJP computes its
# result fresh or hands on one of its arguments (add's returns `g`, to both operands); a view
# of one is caught by ``owns_memory``. A custom op's backward is the user's code, which may
# keep what it returns, so `autograd_core.autodiff.function` copies its gradients. Everything else was
# handed in: a seed is the caller's; a hook may keep the gradient it was shown.


def _accumulate(leaf: TensorBase, grad: Any, raw: bool, sweep_owns: bool) -> None:
    """Add `grad` into ``leaf.grad``, cast to the leaf's dtype; `sweep_owns`: whether the
    sweep made `grad` and nothing else has seen it (see OWNERSHIP)."""
    if not raw:
        grad = _cast(grad, leaf.dtype)
        leaf.grad = clone(grad) if leaf.grad is None else leaf.grad + grad
        return
    backend, data = leaf.backend, leaf.array
    if grad.dtype != data.dtype:
        grad, sweep_owns = _cast_gradient(backend, grad, data.dtype), True
    if leaf.grad is None:
        keep = sweep_owns and backend.owns_memory(grad)
        leaf.grad = TensorBase._wrap(grad if keep else backend.xp.asarray(grad, copy=True), backend)
    else:  # into the tensor already there, as PyTorch does: one held as `g = x.grad` sees the sum
        held = leaf.grad
        held.array = held.array + grad
        if held._views:
            held._refresh_views()


def _cast_gradient(backend: backends.Backend, grad: Any, dtype: Any) -> Any:
    if "complex" in backend.dtype_name(grad.dtype) and "complex" not in backend.dtype_name(dtype):
        raise TypeError(
            "backward through complex values is not supported: a complex gradient reached a real "
            "tensor; take .real/.imag or abs() of complex results before the loss"
        )
    return backend.xp.astype(grad, dtype)


def _run_hooks(node: TensorBase, grad: Any, raw: bool, store: bool) -> Any:
    """Call `node`'s hooks on its gradient in order; a hook's return value replaces it. The
    retained gradient is stored last, after every hook, as PyTorch does."""
    for hook in node._hooks:
        if hook is RETAIN_GRAD:
            continue
        if (replaced := hook(TensorBase._wrap(grad, node.backend) if raw else grad)) is not None:
            if not isinstance(replaced, TensorBase) or replaced.shape != node.shape:
                got = replaced.shape if isinstance(replaced, TensorBase) else type(replaced).__name__
                raise RuntimeError(
                    f"a hook on a tensor of shape {node.shape} returned {got}; "
                    "a hook must return None or a tensor of the gradient's shape"
                )
            grad = replaced.array if raw else replaced
            if anomaly.checks_gradients():
                anomaly.check_finite(replaced.array, node.backend, f"a hook on {node._op or 'a leaf'}", 0, node._trace)
    if store and RETAIN_GRAD in node._hooks:
        _keep(node, TensorBase._wrap(grad, node.backend) if raw else grad)
    return grad


def backward(
    tensors: TensorBase | Sequence[TensorBase],
    grad_tensors: TensorBase | Sequence[TensorBase | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: TensorBase | Sequence[TensorBase] | None = None,
) -> None:
    """Accumulate the gradients of `tensors` (times `grad_tensors`) into the ``.grad`` of every
    leaf they depend on; with `inputs`, into theirs alone (leaves or not), as PyTorch's
    ``torch.autograd.backward`` and ``Tensor.backward`` do.

    >>> import autograd_core as ag
    >>> a, b = ag.tensor(2.0, requires_grad=True), ag.tensor(3.0, requires_grad=True)
    >>> (a * b).backward(inputs=[a])
    >>> a.grad.item(), b.grad
    (3.0, None)
    """
    tensors = _listed(tensors)
    run_backward(
        tensors,
        _seeds(tensors, grad_tensors),
        retain_graph=create_graph if retain_graph is None else retain_graph,
        create_graph=create_graph,
        inputs=None if inputs is None else _differentiated(inputs, "backward()"),
    )


def grad(
    outputs: TensorBase | Sequence[TensorBase],
    inputs: TensorBase | Sequence[TensorBase],
    grad_outputs: TensorBase | Sequence[TensorBase | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
) -> tuple[TensorBase | None, ...]:
    """The gradients of `outputs` with respect to `inputs`, returned rather than accumulated.
    An input the outputs do not depend on is an error, or gets None with `allow_unused`, or
    zeros with `materialize_grads` (which implies `allow_unused`), as in PyTorch.

    With ``create_graph=True`` they are recorded, so they can be differentiated again:

    >>> import autograd_core as ag
    >>> x = ag.tensor(3.0, requires_grad=True)
    >>> (dx,) = ag.grad(x ** 3, x, create_graph=True)
    >>> (d2x,) = ag.grad(dx, x)
    >>> dx.item(), d2x.item()
    (27.0, 18.0)
    >>> ag.grad(x * 2, [x, ag.ones(2, requires_grad=True)], materialize_grads=True)[1].tolist()
    [0.0, 0.0]
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False."
        )
    outputs, inputs = _listed(outputs), _differentiated(inputs, "grad()")
    captured = run_backward(
        outputs,
        _seeds(outputs, grad_outputs),
        retain_graph=create_graph if retain_graph is None else retain_graph,
        create_graph=create_graph,
        capture=inputs,
    )
    results = tuple(captured.get(id(x)) for x in inputs)
    unused = [i for i, r in enumerate(results) if r is None]
    if unused and not (allow_unused or materialize_grads):
        raise RuntimeError(
            f"input(s) {unused} of grad() were not used to compute the outputs; "
            "pass allow_unused=True to get None for them, or materialize_grads=True for zeros"
        )
    if materialize_grads:
        return tuple(zeros_like(x).requires_grad_(create_graph) if r is None else r for r, x in zip(results, inputs))
    return results


def _listed(tensors: TensorBase | Sequence[TensorBase]) -> list[TensorBase]:
    return [tensors] if isinstance(tensors, TensorBase) else list(tensors)


def _seeds(outputs: list[TensorBase], gradients: TensorBase | Sequence[TensorBase | None] | None) -> list[TensorBase]:
    """The gradient each output is seeded with (None: ones, for an output of one element)."""
    if gradients is None or isinstance(gradients, TensorBase):
        gradients = [gradients] * len(outputs)
    elif len(gradients) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} outputs and {len(gradients)} gradients for them")
    return [_seed(out, g) for out, g in zip(outputs, gradients)]


def _differentiated(inputs: TensorBase | Sequence[TensorBase], caller: str) -> list[TensorBase]:
    """The `inputs` of `caller`, refused if there are none or one requires no grad."""
    inputs = _listed(inputs)
    if not inputs:
        raise RuntimeError(f"the `inputs` argument of {caller} cannot be empty")
    for i, x in enumerate(inputs):
        if not x.requires_grad:
            raise RuntimeError(f"input {i} of {caller} does not require grad")
    return inputs


def stored(name: str) -> tuple[Callable[[TensorBase], Any], Callable[[TensorBase, Any], None]]:
    """Read and write the graph field `name` itself, beneath the public Tensor's property of
    that name, which checks what it is given (``Tensor.grad``, ``Tensor.requires_grad``): the
    compiled module's slot, or without it the tensor's own attribute over the class default."""
    field = vars(GraphFields)[name]
    if hasattr(type(field), "__set__"):
        return field.__get__, field.__set__
    return (lambda t: vars(t).get(name, field)), (lambda t, value: vars(t).__setitem__(name, value))


_grad_of = stored("grad")[0]  # a non-leaf's .grad without the warning its reading gives


def _keep(node: TensorBase, grad: TensorBase) -> None:
    """Add `grad` into the ``.grad`` of the non-leaf `node` (retained, or an input of `backward`)."""
    kept, held = grad.detach(), _grad_of(node)
    node.grad = kept if held is None else held + kept
