"""The fft extension on every backend: values against numpy.fft for each function and
normalization, precision kept in 32 bits, the frequencies on any device, the refusal of a
complex signal that requires grad by the transforms of real signals, and the gradients of
the transforms (over one axis and several, of real signals and through complex values) and
of fftshift/ifftshift against central finite differences and PyTorch, with second
derivatives through the real-to-real chains.

A complex output is checked through ``real(z) - 2 imag(z)``, so both of its parts carry a
gradient. The second derivatives leave real/imag out: their own double backward is the
engine's (a product with 1j), not the transforms'.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import autograd_core as ag
import backends
from helpers import assert_close
from torch_oracle import compare_with_torch, normal

F, TF = ag.fft, torch.fft
NORMS = ("backward", "ortho", "forward")


def drawn(kind: str, shape: tuple[int, ...] = (3, 4), seed: int = 0) -> np.ndarray:
    """A float64 (kind "real") or complex128 ("complex") host array."""
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape)
    return values + 1j * rng.standard_normal(shape) if kind == "complex" else values


def leaf(values: np.ndarray) -> ag.Tensor:
    return ag.tensor(values, dtype="float64", requires_grad=True)


# --- values against numpy.fft -----------------------------------------------------------------
FORWARD = [  # (function, input kind, keyword arguments): defaults, then cut/padded sizes on other axes
    ("fft", "complex", {}),
    ("fft", "complex", {"n": 6, "axis": 0}),
    ("ifft", "complex", {"n": 3}),
    ("fftn", "complex", {}),
    ("fftn", "complex", {"s": (2, 5), "axes": (1, 0)}),
    ("ifftn", "complex", {"axes": (0,)}),
    ("ifftn", "complex", {"s": (4, 3), "axes": (0, 1)}),
    ("rfft", "real", {}),
    ("rfft", "real", {"n": 5, "axis": 0}),
    ("irfft", "complex", {}),
    ("irfft", "complex", {"n": 5, "axis": 0}),
    ("rfftn", "real", {}),
    ("rfftn", "real", {"s": (5, 3), "axes": (1, 0)}),
    ("irfftn", "complex", {}),
    ("irfftn", "complex", {"s": (3, 5), "axes": (0, 1)}),
    ("hfft", "complex", {}),
    ("hfft", "complex", {"n": 5, "axis": 0}),
    ("ihfft", "real", {}),
    ("ihfft", "real", {"n": 3, "axis": 0}),
]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name, kind, kwargs", [pytest.param(*c, id=f"{c[0]}{list(c[2].values())}") for c in FORWARD])
def test_matches_numpy(float64_backend, name, kind, kwargs, norm):
    x = drawn(kind)
    out = getattr(F, name)(ag.tensor(x), **kwargs, norm=norm)
    expected = getattr(np.fft, name)(x, **kwargs, norm=norm)
    assert out.dtype == ag.as_dtype(expected.dtype.name) and not out.requires_grad
    assert_close(out, expected)


@pytest.mark.parametrize(
    "name, kind, result",
    [
        ("fft", "complex", "complex64"),
        ("ifft", "complex", "complex64"),
        ("fftn", "complex", "complex64"),
        ("ifftn", "complex", "complex64"),
        ("rfft", "real", "complex64"),
        ("irfft", "complex", "float32"),
        ("rfftn", "real", "complex64"),
        ("irfftn", "complex", "float32"),
        ("hfft", "complex", "float32"),
        ("ihfft", "real", "complex64"),
    ],
)
def test_keeps_32_bit_precision(backend, name, kind, result):
    x = drawn(kind)
    out = getattr(F, name)(ag.tensor(x, dtype="complex64" if kind == "complex" else "float32"))
    assert out.dtype == ag.as_dtype(result)
    assert_close(out, getattr(np.fft, name)(x), "float32", atol=1e-5)


@pytest.mark.parametrize("n", [1, 4, 5])
@pytest.mark.parametrize("d", [1.0, 0.1])
def test_frequencies(backend, n, d):
    for ours, theirs in ((F.fftfreq, np.fft.fftfreq), (F.rfftfreq, np.fft.rfftfreq)):
        default, wide = ours(n, d=d), ours(n, d=d, dtype=ag.float64)
        assert default.dtype == ag.float32 and wide.dtype == ag.float64 and default.backend is backend
        assert_close(default, theirs(n, d), "float32")
        assert_close(wide, theirs(n, d))


def test_frequencies_on_a_device(backend):
    """``device=`` takes a tensor's Device: the frequencies are made on its backend."""
    x = ag.ones(2)
    with backends.use("numpy"):
        freq = F.fftfreq(4, device=x.device)
    assert freq.backend is backend and freq.device == x.device
    with pytest.raises(TypeError, match="real floating"):
        F.rfftfreq(4, dtype=ag.int64)


@pytest.mark.parametrize("shift, theirs", [(F.fftshift, np.fft.fftshift), (F.ifftshift, np.fft.ifftshift)])
@pytest.mark.parametrize("axes", [None, 0, (1,), (-1, 0)])
def test_shifts_match_numpy(backend, shift, theirs, axes):
    x = np.arange(15).reshape(3, 5)
    out = shift(ag.tensor(x), axes=axes)
    assert out.dtype == ag.int64
    assert out.tolist() == theirs(x, axes=axes).tolist()
    assert shift(ag.tensor(3.0)).item() == 3.0  # a 0-d tensor has no axis to shift


# --- gradients: refused through complex values -----------------------------------------------------
def complex_leaf() -> ag.Tensor:
    return ag.astype(leaf(drawn("real")), ag.complex128)


REFUSED = [  # a complex signal that requires grad given to a transform of real signals
    ("rfft_of_complex", lambda: F.rfft(complex_leaf())),
    ("ihfft_of_complex", lambda: F.ihfft(complex_leaf())),
]


@pytest.mark.parametrize("name, call", REFUSED, ids=[name for name, _ in REFUSED])
def test_refuses_a_gradient_through_complex_values(float64_backend, name, call):
    with pytest.raises(NotImplementedError, match="complex values are not supported.*detach"):
        call()


def test_outside_the_graph_without_grad(float64_backend):
    x = ag.tensor(drawn("real"))
    assert not any(f(x).requires_grad for f in (F.rfft, F.ihfft, F.fftshift))
    assert not F.irfft(F.rfft(x)).requires_grad


@pytest.mark.parametrize(
    "call",
    [
        lambda: F.fft(ag.tensor(drawn("complex")), norm="none"),
        lambda: F.rfft(ag.tensor(drawn("real")), norm=None),
        lambda: F.hfft(ag.tensor(drawn("complex")), norm="inverse"),
    ],
)
def test_invalid_norm(backend, call):
    with pytest.raises(ValueError, match="norm must be"):
        call()


# --- gradients: the real ends and the shifts --------------------------------------------------------
def parts(z: Any) -> Any:
    """Both parts of a complex output, each with its own weight (ours and torch's alike)."""
    return z.real - 2 * z.imag


def case(name: str, ours: Callable, theirs: Callable, *shape: int) -> Any:
    return pytest.param(ours, theirs, shape, id=name)


CASES = [
    case("rfft", lambda x: parts(F.rfft(x)), lambda x: parts(TF.rfft(x)), 3, 4),
    case(
        "rfft_odd_axis0_ortho",
        lambda x: parts(F.rfft(x, axis=0, norm="ortho")),
        lambda x: parts(TF.rfft(x, dim=0, norm="ortho")),
        5,
        3,
    ),
    case("rfft_padded", lambda x: parts(F.rfft(x, n=7)), lambda x: parts(TF.rfft(x, n=7)), 2, 4),
    case(
        "rfft_cut_forward",
        lambda x: parts(F.rfft(x, n=3, norm="forward")),
        lambda x: parts(TF.rfft(x, n=3, norm="forward")),
        2,
        6,
    ),
    case("irfft", lambda x: F.irfft(F.rfft(x), n=5), lambda x: TF.irfft(TF.rfft(x), n=5), 2, 5),
    case(
        "irfft_cut_forward",
        lambda x: F.irfft(F.rfft(x, n=7), n=4, norm="forward"),
        lambda x: TF.irfft(TF.rfft(x, n=7), n=4, norm="forward"),
        2,
        5,
    ),
    case(
        "irfft_padded_axis0_ortho",
        lambda x: F.irfft(F.rfft(x, axis=0), n=9, axis=0, norm="ortho"),
        lambda x: TF.irfft(TF.rfft(x, dim=0), n=9, dim=0, norm="ortho"),
        4,
        2,
    ),
    case("hfft", lambda x: F.hfft(F.rfft(x), n=5, norm="ortho"), lambda x: TF.hfft(TF.rfft(x), n=5, norm="ortho"), 6),
    case("ihfft", lambda x: parts(F.ihfft(x, n=5)), lambda x: parts(TF.ihfft(x, n=5)), 3, 4),
    case(
        "hfft_of_ihfft",
        lambda x: F.hfft(F.ihfft(x, norm="forward"), n=7),
        lambda x: TF.hfft(TF.ihfft(x, norm="forward"), n=7),
        2,
        7,
    ),
    case(
        "rfftn_one_axis",
        lambda x: parts(F.rfftn(x, s=(3,), axes=(0,))),
        lambda x: parts(TF.rfftn(x, s=(3,), dim=(0,))),
        4,
        2,
    ),
    case(
        "irfftn_one_axis",
        lambda x: F.irfftn(F.rfftn(x, axes=(1,)), s=(5,), axes=(1,), norm="forward"),
        lambda x: TF.irfftn(TF.rfftn(x, dim=(1,)), s=(5,), dim=(1,), norm="forward"),
        2,
        4,
    ),
    case("fft_of_real", lambda x: parts(F.fft(x, n=5, axis=0)), lambda x: parts(TF.fft(x, n=5, dim=0)), 3, 4),
    case(
        "fftn_cut",
        lambda x: parts(F.fftn(x, s=(2, 5), axes=(1, 0), norm="ortho")),
        lambda x: parts(TF.fftn(x, s=(2, 5), dim=(1, 0), norm="ortho")),
        3,
        4,
    ),
    case(
        "ifftn_of_fftn",
        lambda x: parts(F.ifftn(F.fftn(x) * (1 + 2j), axes=(0,), norm="forward")),
        lambda x: parts(TF.ifftn(TF.fftn(x) * (1 + 2j), dim=(0,), norm="forward")),
        3,
        4,
    ),
    case("rfftn_two_axes", lambda x: parts(F.rfftn(x, s=(3, 6))), lambda x: parts(TF.rfftn(x, s=(3, 6))), 2, 5),
    case("irfftn_of_real", lambda x: F.irfftn(x, s=(4, 7)), lambda x: TF.irfftn(x, s=(4, 7)), 3, 4),
    case("irfft_of_real", lambda x: F.irfft(x, norm="ortho"), lambda x: TF.irfft(x, norm="ortho"), 3, 4),
    case("hfft_of_real", lambda x: F.hfft(x, n=5), lambda x: TF.hfft(x, n=5), 3, 4),
    case("fftshift", F.fftshift, TF.fftshift, 3, 4),
    case("fftshift_axis", lambda x: F.fftshift(x, axes=0), lambda x: TF.fftshift(x, dim=0), 5, 2),
    case("ifftshift", F.ifftshift, TF.ifftshift, 3, 5),
    case("ifftshift_axes", lambda x: F.ifftshift(x, axes=(-1, 0)), lambda x: TF.ifftshift(x, dim=(-1, 0)), 3, 2, 5),
]


@pytest.mark.parametrize("ours, theirs, shape", CASES)
def test_gradcheck(float64_backend, ours, theirs, shape):
    assert ag.gradcheck(ours, [leaf(drawn("real", shape))]) is True


@pytest.mark.parametrize("ours, theirs, shape", CASES)
def test_matches_torch(float64_backend, ours, theirs, shape):
    compare_with_torch(ours, theirs, [normal(*shape)])


SECOND_ORDER = {"irfft", "irfft_cut_forward", "hfft_of_ihfft", "irfftn_one_axis", "ifftshift"}


@pytest.mark.parametrize("ours, theirs, shape", [c for c in CASES if c.id in SECOND_ORDER])
def test_gradgradcheck(float64_backend, ours, theirs, shape):
    assert ag.gradgradcheck(lambda x: ours(x) ** 2, [leaf(drawn("real", shape))]) is True


def test_gradient_keeps_32_bit_precision(backend):
    x = ag.tensor(drawn("real"), dtype="float32", requires_grad=True)
    F.irfft(F.rfft(x, n=6) * 2.0, n=4).sum().backward()
    assert x.grad.dtype == ag.float32
    expected = torch.tensor(drawn("real"), requires_grad=True)
    TF.irfft(TF.rfft(expected, n=6) * 2.0, n=4).sum().backward()
    assert_close(x.grad, expected.grad, "float32")
