"""vmap's array layer: an array-API namespace that batches another one.

Inside ``vmap(f)`` every array is a `BatchedArray`: an array of the inner library whose axis 0
runs over the examples, presented as one example (its *logical* shape leaves axis 0 out).
`BatchedNamespace` is the namespace of those arrays. Each of its functions has the batching
rule of its kind (elementwise, reduction, manipulation...), written once and listed in a
table; the rule calls the inner namespace once for the whole batch. A function without a rule
runs once per example and the results are stacked (`BatchedNamespace.loop_and_stack`), with a
`BatchingFallbackWarning` the first time.

Namespaces nest (vmap of vmap): the inner namespace of one may be another, whose arrays are
then the library arrays of the outer one. Each namespace is a level of its own: an array
belongs to the namespace that made it (`BatchedArray.namespace`), and any other value, a
batched array of a lower level included, is the same for every example of this level.

>>> import numpy as np
>>> ns = BatchedNamespace(np, 3)
>>> x = BatchedArray(np.arange(6.0).reshape(3, 2), ns)
>>> x.shape, ns.sum(x).physical.tolist(), (x + 1).physical[:, 0].tolist()
((2,), [1.0, 5.0, 9.0], [1.0, 3.0, 5.0])
"""

from __future__ import annotations

import functools
import math
import operator
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = [
    "FALLBACKS_USED",
    "BatchedArray",
    "BatchedNamespace",
    "BatchedValueError",
    "BatchingFallbackWarning",
]

FALLBACKS_USED: set[str] = set()
"""The names of the functions that have run once per example for want of a batching rule."""

_PER_EXAMPLE = (
    "vmap: this value differs from example to example, so Python cannot branch on it or read it; "
    "use ag.where for data-dependent choices, or move the read outside vmap"
)


class BatchedValueError(RuntimeError):
    """A value that differs from example to example was needed as one value.

    >>> import numpy as np
    >>> bool(BatchedArray(np.zeros(2), BatchedNamespace(np, 2)))
    Traceback (most recent call last):
    ...
    autograd_core.transforms.vmap.batched.BatchedValueError: vmap: this value differs from example to example, ...
    """


class BatchingFallbackWarning(UserWarning):
    """A function without a batching rule ran once per example (warned once per function).

    >>> import numpy as np, warnings
    >>> ns = BatchedNamespace(np, 2)
    >>> FALLBACKS_USED.discard("an example")  # warned once per process: forget an earlier run
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = ns.loop_and_stack(np.sum, (ns.lift(np.ones(3)),), name="an example")
    >>> caught[0].category.__name__, "an example" in FALLBACKS_USED
    ('BatchingFallbackWarning', True)
    """


class Op(NamedTuple):
    """An inner function with the name that messages and `FALLBACKS_USED` know it by; batching
    rules receive it after the namespace.

    >>> import numpy as np
    >>> Op("sum", np.sum)(np.ones(3)).item()
    3.0
    """

    name: str
    fn: Callable[..., Any]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


def _map(f: Callable[[Any], Any], x: Any) -> Any:
    """`f` applied to the leaves of `x`, through tuples (named ones too), lists and dicts."""
    if isinstance(x, dict):
        return {k: _map(f, v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        items = [_map(f, v) for v in x]
        return type(x)._make(items) if hasattr(x, "_make") else type(x)(items)
    return f(x)


def _is_array(x: Any) -> bool:
    return hasattr(x, "shape") and not isinstance(x, type)


def _shift(axis: Any) -> Any:
    """A logical axis (or a sequence of them) as the physical one: counted past the batch axis.
    A negative axis counts from the end and stays as it is."""
    if isinstance(axis, (tuple, list)):
        return tuple(map(_shift, axis))
    return axis + 1 if axis >= 0 else axis


def _align(ns: BatchedNamespace, value: Any, rank: int) -> Any:
    """The physical `value` of a batched array with unit axes inserted after its batch axis,
    up to logical rank `rank` (right-aligned broadcasting then pairs the logical axes)."""
    missing = rank - (value.ndim - 1)
    if missing <= 0:
        return value
    return ns.inner.reshape(value, (value.shape[0], *(1,) * missing, *value.shape[1:]))


def _aligned(ns: BatchedNamespace, x: Any, rank: int) -> Any:
    """`x` as the inner function takes it: its value aligned to `rank` if batched, else itself."""
    return _align(ns, x.value, rank) if ns.is_batched(x) else x


class BatchedArray:
    """A batch of arrays presented as one example: `value` holds the examples along axis 0.

    `namespace` is the `BatchedNamespace` (the vmap level) the array belongs to; `value` is an
    array of that namespace's inner library, or a batched array of a lower level. Operators
    and methods act per example; reading a Python value (``bool(x)``, ``float(x)``) raises
    `BatchedValueError`. Arrays of numpy, torch and jax defer to it in mixed operators.

    >>> import numpy as np
    >>> ns = BatchedNamespace(np, 2)
    >>> x = BatchedArray(np.arange(6.0).reshape(2, 3), ns)
    >>> x.shape, x.ndim, x.size, x.batch_size
    ((3,), 1, 3, 2)
    >>> (np.ones(3) * x)[1:].physical.tolist()
    [[1.0, 2.0], [4.0, 5.0]]
    """

    __slots__ = ("namespace", "value")
    __array_ufunc__ = None  # numpy's operators return NotImplemented: the reflected method runs
    __array_priority__ = 1000

    def __init__(self, value: Any, namespace: BatchedNamespace) -> None:
        self.value = value
        self.namespace = namespace

    @property
    def physical(self) -> Any:
        """The inner array holding every example, the batch along axis 0 (the way out of vmap).

        >>> import numpy as np
        >>> BatchedArray(np.zeros((2, 3)), BatchedNamespace(np, 2)).physical.shape
        (2, 3)
        """
        return self.value

    @property
    def batch_size(self) -> int:
        return self.namespace.size

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.value.shape[1:])

    @property
    def ndim(self) -> int:
        return self.value.ndim - 1

    @property
    def size(self) -> int:
        """The number of elements of one example."""
        return math.prod(self.shape)

    @property
    def dtype(self) -> Any:
        return self.value.dtype

    @property
    def device(self) -> Any:
        return self.value.device

    @property
    def T(self) -> BatchedArray:  # noqa: N802 (the standard's name)
        return self.namespace.permute_dims(self, tuple(reversed(range(self.ndim))))

    @property
    def mT(self) -> BatchedArray:  # noqa: N802 (the standard's name)
        return self.namespace.matrix_transpose(self)

    def __array_namespace__(self, *, api_version: str | None = None) -> BatchedNamespace:
        return self.namespace

    def __repr__(self) -> str:
        return f"BatchedArray({self.value!r}, batch_size={self.batch_size})"

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise BatchedValueError(_PER_EXAMPLE)

    __bool__ = __float__ = __int__ = __index__ = __complex__ = __dlpack__ = __array__ = tolist = item = _refuse

    def __getitem__(self, key: Any) -> BatchedArray:
        ns = self.namespace
        plan = _plan(ns, self.ndim, key)
        if plan is None:
            return ns._loop(operator.getitem, (self, key), {}, "__getitem__")
        out = self.value[plan.key]
        return ns.wrap(out if plan.order is None else ns.inner.permute_dims(out, plan.order))

    def __setitem__(self, key: Any, value: Any) -> None:
        """``x[key] = value`` written into `value` in place: each example gets its own elements of a
        batched value, at its own positions of a batched index (jax's immutable arrays refuse)."""
        ns = self.namespace
        plan = _plan(ns, self.ndim, key)
        if plan is None:  # through a view of each example
            for i in range(ns.size):
                view = self.value[i, ...]
                view[ns.example(key, i)] = ns.example(value, i)
            return
        if ns.is_batched(value):
            value = _align(ns, value.value, plan.rank)
        elif plan.order is not None and _is_array(value):
            value = ns.inner.reshape(value, (1,) * (plan.rank + 1 - value.ndim) + tuple(value.shape))
        if plan.order is not None and _is_array(value):
            value = ns.inner.permute_dims(value, tuple(sorted(range(len(plan.order)), key=plan.order.__getitem__)))
        self.value[plan.key] = value


def _above(other: Any, x: BatchedArray) -> bool:
    """Whether `other` is a batched array of a vmap enclosing `x`'s: its own methods must answer."""
    return isinstance(other, BatchedArray) and other.namespace.depth > x.namespace.depth


def _operator(rule: Callable[..., Any], op: Op, reflected: bool) -> Callable[[BatchedArray, Any], Any]:
    def method(self: BatchedArray, other: Any) -> Any:
        # an enclosing vmap's array answers; Python would not try its reflected method itself,
        # as both operands are BatchedArrays
        level = other.namespace if _above(other, self) else self.namespace
        return rule(level, op, *((other, self) if reflected else (self, other)))

    return method


def _in_place(inner_operator: Callable[[Any, Any], Any]) -> Callable[[BatchedArray, Any], Any]:
    """The in-place operator on the value: in place where the inner library updates in place,
    out of place with `value` rebound where it cannot (jax)."""

    def method(self: BatchedArray, other: Any) -> Any:
        if _above(other, self):
            return NotImplemented
        self.value = inner_operator(self.value, _aligned(self.namespace, other, self.ndim))
        return self

    return method


def _unary(op: Op) -> Callable[[BatchedArray], BatchedArray]:
    return lambda self: self.namespace.wrap(op(self.value))


def _matmul_in_place(self: BatchedArray, other: Any) -> Any:
    if _above(other, self):
        return NotImplemented
    self.value = _matmul(self.namespace, Op("__matmul__", operator.matmul), self, other).value
    return self


def _install_operators() -> None:
    """The operators of `BatchedArray`: the inner array's own operators, applied to aligned values."""
    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift", "rshift"):
        op = Op(f"__{name}__", getattr(operator, name + "_" if name in ("and", "or") else name))
        setattr(BatchedArray, f"__{name}__", _operator(_elementwise, op, reflected=False))
        setattr(BatchedArray, f"__r{name}__", _operator(_elementwise, op, reflected=True))
        setattr(BatchedArray, f"__i{name}__", _in_place(getattr(operator, f"i{name}")))
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(BatchedArray, f"__{name}__", _operator(_elementwise, Op(f"__{name}__", getattr(operator, name)), False))
    for name in ("neg", "pos", "invert", "abs"):
        setattr(BatchedArray, f"__{name}__", _unary(Op(f"__{name}__", getattr(operator, name))))
    matmul = Op("__matmul__", operator.matmul)
    BatchedArray.__matmul__ = _operator(_matmul, matmul, reflected=False)
    BatchedArray.__rmatmul__ = _operator(_matmul, matmul, reflected=True)
    BatchedArray.__imatmul__ = _matmul_in_place


class _Plan(NamedTuple):
    key: tuple  # the key of the physical value
    order: tuple[int, ...] | None  # the permutation of the physical result that puts it in batched order
    rank: int  # the logical rank of the result


def _plan(ns: BatchedNamespace, ndim: int, key: Any) -> _Plan | None:
    """How to index the value of a batched array of logical rank `ndim` with the logical `key`.

    Basic indexing keeps the batch axis with a leading slice. With index arrays, the batch axis
    is indexed by an ``arange`` that broadcasts against them (a batched index array is aligned
    as in elementwise functions), so each example reads its own elements; where the library
    puts the indexed axes first although the example's key would leave them in place, the
    result is permuted back. None: the result is made example by example, for a batched or 0-d
    boolean index (how many elements it selects may differ between examples) and for Python
    ints mixed with index arrays and slices (libraries place those axes differently).
    """
    inner = ns.inner
    key = key if isinstance(key, tuple) else (key,)
    nones = sum(k is None for k in key)
    sliced = any(k is None or k is Ellipsis or isinstance(k, slice) for k in key)
    if not any(map(_is_array, key)):
        return _Plan((slice(None), *key), None, ndim - sum(isinstance(k, int) for k in key) + nones)
    arrays = [k for k in key if _is_array(k)]
    if any(inner.isdtype(k.dtype, "bool") and (ns.is_batched(k) or k.ndim == 0) for k in arrays) or (
        sliced and any(isinstance(k, int) for k in key)
    ):
        return None
    key = tuple(part for k in key for part in (inner.nonzero(k) if _is_bool(inner, k) else (k,)))
    advanced = [p for p, k in enumerate(key) if _is_array(k) or isinstance(k, int)]
    rank = max(k.ndim for k in key if _is_array(k))
    consumed = sum(k is not None and k is not Ellipsis for k in key)
    out_rank = ndim - len(advanced) + nones + rank
    batch = inner.reshape(inner.arange(ns.size), (ns.size, *(1,) * rank))
    physical = (batch, *(_aligned(ns, k, rank) for k in key))
    start = advanced[0]
    if start == 0 or advanced != list(range(start, advanced[-1] + 1)):
        return _Plan(physical, None, out_rank)
    before = sum(ndim - consumed if k is Ellipsis else 1 for k in key[:start])
    order = (0, *range(1 + rank, 1 + rank + before), *range(1, 1 + rank), *range(1 + rank + before, 1 + out_rank))
    return _Plan(physical, order, out_rank)


def _is_bool(inner: Any, k: Any) -> bool:
    return _is_array(k) and inner.isdtype(k.dtype, "bool")


# --- batching rules: rule(ns, op, *args, **kwargs), with the standard's signature after op ---------------
def _elementwise(ns: BatchedNamespace, op: Op, *args: Any, **kwargs: Any) -> Any:
    """Elementwise functions, `where`, `clip`, `broadcast_arrays`: right-aligned broadcasting.

    A batched operand gets unit axes after its batch axis up to the highest logical rank among
    the operands, so the batch axis leads the result; the others broadcast against the
    trailing axes as they are.
    """
    rank = max(getattr(a, "ndim", 0) for a in (*args, *kwargs.values()))
    return ns.wrap(op(*(_aligned(ns, a, rank) for a in args), **{k: _aligned(ns, v, rank) for k, v in kwargs.items()}))


def _only_first(rule: Callable[..., Any]) -> Callable[..., Any]:
    """`rule`, for calls whose only batched argument is the first; other calls loop."""

    @functools.wraps(rule)
    def checked(ns: BatchedNamespace, op: Op, x: Any, *args: Any, **kwargs: Any) -> Any:
        if ns.is_batched(x) and not ns.holds_batched((args, kwargs)):
            return rule(ns, op, x, *args, **kwargs)
        return ns.loop_and_stack(op, (x, *args), kwargs, name=op.name)

    return checked


@dataclass(frozen=True)
class _Axes:
    """Functions of whole operands along axes named by `param` (reductions, sorting, concat,
    stack, flip, the FFTs...): the operands get the batch axis (an unbatched one broadcast
    along it) and the axes shift past it.

    `default` is `param`'s value when it is not passed; `none` says what None means: "all" the
    logical axes, or "flatten": the function of the flattened operands. `operands` is how many
    leading positional arguments are operands and `keywords` names keyword operands; the other
    arguments (repeat's `repeats`) must be unbatched, or the call loops.
    """

    param: str = "axis"
    default: Any = None
    none: str = "all"
    operands: int = 1
    keywords: tuple[str, ...] = ()

    def __call__(self, ns: BatchedNamespace, op: Op, *args: Any, **kwargs: Any) -> Any:
        head, rest = args[: self.operands], args[self.operands :]
        named = {k: kwargs.pop(k) for k in self.keywords if k in kwargs}
        if ns.holds_batched((rest, kwargs)):
            return ns.loop_and_stack(op, args, {**kwargs, **named}, name=op.name)
        head, named = _map(lambda a: ns.lift(a).value if _is_array(a) else a, (head, named))
        first = head[0][0] if isinstance(head[0], (tuple, list)) else head[0]
        ndim, axis = first.ndim - 1, kwargs.pop(self.param, self.default)
        if axis is None and self.none == "flatten":
            head = _map(lambda a: ns.inner.reshape(a, (ns.size, -1)), head)
            out = op(*head, *rest, **{self.param: 1}, **kwargs, **named)
            return ns.wrap(ns.inner.reshape(out, (ns.size, *(1,) * ndim)) if kwargs.get("keepdims") else out)
        axis = tuple(range(1, ndim + 1)) if axis is None else _shift(axis)
        return ns.wrap(op(*head, *rest, **{self.param: axis}, **kwargs, **named))


@_only_first
def _whole(ns: BatchedNamespace, op: Op, x: Any, *args: Any, **kwargs: Any) -> Any:
    """Functions of each element alike or of the trailing axes (astype, the ``*_like``
    creators, tril, the linalg functions of stacks of matrices): the batch is one more
    leading axis."""
    return ns.wrap(op(x.value, *args, **kwargs))


def _filled(ns: BatchedNamespace, fill: BatchedArray, shape: Any, dtype: Any) -> BatchedArray:
    """An array of logical `shape` and `dtype` holding each example's 0-d `fill`."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    value = ns.inner.broadcast_to(_align(ns, fill.value, len(shape)), (ns.size, *shape))
    return ns.wrap(ns.inner.astype(value, dtype, copy=True))


def _full_like(ns: BatchedNamespace, op: Op, x: Any, /, fill_value: Any, **kwargs: Any) -> Any:
    if not ns.is_batched(fill_value):
        return _whole(ns, op, x, fill_value, **kwargs)
    return _filled(ns, fill_value, x.shape, kwargs.get("dtype") or x.dtype)


def _full(ns: BatchedNamespace, op: Op, shape: Any, fill_value: BatchedArray, **kwargs: Any) -> Any:
    return _filled(ns, fill_value, shape, kwargs.get("dtype") or fill_value.dtype)


@_only_first
def _reshape(ns: BatchedNamespace, op: Op, x: BatchedArray, /, shape: Any, **kwargs: Any) -> Any:
    return ns.wrap(op(x.value, (ns.size, *shape), **kwargs))


@_only_first
def _permute_dims(ns: BatchedNamespace, op: Op, x: BatchedArray, /, axes: Any) -> Any:
    return ns.wrap(op(x.value, (0, *(a % x.ndim + 1 for a in axes))))


@_only_first
def _squeeze(ns: BatchedNamespace, op: Op, x: BatchedArray, /, axis: Any) -> Any:
    return ns.wrap(op(x.value, axis=_shift(axis)))


@_only_first
def _moveaxis(ns: BatchedNamespace, op: Op, x: BatchedArray, source: Any, destination: Any, /) -> Any:
    return ns.wrap(op(x.value, _shift(source), _shift(destination)))


@_only_first
def _roll(ns: BatchedNamespace, op: Op, x: BatchedArray, /, shift: Any, *, axis: Any = None) -> Any:
    if axis is None:  # the flattened array rolled
        return ns.reshape(ns.roll(ns.reshape(x, (-1,)), shift, axis=0), x.shape)
    return ns.wrap(op(x.value, shift, axis=_shift(axis)))


@_only_first
def _broadcast_to(ns: BatchedNamespace, op: Op, x: BatchedArray, /, shape: Any) -> Any:
    return ns.wrap(op(_align(ns, x.value, len(shape)), (ns.size, *shape)))


@_only_first
def _tile(ns: BatchedNamespace, op: Op, x: BatchedArray, repetitions: Any, /) -> Any:
    rank = max(x.ndim, len(repetitions))
    return ns.wrap(op(_align(ns, x.value, rank), (1,) * (rank + 1 - len(repetitions)) + tuple(repetitions)))


def _meshgrid(ns: BatchedNamespace, op: Op, *arrays: Any, indexing: str = "xy") -> list[BatchedArray]:
    """Each 1-D array reshaped to run along its axis of the grid, then broadcast to the grid."""
    along = list(range(len(arrays)))  # along[d]: the grid axis array d runs along
    if indexing == "xy" and len(arrays) > 1:
        along[:2] = [1, 0]
    shape = tuple(arrays[d].shape[0] for d in along)  # `along` is its own inverse
    return [
        ns.lift(ns.broadcast_to(ns.reshape(a, tuple(-1 if i == along[d] else 1 for i in range(len(arrays)))), shape))
        for d, a in enumerate(arrays)
    ]


def _take(ns: BatchedNamespace, op: Op, x: Any, indices: Any, /, *, axis: int | None = None) -> Any:
    """take: along the batched axis for unbatched indices; batched indices (one list per
    example) become take_along_axis's."""
    axis = 0 if axis is None else axis  # None: x is 1-D
    if not ns.is_batched(indices):
        return ns.wrap(op(x.value, indices, axis=_shift(axis)))
    shape = tuple(-1 if d == axis % x.ndim else 1 for d in range(x.ndim))
    return ns.take_along_axis(x, ns.reshape(indices, shape), axis=axis)


def _searchsorted(ns: BatchedNamespace, op: Op, x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
    """searchsorted: one call for batched values; a batched sorted array is searched by
    counting its elements before each value (the order of NaNs is unspecified, as in the
    standard)."""
    if not ns.holds_batched((x1, sorter)):
        return ns.wrap(op(x1, x2.value, side=side, sorter=sorter))
    if sorter is not None:
        x1 = ns.take(x1, sorter, axis=0)
    before = (ns.less if side == "left" else ns.less_equal)(x1, ns.expand_dims(x2, axis=-1))
    probe = ns.inner.zeros((1,), dtype=x1.dtype)
    index = op(probe, probe).dtype  # the library's choice (jax's is int32)
    return ns.sum(ns.astype(before, index), axis=-1, dtype=index)


def _matmul(ns: BatchedNamespace, op: Op, x1: Any, x2: Any, /) -> BatchedArray:
    """matmul: a 1-D operand is made the matrix the standard makes of it (a row on the left, a
    column on the right) and that axis is dropped from the result; the stacks then broadcast as
    in elementwise functions."""
    row, column = x1.ndim == 1, x2.ndim == 1
    a = ns.expand_dims(x1, axis=0) if row else x1
    b = ns.expand_dims(x2, axis=-1) if column else x2
    rank = max(a.ndim, b.ndim)
    out = op(_aligned(ns, a, rank), _aligned(ns, b, rank))
    drop = (-2,) * row + (-1,) * column
    return ns.wrap(ns.inner.squeeze(out, axis=drop) if drop else out)


def _solve(ns: BatchedNamespace, op: Op, x1: Any, x2: Any, /) -> BatchedArray:
    """linalg.solve: a batched 1-D `x2` (one vector per example) is made a column and that
    axis dropped from the result; the stacks broadcast as in elementwise functions."""
    column = ns.is_batched(x2) and x2.ndim == 1
    b = ns.expand_dims(x2, axis=-1) if column else x2
    rank = max(x1.ndim, b.ndim)
    out = op(_aligned(ns, x1, rank), _aligned(ns, b, rank))
    return ns.wrap(out[..., 0] if column else out)


def _along_axis(ns: BatchedNamespace, op: Op, x1: Any, x2: Any, /, *, axis: int = -1) -> BatchedArray:
    """vecdot and cross: the operands broadcast as in elementwise functions; `axis`, an axis of
    their broadcast shape, is counted from the end, where it is the same axis of every operand."""
    rank = max(x1.ndim, x2.ndim)
    return _elementwise(ns, op, x1, x2, axis=axis - rank if axis >= 0 else axis)


def _outer(ns: BatchedNamespace, op: Op, x1: Any, x2: Any, /) -> BatchedArray:
    return ns.multiply(ns.expand_dims(x1, axis=-1), x2)


def _tensordot(ns: BatchedNamespace, op: Op, x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
    """tensordot: shifted axes when one operand is batched; for two, a batched matrix product of
    each operand's free axes by its contracted ones."""
    n1, n2 = x1.ndim, x2.ndim
    if isinstance(axes, int):
        a1, a2 = list(range(n1 - axes, n1)), list(range(axes))
    else:
        a1, a2 = [a % n1 for a in axes[0]], [a % n2 for a in axes[1]]
    if not ns.is_batched(x2):
        return ns.wrap(op(x1.value, x2, axes=(_shift(a1), tuple(a2))))
    if not ns.is_batched(x1):
        return ns.batch(op(x1, x2.value, axes=(tuple(a1), _shift(a2))), axis=n1 - len(a1))
    free1, free2 = [d for d in range(n1) if d not in a1], [d for d in range(n2) if d not in a2]
    contracted = math.prod(x1.shape[d] for d in a1)
    rows = ns.reshape(ns.permute_dims(x1, (*free1, *a1)), (math.prod(x1.shape[d] for d in free1), contracted))
    columns = ns.reshape(ns.permute_dims(x2, (*a2, *free2)), (contracted, math.prod(x2.shape[d] for d in free2)))
    return ns.reshape(ns.matmul(rows, columns), (*(x1.shape[d] for d in free1), *(x2.shape[d] for d in free2)))


@_only_first
def _fftn(ns: BatchedNamespace, op: Op, x: BatchedArray, /, *, s: Any = None, axes: Any = None, **kwargs: Any) -> Any:
    if axes is None:  # the last len(s) axes, or all of them
        axes = range(x.ndim - (x.ndim if s is None else len(s)), x.ndim)
    return ns.wrap(op(x.value, s=s, axes=_shift(tuple(axes)), **kwargs))


def _dtypes(ns: BatchedNamespace, op: Op, *args: Any, **kwargs: Any) -> Any:
    """result_type, can_cast, finfo, iinfo: a batched array stands for its dtype."""
    return op(*(a.dtype if ns.is_batched(a) else a for a in args), **kwargs)


def _data_dependent(ns: BatchedNamespace, op: Op, *args: Any, **kwargs: Any) -> Any:
    """nonzero and unique_*: the shape of the result depends on the values, so each example
    runs alone; the results stack if their shapes agree (no warning: this is their rule)."""
    return ns._loop(op, args, kwargs, op.name)


ELEMENTWISE = (
    *("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log", "log1p"),
    *("log2", "log10", "sin", "sinh", "sqrt", "square", "tan", "tanh", "reciprocal", "negative", "positive"),
    *("ceil", "floor", "round", "trunc", "sign", "signbit", "conj", "real", "imag", "isfinite", "isinf", "isnan"),
    *("add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow", "atan2", "hypot", "logaddexp"),
    *("copysign", "nextafter", "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater"),
    *("greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or"),
    *("bitwise_xor", "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift", "where", "clip"),
    "broadcast_arrays",
)
LINALG_WHOLE = (
    *("cholesky", "det", "diagonal", "eigh", "eigvalsh", "inv", "matrix_norm", "matrix_power", "matrix_rank"),
    *("matrix_transpose", "pinv", "qr", "slogdet", "svd", "svdvals", "trace"),
)  # functions of the matrices in the last two axes: any leading axes batch
REDUCTIONS = ("sum", "prod", "mean", "var", "std", "max", "min", "all", "any", "count_nonzero", "logsumexp")

RULES: dict[str, Callable[..., Any]] = {
    **dict.fromkeys(ELEMENTWISE, _elementwise),
    **dict.fromkeys((*REDUCTIONS, "argmax", "argmin", "cumulative_sum", "cumulative_prod"), _Axes(none="flatten")),
    "repeat": _Axes(none="flatten"),
    "flip": _Axes(),
    "concat": _Axes(default=0, none="flatten"),
    **dict.fromkeys(("stack", "unstack", "expand_dims"), _Axes(default=0)),
    **dict.fromkeys(("sort", "argsort"), _Axes(default=-1)),
    "take_along_axis": _Axes(default=-1, operands=2),
    "diff": _Axes(default=-1, keywords=("prepend", "append")),
    **dict.fromkeys(("asarray", "astype", "zeros_like", "ones_like", "empty_like", "tril", "triu"), _whole),
    "matrix_transpose": _whole,
    "full_like": _full_like,
    "full": _full,
    "reshape": _reshape,
    "permute_dims": _permute_dims,
    "squeeze": _squeeze,
    "moveaxis": _moveaxis,
    "roll": _roll,
    "broadcast_to": _broadcast_to,
    "tile": _tile,
    "meshgrid": _meshgrid,
    "take": _take,
    "searchsorted": _searchsorted,
    "matmul": _matmul,
    "tensordot": _tensordot,
    "vecdot": _along_axis,
    **dict.fromkeys(("result_type", "can_cast", "finfo", "iinfo"), _dtypes),
    **dict.fromkeys(("nonzero", "unique_all", "unique_counts", "unique_inverse", "unique_values"), _data_dependent),
    # the linalg extension
    **dict.fromkeys([f"linalg.{name}" for name in LINALG_WHOLE], _whole),
    "linalg.vector_norm": _Axes(none="flatten"),
    **dict.fromkeys(("linalg.vecdot", "linalg.cross"), _along_axis),
    "linalg.matmul": _matmul,
    "linalg.tensordot": _tensordot,
    "linalg.outer": _outer,
    "linalg.solve": _solve,
    # the fft extension
    **dict.fromkeys([f"fft.{name}" for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")], _Axes(default=-1)),
    **dict.fromkeys([f"fft.{name}" for name in ("fftn", "ifftn", "rfftn", "irfftn")], _fftn),
    **dict.fromkeys(("fft.fftshift", "fft.ifftshift"), _Axes(param="axes")),
}
"""The batching rule of each function of the standard, by its name in the namespace (an
extension's functions as ``linalg.solve``, ``fft.fftn``); the others loop (`FALLBACKS_USED`).
A fused primitive's rule is not here: it is the primitive's own "vmap" kernel (`rules`)."""

_EXTENSIONS = ("linalg", "fft")
_PASSED = ("__array_api_version__", "__array_namespace_info__")  # dunder names answered by the inner namespace


class _Dispatch:
    """The attributes of a batched namespace or of one of its extensions (linalg, fft): the
    inner module's functions, each behind its batching rule, looked up once and then kept; its
    constants (dtypes, e, pi, inf, nan, newaxis) as they are."""

    def __init__(self, level: BatchedNamespace, module: Any, prefix: str) -> None:
        self._level, self._module, self._prefix = level, module, prefix

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") and name not in _PASSED:
            raise AttributeError(name)
        value = getattr(self._module, name)
        if name in _EXTENSIONS and not self._prefix:
            value = _Dispatch(self._level, value, f"{name}.")
        elif callable(value) and not isinstance(value, type) and name not in _PASSED:
            value = self._level._function(self._prefix + name, value, RULES.get(self._prefix + name))
        setattr(self, name, value)
        return value


class BatchedNamespace(_Dispatch):
    """The array-API namespace of the arrays of one vmap level, over the namespace `inner`.

    A function called with no batched argument of this level is the inner function, unchanged;
    otherwise its batching rule (`RULES`) computes every example
    in one inner call and returns `BatchedArray`s. Arguments may be batched arrays, inner
    arrays (the same for every example), Python scalars or other values. The ``linalg`` and
    ``fft`` extensions batch the same way. `inner` may itself be a BatchedNamespace (nested
    vmap); `depth` counts the levels down to the library.

    >>> import numpy as np
    >>> ns = BatchedNamespace(np, 2)
    >>> x = ns.batch(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> ns.matmul(x, np.eye(2) * 2).physical.tolist(), ns.linalg.vector_norm(x).shape
    ([[2.0, 4.0], [6.0, 8.0]], ())
    """

    def __init__(self, inner: Any, size: int, lift_all: bool = False) -> None:
        super().__init__(self, inner, "")
        self.inner = inner
        self.size = size
        self.depth = inner.depth + 1 if isinstance(inner, BatchedNamespace) else 1
        # for a library whose operators refuse other operands (array-api-strict): every array
        # this namespace hands out is batched, so no inner array meets a batched one in an operator
        self.lift_all = lift_all

    def __repr__(self) -> str:
        return f"BatchedNamespace({self.inner!r}, size={self.size})"

    def _function(self, name: str, fn: Callable[..., Any], rule: Callable[..., Any] | None) -> Callable[..., Any]:
        op = Op(name, fn)

        def batched(*args: Any, **kwargs: Any) -> Any:
            if not self.holds_batched((args, kwargs)):
                result = fn(*args, **kwargs)
                return _map(self.lift, result) if self.lift_all and _is_array(result) else result
            if rule is None:
                return self.loop_and_stack(fn, args, kwargs, name=name)
            return rule(self, op, *args, **kwargs)

        return functools.update_wrapper(batched, fn)

    # --- helpers the rules share, public for vmap itself ------------------------------------------
    def is_batched(self, x: Any) -> bool:
        """Whether `x` is a batched array of this level (not of another vmap's).

        >>> import numpy as np
        >>> ns = BatchedNamespace(np, 2)
        >>> ns.is_batched(ns.lift(np.ones(3))), ns.is_batched(np.ones(3))
        (True, False)
        """
        return isinstance(x, BatchedArray) and x.namespace is self

    def holds_batched(self, x: Any) -> bool:
        """Whether `x`, or a value inside its tuples, lists and dicts, is batched at this level.

        >>> import numpy as np
        >>> ns = BatchedNamespace(np, 2)
        >>> ns.holds_batched(([1, ns.lift(np.ones(2))], {})), ns.holds_batched((np.ones(2),))
        (True, False)
        """
        if isinstance(x, dict):
            return any(map(self.holds_batched, x.values()))
        if isinstance(x, (tuple, list)):
            return any(map(self.holds_batched, x))
        return self.is_batched(x)

    def wrap(self, value: Any) -> Any:
        """Batched arrays of this level holding the inner arrays of `value` (through tuples,
        lists and dicts), their batch along axis 0.

        >>> import numpy as np
        >>> BatchedNamespace(np, 2).wrap((np.zeros((2, 3)),))[0].shape
        (3,)
        """
        return _map(lambda v: BatchedArray(v, self), value)

    def batch(self, value: Any, axis: int = 0) -> BatchedArray:
        """The inner array `value` as a batched array whose examples run along its `axis`.

        >>> import numpy as np
        >>> BatchedNamespace(np, 3).batch(np.zeros((2, 3)), axis=1).shape
        (2,)
        """
        return BatchedArray(self.inner.moveaxis(value, axis, 0) if axis else value, self)

    def lift(self, x: Any) -> BatchedArray:
        """`x` as a batched array: itself if it is one, else the inner array `x`, the same for
        every example, broadcast along a new batch axis (a view where the library makes one).

        >>> import numpy as np
        >>> BatchedNamespace(np, 3).lift(np.ones(2)).physical.shape
        (3, 2)
        """
        if self.is_batched(x):
            return x
        return BatchedArray(self.inner.broadcast_to(self.inner.reshape(x, (1, *x.shape)), (self.size, *x.shape)), self)

    def move_batch_axis(self, x: Any, axis: int) -> Any:
        """The inner array holding every example of `x` (lifted if unbatched), with the batch
        moved from axis 0 to `axis`.

        >>> import numpy as np
        >>> ns = BatchedNamespace(np, 3)
        >>> ns.move_batch_axis(ns.lift(np.ones(2)), -1).shape
        (2, 3)
        """
        return self.inner.moveaxis(self.lift(x).value, 0, axis)

    def example(self, x: Any, i: int) -> Any:
        """Example `i` of `x`: a batched array of this level gives its value's entry `i`; any
        other value (through tuples, lists and dicts) is the same for every example.

        >>> import numpy as np
        >>> ns = BatchedNamespace(np, 2)
        >>> ns.example((ns.batch(np.array([5, 6])), 7), 1)
        (array(6), 7)
        """
        return _map(lambda v: v.value[i, ...] if self.is_batched(v) else v, x)

    def loop_and_stack(
        self, fn: Callable[..., Any], args: tuple, kwargs: dict | None = None, *, name: str | None = None
    ) -> Any:
        """``fn(*args, **kwargs)`` example by example, the results stacked along a batch axis (a
        tuple of results gives a tuple of batched arrays; a non-array result must be the same
        for every example). With a `name`, the first call under it warns that there is no
        batching rule and records it in `FALLBACKS_USED`.

        >>> import numpy as np
        >>> ns = BatchedNamespace(np, 2)
        >>> ns.loop_and_stack(np.cumsum, (ns.batch(np.array([[1, 2], [3, 4]])),)).physical.tolist()
        [[1, 3], [3, 7]]
        """
        label = name or getattr(fn, "__name__", repr(fn))
        if name is not None and name not in FALLBACKS_USED:
            FALLBACKS_USED.add(name)
            message = (
                f"vmap: no batching rule for {name}; it runs once per example and stacks the results, which is slow"
            )
            warnings.warn(message, BatchingFallbackWarning, stacklevel=3)
        return self._loop(fn, args, kwargs or {}, label)

    def _loop(self, fn: Callable[..., Any], args: tuple, kwargs: dict, name: str) -> Any:
        results = [fn(*self.example(args, i), **self.example(kwargs, i)) for i in range(self.size)]
        return self._stack(results, name)

    def _stack(self, results: list, name: str) -> Any:
        first = results[0]
        if isinstance(first, (tuple, list)):
            parts = [self._stack([r[k] for r in results], name) for k in range(len(first))]
            return type(first)._make(parts) if hasattr(first, "_make") else type(first)(parts)
        if _is_array(first):
            shapes = [tuple(r.shape) for r in results]
            if len(set(shapes)) > 1:
                raise BatchedValueError(
                    f"vmap: {name} gives results of different shapes for different examples ({shapes}): the shape "
                    "depends on the values, so they cannot be stacked into one batched array; compute it outside "
                    "vmap, or pad to a fixed size"
                )
            return BatchedArray(self.inner.stack(results, axis=0), self)
        if any(r != first for r in results):
            raise BatchedValueError(f"vmap: {name} returns a different Python value for each example; {_PER_EXAMPLE}")
        return first


_install_operators()
