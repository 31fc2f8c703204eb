"""Weight initialisation with PyTorch's formulas, drawn from the seeded host generator
(so one seed gives the same weights on every backend). Each function fills the tensor
in place and returns it."""

from __future__ import annotations

import math

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
