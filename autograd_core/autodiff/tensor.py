"""`Tensor`, the public array object: `TensorBase` (an array and its graph) with the
standard's operators and PyTorch's methods, each defined here as a call of its op."""

from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import backends
from autograd_core.autodiff import engine
from autograd_core.graph import grad_mode, registry
from autograd_core.graph.dtypes import DTYPES, DType, finfo
from autograd_core.graph.namespace import tensor_namespace
from autograd_core.graph.tensor_base import (
    EPOCH,
    Device,
    GraphFields,
    RemovableHandle,
    TensorBase,
    _keep_former_graph,
    _take_graph,
    _with_graph_of,
    bump_version,
    to_array,
    use_tensor_class,
)
from autograd_core.ops import (
    core as ops,
    creation,
    elementwise,
    linalg,
    manipulation,
    random,
    searching,
    special,
    statistics,
)
from autograd_core.primitives.indexing import index_add

__all__ = ["RemovableHandle", "Tensor", "bump_version"]
SUPPORTED_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


def _operator(f: Callable) -> Callable:
    return getattr(f, "method", f)  # binary_op's compiled form, where there is one


def _reflected(f: Callable) -> Callable:
    return lambda self, other: f(other, self)


def _in_place(f: Callable) -> Callable:
    return lambda self, other: self._update(lambda old: f(old, other))


def _reduction(f: Callable) -> Callable:
    """A reduction method taking the standard's axis/keepdims or PyTorch's dim/keepdim."""

    def method(
        self: Tensor, axis: Any = None, keepdims: bool = False, dim: Any = None, keepdim: bool = False, **dtype: Any
    ) -> Any:
        return f(self, axis=axis if dim is None else dim, keepdims=keepdims or keepdim, **dtype)

    return method


def _spread(f: Callable) -> Callable:
    """var/std as methods, in PyTorch's signature ``(dim=None, unbiased=True, keepdim=False, *,
    correction=1)`` (``t.std(True)``: `unbiased` alone), with the standard's and numpy's names
    too; PyTorch's default is the unbiased estimate."""

    def method(
        self: Tensor,
        dim: Any = None,
        unbiased: bool | None = None,
        keepdim: bool = False,
        *,
        correction: float | None = None,
        keepdims: bool = False,
        axis: Any = None,
        ddof: float | None = None,
    ) -> Any:
        axis, correction, keepdims = statistics.spread_arguments(
            f.__name__, dim, unbiased, keepdims, correction=correction, ddof=ddof, dim=axis, keepdim=keepdim, default=1
        )
        return f(self, axis=axis, correction=correction, keepdims=keepdims)

    return method


class Sorted(NamedTuple):
    """What PyTorch's ``max``/``min`` with a dim and ``sort`` return: `values`, `indices`."""

    values: Tensor
    indices: Tensor


def _picked(x: TensorBase, indices: TensorBase, dim: int) -> Sorted:
    """The elements of `x` at `indices` along `dim` (of `x`'s shape), and the indices: the
    gradient goes to the elements picked."""
    if x.ndim == 0:
        return Sorted(ops.clone(x), indices)
    return Sorted(manipulation.take_along_axis(x, indices, axis=dim), indices)


def _extremum(reduce: Callable, position: Callable, pairwise: Callable) -> Callable:
    """max/min as PyTorch's methods: of all elements; ``(values, indices)`` along a dim, the
    gradient going to the element each index names (the first of ties); elementwise against
    another tensor."""

    def method(
        self: Tensor, dim: Any = None, keepdim: bool = False, *, axis: int | None = None, keepdims: bool = False
    ) -> Any:
        if isinstance(dim, TensorBase):
            return pairwise(self, dim)
        dim = axis if dim is None else dim
        if dim is None:
            return reduce(self)
        if self.ndim == 0:
            return _one_element(self, dim)
        indices = position(self, axis=dim, keepdims=True)
        values = manipulation.take_along_axis(self, indices, axis=dim)
        if not (keepdim or keepdims):
            values, indices = ops.squeeze(values, dim), ops.squeeze(indices, dim)
        return Sorted(values, indices)

    return method


def _one_element(x: TensorBase, dim: int) -> Sorted:
    """A 0-d tensor reduced along `dim` (0 or -1, as PyTorch allows): its value, at index 0."""
    if dim not in (0, -1):
        raise IndexError(f"dim {dim} is out of range for a 0-d tensor (0 or -1)")
    return Sorted(ops.clone(x), ops.reshape(searching.argmax(ops.reshape(x, (1,))), ()))


def _positions(x: TensorBase, dim: int, index: TensorBase) -> Any:
    """Where each element of `index` points in `x` flattened (1-D, raw int64): its own
    coordinates, with its value in place of the one along `dim` (scatter's and gather's rule)."""
    backend, xp, dim = x.backend, x.backend.xp, dim % x.ndim
    if index.ndim != x.ndim or any(n > m for d, (n, m) in enumerate(zip(index.shape, x.shape)) if d != dim):
        raise ValueError(f"index of shape {index.shape} does not fit a tensor of shape {x.shape} along dim {dim}")
    if index.numel() and not backend.is_traced(index.array):
        low, high = backend.value_range(index.array)
        if low < 0 or high >= x.shape[dim]:
            raise IndexError(f"index values must lie in [0, {x.shape[dim]}) along dim {dim}, got {low} to {high}")
    int64 = backend.dtype("int64")
    flat = xp.zeros(tuple(index.shape), dtype=int64, device=backend.device)
    for d, n in enumerate(index.shape):
        along = tuple(-1 if e == d else 1 for e in range(index.ndim))
        coordinate = xp.astype(index.array, int64) if d == dim else xp.reshape(xp.arange(n, dtype=int64), along)
        flat = flat + coordinate * math.prod(x.shape[d + 1 :])
    return xp.reshape(flat, (-1,))


def _scattered(x: TensorBase, dim: int, index: TensorBase, src: TensorBase) -> Tensor:
    """Zeros of `x`'s shape with `src` (its part of `index`'s shape) added where `index` points."""
    values = ops.reshape(src[tuple(slice(0, n) for n in index.shape)], (-1,))
    summed = index_add.bind(values, (x.numel(),), 0, _positions(x, dim, index))
    return ops.reshape(summed, x.shape)


def _add_at(values: TensorBase, size: int, positions: Any) -> Tensor:
    """A 1-D tensor of `size` zeros with each of `values` added at its raw position."""
    return index_add.bind(values, (size,), 0, positions)


def _segments(positions: Any, values: Any, backend: backends.Backend) -> tuple[Any, Any, Any]:
    """The order that sorts `positions` (raw, 1-D), ties by `values` ascending when given,
    and where each run of equal positions starts and ends in that order."""
    xp = backend.xp
    order = xp.argsort(positions, stable=True)
    if values is not None:
        by_value = xp.argsort(values, stable=True)
        order = xp.take(by_value, xp.argsort(xp.take(positions, by_value), stable=True))
    ordered = xp.take(positions, order)
    change = ordered[1:] != ordered[:-1]
    edge = xp.ones((1,), dtype=change.dtype, device=backend.device)
    return order, xp.concat([edge, change]), xp.concat([change, edge])


def _scatter_sum(flat: Tensor, values: Tensor, positions: Any, count: Tensor, include_self: bool) -> Tensor:
    return _add_at(values, flat.shape[0], positions) + (flat if include_self else creation.zeros_like(flat))


def _scatter_mean(flat: Tensor, values: Tensor, positions: Any, count: Tensor, include_self: bool) -> Tensor:
    total = _scatter_sum(flat, values, positions, count, include_self)
    n = ops.maximum(count + int(include_self), 1)  # positions no index names keep `flat` anyway
    return total / n if flat.dtype.is_floating_point else ops.floor_divide(total, n)


def _scatter_prod(flat: Tensor, values: Tensor, positions: Any, count: Tensor, include_self: bool) -> Tensor:
    """Each position's product by a segmented running product over the values sorted by
    position: multiplications only, so its gradient is right where values are zero, to every
    order."""
    xp = flat.backend.xp
    order, starts, ends = _segments(positions, None, flat.backend)
    running = statistics.segmented_cumulative_prod(ops.take(values, order), starts)
    last = xp.nonzero(ends)[0]
    product = _add_at(ops.take(running, last), flat.shape[0], xp.take(xp.take(positions, order), last))
    product = ops.where(count > 0, product, creation.ones_like(product))
    return product * flat if include_self else product


def _scatter_extreme(largest: bool) -> Callable:
    """amax/amin: the extreme's value, and a gradient shared evenly among the elements equal
    to it (`self`'s included), as PyTorch's."""

    def reduce(flat: Tensor, values: Tensor, positions: Any, count: Tensor, include_self: bool) -> Tensor:
        xp, size = flat.backend.xp, flat.shape[0]
        sign = 1 if largest else -1  # the minimum is the negated maximum of the negated values
        signed = values.array * sign
        order, _, ends = _segments(positions, signed, flat.backend)
        last = xp.take(order, xp.nonzero(ends)[0])
        wrap = lambda a: Tensor._wrap(a, flat.backend)  # noqa: E731
        extreme = _add_at(wrap(xp.take(signed, last)), size, xp.take(positions, last)).array
        if include_self:
            extreme = xp.where(count.array > 0, xp.maximum(extreme, flat.array * sign), flat.array * sign)
        extreme = extreme * sign
        tied = wrap(xp.astype(xp.take(extreme, positions) == values.array, flat.array.dtype))
        self_tied = wrap(xp.astype((extreme == flat.array) & (count.array > 0), flat.array.dtype) * int(include_self))
        ties = ops.maximum(_add_at(tied, size, positions) + self_tied, 1)
        shared = _add_at(values * tied / ops.take(ties, positions), size, positions) + flat * self_tied / ties
        return wrap(extreme) + (shared - shared.detach())  # the exact value, the gradient of `shared`

    return reduce


SCATTER_REDUCTIONS = {
    "sum": _scatter_sum,
    "prod": _scatter_prod,
    "mean": _scatter_mean,
    "amax": _scatter_extreme(largest=True),
    "amin": _scatter_extreme(largest=False),
}


def _along_dim(index: Any, dim: int, shape: tuple[int, ...]) -> TensorBase:
    """A 1-D `index` along `dim`, repeated over the other dimensions of `shape` (index_add's
    and index_copy's index, in scatter's form)."""
    index = index if isinstance(index, TensorBase) else creation.asarray(index)
    if index.ndim > 1:
        raise ValueError(f"the index must be 1-D (or 0-d), got shape {index.shape}")
    count = index.numel()
    along = tuple(count if d == dim else 1 for d in range(len(shape)))
    return ops.broadcast_to(ops.reshape(index, along), tuple(count if d == dim else n for d, n in enumerate(shape)))


def _diagonal_matrices(x: TensorBase, offset: int) -> Tensor:
    """Square matrices over the last dimension of `x` with it on diagonal `offset`, zeros
    elsewhere (PyTorch's ``diag`` of a vector and ``diag_embed``)."""
    n = x.shape[-1] + abs(offset)
    pad = creation.zeros((*x.shape[:-1], abs(offset)), dtype=x.dtype, device=x.device)
    padded = ops.concat([x, pad], axis=-1)
    along = ops.expand_dims(padded, axis=-1 if offset >= 0 else -2)  # the value of row i, or of column j
    return creation.eye(n, n, k=offset, dtype=x.dtype, device=x.device) * along


def _backend_for(backend: backends.Backend, library: str | None, device: Any) -> backends.Backend:
    """Where ``to`` moves a tensor on `backend`: `device` (a `Device`, or a device of `library`,
    else of `backend`'s library)."""
    if isinstance(device, Device):
        return device.backend
    if library is not None and library != backend.name:
        backend = backends.get(library)
    return backends.on_device(backend, device)


# Held by every in-place change for its read, compute and rebind (a view's change takes it again
# for its base's): changes from several threads then never overwrite each other's, as with
# numpy's arrays. Re-entrant, as a view's change recurses into its base's.
_IN_PLACE = threading.RLock()
_OUTSIDE_THE_GRAPH = ("detach", "data")  # the view steps whose tensors the graph does not see


def _output_kept_apart(new: TensorBase) -> TensorBase:
    """What a tensor changed in place to `new` takes the graph of: `new` itself, or, when its
    VJPs read their output (``exp_``, ``**=``), an alias of it, so that the saved output stays
    `new`'s and the change that makes it, or a later one under `no_grad`, leaves it alone."""
    return registry.ALIAS.bind(new) if new._vjps and new._saved[1] else new


def _method_in_place(f: Callable) -> Callable:
    """The in-place form ``t.f_(...)`` of an out-of-place method."""
    return lambda self, *args, **options: self._update(lambda old: f(old, *args, **options))


def _sizes(args: tuple) -> tuple[int, ...]:
    """Accept both f(2, 3) and f((2, 3)), as PyTorch does."""
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)


def _drawn_in_place(sample: Callable) -> Callable:
    """The in-place sampler ``t.f_(...)``: its values replaced by ``sample(t, ...)``, draws of
    its shape and dtype, recorded with a zero gradient for its former values (as PyTorch's)."""
    return lambda self, *args, **options: self._update(
        lambda old: random.with_zero_gradient(sample(old, *args, **options), old)
    )


def _cast_to(dtype: str) -> Callable:
    """``t.float()`` and the like: `t` in `dtype` (itself when it is); `memory_format` changes
    nothing here, where tensors are laid out by their library."""
    return lambda self, memory_format=None: ops._cast(self, dtype)


def _new_like(make: Callable) -> Callable:
    """``t.new_zeros(*size)`` and the like: ``make(shape, dtype=, device=, requires_grad=)``
    in `t`'s dtype and on its device unless told otherwise."""

    def new(
        self: Tensor,
        *size: Any,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        layout: Any = None,
        pin_memory: bool = False,
    ) -> Tensor:
        device = self.device if device is None else Device(_backend_for(self.backend, None, device))
        dtype = self.dtype if dtype is None else dtype
        return make(_sizes(size), dtype=dtype, device=device, requires_grad=requires_grad)

    return new


def _scalar_dim(x: TensorBase, dim: int | None) -> int | None:
    """`dim` of `x`; of a 0-d tensor, dim 0 or -1 is the whole tensor (None), as in PyTorch."""
    if x.ndim == 0 and dim is not None:
        if dim not in (0, -1):
            raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
        return None
    return dim


class Tensor(TensorBase, GraphFields):
    """An array on some backend that can record the operations made from it: the standard's
    array object, with PyTorch's methods under PyTorch's names.

    >>> import autograd_core as ag
    >>> x = ag.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad.tolist()
    [2.0, 4.0, 6.0]
    """

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        backend = backends.current()
        self._reset(to_array(data, backend, dtype), backend)
        if requires_grad:
            self.requires_grad_()

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        """`autograd_core`, whichever backend holds the values."""
        if api_version is not None and api_version not in SUPPORTED_API_VERSIONS:
            raise ValueError(f"api_version {api_version!r} is not supported; use one of {SUPPORTED_API_VERSIONS}")
        return tensor_namespace()

    def to_device(self, device: Any, /, *, stream: Any = None) -> Tensor:
        """The same values on `device` of this tensor's backend (differentiable)."""
        return ops.to_backend(self, _backend_for(self.backend, None, device))

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Tensor | list[Tensor] | None = None,
    ) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad``; with `inputs`, into theirs
        alone (leaves or not).

        `gradient` is the vector of the vector-Jacobian product; it may be omitted only for a
        tensor with one element. The graph's saved tensors are released afterwards unless
        `retain_graph=True`. With `create_graph=True` the gradients are themselves recorded,
        so they can be differentiated again (and the graph is retained).
        """
        engine.backward(self, gradient, retain_graph, create_graph, inputs)

    # `grad` and `requires_grad` check what they are asked, as PyTorch's do, over the graph
    # fields the compiled record and sweep read and write directly (so no op pays for the checks)
    _grad_field, _requires_grad_field = engine.stored("grad"), engine.stored("requires_grad")

    @property
    def grad(self) -> Tensor | None:
        """The gradient backward accumulated: a leaf's, or a non-leaf's that called
        `retain_grad` (or was an input of ``backward(inputs=...)``). Any other non-leaf has
        none: reading it warns, as in PyTorch.

        >>> import autograd_core as ag
        >>> x = ag.tensor([1.0], requires_grad=True)
        >>> (x * 3).sum().backward()
        >>> x.grad.tolist()
        [3.0]
        """
        grad = Tensor._grad_field[0](self)
        if grad is None and self._vjps != () and not self.retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
                "won't be populated during backward(). If you want the gradient of a non-leaf Tensor, call "
                ".retain_grad() on it before backward, or pass it in backward(inputs=...).",
                UserWarning,
                stacklevel=2,
            )
        return grad

    grad = grad.setter(_grad_field[1])

    def _set_requires_grad(self, requires_grad: bool) -> None:
        if self._vjps != () and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        if requires_grad and not Tensor._requires_grad_field[0](self) and not self.dtype.is_floating_point:
            raise RuntimeError(f"only Tensors of floating point dtype can require gradients, not {self.dtype}")
        Tensor._requires_grad_field[1](self, requires_grad)

    requires_grad = property(_requires_grad_field[0], _set_requires_grad, doc="Whether ops on it are recorded.")

    def detach_(self) -> Tensor:
        """Cut this tensor from the graph in place: it becomes a leaf that requires no grad, as
        with PyTorch's (which refuses it on a view, as here). The ops recorded from it before
        still send their gradient through the graph it had, also those that saved it (which
        PyTorch refuses: here its values are unchanged).

        >>> import autograd_core as ag
        >>> y = ag.tensor([1.0], requires_grad=True) * 2
        >>> y.detach_().is_leaf, y.requires_grad
        (True, False)
        """
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        old = _with_graph_of(self)
        _take_graph(self, TensorBase._wrap(self.array, self.backend))
        EPOCH[0] += 1  # the ops recorded until now look up the graph it had (its values are unchanged)
        _keep_former_graph(self, old)
        self.requires_grad = False
        return self

    # --- storage: PyTorch's .data and detach(), which share values with the tensor ----------
    @property
    def data(self) -> Tensor:
        """The same values as a tensor outside the graph, sharing them with this one (PyTorch's
        ``.data``): an in-place change through it is seen here, and autograd is not told of it
        (unlike ``detach()``, whose changes count in the version the backward checks).

        >>> import autograd_core as ag
        >>> w = ag.ones(2, requires_grad=True)
        >>> _ = w.data.mul_(3)
        >>> w.tolist(), w.requires_grad
        ([3.0, 3.0], True)
        """
        return ops._view(Tensor._wrap(self.array, self.backend), self, ("data", None))

    @data.setter
    def data(self, value: Tensor) -> None:
        """``t.data = other``: `t` takes `other`'s values (any shape or dtype), keeping its graph."""
        if not isinstance(value, TensorBase):
            raise TypeError(
                f"Tensor.data takes a Tensor, not {type(value).__name__}; wrap the values with "
                "autograd_core.asarray(...) first (or assign the backend's own array to .array)"
            )
        if value.backend is not self.backend:
            raise TypeError(
                f"Tensor.data: the new values are on {value.backend}, this tensor on {self.backend}; "
                "move them first with .to(t.device)"
            )
        self._base, self._steps = None, None  # a view leaves its base's storage, as in PyTorch
        self._take_array(value.array)

    def _take_array(self, array: Any, counted: bool = False) -> None:
        """Hold `array` (of this backend) as the values from now on, the views of this tensor
        seeing them: what ``.data =``, initializers and running statistics do. `counted`: the
        version goes up, as for the in-place change under `no_grad` PyTorch makes there."""
        with _IN_PLACE:
            reshaped = tuple(array.shape) != self.shape
            self.array = array
            if counted:
                bump_version(self)
            if self._views:
                if reshaped:
                    self._views = None  # views of the old shape cannot be made of the new one
                else:
                    self._refresh_views()

    def detach(self) -> Tensor:
        """The same values, cut from the graph, sharing them with this tensor (as PyTorch's):
        an in-place change through either is seen by both, and counts in the version that
        backward checks.

        >>> import autograd_core as ag
        >>> x = ag.zeros(2)
        >>> _ = x.detach().add_(1)
        >>> x.tolist()
        [1.0, 1.0]
        """
        return ops._view(Tensor._wrap(self.array, self.backend), self, ("detach", None))

    def _update(self, op: Callable[[Tensor], Tensor], counted: bool = True) -> Tensor:
        """Replace this tensor's value by ``op(old value)``, keeping the object.

        The old value and graph move to a new tensor, so a VJP that saved this tensor before
        the change sees the bumped version and refuses to run on the new values, and ops
        recorded before it keep sending their gradient to the old graph. A view's change is
        written into its base; a base's change reaches its views (as in PyTorch). Under
        `no_grad` the change is invisible to autograd, as in PyTorch: the tensor keeps its graph,
        and only its version tells the VJPs that saved it. `counted=False` (a change made
        through ``.data``) leaves the version alone too.
        """
        if self.requires_grad and self.is_leaf and grad_mode.state.enabled:
            raise RuntimeError(
                "a leaf tensor that requires grad is used in an in-place operation; "
                "do it inside `with autograd_core.no_grad():` or use an out-of-place operation"
            )
        with _IN_PLACE:
            old = _with_graph_of(self)
            new = op(old)
            if new.shape != self.shape:
                raise RuntimeError(f"an in-place operation cannot change the shape {self.shape} to {new.shape}")
            if self._base is not None:
                return self._write_through(new)
            self.array = self.backend.xp.astype(new.array, self.array.dtype, copy=False)
            if counted:
                bump_version(self)
            if grad_mode.state.enabled:
                _take_graph(self, _output_kept_apart(new))
                self.requires_grad = self.requires_grad or new.requires_grad
                _keep_former_graph(self, old)
            if self._views:
                self._refresh_views()
            return self

    def _write_through(self, new: Tensor) -> Tensor:
        """A view's new value `new`, written into its base (which then refreshes this view).
        Through a ``detach()`` or ``.data`` the base's graph is left as it was."""
        if self._steps is None:
            raise RuntimeError(
                f"an in-place operation on a view made by {self._op or 'an op'} cannot reach its "
                "base; .clone() the view first"
            )
        steps, values = self._steps, ops._cast(new, self.dtype)
        kinds = {kind for kind, _ in steps}

        def write(base: Tensor) -> Tensor:
            return ops._write_view(base, steps, values)

        if kinds.isdisjoint(_OUTSIDE_THE_GRAPH):
            self._base._update(write)
        else:
            with grad_mode.no_grad():
                self._base._update(write, counted="data" not in kinds)
        return self

    def _refresh_views(self) -> None:
        """Give every live view of this base its values and graph as made from the base now
        (a view outside the graph, of ``detach()`` or ``.data``, its values only)."""
        views, self._views = self._views, None
        alive = []
        for ref in views:
            view = ref()
            if view is None or view._base is not self:
                continue
            fresh = ops._replay_view(self, view._steps)
            if grad_mode.state.enabled and view._steps[-1][0] not in _OUTSIDE_THE_GRAPH:
                old = _with_graph_of(view)
                view.requires_grad = fresh.requires_grad
                _take_graph(view, fresh)
                _keep_former_graph(view, old)
            view.array = fresh.array
            alive.append(ref)
        self._views = [*alive, *(self._views or ())]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._update(lambda old: ops.index_put(old, key, value))

    def copy_(self, source: Any) -> Tensor:
        """Overwrite the values with `source` (a tensor or scalar, broadcast to this shape)."""
        if not isinstance(source, Tensor):
            source = Tensor._wrap(to_array(source, self.backend, self.dtype), self.backend)
        ops.common_backend("copy_", self, source)
        return self._update(lambda old: ops.clone(ops.broadcast_to(ops._cast(source, old.dtype), old.shape)))

    def zero_(self) -> Tensor:
        return self.copy_(0)

    def fill_(self, value: float) -> Tensor:
        return self.copy_(value)

    def __hash__(self) -> int:  # __eq__ is elementwise; a tensor hashes by identity
        return id(self)

    # --- the standard's operators --------------------------------------------------------
    __add__ = _operator(ops.add)
    __radd__ = _reflected(ops.add)
    __iadd__ = _in_place(ops.add)
    __sub__ = _operator(ops.subtract)
    __rsub__ = _reflected(ops.subtract)
    __isub__ = _in_place(ops.subtract)
    __mul__ = _operator(ops.multiply)
    __rmul__ = _reflected(ops.multiply)
    __imul__ = _in_place(ops.multiply)
    __truediv__ = _operator(ops.divide)
    __rtruediv__ = _reflected(ops.divide)
    __itruediv__ = _in_place(ops.divide)
    __floordiv__ = _operator(ops.floor_divide)
    __rfloordiv__ = _reflected(ops.floor_divide)
    __ifloordiv__ = _in_place(ops.floor_divide)
    __mod__ = _operator(ops.remainder)
    __rmod__ = _reflected(ops.remainder)
    __imod__ = _in_place(ops.remainder)
    __pow__ = _operator(ops.pow)
    __rpow__ = _reflected(ops.pow)
    __ipow__ = _in_place(ops.pow)
    __matmul__ = _operator(ops.matmul)
    __rmatmul__ = _reflected(ops.matmul)
    __imatmul__ = _in_place(ops.matmul)
    __and__ = _operator(ops.bitwise_and)
    __rand__ = _reflected(ops.bitwise_and)
    __iand__ = _in_place(ops.bitwise_and)
    __or__ = _operator(ops.bitwise_or)
    __ror__ = _reflected(ops.bitwise_or)
    __ior__ = _in_place(ops.bitwise_or)
    __xor__ = _operator(ops.bitwise_xor)
    __rxor__ = _reflected(ops.bitwise_xor)
    __ixor__ = _in_place(ops.bitwise_xor)
    __lshift__ = _operator(ops.bitwise_left_shift)
    __rlshift__ = _reflected(ops.bitwise_left_shift)
    __ilshift__ = _in_place(ops.bitwise_left_shift)
    __rshift__ = _operator(ops.bitwise_right_shift)
    __rrshift__ = _reflected(ops.bitwise_right_shift)
    __irshift__ = _in_place(ops.bitwise_right_shift)
    __neg__ = ops.negative
    __pos__ = ops.positive
    __abs__ = elementwise.abs
    __invert__ = ops.bitwise_invert
    __getitem__ = ops.getitem
    __lt__ = ops.less
    __le__ = ops.less_equal
    __gt__ = ops.greater
    __ge__ = ops.greater_equal

    def __eq__(self, other: Any) -> Any:  # a tensor is never None (PyTorch's answer, not an error)
        return False if other is None else ops.equal(self, other)

    def __ne__(self, other: Any) -> Any:
        return True if other is None else ops.not_equal(self, other)

    # --- elementwise methods -------------------------------------------------------------
    exp = elementwise.exp
    log = elementwise.log
    log1p = elementwise.log1p
    sqrt = elementwise.sqrt
    tanh = elementwise.tanh
    sigmoid = elementwise.sigmoid
    relu = elementwise.relu
    abs = elementwise.abs
    erf = elementwise.erf
    sin = elementwise.sin
    cos = elementwise.cos
    floor = elementwise.floor
    ceil = elementwise.ceil
    trunc = elementwise.trunc
    sign = elementwise.sign
    square = elementwise.square
    reciprocal = elementwise.reciprocal
    tan = elementwise.tan
    sinh = elementwise.sinh
    cosh = elementwise.cosh
    asin = elementwise.asin
    acos = elementwise.acos
    atan = elementwise.atan
    asinh = elementwise.asinh
    acosh = elementwise.acosh
    atanh = elementwise.atanh
    expm1 = elementwise.expm1
    exp2 = elementwise.exp2
    log2 = elementwise.log2
    log10 = elementwise.log10
    isnan = ops.isnan
    isinf = ops.isinf
    isfinite = ops.isfinite
    maximum = ops.maximum
    minimum = ops.minimum
    matmul = ops.matmul
    pow = ops.pow
    conj = elementwise.conj
    astype = ops.astype
    broadcast_to = ops.broadcast_to
    clip = ops.clip
    masked_fill = manipulation.masked_fill
    clamp = ops.clip
    real = property(elementwise.real)
    imag = property(elementwise.imag)

    # --- special functions, under PyTorch's names ----------------------------------------------
    digamma = special.digamma
    erfc = special.erfc
    erfinv = special.erfinv
    i0 = special.i0
    igamma = special.gammainc
    igammac = special.gammaincc
    lgamma = special.gammaln
    sinc = special.sinc
    xlogy = special.xlogy

    def logit(self, eps: float | None = None) -> Tensor:
        return special.logit(self, eps)

    def polygamma(self, n: int) -> Tensor:
        return special.polygamma(n, self)

    def mvlgamma(self, p: int) -> Tensor:
        return special.multigammaln(self, p)

    # --- shapes, under PyTorch's names and signatures ---------------------------------------
    clone = ops.clone
    flatten = ops.flatten
    swapaxes = transpose = ops.swapaxes
    mT = property(ops.matrix_transpose)  # noqa: N815 - the standard's name

    adjoint = manipulation.adjoint
    mH = property(manipulation.adjoint)  # noqa: N815 - PyTorch's name
    H = property(manipulation.conj_transpose)

    @property
    def T(self) -> Tensor:  # noqa: N802 - the standard's name
        return ops.permute_dims(self, tuple(reversed(range(self.ndim))))

    def reshape(self, *shape: Any) -> Tensor:
        return ops.reshape(self, _sizes(shape))

    def view(self, *shape: Any) -> Tensor:
        """The same elements in a new shape, always sharing them with this tensor (``reshape``
        copies where it must; ``view`` refuses there, as PyTorch's does)."""
        out = ops.reshape(self, _sizes(shape))
        if out is not self and out._base is None and self._base is not None:
            raise RuntimeError(
                f"view: a tensor of shape {self.shape} whose elements are laid out by transposes, "
                f"steps or broadcasting cannot be viewed as {out.shape}; use .reshape(...) instead"
            )
        return out

    def is_contiguous(self) -> bool:
        return ops.is_contiguous(self)

    def permute(self, *axes: Any) -> Tensor:
        return ops.permute_dims(self, _sizes(axes))

    def expand(self, *sizes: Any) -> Tensor:
        """`self` broadcast to `sizes`; -1 keeps a dimension's size, as in PyTorch."""
        sizes = _sizes(sizes)
        new = len(sizes) - self.ndim
        if new < 0 or -1 in sizes[:new]:
            raise ValueError(
                f"expand: sizes {sizes} for a tensor of shape {self.shape}: -1 only keeps an existing dimension"
            )
        return ops.broadcast_to(self, tuple(self.shape[i - new] if n == -1 else n for i, n in enumerate(sizes)))

    def unsqueeze(self, dim: int) -> Tensor:
        return ops.expand_dims(self, axis=dim)

    def squeeze(self, dim: Any = None) -> Tensor:
        """Without the given dims (all when None) that have size 1; a dim of another size is
        kept, as in PyTorch."""
        if dim is None or self.ndim == 0:
            return ops.squeeze(self, None)
        dims = tuple(d % self.ndim for d in (dim if isinstance(dim, (tuple, list)) else (dim,)) if self.shape[d] == 1)
        return ops.squeeze(self, dims) if dims else self

    def flip(self, *dims: Any, **named: Any) -> Tensor:
        """The elements reversed along `dims` (given as ``flip(0, 1)``, ``flip((0, 1))`` or ``dims=``)."""
        if not dims and set(named) != {"dims"}:
            raise TypeError(f"flip() takes the dims to reverse (positional or dims=), got {sorted(named)}")
        return manipulation.flip(self, axis=_sizes(dims) if dims else tuple(named["dims"]))

    def split(self, split_size: Any, dim: int = 0) -> Any:
        return manipulation.split(self, split_size, axis=dim)

    def chunk(self, chunks: int, dim: int = 0) -> Any:
        return manipulation.chunk(self, chunks, axis=dim)

    def unbind(self, dim: int = 0) -> Any:
        return manipulation.unstack(self, axis=dim)

    def contiguous(self) -> Tensor:
        """This tensor, or where its elements are not laid out in row-major order, a copy (PyTorch's)."""
        return self if ops.is_contiguous(self) else registry.ALIAS.bind(self)

    def tril(self, diagonal: int = 0) -> Tensor:
        return creation.tril(self, k=diagonal)

    def triu(self, diagonal: int = 0) -> Tensor:
        return creation.triu(self, k=diagonal)

    def roll(self, shifts: Any, dims: Any = None) -> Tensor:
        return manipulation.roll(self, shifts, axis=dims)

    unfold = manipulation.unfold

    # --- indexing, under PyTorch's names ------------------------------------------------------
    gather = manipulation.gather

    @manipulation.scalar_as_vector(1)
    def scatter_add(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        """`self` with each element of `src` added at the position `index` names along `dim`
        (repeats add up), differentiable in both (PyTorch's ``scatter_add``)."""
        return self + _scattered(self, dim, index, src)

    @manipulation.scalar_as_vector(1)
    def scatter(self, dim: int, index: Tensor, src: Any = None, *, value: Any = None) -> Tensor:
        """`self` with `src` (or the scalar `value`) written at the positions `index` names
        along `dim`; a position named twice is refused (PyTorch leaves it unspecified)."""
        src = value if src is None else src
        if not isinstance(src, TensorBase):
            src = creation.full(tuple(index.shape), src, dtype=self.dtype, device=self.device)
        positions = _positions(self, dim, index)
        if not self.backend.is_traced(positions):
            named = self.backend.to_numpy(positions)
            if len(np.unique(named)) < len(named):
                raise ValueError("scatter: index names a position twice; use scatter_add to add the values that meet")
        ones = creation.ones(tuple(index.shape), dtype=self.dtype, device=self.device)
        hit = _scattered(creation.zeros_like(self), dim, index, ones) > 0
        return ops.where(hit, _scattered(self, dim, index, src), self)

    @manipulation.scalar_as_vector(1)
    def scatter_reduce(self, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True) -> Tensor:
        """`self` with the elements of `src` that `index` sends to each position along `dim`
        combined by `reduce` ("sum", "prod", "mean", "amax" or "amin"), with `self`'s own value
        too when `include_self`; positions no index names keep `self`'s value. Gradients as
        PyTorch's: amax/amin share among tied elements, prod is right at zeros.

        >>> import autograd_core as ag
        >>> x = ag.tensor([1.0, 2.0, 3.0])
        >>> x.scatter_reduce(0, ag.asarray([0, 0, 2]), ag.tensor([5.0, 7.0, 1.0]), "amax").tolist()
        [7.0, 2.0, 3.0]
        """
        if reduce not in SCATTER_REDUCTIONS:
            raise ValueError(f"scatter_reduce: reduce must be one of {sorted(SCATTER_REDUCTIONS)}, not {reduce!r}")
        dim = dim % max(self.ndim, 1)
        if index.numel() == 0:  # no position named: every one keeps self's value
            return ops.clone(self)
        positions = _positions(self, dim, index)
        values = ops.reshape(src[tuple(slice(0, n) for n in index.shape)], (-1,))
        flat = ops.reshape(self, (-1,))
        ones = creation.ones(tuple(values.shape), dtype=self.dtype, device=self.device)
        count = _add_at(ones, flat.shape[0], positions)
        reduced = SCATTER_REDUCTIONS[reduce](flat, ops._cast(values, self.dtype), positions, count, include_self)
        return ops.reshape(ops.where(count > 0, ops._cast(reduced, self.dtype), flat), self.shape)

    @manipulation.scalar_as_vector(1)
    def index_add(self, dim: int, index: Tensor, source: Tensor, *, alpha: float = 1) -> Tensor:
        """`self` with ``alpha * source[..., i, ...]`` added at ``index[i]`` along `dim` (repeats add up)."""
        dim = dim % max(self.ndim, 1)
        added = _scattered(self, dim, _along_dim(index, dim, tuple(source.shape)), source)
        return self + (added if alpha == 1 else alpha * added)

    @manipulation.scalar_as_vector(1)
    def index_copy(self, dim: int, index: Tensor, source: Tensor) -> Tensor:
        """`self` with ``source[..., i, ...]`` written at ``index[i]`` along `dim` (an index
        named twice is refused)."""
        dim = dim % max(self.ndim, 1)
        return self.scatter(dim, _along_dim(index, dim, tuple(source.shape)), source)

    @manipulation.scalar_as_vector(0)
    def index_fill(self, dim: int, index: Tensor, value: Any) -> Tensor:
        """`self` with `value` at every ``index[i]`` along `dim`."""
        dim = dim % max(self.ndim, 1)
        at = _along_dim(index, dim, self.shape)
        hit = _scattered(creation.zeros_like(self), dim, at, creation.ones(at.shape, dtype=self.dtype)) > 0
        return manipulation.masked_fill(self, hit, value)

    masked_scatter = manipulation.masked_scatter
    index_select = manipulation.index_select

    @manipulation.scalar_as_vector(1)
    def index_reduce(
        self, dim: int, index: Tensor, source: Tensor, reduce: str, *, include_self: bool = True
    ) -> Tensor:
        """`self` with the slices of `source` that `index` sends to each slice along `dim`
        combined by `reduce` ("prod", "mean", "amax" or "amin"), as `scatter_reduce`."""
        dim = dim % self.ndim
        along = _along_dim(index, dim, tuple(source.shape))
        return self.scatter_reduce(dim, along, source, reduce, include_self=include_self)

    put = manipulation.put
    index_put = manipulation.index_put
    take_along_dim = manipulation.take_along_dim
    nonzero_static = manipulation.nonzero_static
    unique_consecutive = manipulation.unique_consecutive
    select_scatter = manipulation.select_scatter
    slice_scatter = manipulation.slice_scatter
    diagonal_scatter = manipulation.diagonal_scatter
    diagflat = manipulation.diagflat
    ravel = manipulation.ravel
    kron = manipulation.kron
    rot90 = manipulation.rot90
    hsplit, vsplit, dsplit = manipulation.hsplit, manipulation.vsplit, manipulation.dsplit

    def sum_to_size(self, *size: Any) -> Tensor:
        return manipulation.sum_to_size(self, _sizes(size))

    def argwhere(self) -> Tensor:
        return manipulation.nonzero(self)

    def masked_select(self, mask: Tensor) -> Tensor:
        """The elements where `mask` (broadcast with `self`) is True, as a 1-D tensor."""
        shape = ops._broadcast_shapes(self.shape, tuple(mask.shape))
        return ops.getitem(ops.broadcast_to(self, shape), ops.broadcast_to(mask, shape))

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        """``self / other``; rounding_mode "floor" or "trunc" rounds the quotient, in the
        integer dtype for integer operands (PyTorch's ``div``)."""
        if rounding_mode is None:
            return ops.divide(self, other)
        if rounding_mode == "floor":
            return ops.floor_divide(self, other)
        if rounding_mode != "trunc":
            raise ValueError(f"div: rounding_mode must be None, 'floor' or 'trunc', not {rounding_mode!r}")
        if (
            self.dtype.is_floating_point
            or isinstance(other, float)
            or (isinstance(other, TensorBase) and other.dtype.is_floating_point)
        ):
            return elementwise.trunc(ops.divide(self, other))
        floor = ops.floor_divide(self, other)  # rounds down; towards zero it is one more where inexact and negative
        inexact_negative = (ops.remainder(self, other) != 0) & ((self < 0) != (other < 0))
        return floor + ops.astype(inexact_negative, floor.dtype)

    # --- more of PyTorch's elementwise methods --------------------------------------------------
    neg = negative = ops.negative
    sgn = elementwise.sign
    remainder = ops.remainder
    mul = multiply = ops.multiply
    true_divide = divide = ops.divide
    eq = ops.equal
    ne = ops.not_equal
    lt = less = ops.less
    le = less_equal = ops.less_equal
    gt = greater = ops.greater
    ge = greater_equal = ops.greater_equal
    logical_and = ops.logical_and
    logical_or = ops.logical_or
    logical_xor = ops.logical_xor
    logical_not = ops.logical_not

    def rsqrt(self) -> Tensor:
        return elementwise.reciprocal(elementwise.sqrt(self))

    def round(self, decimals: int = 0) -> Tensor:
        """Rounded half to even, to `decimals` places (as PyTorch's)."""
        if decimals == 0:
            return elementwise.round(self)
        scale = 10.0**decimals
        return elementwise.round(self * scale) / scale

    def frac(self) -> Tensor:
        return self - elementwise.trunc(self)

    def fmod(self, other: Any) -> Tensor:
        """The remainder of the division rounded towards zero: the sign of `self` (C's fmod)."""
        return self - elementwise.trunc(self / other) * other

    def add(self, other: Any, *, alpha: float = 1) -> Tensor:
        return self + (other if alpha == 1 else alpha * other)

    def sub(self, other: Any, *, alpha: float = 1) -> Tensor:
        return self - (other if alpha == 1 else alpha * other)

    subtract = sub

    def lerp(self, end: Any, weight: Any) -> Tensor:
        return self + weight * (end - self)

    def addcmul(self, tensor1: Any, tensor2: Any, *, value: float = 1) -> Tensor:
        return self + value * tensor1 * tensor2

    def addcdiv(self, tensor1: Any, tensor2: Any, *, value: float = 1) -> Tensor:
        return self + value * tensor1 / tensor2

    def where(self, condition: Any, other: Any) -> Tensor:
        """`self` where `condition` holds, else `other` (PyTorch's argument order)."""
        return ops.where(condition, self, other)

    def nan_to_num(self, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
        """NaN, +inf and -inf replaced (by 0 and the dtype's largest and lowest finite values
        unless given); the gradient flows where the value was finite."""
        if not self.dtype.is_floating_point:
            return self
        largest = finfo(self.dtype).max
        out = ops.where(ops.isnan(self), nan, self)
        out = ops.where(out == math.inf, largest if posinf is None else posinf, out)
        return ops.where(out == -math.inf, -largest if neginf is None else neginf, out)

    def isclose(self, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
        """Whether ``|self - other| <= atol + rtol * |other|`` elementwise (equal infinities
        too, and NaNs with `equal_nan`), as PyTorch's."""
        close = (self == other) | (elementwise.abs(self - other) <= atol + rtol * elementwise.abs(other))
        return (close | (ops.isnan(self) & ops.isnan(other))) if equal_nan else close

    def allclose(self, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
        return bool(statistics.all(self.isclose(other, rtol, atol, equal_nan)))

    def equal(self, other: Tensor) -> bool:
        """Whether `other` has the same shape and values."""
        return self.shape == tuple(other.shape) and bool(statistics.all(self == other))

    # --- more of PyTorch's shape methods -------------------------------------------------------
    def dim(self) -> int:
        return self.ndim

    ndimension = dim

    def element_size(self) -> int:
        return np.dtype(self.dtype.name).itemsize

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def view_as(self, other: Tensor) -> Tensor:
        return ops.reshape(self, tuple(other.shape))

    reshape_as = view_as

    def expand_as(self, other: Tensor) -> Tensor:
        return ops.broadcast_to(self, tuple(other.shape))

    def unflatten(self, dim: int, sizes: Any) -> Tensor:
        dim = dim % self.ndim
        return ops.reshape(self, (*self.shape[:dim], *sizes, *self.shape[dim + 1 :]))

    def movedim(self, source: Any, destination: Any) -> Tensor:
        return manipulation.moveaxis(self, source, destination)

    moveaxis = movedim
    swapdims = swapaxes

    def t(self) -> Tensor:
        """The transpose of a matrix (a vector or a scalar as it is)."""
        if self.ndim > 2:
            raise ValueError(f"t() takes a tensor of at most 2 dimensions, not {self.ndim}; use transpose or mT")
        return self if self.ndim < 2 else ops.swapaxes(self, 0, 1)

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        dim = dim % self.ndim
        start = start % self.shape[dim] if start < 0 else start
        return self[(slice(None),) * dim + (slice(start, start + length),)]

    def select(self, dim: int, index: int) -> Tensor:
        return self[(slice(None),) * (dim % self.ndim) + (index,)]

    tensor_split = manipulation.tensor_split

    def repeat(self, *sizes: Any) -> Tensor:
        """The tensor tiled `sizes` times along each dimension (PyTorch's ``repeat``, numpy's ``tile``)."""
        return manipulation.tile(self, _sizes(sizes))

    def tile(self, *dims: Any) -> Tensor:
        return manipulation.tile(self, _sizes(dims))

    def repeat_interleave(self, repeats: Any, dim: int | None = None, *, output_size: int | None = None) -> Tensor:
        """Each element repeated `repeats` times along `dim` (the flattened tensor when None);
        `output_size`, the result's length there, changes nothing here (PyTorch's saves a sync)."""
        return manipulation.repeat(self, repeats, axis=dim)

    def fliplr(self) -> Tensor:
        return manipulation.flip(self, axis=1)

    def flipud(self) -> Tensor:
        return manipulation.flip(self, axis=0)

    def diag(self, diagonal: int = 0) -> Tensor:
        """A vector's diagonal matrix, or a matrix's diagonal (PyTorch's ``diag``)."""
        if self.ndim == 1:
            return _diagonal_matrices(self, diagonal)
        if self.ndim != 2:
            raise ValueError(f"diag takes a 1-D or 2-D tensor, not {self.ndim}-D")
        return linalg.diagonal(self, offset=diagonal)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        """The diagonal of the matrices over `dim1` and `dim2`, as a last dimension."""
        return linalg.diagonal(manipulation.moveaxis(self, (dim1, dim2), (-2, -1)), offset=offset)

    def diag_embed(self, offset: int = 0) -> Tensor:
        return _diagonal_matrices(self, offset)

    # --- more of PyTorch's linear algebra ---------------------------------------------------------
    mm = bmm = mv = ops.matmul

    def dot(self, other: Tensor) -> Tensor:
        if self.ndim != 1 or other.ndim != 1:
            raise ValueError(f"dot takes two 1-D tensors, not {self.ndim}-D and {other.ndim}-D; use matmul")
        return ops.sum(self * other)

    def inner(self, other: Tensor) -> Tensor:
        if self.ndim == 0 or other.ndim == 0:
            return self * other
        return linalg.tensordot(self, other, axes=((-1,), (-1,)))

    def outer(self, other: Tensor) -> Tensor:
        return linalg.outer(self, other)

    def cross(self, other: Tensor, dim: int = -1) -> Tensor:
        return linalg.cross(self, other, axis=dim)

    def trace(self) -> Tensor:
        return linalg.trace(self)

    # PyTorch's linear algebra methods (autograd_core.ops.linalg; torch.linalg's are autograd_core.torch.linalg)
    det, inverse, matrix_exp, logdet, geqrf = linalg.det, linalg.inv, linalg.matrix_exp, linalg.logdet, linalg.geqrf
    cholesky_inverse, cholesky_solve, ormqr = linalg.cholesky_inverse, linalg.cholesky_solve, linalg.ormqr
    svd, triangular_solve = linalg.svd_uv, linalg.triangular_solve

    def slogdet(self) -> Any:
        return linalg.slogdet(self)

    def matrix_power(self, n: int) -> Tensor:
        return linalg.matrix_power(self, n)

    def cholesky(self, upper: bool = False) -> Tensor:
        return linalg.cholesky(self, upper=upper)

    def qr(self, some: bool = True) -> Any:
        return linalg.qr(self, mode="reduced" if some else "complete")

    def pinverse(self, rcond: float = 1e-15) -> Tensor:
        return linalg.pinv(self, rtol=rcond)

    def lu(self, pivot: bool = True, get_infos: bool = False) -> Any:
        """``(LU, pivots)``, with the int32 `infos` (zeros) when `get_infos` (PyTorch's ``lu``)."""
        factors = linalg.lu_factor(self, pivot=pivot)
        return (*factors, linalg._info(self)) if get_infos else tuple(factors)

    def lu_solve(self, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: N803 - PyTorch's names
        return linalg.lu_solve(LU_data, LU_pivots, self)

    def addmm(self, mat1: Tensor, mat2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
        return beta * self + alpha * ops.matmul(mat1, mat2)

    # --- in place ---------------------------------------------------------------------------------
    add_ = _method_in_place(add)
    sub_ = _method_in_place(sub)
    mul_ = _method_in_place(ops.multiply)
    div_ = _method_in_place(ops.divide)
    pow_ = _method_in_place(ops.pow)
    clamp_ = clip_ = _method_in_place(ops.clip)
    masked_fill_ = _method_in_place(manipulation.masked_fill)
    exp_ = _method_in_place(elementwise.exp)
    abs_ = _method_in_place(elementwise.abs)
    neg_ = _method_in_place(ops.negative)
    sqrt_ = _method_in_place(elementwise.sqrt)
    lerp_ = _method_in_place(lerp)
    addcmul_ = _method_in_place(addcmul)
    addcdiv_ = _method_in_place(addcdiv)
    sigmoid_ = _method_in_place(elementwise.sigmoid)
    tanh_ = _method_in_place(elementwise.tanh)
    relu_ = _method_in_place(elementwise.relu)

    # --- random draws (`generator=` a Generator, else the default stream) --------------------------
    uniform_ = _drawn_in_place(random.uniform_like)
    normal_ = _drawn_in_place(random.normal_like)
    bernoulli_ = _drawn_in_place(lambda self, p=0.5, *, generator=None: random.bernoulli(self, p, generator=generator))
    exponential_ = _drawn_in_place(random.exponential)
    cauchy_ = _drawn_in_place(random.cauchy)
    geometric_ = _drawn_in_place(random.geometric)
    log_normal_ = _drawn_in_place(random.log_normal)
    random_ = _drawn_in_place(random.random_like)
    bernoulli = random.bernoulli
    multinomial = random.multinomial

    # --- new tensors like this one ----------------------------------------------------------------
    new_zeros, new_ones, new_empty = _new_like(creation.zeros), _new_like(creation.ones), _new_like(creation.empty)

    def new_full(self, size: Any, fill_value: Any, **options: Any) -> Tensor:
        return _new_like(lambda shape, **kw: creation.full(shape, fill_value, **kw))(self, tuple(size), **options)

    def new_empty_strided(self, size: Any, stride: Any, **options: Any) -> Tensor:
        """``new_empty(size)``: tensors here are laid out by their library, so `stride` is not kept."""
        return self.new_empty(tuple(size), **options)

    def new_tensor(self, data: Any) -> Tensor:
        return creation.asarray(data, dtype=self.dtype, device=self.device, copy=True)

    # --- dtypes and backends ----------------------------------------------------------------
    float, double, half = _cast_to("float32"), _cast_to("float64"), _cast_to("float16")
    long, int, short, char, byte = (_cast_to(name) for name in ("int64", "int32", "int16", "int8", "uint8"))
    cfloat, cdouble, bool = _cast_to("complex64"), _cast_to("complex128"), _cast_to("bool")

    def type_as(self, other: Tensor) -> Tensor:
        return ops._cast(self, other.dtype)

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        """The tensor cast to `dtype`; without one, the name of its dtype (PyTorch gives its
        tensor type's name, ``torch.FloatTensor``: the dtype is what it names)."""
        return str(self.dtype) if dtype is None else ops._cast(self, dtype)

    def to(
        self,
        *args: Any,
        dtype: Any = None,
        device: Any = None,
        non_blocking: bool = False,
        copy: bool = False,
        memory_format: Any = None,
    ) -> Tensor:
        """PyTorch's forms, as differentiable moves and casts: ``t.to(ag.float64)``,
        ``t.to(other)`` (other's backend and dtype), ``t.to(device)`` and ``t.to(device, dtype)``
        where a device is a tensor's ``.device``, a device of this tensor's library ("cpu",
        "cuda:0") or a backend's name ("torch"), with ``device=`` for the library's device
        (``t.to("torch", device="cuda")``). `non_blocking` and `memory_format` change nothing
        here; ``copy=True`` gives a new tensor even when nothing moves.

        >>> import autograd_core as ag
        >>> x = ag.ones(2)
        >>> x.to(x.device) is x, x.to("cpu").device == x.device
        (True, True)
        """
        library, flags = None, [arg for arg in args if isinstance(arg, bool)]  # non_blocking, copy
        copy = flags[1] if len(flags) > 1 else copy
        for arg in (arg for arg in args if not isinstance(arg, bool)):
            if isinstance(arg, TensorBase):
                device, dtype = arg.device, dtype or arg.dtype
            elif isinstance(arg, DType) or (isinstance(arg, str) and arg in DTYPES):
                dtype = arg
            elif isinstance(arg, str) and backends.canonical(arg) in backends.known():
                library = backends.canonical(arg)
            elif isinstance(arg, backends.Backend):
                library, device = arg.name, device if device is not None else arg.device
            else:
                device = arg
        out = ops.to_backend(self, _backend_for(self.backend, library, device))
        if dtype is not None:
            out = ops._cast(out, dtype)
        return ops.clone(out) if copy and out is self else out

    def cpu(self) -> Tensor:
        """The values in host memory: this tensor when they are there already."""
        return self.to("cpu")

    def cuda(self, device: Any = None) -> Tensor:
        """The values on a CUDA device of this tensor's library (``"cuda"`` or ``"cuda:N"``)."""
        return self.to(f"cuda:{device}" if isinstance(device, int) else device or "cuda")

    @property
    def is_cuda(self) -> bool:
        return self.backend.device_type == "cuda"

    # --- reductions, with PyTorch's dim/keepdim ---------------------------------------------
    sum = _reduction(ops.sum)

    def mean(
        self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, axis: Any = None, keepdims: bool = False
    ) -> Tensor:
        """The mean over `dim` (all when None), computed in `dtype` when given (as PyTorch's)."""
        x = self if dtype is None else ops._cast(self, dtype)
        return ops.mean(x, axis=axis if dim is None else dim, keepdims=keepdims or keepdim)

    max = _extremum(ops.max, searching.argmax, ops.maximum)
    min = _extremum(ops.min, searching.argmin, ops.minimum)
    logsumexp = _reduction(ops.logsumexp)
    prod = _reduction(statistics.prod)
    any = _reduction(statistics.any)
    all = _reduction(statistics.all)
    var = _spread(statistics.var)
    std = _spread(statistics.std)

    amax = _reduction(ops.max)
    amin = _reduction(ops.min)

    def nansum(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return ops.sum(ops.where(ops.isnan(self), 0.0, self), axis=dim, keepdims=keepdim)

    def nanmean(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        present = ops.astype(~ops.isnan(self), self.dtype)
        return self.nansum(dim, keepdim) / ops.sum(present, axis=dim, keepdims=keepdim)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False) -> Tensor:
        """The vector `p`-norm over `dim` (all elements when None); "fro" is the 2-norm; "nuc"
        the nuclear norm of the matrices in the last two axes (or the two of `dim`)."""
        if p == "nuc":
            dims = (-2, -1) if dim is None else tuple(dim)
            matrices = manipulation.moveaxis(self, dims, (-2, -1))
            out = linalg.matrix_norm(matrices, ord="nuc")
            return ops.expand_dims(out, axis=tuple(sorted(d % self.ndim for d in dims))) if keepdim else out
        return linalg.vector_norm(self, axis=dim, keepdims=keepdim, ord=2 if p == "fro" else p)

    def count_nonzero(self, dim: Any = None) -> Tensor:
        return ops.sum(ops.astype(self != 0, "int64"), axis=dim)

    nonzero = manipulation.nonzero

    def diff(self, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Tensor:
        return statistics.diff(self, axis=dim, n=n, prepend=prepend, append=append)

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> Sorted:
        """The `k`-th smallest value along `dim` (from 1) and its index."""
        n = self.shape[dim] if self.ndim else 1
        if not 1 <= k <= n:
            raise ValueError(f"kthvalue: k={k} is out of range for a dimension of size {n}")
        if self.ndim == 0:
            return _one_element(self, dim)
        values, indices = self.sort(dim)
        at = (slice(None),) * (dim % max(self.ndim, 1)) + (slice(k - 1, k),)
        values, indices = values[at], indices[at]
        if not keepdim:
            values, indices = ops.squeeze(values, dim), ops.squeeze(indices, dim)
        return Sorted(values, indices)

    def median(self, dim: int | None = None, keepdim: bool = False) -> Any:
        """The lower median (of all elements, or ``(values, indices)`` along `dim`), as PyTorch's."""
        if dim is None:
            return ops.reshape(self, (-1,)).median(0).values
        if self.ndim == 0:
            return _one_element(self, dim)
        values, indices = self.kthvalue((self.shape[dim] + 1) // 2, dim, keepdim=True)
        if self.dtype.is_floating_point:  # where there is a NaN, it is the median: the first one
            nan = ops.isnan(self)
            first_nan = searching.argmax(ops.astype(nan, "int8"), axis=dim, keepdims=True)
            indices = ops.where(statistics.any(nan, axis=dim, keepdims=True), first_nan, indices)
            values = manipulation.take_along_axis(self, indices, axis=dim)
        if not keepdim:
            values, indices = ops.squeeze(values, dim), ops.squeeze(indices, dim)
        return Sorted(values, indices)

    def unique(
        self,
        sorted: bool = True,  # noqa: A002 - PyTorch's name
        return_inverse: bool = False,
        return_counts: bool = False,
        dim: None = None,
    ) -> Any:
        """The distinct values, sorted, and where requested the index of each element's value
        among them and how often each occurs (PyTorch's ``unique``; outside the graph)."""
        if dim is not None:
            raise ValueError("unique: only dim=None (the flattened tensor) is supported")
        values, _, inverse, counts = searching.unique_all(self)
        extras = (inverse,) * return_inverse + (counts,) * return_counts
        return (values, *extras) if extras else values

    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Sorted:
        """The values sorted along `dim` and where each came from, as PyTorch's ``sort`` (ties
        keep their order)."""
        return _picked(self, searching.argsort(self, axis=dim, descending=descending, stable=True), dim)

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
        return searching.argsort(self, axis=dim, descending=descending, stable=True)

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        return searching.argmax(self, axis=_scalar_dim(self, dim), keepdims=keepdim)

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        return searching.argmin(self, axis=_scalar_dim(self, dim), keepdims=keepdim)

    def take(self, index: Any) -> Tensor:
        """PyTorch's ``take``: the elements of `self` read as 1-D at the integer `index`, in its shape."""
        return ops.take(ops.reshape(self, (-1,)), index)

    def cumsum(self, dim: int, *, dtype: Any = None) -> Tensor:
        return statistics.cumulative_sum(self, axis=dim, dtype=dtype)

    def cumprod(self, dim: int, *, dtype: Any = None) -> Tensor:
        return statistics.cumulative_prod(self, axis=dim, dtype=dtype)

    def cummax(self, dim: int) -> Sorted:
        """The running maximum along `dim` and where it sits (the later of ties; a NaN, once
        met, stays), the gradient going to that element, as PyTorch's ``cummax``."""
        return _picked(self, statistics.running_extreme_indices(self, dim, largest=True), dim)

    def cummin(self, dim: int) -> Sorted:
        """The running minimum along `dim` and where it sits, as `cummax`."""
        return _picked(self, statistics.running_extreme_indices(self, dim, largest=False), dim)

    def logcumsumexp(self, dim: int) -> Tensor:
        return statistics.logcumsumexp(self, axis=dim)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Sorted:  # noqa: A002
        """The `k` largest (or smallest) values along `dim` and their indices, in order."""
        if self.ndim == 0 and k == 1:
            return _one_element(self, dim)
        values, indices = self.sort(dim, descending=largest)
        first_k = (slice(None),) * (dim % self.ndim) + (slice(0, k),)
        return Sorted(values[first_k], indices[first_k])

    def softmax(self, dim: int = -1, dtype: Any = None) -> Tensor:
        return elementwise.softmax(self if dtype is None else ops._cast(self, dtype), dim)

    def log_softmax(self, dim: int = -1, dtype: Any = None) -> Tensor:
        return ops.log_softmax(self if dtype is None else ops._cast(self, dtype), dim)


use_tensor_class(Tensor)
