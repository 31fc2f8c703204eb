"""The Backend contract: what the engine needs from an array library beyond the standard.

Every method here has a portable default written against the array API standard alone
(`self.xp`), so a new library works as soon as it has a namespace; `backends/<lib>.py`
overrides only what that library does faster or differently.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

# One seeded host generator for the whole process: random numbers are drawn here in
# float64 and moved to the backend, so one seed gives the same weights on every backend.
_host_rng = np.random.default_rng(0)

Padding2d = tuple[tuple[int, int], tuple[int, int]]  # ((top, bottom), (left, right))

DTYPE_NAMES = (
    "float32",
    "float64",
    "float16",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "complex64",
    "complex128",
    "bool",
)


def manual_seed(seed: int) -> None:
    """Reseed the host generator that every backend draws its random numbers from."""
    global _host_rng
    _host_rng = np.random.default_rng(seed)


def host_rng() -> np.random.Generator:
    return _host_rng


class Backend:
    """One array library on one device, as the engine sees it.

    Attributes read by the core, tests and docs:
        name: registry name (``"numpy"``, ``"torch"``...).
        xp: the array-API namespace of the library.
        device: the device arrays are created on (``None`` for the library's default).
        mutable: whether arrays may be updated in place (jax: no).
        lazy: whether arrays are task graphs computed on demand (dask); optimizers then call
            `persist` on the new parameters and state after every step.
        supports_float64: whether float64 arrays work.
        device_kinds: the kinds of device the library can target.
        can_compile: whether `jit` can trace a whole step into one compiled function.
    """

    name: str = "base"
    mutable: bool = True
    lazy: bool = False  # arrays are task graphs computed on demand (dask): `persist` after each step
    supports_float64: bool = True
    device_kinds: tuple[str, ...] = ("cpu",)
    can_compile: bool = False

    def __init__(self, xp: Any, array_type: type, device: Any = None) -> None:
        self.xp = xp
        self.array_type = array_type
        self.device = device
        self._dtypes: tuple[dict[str, Any], dict[Any, str]] | None = None

    def __repr__(self) -> str:
        device = "" if self.device is None else f", device={self.device!r}"
        return f"Backend({self.name!r}{device})"

    # --- host transfer -------------------------------------------------------------
    def asarray(self, host: np.ndarray, dtype: Any = None) -> Any:
        """A backend array holding a copy of the numpy array `host`, cast to `dtype`."""
        return self.xp.asarray(host, dtype=dtype, device=self.device)

    def to_numpy(self, x: Any) -> np.ndarray:
        return np.asarray(x)

    def format(self, x: Any, prefix: str = "") -> str:
        """The values of `x` as text, aligned to follow `prefix`."""
        return np.array2string(self.to_numpy(x), separator=", ", prefix=prefix)

    @staticmethod
    def host_array(data: Any) -> np.ndarray:
        """`data` (Python values, or an array of any library) as a numpy array."""
        try:
            return np.asarray(data)
        except (TypeError, RuntimeError):
            return np.from_dlpack(data)

    def dlpack_exporter(self, x: Any) -> Any:
        """The array whose ``__dlpack__`` shares `x`'s values: `x` itself; libraries whose
        arrays hold no memory until computed (dask) override this and `dlpack_device`."""
        return x

    def dlpack_device(self, x: Any) -> tuple[int, int]:
        """Where `x`'s values are, as DLPack names devices: ``(device type, index)``."""
        return x.__dlpack_device__()

    def synchronize(self, *arrays: Any) -> None:
        """Wait for queued work (on `arrays`, or all) to finish; asynchronous libraries override this."""

    def persist(self, arrays: list) -> list:
        """`arrays` with their values computed and kept, called with the parameters and optimizer
        state at the end of every optimizer step: lazy libraries (dask) materialise them so the
        next step's graph starts from them instead of growing. Eager libraries return `arrays`."""
        return arrays

    def map_batch_chunks(
        self,
        func: Callable[..., tuple],
        arrays: Sequence[Any],
        batch_axes: Sequence[int | None],
        out_batch_axes: Sequence[int | None],
    ) -> tuple:
        """``func(backend, *arrays)``, a function whose batch rows are independent, on each
        chunk of the batch axis: ``batch_axes[k]`` is array k's (None: the array goes whole to
        every call, as a weight does; None entries of `arrays` pass as None), `func` returns a
        tuple whose output k has its batch axis at ``out_batch_axes[k]`` (None: a sum over the
        batch, added up over the chunks). ``backend`` is the one whose arrays the chunks are.
        Eager libraries have one chunk: ``func(self, *arrays)``; chunked ones (dask) run one
        task per chunk, so a loop over time steps is not one task per step and chunk."""
        return func(self, *arrays)

    def describe(self) -> str:
        """Where this backend computes, in words, for ``python -m backends`` ("" when the device says it all)."""
        return ""

    def silent_errors(self) -> contextlib.AbstractContextManager:
        """A context in which floating-point errors (division by zero, overflow, invalid
        operations) give inf and nan without a warning, as most libraries always do; the engine
        runs backward in it, so rules the user never wrote do not warn (anomaly mode reports
        non-finite gradients instead). Libraries that warn override this."""
        return contextlib.nullcontext()

    def owns_memory(self, x: Any) -> bool:
        """Whether `x` is certainly not a view: no other array can see its memory. The engine
        then keeps a gradient without copying it; the default (False) always copies."""
        return False

    def is_native(self, x: Any) -> bool:
        """Whether `x` is an array of this backend's library."""
        return isinstance(x, self.array_type)

    # --- dtypes ------------------------------------------------------------------------
    def dtype(self, name: str) -> Any:
        """The library's dtype called `name` in the standard (``"float32"``...)."""
        try:
            return self._dtype_tables()[0][name]
        except KeyError:
            raise TypeError(f"dtype {name!r} is not supported by the {self.name} backend") from None

    def dtype_name(self, dtype: Any) -> str:
        """The standard's name of the library dtype `dtype` (as arrays carry it, or as the
        namespace spells it: numpy's ``np.float32`` type and ``np.dtype("float32")`` alike)."""
        names = self._dtype_tables()[1]
        if dtype in names:
            return names[dtype]
        try:
            return names[self.xp.empty((0,), dtype=dtype).dtype]
        except (KeyError, TypeError):
            raise TypeError(f"dtype {dtype!r} is not supported by the {self.name} backend") from None

    def _dtype_tables(self) -> tuple[dict[str, Any], dict[Any, str]]:
        """name -> dtype and dtype -> name, keyed by the dtype objects arrays really carry."""
        if self._dtypes is None:
            by_name = {
                n: self.xp.empty((0,), dtype=getattr(self.xp, n)).dtype for n in DTYPE_NAMES if hasattr(self.xp, n)
            }
            self._dtypes = (by_name, {d: n for n, d in by_name.items()})
        return self._dtypes

    # --- random numbers (drawn on the host, see `host_rng`) -----------------------------
    def randn(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self.asarray(_host_rng.standard_normal(shape).astype(self.to_host_dtype(dtype)), dtype)

    def uniform(self, shape: tuple[int, ...], low: float, high: float, dtype: Any) -> Any:
        draw = _host_rng.uniform(low, high, shape).astype(self.to_host_dtype(dtype))
        return self.asarray(draw, dtype)

    def bernoulli(self, shape: tuple[int, ...], p: float) -> Any:
        """A bool array, True with probability `p`."""
        return self.asarray(_host_rng.random(shape) < p, self.xp.bool)

    def to_host_dtype(self, dtype: Any) -> np.dtype:
        return np.dtype(self.dtype_name(dtype))

    # --- kernels the standard lacks --------------------------------------------------------
    def value_range(self, x: Any) -> tuple[int, int]:
        """The smallest and the largest value of the non-empty integer array `x`, as ints
        (the bounds checks of indices and class targets)."""
        return int(self.xp.min(x)), int(self.xp.max(x))

    def take_rows(self, x: Any, index: Any, axis: int) -> Any:
        """`take` along `axis` of a 1-D `index` whose values are already known to lie in [0, n):
        no wrapping of negative ones."""
        return self.xp.take(x, index, axis=axis)

    def index_add(self, shape: tuple[int, ...], axis: int, index: Any, values: Any) -> Any:
        """Zeros of `shape` with `values` added at `index` along `axis`, summing repeats.

        `index` is 1-D; `values` has `shape` with `shape[axis]` replaced by `len(index)`.
        The portable default builds a one-hot matrix and multiplies: O(n * len(index)),
        but right with repeated indices on any conforming library.
        """
        xp = self.xp
        pre, post = math.prod(shape[:axis]), math.prod(shape[axis + 1 :])
        positions = xp.arange(shape[axis], dtype=index.dtype, device=self.device)
        one_hot = xp.astype(positions[:, None] == index[None, :], values.dtype)
        flat = xp.reshape(values, (pre, index.shape[0], post))
        return xp.reshape(one_hot @ flat, shape)

    def jit(self, fn: Any) -> Any:
        """`fn` (a pure function of arrays) compiled by the library's tracing compiler, for
        backends with ``can_compile``; `autograd_core.compile` builds on it."""
        raise NotImplementedError(f"the {self.name} backend has no tracing compiler")

    def is_traced(self, x: Any) -> bool:
        """Whether `x` is a placeholder inside a trace (its values unknown until run)."""
        return False

    def getitem(self, x: Any, key: tuple) -> Any:
        """``x[key]`` for a basic (int, slice, None, Ellipsis) index; a library whose indexing
        falls short of the standard's (torch: no negative steps) overrides this and `scatter`."""
        return x[key]

    def scatter(self, shape: tuple[int, ...], key: tuple, values: Any) -> Any:
        """Zeros of `shape` with `values` written at the basic (slice/int) index `key`."""
        out = self.xp.zeros(shape, dtype=values.dtype, device=self.device)
        if any(k is None for k in key):  # the standard's setitem takes no new axes: drop them (size 1)
            key = tuple(k for k in key if k is not None)
            values = self.xp.reshape(values, out[key].shape)
        out[key] = values
        return out

    def linear(self, x: Any, weight: Any, bias: Any) -> Any:
        """``x @ weight.T + bias`` (`bias` may be None), the leading axes of `x` folded into the
        rows of one matrix product (a stacked matmul would run one per leading index)."""
        out = rows_times(self.xp, x, weight.mT)
        return out if bias is None else out + bias

    def relu(self, x: Any) -> Any:
        """max(x, 0) elementwise (libraries with a dedicated kernel override this)."""
        return self.xp.clip(x, min=0.0)

    def relu_backward(self, grad: Any, out: Any) -> Any:
        """`grad` where relu's output `out` is positive, else 0."""
        return self.xp.where(out > 0, grad, 0.0)

    def tanh_backward(self, grad: Any, out: Any) -> Any:
        """`grad` times tanh's derivative, from its output `out`: ``grad * (1 - out**2)``."""
        return grad * (1 - out * out)

    def gelu(self, x: Any, approximate: str) -> Any:
        """GELU, ``x * Phi(x)`` ("none") or its tanh approximation ("tanh"), as PyTorch's."""
        return gelu_value(self.xp, self.erf, x, approximate)

    def gelu_backward(self, grad: Any, x: Any, approximate: str) -> Any:
        """`grad` times GELU's derivative at `x`."""
        return grad * gelu_slope(self.xp, self.erf, x, approximate)

    def layer_norm(
        self, x: Any, normalized_shape: tuple[int, ...], weight: Any, bias: Any, eps: float
    ) -> tuple[Any, tuple[Any, Any]]:
        """`x` normalised over its trailing `normalized_shape` axes (biased variance), then
        scaled by `weight` and shifted by `bias` where they are given; and the statistics
        `layer_norm_backward` reuses: the mean and 1/std, of x's shape with those axes of size 1."""
        xp = self.xp
        axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
        mean = xp.mean(x, axis=axes, keepdims=True)
        centred = x - mean
        inverse_std = 1 / xp.sqrt(xp.mean(centred * centred, axis=axes, keepdims=True) + eps)
        out = centred * inverse_std
        out = out if weight is None else out * weight
        return (out if bias is None else out + bias), (mean, inverse_std)

    def layer_norm_backward(
        self, grad: Any, x: Any, normalized_shape: tuple[int, ...], weight: Any, stats: tuple[Any, Any], part: str
    ) -> Any:
        """The gradient of `layer_norm`'s `part` from the forward's `stats`: "input", or
        "weight" (of the input's shape: the engine sums it over the leading axes; a library may
        return it summed)."""
        xp, (mean, inverse_std) = self.xp, stats
        axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
        normal = (x - mean) * inverse_std
        if part == "weight":
            return grad * normal
        g = grad if weight is None else grad * weight
        return inverse_std * (
            g - xp.mean(g, axis=axes, keepdims=True) - normal * xp.mean(g * normal, axis=axes, keepdims=True)
        )

    def batch_norm(self, x: Any, weight: Any, bias: Any, eps: float) -> tuple[Any, Any, Any]:
        """`x` (N, C, ...) normalised per channel by its batch statistics, scaled by `weight`
        and shifted by `bias` where given; and the channels' mean and biased variance (C,)."""
        xp, axes, channel = self.xp, (0, *range(2, x.ndim)), (-1,) + (1,) * (x.ndim - 2)
        mean = xp.mean(x, axis=axes, keepdims=True)
        centred = x - mean
        var = xp.mean(centred * centred, axis=axes, keepdims=True)
        scale = 1 / xp.sqrt(var + eps)  # per channel, so the full-size array is passed over once
        out = centred * (scale if weight is None else scale * xp.reshape(weight, channel))
        out = out if bias is None else out + xp.reshape(bias, channel)
        return out, xp.reshape(mean, (-1,)), xp.reshape(var, (-1,))

    def batch_norm_backward(self, grad: Any, x: Any, weight: Any, mean: Any, var: Any, eps: float, part: str) -> Any:
        """The gradient of `batch_norm`'s `part` ("input", "weight" or "bias") from the
        output's gradient and the forward's batch `mean` and `var` (C,)."""
        xp, axes, channel = self.xp, (0, *range(2, x.ndim)), (-1,) + (1,) * (x.ndim - 2)
        if part == "bias":
            return xp.sum(grad, axis=axes)
        inverse_std = 1 / xp.sqrt(var + eps)
        centred = x - xp.reshape(mean, channel)
        g_centred = xp.sum(grad * centred, axis=axes)
        if part == "weight":
            return g_centred * inverse_std
        # With s = weight / std: grad * s - mean(grad) * s - centred * s * mean(grad * centred) / var,
        # per-channel factors computed first so the full-size arrays are passed over few times.
        scale = inverse_std if weight is None else weight * inverse_std
        slope = xp.reshape(scale * inverse_std * inverse_std * g_centred / (math.prod(x.shape) // x.shape[1]), channel)
        return (grad - xp.mean(grad, axis=axes, keepdims=True)) * xp.reshape(scale, channel) - centred * slope

    def cross_entropy_rows(self, logits: Any, target: Any) -> Any:
        """Per-row softmax cross-entropy of `logits` (n, C) against class indices `target` (n,),
        stable for logits of any size: log-sum-exp minus the target's logit."""
        xp = self.xp
        shift = xp.max(logits, axis=1, keepdims=True)
        lse = xp.log(xp.sum(xp.exp(logits - shift), axis=1, keepdims=True)) + shift
        return xp.reshape(lse - xp.take_along_axis(logits, xp.expand_dims(target, axis=1), axis=1), (-1,))

    def cross_entropy_backward(self, row_grad: Any, logits: Any, target: Any, classes: Any) -> Any:
        """The gradient of `cross_entropy_rows` for `logits` (n, C), given each row's gradient
        `row_grad` (n,), or one for every row (0-d): ``(softmax(logits) - one_hot(target)) * row_grad``.
        `classes` is ``arange(C)`` on the logits' device, for the one-hot."""
        return softmax_minus_one_hot(self.xp, logits, target, classes) * row_grad[..., None]

    def erf(self, x: Any) -> Any:
        """The error function, from its everywhere-convergent series of positive terms.

        erf(x) = 2/sqrt(pi) * exp(-x^2) * sum_n 2^n x^(2n+1) / (1*3*...*(2n+1)).
        No cancellation, so it is accurate to float64 rounding (clipped to [-1, 1], which the
        rounding could pass); |x| >= 6 gives +-1 (erfc(6) is 2e-17). Libraries with a native erf override this.
        """
        xp = self.xp
        a = xp.clip(xp.abs(x), max=6.0)
        a2 = a * a
        term, total = a, a
        for n in range(1, 120):
            term = term * (2.0 * a2 / (2 * n + 1))
            total = total + term
        return xp.clip(xp.sign(x) * (2.0 / math.sqrt(math.pi)) * xp.exp(-a2) * total, min=-1.0, max=1.0)

    def adam_update(
        self,
        param,
        grad,
        exp_avg,
        exp_avg_sq,
        *,
        step: int,
        lr: float,
        beta1: float,
        beta2: float,
        eps: float,
        weight_decay: float,
        decoupled: bool,
    ) -> tuple[Any, Any, Any]:
        """One Adam/AdamW update in PyTorch's order; returns (param, exp_avg, exp_avg_sq).

        The portable default is functional (new arrays); mutable backends may update the
        arrays in place and return them.
        """
        if weight_decay:
            if decoupled:
                param = param * (1 - lr * weight_decay)
            else:
                grad = grad + weight_decay * param
        exp_avg = exp_avg + (1 - beta1) * (grad - exp_avg)
        exp_avg_sq = exp_avg_sq * beta2 + (1 - beta2) * grad * grad
        step_size = lr / (1 - beta1**step)
        # `step` is an array inside a compiled step, a Python int otherwise (math.sqrt, as PyTorch).
        bias2 = 1 - beta2**step
        denom = self.xp.sqrt(exp_avg_sq) / (math.sqrt(bias2) if isinstance(bias2, float) else self.xp.sqrt(bias2)) + eps
        return param - step_size * (exp_avg / denom), exp_avg, exp_avg_sq

    # --- convolution and pooling (NCHW; a 1-D op is the 2-D one on a height of 1) ------------
    def im2col(
        self,
        x: Any,
        kernel: tuple[int, int],
        stride: tuple[int, int],
        dilation: tuple[int, int],
        out_size: tuple[int, int],
    ) -> Any:
        """The windows of the (already padded) `x` of shape (N, C, H, W): an array (N, C, kh*kw,
        Ho, Wo) whose [n, c, i*kw + j] is the input under kernel tap (i, j) for every output
        position. The portable default stacks one strided slice per tap."""
        return self.xp.stack(
            [x[_tap(i, j, stride, dilation, out_size)] for i in range(kernel[0]) for j in range(kernel[1])], axis=2
        )

    def col2im(
        self,
        cols: Any,
        shape: tuple[int, ...],
        kernel: tuple[int, int],
        stride: tuple[int, int],
        dilation: tuple[int, int],
    ) -> Any:
        """The adjoint of `im2col`: windows (N, C, kh*kw, Ho, Wo) added back where they sat in
        a zero array of `shape` (N, C, H, W), tap by tap in order. The portable default adds
        one strided slice per tap."""
        out = self.xp.zeros(shape, dtype=cols.dtype, device=self.device)
        for i in range(kernel[0]):
            for j in range(kernel[1]):
                out[_tap(i, j, stride, dilation, tuple(cols.shape[3:]))] += cols[:, :, i * kernel[1] + j, ...]
        return out

    def pad2d(self, x: Any, padding: Padding2d, value: float) -> Any:
        """`x` (N, C, H, W) with `padding` ((top, bottom), (left, right)) rows and columns of `value`."""
        (top, bottom), (left, right) = padding
        if not (top or bottom or left or right):
            return x
        xp, (n, c, h, w) = self.xp, x.shape

        def block(rows: int, cols: int) -> Any:
            return xp.full((n, c, rows, cols), value, dtype=x.dtype, device=self.device)

        x = xp.concat([block(top, w), x, block(bottom, w)], axis=2)
        return xp.concat([block(h + top + bottom, left), x, block(h + top + bottom, right)], axis=3)

    def conv2d(
        self,
        x: Any,
        weight: Any,
        *,
        stride: tuple[int, int],
        padding: Padding2d,
        dilation: tuple[int, int],
        groups: int,
    ) -> Any:
        """The cross-correlation of `x` (N, C, H, W) with `weight` (O, C/groups, kh, kw), as
        PyTorch's conv2d: an im2col, then one (batched, grouped) matmul."""
        (n, _, h, w), (o, cg, kh, kw) = x.shape, weight.shape
        out = conv_output_size((h, w), (kh, kw), stride, padding, dilation)
        cols = self.im2col(self.pad2d(x, padding, 0.0), (kh, kw), stride, dilation, out)
        cols = self.xp.reshape(cols, (n, groups, cg * kh * kw, out[0] * out[1]))
        return self.xp.reshape(self.xp.reshape(weight, (groups, o // groups, -1)) @ cols, (n, o, *out))

    def conv2d_grad_weight(
        self,
        grad: Any,
        x: Any,
        weight_shape: tuple[int, ...],
        *,
        stride: tuple[int, int],
        padding: Padding2d,
        dilation: tuple[int, int],
        groups: int,
    ) -> Any:
        """The gradient of conv2d's weight: each output's gradient times the window it saw."""
        xp, n, (o, cg, kh, kw) = self.xp, x.shape[0], weight_shape
        out = tuple(grad.shape[2:])
        cols = self.im2col(self.pad2d(x, padding, 0.0), (kh, kw), stride, dilation, out)
        cols = xp.reshape(cols, (n, groups, cg * kh * kw, out[0] * out[1]))
        g = xp.reshape(grad, (n, groups, o // groups, out[0] * out[1]))
        return xp.reshape(xp.sum(g @ xp.matrix_transpose(cols), axis=0), weight_shape)

    def conv2d_grad_input(
        self,
        grad: Any,
        weight: Any,
        input_shape: tuple[int, ...],
        *,
        stride: tuple[int, int],
        padding: Padding2d,
        dilation: tuple[int, int],
        groups: int,
    ) -> Any:
        """The gradient of conv2d's input (PyTorch's conv_transpose2d): the weight's transpose
        times the output gradient gives each window's share, added back where the window sat
        (a col2im, one strided slice per kernel tap)."""
        xp, (n, c, h, w), (o, _, kh, kw) = self.xp, input_shape, weight.shape
        (top, bottom), (left, right) = padding
        ho, wo = grad.shape[2:]
        g = xp.reshape(grad, (n, groups, o // groups, ho * wo))
        shares = xp.reshape(
            xp.matrix_transpose(xp.reshape(weight, (groups, o // groups, -1))) @ g, (n, c, kh * kw, ho, wo)
        )
        out = self.col2im(shares, (n, c, h + top + bottom, w + left + right), (kh, kw), stride, dilation)
        return out[:, :, top : top + h, left : left + w]

    def max_pool2d(
        self,
        x: Any,
        *,
        kernel_size: tuple[int, int],
        stride: tuple[int, int],
        padding: tuple[int, int],
        dilation: tuple[int, int],
        ceil_mode: bool,
    ) -> tuple[Any, Any]:
        """The maximum of each window of `x` (N, C, H, W), and its position as an index into
        the flattened (H, W) plane, the first maximum where several tie (PyTorch's indices; a
        NaN is the maximum of its window; a position in the padding is never chosen). One
        strided slice per kernel tap, no window copy."""
        xp, (h, w) = self.xp, x.shape[2:]
        padded, out = self._pool_input(x, kernel_size, stride, padding, dilation, ceil_mode)
        taps = [padded[_tap(i, j, stride, dilation, out)] for i in range(kernel_size[0]) for j in range(kernel_size[1])]
        values = taps[0]
        for seen in taps[1:]:
            values = xp.maximum(values, seen)
        chosen = xp.zeros(values.shape, dtype=self.dtype("int64"), device=self.device)
        for k in reversed(range(len(taps))):  # the last assignment, the first tap, wins
            hit = (taps[k] == values) | xp.isnan(taps[k])
            inside = _tap_inside(divmod(k, kernel_size[1]), (h, w), out, stride, padding, dilation)
            chosen = xp.where(hit if inside.all() else hit & self.asarray(inside), k, chosen)
        return values, self._pool_indices(chosen, x.shape[3], out, kernel_size, stride, padding, dilation)

    def max_pool2d_backward(
        self,
        grad: Any,
        indices: Any,
        input_shape: tuple[int, ...],
        *,
        kernel_size: tuple[int, int],
        stride: tuple[int, int],
        padding: tuple[int, int],
        dilation: tuple[int, int],
        ceil_mode: bool,
    ) -> Any:
        """The gradient of `max_pool2d`'s input: each window's gradient added at its maximum
        (`indices`, as `max_pool2d` gives them). The portable default goes tap by tap: where a
        window's maximum is under tap (i, j), its gradient is added through that tap's strided
        slice, as in `conv2d_grad_input`."""
        xp, (n, c, h, w), (kh, kw), (dh, dw) = self.xp, input_shape, kernel_size, dilation
        ho, wo = grad.shape[2:]
        _, pads = _pool_padding((h, w), kernel_size, stride, padding, dilation, ceil_mode)
        out = xp.zeros((n, c, h + sum(pads[0]), w + sum(pads[1])), dtype=grad.dtype, device=self.device)
        starts = _window_starts((ho, wo), w, stride, padding)
        for i in range(kh):
            for j in range(kw):
                under_tap = indices == self.asarray(starts + i * dh * w + j * dw, indices.dtype)
                out[_tap(i, j, stride, dilation, (ho, wo))] += xp.where(under_tap, grad, 0.0)
        return out[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + w]

    def _scatter_to_maxima(self, grad: Any, indices: Any, input_shape: tuple[int, ...]) -> Any:
        """`max_pool2d_backward` as one scatter-add over the flattened input, for libraries
        whose index_add is fast."""
        flat = flat_positions(self.xp, indices, input_shape, self.device)
        return self.xp.reshape(
            self.index_add((math.prod(input_shape),), 0, flat, self.xp.reshape(grad, (-1,))), input_shape
        )

    def _pool_input(
        self,
        x: Any,
        kernel_size: tuple[int, int],
        stride: tuple[int, int],
        padding: tuple[int, int],
        dilation: tuple[int, int],
        ceil_mode: bool,
    ) -> tuple[Any, tuple[int, int]]:
        """`x` padded with -inf for max pooling (on the right also for ceil_mode's last, partial
        windows), and the output's height and width."""
        out, pads = _pool_padding(tuple(x.shape[2:]), kernel_size, stride, padding, dilation, ceil_mode)
        return self.pad2d(x, pads, -math.inf), out

    def _pool_indices(
        self,
        tap: Any,
        width: int,
        out: tuple[int, int],
        kernel_size: tuple[int, int],
        stride: tuple[int, int],
        padding: tuple[int, int],
        dilation: tuple[int, int],
    ) -> Any:
        """Each window's chosen kernel tap (N, C, Ho, Wo) as a position in the flattened input
        plane: the window's first position plus the tap's offset from it."""
        (kh, kw), (dh, dw) = kernel_size, dilation
        offsets = np.array([i * dh * width + j * dw for i in range(kh) for j in range(kw)])
        starts = _window_starts(out, width, stride, padding)
        int64 = self.dtype("int64")
        picked = self.xp.take(self.asarray(offsets, int64), self.xp.reshape(self.xp.astype(tap, int64), (-1,)))
        return self.xp.reshape(picked, tap.shape) + self.asarray(starts, int64)

    # --- linear algebra kernels -------------------------------------------------------------
    @staticmethod
    def einsum_plan(subscripts: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str, list[tuple[str, int]]]:
        """`einsum`'s subscripts made explicit: (each operand's labels, the output's labels,
        identities).

        ``...`` becomes letters unused elsewhere, aligned from the right as broadcasting
        aligns; an implicit output is the ellipsis then the labels seen once, in ASCII order
        (NumPy's rule); ellipsis axes missing from an explicit output are summed (PyTorch's
        rule). A label repeated within one operand (a diagonal) is renamed, and the
        identity matrix ``(label + new label, size)`` is to be added as an extra operand,
        so no operand repeats a label.

        >>> Backend.einsum_plan("ii,...i", [(3, 3), (2, 3)])
        (['ib', 'ai'], 'a', [('ib', 3)])
        """
        letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
        inputs, arrow, output = subscripts.replace(" ", "").partition("->")
        terms = inputs.split(",")
        if len(terms) != len(shapes):
            raise ValueError(f"einsum: {len(terms)} operand subscripts for {len(shapes)} operands")
        for term in [*terms, output]:
            if any(c not in letters for c in term.replace("...", "", 1)):
                raise ValueError(f"einsum: invalid subscripts {term!r}: use letters and at most one '...'")
        fresh = iter(c for c in letters if c not in subscripts)
        widths = [len(shape) - len(term.replace("...", "")) for term, shape in zip(terms, shapes)]
        for term, shape, width in zip(terms, shapes, widths):
            if width < 0 or (width and "..." not in term):
                raise ValueError(f"einsum: subscripts {term!r} do not match an operand of shape {shape}")
        ellipsis = "".join(next(fresh) for _ in range(max(widths, default=0)))
        labels = [term.replace("...", ellipsis[len(ellipsis) - w :]) for term, w in zip(terms, widths)]
        if arrow:
            output = output.replace("...", ellipsis)
        else:
            explicit = "".join(terms).replace("...", "")
            output = ellipsis + "".join(sorted(c for c in set(explicit) if explicit.count(c) == 1))
        if len(set(output)) != len(output) or not set(output) <= set("".join(labels)):
            raise ValueError(f"einsum: output subscripts {output!r} repeat a label or name one no operand has")
        identities = []
        for k, (term, shape) in enumerate(zip(labels, shapes)):
            renamed = ""
            for label, size in zip(term, shape):
                if label in renamed:
                    identities.append((label + (label := next(fresh)), size))
                renamed += label
            labels[k] = renamed
        return labels, output, identities

    def einsum(self, subscripts: str, *arrays: Any) -> Any:
        """The Einstein summation of `arrays` (NumPy's `einsum`, as planned by `einsum_plan`).

        The portable default aligns every operand to one axis order (the output's labels,
        then the summed ones), multiplies them with broadcasting one at a time and sums each
        label as soon as no later operand has it. Libraries with an einsum override this.
        """
        xp = self.xp
        labels, output, identities = self.einsum_plan(subscripts, [tuple(a.shape) for a in arrays])
        dtype = xp.result_type(*arrays)
        arrays = (*arrays, *(xp.eye(n, dtype=dtype, device=self.device) for _, n in identities))
        labels += [pair for pair, _ in identities]
        order = output + "".join(sorted(set("".join(labels)) - set(output)))
        result, pending = None, set()
        for k, (term, a) in enumerate(zip(labels, arrays)):
            positions = sorted(range(len(term)), key=lambda i: order.index(term[i]))
            a = xp.permute_dims(a, tuple(positions))
            shape = [1] * len(order)
            for i, n in zip(positions, a.shape):
                shape[order.index(term[i])] = n
            a = xp.reshape(a, tuple(shape))
            result = a if result is None else result * a
            pending |= set(term) - set(output)
            finished = pending - set("".join(labels[k + 1 :]))
            if finished:
                result = xp.sum(result, axis=tuple(order.index(c) for c in finished), keepdims=True)
                pending -= finished
        return xp.reshape(result, tuple(result.shape[: len(output)]))


def _tap(i: int, j: int, stride: tuple[int, int], dilation: tuple[int, int], out_size: tuple[int, int]) -> tuple:
    """The index of a padded (N, C, H, W) input that kernel tap (i, j) sees at every output position."""
    (sh, sw), (dh, dw), (ho, wo) = stride, dilation, out_size
    return (..., slice(i * dh, i * dh + sh * (ho - 1) + 1, sh), slice(j * dw, j * dw + sw * (wo - 1) + 1, sw))


def _tap_inside(
    tap: tuple[int, int],
    size: tuple[int, int],
    out: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
) -> np.ndarray:
    """Where kernel tap (i, j) lies inside the unpadded input, over the (Ho, Wo) windows."""
    rows, cols = (
        (np.arange(o) * s - p + t * d >= 0) & (np.arange(o) * s - p + t * d < n)
        for t, n, o, s, p, d in zip(tap, size, out, stride, padding, dilation)
    )
    return np.logical_and.outer(rows, cols)


def _pool_padding(
    size: tuple[int, int],
    kernel_size: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
    ceil_mode: bool,
) -> tuple[tuple, Padding2d]:
    """A pooling's output height and width, and the padding its input gets: `padding` on both
    sides, more on the right where ceil_mode's last windows run past it."""
    out = tuple(
        pool_output_size(n, k, s, p, d, ceil_mode)
        for n, k, s, p, d in zip(size, kernel_size, stride, padding, dilation)
    )
    extra = [
        max((o - 1) * s + d * (k - 1) + 1 - n - 2 * p, 0)
        for o, n, k, s, p, d in zip(out, size, kernel_size, stride, padding, dilation)
    ]
    return out, tuple((p, p + e) for p, e in zip(padding, extra))


def _window_starts(out: tuple[int, int], width: int, stride: tuple[int, int], padding: tuple[int, int]) -> np.ndarray:
    """Each pooling window's first position in the flattened (unpadded) input plane, (Ho, Wo)."""
    rows, cols = (np.arange(o) * s - p for o, s, p in zip(out, stride, padding))
    return np.add.outer(rows * width, cols)


def flat_positions(xp: Any, indices: Any, input_shape: tuple[int, ...], device: Any) -> Any:
    """Positions in a (N, C, H, W) input's plane (`max_pool2d`'s indices) as positions in the
    whole flattened input, 1-D."""
    n, c, h, w = input_shape
    planes = xp.reshape(xp.arange(n * c, dtype=indices.dtype, device=device) * (h * w), (n, c, 1, 1))
    return xp.reshape(indices + planes, (-1,))


def conv_output_size(
    size: tuple[int, int],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: Padding2d,
    dilation: tuple[int, int],
) -> tuple[int, int]:
    """Height and width of a convolution's output, as PyTorch computes them."""
    return tuple(
        (n + lo + hi - d * (k - 1) - 1) // s + 1
        for n, k, s, (lo, hi), d in zip(size, kernel, stride, padding, dilation)
    )


def rows_times(xp: Any, x: Any, matrix: Any) -> Any:
    """``x @ matrix`` with the leading axes of `x` folded into rows: one matrix product where
    a stacked matmul would run one per leading index (about 15% slower at GPT sizes). `xp`
    is any namespace (the engine's too, so a VJP can use it)."""
    if x.ndim <= 2:
        return xp.matmul(x, matrix)
    return xp.reshape(xp.matmul(xp.reshape(x, (-1, x.shape[-1])), matrix), (*x.shape[:-1], matrix.shape[-1]))


def pool_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool) -> int:
    """One axis of a pooling output (PyTorch's rule: with ceil_mode, a last window must start
    inside the input or its left padding)."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


# GELU's formulas, once for the portable kernels and for their differentiable twin in
# autograd_core: `xp` answers exp and tanh, `erf` is the error function of the same arrays.
_TANH_SCALE, _CUBIC = math.sqrt(2 / math.pi), 0.044715


def softmax_minus_one_hot(xp: Any, logits: Any, target: Any, classes: Any) -> Any:
    """``softmax(logits) - one_hot(target)`` over axis 1 of (n, C) `logits`, for class indices
    `target` (n,) and ``classes = arange(C)``; `xp` is a namespace (autograd_core for tensors)."""
    e = xp.exp(logits - xp.max(logits, axis=1, keepdims=True))
    p = e / xp.sum(e, axis=1, keepdims=True)
    return xp.where(classes == xp.expand_dims(target, axis=1), p - 1, p)


def gelu_value(xp: Any, erf: Callable[[Any], Any], x: Any, approximate: str) -> Any:
    """``0.5 x (1 + erf(x / sqrt 2))``, or ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    if approximate == "tanh":
        return 0.5 * x * (1 + xp.tanh(_TANH_SCALE * (x + _CUBIC * x * x * x)))
    return 0.5 * x * (1 + erf(x * math.sqrt(0.5)))


def gelu_slope(xp: Any, erf: Callable[[Any], Any], x: Any, approximate: str) -> Any:
    """The derivative of `gelu_value`: Phi(x) + x phi(x), or the tanh form's own derivative."""
    if approximate == "tanh":
        t = xp.tanh(_TANH_SCALE * (x + _CUBIC * x * x * x))
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _TANH_SCALE * (1 + 3 * _CUBIC * x * x)
    return 0.5 * (1 + erf(x * math.sqrt(0.5))) + x * xp.exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi))
