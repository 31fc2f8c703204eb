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

from autograd_core.graph.registry import Kernel, Primitive
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


# --- what PyTorch does not differentiate ---------------------------------------------------------
def not_implemented(name: str, argument: str) -> Any:
    """The VJP of an argument PyTorch's autograd does not differentiate: it refuses, as PyTorch's does."""

    def vjp(ns: Any, g: Any, out: Any, *inputs: Any) -> Any:
        raise NotImplementedError(
            f"the derivative of {name} with respect to {argument} is not implemented (PyTorch's neither)"
        )

    return vjp


def _undifferentiated(name: str, default: Kernel, arguments: tuple[str, ...], doc: str) -> Primitive:
    vjps = tuple(not_implemented(name, a) for a in arguments)
    return Primitive(name, default, vjps=vjps, saves="none", doc=doc)


# --- erfcx and the Hurwitz zeta function ---------------------------------------------------------
def _erfcx(ns: Any, x: Any) -> Any:
    upper = _scaled_erfc(ns, ns.abs(x))
    return ns.where(x < 0, 2 * ns.exp(x * x) - upper, upper)


erfcx = Primitive(
    "erfcx",
    _erfcx,
    vjps=(lambda ns, g, out, x: g * (2 * x * out - 2 / _SQRT_PI),),
    saves="inputs and output",
    jvp="elementwise",
    doc="The scaled complementary error function exp(x^2) erfc(x).",
)

# Euler-Maclaurin's coefficients (2k)! / B_2k, Cephes' (and PyTorch's) zeta
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10)
_ZETA_A += (-2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15)
_ZETA_A += (1.8152105401943546773e17, -7.1661652561756670113e18)
_ZETA_DIRECT = 24  # terms summed directly before the Euler-Maclaurin tail


def _zeta(ns: Any, x: Any, q: Any) -> Any:
    """The Hurwitz zeta function sum over k >= 0 of (q + k)^-x, by Cephes' method: a direct
    sum, then Euler-Maclaurin's tail; PyTorch's values off its domain."""
    s = q ** (-x)
    a = q
    for _ in range(_ZETA_DIRECT):
        a = a + 1
        s = s + a ** (-x)
    b = a ** (-x)
    w = a
    s = s + b * w / (x - 1) - 0.5 * b
    factor, k = ns.ones_like(x), 0.0
    for coefficient in _ZETA_A:
        factor = factor * (x + k)
        b = b / w
        s = s + factor * b / coefficient
        factor = factor * (x + k + 1)
        b = b / w
        k += 2
    pole = (q <= 0) & (q == ns.floor(q))
    s = ns.where(pole, math.inf, ns.where((q <= 0) & (x != ns.floor(x)), math.nan, s))
    return ns.where(x == 1, math.inf, ns.where(x < 1, math.nan, s))


zeta = Primitive(
    "zeta",
    _zeta,
    vjps=(not_implemented("zeta", "x"), lambda ns, g, out, x, q: -g * x * zeta(ns, x + 1, q)),
    doc="The Hurwitz zeta function zeta(x, q) (Riemann's at q = 1).",
)


# --- the regularized incomplete gamma functions -------------------------------------------------
_GAMMA_SERIES_TERMS = 400
_GAMMA_FRACTION_TERMS = 200
_TINY = 1e-300


def _log_prefactor(ns: Any, a: Any, x: Any) -> Any:
    """log(x^a e^-x / Gamma(a))."""
    return a * ns.log(x) - x - gammaln(ns, a)


def _lower_series(ns: Any, a: Any, x: Any) -> Any:
    """P(a, x) from its power series (for x < a + 1)."""
    term = ns.ones_like(x) / a
    total = term
    for n in range(1, _GAMMA_SERIES_TERMS):
        term = term * x / (a + n)
        total = total + term
    return total * ns.exp(_log_prefactor(ns, a, x))


def _upper_fraction(ns: Any, a: Any, x: Any) -> Any:
    """Q(a, x) from Legendre's continued fraction by Lentz's method (for x >= a + 1)."""
    b = x + 1 - a
    c = ns.full_like(x, 1 / _TINY)
    d = 1 / b
    h = d
    for i in range(1, _GAMMA_FRACTION_TERMS):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = ns.where(ns.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = ns.where(ns.abs(c) < _TINY, _TINY, c)
        d = 1 / d
        h = h * d * c
    return ns.exp(_log_prefactor(ns, a, x)) * h


def _incomplete_gamma(ns: Any, a: Any, x: Any, upper: bool) -> Any:
    """P(a, x), or Q(a, x) = 1 - P when `upper`, with PyTorch's values at the edges."""
    inside = (a > 0) & (x > 0) & ns.isfinite(a) & ns.isfinite(x)
    safe_a, safe_x = ns.where(inside, a, 1.0), ns.where(inside, x, 1.0)
    by_series = safe_x < safe_a + 1
    lower = _lower_series(ns, safe_a, ns.where(by_series, safe_x, 0.5))
    upper_part = _upper_fraction(ns, safe_a, ns.where(by_series, 2.0 + safe_a, safe_x))
    p = ns.where(by_series, lower, 1 - upper_part)
    q = ns.where(by_series, 1 - lower, upper_part)
    value = q if upper else p
    one, zero = (0.0, 1.0) if upper else (1.0, 0.0)  # the value at x = inf, at x = 0
    edge = ns.where(ns.isinf(x), one, ns.full_like(x, zero))
    nan = ns.full_like(x, math.nan)
    edge = ns.where(ns.isinf(a), ns.where(ns.isinf(x), nan, 1.0 - one), edge)
    edge = ns.where(a == 0, ns.where(x > 0, one, nan), edge)
    edge = ns.where((x < 0) | (a < 0) | ns.isnan(a) | ns.isnan(x), math.nan, edge)
    return ns.where(inside, value, edge)


def _incomplete_gamma_grad(sign: float) -> Any:
    return lambda ns, g, out, a, x: sign * g * ns.exp((a - 1) * ns.log(x) - x - gammaln(ns, a))


gammainc = Primitive(
    "gammainc",
    lambda ns, a, x: _incomplete_gamma(ns, a, x, upper=False),
    vjps=(not_implemented("igamma", "input"), _incomplete_gamma_grad(1.0)),
    doc="The regularized lower incomplete gamma function P(a, x) (PyTorch's igamma).",
)
gammaincc = Primitive(
    "gammaincc",
    lambda ns, a, x: _incomplete_gamma(ns, a, x, upper=True),
    vjps=(not_implemented("igammac", "input"), _incomplete_gamma_grad(-1.0)),
    doc="The regularized upper incomplete gamma function Q(a, x) (PyTorch's igammac).",
)


# --- Bessel functions of the first and second kind, orders 0 and 1; the modified ones of the second kind
_EULER_GAMMA = 0.5772156649015329
_BESSEL_SERIES_BELOW = 12.0  # the power series below (their cancellation costs < 4 digits), Hankel's expansion above
_K_SERIES_BELOW = 10.0
_BESSEL_TERMS = 70
_HANKEL_TERMS = 24


def _hankel_coefficients(order: int) -> list[float]:
    """a_k(order) = prod over j <= k of (4 order^2 - (2j - 1)^2) / (k! 8^k)."""
    mu, coefficients = 4 * order * order, [1.0]
    for k in range(1, _HANKEL_TERMS):
        coefficients.append(coefficients[-1] * (mu - (2 * k - 1) ** 2) / (k * 8))
    return coefficients


def _hankel(ns: Any, far: Any, order: int) -> tuple[Any, Any]:
    """Hankel's P and Q of the expansion of J and Y at large arguments."""
    p, q, power = 0.0, 0.0, ns.ones_like(far)
    for k, a in enumerate(_hankel_coefficients(order)):
        sign = (-1) ** (k // 2)
        if k % 2 == 0:
            p = p + sign * a * power
        else:
            q = q + sign * a * power
        power = power / far
    return p, q


def _power_series(ns: Any, q: Any, order: int, weights: Callable[[int], float]) -> Any:
    """sum over k of weights(k) (-q)^k / (k! (k + order)!)."""
    term, total = ns.ones_like(q), weights(0) * ns.ones_like(q)
    for k in range(1, _BESSEL_TERMS):
        term = term * -q / (k * (k + order))
        total = total + weights(k) * term
    return total / math.factorial(order)


def _digamma_integer(n: int) -> float:
    """psi(n) for an integer n >= 1: the harmonic number H_(n-1) less Euler's gamma."""
    return sum(1 / j for j in range(1, n)) - _EULER_GAMMA


def _bessel_jy(ns: Any, x: Any, order: int, second_kind: bool) -> Any:
    """J_order(x) (or Y_order(x) when `second_kind`, for x > 0) for order 0 or 1."""
    a = x if second_kind else ns.abs(x)
    near = ns.clip(ns.where(a > 0, a, 1.0) if second_kind else a, max=_BESSEL_SERIES_BELOW)
    half = near / 2
    q = half * half
    j = _power_series(ns, q, order, lambda k: 1.0) * (half if order else 1.0)
    if second_kind:
        if order == 0:
            rest = _power_series(ns, q, 0, lambda k: _digamma_integer(k + 1) + _EULER_GAMMA)
            series = (2 / math.pi) * ((ns.log(half) + _EULER_GAMMA) * j - rest)
        else:
            rest = _power_series(ns, q, 1, lambda k: _digamma_integer(k + 1) + _digamma_integer(k + 2))
            series = -2 / (math.pi * near) + (2 / math.pi) * ns.log(half) * j - half * rest / math.pi
    else:
        series = j
    far = ns.clip(a, min=_BESSEL_SERIES_BELOW)
    p, q_ = _hankel(ns, far, order)
    chi = far - (order / 2 + 0.25) * math.pi
    scale = ns.sqrt(2 / (math.pi * far))
    if second_kind:
        asymptotic = scale * (p * ns.sin(chi) + q_ * ns.cos(chi))
    else:
        asymptotic = scale * (p * ns.cos(chi) - q_ * ns.sin(chi))
    value = ns.where(a < _BESSEL_SERIES_BELOW, series, asymptotic)
    if second_kind:
        return ns.where(x > 0, value, ns.where(x == 0, -math.inf, ns.full_like(x, math.nan)))
    value = ns.where(ns.isinf(x), 0.0, value)
    return ns.sign(x) * value if order else value


def _bessel_k(ns: Any, x: Any, order: int, scaled: bool) -> Any:
    """K_order(x), or exp(x) K_order(x) when `scaled`, for order 0 or 1 (inf at 0, nan below)."""
    positive = x > 0
    near = ns.clip(ns.where(positive, x, 1.0), max=_K_SERIES_BELOW)
    half = near / 2
    q = half * half
    i = _bessel_i(ns, near, order, False)
    if order == 0:
        series = -(ns.log(half) + _EULER_GAMMA) * i + _power_series(
            ns, -q, 0, lambda k: _digamma_integer(k + 1) + _EULER_GAMMA
        )
    else:
        rest = _power_series(ns, -q, 1, lambda k: _digamma_integer(k + 1) + _digamma_integer(k + 2))
        series = 1 / near + ns.log(half) * i - half * rest / 2
    if scaled:
        series = series * ns.exp(near)
    far = ns.clip(ns.where(positive, x, 1.0), min=_K_SERIES_BELOW)
    expansion, power = 0.0, ns.ones_like(far)
    for a in _hankel_coefficients(order):
        expansion = expansion + a * power
        power = power / far
    asymptotic = ns.sqrt(math.pi / (2 * far)) * expansion * (1.0 if scaled else ns.exp(-far))
    value = ns.where(x < _K_SERIES_BELOW, series, asymptotic)
    return ns.where(positive, value, ns.where(x == 0, math.inf, ns.full_like(x, math.nan)))


_AIRY_C1, _AIRY_C2 = 0.355028053887817239, 0.258819403792806798  # Ai(0) and -Ai'(0)
_AIRY_SERIES = (-8.0, 5.0)  # the Maclaurin series between, the asymptotic expansions outside
_AIRY_TERMS = 80


def _airy_u(count: int) -> list[float]:
    """The coefficients u_k of the asymptotic expansions of Ai."""
    u = [1.0]
    for k in range(1, count):
        u.append(u[-1] * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k))
    return u


def _airy_ai(ns: Any, x: Any) -> Any:
    """The Airy function Ai(x)."""
    low, high = _AIRY_SERIES
    near = ns.clip(x, min=low, max=high)
    cube = near * near * near
    f_term, g_term = ns.ones_like(near), near
    f, g = f_term, g_term
    for k in range(1, _AIRY_TERMS):
        f_term = f_term * cube / ((3 * k - 1) * (3 * k))
        g_term = g_term * cube / ((3 * k) * (3 * k + 1))
        f, g = f + f_term, g + g_term
    series = _AIRY_C1 * f - _AIRY_C2 * g
    right = ns.clip(x, min=high)
    zeta = 2 / 3 * right * ns.sqrt(right)
    u = _airy_u(20)
    total, power = 0.0, ns.ones_like(right)
    for k, coefficient in enumerate(u):
        total = total + (-1) ** k * coefficient * power
        power = power / zeta
    decaying = ns.exp(-zeta) * total / (2 * _SQRT_PI * right**0.25)
    left = -ns.clip(x, max=low)
    zeta = 2 / 3 * left * ns.sqrt(left)
    p, q, power = 0.0, 0.0, ns.ones_like(left)
    for k, coefficient in enumerate(u):
        if k % 2 == 0:
            p = p + (-1) ** (k // 2) * coefficient * power
        else:
            q = q + (-1) ** (k // 2) * coefficient * power
        power = power / zeta
    phase = zeta + math.pi / 4
    oscillating = (ns.sin(phase) * p - ns.cos(phase) * q) / (_SQRT_PI * left**0.25)
    value = ns.where(x > high, decaying, ns.where(x < low, oscillating, series))
    return ns.where(x == math.inf, 0.0, ns.where(x == -math.inf, 0.0, value))


def _spherical_j0(ns: Any, x: Any) -> Any:
    """sin(x) / x, 1 at 0."""
    safe = ns.where(x == 0, 1.0, x)
    return ns.where(x == 0, 1.0, ns.where(ns.isinf(x), 0.0, ns.sin(safe) / safe))


j0 = _undifferentiated("j0", lambda ns, x: _bessel_jy(ns, x, 0, False), ("x",), "The Bessel function J0.")
j1 = _undifferentiated("j1", lambda ns, x: _bessel_jy(ns, x, 1, False), ("x",), "The Bessel function J1.")
y0 = _undifferentiated("y0", lambda ns, x: _bessel_jy(ns, x, 0, True), ("x",), "The Bessel function Y0.")
y1 = _undifferentiated("y1", lambda ns, x: _bessel_jy(ns, x, 1, True), ("x",), "The Bessel function Y1.")
k0 = _undifferentiated("k0", lambda ns, x: _bessel_k(ns, x, 0, False), ("x",), "The modified Bessel function K0.")
k1 = _undifferentiated("k1", lambda ns, x: _bessel_k(ns, x, 1, False), ("x",), "The modified Bessel function K1.")
k0e = _undifferentiated("k0e", lambda ns, x: _bessel_k(ns, x, 0, True), ("x",), "exp(x) K0(x).")
k1e = _undifferentiated("k1e", lambda ns, x: _bessel_k(ns, x, 1, True), ("x",), "exp(x) K1(x).")
airy_ai = _undifferentiated("airy_ai", _airy_ai, ("x",), "The Airy function Ai.")
spherical_bessel_j0 = _undifferentiated(
    "spherical_bessel_j0", _spherical_j0, ("x",), "The spherical Bessel function j0(x) = sin(x) / x."
)


# --- orthogonal polynomials of a degree n given elementwise (PyTorch's recurrences and special cases)
_MOST_STEPS = 1 << 16  # the recurrences' length is the largest degree asked for, up to this


def _degree(ns: Any, n: Any) -> tuple[Any, int]:
    """n truncated toward zero, as PyTorch reads a floating degree (-1 for nan and inf, whose
    polynomial is 0), and the largest of them."""
    if ns.isdtype(n.dtype, "real floating"):
        n = ns.where(ns.isfinite(n), ns.trunc(n), -1.0)
    top = int(ns.max(n)) if n.size else 0
    if top > _MOST_STEPS:
        raise ValueError(f"a polynomial of degree {top} is more than these recurrences run ({_MOST_STEPS})")
    return n, top


def _three_term(ns: Any, x: Any, n: Any, first: Any, step: Callable[[int, Any, Any], Any]) -> Any:
    """P_n(x) for each element from P_0 = 1, P_1 = `first` and P_k = step(k, P_(k-2), P_(k-1)); 0 for n < 0."""
    n, top = _degree(ns, n)
    p, q = ns.ones_like(x), first
    value = ns.where(n == 0, p, ns.where(n == 1, q, ns.zeros_like(x)))
    for k in range(2, top + 1):
        p, q = q, step(k, p, q)
        value = ns.where(n == k, q, value)
    return value, n


def _chebyshev(kind: str) -> Kernel:
    """The Chebyshev polynomial of `kind` (t, u, v or w) with PyTorch's closed forms for large
    degrees inside (-1, 1) and its values at +-1."""
    first = {"t": lambda x: x, "u": lambda x: x + x, "v": lambda x: x + x - 1, "w": lambda x: x + x + 1}[kind]

    def kernel(ns: Any, x: Any, n: Any) -> Any:
        value, n = _three_term(ns, x, n, first(x), lambda k, p, q: (x + x) * q - p)
        theta = ns.acos(ns.clip(x, min=-1.0, max=1.0))
        odd = ns.remainder(n, 2) == 1
        ones = ns.ones_like(value)
        sin_theta, half_sin, half_cos = (_nonzero(ns, f) for f in (ns.sin(theta), ns.sin(theta / 2), ns.cos(theta / 2)))
        if kind == "t":
            closed, large = ns.cos(n * theta), n > 6
            at_one, at_minus_one = 1.0, ns.where(odd, -ones, ones)
        elif kind == "u":
            closed, large = ns.sin((n + 1) * theta) / sin_theta, n > 8
            at_one, at_minus_one = n + 1, ns.where(odd, -(n + 1), n + 1)
        elif kind == "v":
            closed, large = ns.cos((n + 0.5) * theta) / half_cos, n > 8
            at_one, at_minus_one = 1.0, ns.where(odd, -(n + n + 1), n + n + 1)
        else:
            closed, large = ns.sin((n + 0.5) * theta) / half_sin, n > 8
            at_one, at_minus_one = n + n + 1, ns.where(odd, -ones, ones)
        value = ns.where(large & (ns.abs(x) < 1), closed, value)
        value = ns.where(x == 1, at_one, ns.where(x == -1, at_minus_one, value))
        return ns.where(n < 0, 0.0, value)

    return kernel


def _hermite_h(ns: Any, x: Any, n: Any) -> Any:
    value, n = _three_term(ns, x, n, x + x, lambda k, p, q: (x + x) * q - (2 * k - 2) * p)
    return ns.where(n > 512, math.nan, ns.where(n < 0, 0.0, value))


def _hermite_he(ns: Any, x: Any, n: Any) -> Any:
    value, n = _three_term(ns, x, n, x, lambda k, p, q: x * q - (k - 1) * p)
    return ns.where(n > 512, math.nan, ns.where(n < 0, 0.0, value))


def _laguerre(ns: Any, x: Any, n: Any) -> Any:
    value, n = _three_term(ns, x, n, 1 - x, lambda k, p, q: ((2 * k - 1 - x) * q - (k - 1) * p) / k)
    return ns.where(n < 0, 0.0, ns.where(x == 0, 1.0, value))


def _legendre(ns: Any, x: Any, n: Any) -> Any:
    value, n = _three_term(ns, x, n, x, lambda k, p, q: ((2 * k - 1) * x * q - (k - 1) * p) / k)
    odd = ns.remainder(n, 2) == 1
    ones = ns.ones_like(value)
    value = ns.where(x == 1, 1.0, ns.where(x == -1, ns.where(odd, -ones, ones), value))
    return ns.where(n < 0, 0.0, value)


def _shifted(kernel: Kernel) -> Kernel:
    """The polynomial on [0, 1]: `kernel` at 2x - 1."""
    return lambda ns, x, n: kernel(ns, x + x - 1, n)


_POLYNOMIALS = {
    **{f"chebyshev_polynomial_{kind}": _chebyshev(kind) for kind in "tuvw"},
    **{f"shifted_chebyshev_polynomial_{kind}": _shifted(_chebyshev(kind)) for kind in "tuvw"},
    "hermite_polynomial_h": _hermite_h,
    "hermite_polynomial_he": _hermite_he,
    "laguerre_polynomial_l": _laguerre,
    "legendre_polynomial_p": _legendre,
}
POLYNOMIALS = {
    name: _undifferentiated(name, kernel, ("input", "n"), f"PyTorch's {name}(x, n), n given elementwise.")
    for name, kernel in _POLYNOMIALS.items()
}
"""The orthogonal polynomials by PyTorch's name, each a primitive of (x, n)."""

SPECIAL_KERNELS = (erfc, erfinv, ndtri, log_ndtr, gammaln, polygamma, i0, i0e, i1, i1e)
SPECIAL_KERNELS += (erfcx, j0, j1, y0, y1, k0, k1, k0e, k1e, airy_ai, spherical_bessel_j0)
"""The primitives of one tensor (and polygamma's order), for backends running their library's
function (or a sibling backend's kernel) for all of them."""
