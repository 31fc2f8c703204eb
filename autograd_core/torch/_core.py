"""`autograd_core.torch`'s arithmetic, elementwise functions, reductions and statistics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import autograd_core as ag
from autograd_core.ops import elementwise, searching, statistics
from autograd_core.torch._adapt import as_tensor

METHODS = (
    *("abs", "acos", "acosh", "add", "addcdiv", "addcmul", "addmm", "all", "allclose", "amax", "amin", "any"),
    *("argmax", "argmin", "asin", "asinh", "atan", "atanh", "bmm", "ceil", "clamp", "clip", "conj", "cos"),
    *("cosh", "count_nonzero", "cross", "cummax", "cummin", "cumprod", "cumsum", "div", "divide", "dot", "eq"),
    *("equal", "erf", "exp", "exp2", "expm1", "floor", "fmod", "frac", "ge", "greater", "greater_equal", "gt"),
    *("inner", "isclose", "isfinite", "isinf", "isnan", "kthvalue", "le", "lerp", "less", "less_equal"),
    *("log", "log10", "log1p", "log2", "log_softmax", "logcumsumexp", "logical_and", "logical_not", "logical_or"),
    *("logical_xor", "logsumexp", "lt", "matmul", "max", "maximum", "mean", "median", "min", "minimum", "mm"),
    *("mul", "multiply", "mv", "nan_to_num", "nanmean", "nansum", "ne", "neg", "negative", "norm", "outer"),
    *("pow", "prod", "reciprocal", "relu", "remainder", "round", "rsqrt", "sgn", "sigmoid", "sign"),
    *("sin", "sinh", "softmax", "sqrt", "square", "std", "sub", "subtract", "sum", "tan", "tanh", "trace"),
    *("true_divide", "trunc", "var", "numel"),
)


def where(condition: Any, input: Any = None, other: Any = None) -> Any:
    """`input` where `condition` holds, else `other`; with the condition alone, its nonzero
    indices as a tuple (PyTorch's ``torch.where``)."""
    if input is None and other is None:
        return as_tensor(condition).nonzero(as_tuple=True)
    return ag.where(as_tensor(condition), input, other)


# --- products with an added term: beta * input + alpha * product ----------------------------------
def _scaled_sum(input: Any, product: Any, beta: float, alpha: float) -> Any:
    """``beta * input + alpha * product``; with beta 0 the input is left out (its NaNs too), as
    in PyTorch."""
    product = product if alpha == 1 else alpha * product
    if beta == 0:
        return product + ag.zeros_like(as_tensor(input))
    return (input if beta == 1 else beta * input) + product


def addmv(input: Any, mat: Any, vec: Any, *, beta: float = 1, alpha: float = 1) -> Any:
    """``beta * input + alpha * (mat @ vec)``."""
    return _scaled_sum(input, ag.matmul(mat, vec), beta, alpha)


def addr(input: Any, vec1: Any, vec2: Any, *, beta: float = 1, alpha: float = 1) -> Any:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    return _scaled_sum(input, ag.linalg.outer(vec1, vec2), beta, alpha)


def baddbmm(input: Any, batch1: Any, batch2: Any, *, beta: float = 1, alpha: float = 1) -> Any:
    """``beta * input + alpha * (batch1 @ batch2)``, one product per batch."""
    return _scaled_sum(input, ag.matmul(batch1, batch2), beta, alpha)


def addbmm(input: Any, batch1: Any, batch2: Any, *, beta: float = 1, alpha: float = 1) -> Any:
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    return _scaled_sum(input, ag.sum(ag.matmul(batch1, batch2), axis=0), beta, alpha)


def vdot(input: Any, other: Any) -> Any:
    """The dot product of two 1-D tensors, the first conjugated."""
    return ag.sum(ag.conj(input) * other)


def rsub(input: Any, other: Any, *, alpha: float = 1) -> Any:
    """``other - alpha * input``."""
    return other - (input if alpha == 1 else alpha * input)


# --- distances and norms ----------------------------------------------------------------------------
def _norm_of_last(diff: Any, p: float, keepdims: bool = False, axis: Any = -1) -> Any:
    """The `p`-norm over `axis`; p = 0 counts the nonzero elements."""
    if p == 0:
        return ag.sum(ag.astype(diff != 0, diff.dtype), axis=axis, keepdims=keepdims)
    return ag.linalg.vector_norm(diff, axis=axis, keepdims=keepdims, ord=p)


def cdist(x1: Any, x2: Any, p: float = 2.0, compute_mode: str | None = None) -> Any:
    """The `p`-norm distance between each row of `x1` and each row of `x2` (batched over the
    leading axes)."""
    return _norm_of_last(ag.expand_dims(x1, axis=-2) - ag.expand_dims(x2, axis=-3), p)


def dist(input: Any, other: Any, p: float = 2) -> Any:
    """The `p`-norm of ``input - other`` over all elements."""
    return _norm_of_last(as_tensor(input) - other, p, axis=None)


def renorm(input: Any, p: float, dim: int, maxnorm: float) -> Any:
    """Each slice along `dim` whose `p`-norm exceeds `maxnorm` scaled down to norm `maxnorm`."""
    x = as_tensor(input)
    others = tuple(i for i in range(x.ndim) if i != dim % x.ndim)
    norm = _norm_of_last(x, p, keepdims=True, axis=others)
    return x * ag.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)


# --- contractions -------------------------------------------------------------------------------------
def einsum(equation: str, *operands: Any) -> Any:
    """``torch.einsum(equation, *operands)``, the operands also as one list."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return ag.einsum(equation, *operands)


def tensordot(a: Any, b: Any, dims: Any = 2, out: None = None) -> Any:
    """PyTorch's ``tensordot``: `dims` a count of trailing/leading axes or two lists of axes."""
    if isinstance(dims, ag.Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        dims = (tuple(range(a.ndim - dims, a.ndim)), tuple(range(dims)))
    dims = tuple(tuple(d) if isinstance(d, Sequence) else (d,) for d in dims)
    # a contracted axis of length 1 against a longer one broadcasts: the other is summed first
    a = _summed(a, [i for i, j in zip(*dims) if b.shape[j] == 1 and a.shape[i] != 1])
    b = _summed(b, [j for i, j in zip(*dims) if a.shape[i] == 1 and b.shape[j] != 1])
    return ag.tensordot(a, b, axes=dims)


def _summed(x: Any, axes: list[int]) -> Any:
    return ag.sum(x, axis=tuple(axes), keepdims=True) if axes else x


def pca_lowrank(A: Any, q: int | None = None, center: bool = True, niter: int = 2) -> Any:  # noqa: N803
    """``(U, S, V)`` of the rank-`q` principal components of `A` (centred over its rows), by an
    exact SVD where PyTorch's is randomised."""
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    if center:
        A = A - ag.mean(A, axis=-2, keepdims=True)  # noqa: N806
    u, s, vh = ag.linalg.svd(A, full_matrices=False)
    return u[..., :q], s[..., :q], ag.matrix_transpose(vh)[..., :q]


# --- complex numbers -----------------------------------------------------------------------------------
def view_as_complex(input: Any) -> Any:
    """The complex tensor whose real and imaginary parts are `input`'s last axis (of length 2)."""
    if input.shape[-1:] != (2,):
        raise ValueError(f"view_as_complex: the last dimension must have size 2, got shape {tuple(input.shape)}")
    return elementwise.complex_of(input[..., 0], input[..., 1])


def resolved(input: Any) -> Any:
    """`input` itself: a tensor here never holds a lazy conjugation or negation."""
    return input


# --- the short-time Fourier transform ---------------------------------------------------------------------
def _reflected_ends(x: Any, pad: int) -> Any:
    """`x` with `pad` elements mirrored onto each end of its last axis (the ends themselves not
    repeated: PyTorch's "reflect" padding)."""
    left = ag.flip(x[..., 1 : pad + 1], axis=-1)
    right = ag.flip(x[..., -pad - 1 : -1], axis=-1)
    return ag.concat([left, x, right], axis=-1)


def stft(
    input: Any,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Any = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
) -> Any:
    """The short-time Fourier transform of the signals in the last axis of `input` (1-D or a
    batch): frames of `n_fft` samples every `hop_length`, each weighed by `window` (centred,
    zero-padded to `n_fft`), their FFTs as ``(..., frequencies, frames)``: complex, or with
    ``return_complex=False`` the real and imaginary parts in a last axis of 2. ``center``
    reflects `n_fft // 2` samples onto each end first (``pad_mode`` "reflect" or "constant")."""
    x = as_tensor(input)
    hop = n_fft // 4 if hop_length is None else hop_length
    width = n_fft if win_length is None else win_length
    window = ag.ones(width, dtype=x.dtype) if window is None else window
    if width < n_fft:
        before = (n_fft - width) // 2
        window = ag.concat([ag.zeros(before, dtype=x.dtype), window, ag.zeros(n_fft - width - before, dtype=x.dtype)])
    if center:
        pad = n_fft // 2
        if pad_mode == "reflect":
            x = _reflected_ends(x, pad)
        elif pad_mode == "constant":
            zeros = ag.zeros((*x.shape[:-1], pad), dtype=x.dtype)
            x = ag.concat([zeros, x, zeros], axis=-1)
        else:
            raise ValueError(f"stft: pad_mode must be 'reflect' or 'constant', not {pad_mode!r}")
    frames = 1 + (x.shape[-1] - n_fft) // hop
    starts = ag.arange(frames, dtype=ag.int64) * hop
    at = ag.reshape(starts[:, None] + ag.arange(n_fft, dtype=ag.int64)[None, :], (-1,))
    framed = ag.reshape(ag.take(x, at, axis=-1), (*x.shape[:-1], frames, n_fft)) * window
    is_complex = x.dtype.is_complex or getattr(window, "dtype", x.dtype).is_complex
    one_sided = not is_complex if onesided is None else onesided
    spectrum = ag.fft.rfft(framed, axis=-1) if one_sided else ag.fft.fft(framed, axis=-1)
    if normalized:
        spectrum = spectrum * n_fft**-0.5
    spectrum = ag.swapaxes(spectrum, -1, -2)
    if return_complex is None or return_complex:
        return spectrum
    return ag.stack([ag.real(spectrum), ag.imag(spectrum)], axis=-1)


# --- trapezoids, histograms, searching -------------------------------------------------------------------
def msort(input: Any) -> Any:
    """`input` sorted along its first axis."""
    return as_tensor(input).sort(0).values


FUNCTIONS: dict[str, Any] = {
    "where": where,
    "clamp_max": lambda input, max: ag.clip(input, max=max),  # noqa: A006 - PyTorch's names
    "clamp_min": lambda input, min: ag.clip(input, min=min),  # noqa: A006
    "addmv": addmv,
    "addr": addr,
    "addbmm": addbmm,
    "baddbmm": baddbmm,
    "vdot": vdot,
    "rsub": rsub,
    "cdist": cdist,
    "dist": dist,
    "renorm": renorm,
    "einsum": einsum,
    "tensordot": tensordot,
    "pca_lowrank": pca_lowrank,
    "msort": msort,
    "stft": stft,
    "real": elementwise.real,
    "imag": elementwise.imag,
    "positive": ag.positive,
    "conj_physical": ag.conj,
    "resolve_conj": resolved,
    "resolve_neg": resolved,
    "view_as_complex": view_as_complex,
    "complex": elementwise.complex_of,
    "polar": elementwise.polar,
    "angle": elementwise.angle,
    "isreal": elementwise.isreal,
    "isposinf": elementwise.isposinf,
    "isneginf": elementwise.isneginf,
    "signbit": ag.signbit,
    "atan2": ag.atan2,
    "arctan2": ag.atan2,
    "copysign": ag.copysign,
    "hypot": ag.hypot,
    "nextafter": ag.nextafter,
    "logaddexp": ag.logaddexp,
    "logaddexp2": elementwise.logaddexp2,
    "floor_divide": ag.floor_divide,
    "fmax": elementwise.fmax,
    "fmin": elementwise.fmin,
    "ldexp": elementwise.ldexp,
    "frexp": elementwise.frexp,
    "heaviside": elementwise.heaviside,
    "float_power": elementwise.float_power,
    "deg2rad": elementwise.deg2rad,
    "rad2deg": elementwise.rad2deg,
    "aminmax": statistics.aminmax,
    "var_mean": statistics.var_mean,
    "std_mean": statistics.std_mean,
    "cov": statistics.cov,
    "corrcoef": statistics.corrcoef,
    "nanmedian": searching.nanmedian,
    "mode": searching.mode,
    "quantile": searching.quantile,
    "trapezoid": statistics.trapezoid,
    "trapz": statistics.trapezoid,
    "cumulative_trapezoid": statistics.cumulative_trapezoid,
    "gradient": statistics.gradient,
    "searchsorted": searching.sorted_positions,
    "bucketize": searching.bucketize,
    "isin": searching.isin,
    "histc": searching.histc,
    "histogram": searching.histogram,
    "histogramdd": searching.histogramdd,
    "nanquantile": searching.nanquantile,
}
