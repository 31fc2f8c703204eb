"""The activations with kernels of their own: relu, erf and GELU, and tanh's backward."""

from __future__ import annotations

import math
from typing import Any

from autograd_core.graph.registry import Primitive, primitive

_TANH_SCALE, _CUBIC = math.sqrt(2 / math.pi), 0.044715  # GELU's tanh form


@primitive()
def relu_backward(ns: Any, grad: Any, out: Any) -> Any:
    """`grad` where relu's output `out` is positive, else 0."""
    return ns.where(out > 0, grad, 0.0)


@primitive()
def tanh_backward(ns: Any, grad: Any, out: Any) -> Any:
    """`grad` times tanh's derivative, from its output `out`: ``grad * (1 - out**2)``."""
    return grad * (1 - out * out)


# the output is positive exactly where the input is, so the mask comes from it
relu = Primitive(
    "relu",
    lambda ns, x: ns.clip(x, min=0.0),
    vjps=(lambda ns, g, out, x: relu_backward(ns, g, out),),
    saves="output",
    jvp="elementwise",
    doc="max(x, 0) elementwise.",
)


def _erf_series(ns: Any, x: Any) -> Any:
    """The error function, from its everywhere-convergent series of positive terms.

    erf(x) = 2/sqrt(pi) * exp(-x^2) * sum_n 2^n x^(2n+1) / (1*3*...*(2n+1)).
    No cancellation, so it is accurate to float64 rounding; |x| >= 6 gives +-1 (erfc(6) is
    2e-17). Libraries with a native erf register their own kernel.
    """
    a = ns.clip(ns.abs(x), max=6.0)
    a2 = a * a
    term, total = a, a
    for n in range(1, 120):
        term = term * (2.0 * a2 / (2 * n + 1))
        total = total + term
    return ns.sign(x) * (2.0 / math.sqrt(math.pi)) * ns.exp(-a2) * total


erf_kernel = Primitive("erf_kernel", _erf_series, doc="The error function of raw arrays, unclipped.")


def _erf(ns: Any, x: Any) -> Any:
    return ns.clip(erf_kernel(ns, x), min=-1.0, max=1.0)  # a series can round past +-1


erf = Primitive(
    "erf",
    _erf,
    vjps=(lambda ns, g, out, x: g * (2 / math.sqrt(math.pi)) * ns.exp(-(x * x)),),
    jvp="elementwise",
    doc="The error function.",
)


def gelu_value(ns: Any, x: Any, approximate: str) -> Any:
    """``0.5 x (1 + erf(x / sqrt 2))``, or ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    if approximate == "tanh":
        return 0.5 * x * (1 + ns.tanh(_TANH_SCALE * (x + _CUBIC * x * x * x)))
    return 0.5 * x * (1 + erf(ns, x * math.sqrt(0.5)))


def gelu_slope(ns: Any, x: Any, approximate: str) -> Any:
    """The derivative of `gelu_value`: Phi(x) + x phi(x), or the tanh form's own derivative."""
    if approximate == "tanh":
        t = ns.tanh(_TANH_SCALE * (x + _CUBIC * x * x * x))
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _TANH_SCALE * (1 + 3 * _CUBIC * x * x)
    return 0.5 * (1 + erf(ns, x * math.sqrt(0.5))) + x * ns.exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi))


@primitive()
def gelu_backward(ns: Any, grad: Any, x: Any, approximate: str) -> Any:
    """`grad` times GELU's derivative at `x`."""
    return grad * gelu_slope(ns, x, approximate)


gelu = Primitive(
    "gelu",
    gelu_value,
    vjps=(lambda ns, g, out, x, approximate: gelu_backward(ns, g, x, approximate), None),
    jvp="elementwise",
    doc="GELU, ``x * Phi(x)`` (approximate='none') or its tanh approximation, as PyTorch's.",
)


# --- ELU and softplus: the second derivative at the kink is PyTorch's ------------------------------
# PyTorch's first derivative at ELU's kink (x = 0) is the exponential branch's, and its second
# derivative there is 0 (at softplus's threshold likewise); a composite of `where`s gives the
# branch's own second derivative, so these two are primitives whose slope freezes the branch's
# argument at the kink: its value is the branch's, its derivative 0.
def _elu_value(ns: Any, x: Any, alpha: float, scale: float, input_scale: float) -> Any:
    positive = x > 0
    return scale * ns.where(positive, x, alpha * ns.expm1(ns.where(positive, 0.0, x) * input_scale))


def _elu_slope(ns: Any, x: Any, alpha: float, scale: float, input_scale: float) -> Any:
    """``scale`` for x > 0, else ``scale * alpha * input_scale * exp(input_scale * x)``."""
    below = ns.where(x < 0, x, 0.0) * input_scale
    return ns.where(x > 0, scale, (scale * alpha * input_scale) * ns.exp(below))


elu = Primitive(
    "elu",
    _elu_value,
    vjps=(lambda ns, g, out, x, alpha, scale, input_scale: g * _elu_slope(ns, x, alpha, scale, input_scale),),
    jvp="elementwise",
    doc="PyTorch's ELU family: ``scale * x`` for x > 0, else ``scale * alpha * expm1(input_scale * x)``.",
)


def logistic(ns: Any, z: Any) -> Any:
    """The logistic function ``1 / (1 + exp(-z))`` in either namespace, without overflow:
    `autograd_core.sigmoid`'s kernel and the gates of the recurrent cells."""
    positive = z >= 0
    e = ns.exp(ns.where(positive, -z, z))  # exp(-|z|) never overflows; abs would have no slope at 0
    return ns.where(positive, 1 / (1 + e), e / (1 + e))


def _softplus_value(ns: Any, x: Any, beta: float, threshold: float) -> Any:
    scaled = x * beta
    return ns.where(scaled > threshold, x, ns.logaddexp(scaled, 0.0) / beta)


def _softplus_slope(ns: Any, x: Any, beta: float, threshold: float) -> Any:
    """1 where ``beta * x > threshold``, else ``sigmoid(beta * x)``."""
    scaled = x * beta
    return ns.where(scaled > threshold, 1.0, logistic(ns, ns.where(scaled < threshold, scaled, threshold)))


softplus = Primitive(
    "softplus",
    _softplus_value,
    vjps=(lambda ns, g, out, x, beta, threshold: g * _softplus_slope(ns, x, beta, threshold),),
    jvp="elementwise",
    doc="``log(1 + exp(beta * x)) / beta``, and x where ``beta * x > threshold``, as PyTorch's.",
)
