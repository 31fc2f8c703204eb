"""numpy: the reference backend and the embedded default.

numpy >= 2 is itself an array-API namespace, so it is used directly rather than through
array-api-compat's wrappers, which would add a Python call to every operation.
"""

from __future__ import annotations

import math

import numpy as np

from backends.base import Backend


class NumpyBackend(Backend):
    name = "numpy"

    def asarray(self, host, dtype=None):
        return np.array(host, dtype=dtype, copy=True)

    def index_add(self, shape, axis, index, values):
        out = np.zeros(shape, dtype=values.dtype)
        np.add.at(out, (slice(None),) * axis + (index,), values)
        return out

    def adam_update(self, param, grad, exp_avg, exp_avg_sq, *, step, lr, beta1, beta2, eps,
                    weight_decay, decoupled):
        # In place with one scratch buffer: the same arithmetic, in the same order, as the
        # portable default.
        if weight_decay:
            if decoupled:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param
        scratch = np.subtract(grad, exp_avg)
        scratch *= 1 - beta1
        exp_avg += scratch
        exp_avg_sq *= beta2
        np.multiply(grad, grad, out=scratch)
        scratch *= 1 - beta2
        exp_avg_sq += scratch
        np.sqrt(exp_avg_sq, out=scratch)
        scratch /= math.sqrt(1 - beta2**step)
        scratch += eps
        np.divide(exp_avg, scratch, out=scratch)
        scratch *= lr / (1 - beta1**step)
        param -= scratch
        return param, exp_avg, exp_avg_sq


def create(device: str | None = None) -> Backend:
    if device not in (None, "cpu"):
        raise ValueError(f"the numpy backend runs on the CPU only, not on device {device!r}")
    return NumpyBackend(np, np.ndarray, "cpu")
