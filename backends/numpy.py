"""numpy: the reference backend and the embedded default.

numpy >= 2 is itself an array-API namespace, so it is used directly rather than through
array-api-compat's wrappers, which would add a Python call to every operation.
"""

from __future__ import annotations

import ctypes
import math
import os
import sys
from types import SimpleNamespace
from typing import Any

import numpy as np

from backends.base import Backend


class NumpyBackend(Backend):
    name = "numpy"

    def asarray(self, host, dtype=None):
        return np.array(host, dtype=dtype, copy=True)

    def silent_errors(self):
        return np.errstate(all="ignore")

    def relu(self, x):
        return np.maximum(x, 0.0)  # faster than np.clip

    def relu_backward(self, grad, out):
        return grad * (out > 0)  # about 3x faster than np.where

    def owns_memory(self, x):
        return x.base is None and x.flags.writeable

    def erf(self, x):
        kernels = _elementwise.get(x.dtype.name)
        return super().erf(x) if kernels is None else kernels.erf(x)

    def gelu(self, x, approximate):
        kernels = _elementwise.get(x.dtype.name)
        return super().gelu(x, approximate) if kernels is None or approximate != "none" else kernels.gelu(x)

    def gelu_backward(self, grad, x, approximate):
        kernels = _elementwise.get(x.dtype.name)
        if kernels is None or approximate != "none" or grad.dtype != x.dtype:
            return super().gelu_backward(grad, x, approximate)
        return kernels.gelu_slope_times(grad, x, kernels.normal_cdf(x))

    def index_add(self, shape, axis, index, values):
        if len(index) and index.min() < 0:  # -1 and n-1 are one row: count them as one
            index = np.where(index < 0, index + shape[axis], index)
        if len(shape) == 1 and values.dtype.kind == "f":  # one pass of bincount (summing in float64)
            return np.bincount(index, weights=values, minlength=shape[0]).astype(values.dtype, copy=False)
        # Sort the rows by index and sum each run of equal indices with reduceat: several
        # times faster than np.add.at, which loops element by element.
        moved = (shape[axis], *shape[:axis], *shape[axis + 1 :])
        out = np.zeros((shape[axis], math.prod(moved[1:])), dtype=values.dtype)
        if len(index):
            rows = np.moveaxis(values, axis, 0).reshape(len(index), -1)
            order = np.argsort(index, kind="stable")
            ordered = index[order]
            starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
            out[ordered[starts]] = np.add.reduceat(rows[order], starts, axis=0)
        return np.moveaxis(out.reshape(moved), 0, axis)

    def adam_update(self, param, grad, exp_avg, exp_avg_sq, *, step, lr, beta1, beta2, eps,
                    weight_decay, decoupled):
        if _fused_adam is not None and _fusable(param, grad, exp_avg, exp_avg_sq):
            c = param.dtype.type  # constants in the arrays' dtype, as numpy's own scalar rules give
            _fused_adam(param, grad, exp_avg, exp_avg_sq, c(1 - lr * weight_decay if decoupled else 1),
                        c(0 if decoupled else weight_decay), c(1 - beta1), c(beta2), c(1 - beta2),
                        c(math.sqrt(1 - beta2**step)), c(eps), c(lr / (1 - beta1**step)))
            return param, exp_avg, exp_avg_sq
        return adam_update_reference(param, grad, exp_avg, exp_avg_sq, step=step, lr=lr, beta1=beta1,
                                     beta2=beta2, eps=eps, weight_decay=weight_decay, decoupled=decoupled)

    def im2col(self, x, kernel, stride, dilation, out_size):
        # every window as a strided view of `x`, copied once into (N, C, kh*kw, Ho, Wo)
        (kh, kw), (sh, sw), (dh, dw), (n, c), (ho, wo) = kernel, stride, dilation, x.shape[:2], out_size
        s_n, s_c, s_h, s_w = x.strides
        strides = (s_n, s_c, s_h * dh, s_w * dw, s_h * sh, s_w * sw)
        windows = np.lib.stride_tricks.as_strided(x, (n, c, kh, kw, ho, wo), strides, writeable=False)
        return windows.reshape(n, c, kh * kw, ho, wo)

    def pad2d(self, x, padding, value):
        (top, bottom), (left, right) = padding
        if not (top or bottom or left or right):
            return x
        n, c, h, w = x.shape
        out = np.full((n, c, h + top + bottom, w + left + right), value, dtype=x.dtype)
        out[:, :, top : top + h, left : left + w] = x
        return out

    def max_pool2d_backward(self, grad, indices, input_shape, **geometry):
        return self._scatter_to_maxima(grad, indices, input_shape)

    # --- linear algebra kernels
    def einsum(self, subscripts, *arrays):
        return np.einsum(subscripts, *arrays, optimize=True)


def adam_update_reference(param, grad, exp_avg, exp_avg_sq, *, step, lr, beta1, beta2, eps, weight_decay,
                          decoupled):
    """In place with one scratch buffer: the portable default's arithmetic in its order, about
    twelve passes over memory."""
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


def _fusable(*arrays: np.ndarray) -> bool:
    dtype = arrays[0].dtype
    return dtype in (np.float32, np.float64) and all(
        a.dtype == dtype and a.flags.c_contiguous and a.shape == arrays[0].shape for a in arrays
    ) and all(a.flags.writeable for a in (arrays[0], arrays[2], arrays[3]))


def _compile_fused_adam():
    """The same update in one pass over memory, compiled by numba when it is installed
    (``pip install -e ".[fast]"``); every operation in the reference's order and dtype, so
    the results are bit-identical to `adam_update_reference`."""
    try:
        import numba
    except ImportError:
        return None

    @numba.njit(cache=True, error_model="numpy")  # numpy's error model: no zero-division checks, so it vectorizes
    def fused(param, grad, exp_avg, exp_avg_sq, decay, l2, one_minus_beta1, beta2, one_minus_beta2, bias2_sqrt,
              eps, step_size):
        p, g, m, v = param.reshape(-1), grad.reshape(-1), exp_avg.reshape(-1), exp_avg_sq.reshape(-1)
        for i in range(p.size):
            pi = p[i] * decay
            gi = g[i] + l2 * pi
            mi = m[i] + (gi - m[i]) * one_minus_beta1
            vi = v[i] * beta2 + gi * gi * one_minus_beta2
            m[i], v[i] = mi, vi
            p[i] = pi - mi / (math.sqrt(vi) / bias2_sqrt + eps) * step_size

    return fused


_fused_adam = _compile_fused_adam()


def _compile_elementwise() -> dict[str, Any]:
    """erf and GELU as numba ufuncs, by dtype name, when numba is installed (else none).

    float64 calls libm's erf and exp (exact to rounding). float32 computes in float64 with
    arithmetic alone, which the compiler vectorizes (about 5x faster than libm's erf): erf(x)
    = x P(x^2) for |x| < 4 with P the degree-18 Chebyshev interpolant of erf(x)/x (within 4e-10
    of erf, far below float32's rounding), and +-1 beyond (erfc(4) = 1.5e-8); exp(-x^2/2) as the
    64th power of a 10-term Taylor series of exp(-x^2/128) (relative error 1e-8).
    GELU's backward is two passes, Phi(x) and then g (Phi(x) + x phi(x)): fused into one,
    the compiler stops vectorizing it.
    """
    try:
        import numba
    except ImportError:
        return {}
    from numpy.polynomial import chebyshev

    def erf_over_x(t: np.ndarray) -> np.ndarray:  # erf(x)/x at x = sqrt(8 (t + 1)), t in [-1, 1]
        x = np.sqrt(8 * (t + 1))
        return np.array([math.erf(v) / v if v > 0 else 2 / math.sqrt(math.pi) for v in x])

    coefficients = tuple(float(c) for c in chebyshev.chebinterpolate(erf_over_x, 18))
    terms = len(coefficients)
    inline = numba.njit(inline="always", fastmath=_FAST)

    @inline
    def erf_by_polynomial(x):
        a = min(abs(x), 4.0)  # (NaN stays NaN)
        t = a * a * 0.125 - 1.0
        b1 = b2 = 0.0
        for k in range(terms - 1, 0, -1):  # Clenshaw's recurrence
            b1, b2 = 2.0 * t * b1 - b2 + coefficients[k], b1
        return math.copysign(1.0 if a >= 4.0 else a * (t * b1 - b2 + coefficients[0]), x)

    @inline
    def gaussian_by_powers(x):  # exp(-x^2 / 2); 0 where that is below 4e-18
        z = -min(x * x * 0.5, 40.0) / 64.0
        p = 1.0
        for k in range(10, 0, -1):
            p = 1.0 + z * p / k
        for _ in range(6):
            p = p * p
        return 0.0 if x * x > 80.0 else p

    @numba.njit(inline="always")
    def gaussian_by_exp(x):
        return math.exp(-0.5 * x * x)

    def kernels(dtype: str, erf: Any, gaussian: Any, fastmath: bool) -> Any:
        def ufunc(arity: int) -> Any:
            return numba.vectorize([f"{dtype}({', '.join([dtype] * arity)})"], fastmath=fastmath)

        half_sqrt2, inverse_sqrt_2pi = math.sqrt(0.5), 1 / math.sqrt(2 * math.pi)
        return SimpleNamespace(
            erf=ufunc(1)(lambda x: erf(np.float64(x))),
            gelu=ufunc(1)(lambda x: 0.5 * x * (1.0 + erf(np.float64(x) * half_sqrt2))),
            normal_cdf=ufunc(1)(lambda x: 0.5 * (1.0 + erf(np.float64(x) * half_sqrt2))),
            gelu_slope_times=ufunc(3)(lambda g, x, cdf: g * (cdf + np.float64(x) * gaussian(np.float64(x))
                                                             * inverse_sqrt_2pi)),
        )

    return {"float32": kernels("float32", erf_by_polynomial, gaussian_by_powers, fastmath=_FAST),
            "float64": kernels("float64", numba.njit(inline="always")(lambda x: math.erf(x)), gaussian_by_exp,
                               fastmath=False)}


# The float32 kernels may fuse multiply-adds and use reciprocals, but keep NaN, infinities and
# the sign of zero (gelu(-1e4) is -0.0, as in PyTorch).
_FAST = {"contract", "arcp", "afn", "reassoc"}
_elementwise = _compile_elementwise()


def _keep_heap_padding() -> None:
    """Ask glibc to keep 64 MiB free at the top of the heap (``mallopt(M_TOP_PAD)``) unless the
    user chose a padding (``MALLOC_TOP_PAD_``). A training step allocates and frees the same
    large temporaries every time; with glibc's default the heap's top goes back to the system
    after each step and its pages fault in again on the next, which cost 20-30 ms of an 80 ms
    GPT step here (`python -m bench --workloads gpt`). Elsewhere (macOS, musl) nothing changes."""
    if os.environ.get("MALLOC_TOP_PAD_") is not None or not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc
        return
    libc.mallopt(_M_TOP_PAD, 64 << 20)


_M_TOP_PAD = -2  # from glibc's malloc.h


def create(device: str | None = None) -> Backend:
    if device not in (None, "cpu"):
        raise ValueError(f"the numpy backend runs on the CPU only, not on device {device!r}")
    _keep_heap_padding()
    return NumpyBackend(np, np.ndarray, "cpu")
