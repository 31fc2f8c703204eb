"""The primitive registry: each differentiable op, or kernel, declared once.

A `Primitive` has a name, a portable default written against a namespace, kernels that
override the default for one backend (registered by the backend's name), and, when the op
records a node of its own, one VJP per argument. VJPs use the form of every rule in the
engine, ``vjp(ns, grad, out, *inputs)``. Its forward-mode rule, ``jvp(ns, tangents, out,
*inputs)``, gives the output's tangent from one tangent per input (None where an input has
none); the elementwise and the linear ops derive theirs (``jvp="elementwise"`` /
``jvp="linear"``, PyTorch's ``auto_element_wise`` and ``auto_linear``). A batching rule for
`autograd_core.transforms.func.vmap` is a kernel registered for the batched backend (``"vmap"``).

A primitive is called with a namespace first, ``prim(ns, *args)``, as a VJP calls it:

- with the raw namespace of a backend (`autograd_core.graph.namespace.RawNamespace`), it runs the
  backend's kernel, or the portable default, on raw arrays;
- with the tensor namespace (`autograd_core` itself, as in a ``create_graph=True`` backward),
  it runs on tensors: its `differentiable` form where it declares one (a formula of
  differentiable ops), else one recorded node for a primitive with VJPs, else the portable
  default on tensors, so its gradient is derived.

>>> import autograd_core as ag
>>> from autograd_core.graph.registry import Primitive
>>> cube = Primitive("cube", lambda ns, x: x * x * x, vjps=(lambda ns, g, out, x: 3 * g * x * x,))
>>> x = ag.tensor([2.0], requires_grad=True)
>>> y = cube.bind(x)
>>> y.backward(ag.ones_like(y))
>>> y.tolist(), x.grad.tolist()
([8.0], [12.0])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import backends
from autograd_core.graph import levels, namespace
from autograd_core.graph.levels import encloses
from autograd_core.graph.namespace import RawNamespace, raw_namespace, tensor_namespace
from autograd_core.graph.tensor_base import TensorBase, Vjp, record

Kernel = Callable[..., Any]
VjpRule = Callable[[int, int], Vjp | None]  # (position, count of inputs) -> that input's VJP
# what a node keeps for its VJPs: (the inputs saved, None for all of them; whether the output is)
SAVES = {"inputs": (None, False), "output": ((), True), "inputs and output": (None, True), "none": ((), False)}
# How an op's VJPs meet complex values, following PyTorch's convention: the gradient of a real
# loss L with respect to z is dL/dRe z + i dL/dIm z, which for a holomorphic f is
# grad * conj(f'(z)). A rule written for real values computes grad * f'(z) from z and f(z);
# for an f with real coefficients (conj(f(z)) = f(conj(z))) it therefore gives the complex
# gradient when called with the conjugates of the inputs and the output: "holomorphic". "safe":
# the rules are right for complex values as written (linear ops, and rules written for complex
# values). None: the backward refuses complex values.
COMPLEX = (None, "holomorphic", "safe")


class Primitive:
    """One op: its portable default, its per-backend kernels, and its VJPs (if it records).

    `vjps` gives one rule per input, or for an op of any number of inputs a function
    ``rule(position, count)`` giving each; `differentiable` is the op's form on tensors where
    it is not one recorded node; `saves` what the VJPs read (a key of `SAVES`);
    `jvp` is the forward-mode rule: ``jvp(ns, tangents, out, *inputs)``, or "elementwise"
    (the VJPs applied to the tangents: the Jacobian is diagonal), "linear" (the op itself
    applied to the tangents) or "multilinear" (linear in each input: the sum of the op with
    one input replaced by its tangent); `complex` how its VJPs meet complex values (one of
    `COMPLEX`); `side_outputs` how many arrays the kernel returns after the output for the
    VJPs alone (`bind`). Every fact about an op is declared here, so the engine reads it from
    the node (``node._op`` is the primitive). `register=False` leaves it out of the registry
    (an op made per class, as `autograd_core.autodiff.function.Function`'s).
    """

    def __init__(
        self,
        name: str,
        default: Kernel,
        *,
        vjps: Sequence[Vjp | None] | VjpRule | None = None,
        differentiable: Kernel | None = None,
        saves: str = "inputs",
        jvp: Callable[..., Any] | str | None = None,
        complex: str | None = None,  # noqa: A002 - the fact's name
        side_outputs: int = 0,
        doc: str = "",
        register: bool = True,
    ) -> None:
        self.name, self.default, self.kernels = name, default, {}
        if complex not in COMPLEX:
            raise ValueError(f"{name}: complex must be one of {COMPLEX}, got {complex!r}")
        self.complex, self.side_outputs = complex, side_outputs
        variadic = callable(vjps)
        self.vjps = None if vjps is None or variadic else tuple(rule or zero_vjp for rule in vjps)
        self.vjp_rule: VjpRule | None = vjps if variadic else None
        self._vjps_by_count: dict[int, tuple] = {}
        self.differentiable = differentiable
        if saves not in SAVES:
            raise ValueError(f"{name}: saves must be one of {', '.join(map(repr, SAVES))}, got {saves!r}")
        self.saved, self.saves_output = SAVES[saves]
        derived = {
            "elementwise": self._elementwise_jvp,
            "linear": self._linear_jvp,
            "multilinear": self._multilinear_jvp,
        }
        self.jvp = derived.get(jvp, jvp) if isinstance(jvp, str) or jvp is None else jvp
        if isinstance(self.jvp, str):
            raise ValueError(f"{name}: jvp must be a rule or one of {sorted(derived)}, got {jvp!r}")
        self.__doc__ = doc or default.__doc__
        if not register:
            return
        if name in registry:
            raise ValueError(f"a primitive named {name!r} is already registered ({registry[name]!r})")
        registry[name] = self

    @property
    def records(self) -> bool:
        """Whether the op records a node of its own (it declares VJPs)."""
        return self.vjps is not None or self.vjp_rule is not None

    def vjps_for(self, count: int) -> Sequence[Vjp]:
        """The VJPs of a call with `count` inputs: the declared ones, or for a variadic op
        (concat, einsum) those its rule gives each position."""
        if self.vjp_rule is None:
            return self.vjps
        rules = self._vjps_by_count.get(count)
        if rules is None:
            rules = tuple(self.vjp_rule(i, count) or zero_vjp for i in range(count))
            self._vjps_by_count[count] = rules
        return rules

    def _elementwise_jvp(self, ns: Any, tangents: Sequence[Any], out: Any, *inputs: Any) -> Any:
        """An elementwise op's Jacobian is diagonal, so each VJP applied to its input's tangent
        gives that input's part of the output's tangent (broadcast to the output)."""
        vjps = self.vjps_for(len(inputs))
        parts = [vjp(ns, t, out, *inputs) for vjp, t in zip(vjps, tangents) if t is not None]
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        return total if tuple(total.shape) == tuple(out.shape) else ns.broadcast_to(total, out.shape)

    def _linear_jvp(self, ns: Any, tangents: Sequence[Any], out: Any, *inputs: Any) -> Any:
        """A linear op maps the tangents as it maps the inputs (zeros for inputs without one)."""
        args = [
            x if t is None and not _is_float_array(ns, x) else ns.zeros_like(x) if t is None else t
            for x, t in zip(inputs, tangents)
        ]
        return self(ns, *args)

    def _multilinear_jvp(self, ns: Any, tangents: Sequence[Any], out: Any, *inputs: Any) -> Any:
        """An op linear in each input separately (matmul, einsum): the sum over the inputs with
        a tangent of the op with that input replaced by its tangent."""
        total = None
        for i, t in enumerate(tangents):
            if t is not None:
                term = self(ns, *inputs[:i], t, *inputs[i + 1 :])
                total = term if total is None else total + term
        return total

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        overrides = ", ".join(sorted(self.kernels)) or "none"
        return f"<primitive {self.name}: kernels for {overrides}>"

    def kernel(self, backend_name: str) -> Callable[[Kernel], Kernel]:
        """A decorator registering ``kernel(ns, *args)`` as this op on the backend called
        `backend_name`, in place of the portable default.

        >>> halve = Primitive("halve_example", lambda ns, x: x / 2)
        >>> @halve.kernel("my_library")
        ... def _halve(ns, x):
        ...     return x * 0.5
        >>> sorted(halve.kernels)
        ['my_library']
        """

        def register(kernel: Kernel) -> Kernel:
            self.kernels[backends.canonical(backend_name)] = kernel
            namespace.forget_kernels()
            return kernel

        return register

    def implementation(self, backend: backends.Backend) -> Kernel:
        """The kernel `backend` runs: its own, or the portable default (as the backend decides)."""
        return backend.implementation(self)

    def __call__(self, ns: Any, *args: Any, **options: Any) -> Any:
        if type(ns) is RawNamespace:
            return (ns.kernels.get(self) or self._kernel_of(ns))(ns, *args, **options)
        return self.bind(*args, **options)

    def _kernel_of(self, ns: RawNamespace) -> Kernel:
        """The kernel `ns`'s backend runs, found once and kept on the namespace."""
        kernel = ns.kernels[self] = self.implementation(ns.backend)
        return kernel

    def bind(self, *args: Any, saved: Sequence[Any] | None = None, **options: Any) -> Any:
        """The op on tensors (other arguments pass through), the one way an op is called: for a
        primitive with VJPs, the kernel of the inputs' backend on their arrays, recorded as one
        node (`saved` names the tensors the VJPs read, when fewer than the declaration says);
        for one without, its differentiable formula on tensors. A primitive with
        `side_outputs` returns them after its output, as the kernel gave them (raw); the node
        keeps them as inputs after the arguments, constants its VJPs read.

        >>> import autograd_core as ag
        >>> halve = Primitive("halve_bound", lambda ns, x: x / 2, vjps=(lambda ns, g, out, x: g / 2,))
        >>> halve.bind(ag.tensor([4.0])).tolist()
        [2.0]
        """
        if self.differentiable is not None or not self.records:
            return (self.differentiable or self.default)(tensor_namespace(), *args, **options)
        backend, raw = None, []  # a loop, and the kernel and record called here: this runs once per op
        for a in args:
            if isinstance(a, TensorBase):
                if backend is None:
                    backend = a.backend
                elif a.backend is not backend:
                    backend, raw = self._across_backends(args)
                    break
                raw.append(a.array)
            else:
                raw.append(a)
        ns, raw = raw_namespace(backend), tuple(raw)
        data = (ns.kernels.get(self) or self._kernel_of(ns))(ns, *raw, **options)
        if self.side_outputs:
            return self._record_with_side_outputs(data, backend, args, saved, raw)
        vjps = self.vjps or self.vjps_for(len(args))
        return record(self, data, backend, args, vjps, self.saved if saved is None else saved, self.saves_output, raw)

    def _across_backends(self, args: tuple) -> tuple[backends.Backend, list]:
        """The backend and raw arguments of a call whose tensors live on several backends: those
        a vmap batch encloses join it (`common_backend`)."""
        backend = common_backend(self.name, *(a for a in args if isinstance(a, TensorBase)))
        raw = [
            a if not isinstance(a, TensorBase) else a.array if a.backend is backend else levels.adopt(backend, a.array)
            for a in args
        ]
        return backend, raw

    def _record_with_side_outputs(self, data: Any, backend: Any, args: tuple, saved: Any, raw: tuple) -> tuple:
        """The output recorded with the side outputs kept as inputs after the arguments, and
        the side outputs returned after it."""
        data, *side = data
        return (self.record(data, backend, (*args, *side), saved, (*raw, *side)), *side)

    def record(
        self,
        data: Any,
        backend: backends.Backend,
        inputs: Sequence[Any],
        saved: Sequence[Any] | None = None,
        raw_inputs: tuple | None = None,
    ) -> TensorBase:
        """`data`, computed by this op from `inputs`, as a tensor in the graph: what `bind`
        does after the kernel, for the few ops whose node is not their kernel's call (a move
        between backends, the edges of a vmap batch, the packed outputs of a decomposition).
        `raw_inputs`, the inputs' raw arrays, spares the backward from unwrapping them."""
        if not self.records:
            raise TypeError(f"{self.name} declares no VJPs, so it records no node; call it on tensors instead")
        saved = self.saved if saved is None else saved
        vjps = self.vjps if self.vjp_rule is None else self.vjps_for(len(inputs))
        return record(self, data, backend, inputs, vjps, saved, self.saves_output, raw_inputs)


def opaque(name: str) -> Primitive:
    """An op whose nodes carry their own VJPs (a custom `Function`, a checkpointed segment):
    a primitive only in name, outside the registry, with no kernel to run and no facts."""
    return Primitive(name, _no_kernel, register=False)


def _no_kernel(ns: Any, *args: Any) -> Any:
    raise TypeError("this op records nodes with their own VJPs; it has no kernel to call")


def primitive(name: str | None = None, **declaration: Any) -> Callable[[Kernel], Primitive]:
    """Declare the decorated ``default(ns, *args)`` as a registered `Primitive`.

    >>> @primitive("square_plus_one", vjps=(lambda ns, g, out, x: 2 * g * x,))
    ... def square_plus_one(ns, x):
    ...     return x * x + 1
    """
    return lambda default: Primitive(name or default.__name__, default, **declaration)


def sum_to(ns: Any, grad: Any, shape: Sequence[int]) -> Any:
    """The adjoint of broadcasting `shape` to ``grad.shape``: sum over the prepended axes
    and over the axes that were stretched from 1. Works in either namespace."""
    if grad.shape == shape:
        return grad
    shape = tuple(shape)
    lead = len(grad.shape) - len(shape)
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    if lead:
        grad = ns.sum(grad, axis=tuple(range(lead)))
    # keepdims rather than a reshape: the result owns its memory, so the engine need not copy it
    return ns.sum(grad, axis=stretched, keepdims=True) if stretched else grad


def _is_float_array(ns: Any, x: Any) -> bool:
    """Whether `x` is an array (of tensors or raw) of a floating dtype: an input a tangent may
    flow through, as opposed to an index array, a shape or a Python scalar."""
    if not (hasattr(x, "dtype") and hasattr(x, "shape")):
        return False
    if type(ns) is not RawNamespace and not isinstance(x, TensorBase):  # a raw index array among tensors
        return False
    return ns.isdtype(x.dtype, ("real floating", "complex floating"))


def zero_vjp(ns: Any, g: Any, out: Any, *inputs: Any) -> Any:
    """The VJP of an input the op is piecewise constant in: a zero gradient."""
    return ns.zeros_like(g)


def common_backend(op: str, *tensors: TensorBase) -> backends.Backend:
    """The backend all `tensors` live on, or an error that says how to move one. Inside
    `autograd_core.transforms.func.vmap`, a tensor of the backend the batch wraps takes part as a value
    shared by every example: the batched backend is then the common one."""
    first = tensors[0].backend
    for t in tensors[1:]:
        if t.backend is not first:
            if encloses(first, t.backend):
                continue
            if encloses(t.backend, first):
                first = t.backend
                continue
            raise RuntimeError(
                f"{op}: the operands live on different backends ({first} and {t.backend}); "
                f"move one with .to({t.backend.name!r}) or .to({first.name!r}) first"
            )
    return first


registry: dict[str, Primitive] = {}
"""Every primitive by name."""

__all__ = ["Primitive", "common_backend", "primitive", "raw_namespace", "registry", "sum_to", "zero_vjp"]


# The same array, one recorded step removed: the tensor a transform differentiates at, standing
# for an input the caller differentiates too (so the graph reaches the caller's), or an in-place
# result whose saved output must stay apart from the tensor the change rebinds.
ALIAS = Primitive(
    "alias", lambda ns, x: x, vjps=(lambda ns, g, out, x: g,), saves="none", jvp=lambda ns, t, out, x: t[0]
)
