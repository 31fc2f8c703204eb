"""Batching rules: the fused kernels of `autograd_core.primitives` under `vmap`, each run once
for the whole batch by the kernel of the backend the batch wraps (registered as their "vmap"
kernels, which `autograd_core.transforms.vmap.backend.BatchedBackend` prefers to running the kernel per example).

Almost every rule is one pattern, `Merge`: the kernel already computes many things at once
along an axis of its own (the rows N of a convolution, of a loss, of a pooling; the channels
of a batch norm; any leading axes of an elementwise or a last-axes kernel), so the vmap batch
B is merged into that axis, (B, N, ...) -> (B*N, ...), the shape arguments grow to match, the
inner kernel runs once and its outputs are split back, (B*N, ...) -> (B, N, ...). Each
primitive gives only its `Merge`: which arguments may hold examples and the axis each merges
into. When another argument holds them too (a layer's weight that differs from example to
example), the kernel's portable default runs through the batched namespace instead: every
kernel with such an argument here has one written with array-API calls and kernels that have
rules, so that is still one batched call per operation, not a loop.

Beyond `Merge`: the per-example weight gradient of a convolution and a convolution by
per-example weights fold the batch into the channel groups (a grouped convolution);
``take``, ``take_rows`` and ``index_add`` with per-example indices offset each example's
indices into the examples laid end to end; ``einsum`` gives the batch a subscript of its own;
``cross_entropy`` and the weight part of ``layer_norm_backward`` run their portable default
(`DEFAULT`); ``scatter`` writes the whole batch at once. Batch norm's statistics are over N,
so its batch merges into the channels instead, which keeps every example's statistics its own
(the primitive is training mode only: evaluation is an affine map of ordinary ops).

The fused kernels left without a rule run once per example (`BatchedBackend`'s fallback):

- ``adam_update``: an optimizer step on the parameters, not a function of one example;
- ``map_batch_chunks``: runs a function of its caller on chunks of a batch, so what it
  computes is not known here;
- ``to``: moves values between backends, through the host.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from autograd_core import primitives as P
from autograd_core.graph import pytree
from autograd_core.graph.namespace import raw_namespace
from autograd_core.primitives.special import SPECIAL_KERNELS

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


# --- the batch in and out of an axis of the kernel's own -------------------------------------------------
def merge(batch: Any, x: Any, axis: int) -> Any:
    """The inner array of every example of `x` (repeated if `x` is the same for all), the
    batch merged into the example's axis `axis`: (B, ..., n, ...) -> (..., B*n, ...)."""
    xp = batch.inner.xp
    value = batch.xp.lift(x).physical
    if axis:
        value = xp.moveaxis(value, 0, axis)
    shape = tuple(value.shape)
    return xp.reshape(value, (*shape[:axis], shape[axis] * shape[axis + 1], *shape[axis + 2 :]))


def split(batch: Any, value: Any, axis: int) -> Any:
    """The inverse of `merge`: an inner array whose axis `axis` holds B*n as the batch of
    examples with n there."""
    shape = tuple(value.shape)
    value = batch.inner.xp.reshape(value, (*shape[:axis], batch.size, shape[axis] // batch.size, *shape[axis + 1 :]))
    return batch.xp.batch(value, axis=axis)


def grown(shape: tuple[int, ...], axis: int, size: int) -> tuple[int, ...]:
    """`shape` with its axis `axis` `size` times longer."""
    return (*shape[:axis], shape[axis] * size, *shape[axis + 1 :])


def prepended(batch: Any, x: Any, rank: int) -> Any:
    """The inner array of every example of `x`, for a kernel that takes any leading axes: the
    batch first, then unit axes up to logical rank `rank`, so that every argument's axes line
    up (a kernel may count them from the front). An `x` the same for every example is repeated
    in a copy: a kernel may read a broadcast view as if its memory were dense (torch's layer
    norm backward does)."""
    value = x.physical if batch.owns(x) else batch.inner.xp.asarray(batch.xp.lift(x).physical, copy=True)
    missing = rank - x.ndim
    return batch.inner.xp.reshape(value, (value.shape[0], *(1,) * missing, *value.shape[1:])) if missing else value


def tree_map(f: Callable[[Any], Any], x: Any) -> Any:
    """`f` on each array in `x` (through the tuples, named tuples, lists and dicts of
    `autograd_core.graph.pytree`); None and other values as they are."""
    return pytree.tree_map(lambda v: f(v) if hasattr(v, "shape") else v, x)


def leaves(x: Any) -> list[Any]:
    """The arrays in `x` (through the tuples, named tuples, lists and dicts of `autograd_core.graph.pytree`)."""
    return [v for v in pytree.tree_flatten(x)[0] if hasattr(v, "shape")]


# --- the pattern of most rules ----------------------------------------------------------------------------
PREPEND = None  # as an axis of `Merge`: the batch goes first, for a kernel that takes any leading axes


@dataclass(frozen=True)
class Merge:
    """How one call of a kernel computes a whole batch.

    `arrays` maps the position of each argument that may hold examples to the axis of its
    own that the batch merges into (`PREPEND`: none, the batch goes first); a tuple or list
    there merges each array in it. `out` is the axis each output comes out of, one for all or
    a tuple with one per output. `shapes` maps the position of a shape argument to its axis
    that grows by the batch; `groups` is the position of a `ConvGeometry` whose groups
    multiply by it.
    """

    arrays: dict[int, int | None]
    out: int | None | tuple[int | None, ...] = 0
    shapes: dict[int, int] = field(default_factory=dict)
    groups: int | None = None

    def __call__(self, batch: Any, primitive: Any, args: tuple) -> Any:
        """`primitive` on `args`, some of them arrays of `batch`: one inner call when only
        the arguments in `arrays` hold examples, else its portable default on the batch."""
        inner = raw_namespace(batch.inner)
        if not batch.xp.holds_batched(args):
            return primitive(inner, *args)
        if any(batch.xp.holds_batched(a) for i, a in enumerate(args) if i not in self.arrays):
            if batch.xp.lift_all:  # a library whose operators take only its own arrays: all batched
                args = tree_map(batch.xp.lift, args)
            return primitive.default(raw_namespace(batch), *args)
        rank = max((x.ndim for i in self.arrays for x in leaves(args[i])), default=0)

        def taken(i: int, a: Any) -> Any:
            if i in self.arrays:
                axis = self.arrays[i]
                return tree_map(lambda x: prepended(batch, x, rank) if axis is PREPEND else merge(batch, x, axis), a)
            if i in self.shapes:
                return grown(tuple(a), self.shapes[i], batch.size)
            return a._replace(groups=a.groups * batch.size) if i == self.groups else a

        result = primitive(inner, *(taken(i, a) for i, a in enumerate(args)))
        if isinstance(self.out, tuple):
            return tuple(self._given(batch, r, axis) for r, axis in zip(result, self.out))
        return self._given(batch, result, self.out)

    @staticmethod
    def _given(batch: Any, result: Any, axis: int | None) -> Any:
        return tree_map(lambda v: batch.xp.batch(v) if axis is PREPEND else split(batch, v, axis), result)


DEFAULT = Merge({})
"""No argument merges: the portable default through the batched namespace, for a kernel whose
default is written with array-API calls and kernels that have rules."""


def register(primitive: Any, merge_of: Merge | Callable[..., Merge]) -> None:
    """Register `primitive`'s batching rule: its `Merge`, or a function of the batch and the
    arguments that chooses one."""

    def rule(ns: Any, *args: Any) -> Any:
        batch = ns.backend
        how = merge_of if isinstance(merge_of, Merge) else merge_of(batch, *args)
        return how(batch, primitive, args)

    primitive.kernel("vmap")(rule)


def leading(*positions: int, out: Any = PREPEND) -> Merge:
    """The `Merge` of a kernel taking any leading axes (elementwise, or acting on the last
    axes): the batch prepended to the arguments at `positions`."""
    return Merge(dict.fromkeys(positions, PREPEND), out=out)


def rows(*positions: int, shapes: dict[int, int] | None = None, out: Any = 0) -> Merge:
    """The `Merge` of a kernel with a leading axis of rows (N): the batch merged into it."""
    return Merge(dict.fromkeys(positions, 0), out=out, shapes=shapes or {})


# --- the rules ---------------------------------------------------------------------------------------------
# elementwise: every array argument may hold examples
register(P.relu, leading(0))  # (x)
register(P.relu_backward, leading(0, 1))  # (grad, out)
register(P.tanh_backward, leading(0, 1))  # (grad, out)
register(P.erf_kernel, leading(0))  # (x)
register(P.gelu, leading(0))  # (x, approximate)
register(P.gelu_backward, leading(0, 1))  # (grad, x, approximate)
register(P.binary_cross_entropy, leading(0, 1))  # (x, t)

# on the last axes, the weights the same for every example
register(P.linear, leading(0))  # (x, weight, bias)
register(P.attention_scores, leading(0, 1))  # (q, k, scale)
register(P.masked_softmax, leading(0, 1))  # (scores, mask)
register(P.layer_norm, leading(0))  # (x, weight, bias, normalized_shape, eps) -> (out, stats)
# (grad, x, normalized_shape, weight, eps, stats, part): the weight's part, which a kernel may
# sum over the leading axes (and so over the batch), is the portable default's product of arrays
register(P.layer_norm_backward, lambda batch, *args: DEFAULT if args[-1] == "weight" else leading(0, 1, 5))

# rows
register(P.max_pool2d, rows(0))  # (x, geometry) -> (values, indices): the indices are within each (H, W) plane
register(P.max_pool2d_backward, rows(0, 1, shapes={2: 0}))  # (grad, indices, input_shape, geometry)
register(P.im2col, rows(0))  # (x, kernel, stride, dilation, out_size)
register(P.col2im, rows(0, shapes={1: 0}))  # (cols, shape, kernel, stride, dilation)
register(P.pad2d, rows(0))  # (x, padding, value)
register(P.cross_entropy_rows, rows(0, 1))  # (logits, target)
register(P.cross_entropy, DEFAULT)  # the rows' losses (cross_entropy_rows), then each example's reduction


@P.cross_entropy_backward.kernel("vmap")
def _cross_entropy_backward(ns: Any, row_grad: Any, logits: Any, target: Any, classes: Any) -> Any:
    """By rows, a 0-d `row_grad` (one for every row) spread over them first."""
    batch = ns.backend
    if row_grad.ndim == 0:
        xp = batch.xp if batch.owns(row_grad) else batch.inner.xp
        row_grad = xp.broadcast_to(row_grad, tuple(target.shape))
    return rows(0, 1, 2)(batch, P.cross_entropy_backward, (row_grad, logits, target, classes))


# convolution: the rows when the weight is the same for every example; the channel groups when
# it differs (each example's channels a group of their own, convolved by its own weight)
_GROUPED_CONV2D = Merge({0: 1, 1: 0}, out=1, groups=2)  # (x, weight, geometry)
register(P.conv2d, lambda batch, x, weight, geometry: _GROUPED_CONV2D if batch.owns(weight) else rows(0))
_GROUPED_GRAD_INPUT = Merge({0: 1, 1: 0}, out=1, shapes={2: 1}, groups=3)  # (grad, weight, input_shape, geometry)
register(
    P.conv2d_grad_input,
    lambda batch, grad, weight, shape, geometry: _GROUPED_GRAD_INPUT if batch.owns(weight) else rows(0, shapes={2: 0}),
)
# each example's weight gradient is a sum over its own rows: by channel groups always, one
# grouped convolution for the per-sample gradients of a whole batch
register(P.conv2d_grad_weight, Merge({0: 1, 1: 1}, out=0, shapes={2: 0}, groups=3))  # (grad, x, weight_shape, geometry)

# batch norm: statistics over the rows, so the batch merges into the channels (axis 1 of the
# data, axis 0 of the per-channel weight, bias and statistics)
register(P.batch_norm, Merge({0: 1, 1: 0, 2: 0}, out=(1, 0, 0)))  # (x, weight, bias, eps) -> (out, mean, var)
register(
    P.batch_norm_backward,  # (grad, x, weight, mean, var, eps, part)
    lambda batch, *args: Merge({0: 1, 1: 1, 2: 0, 3: 0, 4: 0}, out=1 if args[-1] == "input" else 0),
)


# --- indices: each example's positions offset into the examples laid end to end ----------------------------
def offset_index(batch: Any, index: Any, length: int, stride: int) -> Any:
    """A batched 1-D `index` into an axis of `length` as one inner index into every example's
    axis laid end to end, `stride` apart (0: all examples index one array)."""
    xp = batch.inner.xp
    value = batch.xp.where(index < 0, index + length, index).physical  # -1 and length-1 are one row
    if stride:
        starts = xp.arange(batch.size, dtype=value.dtype, device=batch.inner.device) * stride
        value = value + xp.reshape(starts, (-1, 1))
    return xp.reshape(value, (-1,))


def _gather(primitive: Any) -> Callable[..., Any]:
    def rule(ns: Any, x: Any, index: Any, axis: int) -> Any:
        """The axis moves past the batch for an index the same for every example; each
        example's own index reads its own rows."""
        batch = ns.backend
        inner, axis = raw_namespace(batch.inner), axis % x.ndim
        if not batch.owns(index):
            if not batch.owns(x):
                return primitive(inner, x, index, axis)
            return batch.xp.batch(primitive(inner, x.physical, index, axis + 1))
        if not batch.owns(x):
            return split(batch, primitive(inner, x, offset_index(batch, index, x.shape[axis], 0), axis), axis)
        flat = offset_index(batch, index, x.shape[axis], x.shape[axis])
        return split(batch, primitive(inner, merge(batch, x, axis), flat, axis), axis)

    return rule


P.take.kernel("vmap")(_gather(P.take))
P.take_rows.kernel("vmap")(_gather(P.take_rows))


@P.index_add.kernel("vmap")
def _index_add(ns: Any, values: Any, shape: tuple[int, ...], axis: int, index: Any) -> Any:
    """Into the examples' arrays laid end to end along `axis`, each example's values at its
    own (offset) index."""
    batch = ns.backend
    inner, axis = raw_namespace(batch.inner), axis % len(shape)
    if not batch.owns(index):
        if not batch.owns(values):
            return P.index_add(inner, values, shape, axis, index)
        return batch.xp.batch(P.index_add(inner, values.physical, (batch.size, *shape), axis + 1, index))
    flat = offset_index(batch, index, shape[axis], shape[axis])
    out = P.index_add(inner, merge(batch, values, axis), grown(tuple(shape), axis, batch.size), axis, flat)
    return split(batch, out, axis)


# --- the rest --------------------------------------------------------------------------------------------
@P.einsum.kernel("vmap")
def _einsum(ns: Any, subscripts: str, *arrays: Any) -> Any:
    """One inner einsum: the batch gets a letter of its own, leading each batched operand and
    the output (any number of operands batched)."""
    batch = ns.backend
    inner = raw_namespace(batch.inner)
    if not batch.xp.holds_batched(arrays):
        return P.einsum(inner, subscripts, *arrays)
    terms, arrow, output = subscripts.replace(" ", "").partition("->")
    terms = terms.split(",")
    if not arrow:  # NumPy's implicit output: the ellipsis, then the labels seen once in ASCII order
        seen = "".join(terms).replace("...", "")
        output = "..." * any("..." in t for t in terms) + "".join(sorted(c for c in set(seen) if seen.count(c) == 1))
    letter = next(c for c in _LETTERS if c not in subscripts)
    terms = [letter + t if batch.owns(a) else t for t, a in zip(terms, arrays)]
    physical = [a.physical if batch.owns(a) else a for a in arrays]
    return batch.xp.batch(P.einsum(inner, f"{','.join(terms)}->{letter}{output}", *physical))


@P.scatter.kernel("vmap")
def _scatter(ns: Any, values: Any, shape: tuple[int, ...], key: tuple) -> Any:
    """The default writes batched values into unbatched zeros: scatter the whole batch at once."""
    batch = ns.backend
    if not batch.owns(values):
        return P.scatter(raw_namespace(batch.inner), values, shape, key)
    whole = P.scatter(raw_namespace(batch.inner), values.physical, (batch.size, *shape), (slice(None), *key))
    return batch.xp.batch(whole)


# the special functions' kernels: elementwise in x (polygamma's order n after it)
for _special in SPECIAL_KERNELS:
    register(_special, leading(0))

__all__ = ["DEFAULT", "PREPEND", "Merge", "grown", "leading", "merge", "offset_index", "register", "rows", "split"]
