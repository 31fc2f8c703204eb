"""Gradients at the edges of their domains, against PyTorch: zero bases and exponents, negative
Python-scalar bases, NaN inside max/min, and erf/gelu far in the tails."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import autograd_core as ag
import nn.functional as F
from helpers import assert_close


def grads_of(fn, *values, torch_fn=None):
    """Our gradients of ``fn(*inputs).sum()`` and torch's, for float64 inputs `values`."""
    ours = [ag.tensor(np.asarray(v, dtype=np.float64), requires_grad=True) for v in values]
    theirs = [torch.tensor(np.asarray(v, dtype=np.float64), requires_grad=True) for v in values]
    fn(*ours).sum().backward()
    (torch_fn or fn)(*theirs).sum().backward()
    return [o.grad.numpy() for o in ours], [t.grad.numpy() for t in theirs]


def assert_same_grads(fn, *values, torch_fn=None):
    ours, theirs = grads_of(fn, *values, torch_fn=torch_fn)
    for mine, ref in zip(ours, theirs):
        np.testing.assert_array_equal(np.isnan(mine), np.isnan(ref))
        assert_close(np.nan_to_num(mine), np.nan_to_num(ref))


@pytest.mark.parametrize("exponent", [0.0, 2.0, 0.5])
def test_power_by_a_python_scalar_at_zero(float64_backend, exponent):
    # d/dx x**0 is 0 everywhere, x = 0 included (b * x**(b-1) would be 0 * inf = nan)
    assert_same_grads(lambda x: x**exponent, [0.0, 1.5, 2.0])


def test_power_by_a_tensor_at_zero_base_and_zero_exponent(float64_backend):
    assert_same_grads(lambda x, y: x**y, [0.0, 0.0, 0.0, 2.0], [0.0, 1.0, 2.5, 0.0])


def test_exponent_gradient_at_zero_base(float64_backend):
    # d/dy x**y = x**y log x: PyTorch takes it as 0 at x = 0 for y >= 0 (not 0 * -inf = nan)
    ours, theirs = grads_of(lambda x, y: x**y, [0.0, 0.0, 3.0], [0.0, 2.0, 1.5])
    assert_close(ours[1], theirs[1])
    np.testing.assert_array_equal(ours[1][:2], [0.0, 0.0])


def test_negative_python_scalar_base_gives_nan_like_pytorch(float64_backend):
    # (-2.0) ** x: the exponent's gradient is nan (log of a negative number), not a Python error
    assert_same_grads(lambda x: (-2.0) ** x, [1.0, 2.0])


def test_zero_python_scalar_base(float64_backend):
    assert_same_grads(lambda x: 0.0**x, [0.0, 1.0, 2.0])


@pytest.mark.parametrize("reduce", ["max", "min"])
def test_max_and_min_send_the_gradient_to_the_nan(float64_backend, reduce):
    values = [1.0, math.nan, 3.0, -2.0]
    ours, theirs = grads_of(lambda x: getattr(ag, reduce)(x), values, torch_fn=lambda x: getattr(torch, reduce)(x))
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[0], [0.0, 1.0, 0.0, 0.0])


def test_max_over_an_axis_with_nan(float64_backend):
    values = [[1.0, math.nan, 3.0], [4.0, 5.0, -1.0]]
    # as torch.max(x, dim) (torch.amax gives nan to the whole row)
    ours, theirs = grads_of(lambda x: ag.max(x, axis=1), values, torch_fn=lambda x: torch.max(x, dim=1)[0])
    np.testing.assert_array_equal(ours[0], theirs[0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erf_stays_within_one_far_in_the_tails(backend, dtype):
    if dtype == "float64" and not backend.supports_float64:
        pytest.skip(f"{backend.name} has no float64")
    x = ag.tensor([-1e4, -30.0, -5.5, 5.5, 30.0, 1e4], dtype=dtype)
    got = ag.erf(x).numpy()
    assert np.all(np.abs(got) <= 1.0)
    np.testing.assert_array_equal(got[[0, 1, 4, 5]], [-1.0, -1.0, 1.0, 1.0])


def test_gelu_far_below_zero_is_negative_zero(backend):
    got = F.gelu(ag.tensor([-1e4, -100.0])).numpy()
    expected = torch.nn.functional.gelu(torch.tensor([-1e4, -100.0])).numpy()
    np.testing.assert_array_equal(got, expected)
    # The torch backend runs torch's kernel, whose sign here depends on the CPU code path torch
    # picks (+0 with AVX2); every other backend gives -0, the limit from below.
    negative = np.signbit(expected) if backend.name == "torch" else [True, True]
    np.testing.assert_array_equal(np.signbit(got), negative)


COMPLEX_CASES = [
    (
        "imag of a complex product",
        lambda x, c: c.imag(c.astype(x, c.complex128) * (1 + 2j)),
        lambda x, c: (x.to(c.complex128) * (1 + 2j)).imag,
    ),
    (
        "abs of exp",
        lambda x, c: c.abs(c.exp(c.astype(x, c.complex128) * 1j + x)),
        lambda x, c: (x.to(c.complex128) * 1j + x).exp().abs(),
    ),
    (
        "real of a quotient and a power",
        lambda x, c: c.real((c.astype(x, c.complex128) + 1j) ** 2 / (x + 2j)),
        lambda x, c: ((x.to(c.complex128) + 1j) ** 2 / (x + 2j)).real,
    ),
]


@pytest.mark.parametrize(("name", "ours", "theirs"), COMPLEX_CASES, ids=[c[0] for c in COMPLEX_CASES])
def test_gradients_through_complex_values_match_pytorch(float64_backend, name, ours, theirs):
    assert_same_grads(lambda x: ours(x, ag), [0.5, -1.5, 2.0], torch_fn=lambda x: theirs(x, torch))


def test_backward_through_complex_values_refuses_an_op_without_a_complex_rule(float64_backend):
    x = ag.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    with pytest.raises(NotImplementedError, match="backward of prod through complex values"):
        ag.real(ag.prod(ag.astype(x, ag.complex128) * 1j)).backward()


def test_a_real_tensor_cast_to_complex_gets_the_real_part_back(float64_backend):
    x = ag.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    (ag.real(ag.astype(x, ag.complex128)) * 3.0).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and x.grad.dtype == ag.float64


def test_take_with_negative_indices_adds_their_gradients_to_the_same_rows(backend):
    """-1 and n-1 name one row: its gradient is the sum of both picks, as PyTorch gives."""
    x = ag.tensor(np.ones((5, 3)), dtype="float32", requires_grad=True)
    ag.take(x, ag.tensor([-1, 4, 0, -5, 2]), axis=0).sum().backward()
    t = torch.ones(5, 3, requires_grad=True)
    t[torch.tensor([-1, 4, 0, -5, 2])].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
