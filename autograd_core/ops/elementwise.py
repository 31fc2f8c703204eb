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
from typing import Any, NamedTuple

from autograd_core.graph.tensor_base import TensorBase, Vjp
from autograd_core.ops.core import (
    _accumulated_in_float32,
    _as_operand,
    _cast,
    _operands,
    _predicate_op,
    _tensor,
    astype,
    binary_op,
    broadcast_tangent,
    divide,
    elementwise,
    equal,
    greater,
    isnan,
    log_softmax,
    multiply,
    pow,  # noqa: A004 - the standard's name
    unary_op,
    where,
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


# --- PyTorch's elementwise functions beyond the standard (`autograd_core.torch`'s rows; not in
# `__all__`, which keeps the standard's namespace) ------------------------------------------------
def _floating(x: Any) -> TensorBase:
    """`x` as a tensor of a floating (or complex) dtype: integers and bools become float32, as
    PyTorch's default dtype."""
    x = _tensor("elementwise", x)
    return x if x.dtype.is_floating_point or x.dtype.is_complex else _cast(x, "float32")


def deg2rad(x: TensorBase, /) -> TensorBase:
    """Degrees to radians."""
    return _floating(x) * (math.pi / 180)


def rad2deg(x: TensorBase, /) -> TensorBase:
    """Radians to degrees."""
    return _floating(x) * (180 / math.pi)


def _nan_ignoring(name: str, pick: Any) -> Any:
    def op(a: Any, b: Any, /) -> TensorBase:
        a, b, _ = _operands(name, a, b)
        a, b = (_as_operand(v, b if v is a else a) for v in (a, b))
        return where(pick(a, b) | isnan(b), a, b)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (
        f"Elementwise {name[1:]}imum that ignores a NaN (NaN only where both are): the gradient goes to the "
        f"operand chosen, the first on ties (PyTorch's ``{name}``)."
    )
    return op


fmax = _nan_ignoring("fmax", lambda a, b: a >= b)
fmin = _nan_ignoring("fmin", lambda a, b: a <= b)


def ldexp(x: Any, other: Any, /) -> TensorBase:
    """``x * 2**other``, differentiable in both (PyTorch's ``ldexp``).

    >>> import autograd_core as ag
    >>> ldexp(ag.tensor([1.5]), ag.tensor([3])).tolist()
    [12.0]
    """
    return multiply(_floating(x), exp2(_floating(other)))


def logaddexp2(a: Any, b: Any, /) -> TensorBase:
    """``log2(2**a + 2**b)`` without overflow: `logaddexp` in base 2."""
    return logaddexp(_floating(a) * _LN2, _floating(b) * _LN2) / _LN2


def heaviside(x: TensorBase, values: Any, /) -> TensorBase:
    """The step function: 0 where x < 0, `values` where x == 0, 1 where x > 0 (outside the graph)."""
    x, values, _ = _operands("heaviside", x, values)
    x, values = (_as_operand(v, values if v is x else x) for v in (x, values))
    return where(equal(x, 0), values, astype(greater(x, 0), x.dtype)).detach()


def float_power(a: Any, b: Any, /) -> TensorBase:
    """``a ** b`` in double precision (float64, or complex128 for complex operands)."""
    is_complex = any(isinstance(v, complex) or (isinstance(v, TensorBase) and v.dtype.is_complex) for v in (a, b))
    wide = "complex128" if is_complex else "float64"
    a, b = (_cast(v, wide) if isinstance(v, TensorBase) else v for v in (a, b))
    return pow(a, b)


isposinf = _predicate_op("isposinf", lambda xp, d: xp.isinf(d) & (d > 0))
isneginf = _predicate_op("isneginf", lambda xp, d: xp.isinf(d) & (d < 0))
isreal = _predicate_op(
    "isreal",
    lambda xp, d: xp.imag(d) == 0 if xp.isdtype(d.dtype, "complex floating") else xp.ones(d.shape, dtype=xp.bool),
)


def angle(x: TensorBase, /) -> TensorBase:
    """The argument of each element, in radians: ``atan2(imag, real)`` for a complex tensor; for a
    real one pi where negative, else 0 (NaN stays), outside the graph as PyTorch's zero gradient."""
    x = _floating(x)
    if x.dtype.is_complex:
        return atan2(imag(x), real(x))
    xp, d = x.backend.xp, x.array
    half_turn = xp.where(d < 0, xp.full_like(d, math.pi), xp.zeros_like(d))
    return TensorBase._wrap(xp.where(xp.isnan(d), d, half_turn), x.backend)


class Frexp(NamedTuple):
    mantissa: TensorBase
    exponent: TensorBase


def frexp(x: TensorBase, /) -> Frexp:
    """``x = mantissa * 2**exponent`` with |mantissa| in [0.5, 1) (0, inf and NaN: exponent 0),
    an int32 exponent; the mantissa's gradient is ``g / 2**exponent``.

    >>> import autograd_core as ag
    >>> [t.tolist() for t in frexp(ag.tensor([8.0, -0.75, 0.0]))]
    [[0.5, -0.75, 0.0], [4, 0, 0]]
    """
    x = _tensor("frexp", x)
    xp, d, backend = x.backend.xp, x.array, x.backend
    regular = xp.isfinite(d) & (d != 0)
    size = xp.where(regular, xp.abs(d), xp.ones_like(d))
    e = xp.floor(xp.log2(size)) + 1
    e = xp.where(size / 2.0**e >= 1, e + 1, e)  # log2 rounded up or down next to a power of two
    e = xp.where(size / 2.0**e < 0.5, e - 1, e)
    e = xp.where(regular, e, xp.zeros_like(e))
    scale = TensorBase._wrap(2.0**e, backend)
    return Frexp(divide(x, scale), TensorBase._wrap(xp.astype(e, backend.dtype("int32")), backend))


def complex_of(real_part: Any, imag_part: Any, /) -> TensorBase:
    """The complex tensor ``real + imag * 1j`` (PyTorch's ``complex``), of the complex dtype of the
    parts' precision."""
    real_part, imag_part, _ = _operands("complex", real_part, imag_part)
    return real_part + imag_part * 1j


def polar(magnitude: Any, angle: Any, /) -> TensorBase:
    """The complex tensor of absolute value `magnitude` and argument `angle`."""
    return complex_of(magnitude * cos(angle), magnitude * sin(angle))
