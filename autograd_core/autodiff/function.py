"""Differentiable ops defined by the user, in PyTorch's form (`Function`, with `forward(ctx, ...)`
and `backward(ctx, ...)`) and in JAX's (`custom_vjp`, a function given its own VJP whose forward
saves residuals). Both record one node per output through the engine's `record`, so they run
on every backend, under hooks, anomaly mode, `gradcheck` and `ag.compile`, and with
``create_graph=True`` when their backward is written with differentiable ops.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from autograd_core.graph import grad_mode
from autograd_core.graph.registry import Primitive, opaque
from autograd_core.graph.tensor_base import TensorBase, record
from autograd_core.ops.core import common_backend
from autograd_core.ops.creation import zeros_like


class FunctionCtx:
    """What `Function.forward` leaves for `Function.backward`: the tensors saved with
    `save_for_backward`, any other attribute set on it, and `needs_input_grad` (one bool per
    argument of `forward`)."""

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self.materialize_grads = True
        self._to_save: tuple[Any, ...] = ()
        self._non_differentiable: set[int] = set()

    def save_for_backward(self, *tensors: TensorBase | None) -> None:
        """Keep `tensors` (inputs, outputs or intermediates) for `backward`, as
        `saved_tensors`; an in-place change to one before the backward is an error."""
        for t in tensors:
            if not (t is None or isinstance(t, TensorBase)):
                raise TypeError(f"save_for_backward takes tensors or None, got {type(t).__name__}")
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple[TensorBase | None, ...]:
        """The tensors given to `save_for_backward`, an output as the tensor the caller received."""
        return tuple(t() if isinstance(t, weakref.ref) else t for t in self._to_save)

    def mark_non_differentiable(self, *outputs: TensorBase) -> None:
        """Outputs that get no gradient (indices, masks): they do not require one, and
        `backward` receives zeros for them."""
        self._non_differentiable |= {id(t) for t in outputs}

    def set_materialize_grads(self, value: bool) -> None:
        """With False, `backward` receives None (not zeros) for an output that got no gradient."""
        self.materialize_grads = value


class Function:
    """A differentiable op with a hand-written backward, as ``torch.autograd.Function``.

    Subclass it with two static methods and call ``apply``: ``forward(ctx, *args)`` computes
    the outputs (one tensor or a tuple) with recording off; ``backward(ctx, *grads)`` gets one
    gradient per output and returns one per argument of ``forward`` (None where there is none).

        >>> import autograd_core as ag
        >>> class Cube(ag.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x**3
        ...
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         (x,) = ctx.saved_tensors
        ...         return grad * 3 * x**2
        >>> x = ag.tensor([1.0, 2.0], requires_grad=True)
        >>> Cube.apply(x).sum().backward()
        >>> x.grad
        tensor([ 3., 12.])
    """

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any) -> Any:
        """The outputs of the op (a tensor or a tuple of tensors), computed without recording."""
        raise NotImplementedError("a Function subclass defines forward(ctx, *args)")

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        """One gradient per argument of `forward` (None where it has none), from one per output."""
        raise NotImplementedError("a Function subclass defines backward(ctx, *grads)")

    @classmethod
    def apply(cls, *args: Any) -> Any:
        """Run `forward` on `args` and record its outputs so that `backward` gives their gradients."""
        name = cls.__name__
        tensors = [a for a in args if isinstance(a, TensorBase)]
        backend = common_backend(name, *tensors) if tensors else None
        needs = tuple(isinstance(a, TensorBase) and a.requires_grad for a in args)
        ctx = FunctionCtx(needs)
        with grad_mode.no_grad():
            result = cls.forward(ctx, *args)
        single = isinstance(result, TensorBase)
        outputs = (result,) if single else tuple(result) if isinstance(result, tuple | list) else None
        if outputs is None or not all(isinstance(o, TensorBase) for o in outputs):
            raise TypeError(f"{name}.forward must return a tensor or a tuple of tensors, got {_kind(result)}")
        if not (grad_mode.is_grad_enabled() and any(needs)):
            return result
        node = _Node(cls, ctx, args, outputs)
        recorded = tuple(
            o if id(o) in ctx._non_differentiable else node.record(k, o, backend) for k, o in enumerate(outputs)
        )
        # a saved output is the tensor the caller received (its graph matters with create_graph=True),
        # held weakly: the output holds its backward, which holds the context
        by_id = {id(o): weakref.ref(r) for o, r in zip(outputs, recorded) if r is not o}
        ctx._to_save = tuple(by_id.get(id(t), t) for t in ctx._to_save)
        return recorded[0] if single else recorded


_OPS: weakref.WeakKeyDictionary[type, Primitive] = weakref.WeakKeyDictionary()  # Function class -> its op


class _Node:
    """The backward of one `Function.apply`: a VJP per output and input. The engine asks for each
    input's gradient in turn with the same output gradient; ``backward`` runs once for them all."""

    def __init__(
        self, cls: type[Function], ctx: FunctionCtx, args: Sequence[Any], outputs: Sequence[TensorBase]
    ) -> None:
        self.cls, self.ctx, self.args, self.outputs = cls, ctx, tuple(args), tuple(outputs)
        self.wanted = [i for i, a in enumerate(args) if isinstance(a, TensorBase) and a.requires_grad]
        # (output, its gradient, the wanted arguments' gradients, the positions handed out so far)
        self.cache: tuple[int, Any, list, set[int]] | None = None

    def record(self, k: int, output: TensorBase, backend: Any) -> TensorBase:
        inputs = [self.args[i] for i in self.wanted]
        vjps = [functools.partial(self.vjp, k, j) for j in range(len(self.wanted))]
        saved = [t for t in self.ctx._to_save if isinstance(t, TensorBase) and t is not output]
        saves_output = any(t is output for t in self.ctx._to_save)
        op = _OPS.get(self.cls) or _OPS.setdefault(self.cls, opaque(self.cls.__name__))
        return record(op, output.array, backend, inputs, vjps, saved=saved, saves_output=saves_output)

    def vjp(self, k: int, j: int, ns: Any, grad: Any, out: Any, *inputs: Any) -> Any:
        """The gradient of the `j`-th wanted argument from `grad`, the gradient of output `k`:
        the first call runs ``backward``, the others take their share of its result."""
        if self.cache is None or self.cache[0] != k or self.cache[1] is not grad:
            self.cache = (k, grad, self.gradients(k, grad), set())
        gradients, served = self.cache[2], self.cache[3]
        served.add(j)
        if len(served) == len(gradients):
            self.cache = None  # every argument has its share: keep nothing alive
        return gradients[j]

    def gradients(self, k: int, grad: Any) -> list:
        """``backward`` on the gradient of output `k` (zeros, or None, for the others); the
        gradient of each wanted argument, raw when `grad` is raw."""
        raw = not isinstance(grad, TensorBase)
        out = self.outputs[k]
        given = TensorBase._wrap(grad, out.backend) if raw else grad
        zero = zeros_like if self.ctx.materialize_grads else (lambda o: None)
        grads = [given if j == k else zero(o) for j, o in enumerate(self.outputs)]
        with grad_mode.no_grad() if raw else grad_mode.enable_grad():
            returned = self.cls.backward(self.ctx, *grads)
        returned = returned if isinstance(returned, tuple | list) else (returned,)
        name = f"{self.cls.__name__}.backward"
        if len(returned) != len(self.args):
            raise RuntimeError(
                f"{name} returned {len(returned)} gradient(s), but forward took {len(self.args)} argument(s): "
                "return one per argument, None where an argument has no gradient"
            )
        result = []
        for i in self.wanted:
            g, x = returned[i], self.args[i]
            g = zeros_like(x) if g is None else g
            if not isinstance(g, TensorBase):
                raise TypeError(f"{name} returned {_kind(g)} as the gradient of argument {i}: expected a tensor")
            if g.shape != x.shape:
                raise RuntimeError(
                    f"{name} returned a gradient of shape {g.shape} for argument {i}, whose shape is {x.shape}"
                )
            if g.dtype != x.dtype:
                raise RuntimeError(
                    f"{name} returned a gradient of dtype {g.dtype.name} for argument {i}, whose dtype is "
                    f"{x.dtype.name}: return it in the argument's dtype"
                )
            # raw: a copy, since the user's code may keep what it returns (see engine's OWNERSHIP)
            result.append(g.backend.xp.asarray(g.array, copy=True) if raw else g)
        return result


def _kind(value: Any) -> str:
    return "None" if value is None else f"a {type(value).__name__}"


def once_differentiable(backward: Callable) -> Callable:
    """Mark a `Function.backward` that is not itself differentiable (it leaves the graph, e.g.
    through numpy): with ``create_graph=True`` it still runs, and differentiating its results
    again raises an error naming it, instead of giving a silently wrong zero."""

    @functools.wraps(backward)
    def wrapped(ctx: FunctionCtx, *grads: Any) -> Any:
        recording = grad_mode.is_grad_enabled()  # a backward with create_graph=True
        with grad_mode.no_grad():
            returned = backward(ctx, *grads)
        if not recording:
            return returned
        single = not isinstance(returned, tuple | list)
        marked = tuple(_refuse_second_backward(g, backward.__qualname__) for g in ((returned,) if single else returned))
        return marked[0] if single else marked

    return wrapped


def _refuse_second_backward(g: Any, name: str) -> Any:
    if not isinstance(g, TensorBase):
        return g

    def refuse(ns: Any, grad: Any, out: Any, *inputs: Any) -> Any:
        raise RuntimeError(
            f"{name} is marked @once_differentiable: its result cannot be differentiated again "
            "(write the backward with differentiable ops to allow create_graph=True)"
        )

    anchor = g.detach().requires_grad_()  # a parent, so that the refusing node is in the graph
    return record(opaque(f"{name} (once differentiable)"), g.array, g.backend, [anchor], [refuse])


class custom_vjp:  # noqa: N801 - JAX's name
    """A function with its own VJP, as ``jax.custom_vjp``: ``fwd(*args)`` returns the output and
    the residuals the backward needs; ``bwd(residuals, grad)`` returns one gradient per argument
    (None for an argument without one). Calling the function records ``bwd`` as its backward.

        >>> import autograd_core as ag
        >>> @ag.custom_vjp
        ... def clip_gradient(x):
        ...     return x
        >>> def fwd(x):
        ...     return x, None
        >>> def bwd(residuals, g):
        ...     return (ag.clip(g, -1.0, 1.0),)
        >>> clip_gradient.defvjp(fwd, bwd)
        >>> x = ag.tensor([2.0, 3.0], requires_grad=True)
        >>> (clip_gradient(x) * 5).sum().backward()
        >>> x.grad
        tensor([1., 1.])
    """

    def __init__(self, fun: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.op: type[Function] | None = None

    def defvjp(self, fwd: Callable[..., tuple[Any, Any]], bwd: Callable[[Any, Any], Sequence[Any]]) -> None:
        """Give the function its forward with residuals and its backward."""
        name = getattr(self.fun, "__name__", "custom_vjp")

        def forward(ctx: FunctionCtx, *args: Any) -> Any:
            result = fwd(*args)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise TypeError(f"{name}'s fwd must return (output, residuals), got {_kind(result)}")
            ctx.residuals = result[1]
            return result[0]

        def backward(ctx: FunctionCtx, *grads: Any) -> Any:
            returned = bwd(ctx.residuals, grads[0] if len(grads) == 1 else grads)
            if not isinstance(returned, tuple | list):
                raise TypeError(
                    f"{name}'s bwd must return a tuple with one gradient per argument, got {_kind(returned)}"
                )
            return tuple(returned)

        self.op = type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})

    def __call__(self, *args: Any) -> Any:
        if self.op is None:
            raise RuntimeError(f"{self.__name__} has no VJP: call {self.__name__}.defvjp(fwd, bwd) first")
        return self.op.apply(*args)
