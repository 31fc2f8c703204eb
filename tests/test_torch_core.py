"""`autograd_core.torch`'s arithmetic, elementwise, reduction and statistics functions where
PyTorch's op database does not look: NaNs, ties, weights, ranges, 0-d inputs, dtypes, other
spellings and refusals, compared with torch on every backend (values; gradients where the
database's samples miss them)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import autograd_core.torch as ours
from helpers import assert_close, host

NAN, INF = math.nan, math.inf


def both(values, dtype="float64", requires_grad=False):
    """The same values as our tensor and as torch's."""
    array = np.asarray(values, dtype=dtype)
    return ours.tensor(array, requires_grad=requires_grad), torch.tensor(array, requires_grad=requires_grad)


def same(mine, theirs):
    """Equal structure, dtypes and values (NaNs equal)."""
    if isinstance(theirs, (tuple, list)):
        assert len(mine) == len(theirs)
        for m, t in zip(mine, theirs):
            same(m, t)
        return
    expected = theirs.detach().numpy()
    got = host(mine)
    assert got.shape == expected.shape
    assert str(got.dtype) == str(expected.dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, equal_nan=True)


# one call per row, made with `ours` and with `torch` on the same values
CALLS = {
    "logical_and of floats": (lambda m, x: m.logical_and(x, x - 1), [0.0, 1.0, 2.0, NAN]),
    "logical_xor of floats and bools": (lambda m, x: m.logical_xor(x, x > 0), [0.0, 1.0, -2.0]),
    "logical_or of ints": (lambda m, x: m.logical_or(x.long(), x.long() * 0), [0.0, 3.0]),
    "fmax ignores NaN": (lambda m, x: m.fmax(x, m.flip(x, [0])), [NAN, 1.0, 5.0, NAN]),
    "fmin ignores NaN": (lambda m, x: m.fmin(x, m.flip(x, [0])), [NAN, 1.0, 5.0, 2.0]),
    "frexp": (lambda m, x: m.frexp(x), [8.0, 0.75, -3.0, 0.0, INF, -INF, 2.0**-1022, 1 - 2.0**-53]),
    "heaviside": (lambda m, x: m.heaviside(x, m.full_like(x, 0.5)), [-1.0, 0.0, 2.0]),
    "angle of reals": (lambda m, x: m.angle(x), [-0.0, -1.0, 2.0, NAN]),
    "isposinf, isneginf": (lambda m, x: (m.isposinf(x), m.isneginf(x)), [INF, -INF, NAN, 1.0]),
    "nanmedian": (lambda m, x: m.nanmedian(x, 1), [[NAN, 1.0, 3.0], [NAN, NAN, NAN], [2.0, NAN, 4.0]]),
    "nanmedian of all": (lambda m, x: m.nanmedian(x), [NAN, 1.0, 3.0, 2.0]),
    "quantile with a NaN": (lambda m, x: m.quantile(x, 0.3, dim=1), [[NAN, 1.0, 3.0], [2.0, 5.0, 4.0]]),
    "nanquantile": (lambda m, x: m.nanquantile(x, 0.3, dim=1), [[NAN, 1.0, 3.0], [NAN, NAN, NAN]]),
    "mode: the smallest of the most frequent, last index": (
        lambda m, x: m.mode(x),
        [[3.0, 1.0, 3.0, 1.0, 2.0], [5.0, 5.0, 4.0, 4.0, 4.0]],
    ),
    "searchsorted with NaNs": (
        lambda m, x: (m.searchsorted(x, x, side="left"), m.searchsorted(x, x, right=True)),
        [1.0, 2.0, 2.0, NAN],
    ),
    "searchsorted of rows": (
        lambda m, x: m.searchsorted(x, m.flip(x, [1]), out_int32=True),
        [[1.0, 2.0, 3.0], [0.0, 5.0, 6.0]],
    ),
    "bucketize": (lambda m, x: m.bucketize(x * 3, x, right=True), [0.5, 1.0, 2.0]),
    "isin, inverted": (lambda m, x: m.isin(x, x[:2], invert=True), [1.0, 2.0, 3.0, 1.0]),
    "histc out of range": (lambda m, x: m.histc(x, bins=4, min=0, max=3), [-1.0, 0.0, 1.5, 3.0, 3.5]),
    "histc over the data's range": (lambda m, x: m.histc(x, bins=3), [1.0, 1.0, 2.0, 4.0]),
    "histogram with weights and density": (
        lambda m, x: m.histogram(x, 3, range=(0.0, 3.0), weight=x, density=True),
        [0.5, 1.0, 2.5, 2.9, 4.0],
    ),
    "histogram with edges": (lambda m, x: m.histogram(x, x[:3]), [0.0, 1.0, 3.0, 1.0, 3.0]),
    "histogramdd": (
        lambda m, x: m.histogramdd(x, [2, 3]),
        [[0.0, 0.0], [1.0, 1.0], [1.0, 0.5], [0.2, 0.9]],
    ),
    "cumsum in a dtype": (lambda m, x: m.cumsum(x, 0, dtype=m.float32), [1.0, 2.5]),
    "softmax in a dtype": (lambda m, x: m.softmax(x.float(), 0, dtype=m.float64), [1.0, 2.5]),
    "max of a 0-d tensor along dim 0": (lambda m, x: m.max(x, 0, keepdim=True), 3.0),
    "median of a 0-d tensor": (lambda m, x: (m.median(x), m.median(x, -1)), 3.0),
    "topk of a 0-d tensor": (lambda m, x: m.topk(x, 1), 3.0),
    "aminmax of a 0-d tensor": (lambda m, x: m.aminmax(x, dim=0), 3.0),
    "quantiles of a 0-d tensor, kept": (
        lambda m, x: m.quantile(x, m.tensor([0.2, 0.9], dtype=m.float64), keepdim=True),
        3.0,
    ),
    "quantiles over all, kept": (
        lambda m, x: m.quantile(x, m.tensor([0.2, 0.5, 1.0], dtype=m.float64), keepdim=True),
        [[1.0, 4.0], [2.0, 8.0]],
    ),
    "nearest quantile, ties to even": (
        lambda m, x: m.quantile(x, m.tensor([0.125, 0.375], dtype=m.float64), interpolation="nearest"),
        [1.0, 2.0, 3.0, 4.0, 5.0],
    ),
    "var_mean, unbiased positional": (lambda m, x: m.var_mean(x, 1, False, True), [[1.0, 2.0], [4.0, 8.0]]),
    "std_mean with a correction": (lambda m, x: m.std_mean(x, correction=0), [[1.0, 2.0], [4.0, 8.0]]),
    "tensordot broadcasting a length-1 axis": (
        lambda m, x: m.tensordot(x[:1], x, dims=([0], [0])),
        [[1.0, 2.0], [3.0, 4.0]],
    ),
    "einsum of a list": (lambda m, x: m.einsum("ij,jk->ik", [x, x]), [[1.0, 2.0], [3.0, 4.0]]),
    "inner with a 0-d tensor": (lambda m, x: m.inner(x[0, 0], x), [[1.0, 2.0], [3.0, 4.0]]),
    "nuclear norm, kept": (lambda m, x: m.norm(x, "nuc", dim=(0, 1), keepdim=True), [[1.0, 2.0], [3.0, 4.0]]),
    "complex, polar, view_as_complex": (
        lambda m, x: (m.complex(x, -x), m.polar(x, x), m.view_as_complex(x), m.angle(m.complex(x, -x))),
        [[1.0, 2.0], [3.0, 4.0]],
    ),
    "isreal": (lambda m, x: (m.isreal(x), m.isreal(m.complex(x, x * 0))), [1.0, 2.0]),
    "float_power of a float32 tensor and an int": (lambda m, x: m.float_power(x.float(), 2), [1.5, -2.0]),
    "addmv with beta 0 leaves NaN out": (
        lambda m, x: m.addmv(x[0] * NAN, x, x[0], beta=0, alpha=2),
        [[1.0, 2.0], [3.0, 4.0]],
    ),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS)
def test_matches_torch(float64_backend, call):
    f, values = call
    x, t = both(values)
    same(f(ours, x), f(torch, t))


GRADIENT_CALLS = {
    "cov with frequency and observation weights": (
        lambda m, x: m.cov(x, correction=1, fweights=m.tensor([1, 2, 3]), aweights=m.tensor([0.5, 1.0, 2.0])),
        [[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]],
    ),
    "corrcoef": (lambda m, x: m.corrcoef(x), [[1.0, 2.0, 4.0], [0.5, -1.0, 3.0], [2.0, 2.5, 0.0]]),
    "quantile, midpoint": (
        lambda m, x: m.quantile(x, m.tensor([0.1, 0.5], dtype=m.float64), dim=0, interpolation="midpoint"),
        [[1.0, 2.0], [4.0, 0.5], [3.0, 3.5]],
    ),
    "nanquantile, linear": (lambda m, x: m.nanquantile(x, 0.4, dim=1), [[1.0, 2.0, NAN, 4.0], [4.0, 0.5, 3.0, 3.5]]),
    "trapezoid at coordinates": (
        lambda m, x: m.trapezoid(x, m.tensor([0.0, 0.5, 2.0], dtype=m.float64)),
        [[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]],
    ),
    "cumulative_trapezoid": (lambda m, x: m.cumulative_trapezoid(x, dx=0.5, dim=0), [[1.0, 2.0], [4.0, 0.5]]),
    "gradient at coordinates, second order": (
        lambda m, x: m.gradient(x, spacing=[m.tensor([0.0, 0.5, 2.0, 2.5], dtype=m.float64)], dim=1, edge_order=2),
        [[1.0, 2.0, 4.0, 3.0], [0.5, -1.0, 3.0, 2.0]],
    ),
    "renorm": (lambda m, x: m.renorm(x, 2, 0, 1.5), [[1.0, 2.0], [0.5, -1.0]]),
    "ldexp in both": (lambda m, x: m.ldexp(x, x), [1.0, -2.5]),
    "logaddexp2": (lambda m, x: m.logaddexp2(x, x * 3), [1.0, -2.5]),
    "frexp's mantissa": (lambda m, x: m.frexp(x)[0], [3.0, -0.1]),
    "stft, real and imaginary parts": (
        lambda m, x: m.stft(x, 4, hop_length=2, window=m.ones(4, dtype=m.float64) * 0.5, return_complex=False),
        [1.0, 2.0, -1.0, 0.5, 3.0, 2.0, 1.0, 0.0],
    ),
}


@pytest.mark.parametrize("call", GRADIENT_CALLS.values(), ids=GRADIENT_CALLS)
def test_gradients_match_torch(float64_backend, call):
    f, values = call
    x, t = both(values, requires_grad=True)
    mine, theirs = f(ours, x), f(torch, t)
    mine, theirs = (v[0] if isinstance(v, tuple) else v for v in (mine, theirs))
    same(mine, theirs)
    weights = np.random.default_rng(0).standard_normal(tuple(theirs.shape))
    (mine * ours.tensor(weights)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    assert_close(x.grad, t.grad)


REFUSED = {
    "quantile's q outside [0, 1]": (lambda: ours.quantile(ours.tensor([1.0, 2.0]), 1.5), "q must lie in"),
    "cov of a 3-d tensor": (lambda: ours.cov(ours.zeros((2, 2, 2))), "at most 2 dimensions"),
    "a 0-d tensor's dim 1": (lambda: ours.nanmedian(ours.tensor(1.0), 1), "0 or -1"),
    "searchsorted with other leading dims": (
        lambda: ours.searchsorted(ours.zeros((2, 3)), ours.zeros((3, 1))),
        "leading dimensions",
    ),
    "gradient with too few samples": (lambda: ours.gradient(ours.zeros(2), edge_order=2), "at least 3 samples"),
}


@pytest.mark.parametrize("call", [c for c, _ in REFUSED.values()], ids=REFUSED)
def test_refusals_say_what_was_wrong(backend, call):
    match = dict(REFUSED.values())[call]
    with pytest.raises((ValueError, IndexError), match=match):
        call()
