"""The MLP and the character model of the numpy autograd libraries (HIPS autograd, mygrad),
written once against the numpy-like namespace each of them offers (``autograd.numpy``,
``mygrad``): the same layers as numpy-by-hand's, on the problem's weights in their order."""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.problems import LAYER_NORM_EPS

# a float32 epsilon: mygrad promotes float32 plus a Python float to float64
_EPS = np.float32(LAYER_NORM_EPS)


def mlp(xp: Any, params: list[Any], x: np.ndarray) -> Any:
    """Linear layers with ReLU between them."""
    h, last = x, len(params) - 2
    for i in range(0, len(params), 2):
        h = xp.matmul(h, params[i].T) + params[i + 1]
        if i < last:
            h = xp.maximum(h, 0)
    return h


def char(xp: Any, params: list[Any], x: np.ndarray) -> Any:
    """Embedding, flatten, Linear, LayerNorm, tanh, Linear."""
    table, w1, b1, gamma, beta, w2, b2 = params
    h = xp.matmul(xp.reshape(table[x], (len(x), -1)), w1.T) + b1
    centred = h - xp.mean(h, axis=1, keepdims=True)
    variance = xp.mean(centred * centred, axis=1, keepdims=True)
    act = xp.tanh(centred / xp.sqrt(variance + _EPS) * gamma + beta)
    return xp.matmul(act, w2.T) + b2


MODELS = {"mlp": mlp, "char": char}
