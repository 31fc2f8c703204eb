"""A trained model scored on the host: its outputs for many rows, and its accuracy."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import autograd_core as ag


def predict(
    model: Callable[[ag.Tensor], ag.Tensor], x: np.ndarray, dtype: str = "float32", batch_size: int = 1024
) -> np.ndarray:
    """The model's outputs on the host for the rows of `x`, evaluated without a graph."""
    outs = []
    with ag.no_grad():
        for start in range(0, len(x), batch_size):
            outs.append(model(ag.tensor(x[start : start + batch_size], dtype=dtype)).numpy())
    return np.concatenate(outs)


def accuracy(
    model: Callable[[ag.Tensor], ag.Tensor],
    x: np.ndarray,
    y: np.ndarray,
    dtype: str = "float32",
    batch_size: int = 1024,
) -> float:
    """The fraction of rows whose largest output is at the label."""
    return float(np.mean(predict(model, x, dtype, batch_size).argmax(axis=1) == y))
