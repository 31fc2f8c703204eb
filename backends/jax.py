"""jax on its default device, with float64 enabled (jax_enable_x64). Arrays are immutable,
so the kernels that update in place elsewhere are functional here."""

from __future__ import annotations

import functools

import jax
import jax.numpy as xp
import jax.scipy.special
import numpy as np

from backends.base import Backend, _tap

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

    def conv2d(self, x, weight, **geometry):
        return _conv2d(x, weight, **geometry)

    def conv2d_grad_input(self, grad, weight, input_shape, **geometry):
        return _conv2d_grad_input(grad, weight, tuple(input_shape), **geometry)

    def conv2d_grad_weight(self, grad, x, weight_shape, **geometry):
        return _conv2d_grad_weight(grad, x, tuple(weight_shape), **geometry)

    def max_pool2d_backward(self, grad, indices, input_shape, **geometry):
        return self._scatter_to_maxima(grad, indices, input_shape)

    def col2im(self, cols, shape, kernel, stride, dilation):  # the portable default, functionally
        out = xp.zeros(shape, dtype=cols.dtype, device=self.device)
        for i in range(kernel[0]):
            for j in range(kernel[1]):
                out = out.at[_tap(i, j, stride, dilation, tuple(cols.shape[3:]))].add(cols[:, :, i * kernel[1] + j])
        return out

    # --- linear algebra kernels
    def einsum(self, subscripts, *arrays):
        return xp.einsum(subscripts, *arrays)


_GEOMETRY = ("stride", "padding", "dilation", "groups")


@functools.partial(jax.jit, static_argnames=_GEOMETRY)
def _conv2d(x, weight, *, stride, padding, dilation, groups):
    return jax.lax.conv_general_dilated(
        x,
        weight,
        stride,
        padding,
        rhs_dilation=dilation,
        feature_group_count=groups,
        dimension_numbers=("NCHW", "OIHW", "NCHW"),
        precision=jax.lax.Precision.HIGHEST,
    )


# The two gradients are the transposes of the convolution, linear in the input and in the weight.
@functools.partial(jax.jit, static_argnames=("input_shape", *_GEOMETRY))
def _conv2d_grad_input(grad, weight, input_shape, **geometry):
    transpose = jax.linear_transpose(
        lambda x: _conv2d(x, weight, **geometry), jax.ShapeDtypeStruct(input_shape, grad.dtype)
    )
    return transpose(grad)[0]


@functools.partial(jax.jit, static_argnames=("weight_shape", *_GEOMETRY))
def _conv2d_grad_weight(grad, x, weight_shape, **geometry):
    transpose = jax.linear_transpose(
        lambda w: _conv2d(x, w, **geometry), jax.ShapeDtypeStruct(weight_shape, grad.dtype)
    )
    return transpose(grad)[0]


def create(device: str | None = None) -> Backend:
    target = jax.devices(device)[0] if device else jax.devices()[0]
    backend = JaxBackend(xp, jax.Array, target)
    backend._compiled_adam = jax.jit(
        functools.partial(Backend.adam_update, backend), static_argnames=("weight_decay", "decoupled")
    )
    return backend
