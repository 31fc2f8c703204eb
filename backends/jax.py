"""jax on its default device, with float64 enabled (jax_enable_x64). Arrays are immutable,
so the kernels that update in place elsewhere are functional here."""

from __future__ import annotations

import functools

import jax
import jax.numpy as xp
import jax.scipy.special
import numpy as np

from backends.base import Backend

jax.config.update("jax_enable_x64", True)


class JaxBackend(Backend):
    name = "jax"
    mutable = False
    can_compile = True
    device_kinds = ("cpu", "gpu", "tpu")

    def asarray(self, host, dtype=None):
        return jax.device_put(np.asarray(host, dtype=self.to_host_dtype(dtype) if dtype else None), self.device)

    def to_numpy(self, x):
        return np.asarray(x)

    def synchronize(self, *arrays):
        jax.block_until_ready(arrays)

    def index_add(self, shape, axis, index, values):
        return xp.zeros(shape, dtype=values.dtype).at[(slice(None),) * axis + (index,)].add(values)

    def scatter(self, shape, key, values):
        return xp.zeros(shape, dtype=values.dtype).at[key].set(values)

    def jit(self, fn):
        return jax.jit(fn)

    def is_traced(self, x):
        return isinstance(x, jax.core.Tracer)

    def erf(self, x):
        return jax.scipy.special.erf(x)

    def adam_update(self, param, grad, exp_avg, exp_avg_sq, **settings):
        # the portable update as one compiled kernel instead of a dozen dispatched ops; the
        # step count and learning rate are traced, so it compiles once per shape
        return self._compiled_adam(param, grad, exp_avg, exp_avg_sq, **settings)

    # --- linear algebra kernels
    def einsum(self, subscripts, *arrays):
        return xp.einsum(subscripts, *arrays)


def create(device: str | None = None) -> Backend:
    target = jax.devices(device)[0] if device else jax.devices()[0]
    backend = JaxBackend(xp, jax.Array, target)
    backend._compiled_adam = jax.jit(functools.partial(Backend.adam_update, backend),
                                     static_argnames=("weight_decay", "decoupled"))
    return backend
