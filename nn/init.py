"""Weight initialisation with PyTorch's formulas, drawn from the seeded host generator
(so one seed gives the same weights on every backend). Each function fills the tensor
in place and returns it."""

from __future__ import annotations

import math

import numpy as np

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor


def _fill(t: Tensor, data: object) -> Tensor:
    t._take_array(data, counted=True)
    return t


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended scale for an activation (PyTorch's table)."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "sigmoid", "identity"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r}")


def fan_in_and_fan_out(t: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of shape (out, in, *receptive)."""
    if t.ndim < 2:
        raise ValueError(f"fan in and fan out need a tensor of at least 2 dimensions, got shape {t.shape}")
    receptive = math.prod(t.shape[2:])
    return t.shape[1] * receptive, t.shape[0] * receptive


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    return _fill(t, t.backend.uniform(t.shape, a, b, t.array.dtype))


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    return _fill(t, t.backend.randn(t.shape, t.array.dtype) * std + mean)


def constant_(t: Tensor, value: float) -> Tensor:
    return _fill(t, ag.full_like(t, value).array)


def zeros_(t: Tensor) -> Tensor:
    return constant_(t, 0.0)


def ones_(t: Tensor) -> Tensor:
    return constant_(t, 1.0)


def _fan(t: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', not {mode!r}")
    return fan_in_and_fan_out(t)[mode == "fan_out"]


def kaiming_uniform_(t: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    if not t.numel():  # nothing to draw (and no fan to scale by), as PyTorch
        return t
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / _fan(t, mode))
    return uniform_(t, -bound, bound)


def kaiming_normal_(t: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    return normal_(t, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(t, mode)))


def xavier_uniform_(t: Tensor, gain: float = 1.0) -> Tensor:
    fan_in, fan_out = fan_in_and_fan_out(t)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(t, -bound, bound)


def xavier_normal_(t: Tensor, gain: float = 1.0) -> Tensor:
    fan_in, fan_out = fan_in_and_fan_out(t)
    return normal_(t, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def _fill_host(t: Tensor, values: np.ndarray) -> Tensor:
    """`t` filled with the host array `values`, in `t`'s dtype, on its backend and device."""
    return _fill(t, ag.asarray(values, dtype=t.dtype, device=t.device).array)


def _host_normal(shape: tuple[int, ...], like: Tensor) -> np.ndarray:
    """Standard normal draws from the seeded generator (the same on every backend), on the host."""
    return np.asarray(like.backend.to_numpy(like.backend.randn(shape, like.array.dtype)), dtype=np.float64)


def trunc_normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0) -> Tensor:
    """A normal distribution of `mean` and `std` truncated to [a, b] (PyTorch's inverse-CDF draw).

    >>> import autograd_core as ag
    >>> w = trunc_normal_(ag.empty(1000), std=1.0, a=-0.5, b=0.5)
    >>> bool(w.min() >= -0.5), bool(w.max() <= 0.5)
    (True, True)
    """
    low, high = (_normal_cdf((bound - mean) / std) for bound in (a, b))
    with ag.no_grad():
        u = ag.asarray(t.backend.uniform(t.shape, 2 * low - 1, 2 * high - 1, t.array.dtype))
        values = ag.clip(mean + std * math.sqrt(2.0) * ag.special.erfinv(u), a, b)
    return _fill(t, values.array)


def _normal_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def orthogonal_(t: Tensor, gain: float = 1.0) -> Tensor:
    """A (semi-)orthogonal matrix, the tensor's trailing dimensions flattened (Saxe et al. 2013, as PyTorch).

    >>> import autograd_core as ag
    >>> w = orthogonal_(ag.empty(3, 5))
    >>> bool(ag.all(ag.abs(w @ w.T - ag.eye(3)) < 1e-5))
    True
    """
    if t.ndim < 2:
        raise ValueError(f"orthogonal_ needs a tensor of at least 2 dimensions, got shape {t.shape}")
    if not t.numel():
        return t
    rows, cols = t.shape[0], t.numel() // t.shape[0]
    flat = _host_normal((rows, cols), t)
    q, r = np.linalg.qr(flat.T if rows < cols else flat)
    q = q * np.sign(np.diagonal(r))
    return _fill_host(t, gain * (q.T if rows < cols else q).reshape(t.shape))


def sparse_(t: Tensor, sparsity: float, std: float = 0.01) -> Tensor:
    """A 2-D matrix of normal draws of `std` with a `sparsity` fraction of each column zero (Martens 2010)."""
    if t.ndim != 2:
        raise ValueError(f"sparse_ takes a 2-D tensor, got shape {t.shape}")
    rows, cols = t.shape
    values = std * _host_normal((rows, cols), t)
    zeros = math.ceil(sparsity * rows)
    for column in range(cols):
        order = np.argsort(_host_normal((rows,), t))
        values[order[:zeros], column] = 0.0
    return _fill_host(t, values)


def dirac_(t: Tensor, groups: int = 1) -> Tensor:
    """A 3-, 4- or 5-D convolution weight that passes each input channel through (per group).

    >>> import autograd_core as ag
    >>> dirac_(ag.empty(2, 2, 3))[:, :, 1].tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    if t.ndim not in (3, 4, 5):
        raise ValueError(f"dirac_ takes a 3-, 4- or 5-D tensor, got shape {t.shape}")
    if t.shape[0] % groups:
        raise ValueError(f"dirac_: {t.shape[0]} output channels do not divide into {groups} groups")
    per_group = t.shape[0] // groups
    values = np.zeros(t.shape)
    centre = tuple(size // 2 for size in t.shape[2:])
    for g in range(groups):
        for d in range(min(per_group, t.shape[1])):
            values[(g * per_group + d, d, *centre)] = 1.0
    return _fill_host(t, values)


def eye_(t: Tensor) -> Tensor:
    """The identity matrix, in a 2-D tensor."""
    if t.ndim != 2:
        raise ValueError(f"eye_ takes a 2-D tensor, got shape {t.shape}")
    return _fill_host(t, np.eye(*t.shape))
