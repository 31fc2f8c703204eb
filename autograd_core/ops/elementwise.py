"""The elementwise functions, one table: each a line, the library's own function forward,
PyTorch's derivative formula backward (the arithmetic operators are `autograd_core.ops.core`'s
`binary_op`s; sigmoid, relu and erf bind the fused primitives of `primitives.activations`).

A rule of None is a zero gradient, as PyTorch gives for the piecewise-constant functions
(floor, ceil, round, trunc) and for the operand that only lends its sign (copysign's `x2`)
or its direction (nextafter's `x2`). Gradients through complex values are left to the engine.

>>> import autograd_core as ag
>>> x = ag.tensor([0.5, 2.0], dtype="float64", requires_grad=True)
>>> ag.atan2(x, 1.0).sum().backward()  # d atan(x) / dx = 1 / (1 + x^2)
>>> x.grad.tolist()
[0.8, 0.2]
"""

from __future__ import annotations

import math
from typing import Any

from autograd_core.graph.tensor_base import TensorBase, Vjp
from autograd_core.ops.core import (
    _accumulated_in_float32,
    _predicate_op,
    _tensor,
    binary_op,
    broadcast_tangent,
    elementwise,
    log_softmax,
    unary_op,
)
from autograd_core.primitives import activations

__all__ = [
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "ceil",
    "conj",
    "copysign",
    "cos",
    "cosh",
    "erf",
    "exp",
    "exp2",
    "expm1",
    "floor",
    "hypot",
    "imag",
    "log",
    "log10",
    "log1p",
    "log2",
    "logaddexp",
    "nextafter",
    "real",
    "reciprocal",
    "relu",
    "round",
    "sigmoid",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "softmax",
    "sqrt",
    "square",
    "tan",
    "tanh",
    "trunc",
]

_LN2, _LN10 = math.log(2.0), math.log(10.0)
H = "holomorphic"


def _unary(
    name: str,
    vjp: Vjp | None,
    saves: str = "inputs",
    doc: str = "",
    jvp: str | None = None,
    complex: str | None = None,  # noqa: A002 - the primitive's fact
) -> Any:
    """`unary_op` whose forward is the library's function of the same name."""
    return unary_op(name, lambda ns, d: getattr(ns, name)(d), vjp, saves, doc, jvp, complex)


def _binary(
    name: str,
    vjp_a: Vjp | None,
    vjp_b: Vjp | None,
    saves_inputs: bool = True,
    saves_output: bool = False,
    doc: str = "",
    jvp: Any = None,
) -> Any:
    """`binary_op` whose forward is the library's function of the same name."""
    return binary_op(name, name, vjp_a, vjp_b, saves_inputs, saves_output, doc, jvp)


def _rsqrt(ns: Any, x: Any) -> Any:
    """1 / sqrt(x), as PyTorch's rsqrt: at x = 0 its derivative is -inf, so the second
    derivatives at the branch points are PyTorch's infinities (a root of a product, such as
    sqrt((1 - x)(1 + x)), would give inf * 0 = nan there)."""
    return 1 / ns.sqrt(x)


# --- trigonometric and hyperbolic -------------------------------------------------------------
sin = _unary("sin", lambda ns, g, out, x: g * ns.cos(x), doc="The sine of x in radians.", complex=H)
cos = _unary("cos", lambda ns, g, out, x: -g * ns.sin(x), doc="The cosine of x in radians.", complex=H)
tanh = _unary("tanh", lambda ns, g, out, x: activations.tanh_backward(ns, g, out), "output", complex=H)
# PyTorch's formulas (1 - x^2 and x^2 - 1 as one polynomial), which give its infinities at the
# branch points to the second order
acos = _unary(
    "acos",
    lambda ns, g, out, x: g * -_rsqrt(ns, 1 - x * x),
    doc="The inverse cosine, in radians, for x in [-1, 1].",
)
asin = _unary(
    "asin", lambda ns, g, out, x: g * _rsqrt(ns, 1 - x * x), doc="The inverse sine, in radians, for x in [-1, 1]."
)
atan = _unary("atan", lambda ns, g, out, x: g / (x * x + 1), doc="The inverse tangent, in radians.")
tan = _unary(
    "tan",
    lambda ns, g, out, x: g * (out * out + 1),
    "output",
    doc="The tangent of x in radians.",
    complex="holomorphic",
)
sinh = _unary("sinh", lambda ns, g, out, x: g * ns.cosh(x), doc="The hyperbolic sine.", complex="holomorphic")
cosh = _unary("cosh", lambda ns, g, out, x: g * ns.sinh(x), doc="The hyperbolic cosine.", complex="holomorphic")
acosh = _unary(
    "acosh", lambda ns, g, out, x: g * _rsqrt(ns, x * x - 1), doc="The inverse hyperbolic cosine, for x >= 1."
)
asinh = _unary("asinh", lambda ns, g, out, x: g * _rsqrt(ns, x * x + 1), doc="The inverse hyperbolic sine.")
atanh = _unary(
    "atanh", lambda ns, g, out, x: g * (1 / (1 - x * x)), doc="The inverse hyperbolic tangent, for x in (-1, 1)."
)


def _atan2_scale(ns: Any, a: Any, b: Any) -> Any:
    """1 / (a^2 + b^2), and 0 where that is infinite: PyTorch's convention, a zero gradient at
    the origin (and where the squares underflow)."""
    scale = 1 / (a * a + b * b)
    return ns.where(ns.isinf(scale), 0.0, scale)


def _atan2_jvp(ns: Any, tangents: Any, out: Any, a: Any, b: Any) -> Any:
    """PyTorch's forward rule ``(b t_a - a t_b) / (a^2 + b^2)``: nan at the origin, where the
    backward gives 0."""
    t_a, t_b = tangents
    moved = -(a * t_b) if t_a is None else b * t_a if t_b is None else b * t_a - a * t_b
    return broadcast_tangent(ns, moved / (a * a + b * b), out)


atan2 = _binary(
    "atan2",
    lambda ns, g, out, a, b: g * b * _atan2_scale(ns, a, b),
    lambda ns, g, out, a, b: g * -a * _atan2_scale(ns, a, b),
    jvp=_atan2_jvp,
    doc="""The angle of the point (x2, x1) in radians, in [-pi, pi]: the quadrant-aware atan(x1 / x2).

    >>> import autograd_core as ag
    >>> ag.atan2(ag.asarray(-1.0), -1.0).item()  # -3 pi / 4
    -2.35619...
    """,
)

# --- exponentials and logarithms ----------------------------------------------------------------
exp = _unary("exp", lambda ns, g, out, x: g * out, "output", doc="e to the power x.", complex=H)
log = _unary("log", lambda ns, g, out, x: g / x, doc="The natural logarithm.", complex=H)
log1p = _unary("log1p", lambda ns, g, out, x: g / (1 + x), doc="log(1 + x), accurate for x near 0.", complex=H)
expm1 = _unary(
    "expm1",
    lambda ns, g, out, x: g * (out + 1),
    "output",
    doc="""exp(x) - 1, accurate for x near 0.

    >>> import autograd_core as ag
    >>> ag.expm1(ag.asarray(1e-10, dtype="float64")).item()
    1.00000000005e-10
    """,
    complex="holomorphic",
)
exp2 = unary_op(
    "exp2",
    lambda ns, d: 2.0**d,
    lambda ns, g, out, x: g * out * _LN2,
    "output",
    doc="2 to the power x (an extension, as in PyTorch and numpy).",
)
log2 = _unary("log2", lambda ns, g, out, x: g / (x * _LN2), doc="The base-2 logarithm.")
log10 = _unary("log10", lambda ns, g, out, x: g / (x * _LN10), doc="The base-10 logarithm.")
# d/da log(e^a + e^b) = 1 / (1 + e^(b - a)), PyTorch's form: an overflowing e^(b - a) gives 0
logaddexp = _binary(
    "logaddexp",
    lambda ns, g, out, a, b: g / (1 + ns.exp(b - a)),
    lambda ns, g, out, a, b: g / (1 + ns.exp(a - b)),
    doc="""log(exp(x1) + exp(x2)) without overflow; its gradients never overflow either.

    >>> import autograd_core as ag
    >>> ag.logaddexp(ag.asarray([1000.0]), 1000.0).tolist()
    [1000.6931...]
    """,
)

# --- powers and magnitudes ------------------------------------------------------------------
sqrt = _unary("sqrt", lambda ns, g, out, x: g / (2 * out), "output", doc="The square root.", complex=H)
abs = _unary("abs", lambda ns, g, out, x: g * ns.sign(x), doc="The magnitude |x|.")  # noqa: A001
square = _unary("square", lambda ns, g, out, x: g * (2 * x), doc="x * x.", complex="holomorphic")
reciprocal = _unary("reciprocal", lambda ns, g, out, x: -g * (out * out), "output", doc="1 / x.", complex="holomorphic")
hypot = _binary(
    "hypot",
    lambda ns, g, out, a, b: g * a / out,
    lambda ns, g, out, a, b: g * b / out,
    saves_output=True,
    doc="""sqrt(x1**2 + x2**2) without overflow or underflow on the way.

    >>> import autograd_core as ag
    >>> ag.hypot(ag.asarray([3e300], dtype="float64"), 4e300).tolist()  # 9e600 overflows
    [5e+300]
    """,
)
# PyTorch's rule: x1 gets g * (out / x1), with 0 where x1 == 0 (nan for an infinite x1)
copysign = _binary(
    "copysign",
    lambda ns, g, out, a, b: g * ns.where(a == 0, 0.0, out / a),
    None,
    saves_output=True,
    doc="""The magnitude of x1 with the sign bit of x2 (-0.0 counts as negative).

    >>> import autograd_core as ag
    >>> ag.copysign(ag.asarray([1.5, 2.0]), ag.asarray([-0.0, 3.0])).tolist()
    [-1.5, 2.0]
    """,
)
# PyTorch: nextafter(x1, x2) differs from x1 by one ulp, so x1 gets g and x2 nothing
nextafter = _binary(
    "nextafter",
    lambda ns, g, out, a, b: g,
    None,
    saves_inputs=False,
    doc="The next representable floating-point value after x1 towards x2.",
)

# --- rounding and sign: piecewise constant ------------------------------------------------------
sign = _unary("sign", None, "none", doc="-1, 0 or 1 by the sign of x.")
floor = _unary("floor", None, "none", doc="The largest integer-valued number <= x.")
ceil = _unary("ceil", None, "none", doc="The smallest integer-valued number >= x.")
trunc = _unary("trunc", None, "none", doc="x rounded towards zero.")
round = _unary("round", None, "none", doc="x rounded to the nearest integer-valued number, halves to even.")  # noqa: A001
signbit = _predicate_op("signbit", lambda xp, d: xp.signbit(d))
signbit.__doc__ = "Whether the sign bit is set (for -0.0 and negative numbers): a boolean tensor, outside the graph."

# --- activations: fused primitives (`autograd_core.primitives.activations`) -------------------------
sigmoid = unary_op("sigmoid", activations.logistic, lambda ns, g, out, x: g * out * (1 - out), "output")
relu = elementwise(activations.relu)
erf = elementwise(activations.erf)


@_accumulated_in_float32
def softmax(x: TensorBase, axis: int = -1) -> TensorBase:
    """exp(x) normalised to sum to 1 over `axis`: the exp of `log_softmax`."""
    return exp(log_softmax(x, axis=axis))


# --- complex parts: on a real tensor, real and conj are the identity ---------------------------
# each is linear over the reals, so its tangent is the part taken of the input's tangent
real = _unary(
    "real",
    lambda ns, g, out, x: ns.astype(g, x.dtype, copy=False),
    "none",
    doc="The real part, in the real dtype of the same precision; a real tensor's own values.",
    jvp="linear",
    complex="safe",
)
conj = _unary(
    "conj",
    lambda ns, g, out, x: ns.conj(g),
    "none",
    doc="The complex conjugate; a real tensor's own values.",
    jvp="linear",
    complex="safe",
)
_imag = _unary("imag", lambda ns, g, out, x: ns.astype(g, x.dtype) * 1j, "none", jvp="linear", complex="safe")


class NoImaginaryPartError(TypeError, AttributeError):
    """`imag` of a real tensor: a TypeError, as the standard's `imag` of a real array, and an
    AttributeError too, so that ``hasattr(t, "imag")`` is False for a real tensor rather than
    raising (PyTorch's ``.imag`` raises RuntimeError; numpy's gives zeros)."""


def imag(x: TensorBase, /) -> TensorBase:
    """The imaginary part of a complex tensor, in the real dtype of the same precision; a real
    tensor is refused (`NoImaginaryPartError`), as PyTorch does.

    >>> import autograd_core as ag
    >>> ag.imag(ag.asarray([1 + 2j, 3 - 4j])).tolist()
    [2.0, -4.0]
    """
    if not _tensor("imag", x).dtype.is_complex:
        raise NoImaginaryPartError(
            f"imag needs a complex tensor, got {x.dtype.name}; a real tensor has no imaginary part"
        )
    return _imag(x)
