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

from autograd_core import primitives as P
from autograd_core.primitives import special
from autograd_core.primitives.convolution import pool_padding, scatter_to_maxima
from backends.contract import mask_stream
from backends.contract.backend import Backend


class NumpyBackend(Backend):
    name = "numpy"

    def asarray(self, host, dtype=None):
        return np.array(host, dtype=dtype, copy=True)

    def silent_errors(self):
        return np.errstate(all="ignore")

    def value_range(self, x):
        return int(x.min()), int(x.max())

    def owns_memory(self, x):
        return x.base is None and x.flags.writeable

    def random_bits(self, shape, key, counter):
        # mask_stream's hash in native uint32 arithmetic and in place: about 15 times faster
        # than its int64 form, and twice as fast as drawing from the host generator
        x = np.arange(math.prod(shape), dtype=np.uint32).reshape(shape)
        x ^= np.uint32(mask_stream.draw_word(np, key, counter))
        shifted = np.empty_like(x)
        for shift, multiplier in zip(mask_stream.SHIFTS, mask_stream.MULTIPLIERS):
            np.right_shift(x, shift, out=shifted)
            x ^= shifted
            if multiplier is not None:
                x *= np.uint32(multiplier)
        return x


# --- kernels ---------------------------------------------------------------------------------
@P.relu.kernel("numpy")
def _relu(ns, x):
    return np.maximum(x, 0.0)  # faster than np.clip


@P.relu_backward.kernel("numpy")
def _relu_backward(ns, grad, out):
    return grad * (out > 0)  # about 3x faster than np.where


# The fused cross-entropy in place on numpy's own methods: array-api-compat's wrappers and
# take_along_axis cost more than the arithmetic on a small batch.
@P.cross_entropy_rows.kernel("numpy")
def _cross_entropy_rows(ns, logits, target):
    shift = logits.max(axis=1, keepdims=True)
    exp = np.exp(logits - shift)
    lse = np.log(exp.sum(axis=1)) + shift[:, 0]
    return lse - logits[np.arange(len(target)), target]


@P.cross_entropy_backward.kernel("numpy")
def _cross_entropy_backward(ns, row_grad, logits, target, classes):
    grad = np.exp(logits - logits.max(axis=1, keepdims=True))
    grad /= grad.sum(axis=1, keepdims=True)
    grad[np.arange(len(target)), target] -= 1
    grad *= row_grad[..., None]
    return grad


@P.erf_kernel.kernel("numpy")
def _erf(ns, x):
    kernels = _elementwise.get(x.dtype.name)
    return P.erf_kernel.default(ns, x) if kernels is None else kernels.erf(x)


@P.gelu.kernel("numpy")
def _gelu(ns, x, approximate):
    kernels = _elementwise.get(x.dtype.name)
    return P.gelu.default(ns, x, approximate) if kernels is None or approximate != "none" else kernels.gelu(x)


@P.gelu_backward.kernel("numpy")
def _gelu_backward(ns, grad, x, approximate):
    kernels = _elementwise.get(x.dtype.name)
    if kernels is None or approximate != "none" or grad.dtype != x.dtype:
        return P.gelu_backward.default(ns, grad, x, approximate)
    return kernels.gelu_slope_times(grad, x, kernels.normal_cdf(x))


@P.index_add.kernel("numpy")
def _index_add(ns, values, shape, axis, index):
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


@P.adam_update.kernel("numpy")
def _adam_update(ns, param, grad, exp_avg, exp_avg_sq, *, step, lr, beta1, beta2, eps, weight_decay, decoupled):
    if _fused_adam is not None and _fusable(param, grad, exp_avg, exp_avg_sq):
        c = param.dtype.type  # constants in the arrays' dtype, as numpy's own scalar rules give
        _fused_adam(
            param,
            grad,
            exp_avg,
            exp_avg_sq,
            c(1 - lr * weight_decay if decoupled else 1),
            c(0 if decoupled else weight_decay),
            c(1 - beta1),
            c(beta2),
            c(1 - beta2),
            c(math.sqrt(1 - beta2**step)),
            c(eps),
            c(lr / (1 - beta1**step)),
        )
        return param, exp_avg, exp_avg_sq
    return adam_update_reference(
        param,
        grad,
        exp_avg,
        exp_avg_sq,
        step=step,
        lr=lr,
        beta1=beta1,
        beta2=beta2,
        eps=eps,
        weight_decay=weight_decay,
        decoupled=decoupled,
    )


def _float16_in_float32(kernel: Any) -> Any:
    """`kernel` (compiled by numba, which has no float16 arithmetic) run on float32 copies of
    its float16 arrays, its floating results cast back: float16 accumulates in float32, as
    PyTorch's kernels do."""

    def half(a: Any) -> bool:
        return isinstance(a, np.ndarray) and a.dtype == np.float16

    def run(ns: Any, *args: Any, **options: Any) -> Any:
        if not any(half(a) for a in args):
            return kernel(ns, *args, **options)
        out = kernel(ns, *(a.astype(np.float32) if half(a) else a for a in args), **options)
        results = out if isinstance(out, tuple) else (out,)
        back = tuple(r.astype(np.float16) if r.dtype == np.float32 else r for r in results)
        return back if isinstance(out, tuple) else back[0]

    return run


@P.im2col.kernel("numpy")
def _im2col(ns, x, kernel, stride, dilation, out_size):
    # every window as a strided view of `x`, copied once into (N, C, kh*kw, Ho, Wo)
    (kh, kw), (sh, sw), (dh, dw), (n, c), (ho, wo) = kernel, stride, dilation, x.shape[:2], out_size
    s_n, s_c, s_h, s_w = x.strides
    strides = (s_n, s_c, s_h * dh, s_w * dw, s_h * sh, s_w * sw)
    windows = np.lib.stride_tricks.as_strided(x, (n, c, kh, kw, ho, wo), strides, writeable=False)
    return windows.reshape(n, c, kh * kw, ho, wo)


@P.batch_norm.kernel("numpy")
@_float16_in_float32
def _batch_norm(ns, x, weight, bias, eps):
    if _channel_kernels is None or x.dtype.kind != "f":
        return P.batch_norm.default(ns, x, weight, bias, eps)
    rows = _channel_rows(x)
    mean, var = np.empty(x.shape[1], x.dtype), np.empty(x.shape[1], x.dtype)
    _channel_kernels.moments(rows, mean, var)
    scale = 1 / np.sqrt(var + eps)
    scale = scale if weight is None else scale * weight
    out = np.empty_like(rows)
    _channel_kernels.affine(rows, mean, scale, np.zeros_like(mean) if bias is None else bias, out)
    return out.reshape(x.shape), mean, var


@P.batch_norm_backward.kernel("numpy")
@_float16_in_float32
def _batch_norm_backward(ns, grad, x, weight, mean, var, eps, part):
    if _channel_kernels is None or x.dtype.kind != "f" or part == "bias":
        return P.batch_norm_backward.default(ns, grad, x, weight, mean, var, eps, part)
    rows, grad_rows = _channel_rows(x), _channel_rows(grad)
    sum_g, sum_g_centred = np.empty_like(mean), np.empty_like(mean)
    _channel_kernels.grad_sums(grad_rows, rows, mean, sum_g, sum_g_centred)
    inverse_std = 1 / np.sqrt(var + eps)
    if part == "weight":
        return sum_g_centred * inverse_std
    # the portable default's formula: (grad - mean(grad)) * scale - centred * slope
    count = grad_rows.shape[0] * grad_rows.shape[2]
    scale = inverse_std if weight is None else weight * inverse_std
    slope = scale * inverse_std * inverse_std * sum_g_centred / count
    out = np.empty_like(grad_rows)
    _channel_kernels.grad_input(grad_rows, rows, mean, sum_g / count, scale, slope, out)
    return out.reshape(x.shape)


@P.col2im.kernel("numpy")
@_float16_in_float32
def _col2im(ns, cols, shape, kernel, stride, dilation):
    if _window_kernels is None:
        return P.col2im.default(ns, cols, shape, kernel, stride, dilation)
    out = np.zeros(shape, dtype=cols.dtype)
    _window_kernels.col2im(np.ascontiguousarray(cols), *kernel, *stride, *dilation, out)
    return out


@P.pad2d.kernel("numpy")
def _pad2d(ns, x, padding, value):
    (top, bottom), (left, right) = padding
    if not (top or bottom or left or right):
        return x
    n, c, h, w = x.shape
    out = np.full((n, c, h + top + bottom, w + left + right), value, dtype=x.dtype)
    out[:, :, top : top + h, left : left + w] = x
    return out


@P.max_pool2d.kernel("numpy")
@_float16_in_float32
def _max_pool2d(ns, x, geometry):
    if _window_kernels is None or x.dtype.kind != "f":
        return P.max_pool2d.default(ns, x, geometry)
    kernel_size, stride, padding, dilation, _ = geometry
    out, _ = pool_padding(x.shape[2:], geometry)
    values = np.empty((*x.shape[:2], *out), dtype=x.dtype)
    indices = np.empty(values.shape, dtype=np.int64)
    _window_kernels.forward(np.ascontiguousarray(x), *kernel_size, *stride, *padding, *dilation, values, indices)
    return values, indices


@P.max_pool2d_backward.kernel("numpy")
@_float16_in_float32
def _max_pool2d_backward(ns, grad, indices, input_shape, geometry):
    if _window_kernels is None:
        return scatter_to_maxima(ns, grad, indices, input_shape, geometry)
    out = np.zeros(input_shape, dtype=grad.dtype)
    _window_kernels.backward(np.ascontiguousarray(grad), np.ascontiguousarray(indices), out)
    return out


@P.einsum.kernel("numpy")
def _einsum(ns, subscripts, *arrays):
    return np.einsum(subscripts, *arrays, optimize=True)


def adam_update_reference(param, grad, exp_avg, exp_avg_sq, *, step, lr, beta1, beta2, eps, weight_decay, decoupled):
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
    return (
        dtype in (np.float32, np.float64)
        and all(a.dtype == dtype and a.flags.c_contiguous and a.shape == arrays[0].shape for a in arrays)
        and all(a.flags.writeable for a in (arrays[0], arrays[2], arrays[3]))
    )


def _compile_fused_adam():
    """The same update in one pass over memory, compiled by numba when it is installed
    (``pip install -e ".[fast]"``); every operation in the reference's order and dtype, so
    the results are bit-identical to `adam_update_reference`."""
    try:
        import numba
    except ImportError:
        return None

    @numba.njit(cache=True, error_model="numpy")  # numpy's error model: no zero-division checks, so it vectorizes
    def fused(
        param, grad, exp_avg, exp_avg_sq, decay, l2, one_minus_beta1, beta2, one_minus_beta2, bias2_sqrt, eps, step_size
    ):
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
            gelu_slope_times=ufunc(3)(
                lambda g, x, cdf: g * (cdf + np.float64(x) * gaussian(np.float64(x)) * inverse_sqrt_2pi)
            ),
        )

    return {
        "float32": kernels("float32", erf_by_polynomial, gaussian_by_powers, fastmath=_FAST),
        "float64": kernels(
            "float64", numba.njit(inline="always")(lambda x: math.erf(x)), gaussian_by_exp, fastmath=False
        ),
    }


def _compile_window_kernels() -> Any:
    """Max pooling's forward and backward and convolution's col2im as numba loops, when numba
    is installed: one compiled pass instead of several numpy passes per kernel tap (on the
    MNIST CNN: pooling forward 2x, backward 2-3x, col2im about 8x faster). Pooling keeps the
    portable default's rule and PyTorch's: the first maximum of a window, or its first NaN,
    never a position in the padding; col2im adds the taps in the portable default's order, so
    its sums are bit-identical."""
    try:
        import numba
    except ImportError:
        return None

    @numba.njit(cache=True)
    def forward(x, kh, kw, sh, sw, ph, pw, dh, dw, values, indices):
        h, w = x.shape[2:]
        ho, wo = values.shape[2:]
        for a in range(x.shape[0]):
            for b in range(x.shape[1]):
                plane, best, at = x[a, b], values[a, b], indices[a, b]
                best[:] = -np.inf
                at[:] = -1
                for di in range(kh):  # tap by tap, over the outputs whose window has the tap inside
                    i0, i1 = max(0, -((di * dh - ph) // sh)), min(ho, (h - 1 - di * dh + ph) // sh + 1)
                    for dj in range(kw):
                        j0, j1 = max(0, -((dj * dw - pw) // sw)), min(wo, (w - 1 - dj * dw + pw) // sw + 1)
                        for i in range(i0, i1):
                            r = i * sh - ph + di * dh
                            row, best_row, at_row = plane[r], best[i], at[i]
                            for j in range(j0, j1):
                                col = j * sw - pw + dj * dw
                                v, m, k = row[col], best_row[j], at_row[j]
                                take = (v > m) | ((v != v) & (m == m)) | (k < 0)  # branch-free: it vectorizes
                                best_row[j] = v if take else m
                                at_row[j] = r * w + col if take else k

    @numba.njit(cache=True)
    def backward(grad, indices, out):
        n, c, ho, wo = grad.shape
        w = out.shape[3]
        for a in range(n):
            for b in range(c):
                for i in range(ho):
                    for j in range(wo):
                        at = indices[a, b, i, j]
                        out[a, b, at // w, at % w] += grad[a, b, i, j]

    @numba.njit(cache=True)
    def col2im(cols, kh, kw, sh, sw, dh, dw, out):
        ho, wo = cols.shape[3:]
        for a in range(cols.shape[0]):
            for b in range(cols.shape[1]):
                for di in range(kh):
                    for dj in range(kw):
                        tap = cols[a, b, di * kw + dj]
                        for i in range(ho):
                            row = out[a, b, i * sh + di * dh]
                            for j in range(wo):
                                row[j * sw + dj * dw] += tap[i, j]

    return SimpleNamespace(forward=forward, backward=backward, col2im=col2im)


_window_kernels = _compile_window_kernels()


def _channel_rows(x: np.ndarray) -> np.ndarray:
    """(N, C, ...) as a C-contiguous (N, C, L)."""
    return np.ascontiguousarray(x).reshape(*x.shape[:2], -1)


def _compile_channel_kernels() -> Any:
    """Batch norm's per-channel passes as numba loops, when numba is installed: the moments
    in two passes and the output in one (the portable default makes about six), the backward's
    two channel sums in one pass. Sums accumulate in float64 (vectorized, in an order of the
    compiler's), so float32 statistics are as exact as float64 rounding of float32 data allows."""
    try:
        import numba
    except ImportError:
        return None
    compiled = numba.njit(cache=True, fastmath={"reassoc", "contract"})  # reassociation lets the sums vectorize

    @compiled
    def moments(rows, mean, var):
        n, c, length = rows.shape
        for ch in range(c):
            total = 0.0
            for a in range(n):
                for i in range(length):
                    total += rows[a, ch, i]
            mu = total / (n * length)
            squares = 0.0
            for a in range(n):
                for i in range(length):
                    d = rows[a, ch, i] - mu
                    squares += d * d
            mean[ch], var[ch] = mu, squares / (n * length)

    @compiled
    def affine(rows, mean, scale, shift, out):  # (x - mean) * scale + shift, per channel
        for a in range(rows.shape[0]):
            for ch in range(rows.shape[1]):
                mu, k, b = mean[ch], scale[ch], shift[ch]
                for i in range(rows.shape[2]):
                    out[a, ch, i] = (rows[a, ch, i] - mu) * k + b

    @compiled
    def grad_sums(grad, rows, mean, sum_g, sum_g_centred):
        n, c, length = rows.shape
        for ch in range(c):
            mu, s, sc = mean[ch], 0.0, 0.0
            for a in range(n):
                for i in range(length):
                    g = grad[a, ch, i]
                    s += g
                    sc += g * (rows[a, ch, i] - mu)
            sum_g[ch], sum_g_centred[ch] = s, sc

    @compiled
    def grad_input(grad, rows, mean, mean_g, scale, slope, out):
        for a in range(rows.shape[0]):
            for ch in range(rows.shape[1]):
                mu, mg, k, m = mean[ch], mean_g[ch], scale[ch], slope[ch]
                for i in range(rows.shape[2]):
                    out[a, ch, i] = (grad[a, ch, i] - mg) * k - (rows[a, ch, i] - mu) * m

    return SimpleNamespace(moments=moments, affine=affine, grad_sums=grad_sums, grad_input=grad_input)


_channel_kernels = _compile_channel_kernels()

# The float32 kernels may fuse multiply-adds and use reciprocals, but keep NaN, infinities and
# the sign of zero (gelu(-1e4) is -0.0, as in PyTorch).
_FAST = {"contract", "arcp", "afn", "reassoc"}
_elementwise = _compile_elementwise()


def _keep_heap_padding() -> None:
    """Keep AUTOGRAD_NUMPY_TOP_PAD MiB free at the top of glibc's heap (``mallopt(M_TOP_PAD)``)
    where that is set; unset or empty, the allocator is left alone, as the setting is the whole
    process's, not this backend's. A training step allocates and frees the same large
    temporaries every time; with glibc's default the heap's top goes back to the system after
    each step and its pages fault in again on the next, which cost 20-30 ms of an 80 ms GPT
    step here with 64 (`python -m bench --workloads gpt --numpy-top-pad 64`). Elsewhere (macOS,
    musl) nothing changes."""
    text = os.environ.get("AUTOGRAD_NUMPY_TOP_PAD", "").strip()
    if not text:
        return
    if not (text.isdecimal() and int(text) < 2048):  # mallopt takes a C int of bytes
        raise ValueError(
            f"AUTOGRAD_NUMPY_TOP_PAD={text!r} is not accepted: use a number of MiB from 0 to 2047, or unset it"
        )
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc
        return
    libc.mallopt(_M_TOP_PAD, int(text) << 20)


_M_TOP_PAD = -2  # from glibc's malloc.h


def create(device: str | None = None) -> Backend:
    if device not in (None, "cpu"):
        raise ValueError(f"the numpy backend runs on the CPU only, not on device {device!r}")
    _keep_heap_padding()
    return NumpyBackend(np, np.ndarray, "cpu")


# --- special functions: scipy.special's where SciPy is installed, else the portable ones -------
def _register_special_kernels() -> None:
    """SciPy is found here but imported at the first call: importing it reads SCIPY_ARRAY_API,
    which a program may set after importing this backend."""
    import importlib.util

    if importlib.util.find_spec("scipy") is None:
        return
    for name in ("erfc", "erfinv", "ndtri", "log_ndtr", "gammaln", "i0", "i0e", "i1", "i1e"):
        getattr(special, name).kernel("numpy")(lambda ns, x, name=name: _scipy_special(name, x))
    special.polygamma.kernel("numpy")(
        lambda ns, x, n: _scipy_special("psi", x) if n == 0 else _scipy_special("polygamma", n, x)
    )
    for name in ("erfcx", "zeta", "gammainc", "gammaincc", "j0", "j1", "y0", "y1", "k0", "k1", "k0e", "k1e"):
        getattr(special, name).kernel("numpy")(lambda ns, *args, name=name: _scipy_special(name, *args))
    special.airy_ai.kernel("numpy")(lambda ns, x: _scipy_special("airy", x)[0])


def _scipy_special(name: str, *args: Any) -> np.ndarray:
    """scipy.special's `name` of `args`, in the dtype of the last (scipy computes some float32 inputs in float64)."""
    import scipy.special

    return np.asarray(getattr(scipy.special, name)(*args)).astype(args[-1].dtype, copy=False)


_register_special_kernels()
