"""`TensorBase`: one backend array plus what backward needs (its parents and their VJPs), and
`record`, the only place the graph grows. The ops are written against this class; the public
`autograd_core.autodiff.tensor.Tensor` derives from it and adds the operators and methods, which call
the ops, so this module imports none of them."""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import backends
from autograd_core.graph import anomaly, grad_mode
from autograd_core.graph.dtypes import DType, as_dtype

NOTHING_SAVED: tuple = ((), False, 0)

try:  # the graph's hot loops compiled (_sweep.c); without a C compiler the Python functions run
    from autograd_core.graph import _sweep
except ImportError:
    _sweep = None


# What every tensor holds for the graph, with its defaults (`array` and `backend` have none:
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
    "_marks": None,
}
GraphFields = type("GraphFields", (), dict(GRAPH_FIELDS)) if _sweep is None else _sweep.graph_fields(GRAPH_FIELDS)
_ENGINE_PUBLIC = ("array", "backend", "grad", "requires_grad")  # in vars(t) without the compiled module
_CHANGES_KEPT = 64  # in-place changes remembered per tensor, to name the version a forward saw
# vjp(ns, grad, out, *inputs) -> the gradient of one input. `ns` is the namespace the rule
# computes with: the backend's own (and raw arrays for grad, out and inputs) in a first-order
# backward, `autograd_core` (and Tensors) when the gradient must itself be recorded.
Vjp = Callable[..., Any]


class TensorBase:
    """An array on some backend and the graph it was made by: every tensor is one, of the
    subclass `autograd_core.autodiff.tensor.Tensor`, which adds the operators and methods.

    >>> import autograd_core as ag
    >>> isinstance(ag.ones(2), TensorBase)
    True
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
    # hooks (and the retain_grad marker). _marks: what a sweep through this node must take into
    # account (`REBOUND`, `COMPLEX`; None for neither). _trace: where the op was created, under
    # detect_anomaly().
    # The attributes annotated without a value are GraphFields' (slots, which start as its
    # defaults); the others start as the class's defaults below, and an instance's own value,
    # once set, shadows the default. So making a tensor allocates its slots and sets data and
    # backend, nothing more (the hot path of every op).
    data: Any
    backend: backends.Backend
    grad: TensorBase | None
    requires_grad: bool
    _parents: Sequence[TensorBase]
    _vjps: Sequence[Vjp] | None
    _inputs: Sequence[Any]
    _raw: tuple | None
    _op: Any  # the Primitive that made it ("" for a leaf)
    _saved: tuple
    _hooks: list | None
    _marks: int | None
    _version: int = 0
    _changes: list[int] | None = None
    _former: list[tuple[int, TensorBase]] | None = None
    _base: TensorBase | None = None
    _steps: list | None = None
    _views: list | None = None
    _trace: Any = None

    def _reset(self, data: Any, backend: backends.Backend) -> None:
        self.array, self.backend = data, backend

    @classmethod
    def _wrap(cls, data: Any, backend: backends.Backend) -> TensorBase:
        """A new leaf around an existing backend array (no copy, no checks): a public `Tensor`,
        or an instance of the subclass it is called on (a Parameter)."""
        cls = TENSOR_CLASS[0] if cls is TensorBase else cls
        t = cls.__new__(cls)
        t.array, t.backend = data, backend
        return t

    # --- what it is ---------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.array.shape)

    @property
    def ndim(self) -> int:
        return len(self.array.shape)

    @property
    def dtype(self) -> DType:
        return as_dtype(self.backend.dtype_name(self.array.dtype))

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
        exporter = self.backend.dlpack_exporter(self.array)
        try:
            return exporter.__dlpack__(**options)
        except BufferError:
            if max_version is None:
                raise
            # the standard lets a producer answer with another version than the highest asked for
            return exporter.__dlpack__(**{k: v for k, v in options.items() if k != "max_version"})

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.backend.dlpack_device(self.array)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any:
        """A numpy copy of the values, so ``np.asarray(t)`` is a real array; refused, as
        `numpy`, for a tensor that requires grad (a numpy function would drop its graph)."""
        host = self.numpy()
        if copy is not False and not host.flags.writeable:  # a read-only view of an immutable library's buffer
            host = host.copy()
        return host if dtype is None else host.astype(dtype, copy=False)

    def __iter__(self) -> Iterator[TensorBase]:
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        body = self.backend.format(self.array, prefix="tensor(")
        extras = [] if self.backend.name == "numpy" else [f"backend={self.backend.name!r}"]
        if self.dtype not in ("float32", "int64", "bool"):
            extras.append(f"dtype={self.dtype.name}")
        if self._op:
            extras.append(f"grad_fn={self._op}")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body, *extras]) + ")"

    # --- leaving the graph and the backend ---------------------------------------------------
    def numpy(self, *, force: bool = False) -> Any:
        """The values as a numpy array (a copy off the CPU). Refused for a tensor that
        requires grad, as in PyTorch: the array would silently leave the graph (unless `force`,
        which detaches it first).

        >>> import autograd_core as ag
        >>> ag.tensor([1.0, 2.0], requires_grad=True).detach().numpy().tolist()
        [1.0, 2.0]
        """
        if self.requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on a tensor that requires grad (a numpy array leaves the graph, so "
                "no gradient would flow through it); use t.detach().numpy() instead"
            )
        return self.backend.to_numpy(self.array)

    def item(self) -> float | int | bool:
        if self.numel() != 1:
            raise ValueError(f"item() needs a tensor with one element, this one has shape {self.shape}")
        return self.backend.to_numpy(self.array).reshape(()).item()

    def tolist(self) -> Any:
        return self.backend.to_numpy(self.array).tolist()

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

    def __deepcopy__(self, memo: dict[int, Any]) -> TensorBase:
        """A leaf with a copy of the values, the same type (a Parameter stays one),
        `requires_grad` and a copy of `.grad`, as PyTorch's; what ``copy.deepcopy(model)`` uses."""
        if not self.is_leaf:
            raise RuntimeError(
                "only tensors created by the user (graph leaves) can be deep-copied, not the result "
                f"of {self._op}; deep-copy .detach() instead"
            )
        new = type(self)._wrap(self.backend.xp.asarray(self.array, copy=True), self.backend)
        new.requires_grad = self.requires_grad
        memo[id(self)] = new
        new.grad = None if self.grad is None else self.grad.__deepcopy__(memo)
        vars(new).update(copy.deepcopy(self._user_attributes(), memo))
        return new

    def _user_attributes(self) -> dict[str, Any]:
        """The attributes a user gave this tensor (``t.note = ...``), which copies and pickles
        keep, as PyTorch's do; the engine's own are private (or its data, grad, flags)."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_") and k not in _ENGINE_PUBLIC}

    def __copy__(self) -> TensorBase:
        """A leaf of the same type sharing the values, with the same `requires_grad` and no
        graph or `.grad`, as ``copy.copy`` of a PyTorch tensor."""
        new = type(self)._wrap(self.array, self.backend)
        new.requires_grad = self.requires_grad
        vars(new).update(self._user_attributes())
        return new

    def __reduce_ex__(self, protocol: int) -> tuple:
        """Pickled as PyTorch pickles a tensor: the values (as a numpy array), the backend by its
        registry name, `requires_grad` and the attributes a user gave it. The graph, `.grad` and
        hooks are left out (a warning says so for hooks), so the result of an op comes back as a
        leaf; unpickling makes the values again on the backend of that name, in whichever process
        loads them.

        >>> import pickle, autograd_core as ag
        >>> t = pickle.loads(pickle.dumps(ag.tensor([1.0, 2.0], requires_grad=True) * 2))
        >>> t.tolist(), t.requires_grad, t.is_leaf
        ([2.0, 4.0], True, True)
        """
        if self._hooks:
            warnings.warn("the gradient hooks of a tensor are not pickled", UserWarning, stacklevel=2)
        name, device = backends.registered_as(self.backend)
        values = self.backend.to_numpy(self.array)
        return _unpickled, (type(self), values, name, device, self.requires_grad), self._user_attributes() or None

    def detach(self) -> TensorBase:
        """The same values, cut from the graph (shares the array)."""
        return TensorBase._wrap(self.array, self.backend)

    def requires_grad_(self, requires_grad: bool = True) -> TensorBase:
        if not self.is_leaf:
            raise RuntimeError("requires_grad_() only applies to leaf tensors; use .detach() first")
        if requires_grad and not self.dtype.is_floating_point:
            raise TypeError(f"only floating-point tensors can require gradients, not {self.dtype}")
        self.requires_grad = requires_grad
        return self

    # --- hooks -------------------------------------------------------------------------
    def register_hook(self, hook: Callable[[TensorBase], TensorBase | None]) -> RemovableHandle:
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

    __array_priority__ = 1000  # numpy defers `ndarray + Tensor` to Tensor.__radd__


def _python_default_dtype(host: Any) -> DType:
    """What Python values become: floats float32 (as in PyTorch), ints int64, bools bool."""
    names = {"f": "float32", "c": "complex64", "i": "int64", "u": "int64", "b": "bool"}
    return as_dtype(names[host.dtype.kind])  # `Backend.host_array` refused every other kind


def to_array(data: Any, backend: backends.Backend, dtype: Any = None) -> Any:
    """A new backend array holding `data` (a Tensor, an array of any library, or Python values)."""
    target = None if dtype is None else backend.dtype(as_dtype(dtype).name)
    if isinstance(data, TensorBase):
        if data.backend is not backend:
            data = data.backend.to_numpy(data.array)
        else:
            return backend.xp.asarray(data.array, dtype=target, copy=True)
    if backend.is_native(data) and backend.holds(data.dtype):
        return backend.xp.asarray(data, dtype=target, copy=True)
    host = backend.host_array(data)  # refuses what no tensor holds, in native byte order
    if target is None:  # an array keeps its dtype, if this backend has it (else refused now, not in a later op)
        target = backend.dtype(host.dtype.name if hasattr(data, "dtype") else _python_default_dtype(host).name)
    return backend.asarray(host, target)


def _unpickled(cls: type, values: Any, backend_name: str, device: str | None, requires_grad: bool) -> TensorBase:
    """A pickled tensor made again: `values` (a numpy array) on the backend `backend_name` names."""
    backend = backends.get(backend_name, device)
    t = cls._wrap(backend.asarray(values), backend)
    t.requires_grad = requires_grad
    return t


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

    @property
    def type(self) -> str:
        """The kind of device, as PyTorch's ``device.type`` names it ("cpu", "cuda"...)."""
        return self.backend.device_type

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


def RETAIN_GRAD(grad: TensorBase) -> None:  # noqa: N802 - a marker, compared by identity
    """The hook retain_grad() registers; the engine stores the gradient when it meets it."""


# A node's marks, which a sweep through it must take into account (`engine.survey` reads them
# once per sweep): REBOUND, an in-place change gave the tensor a new graph (`_former`), so the
# ops recorded before it look up the graph their inputs had then; COMPLEX, a complex value
# enters the graph here, so the complex nodes after it are checked against their op's
# `complex` fact.
REBOUND, COMPLEX = 1, 2
EPOCH = [0]  # how many in-place changes the process has made (versions are checked only after one)


def _with_graph_of(t: TensorBase) -> TensorBase:
    """A new tensor holding `t`'s current array and graph (what an in-place change leaves behind)."""
    old = TensorBase._wrap(t.array, t.backend)
    old.requires_grad = t.requires_grad
    _take_graph(old, t)
    return old


def _take_graph(t: TensorBase, source: TensorBase) -> None:
    """Give `t` the recorded graph of `source` (what made it, and from what)."""
    t._parents, t._vjps, t._inputs, t._raw = source._parents, source._vjps, source._inputs, source._raw
    t._op, t._saved, t._trace, t._marks = source._op, source._saved, source._trace, source._marks


def _keep_former_graph(t: TensorBase, old: TensorBase) -> None:
    """After an in-place change of `t`: ops recorded before it must still send their gradient
    to the graph `t` had (`old`'s), as PyTorch's edges point to the old grad_fn."""
    if old._vjps:
        t._former = [*(t._former or ()), (EPOCH[0], old)]
        mark(t, REBOUND)


def mark(t: TensorBase, marks: int) -> TensorBase:
    """Add `marks` (`REBOUND`, `COMPLEX`) to the node `t`."""
    t._marks = marks | (t._marks or 0)
    return t


def bump_version(t: TensorBase) -> None:
    """Count an in-place change of `t`: graphs that saved it before refuse to use it."""
    EPOCH[0] += 1
    t._version += 1
    t._changes = [*(t._changes or ())[-_CHANGES_KEPT + 1 :], EPOCH[0]]


def changes_since(t: TensorBase, epoch: int) -> int:
    """How many in-place changes `t` (or the tensor it is a view of) had after `epoch`."""
    count = sum(e > epoch for e in t._changes or ())
    return count if t._base is None else count + changes_since(t._base, epoch)


def record(
    op: Any,
    data: Any,
    backend: backends.Backend,
    inputs: Sequence[Any],
    vjps: Sequence[Vjp],
    saved: Sequence[Any] | None = None,
    saves_output: bool = False,
    raw_inputs: tuple | None = None,
) -> TensorBase:
    """The only place the graph grows: wrap `data` and, when recording, remember the op (a
    `Primitive`) and how to send a gradient back to each input that needs one (``vjps[i](ns, grad, out, *inputs)``
    is `inputs[i]`'s gradient). Inputs that are not tensors (Python scalars) get none.

    `saved` names the tensors whose values the VJPs read (default: all inputs) and
    `saves_output` whether they read the output; their versions are checked at backward.
    `raw_inputs`, the inputs' backend arrays, spares the backward from unwrapping them.
    """
    out = TensorBase._wrap(data, backend)
    if not (grad_mode.state.enabled and inputs):
        return out
    parents = inputs
    for t in inputs:
        if not (isinstance(t, TensorBase) and t.requires_grad):  # not all inputs need a gradient
            parents = [t for t in inputs if isinstance(t, TensorBase) and t.requires_grad]
            if not parents:
                return out
            vjps = [f for t, f in zip(inputs, vjps) if isinstance(t, TensorBase) and t.requires_grad]
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
    record = _sweep.record

TENSOR_CLASS: list[type] = [TensorBase]  # what tensors are made of: the public Tensor, once defined


def use_tensor_class(cls: type) -> None:
    """Make every new tensor a `cls`: `autograd_core.autodiff.tensor.Tensor` calls this once it is
    defined (the compiled record is told too)."""
    TENSOR_CLASS[0] = cls
    if _sweep is not None:
        _sweep.configure(cls, grad_mode.state, anomaly.state, EPOCH, python_record)
