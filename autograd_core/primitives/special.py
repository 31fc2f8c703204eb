"""The special functions the array-API standard lacks: erfc, erfinv, ndtri, log_ndtr, gammaln,
polygamma (digamma is its order 0) and the modified Bessel functions i0, i0e, i1, i1e.

Each is a primitive whose portable default is written in the standard, so every library runs
it; libraries with their own (torch.special, jax.scipy.special, scipy.special, cupyx) register
those. The defaults' accuracy in float64, against scipy.special (tests/test_special.py):

- erfc, erfinv, ndtri, log_ndtr, i0, i0e, i1, i1e: within 1e-13 relative;
- gammaln and digamma: within 1e-13 relative, or 1e-14 absolute near their roots (gammaln's at
  1 and 2, digamma's at 1.4616...), where the value is the difference of numbers near 1;
- polygamma of orders 1 to 4: within 1e-12 relative.

>>> import backends
>>> from autograd_core.graph.namespace import raw_namespace
>>> ns = raw_namespace(backends.get("numpy"))
>>> round(float(gammaln.default(ns, ns.asarray(0.5))), 12)  # log(sqrt(pi))
0.572364942925
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from autograd_core.graph.registry import Primitive
from autograd_core.primitives.activations import erf_kernel

_SQRT_PI = math.sqrt(math.pi)
_LOG2 = math.log(2.0)

# --- the error function's complement and inverses ------------------------------------------------
_TAIL_FROM = 1.5  # erfc from the continued fraction at or past this, 1 - erf below (erfc(1.5) = 0.034)
_FRACTION_TERMS = 100  # the continued fraction's error at 1.5 is below 1e-15 with these
_ERFC_ZERO_FROM = 30.0  # erfc(30) = 2e-393 is 0 in every float format


def _exp_minus_square(ns: Any, a: Any) -> Any:
    """exp(-a^2) with a^2 split as hi^2 + (a - hi)(a + hi), hi a multiple of 1/16: hi^2 is
    exact, so the rounding of a^2 (up to 1e-13 of exp's argument at a = 26) does not reach it."""
    hi = ns.round(a * 16.0) / 16.0
    return ns.exp(-(hi * hi)) * ns.exp(-((a - hi) * (a + hi)))


def _scaled_erfc(ns: Any, a: Any) -> Any:
    """erfc(a) exp(a^2) for a >= 0: Laplace's continued fraction evaluated from its last term
    back, from 1.5 on; (1 - erf(a)) exp(a^2) below."""
    far = ns.clip(a, min=_TAIL_FROM)
    t = far
    for n in range(_FRACTION_TERMS, 0, -1):
        t = far + (n / 2) / t
    near = ns.clip(a, max=_TAIL_FROM)
    return ns.where(a >= _TAIL_FROM, 1 / (_SQRT_PI * t), (1 - erf_kernel(ns, near)) * ns.exp(near * near))


def _upper_erfc(ns: Any, a: Any) -> Any:
    """erfc(a) for a >= 0 (or nan), accurate relative to itself far into the tail."""
    far = ns.clip(a, min=_TAIL_FROM, max=_ERFC_ZERO_FROM)
    tail = ns.where(a < _ERFC_ZERO_FROM, _exp_minus_square(ns, far) * _scaled_erfc(ns, far), 0.0)
    return ns.where(a >= _TAIL_FROM, tail, 1 - erf_kernel(ns, ns.clip(a, max=_TAIL_FROM)))


def _log_upper_erfc(ns: Any, a: Any) -> Any:
    """log(erfc(a)) for a >= 0, finite wherever a is (erfc itself underflows past a = 27)."""
    return ns.log(_scaled_erfc(ns, a)) - a * a


def _erfc(ns: Any, x: Any) -> Any:
    upper = _upper_erfc(ns, ns.abs(x))
    return ns.where(x < 0, 2 - upper, upper)


erfc = Primitive(
    "erfc",
    _erfc,
    vjps=(lambda ns, g, out, x: g * (-2 / _SQRT_PI) * ns.exp(-(x * x)),),
    jvp="elementwise",
    doc="The complementary error function, 1 - erf(x), accurate in the upper tail.",
)

_NEWTON_STEPS = 5  # from Winitzki's start (within 2e-3), Newton's method reaches rounding in 4


def _inverse_erf(ns: Any, a: Any, c: Any) -> Any:
    """z >= 0 with erf(z) = a, given a in [0, 1] and c = 1 - a, each exact where it is read:
    Newton's method on erf(z) - a where a < 0.5, on log erfc(z) - log c elsewhere (c holds
    the digits a has lost near 1). Gives inf where c is 0 and nan where it is negative."""
    valid = c > 0
    log_c = ns.log(ns.where(valid, c, 0.5))
    central = a < 0.5
    a_central = ns.where(central, a, 0.0)
    z_central = ns.clip(_winitzki(ns, ns.log1p(-(a_central * a_central))), max=1.0)
    for _ in range(_NEWTON_STEPS):
        z_central = z_central - (erf_kernel(ns, z_central) - a_central) * (_SQRT_PI / 2) * ns.exp(z_central * z_central)
    z_tail = _winitzki(ns, log_c + ns.log1p(ns.clip(1 - ns.exp(log_c), min=0.0)))
    for _ in range(_NEWTON_STEPS):
        z_tail = z_tail + (_log_upper_erfc(ns, z_tail) - log_c) * _scaled_erfc(ns, z_tail) * (_SQRT_PI / 2)
    z = ns.where(central, z_central, z_tail)
    return ns.where(valid, z, ns.where(c == 0, math.inf, ns.full_like(z, math.nan)))


def _winitzki(ns: Any, log_one_minus_a2: Any) -> Any:
    """Winitzki's closed-form approximation of erfinv, from log(1 - a^2): within 2e-3."""
    k = 0.147
    s = 2 / (math.pi * k) + log_one_minus_a2 / 2
    return ns.sqrt(ns.clip(ns.sqrt(s * s - log_one_minus_a2 / k) - s, min=0.0))


def _erfinv(ns: Any, y: Any) -> Any:
    a = ns.abs(y)
    return ns.sign(y) * _inverse_erf(ns, a, 1 - a)


erfinv = Primitive(
    "erfinv",
    _erfinv,
    vjps=(lambda ns, g, out, y: g * (_SQRT_PI / 2) * ns.exp(out * out),),
    saves="output",
    jvp="elementwise",
    doc="The inverse of the error function on [-1, 1] (+-inf at +-1, nan outside).",
)


def _ndtri(ns: Any, p: Any) -> Any:
    t = 2 * p - 1  # exact for p in [0.25, 1], where _inverse_erf reads it
    tail = ns.where(p < 0.5, 2 * p, 2 * (1 - p))
    return ns.sign(t) * math.sqrt(2.0) * _inverse_erf(ns, ns.abs(t), tail)


ndtri = Primitive(
    "ndtri",
    _ndtri,
    vjps=(lambda ns, g, out, p: g * math.sqrt(2 * math.pi) * ns.exp(out * out / 2),),
    saves="output",
    jvp="elementwise",
    doc="The inverse of the standard normal distribution function (-inf at 0, inf at 1).",
)


def _log_ndtr(ns: Any, x: Any) -> Any:
    a = ns.abs(x) * math.sqrt(0.5)
    return ns.where(x < 0, _log_upper_erfc(ns, a) - _LOG2, ns.log1p(-0.5 * _upper_erfc(ns, a)))


log_ndtr = Primitive(
    "log_ndtr",
    _log_ndtr,
    vjps=(lambda ns, g, out, x: g * ns.exp(-(x * x) / 2 - log_ndtr(ns, x)) / math.sqrt(2 * math.pi),),
    jvp="elementwise",
    doc="The log of the standard normal distribution function, finite far into the lower tail.",
)

# --- the log gamma function and its derivatives ----------------------------------------------------
# Bernoulli numbers B2, B4, ..., B20 of the asymptotic (Stirling) series
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330)
_ASYMPTOTIC_FROM = 10.0  # the series' terms fall below 1e-17 of the value from here


def _lgamma_positive(ns: Any, x: Any) -> Any:
    """log Gamma(x) for x > 0: Stirling's series at x + 10 for x < 10 (less the log of the
    product x (x + 1) ... (x + 9) the recurrence Gamma(x + 1) = x Gamma(x) adds), at x beyond."""
    far = x >= _ASYMPTOTIC_FROM
    near = ns.where(far, 1.0, x)
    product = near
    for j in range(1, int(_ASYMPTOTIC_FROM)):
        product = product * (near + j)
    y = ns.where(far, x, near + _ASYMPTOTIC_FROM)
    series = _stirling_sum(ns, y, lambda k: _BERNOULLI[k - 1] / (2 * k * (2 * k - 1)), 1)
    stirling = (y - 0.5) * ns.log(y) - y + 0.5 * math.log(2 * math.pi) + series
    return ns.where(far, stirling, stirling - ns.log(product))


def _stirling_sum(ns: Any, y: Any, coefficient: Any, power: int) -> Any:
    """sum over k = 1..10 of coefficient(k) / y^(2k - 2 + power), by Horner's rule in 1/y^2."""
    inverse_square = 1 / (y * y)
    total = coefficient(len(_BERNOULLI))
    for k in range(len(_BERNOULLI) - 1, 0, -1):
        total = total * inverse_square + coefficient(k)
    return total / y**power


def _fraction_of_integer(ns: Any, x: Any) -> Any:
    """x less its nearest integer, in [-0.5, 0.5] and exact: sin and cot of pi times it are
    those of pi x without the rounding of pi x."""
    return x - ns.round(x)


def _gammaln(ns: Any, x: Any) -> Any:
    reflect = x < 0.5  # reflection: log Gamma(x) = log(pi / |sin(pi x)|) - log Gamma(1 - x)
    base = _lgamma_positive(ns, ns.where(reflect, 1 - x, x))
    sine = ns.abs(ns.sin(math.pi * _fraction_of_integer(ns, ns.where(reflect, x, 0.5))))
    reflected = ns.log(math.pi / sine) - base
    exact_zero = (x == 1) | (x == 2)
    return ns.where(ns.isinf(x), math.inf, ns.where(exact_zero, 0.0, ns.where(reflect, reflected, base)))


gammaln = Primitive(
    "gammaln",
    _gammaln,
    vjps=(lambda ns, g, out, x: g * polygamma(ns, x, 0),),
    jvp="elementwise",
    doc="The log of the absolute value of the gamma function (inf at 0 and the negative integers).",
)


def _polygamma_positive(ns: Any, x: Any, n: int) -> Any:
    """The n-th derivative of digamma for x > 0: its asymptotic series at x + s, s = 10 + 2n
    (higher orders need larger arguments), less what the recurrence adds on the way."""
    shift = _ASYMPTOTIC_FROM + 2 * n
    far = x >= shift
    near = ns.where(far, 1.0, x)
    steps = 1 / near ** (n + 1)
    for j in range(1, int(shift)):
        steps = steps + 1 / (near + j) ** (n + 1)
    y = ns.where(far, x, near + shift)
    if n == 0:
        asymptotic = ns.log(y) - 0.5 / y - _stirling_sum(ns, y, lambda k: _BERNOULLI[k - 1] / (2 * k), 2)
    else:
        series = _stirling_sum(
            ns, y, lambda k: _BERNOULLI[k - 1] * math.factorial(2 * k + n - 1) / math.factorial(2 * k), 2 + n
        )
        asymptotic = (-1) ** (n + 1) * (math.factorial(n - 1) / y**n + math.factorial(n) / (2 * y ** (n + 1)) + series)
    return ns.where(far, asymptotic, asymptotic - (-1) ** n * math.factorial(n) * steps)


def _cot_derivative_coefficients(n: int) -> list[int]:
    """The polynomial P_n with d^n/dx^n cot(pi x) = pi^n P_n(cot(pi x)), lowest power first:
    P_0(c) = c and P_{k+1}(c) = -(1 + c^2) P_k'(c)."""
    coefficients = [0, 1]
    for _ in range(n):
        derivative = [i * c for i, c in enumerate(coefficients)][1:]
        coefficients = [0] * (len(derivative) + 2)
        for i, c in enumerate(derivative):
            coefficients[i] -= c
            coefficients[i + 2] -= c
    return coefficients


def polygamma_by_reflection(ns: Any, x: Any, n: int, positive: Callable[..., Any] | None = None) -> Any:
    """psi_n(x) from ``positive(ns, x, n)``, which computes it for x > 0 (the portable series
    when None): at x <= 0 by the reflection formula, with PyTorch's values at the poles. A
    library whose own polygamma is right only for positive x (jax's) passes it as `positive`."""
    reflect = x <= 0  # psi_n(x) = (-1)^n psi_n(1 - x) - pi^(n+1) P_n(cot(pi x))
    base = (positive or _polygamma_positive)(ns, ns.where(reflect, 1 - x, x), n)
    r = _fraction_of_integer(ns, ns.where(reflect, x, 0.5))
    # cot(pi r) as tan(pi (0.5 - |r|)) away from 0, exactly 0 at the half-integers
    cot = ns.where(
        ns.abs(r) < 0.25, ns.cos(math.pi * r) / ns.sin(math.pi * r), ns.sign(r) * ns.tan(math.pi * (0.5 - ns.abs(r)))
    )
    poly = 0.0
    for c in reversed(_cot_derivative_coefficients(n)):
        poly = poly * cot + c
    reflected = (-1) ** n * base - math.pi ** (n + 1) * poly
    # at the poles, as PyTorch: digamma is -inf at +0, inf at -0 and nan at the negative
    # integers; psi_n for n >= 1 is (-1)^(n+1) inf at 0, inf (n odd) or nan at the negative integers
    if n == 0:
        at_zero, at_negative = ns.where(ns.signbit(x), math.inf, ns.full_like(x, -math.inf)), math.nan
    else:
        at_zero, at_negative = (-1) ** (n + 1) * math.inf, math.inf if n % 2 else math.nan
    pole = reflect & (r == 0)
    at_pole = ns.where(x == 0, at_zero, ns.full_like(x, at_negative))
    return ns.where(pole, at_pole, ns.where(reflect, reflected, base))


polygamma = Primitive(
    "polygamma",
    polygamma_by_reflection,
    vjps=(lambda ns, g, out, x, n: g * polygamma(ns, x, n + 1), None),
    jvp="elementwise",
    doc="The n-th derivative of digamma (n = 0: digamma itself), x first and the order n after.",
)

# --- modified Bessel functions of the first kind, orders 0 and 1 -----------------------------------
_SERIES_BELOW = 20.0  # power series below, the asymptotic expansion (error ~ e^-40) at or above
_SERIES_TERMS = 50
_ASYMPTOTIC_TERMS = 30


def _bessel_i(ns: Any, x: Any, order: int, scaled: bool) -> Any:
    """I_order(x), or exp(-|x|) I_order(x) when `scaled`, for order 0 or 1."""
    a = ns.abs(x)
    near = ns.clip(a, max=_SERIES_BELOW)
    q = near * near / 4
    term = ns.ones_like(near) if order == 0 else near / 2
    total = term
    for k in range(1, _SERIES_TERMS):
        term = term * q / (k * (k + order))
        total = total + term
    if scaled:
        total = total * ns.exp(-near)
    far = ns.clip(a, min=_SERIES_BELOW)
    mu = 4 * order * order
    term, expansion = ns.ones_like(far), ns.ones_like(far)
    for k in range(1, _ASYMPTOTIC_TERMS):
        term = term * (-(mu - (2 * k - 1) ** 2) / (8 * k)) / far
        expansion = expansion + term
    exponent = -0.5 * ns.log(2 * math.pi * far) + (0.0 if scaled else far)
    value = ns.where(a < _SERIES_BELOW, total, expansion * ns.exp(exponent))
    return value if order == 0 else ns.sign(x) * value


def _bessel(name: str, order: int, scaled: bool, vjp: Any, doc: str) -> Primitive:
    return Primitive(name, lambda ns, x: _bessel_i(ns, x, order, scaled), vjps=(vjp,), jvp="elementwise", doc=doc)


def _nonzero(ns: Any, x: Any) -> Any:
    """x with its zeros replaced by 1: a divisor whose masked-out quotients stay finite."""
    return ns.where(x == 0, 1.0, x)


i0 = _bessel("i0", 0, False, lambda ns, g, out, x: g * i1(ns, x), "The modified Bessel function I0.")
i0e = _bessel(
    "i0e",
    0,
    True,
    lambda ns, g, out, x: g * (i1e(ns, x) - ns.sign(x) * i0e(ns, x)),
    "exp(-|x|) I0(x), finite for every finite x.",
)
i1 = _bessel(
    "i1",
    1,
    False,
    lambda ns, g, out, x: g * ns.where(x == 0, 0.5, i0(ns, x) - i1(ns, x) / _nonzero(ns, x)),
    "The modified Bessel function I1.",
)
i1e = _bessel(
    "i1e",
    1,
    True,
    lambda ns, g, out, x: g * ns.where(x == 0, 0.5, i0e(ns, x) - i1e(ns, x) * (ns.sign(x) + 1 / _nonzero(ns, x))),
    "exp(-|x|) I1(x), finite for every finite x.",
)

SPECIAL_KERNELS = (erfc, erfinv, ndtri, log_ndtr, gammaln, polygamma, i0, i0e, i1, i1e)
"""The primitives above, for backends registering their library's functions for all of them."""
