"""The array API's fft extension (``autograd_core.ops.fft``).

The transforms run the backend's own ``xp.fft`` on raw arrays. A one-axis transform runs as
its n-axis form on that one axis (``fft(x, n=n, axis=a)`` is ``fftn(x, s=(n,), axes=(a,))``),
which every library spells the standard's way (PyTorch's one-axis functions take ``dim=``);
hfft and ihfft are irfft and rfft of the conjugate with the normalization swapped, as numpy
computes them.

Gradients through complex values are out of scope, except at the real end of a transform:
over one axis, rfft (and ihfft) of a real signal and irfft (and hfft) of a complex one to a
real signal are differentiable, with PyTorch's rules and its convention for the gradient of
a complex value (dL/dRe + i dL/dIm, which `real`, `imag` and `conj` follow). The other
transforms refuse an input that requires grad. fftshift and ifftshift are rolls, with their
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
from autograd_core.ops.core import _tensor, clone
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


# --- checks and the two kinds of transform ---------------------------------------------------
def _needs_grad(x: TensorBase) -> bool:
    return x.requires_grad and grad_mode.is_grad_enabled()


def _checked(name: str, x: TensorBase, norm: str, differentiable: bool) -> TensorBase:
    """`x`, once `norm` is checked to be one of the standard's and `x` to need no gradient
    unless the transform is `differentiable`."""
    if norm not in _SWAPPED:
        raise ValueError(f"{name}: norm must be 'backward', 'ortho' or 'forward', not {norm!r}")
    if _needs_grad(x) and not differentiable:
        raise NotImplementedError(
            f"{name}: gradients through complex values are not supported, and this input requires grad. "
            "Over one axis, rfft/ihfft of a real signal and irfft/hfft to a real signal are differentiable; "
            "otherwise transform x.detach() (or call it under autograd_core.no_grad()) to leave the graph"
        )
    return x


def _outside_graph(
    name: str, kernel: str, x: Any, s: Sequence[int] | None, axes: Sequence[int] | None, norm: str
) -> TensorBase:
    """The backend's ``xp.fft.<kernel>`` (fftn or ifftn), a tensor outside the graph."""
    x = _checked(name, _tensor(name, x), norm, differentiable=False)
    return TensorBase._wrap(getattr(x.backend.xp.fft, kernel)(x.array, s=s, axes=axes, norm=norm), x.backend)


def _real_end(name: str, x: Any, s: Sequence[int] | None, axes: Sequence[int] | None, norm: str) -> TensorBase:
    """The backend's rfftn (or irfftn, for the inverse transforms): a primitive when it
    transforms one axis of a real signal (a complex half spectrum); refused a gradient
    otherwise."""
    primitive, inverse = _REAL_END[name]
    x = _tensor(name, x)
    positions = _positions(axes, x.ndim)
    differentiable = len(positions) == 1 and (x.dtype.is_complex if inverse else x.dtype.is_floating_point)
    x = _checked(name, x, norm, differentiable)
    data = primitive(raw_namespace(x.backend), x.array, s, axes, norm)
    if not _needs_grad(x):
        return TensorBase._wrap(data, x.backend)
    (axis,) = positions
    n = _signal_length(inverse, x.shape, data.shape, s, axis)
    weights = _twin_weights(x, x.array.dtype if inverse else data.dtype, n, axis, 2.0 if inverse else 0.5)
    return mark(primitive.record(data, x.backend, (x, s, axes, norm, weights)), COMPLEX)


def _signal_length(inverse: bool, x_shape: Sequence[int], out_shape: Sequence[int], s: Any, axis: int) -> int:
    """The length along `axis` of the real end of the transform: the output of an inverse
    one, else the input cut or zero-padded to ``s[-1]``."""
    return out_shape[axis] if inverse else x_shape[axis] if s is None else s[-1]


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
    normalization swapped and the result cut or zero-padded back to the input's length:
    irfft's gradient is the rfft of the output's, its twin bins doubled; rfft's is the real
    part of the inverse transform of the zero-padded full spectrum, which is the irfft of the
    gradient with the twin bins halved (so that it is differentiable again)."""

    def vjp(ns: Any, g: Any, out: Any, x: Any, s: Any, axes: Any, norm: str, weights: Any) -> Any:
        (axis,) = _positions(axes, x.ndim)
        n = _signal_length(inverse, x.shape, out.shape, s, axis)
        if inverse:
            grad = ns.fft.rfftn(g, s=(n,), axes=(axis,), norm=_SWAPPED[norm]) * weights
        else:
            grad = ns.fft.irfftn(g * weights, s=(n,), axes=(axis,), norm=_SWAPPED[norm])
        return _fit(ns, grad, tuple(x.shape), axis)

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


def _fit(ns: Any, grad: Any, shape: tuple[int, ...], axis: int) -> Any:
    """`grad` cut or zero-padded along `axis` to `shape` (the adjoint of the forward's
    padding or cutting of its input to the transform's length)."""
    have, want = grad.shape[axis], shape[axis]
    lead = (slice(None),) * axis
    if have > want:
        return basic_index(ns, grad, (*lead, slice(0, want), Ellipsis))
    return grad if have == want else scatter(ns, grad, shape, (*lead, slice(0, have), Ellipsis))


def _one(n: int | None) -> tuple[int] | None:
    return None if n is None else (n,)


# --- the transforms ----------------------------------------------------------------------------
def fft(x: TensorBase, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> TensorBase:
    """The one-dimensional discrete Fourier transform along `axis` (cut or zero-padded to `n`
    elements); outside the graph.

    >>> import autograd_core as ag
    >>> ag.fft.fft(ag.asarray([1, 1j, -1, -1j])).tolist()
    [0j, (4+0j), 0j, 0j]
    """
    return _outside_graph("fft", "fftn", x, _one(n), (axis,), norm)


def ifft(x: TensorBase, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> TensorBase:
    """The one-dimensional inverse discrete Fourier transform along `axis`; outside the graph."""
    return _outside_graph("ifft", "ifftn", x, _one(n), (axis,), norm)


def fftn(
    x: TensorBase, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: Norm = "backward"
) -> TensorBase:
    """The n-dimensional discrete Fourier transform over `axes` (all when None), each cut or
    zero-padded to its size in `s`; outside the graph."""
    return _outside_graph("fftn", "fftn", x, s, axes, norm)


def ifftn(
    x: TensorBase, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: Norm = "backward"
) -> TensorBase:
    """The n-dimensional inverse discrete Fourier transform over `axes`; outside the graph."""
    return _outside_graph("ifftn", "ifftn", x, s, axes, norm)


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
    half spectrum is `x` along `axis`. Differentiable for a complex `x` (PyTorch's rule).

    >>> import autograd_core as ag
    >>> ag.fft.irfft(ag.fft.rfft(ag.asarray([1.0, 2.0, 3.0])), n=3).tolist()
    [1.0, 2.0, 3.0]
    """
    return _real_end("irfft", x, _one(n), (axis,), norm)


def rfftn(
    x: TensorBase, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: Norm = "backward"
) -> TensorBase:
    """The n-dimensional transform of a real signal, the last of `axes` halved as in `rfft`;
    differentiable over one axis (as `rfft`), outside the graph over several."""
    return _real_end("rfftn", x, s, axes, norm)


def irfftn(
    x: TensorBase, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: Norm = "backward"
) -> TensorBase:
    """The inverse of `rfftn`, a real signal (the last of `axes` of size ``s[-1]``, else
    2 * (m - 1)); differentiable over one axis (as `irfft`), outside the graph over several."""
    return _real_end("irfftn", x, s, axes, norm)


def hfft(x: TensorBase, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> TensorBase:
    """The transform of a signal with Hermitian symmetry given by its first half `x`: a real
    signal of `n` elements (2 * (m - 1) by default). `irfft` of ``conj(x)`` with the
    normalization swapped, and differentiable as it is.

    >>> import autograd_core as ag
    >>> ag.fft.hfft(ag.asarray([1.0 + 0j, 2.0, 3.0])).tolist()
    [8.0, -2.0, 0.0, -2.0]
    """
    return _real_end("hfft", conj(_tensor("hfft", x)), _one(n), (axis,), _SWAPPED.get(norm, norm))


def ihfft(x: TensorBase, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> TensorBase:
    """The inverse of `hfft` for a real `x`: the n//2 + 1 bins ``conj(rfft(x))`` with the
    normalization swapped; differentiable as `rfft` is."""
    return conj(_real_end("ihfft", x, _one(n), (axis,), _SWAPPED.get(norm, norm)))


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
