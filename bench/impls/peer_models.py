"""The MLP and the character model of the numpy autograd libraries (HIPS autograd, mygrad),
written once against the numpy-like namespace each of them offers (``autograd.numpy``,
``mygrad``): the same layers as numpy-by-hand's, on the problem's weights in their order. The
matrix product and the ReLU are each library's own choice (`Ops`), as its users write them: the
generic ``matmul`` and ``maximum`` cost HIPS autograd and mygrad up to twice the step time."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.problems import LAYER_NORM_EPS

# a float32 epsilon: mygrad promotes float32 plus a Python float to float64
_EPS = np.float32(LAYER_NORM_EPS)


@dataclass(frozen=True)
class Ops:
    """A library's namespace, with the matrix product and ReLU its users reach for."""

    xp: Any
    dot: Callable[[Any, Any], Any]
    relu: Callable[[Any], Any]


def mlp(ops: Ops, params: list[Any], x: np.ndarray) -> Any:
    """Linear layers with ReLU between them."""
    h, last = x, len(params) - 2
    for i in range(0, len(params), 2):
        h = ops.dot(h, params[i].T) + params[i + 1]
        if i < last:
            h = ops.relu(h)
    return h


def char(ops: Ops, params: list[Any], x: np.ndarray) -> Any:
    """Embedding, flatten, Linear, LayerNorm, tanh, Linear."""
    xp = ops.xp
    table, w1, b1, gamma, beta, w2, b2 = params
    h = ops.dot(xp.reshape(table[x], (len(x), -1)), w1.T) + b1
    centred = h - xp.mean(h, axis=1, keepdims=True)
    variance = xp.mean(centred * centred, axis=1, keepdims=True)
    act = xp.tanh(centred / xp.sqrt(variance + _EPS) * gamma + beta)
    return ops.dot(act, w2.T) + b2


MODELS = {"mlp": mlp, "char": char}
