"""`autograd_core.torch`'s factories, conversions and random functions."""

from __future__ import annotations

from typing import Any

import numpy as np

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor of the current backend holding `array`'s values (PyTorch's shares the numpy
    memory; here it does on the numpy backend, as ``asarray`` does)."""
    return ag.asarray(array)


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


FUNCTIONS: dict[str, Any] = {
    "tensor": ag.tensor,
    "as_tensor": ag.asarray,
    "asarray": ag.asarray,
    "from_numpy": from_numpy,
    "is_tensor": is_tensor,
    "zeros": ag.zeros,
    "ones": ag.ones,
    "empty": ag.empty,
    "full": ag.full,
    "zeros_like": ag.zeros_like,
    "ones_like": ag.ones_like,
    "empty_like": ag.empty_like,
    "full_like": ag.full_like,
    "eye": ag.eye,
    "arange": ag.arange,
    "linspace": ag.linspace,
    "rand": ag.rand,
    "randn": ag.randn,
    "meshgrid": ag.meshgrid,
}
