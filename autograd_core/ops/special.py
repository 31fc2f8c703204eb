"""Differentiable special functions, under scipy.special's names and signatures.

With ``SCIPY_ARRAY_API=1`` set before SciPy is imported, SciPy looks a special function up as
``xp.special.<name>`` in the namespace of its arguments, so on tensors its special functions,
and the scipy.stats functions built on them, run these and keep their gradients. Values and
gradients follow PyTorch's ``torch.special``, at the singular points too (``entr(0)`` is 0 with
gradient inf, ``xlogy(0, 0)`` is 0 with gradient 0 for x).

>>> import autograd_core as ag
>>> p = ag.tensor([0.25, 0.75], dtype="float64", requires_grad=True)
>>> ag.special.entr(p).sum().backward()  # d(-p log p)/dp = -(1 + log p)
>>> [round(v, 6) for v in p.grad.tolist()]
[0.386294, -0.712318]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from autograd_core.graph.dtypes import isdtype, result_type
from autograd_core.graph.registry import Primitive
from autograd_core.graph.tensor_base import TensorBase
from autograd_core.ops import core as ops, elementwise as functions, statistics
from autograd_core.ops.core import elementwise, unary_op
from autograd_core.ops.creation import asarray
from autograd_core.ops.info import __array_namespace_info__
from autograd_core.ops.manipulation import reshape
from autograd_core.primitives import special as kernels
from autograd_core.primitives.special import polygamma as _polygamma

__all__ = [
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "expit",
    "gammainc",
    "gammaincc",
    "gammaln",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "j0",
    "j1",
    "k0",
    "k0e",
    "k1",
    "k1e",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "rel_entr",
    "sinc",
    "softmax",
    "xlog1py",
    "xlogy",
    "y0",
    "y1",
    "zeta",
]


def _as_floating(x: TensorBase) -> TensorBase:
    """`x`, or an integer or boolean `x` in the default floating dtype, as PyTorch's special
    functions take them; a complex `x` is refused."""
    if isdtype(x.dtype, "complex floating"):
        raise TypeError(f"the special functions take real tensors, got {x.dtype.name}; pass the real part (ag.real(x))")
    if isdtype(x.dtype, "real floating"):
        return x
    return ops.astype(x, __array_namespace_info__().default_dtypes(device=x.device)["real floating"])


def _floating(op: Any) -> Any:
    """`op`, a function of one tensor, taking integer and boolean tensors too."""

    def on_floating(x: TensorBase) -> TensorBase:
        return op(_as_floating(ops._tensor(op.__name__, x)))

    on_floating.__name__ = on_floating.__qualname__ = op.__name__
    on_floating.__doc__ = op.__doc__
    return on_floating


def _elementwise_pair(name: str, forward: Any, vjp_x: Any, vjp_y: Any, doc: str) -> Any:
    """A broadcasting elementwise primitive of two tensors of one dtype, as a function."""
    primitive = Primitive(name, forward, vjps=(vjp_x, vjp_y), jvp="elementwise", doc=doc)

    def op(x: TensorBase, y: TensorBase, /) -> TensorBase:
        return primitive.bind(x, y)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


def _floating_pair(op: Any) -> Any:
    """`op`, a function of two tensors, taking a Python scalar or an integer tensor for either
    (a scalar becomes a tensor like the other operand, so the kernels see arrays only)."""

    def on_floating(x: Any, y: Any, /) -> TensorBase:
        like = x if isinstance(x, TensorBase) else y
        if not isinstance(like, TensorBase):
            raise TypeError(
                f"{op.__name__}: at least one operand must be a tensor, got {type(x).__name__} and {type(y).__name__}"
            )
        like = _as_floating(like)
        x, y = (v if isinstance(v, TensorBase) else asarray(v, dtype=like.dtype, device=like.device) for v in (x, y))
        x, y = _as_floating(x), _as_floating(y)
        common = result_type(x.dtype, y.dtype)
        return op(ops.astype(x, common, copy=False), ops.astype(y, common, copy=False))

    on_floating.__name__ = on_floating.__qualname__ = op.__name__
    on_floating.__doc__ = op.__doc__
    return on_floating


def _defined(ns: Any, y: Any, value: Any) -> Any:
    """`value`, or nan where `y` is nan (x * log(y) at x = 0 is 0 only for a number y)."""
    return ns.where(ns.isnan(y), math.nan, value)


def _x_log(ns: Any, x: Any, log_y: Any, y: Any) -> Any:
    """x * log_y, taken as 0 where x is 0 (unless y is nan), as xlogy and xlog1py define it."""
    return _defined(ns, y, ns.where(x == 0, 0.0, x * log_y))


xlogy = _floating_pair(
    _elementwise_pair(
        "xlogy",
        lambda ns, x, y: _x_log(ns, x, ns.log(y), y),
        # PyTorch: x's gradient is xlogy(g, y), zeroed where x == 0 and y <= 0
        lambda ns, g, out, x, y: ns.where((x == 0) & (y <= 0), 0.0, _x_log(ns, g, ns.log(y), y)),
        lambda ns, g, out, x, y: g * x / y,
        doc="""x * log(y), 0 where x is 0 (for a y that is not nan).

    >>> import autograd_core as ag
    >>> ag.special.xlogy(ag.asarray([0.0, 2.0], dtype="float64"), ag.asarray([0.0, 3.0], dtype="float64")).tolist()
    [0.0, 2.1972245773362196]
    """,
    )
)
xlog1py = _floating_pair(
    _elementwise_pair(
        "xlog1py",
        lambda ns, x, y: _x_log(ns, x, ns.log1p(y), y),
        lambda ns, g, out, x, y: ns.where((x == 0) & (y <= -1), 0.0, _x_log(ns, g, ns.log1p(y), y)),
        lambda ns, g, out, x, y: g * x / (1 + y),
        doc="x * log1p(y), 0 where x is 0 (for a y that is not nan).",
    )
)


def _rel_entr(ns: Any, x: Any, y: Any) -> Any:
    both_positive = (x > 0) & (y > 0)
    safe_x, safe_y = ns.where(both_positive, x, 1.0), ns.where(both_positive, y, 1.0)
    value = ns.where(both_positive, safe_x * (ns.log(safe_x) - ns.log(safe_y)), math.inf)
    value = ns.where((x == 0) & (y >= 0), 0.0, value)
    return ns.where(ns.isnan(x) | ns.isnan(y), math.nan, value)


rel_entr = _floating_pair(
    _elementwise_pair(
        "rel_entr",
        _rel_entr,
        lambda ns, g, out, x, y: g * (ns.log(x) - ns.log(y) + 1),
        lambda ns, g, out, x, y: -g * x / y,
        doc="""x log(x / y) for x, y > 0; 0 where x is 0 and y >= 0; inf elsewhere. The gradients
    are the formulas' values (x's is -inf at x = 0, as entr's is inf).

    >>> import autograd_core as ag
    >>> ag.special.rel_entr(ag.asarray([0.5, 0.0], dtype="float64"), ag.asarray([0.25, 1.0], dtype="float64")).tolist()
    [0.34657359027997264, 0.0]
    """,
    )
)


def _entr(ns: Any, x: Any) -> Any:
    positive = x > 0
    safe = ns.where(positive, x, 1.0)
    value = ns.where(positive, -safe * ns.log(safe), ns.where(x == 0, 0.0, ns.full_like(x, -math.inf)))
    return ns.where(ns.isnan(x), math.nan, value)


entr = _floating(
    unary_op(
        "entr",
        _entr,
        lambda ns, g, out, x: g * -(1 + ns.log(x)),  # PyTorch's: inf at 0, nan below
        doc="""-x log(x) for x > 0, 0 at 0, -inf below: the entropy's summand.

        >>> import autograd_core as ag
        >>> ag.special.entr(ag.asarray([0.5, 0.0, -1.0], dtype="float64")).tolist()
        [0.34657359027997264, 0.0, -inf]
        """,
    )
)


def _logit(ns: Any, x: Any) -> Any:
    return ns.log(x) - ns.log1p(-x)


_logit_unclamped = _floating(
    unary_op(
        "logit",
        _logit,
        # PyTorch's: nan outside [0, 1], inf at 0 and 1
        lambda ns, g, out, x: ns.where((x < 0) | (x > 1), math.nan, g / (x * (1 - x))),
        doc="""log(x / (1 - x)), the inverse of expit: -inf at 0, inf at 1, nan outside [0, 1].

        >>> import autograd_core as ag
        >>> ag.special.logit(ag.asarray([0.0, 0.5, 1.0])).tolist()
        [-inf, 0.0, inf]
        """,
    )
)


def logit(x: TensorBase, eps: float | None = None) -> TensorBase:
    """log(x / (1 - x)), the inverse of expit: -inf at 0, inf at 1, nan outside [0, 1]. With
    PyTorch's `eps`, x is clamped to [eps, 1 - eps] first (the gradient is 0 outside).

    >>> import autograd_core as ag
    >>> ag.special.logit(ag.asarray([0.0, 0.5, 1.0])).tolist()
    [-inf, 0.0, inf]
    >>> [round(v, 4) for v in ag.special.logit(ag.asarray([0.0, 1.0]), eps=0.25).tolist()]
    [-1.0986, 1.0986]
    """
    if eps is None:
        return _logit_unclamped(x)
    return _logit_unclamped(ops.clip(_as_floating(ops._tensor("logit", x)), eps, 1 - eps))


def _sinc(ns: Any, x: Any) -> Any:
    safe = ns.where(x == 0, 1.0, x) * math.pi
    return ns.where(x == 0, 1.0, ns.sin(safe) / safe)


def _sinc_grad(ns: Any, g: Any, out: Any, x: Any) -> Any:
    # PyTorch's: (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x = 0; the quotient is taken of x
    # itself, so the second derivative at 0 is PyTorch's nan (0 / 0 through the untaken branch)
    slope = (math.pi * x * ns.cos(math.pi * x) - ns.sin(math.pi * x)) / (math.pi * x * x)
    return g * ns.where(x == 0, 0.0, slope)


sinc = _floating(
    unary_op(
        "sinc",
        _sinc,
        _sinc_grad,
        doc="""The normalized sinc, sin(pi x) / (pi x), 1 at 0.

        >>> import autograd_core as ag
        >>> ag.special.sinc(ag.asarray([0.0, 0.5], dtype="float64")).tolist()
        [1.0, 0.6366197723675814]
        """,
    )
)

erf = _floating(functions.erf)
expit = _floating(functions.sigmoid)
expit.__doc__ = "The logistic function 1 / (1 + exp(-x)), scipy.special's name for sigmoid."
erfc = _floating(elementwise(kernels.erfc))
erfinv = _floating(elementwise(kernels.erfinv))
ndtri = _floating(elementwise(kernels.ndtri))
log_ndtr = _floating(elementwise(kernels.log_ndtr))
gammaln = _floating(elementwise(kernels.gammaln))
i0 = _floating(elementwise(kernels.i0))
i0e = _floating(elementwise(kernels.i0e))
i1 = _floating(elementwise(kernels.i1))
i1e = _floating(elementwise(kernels.i1e))
erfcx = _floating(elementwise(kernels.erfcx))
j0 = _floating(elementwise(kernels.j0))
j1 = _floating(elementwise(kernels.j1))
y0 = _floating(elementwise(kernels.y0))
y1 = _floating(elementwise(kernels.y1))
k0 = _floating(elementwise(kernels.k0))
k1 = _floating(elementwise(kernels.k1))
k0e = _floating(elementwise(kernels.k0e))
k1e = _floating(elementwise(kernels.k1e))


def _binary(primitive: Primitive, doc: str) -> Any:
    """A broadcasting primitive of two tensors as a function taking scalars and integers too."""

    def op(x: TensorBase, y: TensorBase, /) -> TensorBase:
        return primitive.bind(x, y)

    op.__name__ = op.__qualname__ = primitive.name
    op.__doc__ = doc
    return _floating_pair(op)


zeta = _binary(
    kernels.zeta,
    """The Hurwitz zeta function sum over k >= 0 of (q + k)^-x (Riemann's at q = 1); the
    gradient is taken with respect to q only, as PyTorch's.

    >>> import autograd_core as ag
    >>> round(ag.special.zeta(ag.asarray([2.0], dtype="float64"), 1.0).item(), 12)  # pi^2 / 6
    1.644934066848
    """,
)
gammainc = _binary(
    kernels.gammainc,
    """The regularized lower incomplete gamma function P(a, x) (PyTorch's igamma); the
    gradient is taken with respect to x only, as PyTorch's.

    >>> import autograd_core as ag
    >>> round(ag.special.gammainc(ag.asarray([1.0], dtype="float64"), 1.0).item(), 12)  # 1 - 1/e
    0.632120558829
    """,
)
gammaincc = _binary(kernels.gammaincc, "The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).")


def multigammaln(a: TensorBase, d: int) -> TensorBase:
    """The log of the multivariate gamma function of dimension `d`: the sum over j < d of
    gammaln(a - j / 2), plus d (d - 1) / 4 log(pi); every element must exceed (d - 1) / 2.

    >>> import autograd_core as ag
    >>> round(ag.special.multigammaln(ag.asarray([2.5], dtype="float64"), 2).item(), 10)
    0.8570478134
    """
    a = _as_floating(ops._tensor("multigammaln", a))
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise ValueError(f"multigammaln: p (d) must be an integer >= 1, got {d!r}")
    if not bool(statistics.all(a > (d - 1) / 2)):
        raise ValueError(f"multigammaln: all elements must be greater than (p-1)/2 = {(d - 1) / 2}")
    total = gammaln(a)
    for j in range(1, d):
        total = total + gammaln(a - j / 2)
    return total + d * (d - 1) / 4 * math.log(math.pi)


@_floating
def ndtr(x: TensorBase) -> TensorBase:
    """The standard normal distribution function, erfc(-x / sqrt 2) / 2: accurate in the
    lower tail, where 1 - ... would round to 0.

    >>> import autograd_core as ag
    >>> ag.special.ndtr(ag.asarray([0.0])).tolist()
    [0.5]
    """
    return 0.5 * erfc(x * -math.sqrt(0.5))


@_floating
def digamma(x: TensorBase) -> TensorBase:
    """The derivative of gammaln (scipy's psi): -inf at +0, nan at the negative integers.

    >>> import autograd_core as ag
    >>> round(ag.special.digamma(ag.asarray([1.0], dtype="float64")).item(), 12)  # -Euler's gamma
    -0.577215664902
    """
    return _polygamma.bind(x, 0)


psi = digamma


def polygamma(n: int, x: TensorBase) -> TensorBase:
    """The n-th derivative of digamma, for a Python integer n >= 0.

    >>> import autograd_core as ag
    >>> round(ag.special.polygamma(1, ag.asarray([1.0], dtype="float64")).item(), 12)  # pi^2 / 6
    1.644934066848
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise TypeError(f"polygamma takes the order n as a Python integer >= 0, got {n!r}")
    return _floating(lambda t: _polygamma.bind(t, n))(x)


def logsumexp(
    a: TensorBase,
    axis: int | Sequence[int] | None = None,
    b: Any = None,
    keepdims: bool = False,
    return_sign: bool = False,
) -> TensorBase | tuple[TensorBase, TensorBase]:
    """log(sum(b * exp(a))) over `axis` without overflow, as scipy.special.logsumexp: with
    `return_sign`, log|sum| and the sum's sign; without, nan where the sum is negative.

    >>> import autograd_core as ag
    >>> a, b = ag.asarray([1000.0, 1000.0], dtype="float64"), ag.asarray([1.0, -0.5], dtype="float64")
    >>> ag.special.logsumexp(a, b=b).item()
    999.3068528194401
    """
    a = ops._tensor("logsumexp", a)
    if b is None:
        out = ops.logsumexp(a, axis=axis, keepdims=keepdims)
        return (out, functions.sign(functions.exp(out)).detach()) if return_sign else out
    shift = ops.max(a, axis=axis, keepdims=True).detach()
    shift = ops.where(ops.isfinite(shift), shift, 0.0)
    total = ops.sum(b * functions.exp(a - shift), axis=axis, keepdims=True)
    magnitude = functions.log(functions.abs(total)) + shift
    out = magnitude if return_sign else ops.where(total < 0, math.nan, magnitude)
    if not keepdims:
        kept = ops._axes(axis, out.ndim)
        out, total = (ops.squeeze(t, axis=kept) if kept else t for t in (out, total))
    return (out, functions.sign(total).detach()) if return_sign else out


def _over_axis(op: Any, x: TensorBase, axis: int | Sequence[int] | None) -> TensorBase:
    """A normalization over `axis`; None (scipy's default) is over every element, a tuple of
    axes is over those together."""
    x = ops._tensor(op.__name__, x)
    if isinstance(axis, int):
        return op(x, axis=axis)
    axes = ops._axes(axis, x.ndim)
    others = [i for i in range(x.ndim) if i not in axes]
    moved = ops.permute_dims(x, (*others, *axes))
    flat = reshape(moved, (*(x.shape[i] for i in others), -1))
    result = reshape(op(flat, axis=-1), moved.shape)
    order = (*others, *axes)
    return ops.permute_dims(result, tuple(order.index(i) for i in range(x.ndim)))


def softmax(x: TensorBase, axis: int | Sequence[int] | None = None) -> TensorBase:
    """exp(x) / sum(exp(x)) over `axis` (every element when None, as scipy's default).

    >>> import autograd_core as ag
    >>> ag.special.softmax(ag.asarray([[0.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.25, 0.25], [0.25, 0.25]]
    """
    return _over_axis(functions.softmax, x, axis)


def log_softmax(x: TensorBase, axis: int | Sequence[int] | None = None) -> TensorBase:
    """x - logsumexp(x) over `axis` (every element when None, as scipy's default)."""
    return _over_axis(ops.log_softmax, x, axis)
