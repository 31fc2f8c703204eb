"""jax on its default device, with float64 enabled (jax_enable_x64). Arrays are immutable,
so the kernels that update in place elsewhere are functional here."""

from __future__ import annotations

import functools

import jax
import jax.numpy as xp
import jax.scipy.special
import numpy as np

from autograd_core import primitives as P
from autograd_core.primitives import special
from autograd_core.primitives.convolution import scatter_to_maxima, tap
from backends.contract.backend import Backend

jax.config.update("jax_enable_x64", True)


class JaxBackend(Backend):
    name = "jax"
    mutable = False
    can_compile = True
    device_kinds = ("cpu", "gpu", "tpu")

    @property
    def device_type(self) -> str:
        return self.device.platform

    def asarray(self, host, dtype=None):
        return jax.device_put(np.asarray(host, dtype=self.to_host_dtype(dtype) if dtype else None), self.device)

    def to_numpy(self, x):
        return np.asarray(x)

    def synchronize(self, *arrays):
        jax.block_until_ready(arrays)

    def jit(self, fn, donate=()):
        return jax.jit(fn, donate_argnums=donate)

    def is_traced(self, x):
        return isinstance(x, jax.core.Tracer)


# --- kernels ---------------------------------------------------------------------------------
@P.index_add.kernel("jax")
def _index_add(ns, values, shape, axis, index):
    return xp.zeros(tuple(shape), dtype=values.dtype).at[(slice(None),) * axis + (index,)].add(values)


@P.scatter.kernel("jax")
def _scatter(ns, values, shape, key):
    return xp.zeros(tuple(shape), dtype=values.dtype).at[key].set(values)


@P.erf_kernel.kernel("jax")
def _erf(ns, x):
    return jax.scipy.special.erf(x)


@P.adam_update.kernel("jax")
def _adam_update(ns, param, grad, exp_avg, exp_avg_sq, **settings):
    # the portable update as one compiled kernel instead of a dozen dispatched ops; the
    # step count and learning rate are traced, so it compiles once per shape
    return _compiled_adam(ns, param, grad, exp_avg, exp_avg_sq, **settings)


_compiled_adam = jax.jit(P.adam_update.default, static_argnames=("ns", "weight_decay", "decoupled"))


@P.conv2d.kernel("jax")
def _conv2d_kernel(ns, x, weight, geometry):
    return _conv2d(x, weight, **geometry._asdict())


@P.conv2d_grad_input.kernel("jax")
def _conv2d_grad_input_kernel(ns, grad, weight, input_shape, geometry):
    return _conv2d_grad_input(grad, weight, tuple(input_shape), **geometry._asdict())


@P.conv2d_grad_weight.kernel("jax")
def _conv2d_grad_weight_kernel(ns, grad, x, weight_shape, geometry):
    return _conv2d_grad_weight(grad, x, tuple(weight_shape), **geometry._asdict())


P.max_pool2d_backward.kernel("jax")(scatter_to_maxima)


@P.col2im.kernel("jax")
def _col2im(ns, cols, shape, kernel, stride, dilation):  # the portable default, functionally
    out = xp.zeros(shape, dtype=cols.dtype, device=ns.backend.device)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            out = out.at[tap(i, j, stride, dilation, tuple(cols.shape[3:]))].add(cols[:, :, i * kernel[1] + j])
    return out


@P.einsum.kernel("jax")
def _einsum(ns, subscripts, *arrays):
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
    return JaxBackend(xp, jax.Array, target)


# --- special functions: jax.scipy.special's ----------------------------------------------------
def _register_special_kernels() -> None:
    for name in ("erfc", "erfinv", "ndtri", "log_ndtr", "gammaln", "i0", "i0e", "i1", "i1e"):
        function = getattr(jax.scipy.special, name)
        getattr(special, name).kernel("jax")(lambda ns, x, function=function: function(x))
    special.polygamma.kernel("jax")(
        lambda ns, x, n: _digamma(x) if n == 0 else special.polygamma_by_reflection(ns, x, n, _polygamma)
    )
    for name in ("erfcx", "zeta", "gammainc", "gammaincc"):
        function = getattr(jax.scipy.special, name)
        getattr(special, name).kernel("jax")(lambda ns, *args, function=function: function(*args))


def _digamma(x):
    """jax's digamma, with the pole at 0 as PyTorch and the portable kernel give it (jax: nan)."""
    at_zero = xp.where(xp.signbit(x), xp.inf, -xp.inf)
    return xp.where(x == 0, at_zero, jax.scipy.special.digamma(x))


def _polygamma(ns, x, n):
    """jax's polygamma for x > 0, 0 at inf as PyTorch and the portable kernel give it (jax:
    nan). Below about -7 jax's is wrong (psi_1: 13.817 where SciPy and PyTorch give 13.975), so
    the reflection formula gives x <= 0 from this."""
    return xp.where(x == xp.inf, 0.0, jax.scipy.special.polygamma(n, x))


_register_special_kernels()
