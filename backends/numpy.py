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

    def silent_errors(self):
        return np.errstate(all="ignore")

    def relu(self, x):
        return np.maximum(x, 0.0)  # faster than np.clip

    def relu_backward(self, grad, out):
        return grad * (out > 0)  # about 3x faster than np.where

    def owns_memory(self, x):
        return x.base is None and x.flags.writeable

    def erf(self, x):
        if _kernels is not None and x.dtype in (np.float32, np.float64):
            return _kernels.erf(x)
        return super().erf(x)

    def gelu(self, x, approximate):
        if _kernels is not None and approximate == "none" and x.dtype in (np.float32, np.float64):
            return _kernels.gelu(x)
        return super().gelu(x, approximate)

    def gelu_backward(self, grad, x, approximate):
        if _kernels is not None and approximate == "none" and grad.dtype == x.dtype in (np.float32, np.float64):
            return _kernels.gelu_backward(grad, x)
        return super().gelu_backward(grad, x, approximate)

    def index_add(self, shape, axis, index, values):
        if len(shape) == 1 and values.dtype.kind == "f":  # one pass of bincount (summing in float64)
            index = np.where(index < 0, index + shape[0], index) if len(index) and index.min() < 0 else index
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


def _compile_elementwise():
    """erf and GELU as numba ufuncs when numba is installed: one pass over memory each, where
    the portable formulas make several (the series for erf, hundreds)."""
    try:
        import numba
    except ImportError:
        return None
    from types import SimpleNamespace

    def ufunc(arity: int):
        signatures = [f"{t}({', '.join([t] * arity)})" for t in ("float32", "float64")]
        return numba.vectorize(signatures, cache=True)

    inverse_sqrt2, inverse_sqrt_2pi = math.sqrt(0.5), 1 / math.sqrt(2 * math.pi)
    return SimpleNamespace(
        erf=ufunc(1)(lambda x: math.erf(x)),
        gelu=ufunc(1)(lambda x: 0.5 * x * (1 + math.erf(x * inverse_sqrt2))),
        gelu_backward=ufunc(2)(lambda g, x: g * (0.5 * (1 + math.erf(x * inverse_sqrt2))
                                                  + x * math.exp(-0.5 * x * x) * inverse_sqrt_2pi)),
    )


_kernels = _compile_elementwise()


def create(device: str | None = None) -> Backend:
    if device not in (None, "cpu"):
        raise ValueError(f"the numpy backend runs on the CPU only, not on device {device!r}")
    return NumpyBackend(np, np.ndarray, "cpu")
