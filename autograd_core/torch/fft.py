"""`torch.fft` over our tensors, with PyTorch's signatures: `autograd_core.fft`'s functions,
with the rows of `FUNCTIONS` where PyTorch's differ.

PyTorch's transforms take ``(input, n, dim, norm)`` (one axis) or ``(input, s, dim, norm)``
(two or n axes) positionally, ``norm=None`` for "backward", and have 2-d forms (``fft2``:
the last two axes by default) and the n-dimensional Hermitian pair ``hfftn``/``ihfftn``;
each is one of our n-dimensional transforms over explicit axes.

>>> import autograd_core.torch as torch
>>> x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> torch.fft.fft2(x).real.tolist()
[[10.0, -2.0], [-4.0, 0.0]]
>>> torch.fft.irfft(torch.fft.rfft(x, dim=0), 2, 0).tolist()
[[1.0, 2.0], [3.0, 4.0]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from autograd_core import conj, fft as _ours
from autograd_core.torch._adapt import as_tensor

_SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _norm(norm: str | None) -> str:
    return "backward" if norm is None else norm


def _dims(dim: int | Sequence[int] | None) -> tuple[int, ...] | None:
    return None if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)


def _sizes(s: int | Sequence[int] | None) -> tuple[int, ...] | None:
    return None if s is None else (s,) if isinstance(s, int) else tuple(s)


def _hfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    """irfftn of the conjugate with the normalization swapped (PyTorch's hfftn)."""
    x = as_tensor(x)
    return _ours.irfftn(conj(x) if x.dtype.is_complex else x, s=s, axes=axes, norm=_SWAPPED.get(norm, norm))


def _ihfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    """The conjugate of rfftn with the normalization swapped (PyTorch's ihfftn)."""
    return conj(_ours.rfftn(x, s=s, axes=axes, norm=_SWAPPED.get(norm, norm)))


def _one_axis(transform: Callable[..., Any], name: str) -> Callable[..., Any]:
    """PyTorch's ``name(input, n=None, dim=-1, norm=None)`` as `transform` over one axis."""

    def call(input: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Any:
        return transform(as_tensor(input), s=None if n is None else (n,), axes=(dim,), norm=_norm(norm))

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``torch.fft.{name}(input, n=None, dim=-1, norm=None)`` over one axis."
    return call


def _several_axes(transform: Callable[..., Any], name: str, default: tuple[int, ...] | None) -> Callable[..., Any]:
    """PyTorch's ``name(input, s=None, dim=default, norm=None)`` as `transform`: `dim` None is
    every axis, or the last ``len(s)`` where `s` is given."""

    def call(input: Any, s: Any = None, dim: Any = default, norm: str | None = None) -> Any:
        x, sizes, axes = as_tensor(input), _sizes(s), _dims(dim)
        if axes is None:
            axes = tuple(range(x.ndim - len(sizes), x.ndim)) if sizes is not None else tuple(range(x.ndim))
        return transform(x, s=sizes, axes=axes, norm=_norm(norm))

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``torch.fft.{name}(input, s=None, dim={default}, norm=None)``."
    return call


def _shift(shift: Callable[..., Any], name: str) -> Callable[..., Any]:
    def call(input: Any, dim: Any = None) -> Any:
        return shift(as_tensor(input), axes=dim)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``torch.fft.{name}(input, dim=None)``."
    return call


def _frequencies(frequencies: Callable[..., Any]) -> Callable[..., Any]:
    def call(
        n: int,
        d: float = 1.0,
        *,
        dtype: Any = None,
        layout: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> Any:
        out = frequencies(n, d=d, dtype=dtype, device=device)
        return out.requires_grad_() if requires_grad else out

    call.__name__ = call.__qualname__ = frequencies.__name__
    call.__doc__ = frequencies.__doc__
    return call


_TRANSFORMS = {"fft": _ours.fftn, "ifft": _ours.ifftn, "rfft": _ours.rfftn, "irfft": _ours.irfftn}
_TRANSFORMS |= {"hfft": _hfftn, "ihfft": _ihfftn}

FUNCTIONS: dict[str, Any] = {
    **{name: _one_axis(transform, name) for name, transform in _TRANSFORMS.items()},
    **{f"{name}2": _several_axes(transform, f"{name}2", (-2, -1)) for name, transform in _TRANSFORMS.items()},
    **{f"{name}n": _several_axes(transform, f"{name}n", None) for name, transform in _TRANSFORMS.items()},
    "fftshift": _shift(_ours.fftshift, "fftshift"),
    "ifftshift": _shift(_ours.ifftshift, "ifftshift"),
    "fftfreq": _frequencies(_ours.fftfreq),
    "rfftfreq": _frequencies(_ours.rfftfreq),
}

globals().update({name: getattr(_ours, name) for name in getattr(_ours, "__all__", ()) if name not in FUNCTIONS})
globals().update(FUNCTIONS)
