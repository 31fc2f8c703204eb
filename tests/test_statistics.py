"""prod, std, cumulative_sum, cumulative_prod, diff, any and all: gradients against central
differences (first and second order) on every backend, values and gradients against
PyTorch, and forward values against numpy.

Products are tested with zeros on purpose: their gradients must be the products of the
other elements (one zero), or zero (two zeros), never the nan of ``g * out / x``.
"""

from __future__ import annotations

import doctest

import numpy as np
import pytest
import torch

import autograd_core as ag
import autograd_core.ops.statistics
from helpers import assert_close, host
from torch_oracle import Arg, compare_with_torch, normal


# --- inputs -------------------------------------------------------------------------------------
def draw(shape, seed=0, zeros=()):
    """Standard normal values with exact zeros at the flat positions `zeros`."""
    x = np.asarray(np.random.default_rng(seed).standard_normal(shape))
    x.flat[list(zeros)] = 0.0
    return x


def leaf(values):
    return ag.tensor(np.asarray(values, dtype=np.float64), dtype="float64", requires_grad=True)


def with_zeros(*shape, at):
    """A torch-oracle input: normal values with zeros at the flat positions `at`."""
    return Arg(lambda r: draw(shape, seed=int(r.integers(1 << 30)), zeros=at))


def table(cases):
    return [pytest.param(*values, id=name) for name, *values in cases]


# --- gradients against central differences, on every backend ---------------------------------
# (2, 3, 2) groups: flat positions 0 and 2 share the axis-1 group (0, :, 0), so zeros=(0, 2)
# puts two zeros in one group of axis 1 and of the full reduction.
AXES = [None, 0, -1, (0, 2), (-1, 1)]
REDUCTIONS = table(
    [(f"prod-axis{a}", lambda x, a=a, k=False: ag.prod(x, axis=a, keepdims=k), (2, 3, 2), ()) for a in AXES]
    + [(f"prod-axis{a}-keepdims", lambda x, a=a: ag.prod(x, axis=a, keepdims=True), (2, 3, 2), ()) for a in AXES]
    + [
        ("prod-one-zero", lambda x: ag.prod(x, axis=1), (2, 3, 2), (2,)),
        ("prod-two-zeros", lambda x: ag.prod(x, axis=1), (2, 3, 2), (0, 2)),
        ("prod-all-two-zeros", ag.prod, (2, 3, 2), (0, 5)),
        ("prod-1d", ag.prod, (5,), ()),
        ("prod-0d", ag.prod, (), ()),
        ("prod-empty-axis", lambda x: ag.prod(x, axis=()), (2, 3), ()),
    ]
    + [
        (f"std-axis{a}-correction{c}", lambda x, a=a, c=c: ag.std(x, axis=a, correction=c), (2, 3, 2), ())
        for a in (None, 1, (0, -1))
        for c in (0, 1)
    ]
    + [("std-keepdims", lambda x: ag.std(x, axis=-1, correction=1, keepdims=True), (2, 3, 2), ())]
)

CUMULATIVE = [("cumulative_sum", ag.cumulative_sum), ("cumulative_prod", ag.cumulative_prod)]
SCANS = table(
    [
        (f"{name}-{shape}-axis{a}-initial{i}", lambda x, f=f, a=a, i=i: f(x, axis=a, include_initial=i), shape, ())
        for name, f in CUMULATIVE
        for shape, a in (((5,), None), ((2, 3, 2), 1), ((2, 3, 2), -1), ((), None))
        for i in (False, True)
    ]
    + [
        ("cumulative_prod-one-zero", lambda x: ag.cumulative_prod(x, axis=1), (2, 5), (2, 6)),
        ("cumulative_prod-two-zeros", lambda x: ag.cumulative_prod(x, axis=1), (2, 5), (1, 3, 7, 8)),
        ("cumulative_prod-zero-first", lambda x: ag.cumulative_prod(x, include_initial=True), (6,), (0,)),
        ("cumulative_prod-empty-axis", lambda x: ag.cumulative_prod(x, axis=1) + ag.sum(x), (2, 0), ()),
        ("cumulative_sum-empty-axis", lambda x: ag.cumulative_sum(x, axis=0, include_initial=True), (0, 2), ()),
    ]
)

DIFFS = table(
    [
        ("diff", lambda x: ag.diff(x), (2, 5)),
        ("diff-axis0", lambda x: ag.diff(x, axis=0), (3, 2)),
        ("diff-n2", lambda x: ag.diff(x, axis=-1, n=2), (2, 5)),
        ("diff-n0", lambda x: ag.diff(x, n=0), (2, 3)),
        ("diff-n-past-length", lambda x: ag.diff(x, n=4) + ag.sum(x), (2, 3)),
    ]
)


@pytest.mark.parametrize("fn, shape, zeros", REDUCTIONS + SCANS)
def test_gradcheck(float64_backend, fn, shape, zeros):
    assert ag.gradcheck(fn, [leaf(draw(shape, zeros=zeros))])


@pytest.mark.parametrize("fn, shape", DIFFS)
def test_gradcheck_diff(float64_backend, fn, shape):
    assert ag.gradcheck(fn, [leaf(draw(shape))])


def test_gradcheck_diff_prepend_append(float64_backend):
    fn = lambda x, p, a: ag.diff(x, axis=1, n=2, prepend=p, append=a)  # noqa: E731
    assert ag.gradcheck(fn, [leaf(draw((2, 3), 1)), leaf(draw((2, 1), 2)), leaf(draw((2, 2), 3))])


# --- second derivatives ------------------------------------------------------------------------
# The VJPs are polynomials in the input (no division by it), so they are right at zeros to
# every order; central differences of a multilinear function are exact there.
SECOND_ORDER = table(
    [
        ("prod", lambda x: ag.prod(x, axis=1), (2, 3), ()),
        ("prod-one-zero", lambda x: ag.prod(x, axis=(0, 1)), (2, 3), (4,)),
        ("prod-two-zeros", ag.prod, (2, 3), (1, 4)),
        ("cumulative_sum", lambda x: ag.cumulative_sum(x, axis=0, include_initial=True), (3, 2), ()),
        ("cumulative_prod", lambda x: ag.cumulative_prod(x, axis=-1), (2, 4), ()),
        ("cumulative_prod-zeros", lambda x: ag.cumulative_prod(x, axis=-1), (2, 4), (1, 5, 6)),
        ("std", lambda x: ag.std(x, axis=0, correction=1), (3, 2), ()),
    ]
)


@pytest.mark.parametrize("fn, shape, zeros", SECOND_ORDER)
def test_gradgradcheck(float64_backend, fn, shape, zeros):
    assert ag.gradgradcheck(fn, [leaf(draw(shape, zeros=zeros))])


# --- PyTorch parity --------------------------------------------------------------------------------
def case(name, ours, theirs, *args):
    return pytest.param(ours, theirs, args, id=name)


def equal_row(r):
    """A (2, 3) input whose first row is constant (exactly zero variance, exact mean)."""
    return np.stack([np.full(3, 1.25), r.standard_normal(3)])


PARITY = [
    case("prod", ag.prod, torch.prod, normal(2, 3)),
    case("prod-axis", lambda x: ag.prod(x, axis=-1), lambda x: torch.prod(x, -1), normal(2, 3, 4)),
    case("prod-one-zero", ag.prod, torch.prod, with_zeros(2, 3, at=(4,))),
    case("prod-two-zeros", ag.prod, torch.prod, with_zeros(2, 3, at=(1, 4))),
    case(
        "prod-axis-zeros",
        lambda x: ag.prod(x, axis=1, keepdims=True),
        lambda x: torch.prod(x, 1, keepdim=True),
        with_zeros(3, 4, at=(1, 5, 6, 9)),
    ),
    case("std", ag.std, lambda x: torch.std(x, correction=0), normal(2, 3, 4)),
    case(
        "std-correction1-axis",
        lambda x: ag.std(x, axis=(0, 2), correction=1),
        lambda x: torch.std(x, (0, 2), correction=1),
        normal(2, 3, 4),
    ),
    case(
        "std-correction0-keepdims",
        lambda x: ag.std(x, axis=1, correction=0, keepdims=True),
        lambda x: torch.std(x, 1, correction=0, keepdim=True),
        normal(2, 3, 4),
    ),
    case("std-zero-variance", lambda x: ag.std(x, axis=1, correction=1), lambda x: torch.std(x, 1), Arg(equal_row)),
    case("cumsum", lambda x: ag.cumulative_sum(x, axis=1), lambda x: torch.cumsum(x, 1), normal(2, 5, 3)),
    case("cumsum-1d", ag.cumulative_sum, lambda x: torch.cumsum(x, 0), normal(6)),
    case("cumprod", lambda x: ag.cumulative_prod(x, axis=-1), lambda x: torch.cumprod(x, -1), normal(3, 6)),
    case("cumprod-axis0", lambda x: ag.cumulative_prod(x, axis=0), lambda x: torch.cumprod(x, 0), normal(5, 2)),
    case(
        "cumprod-zeros",
        lambda x: ag.cumulative_prod(x, axis=-1),
        lambda x: torch.cumprod(x, -1),
        with_zeros(3, 6, at=(0, 8, 10, 13, 17)),
    ),
    case("cumsum-0d", ag.cumulative_sum, lambda x: torch.cumsum(x, 0), normal()),
    case("diff", ag.diff, torch.diff, normal(3, 5)),
    case("diff-n2-axis0", lambda x: ag.diff(x, axis=0, n=2), lambda x: torch.diff(x, 2, 0), normal(5, 3)),
    case(
        "diff-prepend-append",
        lambda x, p, a: ag.diff(x, n=3, prepend=p, append=a),
        lambda x, p, a: torch.diff(x, 3, -1, p, a),
        normal(2, 4),
        normal(2, 1),
        normal(2, 2),
    ),
]


@pytest.mark.parametrize(("ours", "theirs", "args"), PARITY)
def test_matches_torch(float64_backend, ours, theirs, args):
    compare_with_torch(ours, theirs, args)


# --- forward values against numpy ------------------------------------------------------------------
LOGICAL_INPUTS = {
    "float": np.array([[0.0, 1.5, 0.0], [0.0, 0.0, 0.0]]),
    "nan-inf": np.array([[np.nan, 0.0], [-np.inf, 2.0]]),
    "bool": np.array([[True, False, True], [True, True, True]]),
    "int": np.array([[0, 3], [1, 2], [0, 0]]),
    "empty": np.zeros((0, 3)),
    "0d": np.array(0.0),
}
LOGICAL_CASES = [
    pytest.param(values, axis, id=f"{name}-axis{axis}")
    for name, values in LOGICAL_INPUTS.items()
    for axis in ((None, ()) if values.ndim == 0 else (None, 0, -1, (0, 1), ()))
]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("values, axis", LOGICAL_CASES)
@pytest.mark.parametrize("name", ["any", "all"])
def test_any_all_match_numpy(backend, name, values, axis, keepdims):
    out = getattr(ag, name)(ag.asarray(values), axis=axis, keepdims=keepdims)
    expected = getattr(np, name)(values, axis=axis, keepdims=keepdims)
    assert out.dtype == ag.bool and not out.requires_grad
    np.testing.assert_array_equal(host(out), expected)


def test_any_all_are_outside_the_graph(backend):
    x = ag.tensor([0.0, 2.0], requires_grad=True)
    assert not ag.any(x).requires_grad and not ag.all(x, axis=0).requires_grad


@pytest.mark.parametrize("include_initial", [False, True])
@pytest.mark.parametrize(
    "shape, axis", [((5,), None), ((2, 3, 4), 1), ((2, 3, 4), -1), ((0, 3), 0), ((2, 0), 1)], ids=str
)
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_matches_numpy(backend, name, shape, axis, include_initial):
    values = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape) / 4
    out = getattr(ag, name)(ag.asarray(values), axis=axis, include_initial=include_initial)
    expected = getattr(np, name)(values, axis=axis, include_initial=include_initial)
    assert out.shape == expected.shape and out.dtype == ag.float32
    assert_close(out, expected, "float32")


@pytest.mark.parametrize("shape, axis, n", [((6,), -1, 1), ((3, 5), 0, 2), ((3, 5), 1, 7)], ids=str)
def test_diff_matches_numpy(backend, shape, axis, n):
    values = np.random.default_rng(0).integers(-9, 9, shape)
    out = ag.diff(ag.asarray(values), axis=axis, n=n)
    assert out.dtype == ag.int64
    np.testing.assert_array_equal(host(out), np.diff(values, axis=axis, n=n))


def test_diff_of_booleans_is_not_equal(backend):
    values = np.array([True, True, False, True])
    np.testing.assert_array_equal(host(ag.diff(ag.asarray(values))), np.diff(values))


# --- dtypes, edge cases and errors ---------------------------------------------------------------
@pytest.mark.parametrize(
    "dtype, expected",
    [("int8", "int64"), ("int64", "int64"), ("bool", "int64"), ("uint8", "uint64"), ("float32", "float32")],
)
@pytest.mark.parametrize("name", ["prod", "cumulative_sum", "cumulative_prod"])
def test_accumulation_dtype(backend, name, dtype, expected):
    """Integers narrower than the default integer accumulate in it (unsigned: uint64)."""
    values = np.array([1, 2, 3]).astype(dtype)
    try:
        out = getattr(ag, name)(ag.asarray(values))
    except RuntimeError as e:
        if expected == "uint64" and backend.name == "torch":
            pytest.skip(f"torch lacks uint64 products and sums: {e}")
        raise
    assert out.dtype == expected
    np.testing.assert_array_equal(host(out), getattr(np, name)(values))


@pytest.mark.parametrize(
    "name, expected",
    [("prod", [8.0, 6.0, 3.0]), ("cumulative_sum", [3.0, 2.0, 1.0]), ("cumulative_prod", [1 + 2 + 8, 1.5 + 6, 3.0])],
)
def test_dtype_argument_casts_first_and_the_gradient_back(float64_backend, name, expected):
    x = ag.tensor([1.5, 2.0, 4.0], dtype="float32", requires_grad=True)
    out = getattr(ag, name)(x, dtype="float64")
    assert out.dtype == ag.float64
    out.sum().backward()
    assert x.grad.dtype == ag.float32
    assert_close(x.grad, expected, "float32")


def test_prod_of_empty_is_one(backend):
    x = ag.zeros((2, 0), requires_grad=True)
    out = ag.prod(x, axis=1)
    assert host(out).tolist() == [1.0, 1.0]
    out.sum().backward()
    assert x.grad.shape == (2, 0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy warns of the division by zero
def test_std_where_undefined_is_not_finite(float64_backend):
    """N - correction <= 0: the values are not finite (var's 0 divisor, as PyTorch: inf or nan)."""
    out = ag.std(ag.tensor([1.0, 2.0], dtype="float64"), correction=2)
    assert not np.isfinite(host(out))


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda x: ag.cumulative_sum(x), ValueError),  # 2-D: the axis is required
        (lambda x: ag.cumulative_prod(x, axis=2), ValueError),
        (lambda x: ag.prod(x, axis=-3), ValueError),
        (lambda x: ag.diff(x, axis=2), ValueError),
        (lambda x: ag.diff(x, n=-1), ValueError),
        (lambda x: ag.diff(ag.sum(x)), ValueError),
        (lambda x: ag.any(x, axis=5), ValueError),
        (lambda x: ag.diff(x, prepend=np.zeros((2, 1))), TypeError),
    ],
    ids=[
        "cumsum-no-axis",
        "cumprod-axis",
        "prod-axis",
        "diff-axis",
        "diff-n",
        "diff-0d",
        "any-axis",
        "diff-prepend-not-tensor",
    ],
)
def test_errors(backend, call, error):
    with pytest.raises(error):
        call(ag.ones((2, 3)))


def test_docstring_examples():
    import backends

    with backends.use("numpy"):
        result = doctest.testmod(autograd_core.ops.statistics, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
