"""`torch.signal.windows`: window functions, with PyTorch's signatures.

Each is built from our ops as PyTorch builds it (an evenly spaced grid through `linspace`,
then an elementwise formula), so it runs on every backend, in float32 or float64, on the
device asked for; ``sym=False`` gives the periodic window (the first M of a symmetric window of
M + 1 points) that spectral analysis wants.

>>> from autograd_core.torch.signal import windows
>>> [round(v, 6) for v in windows.hann(5).tolist()]
[0.0, 0.5, 1.0, 0.5, 0.0]
>>> [round(v, 6) for v in windows.hann(4, sym=False).tolist()]
[0.0, 0.5, 1.0, 0.5]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import autograd_core as ag
from autograd_core.graph.dtypes import as_dtype
from autograd_core.ops.creation import _DEFAULTS

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]


def _checked(name: str, M: int, dtype: Any, layout: Any) -> Any:  # noqa: N803 - PyTorch's name
    """The window's dtype (the default floating dtype when None), once `M` and the layout are checked."""
    dtype = _DEFAULTS["real floating"] if dtype is None else as_dtype(dtype)
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and str(layout) not in ("torch.strided", "strided"):
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype.name not in ("float32", "float64"):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M: int, dtype: Any, device: Any, requires_grad: bool, ones_at_one: bool = True) -> Any:  # noqa: N803
    """The window of 0 points (empty), or of 1 point (a one) where the formula would divide by 0."""
    if M == 0:
        return ag.zeros((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1 and ones_at_one:
        return ag.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def _grid(start: float, step: float, M: int, dtype: Any, device: Any, requires_grad: bool) -> Any:  # noqa: N803
    """`M` points from `start`, `step` apart (PyTorch's ``linspace(start, start + (M - 1) step, M)``)."""
    return ag.linspace(start, start + (M - 1) * step, M, dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(
    M: int,  # noqa: N803
    *,
    center: float | None = None,
    tau: float = 1.0,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """exp(-|n - center| / tau) (the Poisson window).

    >>> [round(v, 4) for v in exponential(3, tau=1.0).tolist()]
    [0.3679, 1.0, 0.3679]
    """
    dtype = _checked("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if (empty := _trivial(M, dtype, device, requires_grad, ones_at_one=False)) is not None:
        return empty
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _grid(-center / tau, 1 / tau, M, dtype, device, requires_grad)
    return ag.exp(-ag.abs(k))


def cosine(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """sin(pi (n + 1/2) / M) (the sine window)."""
    dtype = _checked("cosine", M, dtype, layout)
    if (empty := _trivial(M, dtype, device, requires_grad, ones_at_one=False)) is not None:
        return empty
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    return ag.sin(_grid(0.5 * constant, constant, M, dtype, device, requires_grad))


def gaussian(
    M: int,  # noqa: N803
    *,
    std: float = 1.0,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """exp(-(n - (M - 1) / 2)^2 / (2 std^2)).

    >>> [round(v, 4) for v in gaussian(3).tolist()]
    [0.6065, 1.0, 0.6065]
    """
    dtype = _checked("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if (empty := _trivial(M, dtype, device, requires_grad, ones_at_one=False)) is not None:
        return empty
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _grid(start * constant, constant, M, dtype, device, requires_grad)
    return ag.exp(-(k * k))


def kaiser(
    M: int,  # noqa: N803
    *,
    beta: float = 12.0,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)."""
    dtype = _checked("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if (trivial := _trivial(M, dtype, device, requires_grad)) is not None:
        return trivial
    b = ag.asarray(beta, dtype=dtype, device=device)
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = min(beta, -beta + (M - 1) * constant)
    k = ag.linspace(-beta, end, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return ag.special.i0(ag.sqrt(b * b - k * k)) / ag.special.i0(b)


def general_cosine(
    M: int,  # noqa: N803
    *,
    a: Iterable[float],
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """sum over i of (-1)^i a[i] cos(2 pi i n / (M - 1)): the family of hann, hamming,
    blackman and nuttall."""
    dtype = _checked("general_cosine", M, dtype, layout)
    if (trivial := _trivial(M, dtype, device, requires_grad)) is not None:
        return trivial
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    coefficients: Sequence[float] = list(a)
    if not coefficients:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = _grid(0.0, constant, M, dtype, device, requires_grad)
    total = None
    for i, w in enumerate(coefficients):
        term = (-1) ** i * w * ag.cos(i * k)
        total = term if total is None else total + term
    return total


def general_hamming(
    M: int,  # noqa: N803
    *,
    alpha: float = 0.54,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(
        M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def hamming(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The Hamming window: `general_hamming` with alpha 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The Hann window: `general_hamming` with alpha 0.5."""
    return general_hamming(
        M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def blackman(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The Blackman window: `general_cosine` with a = (0.42, 0.5, 0.08)."""
    _checked("blackman", M, dtype, layout)
    return general_cosine(
        M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def bartlett(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The triangular window 1 - |2n / (M - 1) - 1|."""
    dtype = _checked("bartlett", M, dtype, layout)
    if (trivial := _trivial(M, dtype, device, requires_grad)) is not None:
        return trivial
    k = _grid(-1.0, 2 / (M if not sym else M - 1), M, dtype, device, requires_grad)
    return 1 - ag.abs(k)


def nuttall(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(
        M,
        a=[0.3635819, 0.4891775, 0.1365995, 0.0106411],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )
