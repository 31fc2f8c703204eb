"""The array API's fft extension (``autograd_core.ops.fft``).

The transforms run the backend's own ``xp.fft`` on raw arrays. A one-axis transform runs as
its n-axis form on that one axis (``fft(x, n=n, axis=a)`` is ``fftn(x, s=(n,), axes=(a,))``),
which every library spells the standard's way (PyTorch's one-axis functions take ``dim=``);
hfft and ihfft are irfft and rfft of the conjugate with the normalization swapped, as numpy
computes them. The axes are always passed explicitly: None is every axis, or with `s` the
last ``len(s)`` (numpy's and PyTorch's reading).

Every transform is differentiable over any number of axes, with PyTorch's rules and its
convention for the gradient of a complex value (dL/dRe + i dL/dIm, which `real`, `imag` and
`conj` follow): the complex transforms' gradient is the adjoint transform (the inverse with
the normalization swapped), rfftn's the irfftn of the gradient with the twin bins halved,
irfftn's the rfftn of the gradient with them doubled. A real (or integer) signal given to a
transform of complex signals (fft, ifft, fftn, ifftn, irfft, irfftn, hfft) is cast to complex
first, as PyTorch does, so a real leaf gets the real part of the gradient; rfft and ihfft
refuse a complex signal that requires grad. fftshift and ifftshift are rolls, with their
gradient; fftfreq and rfftfreq are creation functions.

>>> import autograd_core as ag
>>> x = ag.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
>>> ag.fft.rfft(x).tolist()
[(10+0j), (-2+2j), (-2+0j)]
>>> ag.real(ag.fft.rfft(x)).sum().backward()
>>> x.grad.tolist()
[3.0, 0.0, 1.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from autograd_core.graph import grad_mode
from autograd_core.graph.dtypes import as_dtype
from autograd_core.graph.namespace import raw_namespace
from autograd_core.graph.registry import Primitive
from autograd_core.graph.tensor_base import COMPLEX, TensorBase, Vjp, mark
from autograd_core.ops.core import _tensor, astype, clone
from autograd_core.ops.creation import _DEFAULTS, _backend
from autograd_core.ops.elementwise import conj
from autograd_core.ops.manipulation import _positions, roll
from autograd_core.primitives.indexing import basic_index, scatter

__all__ = [
    "fft",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfftn",
    "rfft",
    "rfftfreq",
    "rfftn",
]

Norm = Literal["backward", "ortho", "forward"]
# the normalization of the adjoint (and of the conjugate-symmetric twin: hfft is irfft of the
# conjugate with it): the scale stays on the same side of the transform pair
_SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


# --- checks, dtypes and axes -------------------------------------------------------------------
def _needs_grad(x: TensorBase) -> bool:
    return x.requires_grad and grad_mode.is_grad_enabled()


def _check_norm(name: str, norm: str) -> None:
    if norm not in _SWAPPED:
        raise ValueError(f"{name}: norm must be 'backward', 'ortho' or 'forward', not {norm!r}")


def _real(x: TensorBase) -> TensorBase:
    """`x`, or an integer or boolean `x` in the default real floating dtype."""
    if x.dtype.is_floating_point or x.dtype.is_complex:
        return x
    return astype(x, _DEFAULTS["real floating"])


def _complex(x: TensorBase) -> TensorBase:
    """`x` as a complex signal: a real one cast to the complex dtype of its precision (a
    differentiable cast: a real leaf receives the real part of the gradient)."""
    x = _real(x)
    if x.dtype.is_complex:
        return x
    return astype(x, "complex128" if x.dtype.name == "float64" else "complex64")


def _transform_axes(name: str, s: Sequence[int] | None, axes: Any, ndim: int) -> tuple[int, ...]:
    """The transform's axes counted from 0: `axes`, or every axis when None (the last
    ``len(s)`` when `s` is given)."""
    if axes is None:
        axes = tuple(range(ndim - len(s), ndim)) if s is not None else None
    positions = _positions(axes, ndim)
    if s is not None and len(s) != len(positions):
        raise ValueError(f"{name}: s has {len(s)} sizes for {len(positions)} axes")
    if len(set(positions)) != len(positions):
        raise ValueError(f"{name}: an axis is repeated in {tuple(axes)}")
    return positions


def _fit(ns: Any, grad: Any, shape: Sequence[int], axis: int) -> Any:
    """`grad` cut or zero-padded along `axis` to `shape` (the adjoint of the forward's
    padding or cutting of its input to the transform's length)."""
    have, want = grad.shape[axis], shape[axis]
    lead = (slice(None),) * axis
    if have > want:
        return basic_index(ns, grad, (*lead, slice(0, want), Ellipsis))
    if have == want:
        return grad
    target = (*grad.shape[:axis], want, *grad.shape[axis + 1 :])
    return scatter(ns, grad, target, (*lead, slice(0, have), Ellipsis))


def _fit_axes(ns: Any, grad: Any, shape: Sequence[int], axes: Sequence[int]) -> Any:
    for axis in axes:
        grad = _fit(ns, grad, tuple(shape), axis)
    return grad


# --- the complex transforms ----------------------------------------------------------------------
def _complex_primitive(name: str, forward: bool) -> Primitive:
    """The primitive `name`, the backend's fftn (`forward`) or ifftn over explicit axes; its
    gradient is the other one with the normalization swapped (PyTorch's fft_c2c backward),
    cut or zero-padded back to the input's sizes. Linear, so its tangent is its transform."""
    kernel, adjoint = ("fftn", "ifftn") if forward else ("ifftn", "fftn")

    def transform(ns: Any, x: Any, s: Any, axes: Any, norm: str) -> Any:
        return getattr(ns.fft, kernel)(x, s=s, axes=axes, norm=norm)

    def vjp(ns: Any, g: Any, out: Any, x: Any, s: Any, axes: Any, norm: str) -> Any:
        return _fit_axes(ns, getattr(ns.fft, adjoint)(g, axes=axes, norm=_SWAPPED[norm]), x.shape, axes)

    return Primitive(
        name,
        transform,
        vjps=(vjp, None, None, None),
        saves="none",
        jvp=lambda ns, tangents, out, x, s, axes, norm: transform(ns, tangents[0], s, axes, norm),
        complex="safe",
    )


_COMPLEX_END = {name: _complex_primitive(name, not name.startswith("i")) for name in ("fft", "ifft", "fftn", "ifftn")}


def _complex_transform(name: str, x: Any, s: Sequence[int] | None, axes: Any, norm: str) -> TensorBase:
    _check_norm(name, norm)
    x = _complex(_tensor(name, x))
    s = None if s is None else tuple(s)
    positions = _transform_axes(name, s, axes, x.ndim)
    primitive = _COMPLEX_END[name]
    if not _needs_grad(x):
        return TensorBase._wrap(primitive(raw_namespace(x.backend), x.array, s, positions, norm), x.backend)
    return mark(primitive.bind(x, s, positions, norm), COMPLEX)


# --- the real ends: rfftn (a real signal to its half spectrum) and irfftn ------------------------
def _real_end(name: str, x: Any, s: Sequence[int] | None, axes: Any, norm: str) -> TensorBase:
    """The backend's rfftn (or irfftn, for the inverse transforms) over explicit axes, a
    primitive whose node also holds the weights of the twin bins of the half spectrum."""
    _check_norm(name, norm)
    primitive, inverse = _REAL_END[name]
    x = _tensor(name, x)
    x = _complex(x) if inverse else _real(x)
    if _needs_grad(x) and not inverse and x.dtype.is_complex:
        raise NotImplementedError(
            f"{name}: takes a real signal; gradients through complex values are not supported here, and this "
            "complex input requires grad: transform x.real, or x.detach() to leave the graph"
        )
    s = None if s is None else tuple(s)
    positions = _transform_axes(name, s, axes, x.ndim)
    data = primitive(raw_namespace(x.backend), x.array, s, positions, norm)
    if not _needs_grad(x):
        return TensorBase._wrap(data, x.backend)
    axis = positions[-1]
    n = data.shape[axis] if inverse else x.shape[axis] if s is None else s[-1]
    weights = _twin_weights(x, x.array.dtype if inverse else data.dtype, n, axis, 2.0 if inverse else 0.5)
    return mark(primitive.record(data, x.backend, (x, s, positions, norm, weights)), COMPLEX)


def _twin_weights(x: TensorBase, dtype: Any, n: int, axis: int, factor: float) -> TensorBase:
    """`factor` at the bins 1 .. n - (n//2 + 1) of a half spectrum of length n//2 + 1 (those
    that stand for themselves and their conjugate twin in the full spectrum), 1 at the others,
    shaped to broadcast along `axis` of `x`; a constant of `dtype`, outside the graph."""
    xp, device, length = x.backend.xp, x.backend.device, n // 2 + 1

    def run(count: int, value: float) -> Any:
        return xp.full((count,), value, dtype=dtype, device=device)

    weights = xp.concat([run(1, 1.0), run(n - length, factor), run(2 * length - n - 1, 1.0)])
    return TensorBase._wrap(xp.reshape(weights, (length, *(1,) * (x.ndim - 1 - axis))), x.backend)


def _real_end_grad(inverse: bool) -> Vjp:
    """The adjoint transform (PyTorch's fft_c2r_backward and fft_r2c_backward), with the
    normalization swapped and the result cut or zero-padded back to the input's sizes:
    irfftn's gradient is the rfftn of the output's, its twin bins doubled; rfftn's is the real
    part of the inverse transform of the zero-padded full spectrum, which is the irfftn of the
    gradient with the twin bins halved (so that it is differentiable again)."""

    def vjp(ns: Any, g: Any, out: Any, x: Any, s: Any, axes: Any, norm: str, weights: Any) -> Any:
        if inverse:
            sizes = tuple(out.shape[a] for a in axes)
            grad = ns.fft.rfftn(g, s=sizes, axes=axes, norm=_SWAPPED[norm]) * weights
        else:
            sizes = tuple(s) if s is not None else tuple(x.shape[a] for a in axes)
            grad = ns.fft.irfftn(g * weights, s=sizes, axes=axes, norm=_SWAPPED[norm])
        return _fit_axes(ns, grad, x.shape, axes)

    return vjp


def _real_end_primitive(name: str, inverse: bool) -> Primitive:
    """The primitive `name`, the backend's irfftn (when `inverse`) or rfftn; its node has the
    transform's arguments and then the twin bins' weights as inputs. The transform is linear
    over the reals, so its tangent is the transform of the input's tangent."""
    kernel = "irfftn" if inverse else "rfftn"

    def transform(ns: Any, x: Any, s: Any, axes: Any, norm: str) -> Any:
        return getattr(ns.fft, kernel)(x, s=s, axes=axes, norm=norm)

    return Primitive(
        name,
        transform,
        vjps=(_real_end_grad(inverse), None, None, None, None),
        saves="none",
        jvp=lambda ns, tangents, out, x, s, axes, norm, weights: transform(ns, tangents[0], s, axes, norm),
        complex="safe",
    )


# name: (the primitive, whether it is an inverse transform: a complex half spectrum to a real signal)
_REAL_END = {
    name: (_real_end_primitive(name, inverse), inverse)
    for name, inverse in (
        ("rfft", False),
        ("rfftn", False),
        ("ihfft", False),
        ("irfft", True),
        ("irfftn", True),
        ("hfft", True),
    )
}


def _one(n: int | None) -> tuple[int] | None:
    return None if n is None else (n,)


# --- the transforms ----------------------------------------------------------------------------
def fft(x: TensorBase, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> TensorBase:
    """The one-dimensional discrete Fourier transform along `axis` (cut or zero-padded to `n`
    elements); differentiable (the gradient is the adjoint transform).

    >>> import autograd_core as ag
    >>> ag.fft.fft(ag.asarray([1, 1j, -1, -1j])).tolist()
    [0j, (4+0j), 0j, 0j]
    """
    return _complex_transform("fft", x, _one(n), (axis,), norm)


def ifft(x: TensorBase, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> TensorBase:
    """The one-dimensional inverse discrete Fourier transform along `axis`; differentiable."""
    return _complex_transform("ifft", x, _one(n), (axis,), norm)


def fftn(
    x: TensorBase, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: Norm = "backward"
) -> TensorBase:
    """The n-dimensional discrete Fourier transform over `axes` (all when None), each cut or
    zero-padded to its size in `s`; differentiable."""
    return _complex_transform("fftn", x, s, axes, norm)


def ifftn(
    x: TensorBase, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: Norm = "backward"
) -> TensorBase:
    """The n-dimensional inverse discrete Fourier transform over `axes`; differentiable."""
    return _complex_transform("ifftn", x, s, axes, norm)


def rfft(x: TensorBase, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> TensorBase:
    """The discrete Fourier transform of a real signal along `axis`: the n//2 + 1 bins of
    nonnegative frequency, complex. Differentiable (PyTorch's rule).

    >>> import autograd_core as ag
    >>> ag.fft.rfft(ag.asarray([1.0, 0.0, 0.0]), n=4).tolist()
    [(1+0j), (1+0j), (1+0j)]
    """
    return _real_end("rfft", x, _one(n), (axis,), norm)


def irfft(x: TensorBase, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> TensorBase:
    """The inverse of `rfft`: the real signal of `n` elements (2 * (m - 1) by default) whose
    half spectrum is `x` along `axis`. Differentiable (PyTorch's rule).

    >>> import autograd_core as ag
    >>> ag.fft.irfft(ag.fft.rfft(ag.asarray([1.0, 2.0, 3.0])), n=3).tolist()
    [1.0, 2.0, 3.0]
    """
    return _real_end("irfft", x, _one(n), (axis,), norm)


def rfftn(
    x: TensorBase, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: Norm = "backward"
) -> TensorBase:
    """The n-dimensional transform of a real signal, the last of `axes` halved as in `rfft`;
    differentiable."""
    return _real_end("rfftn", x, s, axes, norm)


def irfftn(
    x: TensorBase, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: Norm = "backward"
) -> TensorBase:
    """The inverse of `rfftn`, a real signal (the last of `axes` of size ``s[-1]``, else
    2 * (m - 1)); differentiable."""
    return _real_end("irfftn", x, s, axes, norm)


def hfft(x: TensorBase, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> TensorBase:
    """The transform of a signal with Hermitian symmetry given by its first half `x`: a real
    signal of `n` elements (2 * (m - 1) by default). `irfft` of ``conj(x)`` with the
    normalization swapped, and differentiable as it is.

    >>> import autograd_core as ag
    >>> ag.fft.hfft(ag.asarray([1.0 + 0j, 2.0, 3.0])).tolist()
    [8.0, -2.0, 0.0, -2.0]
    """
    _check_norm("hfft", norm)
    return _real_end("hfft", conj(_complex(_tensor("hfft", x))), _one(n), (axis,), _SWAPPED[norm])


def ihfft(x: TensorBase, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> TensorBase:
    """The inverse of `hfft` for a real `x`: the n//2 + 1 bins ``conj(rfft(x))`` with the
    normalization swapped; differentiable as `rfft` is."""
    _check_norm("ihfft", norm)
    return conj(_real_end("ihfft", x, _one(n), (axis,), _SWAPPED[norm]))


# --- frequencies and shifts ----------------------------------------------------------------------
def _frequencies(name: str, counts: list[tuple[int, int]], n: int, d: float, dtype: Any, device: Any) -> TensorBase:
    """``arange(start, stop)`` for each pair of `counts`, joined, over ``n * d``: built from
    the standard's functions (numpy's fftfreq has no `dtype`), in `dtype` (the default real
    floating dtype when None) on the backend `device` names."""
    dtype = _DEFAULTS["real floating"] if dtype is None else as_dtype(dtype)
    if not dtype.is_floating_point:
        raise TypeError(f"{name}: dtype must be a real floating dtype, not {dtype.name}")
    if n < 0:
        raise ValueError(f"{name}: n must be nonnegative, not {n}")
    backend = _backend(device)
    xp, target = backend.xp, backend.dtype(dtype.name)
    ranges = [xp.arange(start, stop, dtype=target, device=backend.device) for start, stop in counts]
    return TensorBase._wrap(xp.concat(ranges) / (n * d), backend)


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> TensorBase:
    """The sample frequencies of an `n`-point transform with sample spacing `d`, zero first,
    then the positive ones, then the negative ones.

    >>> import autograd_core as ag
    >>> ag.fft.fftfreq(5, d=0.5).tolist()
    [0.0, 0.4000000059604645, 0.800000011920929, -0.800000011920929, -0.4000000059604645]
    """
    return _frequencies("fftfreq", [(0, (n - 1) // 2 + 1), (-(n // 2), 0)], n, d, dtype, device)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> TensorBase:
    """The n//2 + 1 nonnegative sample frequencies of an `n`-point `rfft` (the Nyquist one
    counted positive).

    >>> import autograd_core as ag
    >>> ag.fft.rfftfreq(4, dtype=ag.float64).tolist()
    [0.0, 0.25, 0.5]
    """
    return _frequencies("rfftfreq", [(0, n // 2 + 1)], n, d, dtype, device)


def _shift(name: str, x: Any, axes: int | Sequence[int] | None, sign: int) -> TensorBase:
    x = _tensor(name, x)
    positions = _positions(axes, x.ndim)
    if not positions:  # a 0-d tensor: nothing to shift
        return clone(x)
    return roll(x, tuple(sign * (x.shape[a] // 2) for a in positions), axis=positions)


def fftshift(x: TensorBase, /, *, axes: int | Sequence[int] | None = None) -> TensorBase:
    """`x` rolled by half its size along `axes` (all when None), zero frequency to the middle;
    differentiable (the gradient is rolled back).

    >>> import autograd_core as ag
    >>> ag.fft.fftshift(ag.fft.fftfreq(5)).tolist() == sorted(ag.fft.fftfreq(5).tolist())
    True
    """
    return _shift("fftshift", x, axes, 1)


def ifftshift(x: TensorBase, /, *, axes: int | Sequence[int] | None = None) -> TensorBase:
    """The inverse of `fftshift` (they differ by one place along odd sizes); differentiable."""
    return _shift("ifftshift", x, axes, -1)
