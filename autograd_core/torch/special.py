"""`torch.special` over our tensors, with PyTorch's signatures: `autograd_core.special`'s functions,
with the rows of `FUNCTIONS` where PyTorch's differ (PyTorch's names for SciPy's Bessel
functions, the orthogonal polynomials of a degree given elementwise, ``polygamma(n, input)``).

>>> import autograd_core.torch as torch
>>> x = torch.tensor([0.5, 1.0], dtype=torch.float64)
>>> torch.special.chebyshev_polynomial_t(x, 3).tolist()
[-1.0, 1.0]
>>> round(torch.special.bessel_j0(x)[0].item(), 6)
0.93847
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograd_core import special as _ours
from autograd_core.ops.special import _floating_pair
from autograd_core.primitives.special import POLYNOMIALS, airy_ai as _airy_ai, spherical_bessel_j0 as _spherical_j0
from autograd_core.torch._adapt import as_tensor


def _unary(f: Callable[..., Any], name: str) -> Callable[..., Any]:
    """`f` of one tensor (a Python number too), under PyTorch's name."""

    def call(input: Any) -> Any:
        return f(as_tensor(input))

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f.__doc__
    return call


def _polynomial(name: str) -> Callable[..., Any]:
    """PyTorch's ``name(input, n)``: the polynomial of degree n (elementwise, truncated toward
    zero; 0 for n < 0) at input; either may be a Python number. Not differentiable, as PyTorch's."""
    primitive = POLYNOMIALS[name]

    def pair(x: Any, n: Any, /) -> Any:
        return primitive.bind(x, n)

    pair.__name__ = pair.__qualname__ = name
    call = _floating_pair(pair)
    call.__doc__ = pair.__doc__ = primitive.__doc__
    return call


def polygamma(n: int, input: Any) -> Any:
    """The n-th derivative of digamma, ``torch.special.polygamma(n, input)``."""
    return _ours.polygamma(n, as_tensor(input))


def multigammaln(input: Any, p: int) -> Any:
    """The log of the multivariate gamma function of dimension `p` (PyTorch's mvlgamma)."""
    return _ours.multigammaln(as_tensor(input), p)


def logit(input: Any, eps: float | None = None) -> Any:
    return _ours.logit(as_tensor(input), eps)


_RENAMED = {  # PyTorch's name: ours (SciPy's)
    "bessel_j0": _ours.j0,
    "bessel_j1": _ours.j1,
    "bessel_y0": _ours.y0,
    "bessel_y1": _ours.y1,
    "modified_bessel_i0": _ours.i0,
    "modified_bessel_i1": _ours.i1,
    "modified_bessel_k0": _ours.k0,
    "modified_bessel_k1": _ours.k1,
    "scaled_modified_bessel_k0": _ours.k0e,
    "scaled_modified_bessel_k1": _ours.k1e,
    "gammaln": _ours.gammaln,
    "psi": _ours.digamma,
    "airy_ai": lambda x: _airy_ai.bind(x),
    "spherical_bessel_j0": lambda x: _spherical_j0.bind(x),
}

FUNCTIONS: dict[str, Any] = {
    **{name: _unary(f, name) for name, f in _RENAMED.items()},
    **{name: _polynomial(name) for name in POLYNOMIALS},
    "polygamma": polygamma,
    "multigammaln": multigammaln,
    "logit": logit,
}

globals().update({name: getattr(_ours, name) for name in getattr(_ours, "__all__", ()) if name not in FUNCTIONS})
globals().update(FUNCTIONS)
