"""`Tensor`: one backend array plus what backward needs (its parents and their VJPs)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import backends
from autograd_core import anomaly, grad_mode
from autograd_core.dtypes import DType, as_dtype

NOTHING_SAVED: tuple = ((), False, 0)

try:  # the graph's hot loops compiled (_sweep.c); without a C compiler the Python functions run
    from autograd_core import _sweep
except ImportError:
    _sweep = None


# What every tensor holds for the graph, with its defaults (`data` and `backend` have none:
# every tensor sets them). The compiled module keeps them in slots that its record and sweep
# read as struct fields; without it they are class attributes, shadowed per tensor.
GRAPH_FIELDS = {
    "grad": None,
    "requires_grad": False,
    "_parents": (),
    "_vjps": (),
    "_inputs": (),
    "_raw": None,
    "_op": "",
    "_saved": NOTHING_SAVED,
    "_hooks": None,
}
GraphFields = type("GraphFields", (), dict(GRAPH_FIELDS)) if _sweep is None else _sweep.graph_fields(GRAPH_FIELDS)
_CHANGES_KEPT = 64  # in-place changes remembered per tensor, to name the version a forward saw
SUPPORTED_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")
# vjp(ns, grad, out, *inputs) -> the gradient of one input. `ns` is the namespace the rule
# computes with: the backend's own (and raw arrays for grad, out and inputs) in a first-order
# backward, `autograd_core` (and Tensors) when the gradient must itself be recorded.
Vjp = Callable[..., Any]


class Tensor(GraphFields):
    """An array on some backend that can record the operations made from it.

    >>> import autograd_core as ag
    >>> x = ag.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad.tolist()
    [2.0, 4.0, 6.0]
    """

    # _parents/_vjps: the inputs that need a gradient and how to send it to each (a leaf has
    # none; a graph freed by backward has _vjps None). _inputs: every input of the op, in
    # order, as the VJPs take them (Python scalars included); _raw: the same as backend arrays,
    # when the op had them at hand (else None). _saved: which tensors the VJPs read (None: the
    # inputs), whether they read the output, and the in-place epoch at the forward;
    # _changes: the epochs of this tensor's in-place changes; _former: (epoch, the tensor holding
    # the graph it had until then) for each change that replaced a recorded graph. _version counts
    # in-place changes; _base is the tensor whose memory a view shares (its changes count
    # too), _steps how the view is made from it (None: it cannot be replayed), and a base's
    # _views weak references to its views, which its in-place changes reach. _hooks: gradient
    # hooks (and the retain_grad marker). _trace: where the op was created, under detect_anomaly().
    # The attributes annotated without a value are GraphFields' (slots, which start as its
    # defaults); the others start as the class's defaults below, and an instance's own value,
    # once set, shadows the default. So making a tensor allocates its slots and sets data and
    # backend, nothing more (the hot path of every op).
    data: Any
    backend: backends.Backend
    grad: Tensor | None
    requires_grad: bool
    _parents: Sequence[Tensor]
    _vjps: Sequence[Vjp] | None
    _inputs: Sequence[Any]
    _raw: tuple | None
    _op: str
    _saved: tuple
    _hooks: list | None
    _version: int = 0
    _changes: list[int] | None = None
    _former: list[tuple[int, Tensor]] | None = None
    _base: Tensor | None = None
    _steps: list | None = None
    _views: list | None = None
    _trace: Any = None

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        from autograd_core.creation import to_array

        backend = backends.current()
        self._reset(to_array(data, backend, dtype), backend)
        if requires_grad:
            self.requires_grad_()

    def _reset(self, data: Any, backend: backends.Backend) -> None:
        self.data, self.backend = data, backend

    @classmethod
    def _wrap(cls, data: Any, backend: backends.Backend) -> Tensor:
        """A new leaf around an existing backend array (no copy, no checks)."""
        t = cls.__new__(cls)
        t.data, t.backend = data, backend
        return t

    # --- what it is ---------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.data.shape)

    @property
    def ndim(self) -> int:
        return len(self.data.shape)

    @property
    def dtype(self) -> DType:
        return as_dtype(self.backend.dtype_name(self.data.dtype))

    @property
    def device(self) -> Device:
        """Where the values live: this backend on its device (``device=x.device`` makes new
        tensors there, whatever the current backend is)."""
        return Device(self.backend)

    @property
    def version(self) -> int:
        """How many in-place changes this tensor (or the tensor it is a view of) has seen."""
        return self._version + (0 if self._base is None else self._base._version)

    @property
    def is_leaf(self) -> bool:
        """True for tensors not made by a recorded op (inputs, parameters, constants)."""
        return self._vjps == ()

    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def size(self) -> Size:
        """The number of elements (the standard's attribute); calling it, ``t.size()`` or
        ``t.size(dim)``, gives the shape as PyTorch's method does."""
        return Size(math.prod(self.shape), self.shape)

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        """`autograd_core`, whichever backend holds the values."""
        import autograd_core

        if api_version is not None and api_version not in SUPPORTED_API_VERSIONS:
            raise ValueError(f"api_version {api_version!r} is not supported; use one of {SUPPORTED_API_VERSIONS}")
        return autograd_core

    def to_device(self, device: Any, /, *, stream: Any = None) -> Tensor:
        """The same values on `device` of this tensor's backend (differentiable)."""
        from autograd_core import ops

        if device == self.device or device == self.backend.device:
            return self
        target = device.backend if isinstance(device, Device) else backends.get(self.backend.name, device)
        return ops.to_backend(self, target)

    def __dlpack__(
        self,
        /,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: Any = None,
        copy: bool | None = None,
    ) -> Any:
        """The backend array's DLPack capsule (the options it is given are passed on)."""
        given = {"stream": stream, "max_version": max_version, "dl_device": dl_device, "copy": copy}
        options = {k: v for k, v in given.items() if v is not None}
        exporter = self.backend.dlpack_exporter(self.data)
        try:
            return exporter.__dlpack__(**options)
        except BufferError:
            if max_version is None:
                raise
            # the standard lets a producer answer with another version than the highest asked for
            return exporter.__dlpack__(**{k: v for k, v in options.items() if k != "max_version"})

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.backend.dlpack_device(self.data)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any:
        """A numpy copy of the values, so ``np.asarray(t)`` is a real array."""
        host = self.numpy()
        return host if dtype is None else host.astype(dtype, copy=False)

    def __iter__(self) -> Iterator[Tensor]:
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        body = self.backend.format(self.data, prefix="tensor(")
        extras = [] if self.backend.name == "numpy" else [f"backend={self.backend.name!r}"]
        if self.dtype not in ("float32", "int64", "bool"):
            extras.append(f"dtype={self.dtype.name}")
        if self._op:
            extras.append(f"grad_fn={self._op}")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body, *extras]) + ")"

    # --- leaving the graph and the backend ---------------------------------------------------
    def numpy(self) -> Any:
        """The values as a numpy array (a copy off the CPU)."""
        return self.backend.to_numpy(self.data)

    def item(self) -> float | int | bool:
        if self.numel() != 1:
            raise ValueError(f"item() needs a tensor with one element, this one has shape {self.shape}")
        return self.numpy().reshape(()).item()

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __bool__(self) -> bool:
        return bool(self._scalar("bool"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.dtype.is_complex or self.dtype == "bool":
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype}")
        return int(self._scalar("int"))

    def _scalar(self, to: str) -> Any:
        if self.numel() != 1:
            raise TypeError(f"{to}() needs a tensor with one element, this one has shape {self.shape}")
        return self.item()

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        """A leaf with a copy of the values, the same type (a Parameter stays one),
        `requires_grad` and a copy of `.grad`, as PyTorch's; what ``copy.deepcopy(model)`` uses."""
        if not self.is_leaf:
            raise RuntimeError(
                "only tensors created by the user (graph leaves) can be deep-copied, not the result "
                f"of {self._op}; deep-copy .detach() instead"
            )
        new = type(self)._wrap(self.backend.xp.asarray(self.data, copy=True), self.backend)
        new.requires_grad = self.requires_grad
        memo[id(self)] = new
        new.grad = None if self.grad is None else self.grad.__deepcopy__(memo)
        return new

    def detach(self) -> Tensor:
        """The same values, cut from the graph (shares the array)."""
        return Tensor._wrap(self.data, self.backend)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if not self.is_leaf:
            raise RuntimeError("requires_grad_() only applies to leaf tensors; use .detach() first")
        if requires_grad and not self.dtype.is_floating_point:
            raise TypeError(f"only floating-point tensors can require gradients, not {self.dtype}")
        self.requires_grad = requires_grad
        return self

    def backward(
        self, gradient: Tensor | None = None, retain_graph: bool | None = None, create_graph: bool = False
    ) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad``.

        `gradient` is the vector of the vector-Jacobian product; it may be omitted only for a
        tensor with one element. The graph's saved tensors are released afterwards unless
        `retain_graph=True`. With `create_graph=True` the gradients are themselves recorded,
        so they can be differentiated again (and the graph is retained).
        """
        from autograd_core.engine import backward

        backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph)

    # --- hooks -------------------------------------------------------------------------
    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor
        replaces the gradient. Returns a handle whose ``remove()`` unregisters the hook.

        >>> import autograd_core as ag
        >>> x = ag.tensor([1.0, 2.0], requires_grad=True)
        >>> handle = x.register_hook(lambda g: g * 10)
        >>> (x * x).sum().backward()
        >>> x.grad.tolist()
        [20.0, 40.0]
        """
        if not self.requires_grad:
            raise RuntimeError("register_hook on a tensor that does not require grad")
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return RemovableHandle(self._hooks, hook)

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward."""
        if not self.requires_grad:
            raise RuntimeError("retain_grad on a tensor that does not require grad")
        if not self.is_leaf and not self.retains_grad:
            self.register_hook(RETAIN_GRAD)

    @property
    def retains_grad(self) -> bool:
        return self._hooks is not None and RETAIN_GRAD in self._hooks

    # --- in place: the same Tensor object takes the result, its version goes up ------------
    def _update(self, op: Callable[[Tensor], Tensor]) -> Tensor:
        """Replace this tensor's value by ``op(old value)``, keeping the object.

        The old value and graph move to a new tensor, so a VJP that saved this tensor before
        the change sees the bumped version and refuses to run on the new values, and ops
        recorded before it keep sending their gradient to the old graph. A view's change is
        written into its base; a base's change reaches its views (as in PyTorch).
        """
        if self.requires_grad and self.is_leaf and grad_mode.state.enabled:
            raise RuntimeError(
                "a leaf tensor that requires grad is used in an in-place operation; "
                "do it inside `with autograd_core.no_grad():` or use an out-of-place operation"
            )
        old = _with_graph_of(self)
        new = op(old)
        if new.shape != self.shape:
            raise RuntimeError(f"an in-place operation cannot change the shape {self.shape} to {new.shape}")
        if self._base is not None:
            return self._write_through(new)
        self.data = self.backend.xp.astype(new.data, self.data.dtype, copy=False)
        _take_graph(self, new)
        self.requires_grad = self.requires_grad or new.requires_grad
        bump_version(self)
        _keep_former_graph(self, old)
        if self._views:
            self._refresh_views()
        return self

    def _write_through(self, new: Tensor) -> Tensor:
        """A view's new value `new`, written into its base (which then refreshes this view)."""
        from autograd_core import ops

        if self._steps is None:
            raise RuntimeError(
                f"an in-place operation on a view made by {self._op or 'an op'} cannot reach its "
                "base; .clone() the view first"
            )
        steps, values = self._steps, ops._cast(new, self.dtype)
        self._base._update(lambda base: ops._write_view(base, steps, values))
        return self

    def _refresh_views(self) -> None:
        """Give every live view of this base its values and graph as made from the base now."""
        from autograd_core import ops

        views, self._views = self._views, None
        alive = []
        for ref in views:
            view = ref()
            if view is None:
                continue
            old, fresh = _with_graph_of(view), ops._replay_view(self, view._steps)
            view.data, view.requires_grad = fresh.data, fresh.requires_grad
            _take_graph(view, fresh)
            _keep_former_graph(view, old)
            alive.append(ref)
        self._views = [*alive, *(self._views or ())]

    def __setitem__(self, key: Any, value: Any) -> None:
        from autograd_core import ops

        self._update(lambda old: ops.index_put(old, key, value))

    def copy_(self, source: Any) -> Tensor:
        """Overwrite the values with `source` (a tensor or scalar, broadcast to this shape)."""
        from autograd_core import ops
        from autograd_core.creation import to_array

        if not isinstance(source, Tensor):
            source = Tensor._wrap(to_array(source, self.backend, self.dtype), self.backend)
        ops.common_backend("copy_", self, source)
        return self._update(lambda old: ops.clone(ops.broadcast_to(ops._cast(source, old.dtype), old.shape)))

    def zero_(self) -> Tensor:
        return self.copy_(0)

    def fill_(self, value: float) -> Tensor:
        return self.copy_(value)

    def __hash__(self) -> int:
        return id(self)

    __array_priority__ = 1000  # numpy defers `ndarray + Tensor` to Tensor.__radd__


class Device:
    """A backend and its library's device, as the standard's ``x.device`` and ``device=``.

    >>> import autograd_core as ag
    >>> x = ag.ones(2)
    >>> ag.zeros(3, device=x.device).device == x.device
    True
    """

    __slots__ = ("backend",)

    def __init__(self, backend: backends.Backend) -> None:
        self.backend = backend

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.backend is self.backend

    def __hash__(self) -> int:
        return hash((self.backend.name, str(self.backend.device)))

    def __repr__(self) -> str:
        return f"Device({self.backend.name!r}, {str(self.backend.device)!r})"


class Size(int):
    """``t.size``: an int (the element count, as the standard has it) that can also be
    called as PyTorch's ``t.size()`` / ``t.size(dim)``."""

    _shape: tuple[int, ...]

    def __new__(cls, count: int, shape: tuple[int, ...]) -> Size:
        self = super().__new__(cls, count)
        self._shape = shape
        return self

    def __call__(self, dim: int | None = None) -> tuple[int, ...] | int:
        return self._shape if dim is None else self._shape[dim]


class RemovableHandle:
    """Returned by hook registrations; ``remove()`` unregisters the hook."""

    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


def RETAIN_GRAD(grad: Tensor) -> None:  # noqa: N802 - a marker, compared by identity
    """The hook retain_grad() registers; the engine stores the gradient when it meets it."""


# Whether an in-place change ever gave a recorded tensor a new graph (`Tensor._former`): only
# then does backward look up which graph each op's inputs had when the op was recorded.
REBOUND = [False]
# Whether a complex tensor that requires grad was ever recorded: only then does backward check
# that each complex node's op is one whose VJP handles complex values (`engine.COMPLEX_SAFE`).
COMPLEX_IN_GRAPH = [False]
EPOCH = [0]  # how many in-place changes the process has made (versions are checked only after one)


def _with_graph_of(t: Tensor) -> Tensor:
    """A new tensor holding `t`'s current array and graph (what an in-place change leaves behind)."""
    old = Tensor._wrap(t.data, t.backend)
    old.requires_grad = t.requires_grad
    _take_graph(old, t)
    return old


def _take_graph(t: Tensor, source: Tensor) -> None:
    """Give `t` the recorded graph of `source` (what made it, and from what)."""
    t._parents, t._vjps, t._inputs, t._raw = source._parents, source._vjps, source._inputs, source._raw
    t._op, t._saved, t._trace = source._op, source._saved, source._trace


def _keep_former_graph(t: Tensor, old: Tensor) -> None:
    """After an in-place change of `t`: ops recorded before it must still send their gradient
    to the graph `t` had (`old`'s), as PyTorch's edges point to the old grad_fn."""
    if old._vjps:
        t._former = [*(t._former or ()), (EPOCH[0], old)]
        REBOUND[0] = True


def bump_version(t: Tensor) -> None:
    """Count an in-place change of `t`: graphs that saved it before refuse to use it."""
    EPOCH[0] += 1
    t._version += 1
    t._changes = [*(t._changes or ())[-_CHANGES_KEPT + 1 :], EPOCH[0]]


def changes_since(t: Tensor, epoch: int) -> int:
    """How many in-place changes `t` (or the tensor it is a view of) had after `epoch`."""
    count = sum(e > epoch for e in t._changes or ())
    return count if t._base is None else count + changes_since(t._base, epoch)


def record(
    op: str,
    data: Any,
    backend: backends.Backend,
    inputs: Sequence[Any],
    vjps: Sequence[Vjp],
    saved: Sequence[Any] | None = None,
    saves_output: bool = False,
    raw_inputs: tuple | None = None,
) -> Tensor:
    """The only place the graph grows: wrap `data` and, when recording, remember how to
    send a gradient back to each input that needs one (``vjps[i](ns, grad, out, *inputs)``
    is `inputs[i]`'s gradient). Inputs that are not tensors (Python scalars) get none.

    `saved` names the tensors whose values the VJPs read (default: all inputs) and
    `saves_output` whether they read the output; their versions are checked at backward.
    `raw_inputs`, the inputs' backend arrays, spares the backward from unwrapping them.
    """
    out = Tensor._wrap(data, backend)
    if not (grad_mode.state.enabled and inputs):
        return out
    parents = inputs
    for t in inputs:
        if not (isinstance(t, Tensor) and t.requires_grad):  # not all inputs need a gradient
            parents = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
            if not parents:
                return out
            vjps = [f for t, f in zip(inputs, vjps) if isinstance(t, Tensor) and t.requires_grad]
            break
    out.requires_grad, out._parents, out._vjps, out._op = True, parents, vjps, op
    out._inputs, out._raw = inputs, raw_inputs
    out._saved = (saved, saves_output, EPOCH[0])
    if anomaly.state.enabled:
        out._trace = anomaly.creation_site()
    return out


python_record = record  # the reference; the compiled record calls it under anomaly mode
CompiledBinaryOp = None if _sweep is None else _sweep.BinaryOp
if _sweep is not None:  # every op records through the same function compiled (_sweep.c)
    _sweep.configure(Tensor, grad_mode.state, anomaly.state, EPOCH, python_record)
    record = _sweep.record


def _dim(axis: Any, dim: Any) -> Any:
    """PyTorch's `dim=` accepted as an alias of the standard's `axis=`."""
    return axis if dim is None else dim


def install_methods() -> None:
    """The standard's operators and PyTorch-style methods, each a thin alias of a function of
    the `autograd_core` namespace (looked up there, so every op module is covered)."""
    import autograd_core as ag
    from autograd_core import ops

    def reflected(f: Callable) -> Callable:
        return lambda self, other: f(other, self)

    def in_place(f: Callable) -> Callable:
        return lambda self, other: self._update(lambda old: f(old, other))

    methods: dict[str, Callable] = {
        "__neg__": ag.negative,
        "__pos__": ag.positive,
        "__abs__": ag.abs,
        "__invert__": ag.bitwise_invert,
        "__getitem__": ops.getitem,
        "__lt__": ag.less,
        "__le__": ag.less_equal,
        "__gt__": ag.greater,
        "__ge__": ag.greater_equal,
        "__eq__": ag.equal,
        "__ne__": ag.not_equal,
        "exp": ag.exp,
        "log": ag.log,
        "log1p": ag.log1p,
        "sqrt": ag.sqrt,
        "tanh": ag.tanh,
        "sigmoid": ag.sigmoid,
        "relu": ag.relu,
        "abs": ag.abs,
        "erf": ag.erf,
        "sin": ag.sin,
        "cos": ag.cos,
        "maximum": ag.maximum,
        "minimum": ag.minimum,
        "matmul": ag.matmul,
        "clone": ops.clone,
        "real": property(ag.real),
        "imag": property(ag.imag),
        "conj": ag.conj,
        "argmax": lambda self, dim=None, keepdim=False: ag.argmax(self, axis=dim, keepdims=keepdim),
        "argmin": lambda self, dim=None, keepdim=False: ag.argmin(self, axis=dim, keepdims=keepdim),
        "flip": lambda self, *dims: ag.flip(self, axis=_sizes(dims) if dims else None),
        "take": ag.take,
        "flatten": ops.flatten,
        "swapaxes": ops.swapaxes,
        "transpose": ops.swapaxes,
        "astype": ag.astype,
        "broadcast_to": ag.broadcast_to,
        "expand": lambda self, *shape: ops.broadcast_to(self, _sizes(shape)),
        "softmax": lambda self, dim=-1: ops.softmax(self, dim),
        "log_softmax": lambda self, dim=-1: ops.log_softmax(self, dim),
        "clip": ag.clip,
        "clamp": ag.clip,
        "pow": ag.pow,
        "unsqueeze": lambda self, dim: ops.expand_dims(self, axis=dim),
        "squeeze": lambda self, dim=None: ops.squeeze(self, dim),
        "permute": lambda self, *axes: ops.permute_dims(self, _sizes(axes)),
        "reshape": lambda self, *shape: ops.reshape(self, _sizes(shape)),
        "view": lambda self, *shape: ops.reshape(self, _sizes(shape)),
        "T": property(lambda self: ops.permute_dims(self, tuple(reversed(range(self.ndim))))),
        "mT": property(ops.matrix_transpose),
        "float": lambda self: ops._cast(self, "float32"),
        "double": lambda self: ops._cast(self, "float64"),
        "long": lambda self: ops._cast(self, "int64"),
        "to": _to,
        "masked_fill": ag.masked_fill,
        "contiguous": lambda self: self,
        "split": lambda self, split_size, dim=0: ag.split(self, split_size, axis=dim),
        "chunk": lambda self, chunks, dim=0: ag.chunk(self, chunks, axis=dim),
        "unbind": lambda self, dim=0: ag.unstack(self, axis=dim),
    }
    binary = {
        "add": "add",
        "sub": "subtract",
        "mul": "multiply",
        "truediv": "divide",
        "floordiv": "floor_divide",
        "mod": "remainder",
        "pow": "pow",
        "matmul": "matmul",
        "and": "bitwise_and",
        "or": "bitwise_or",
        "xor": "bitwise_xor",
        "lshift": "bitwise_left_shift",
        "rshift": "bitwise_right_shift",
    }
    for dunder, name in binary.items():
        f = getattr(ag, name)
        methods[f"__{dunder}__"] = getattr(f, "method", f)  # binary_op's compiled form, where there is one
        methods[f"__r{dunder}__"], methods[f"__i{dunder}__"] = reflected(f), in_place(f)
    for name in (
        "floor",
        "ceil",
        "round",
        "trunc",
        "sign",
        "square",
        "reciprocal",
        "tan",
        "sinh",
        "cosh",
        "asin",
        "acos",
        "atan",
        "asinh",
        "acosh",
        "atanh",
        "expm1",
        "exp2",
        "log2",
        "log10",
        "isnan",
        "isinf",
        "isfinite",
    ):
        methods[name] = getattr(ag, name)
    for name in ("sum", "mean", "max", "min", "logsumexp"):
        reduce = getattr(ops, name)
        methods[name] = lambda self, axis=None, keepdims=False, dim=None, keepdim=False, _f=reduce: _f(
            self, axis=_dim(axis, dim), keepdims=keepdims or keepdim
        )
    for name in ("var", "std"):  # PyTorch's default is the unbiased estimate
        spread = getattr(ag, name)
        methods[name] = lambda self, axis=None, correction=1, keepdims=False, dim=None, keepdim=False, _f=spread: _f(
            self, axis=_dim(axis, dim), correction=correction, keepdims=keepdims or keepdim
        )
    for name in ("prod", "any", "all"):
        reduce = getattr(ag, name)
        methods[name] = lambda self, axis=None, keepdims=False, dim=None, keepdim=False, _f=reduce: _f(
            self, axis=_dim(axis, dim), keepdims=keepdims or keepdim
        )
    for name, function in (("cumsum", ag.cumulative_sum), ("cumprod", ag.cumulative_prod)):
        methods[name] = lambda self, dim, _f=function: _f(self, axis=dim)
    for name, method in methods.items():
        setattr(Tensor, name, method)
    Tensor.__hash__ = lambda self: id(self)  # __eq__ is elementwise, identity still hashes


def _sizes(args: tuple) -> tuple[int, ...]:
    """Accept both f(2, 3) and f((2, 3)), as PyTorch does."""
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)


def _to(self: Tensor, target: Any = None, *, dtype: Any = None, device: Any = None) -> Tensor:
    """``t.to("torch")``, ``t.to(ag.float64)``, ``t.to(device="cuda")``: differentiable moves."""
    from autograd_core import ops

    if isinstance(target, DType) or (isinstance(target, str) and target in _dtype_names()):
        dtype, target = target, None
    backend = self.backend
    if target is not None or device is not None:
        name = target.name if isinstance(target, backends.Backend) else (target or backend.name)
        backend = backends.get(name, device)
    out = ops.to_backend(self, backend)
    return out if dtype is None else ops.astype(out, dtype)


def _dtype_names() -> set[str]:
    from autograd_core.dtypes import DTYPES

    return set(DTYPES)
