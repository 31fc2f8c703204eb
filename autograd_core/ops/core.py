"""The primitive operations, each declared once: a forward written against the array-API
namespace of its inputs, and one vector-Jacobian product per input.

A VJP is ``vjp(ns, grad, out, *inputs) -> grad_input``: `grad` is the gradient of the
output, `out` the output, `inputs` the op's inputs in order, and `ns` the namespace to
compute with. A first-order backward calls it with raw backend arrays and the backend's
namespace (`autograd_core.graph.namespace.RawNamespace`); ``create_graph=True`` calls the same rule
with Tensors and `autograd_core` itself, so the gradient is recorded and can be differentiated
again. A VJP therefore uses only what both namespaces answer: operators, the standard's
functions, and the primitives of the registry, called with the namespace first
(``scatter(ns, ...)``, see `autograd_core.graph.registry`). Composite functions (log_softmax, var,
stack...) are built from primitives and need no VJP.
"""

from __future__ import annotations

import functools
import math
import numbers
import operator
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import backends
from autograd_core.graph.dtypes import DType, as_dtype, kind_rank, result_type
from autograd_core.graph.levels import encloses
from autograd_core.graph.namespace import raw_namespace
from autograd_core.graph.registry import Primitive, common_backend, sum_to
from autograd_core.graph.tensor_base import COMPLEX, CompiledBinaryOp, TensorBase, Vjp, mark, to_array
from autograd_core.ops import layout
from autograd_core.primitives import indexing
from autograd_core.primitives.indexing import basic_index, index_add, move, scatter

Scalar = (int, float, bool, complex)
Axis = int | Sequence[int] | None
builtin_max, builtin_min, builtin_abs, builtin_sum = max, min, abs, sum  # before the ops take the names


# --- operands, dtype promotion and broadcasting ------------------------------------------
def _python_scalar(x: Any) -> Any:
    """numpy's (and others') scalar types as the Python scalar of the same kind, so that
    they promote as Python scalars do on every backend."""
    for kind in (bool, int, float, complex):
        if isinstance(x, kind):
            return kind(x)
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[x.dtype.kind](x)


def _operands(op: str, a: Any, b: Any) -> tuple[Any, Any, backends.Backend]:
    """Both operands of a binary op, converted to one dtype by `result_type`'s rule.

    A Python scalar stays a scalar when its kind does not exceed the tensor's (so `t * 2.0`
    keeps float32); arrays and lists become tensors on the other operand's backend.
    """
    if type(a) is TensorBase or isinstance(a, TensorBase):
        if type(b) is TensorBase or isinstance(b, TensorBase):
            backend = a.backend if a.backend is b.backend else common_backend(op, a, b)
            if a.array.dtype != b.array.dtype:
                target = result_type(a.dtype, b.dtype)
                a, b = _cast(a, target), _cast(b, target)
            return a, b, backend
        tensor = a
    elif isinstance(b, TensorBase):
        tensor = b
    else:
        raise TypeError(f"{op}: at least one operand must be a tensor, got {type(a).__name__} and {type(b).__name__}")
    a, b = (_constant(x, tensor) for x in (a, b))
    scalar = b if tensor is a else a
    if isinstance(scalar, TensorBase):
        return _operands(op, a, b)
    if kind_rank(scalar) > kind_rank(tensor.dtype):
        promoted = _cast(tensor, result_type(tensor.dtype, scalar))
        a, b = (promoted, b) if tensor is a else (a, promoted)
    return a, b, tensor.backend


def _constant(x: Any, like: TensorBase) -> Any:
    """A Python (or numpy) scalar as a Python scalar; an array or a list as a tensor."""
    if isinstance(x, TensorBase) or type(x) in Scalar:
        return x
    if isinstance(x, numbers.Number):
        return _python_scalar(x)
    return TensorBase._wrap(to_array(x, like.backend), like.backend)


def _data(x: Any) -> Any:
    return x.array if isinstance(x, TensorBase) else x


def _view(out: TensorBase, x: TensorBase, step: tuple | None = None) -> TensorBase:
    """Mark `out` as a view of `x` made by `step` (``(kind, argument)``; None for a view that
    cannot be replayed): it shares the version counter of `x`'s base, in-place changes to it
    are written through to the base, and the base's in-place changes reach it."""
    root = x if x._base is None else x._base
    out._base = root
    if step is not None and (x._base is None or x._steps is not None):
        out._steps = (*(x._steps or ()), step)
        views = root._views if root._views is not None else []
        if len(views) >= 64:  # prune the views that are gone
            views = [ref for ref in views if ref() is not None]
        views.append(weakref.ref(out))
        root._views = views
    return out


# kind -> the op that makes such a view: ``(base, argument) -> view``; and how a view's new values
# go back into its base: ``(base, argument, values) -> the new base`` (out of place, so
# differentiable: the gradient goes to `values` inside the view, to `base` outside). Each module
# that makes views registers its kinds (the ones below, diagonal in linalg, unfold in manipulation).
_VIEW_OPS: dict[str, Callable[[TensorBase, Any], TensorBase]] = {}
_VIEW_WRITES: dict[str, Callable[[TensorBase, Any, TensorBase], TensorBase]] = {}


def _replay_view(base: TensorBase, steps: tuple) -> TensorBase:
    """The view `steps` make of `base` (its values and graph now)."""
    for kind, argument in steps:
        base = _VIEW_OPS[kind](base, argument)
    return base


def _write_view(base: TensorBase, steps: tuple, values: TensorBase) -> TensorBase:
    """`base` with the view that `steps` make of it replaced by `values`."""
    if not steps:
        return values
    (kind, argument), rest = steps[0], steps[1:]
    return _VIEW_WRITES[kind](base, argument, _write_view(_VIEW_OPS[kind](base, argument), rest, values))


def refuse_writes(what: str) -> Callable[[TensorBase, Any, TensorBase], TensorBase]:
    """The write of a view whose elements overlap (`what` says how), which PyTorch refuses too."""

    def write(base: TensorBase, argument: Any, values: TensorBase) -> TensorBase:
        raise RuntimeError(
            f"an in-place operation on {what} would write several elements to one; .clone() the view first"
        )

    return write


# --- the two op factories: elementwise binary and unary --------------------------------------
def binary_op(
    name: str,
    forward: Callable[[Any, Any], Any] | str,
    vjp_a: Vjp | None,
    vjp_b: Vjp | None,
    saves_inputs: bool = True,
    saves_output: bool = False,
    doc: str = "",
    jvp: Callable[..., Any] | None = None,
    complex: str | None = None,  # noqa: A002 - the primitive's fact
) -> Callable[[Any, Any], TensorBase]:
    """An elementwise, broadcasting primitive of two operands (tensors or Python scalars).

    `forward(a, b)` computes on raw arrays or scalars (a string names the library's function);
    `vjp_a`/`vjp_b` are the rules for each operand (None: not differentiable, a zero
    gradient), of the output's shape: the engine sums a gradient back over the axes its input
    was broadcast along. Each rule is the gradient times a partial derivative, so the same
    rules give the forward mode's tangent (`elementwise_jvp`) unless `jvp` says otherwise.
    """
    named = isinstance(forward, str)
    kernel = (lambda ns, a, b: getattr(ns, forward)(a, b)) if named else (lambda ns, a, b: forward(a, b))
    saves = "inputs" if saves_inputs else "output" if saves_output else "none"
    jvp = jvp or elementwise_jvp(vjp_a, vjp_b)
    primitive = Primitive(name, kernel, vjps=(vjp_a, vjp_b), saves=saves, jvp=jvp, complex=complex, doc=doc)

    def op(x1: Any, x2: Any, /) -> TensorBase:
        a, b, _ = _operands(name, x1, x2)
        return primitive.bind(a, b)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc or f"Elementwise ``{name}`` of two tensors (or a tensor and a Python scalar), broadcast."
    if CompiledBinaryOp is not None and not named:  # Tensor's operator: op's common case compiled, op for the rest
        op.method = CompiledBinaryOp(primitive, forward, primitive.vjps, primitive.saved, saves_output, op)
    return op


def unary_op(
    name: str,
    forward: Callable[[Any, Any], Any],
    vjp: Vjp | None,
    saves: str = "inputs",
    doc: str = "",
    jvp: Callable[..., Any] | str | None = None,
    complex: str | None = None,  # noqa: A002 - the primitive's fact
) -> Callable[[TensorBase], TensorBase]:
    """An elementwise primitive; `forward(ns, data)` computes on the raw array, `vjp` is its
    rule (None: piecewise constant, a zero gradient as PyTorch gives), and `saves` says what
    the rule reads: "inputs", "output" or "none" (for the version checks). The forward-mode
    rule is `vjp` applied to the tangent unless `jvp` says otherwise."""
    primitive = Primitive(
        name,
        forward,
        vjps=(vjp,),
        saves=saves,
        jvp=jvp or elementwise_jvp(vjp),
        complex=complex,
        doc=doc or f"Elementwise ``{name}``.",
    )
    return elementwise(primitive)


def elementwise_jvp(*vjps: Vjp | None) -> Callable[..., Any] | str:
    """The forward-mode rule of an elementwise op whose `vjps` each multiply the gradient by a
    partial derivative: the same rules applied to the tangents, or, when every rule is None
    (a piecewise-constant op), a zero tangent."""
    return "elementwise" if any(vjp is not None for vjp in vjps) else zero_tangent


def zero_tangent(ns: Any, tangents: Sequence[Any], out: Any, *inputs: Any) -> None:
    """The forward-mode rule of an op that is piecewise constant in its inputs: no tangent."""
    return None


def broadcast_tangent(ns: Any, tangent: Any, out: Any) -> Any:
    """A forward rule's `tangent` broadcast to the output's shape (an operand may be smaller)."""
    return tangent if tuple(tangent.shape) == tuple(out.shape) else ns.broadcast_to(tangent, out.shape)


def elementwise(primitive: Primitive) -> Callable[[TensorBase], TensorBase]:
    """The op on one tensor of a registered elementwise `primitive`, its kernel found per backend."""
    name = primitive.name

    def op(x: TensorBase) -> TensorBase:
        return primitive.bind(_tensor(name, x))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = primitive.__doc__
    return op


def _tensor(op: str, x: Any) -> TensorBase:
    if isinstance(x, TensorBase):
        return x
    raise TypeError(f"{op} expects a tensor, got {type(x).__name__}; make one with autograd_core.asarray(...)")


# --- arithmetic --------------------------------------------------------------------------
add = binary_op(
    "add", operator.add, lambda ns, g, out, a, b: g, lambda ns, g, out, a, b: g, saves_inputs=False, complex="safe"
)
subtract = binary_op(
    "subtract",
    operator.sub,
    lambda ns, g, out, a, b: g,
    lambda ns, g, out, a, b: -g,
    saves_inputs=False,
    complex="safe",
)
multiply = binary_op(
    "multiply", operator.mul, lambda ns, g, out, a, b: g * b, lambda ns, g, out, a, b: g * a, complex="holomorphic"
)


def _divide_jvp(ns: Any, tangents: Sequence[Any], out: Any, a: Any, b: Any) -> Any:
    """PyTorch's forward rule ``(t_a - t_b * out) / b``: one division, so 1 / 0 moved along b
    stays infinite where the sum of the two partial tangents would be inf - inf."""
    t_a, t_b = tangents
    moved = -(t_b * out) if t_a is None else t_a if t_b is None else t_a - t_b * out
    return broadcast_tangent(ns, moved / b, out)


# the divisor's gradient is -g * ((a / b) / b), as PyTorch's, which gives its infinities at b == 0
_true_divide = binary_op(
    "divide",
    operator.truediv,
    lambda ns, g, out, a, b: g / b,
    lambda ns, g, out, a, b: -g * ((a / b) / b),
    jvp=_divide_jvp,
    complex="holomorphic",
)


def divide(a: Any, b: Any) -> TensorBase:
    """``a / b``; integer operands divide as the default float dtype, as in PyTorch."""
    for x in (a, b):
        if isinstance(x, TensorBase) and kind_rank(x.dtype) < 2:
            return _true_divide(_cast(x, "float32"), b) if x is a else _true_divide(a, _cast(x, "float32"))
    return _true_divide(a, b)


def _pow_grad_base(ns: Any, g: Any, out: Any, a: Any, b: Any) -> Any:
    """d(a**b)/da = b * a**(b-1), and 0 where b == 0 (PyTorch's rule, also at a == 0)."""
    if isinstance(b, Scalar):
        return ns.zeros_like(g) if b == 0 else g * (b * a ** (b - 1))
    return ns.where(b == 0, 0.0, g * (b * a ** (b - 1)))


def _pow_grad_exponent(ns: Any, g: Any, out: Any, a: Any, b: Any) -> Any:
    """d(a**b)/db = a**b * log(a), and 0 where a == 0 and b >= 0 (PyTorch's rule); a
    negative base gives nan, as PyTorch does. The gradient multiplies the selection, not a
    branch of it, so a nan reaching it at the second order stays nan, as in PyTorch."""
    if isinstance(a, Scalar):
        slope = out * ns.log(ns.full_like(out, a))
        return g * (ns.where(b >= 0, 0.0, slope) if a == 0 else slope)
    return g * ns.where((a == 0) & (b >= 0), 0.0, out * ns.log(a))


pow = binary_op(  # noqa: A001
    "pow", operator.pow, _pow_grad_base, _pow_grad_exponent, saves_output=True, complex="holomorphic"
)
negative = unary_op("negative", lambda ns, d: -d, lambda ns, g, out, x: -g, saves="none", complex="safe")
positive = unary_op("positive", lambda ns, d: +d, lambda ns, g, out, x: g, saves="none", complex="safe")
floor_divide = binary_op("floor_divide", operator.floordiv, None, None, saves_inputs=False)
# a - b * floor(a / b): the quotient is piecewise constant
remainder = binary_op(
    "remainder", operator.mod, lambda ns, g, out, a, b: g, lambda ns, g, out, a, b: -g * ((a - out) / b)
)


def _as_operand(value: Any, like: TensorBase) -> TensorBase:
    """A scalar as a 0-d tensor of `like`'s dtype, for functions that take arrays only."""
    if isinstance(value, TensorBase):
        return value
    backend = like.backend
    return TensorBase._wrap(backend.xp.asarray(value, dtype=like.array.dtype, device=backend.device), backend)


def _select_op(name: str, pick_a: Callable[[Any, Any], Any]) -> Callable[[Any, Any], TensorBase]:
    """maximum/minimum: the gradient goes to the chosen operand, split evenly on ties."""

    def grad_a(ns: Any, g: Any, out: Any, a: Any, b: Any) -> Any:
        return ns.where(a == b, g * 0.5, ns.where(pick_a(a, b), g, 0.0))

    def grad_b(ns: Any, g: Any, out: Any, a: Any, b: Any) -> Any:
        return ns.where(a == b, g * 0.5, ns.where(pick_a(a, b), 0.0, g))

    primitive = Primitive(name, lambda ns, a, b: getattr(ns, name)(a, b), vjps=(grad_a, grad_b), jvp="elementwise")

    def op(a: Any, b: Any) -> TensorBase:
        a, b, _ = _operands(name, a, b)
        like = a if isinstance(a, TensorBase) else b
        return primitive.bind(_as_operand(a, like), _as_operand(b, like))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise {name}; on ties the gradient is shared evenly between the operands."
    return op


maximum = _select_op("maximum", operator.gt)
minimum = _select_op("minimum", operator.lt)


_WHERE = Primitive(
    "where",
    lambda ns, c, a, b: ns.where(c, a, b),
    vjps=(None, lambda ns, g, out, c, a, b: ns.where(c, g, 0.0), lambda ns, g, out, c, a, b: ns.where(c, 0.0, g)),
    saves="none",
    jvp="elementwise",
    complex="safe",
)


def where(condition: Any, x1: Any, x2: Any, /) -> TensorBase:
    """Elements of `x1` where `condition` holds, else of `x2` (either may be a Python scalar).

    >>> import autograd_core as ag
    >>> ag.where(ag.asarray([True, False]), 1.0, ag.asarray([5.0, 6.0])).tolist()
    [1.0, 6.0]
    """
    if not isinstance(x1, TensorBase) and not isinstance(x2, TensorBase):
        c = _tensor("where", condition)
        dtype = result_type(x1, x2)
        x1 = TensorBase._wrap(to_array(x1, c.backend, dtype), c.backend)
    a, b, backend = _operands("where", x1, x2)
    c = condition if isinstance(condition, TensorBase) else TensorBase._wrap(to_array(condition, backend), backend)
    common_backend("where", *(t for t in (c, a, b) if isinstance(t, TensorBase)))
    if c.dtype != "bool":
        c = TensorBase._wrap(backend.xp.astype(c.array, backend.xp.bool), backend)
    like = a if isinstance(a, TensorBase) else b
    return _WHERE.bind(c, _as_operand(a, like), _as_operand(b, like))


def _clip_grad_x(ns: Any, g: Any, out: Any, x: Any, lo: Any, hi: Any) -> Any:
    if lo is not None:
        g = ns.where(x >= lo, g, 0.0)
    return g if hi is None else ns.where(x <= hi, g, 0.0)


def _clip_grad_lo(ns: Any, g: Any, out: Any, x: Any, lo: Any, hi: Any) -> Any:
    """The lower bound's share: where it lifts x, unless the upper bound (hi <= lo) is chosen
    instead (where lo == hi neither bound gets it, as in PyTorch)."""
    return ns.where(x < lo if hi is None else (x < lo) & (lo < hi), g, 0.0)


def _clip_grad_hi(ns: Any, g: Any, out: Any, x: Any, lo: Any, hi: Any) -> Any:
    """The upper bound's share: where it lowers x, and wherever it lies below lo (then it is
    the result)."""
    return ns.where(x > hi if lo is None else (x > hi) | (hi < lo), g, 0.0)


def _clip_jvp(ns: Any, tangents: Sequence[Any], out: Any, x: Any, lo: Any, hi: Any) -> Any:
    """PyTorch's forward rules: with scalar bounds the backward's mask; with a tensor bound the
    tangent of whichever of x, lo and hi is the result, the bound's at a tie (where the
    backward gives it to x)."""
    t_x, t_lo, t_hi = (ns.zeros_like(out) if t is None else t for t in tangents)
    if isinstance(lo, (*Scalar, type(None))) and isinstance(hi, (*Scalar, type(None))):
        return _clip_grad_x(ns, t_x, out, x, lo, hi)
    if hi is None:
        return ns.where(x > lo, t_x, t_lo)
    if lo is None:
        return ns.where(x < hi, t_x, t_hi)
    return ns.where(lo > hi, t_hi, ns.where(x < lo, t_lo, ns.where(x > hi, t_hi, t_x)))


def _clip_forward(ns: Any, x: Any, lo: Any, hi: Any) -> Any:
    if lo is None or hi is None:
        return ns.clip(x, min=lo, max=hi)
    return ns.minimum(ns.maximum(x, lo), hi)  # max wherever min > max, as PyTorch's (some libraries refuse it)


_CLIP = Primitive(
    "clip",
    _clip_forward,
    vjps=(_clip_grad_x, _clip_grad_lo, _clip_grad_hi),
    jvp=_clip_jvp,
)


def _bound(x: TensorBase, value: Any) -> Any:
    """A bound of `clip`: None, a Python scalar, or a tensor in `x`'s dtype."""
    if value is None:
        return None
    return _cast(value, x.dtype) if isinstance(value, TensorBase) else _constant(value, x)


def clip(x: TensorBase, /, min: Any = None, max: Any = None) -> TensorBase:  # noqa: A002 - the standard's names
    """Values limited to [min, max] (scalars or tensors); the gradient passes to `x` where
    min <= x <= max, and to a tensor bound where it is the one chosen (as PyTorch's clamp)."""
    x = _tensor("clip", x)
    lo, hi = (_bound(x, v) for v in (min, max))
    return _CLIP.bind(x, lo, hi)


# --- comparisons and logic (never differentiable) -----------------------------------------------
def _compare_op(name: str, forward: Callable[[Any, Any], Any]) -> Callable[[Any, Any], TensorBase]:
    def op(a: Any, b: Any) -> TensorBase:
        a, b, backend = _operands(name, a, b)
        return TensorBase._wrap(forward(_data(a), _data(b)), backend)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{name}``: a boolean tensor, outside the graph."
    return op


less = _compare_op("less", operator.lt)
less_equal = _compare_op("less_equal", operator.le)
greater = _compare_op("greater", operator.gt)
greater_equal = _compare_op("greater_equal", operator.ge)
equal = _compare_op("equal", operator.eq)
not_equal = _compare_op("not_equal", operator.ne)


def _logical_op(name: str) -> Callable[[Any, Any], TensorBase]:
    """The standard's logical function `name` of both operands' truth values (nonzero is True),
    so that it takes any dtype, as PyTorch's does: a boolean tensor, outside the graph."""

    def op(a: Any, b: Any) -> TensorBase:
        a, b, backend = _operands(name, a, b)
        like, xp = a if isinstance(a, TensorBase) else b, backend.xp
        a, b = (xp.astype(_as_operand(v, like).array, xp.bool) for v in (a, b))
        return TensorBase._wrap(getattr(xp, name)(a, b), backend)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{name}`` of the operands' truth values: a boolean tensor, outside the graph."
    return op


logical_and = _logical_op("logical_and")
logical_or = _logical_op("logical_or")
logical_xor = _logical_op("logical_xor")
bitwise_and = _compare_op("bitwise_and", operator.and_)
bitwise_or = _compare_op("bitwise_or", operator.or_)
bitwise_xor = _compare_op("bitwise_xor", operator.xor)
bitwise_left_shift = _compare_op("bitwise_left_shift", operator.lshift)
bitwise_right_shift = _compare_op("bitwise_right_shift", operator.rshift)


def _predicate_op(name: str, forward: Callable[[Any, Any], Any]) -> Callable[[TensorBase], TensorBase]:
    def op(x: TensorBase, /) -> TensorBase:
        x = _tensor(name, x)
        return TensorBase._wrap(forward(x.backend.xp, x.array), x.backend)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{name}``, outside the graph."
    return op


logical_not = _predicate_op(
    "logical_not", lambda xp, d: xp.logical_not(d if d.dtype == xp.bool else xp.astype(d, xp.bool))
)
bitwise_invert = _predicate_op("bitwise_invert", lambda xp, d: ~d)
isnan = _predicate_op("isnan", lambda xp, d: xp.isnan(d))
isinf = _predicate_op("isinf", lambda xp, d: xp.isinf(d))
isfinite = _predicate_op("isfinite", lambda xp, d: xp.isfinite(d))


# --- linear algebra ---------------------------------------------------------------------------
def _matmul_grads() -> tuple[Vjp, Vjp]:
    """The VJPs of matmul on the 2-D-at-least views: a 1-D `a` is a row, a 1-D `b` a column."""

    def views(ns: Any, g: Any, a: Any, b: Any) -> tuple[Any, Any, Any]:
        a2 = a if a.ndim > 1 else ns.reshape(a, (1, -1))
        b2 = b if b.ndim > 1 else ns.reshape(b, (-1, 1))
        batch = _broadcast_shapes(tuple(a2.shape[:-2]), tuple(b2.shape[:-2]))
        return ns.reshape(g, (*batch, a2.shape[-2], b2.shape[-1])), a2, b2

    def grad_a(ns: Any, g: Any, out: Any, a: Any, b: Any) -> Any:
        g2, a2, b2 = views(ns, g, a, b)
        return ns.reshape(sum_to(ns, ns.matmul(g2, ns.matrix_transpose(b2)), a2.shape), a.shape)

    def grad_b(ns: Any, g: Any, out: Any, a: Any, b: Any) -> Any:
        g2, a2, b2 = views(ns, g, a, b)
        return ns.reshape(sum_to(ns, ns.matmul(ns.matrix_transpose(a2), g2), b2.shape), b.shape)

    return grad_a, grad_b


_MATMUL = Primitive(
    "matmul", lambda ns, a, b: ns.matmul(a, b), vjps=_matmul_grads(), jvp="multilinear", complex="holomorphic"
)


def matmul(x1: TensorBase, x2: TensorBase, /) -> TensorBase:
    """The matrix product with the standard's rules: batched, broadcast, 1-D on either side."""
    a, b, backend = _operands("matmul", x1, x2)
    if not (isinstance(a, TensorBase) and isinstance(b, TensorBase)) or a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul needs two tensors of at least 1 dimension, got {_describe(a)} and {_describe(b)}")
    return _MATMUL.bind(a, b)


def _describe(x: Any) -> str:
    return f"shape {x.shape}" if isinstance(x, TensorBase) else type(x).__name__


def _broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    ndim = builtin_max((len(s) for s in shapes), default=0)
    out = []
    for i in range(-ndim, 0):
        sizes = {s[i] for s in shapes if len(s) >= -i} - {1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {shapes} cannot be broadcast together")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def matrix_transpose(x: TensorBase, /) -> TensorBase:
    """Swap the last two axes."""
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least 2 dimensions, got shape {x.shape}")
    return permute_dims(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))


# --- shapes -------------------------------------------------------------------------------
_RESHAPE = Primitive(
    "reshape",
    lambda ns, x, shape: ns.reshape(x, shape),
    vjps=(lambda ns, g, out, x, shape: ns.reshape(g, x.shape), None),
    saves="none",
    jvp="linear",
    complex="safe",
)


def reshape(x: TensorBase, /, shape: Sequence[int], *, copy: bool | None = None) -> TensorBase:
    """The same elements in a new shape (one axis may be -1)."""
    shape = tuple(shape)
    if shape == x.shape and not copy:
        return x
    if -1 in shape and 0 in shape:
        raise ValueError(
            f"reshape: cannot reshape a tensor of {x.numel()} elements to {shape}: the size of -1 is "
            "ambiguous when another size is 0"
        )
    out = _RESHAPE.bind(x, shape)
    if copy:
        return clone(out)
    return _view(out, x, ("reshape", shape)) if _reshapes_as_view(x, out.shape) else out


def _reshapes_as_view(x: TensorBase, shape: tuple[int, ...]) -> bool:
    """Whether PyTorch's ``reshape`` of `x` to `shape` is a view (else it copies: a view of a
    view whose elements no strides can regroup into `shape`, such as a transpose flattened)."""
    if x._base is None or x._steps is None:
        return True
    return layout.reshaped(*layout.of_steps(x._base.shape, x._steps), shape) is not None


def is_contiguous(x: TensorBase) -> bool:
    """Whether `x`'s elements lie in its base's memory in row-major order, as PyTorch's
    ``is_contiguous()`` says (a tensor not a view: always)."""
    if x._base is None or x._steps is None:
        return True
    return layout.is_contiguous(*layout.of_steps(x._base.shape, x._steps))


def _inverse(axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted(range(len(axes)), key=axes.__getitem__))


_PERMUTE_DIMS = Primitive(
    "permute_dims",
    lambda ns, x, axes: ns.permute_dims(x, axes),
    vjps=(lambda ns, g, out, x, axes: ns.permute_dims(g, _inverse(axes)), None),
    saves="none",
    jvp="linear",
    complex="safe",
)


def permute_dims(x: TensorBase, /, axes: Sequence[int]) -> TensorBase:
    """The axes of `x` in the order `axes`."""
    axes = tuple(a % builtin_max(x.ndim, 1) for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"permute_dims: {axes} is not a permutation of the {x.ndim} axes")
    return _view(_PERMUTE_DIMS.bind(x, axes), x, ("permute", axes))


def swapaxes(x: TensorBase, axis1: int, axis2: int) -> TensorBase:
    """`x` with two axes exchanged (a view); a 0-d tensor's one axis is 0 or -1, as in PyTorch."""
    axes = list(range(x.ndim))
    if x.ndim == 0 and {axis1, axis2} <= {0, -1}:
        return permute_dims(x, ())
    axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
    return permute_dims(x, axes)


def expand_dims(x: TensorBase, /, axis: int | Sequence[int] = 0) -> TensorBase:
    """New axes of size 1 at `axis` (an int or a tuple of positions in the result)."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    ndim = x.ndim + len(axes)
    if not all(-ndim <= a < ndim for a in axes):
        raise IndexError(f"expand_dims: axis {axis} is out of range for a result of {ndim} dimensions")
    positions = sorted(a % ndim for a in axes)
    if len(set(positions)) != len(positions):
        raise ValueError(f"expand_dims: repeated axis in {axis}")
    sizes = iter(x.shape)
    return reshape(x, tuple(1 if i in positions else next(sizes) for i in range(ndim)))


def squeeze(x: TensorBase, /, axis: Axis = None) -> TensorBase:
    """Drop axes of size 1 (all of them when `axis` is None, as PyTorch does)."""
    if axis is None:
        axes = {i for i, n in enumerate(x.shape) if n == 1}
    else:
        axes = set(_axes(axis, x.ndim))
        if any(x.shape[i] != 1 for i in axes):
            raise ValueError(f"squeeze: axis {axis} of shape {x.shape} does not have size 1")
    return reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in axes))


def flatten(x: TensorBase, start_dim: int = 0, end_dim: int = -1) -> TensorBase:
    if x.ndim == 0:
        return reshape(x, (1,))
    start, end = start_dim % x.ndim, end_dim % x.ndim
    return reshape(x, (*x.shape[:start], math.prod(x.shape[start : end + 1]), *x.shape[end + 1 :]))


_BROADCAST_TO = Primitive(
    "broadcast_to",
    lambda ns, x, shape: ns.broadcast_to(x, shape),
    vjps=(lambda ns, g, out, x, shape: sum_to(ns, g, x.shape), None),
    saves="none",
    jvp="linear",
    complex="safe",
)


def broadcast_to(x: TensorBase, /, shape: Sequence[int]) -> TensorBase:
    shape = tuple(shape)
    if shape == x.shape:
        return x
    return _view(_BROADCAST_TO.bind(x, shape), x, ("broadcast", shape))


def _concat_piece(position: int, count: int) -> Vjp | None:
    """The VJP of concat's input at `position` (0 is the axis): its slice of the gradient."""
    if position == 0:
        return None

    def piece(ns: Any, g: Any, out: Any, axis: int, *parts: Any) -> Any:
        start = builtin_sum(p.shape[axis] for p in parts[: position - 1])
        return basic_index(
            ns, g, (slice(None),) * axis + (slice(start, start + parts[position - 1].shape[axis]), Ellipsis)
        )

    return piece


_CONCAT = Primitive(
    "concat",
    lambda ns, axis, *parts: ns.concat(list(parts), axis=axis),
    vjps=_concat_piece,
    saves="none",
    jvp="linear",
    complex="safe",
)


def concat(arrays: Sequence[TensorBase], /, *, axis: int | None = 0) -> TensorBase:
    """The tensors joined along `axis` (flattened first when `axis` is None)."""
    tensors = list(arrays)
    if axis is None:
        tensors, axis = [reshape(t, (-1,)) for t in tensors], 0
    common_backend("concat", *tensors)
    if any(t.ndim == 0 for t in tensors):
        raise ValueError("concat: 0-d tensors cannot be joined along an axis; use stack, or reshape them to (1,)")
    target = result_type(*tensors)
    tensors = [_cast(t, target) for t in tensors]
    return _CONCAT.bind(axis % tensors[0].ndim, *tensors)


def stack(arrays: Sequence[TensorBase], /, *, axis: int = 0) -> TensorBase:
    tensors = list(arrays)
    axis = axis % (tensors[0].ndim + 1)
    return concat([expand_dims(t, axis=axis) for t in tensors], axis=axis)


def _astype_grad(ns: Any, g: Any, out: Any, x: Any, dtype: Any) -> Any:
    """The gradient back in `x`'s dtype; a real input of a complex cast gets the real part."""
    if ns.isdtype(g.dtype, "complex floating") and not ns.isdtype(x.dtype, "complex floating"):
        g = ns.real(g)
    return ns.astype(g, x.dtype, copy=False)


_ASTYPE = Primitive(
    "astype",
    lambda ns, x, dtype: ns.astype(x, dtype),
    vjps=(_astype_grad, None),
    saves="none",
    jvp="linear",
    complex="safe",
)


def astype(x: TensorBase, dtype: Any, /, *, copy: bool = True, device: Any = None) -> TensorBase:
    """`x` converted to `dtype` (a new tensor unless ``copy=False`` and nothing changes); the
    gradient is converted back to `x`'s dtype."""
    x = _tensor("astype", x)
    if device is not None:
        x = x.to_device(device)
    cast = _cast(x, dtype)
    return clone(cast) if cast is x and copy else cast


def _cast(x: TensorBase, dtype: Any) -> TensorBase:
    """`x` in `dtype`: `x` itself when it already is (the engine's cast, which never copies)."""
    dtype = as_dtype(dtype)
    target = x.backend.dtype(dtype.name)
    if x.array.dtype == target:
        return x
    if not (dtype.is_floating_point or dtype.is_complex):  # integers and bools carry no gradient
        return TensorBase._wrap(_ASTYPE(raw_namespace(x.backend), x.array, target), x.backend)
    out = _ASTYPE.bind(x, target)
    return mark(out, COMPLEX) if dtype.is_complex and out.requires_grad else out


_CLONE = Primitive(
    "clone",
    lambda ns, x: ns.asarray(x, copy=True),
    vjps=(lambda ns, g, out, x: g,),
    saves="none",
    jvp="linear",
    complex="safe",
)


def clone(x: TensorBase) -> TensorBase:
    """A copy that owns its memory; the gradient passes through unchanged."""
    return _CLONE.bind(x)


def to_backend(x: TensorBase, backend: backends.Backend) -> TensorBase:
    """The same values on another backend (or device), through the host; differentiable."""
    return move(x, backend)


# --- reductions -----------------------------------------------------------------------------
def _axes(axis: Axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for a in axes:
        if not -builtin_max(ndim, 1) <= a < builtin_max(ndim, 1):
            raise ValueError(f"axis {a} is out of range for a tensor of {ndim} dimensions")
    return tuple(sorted(a % builtin_max(ndim, 1) for a in axes)) if ndim else ()


def _kept_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def expand_back(ns: Any, g: Any, shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """A reduction's output gradient spread back over the reduced axes."""
    return ns.broadcast_to(ns.reshape(g, _kept_shape(shape, axes)), shape)


def _accumulated_in_float32(reduction: Callable[..., TensorBase]) -> Callable[..., TensorBase]:
    """`reduction` computed in float32 for a float16 tensor (unless a `dtype` is asked for),
    its result cast back to float16: PyTorch's reductions accumulate float16 in float32, where
    65,536 ones would already overflow. The casts are differentiable, so the backward runs in
    float32 too."""

    @functools.wraps(reduction)
    def reduce(x: TensorBase, /, *args: Any, **kwargs: Any) -> TensorBase:
        if isinstance(x, TensorBase) and x.dtype == "float16" and kwargs.get("dtype") is None:
            return _cast(reduction(_cast(x, "float32"), *args, **kwargs), "float16")
        return reduction(x, *args, **kwargs)

    return reduce


@_accumulated_in_float32
def sum(x: TensorBase, /, axis: Axis = None, *, dtype: Any = None, keepdims: bool = False) -> TensorBase:  # noqa: A001
    """The sum over `axis` (all axes when None)."""
    x = _tensor("sum", x)
    axes = _axes(axis, x.ndim)
    target = None if dtype is None else x.backend.dtype(as_dtype(dtype).name)
    return _SUM.bind(x, axes, keepdims, target)


def _sum_grad(ns: Any, g: Any, out: Any, x: Any, axes: tuple[int, ...], keepdims: bool, dtype: Any) -> Any:
    """The output's gradient spread over the summed axes, in `x`'s dtype (a sum may be
    computed in another)."""
    grad = expand_back(ns, g, x.shape, axes)
    return grad if grad.dtype == x.dtype else ns.astype(grad, x.dtype, copy=False)


_SUM = Primitive(
    "sum",
    lambda ns, x, axes, keepdims, dtype: ns.sum(x, axis=axes, keepdims=keepdims, dtype=dtype),
    vjps=(_sum_grad, None, None, None),
    saves="none",
    jvp="linear",
    complex="safe",
)


@_accumulated_in_float32
def mean(x: TensorBase, /, axis: Axis = None, *, keepdims: bool = False) -> TensorBase:
    axes = _axes(axis, x.ndim)
    return sum(x, axis=axes, keepdims=keepdims) / builtin_max(math.prod(x.shape[a] for a in axes), 0)


def _extreme(op: str, x: TensorBase, axis: Axis, keepdims: bool) -> TensorBase:
    """max/min; the gradient is shared evenly among tied extremes (among the NaNs, when the
    extreme is NaN, as PyTorch does)."""
    x = _tensor(op, x)
    axes = _axes(axis, x.ndim)
    if any(x.shape[a] == 0 for a in axes):
        raise ValueError(f"{op} over an empty axis of a tensor of shape {x.shape}")
    if 0 in x.shape:  # an empty result, of the reduced shape (dask's max/min mistake it)
        return sum(x, axis=axes, keepdims=keepdims)
    return _EXTREMES[op].bind(x, axes, keepdims)


def _extreme_shares(ns: Any, out: Any, x: Any, axes: tuple[int, ...]) -> Any:
    """Each element's share of its group's extreme: 1/count at the tied extremes, else 0."""
    hits = ns.astype((x == ns.reshape(out, _kept_shape(x.shape, axes))) | ns.isnan(x), x.dtype)
    return hits / ns.sum(hits, axis=axes, keepdims=True)


def _extreme_grad(ns: Any, g: Any, out: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    return expand_back(ns, g, x.shape, axes) * _extreme_shares(ns, out, x, axes)


def _extreme_jvp(ns: Any, tangents: Sequence[Any], out: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    """The transpose of the even split: the mean of the tangents at the tied extremes."""
    return ns.sum(tangents[0] * _extreme_shares(ns, out, x, axes), axis=axes, keepdims=keepdims)


_EXTREMES = {
    op: Primitive(
        op,
        lambda ns, x, axes, keepdims, op=op: getattr(ns, op)(x, axis=axes, keepdims=keepdims),
        vjps=(_extreme_grad, None, None),
        saves="inputs and output",
        jvp=_extreme_jvp,
    )
    for op in ("max", "min")
}


def max(x: TensorBase, /, axis: Axis = None, *, keepdims: bool = False) -> TensorBase:  # noqa: A001
    """The largest element over `axis`."""
    return _extreme("max", x, axis, keepdims)


def min(x: TensorBase, /, axis: Axis = None, *, keepdims: bool = False) -> TensorBase:  # noqa: A001
    """The smallest element over `axis`."""
    return _extreme("min", x, axis, keepdims)


@_accumulated_in_float32
def logsumexp(x: TensorBase, /, axis: Axis = None, *, keepdims: bool = False) -> TensorBase:
    """log(sum(exp(x))) computed without overflow, for logits of any size."""
    axes = _axes(axis, x.ndim)
    if 0 in x.shape:  # empty, or the log of an empty sum (-inf); zero gradients, as PyTorch
        return sum(x, axis=axes, keepdims=keepdims) - math.inf
    return _LOGSUMEXP.bind(x, axes, keepdims)


def _logsumexp(ns: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    shift = ns.max(x, axis=axes, keepdims=True)
    shift = ns.where(ns.isfinite(shift), shift, ns.zeros_like(shift))
    kept = ns.log(ns.sum(ns.exp(x - shift), axis=axes, keepdims=True)) + shift
    return kept if keepdims else ns.reshape(kept, tuple(n for i, n in enumerate(x.shape) if i not in axes))


def _softmax_of(ns: Any, out: Any, x: Any, axes: tuple[int, ...]) -> Any:
    """logsumexp's derivative, the softmax of `x` over `axes`, from the output `out`."""
    return ns.exp(x - expand_back(ns, out, x.shape, axes))


_LOGSUMEXP = Primitive(
    "logsumexp",
    _logsumexp,
    vjps=(
        lambda ns, g, out, x, axes, keepdims: expand_back(ns, g, x.shape, axes) * _softmax_of(ns, out, x, axes),
        None,
        None,
    ),
    saves="inputs and output",
    jvp=lambda ns, tangents, out, x, axes, keepdims: ns.sum(
        tangents[0] * _softmax_of(ns, out, x, axes), axis=axes, keepdims=keepdims
    ),
)


@_accumulated_in_float32
def var(x: TensorBase, /, axis: Axis = None, *, correction: float = 0.0, keepdims: bool = False) -> TensorBase:
    """Variance; `correction=1` gives the unbiased estimate (the standard's default is 0)."""
    axes = _axes(axis, x.ndim)
    centred = x - mean(x, axis=axes, keepdims=True)
    count = math.prod(x.shape[a] for a in axes)
    return sum(centred * centred, axis=axes, keepdims=keepdims) / builtin_max(count - correction, 0)


@_accumulated_in_float32
def log_softmax(x: TensorBase, axis: int = -1) -> TensorBase:
    return x - logsumexp(x, axis=axis, keepdims=True)


# --- indexing -------------------------------------------------------------------------------
def _basic_index(x: TensorBase, key: tuple) -> TensorBase:
    """``x[key]`` for a basic key (ints, slices, None, one Ellipsis): a view of `x`."""
    return _view(basic_index.bind(x, key), x, ("index", key))


def take(x: TensorBase, indices: Any, /, axis: int | None = None) -> TensorBase:
    """Elements of `x` at the integer `indices` along `axis` (a gather), which the indices'
    shape replaces, as numpy's ``take``: a 0-d index drops the axis (the standard's 1-D
    indices keep it). The gradient is an accumulating scatter-add, right with repeated indices."""
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"take: axis is required for a tensor of {x.ndim} dimensions")
        axis = 0
    axis = axis % builtin_max(x.ndim, 1)
    backend = _index_backend(x, [indices])
    index = _index_array(indices, backend)
    shape = tuple(index.shape)
    index = backend.xp.reshape(index, (-1,))  # one kernel call of 1-D indices, on every library
    _check_bounds(backend, index, x.shape[axis])
    index = backend.xp.where(index < 0, index + x.shape[axis], index)  # -1 and n-1: one row for the scatter-add
    out = _take_checked(x, index, axis, backend)
    return out if len(shape) == 1 else reshape(out, (*x.shape[:axis], *shape, *x.shape[axis + 1 :]))


def _take_checked(x: TensorBase, index: Any, axis: int, backend: backends.Backend | None = None) -> TensorBase:
    """`take` of the 1-D raw `index`, already checked to lie in [0, n); on `backend` where
    the index is batched by a vmap over `x`'s backend."""
    if backend is None or backend is x.backend:
        return indexing.take.bind(x, index, axis)
    return indexing.take.bind(x, TensorBase._wrap(index, backend), axis)


def _index_backend(x: TensorBase, keys: Sequence[Any]) -> backends.Backend:
    """The backend an indexing of `x` by `keys` computes on: `x`'s, or a vmap batch's whose
    index tensors are per example."""
    tensors = [k for k in keys if isinstance(k, TensorBase)]
    return common_backend("indexing", x, *tensors) if tensors else x.backend


def _index_array(indices: Any, backend: backends.Backend) -> Any:
    if isinstance(indices, TensorBase):
        if indices.backend is not backend and not encloses(backend, indices.backend):
            raise RuntimeError(
                f"indexing a tensor on {backend} with indices on {indices.backend}; move the "
                f"indices with .to({backend.name!r}) first"
            )
        return indices.array
    if backend.is_native(indices):
        return indices
    return to_array(indices, backend, "int64")


def _check_bounds(backend: backends.Backend, index: Any, n: int) -> None:
    """Out-of-range indices raise, on every backend (jax would clamp them silently); inside a
    compiled trace the values are unknown and cannot be checked."""
    if index.shape and math.prod(index.shape) and not backend.is_traced(index):
        low, high = backend.value_range(index)
        if low < -n or high >= n:
            raise IndexError(f"index out of range for an axis of size {n}")


def _is_array_key(k: Any) -> bool:
    return isinstance(k, bool) or not isinstance(k, (int, slice, type(None), type(Ellipsis)))


def _normalize_basic(x: TensorBase, key: tuple) -> tuple:
    """Check integer keys against the shape (every backend raises, none clamps)."""
    explicit = builtin_sum(k is not None and k is not Ellipsis for k in key)
    if explicit > x.ndim:
        raise IndexError(f"too many indices ({explicit}) for a tensor of {x.ndim} dimensions")
    axis = 0
    for k in key:
        if k is Ellipsis:
            axis += x.ndim - explicit
        elif k is not None:
            if isinstance(k, int) and not -x.shape[axis] <= k < x.shape[axis]:
                raise IndexError(f"index {k} is out of range for axis {axis} of size {x.shape[axis]}")
            axis += 1
    return key if any(k is Ellipsis for k in key) else (*key, Ellipsis)


def getitem(x: TensorBase, key: Any) -> TensorBase:
    """``x[key]`` with the standard's indexing: ints, slices, None and Ellipsis (a view),
    integer arrays on adjacent axes (a gather), and a boolean mask (its True positions)."""
    key = tuple(_index_key(k, x.backend) for k in (key if isinstance(key, tuple) else (key,)))
    if not any(_is_array_key(k) for k in key):
        return _basic_index(x, _normalize_basic(x, key))
    if len(key) == 1 and _is_bool(key[0]) and getattr(key[0], "ndim", 0) == 0:  # x[True]: a new axis of 1 or 0
        expanded = _basic_index(x, (None, Ellipsis))
        return expanded if bool(key[0]) else _basic_index(expanded, (slice(0, 0), Ellipsis))
    key = _expand_masks(x, key)
    if any(k is None for k in key):  # new axes first, as a view; then index that view
        x = _basic_index(x, (*(None if k is None else slice(None) for k in _without_ellipsis(x, key)), Ellipsis))
        key = tuple(slice(None) if k is None else k for k in _without_ellipsis(x, key))
    # integers beside integer arrays are 0-d integer arrays, broadcast with the others
    key = tuple(x.backend.xp.asarray(k, device=x.backend.device) if isinstance(k, int) else k for k in key)
    key = _without_ellipsis(x, key)
    key = key + (slice(None),) * (x.ndim - len(key))
    positions = [i for i, k in enumerate(key) if _is_array_key(k)]
    if positions != list(range(positions[0], positions[-1] + 1)):
        raise IndexError("integer array indices must be on adjacent axes")
    sliced = getitem(x, tuple(slice(None) if _is_array_key(k) else k for k in key))
    backend = _index_backend(x, [key[i] for i in positions])
    return _gather(sliced, positions[0], [_index_array(key[i], backend) for i in positions], backend)


def _without_ellipsis(x: TensorBase, key: tuple) -> tuple:
    """`key` with its Ellipsis (if any) spelled out as full slices."""
    for i, k in enumerate(key):
        if k is Ellipsis:
            explicit = builtin_sum(k is not None and k is not Ellipsis for k in key)
            return key[:i] + (slice(None),) * (x.ndim - explicit) + key[i + 1 :]
    return key


_VALID_INDICES = "only integers, slices (`:`), ellipsis (`...`), None and integer or boolean tensors are valid indices"


def _index_key(k: Any, backend: backends.Backend) -> Any:
    """One element of an index on `backend`, checked: ints (a Python bool too, which getitem
    takes as a 0-d mask), slices, None and Ellipsis as they are, numpy's integer scalars as
    ints, integer and boolean tensors and arrays as they are, and a (nested) list or tuple as
    the host array of its ints or bools. Anything else raises IndexError, as in numpy and
    PyTorch: a float above all, which would otherwise index as the integer below it."""
    if isinstance(k, (int, slice)) or k is None or k is Ellipsis:
        return k
    if isinstance(k, numbers.Integral):
        return int(k)
    if isinstance(k, (list, tuple)):
        try:
            k = backend.host_array(k)
        except (TypeError, ValueError):
            raise IndexError(f"{k!r} is a ragged list or holds values that are not numbers; {_VALID_INDICES}") from None
        k = k if k.size else k.astype("int64")  # [] selects nothing, as an integer index
    kind = _index_kind(k, backend)
    if kind not in ("bool", "signed integer", "unsigned integer"):
        raise IndexError(f"{_VALID_INDICES} (got {type(k).__name__ if kind is None else f'a {kind} array'})")
    return k


def _index_kind(k: Any, backend: backends.Backend) -> str | None:
    """The kind of the dtype of `k` (a tensor, or an array of any library), or None when it has
    none (a Python float, a string...)."""
    if isinstance(k, TensorBase):
        return k.dtype.kind
    dtype = getattr(k, "dtype", None)
    if dtype is None:
        return None
    try:
        name = backend.dtype_name(dtype) if backend.is_native(k) else str(dtype).rsplit(".", 1)[-1]
        return as_dtype(name).kind
    except (TypeError, ValueError):  # a dtype outside the standard's (strings, bfloat16...)
        return str(dtype)


def _assigned_key(k: Any, backend: backends.Backend) -> Any:
    """One element of an assignment's index on `backend`, checked as `_index_key`: 0-d integer
    arrays and tensors as the ints they hold (numpy and PyTorch write through them as through
    ints)."""
    k = _index_key(k, backend)
    if getattr(k, "ndim", None) == 0 and not _is_bool(k):
        return operator.index(k)
    return k


def _is_bool(k: Any) -> bool:
    if isinstance(k, bool):
        return True
    dtype = getattr(k, "dtype", None)
    return dtype is not None and (dtype == "bool" if isinstance(dtype, DType) else str(dtype).endswith("bool"))


def _expand_masks(x: TensorBase, key: tuple) -> tuple:
    """Each boolean mask in `key` replaced by the integer arrays of its True positions."""
    out: list[Any] = []
    for k in key:
        if _is_array_key(k) and _is_bool(k):
            mask = _index_array(k, x.backend) if isinstance(k, TensorBase) else to_array(k, x.backend, "bool")
            if mask.ndim == 0:
                raise IndexError("a 0-d boolean index is not supported; use where(mask, x, 0) instead")
            out.extend(x.backend.xp.nonzero(mask))
        else:
            out.append(k)
    return tuple(out)


def _gather(x: TensorBase, first: int, arrays: list, backend: backends.Backend) -> TensorBase:
    """Index axes first..first+len(arrays) of `x` by the broadcast integer `arrays` (raw, of
    `backend`): the axes are merged into one and the arrays into one flat index, so one `take`
    does it."""
    xp, sizes = backend.xp, x.shape[first : first + len(arrays)]
    arrays = list(xp.broadcast_arrays(*arrays)) if len(arrays) > 1 else arrays
    flat, stride = 0, 1
    for a, n in zip(reversed(arrays), reversed(sizes)):
        _check_bounds(backend, a, n)
        flat = flat + xp.where(a < 0, a + n, a) * stride
        stride *= n
    index_shape = tuple(flat.shape)
    merged = reshape(x, (*x.shape[:first], stride, *x.shape[first + len(arrays) :]))
    picked = take(merged, TensorBase._wrap(xp.reshape(flat, (-1,)), backend), axis=first)
    return reshape(picked, (*x.shape[:first], *index_shape, *x.shape[first + len(arrays) :]))


def _masked_put(x: TensorBase, mask: Any, value: TensorBase) -> TensorBase:
    """`x` with `value` written where the boolean `mask` (over x's leading axes) is True:
    `value` is one element per True position (or broadcasts to them, a scalar to all)."""
    backend = x.backend
    mask = mask if isinstance(mask, TensorBase) else TensorBase._wrap(to_array(mask, backend, "bool"), backend)
    if mask.ndim == 0:
        mask = broadcast_to(mask, x.shape[:0])
    full_mask = broadcast_to(reshape(mask, (*mask.shape, *(1,) * (x.ndim - mask.ndim))), x.shape)
    if value.ndim == 0:
        return where(full_mask, value, x)
    rows, rest = math.prod(mask.shape), x.shape[mask.ndim :]
    positions = backend.xp.nonzero(backend.xp.reshape(mask.array, (-1,)))[0]
    picked = broadcast_to(value, (positions.shape[0], *rest))
    # positions are distinct, so adding into zeros writes; booleans are added as 0 and 1 (not
    # every library adds booleans)
    addable = _cast(picked, "uint8") if picked.dtype == "bool" else picked
    written = _cast(index_add.bind(addable, (rows, *rest), 0, positions), picked.dtype)
    return where(full_mask, reshape(written, x.shape), x)


def index_put(x: TensorBase, key: Any, value: Any) -> TensorBase:
    """`x` with `value` written at `key` (a basic index or one boolean mask), out of place
    (``x[key] = value`` on a Tensor uses it); the gradient goes to `x` outside `key` and to
    `value` inside."""
    backend = x.backend
    key = tuple(_assigned_key(k, backend) for k in (key if isinstance(key, tuple) else (key,)))
    if not isinstance(value, TensorBase):
        value = TensorBase._wrap(to_array(value, backend, x.dtype), backend)
    value = _cast(value, x.dtype)
    if len(key) == 1 and _is_array_key(key[0]) and _is_bool(key[0]):
        return _masked_put(x, key[0], value)
    if any(_is_array_key(k) for k in key):
        raise IndexError("assignment through integer-array indices is not supported; use where(mask, value, x)")
    key = _normalize_basic(x, key)
    ns = raw_namespace(backend)
    region = tuple(basic_index(ns, x.array, key).shape)
    inside = scatter(ns, ns.ones(region, dtype=ns.bool, device=backend.device), x.shape, key)
    written = scatter.bind(broadcast_to(value, region), x.shape, key)
    return where(TensorBase._wrap(inside, backend), written, x)


def _outside_the_graph(x: TensorBase, _: None) -> TensorBase:
    """The view ``detach()`` and ``.data`` make: the same array, no graph."""
    return TensorBase._wrap(x.array, x.backend)


def _whole_base(base: TensorBase, _: None, values: TensorBase) -> TensorBase:
    """A write through ``detach()`` or ``.data``: the new values are the whole base's."""
    return values


_VIEW_OPS.update(
    index=_basic_index,
    reshape=reshape,
    permute=permute_dims,
    broadcast=broadcast_to,
    detach=_outside_the_graph,
    data=_outside_the_graph,
)
_VIEW_WRITES.update(
    index=index_put,
    reshape=lambda base, shape, values: reshape(values, base.shape),
    permute=lambda base, axes, values: permute_dims(values, _inverse(axes)),
    broadcast=refuse_writes("a broadcast view"),
    detach=_whole_base,
    data=_whole_base,
)
