"""Every primitive's backward against central finite differences, in float64, on every backend.

Each case draws its inputs from a seeded host generator, makes float64 leaves on the backend
under test and hands them to `ag.gradcheck`, which weights the output by a random projection
(so a VJP that permutes, drops or mis-broadcasts gradient elements cannot pass). Inputs stay
inside each op's domain and away from kinks and ties, where the derivative is undefined and
central differences would straddle two branches. The tables name every case, so a failure
says which op, shapes, axis or key broke.
"""

from __future__ import annotations

import itertools
import math
import operator
from functools import partial

import numpy as np
import pytest

import autograd_core as ag
from tests.helpers import assert_close, host


# --- inputs ---------------------------------------------------------------------------------------
def normal(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def positive(shape, seed=0):
    return np.random.default_rng(seed).uniform(0.3, 2.0, shape)


def shuffled_halves(rng, shape, first, second):
    """`first` and `second` in equal shares (one more `first` for an odd count), in random order."""
    n = math.prod(shape)
    return rng.permutation(np.where(np.arange(n) % 2 == 0, first, second)).reshape(shape)


def away_from_zero(shape, seed=0):
    """Magnitudes in [0.3, 2], half of them negative: clear of the kink of abs/relu and the pole of 1/x."""
    rng = np.random.default_rng(seed)
    return rng.uniform(0.3, 2.0, shape) * shuffled_halves(rng, shape, 1.0, -1.0)


def around_one(shape, seed=0):
    """Magnitudes in [0.2, 0.8] or [1.2, 1.8], random signs: half inside clip(-1, 1), half outside, none at a bound."""
    rng = np.random.default_rng(seed)
    magnitude = rng.uniform(0.2, 0.8, shape) + shuffled_halves(rng, shape, 0.0, 1.0)
    return magnitude * rng.choice([-1.0, 1.0], size=shape)


def distinct(shape, seed=0):
    """Values at least 0.25 apart, in random order: max/min have no ties."""
    n = math.prod(shape)
    return (np.random.default_rng(seed).permutation(n).reshape(shape) - n / 2 + 0.1) * 0.25


def leaf(values):
    return ag.tensor(np.asarray(values, dtype=np.float64), dtype="float64", requires_grad=True)


def check(fn, *arrays):
    assert ag.gradcheck(fn, [leaf(a) for a in arrays]) is True


def table(cases):
    """pytest params from (id, *values) tuples."""
    return [pytest.param(*values, id=name) for name, *values in cases]


# --- binary elementwise ops with broadcasting -----------------------------------------------------
def where_alternating(a, b):
    """where() with a condition of the broadcast shape that picks from both operands."""
    shape = np.broadcast_shapes(a.shape, b.shape)
    condition = np.arange(math.prod(shape)).reshape(shape) % 2 == 0
    return ag.where(ag.tensor(condition), a, b)


BINARY = table(
    [
        ("add", ag.add, normal, normal),
        ("subtract", ag.subtract, normal, normal),
        ("multiply", ag.multiply, normal, normal),
        ("divide", ag.divide, normal, away_from_zero),
        ("pow", ag.pow, positive, normal),
        ("maximum", ag.maximum, normal, normal),
        ("minimum", ag.minimum, normal, normal),
        ("where", where_alternating, normal, normal),
    ]
)

SHAPES = [(), (3,), (2, 3), (1, 3), (2, 1)]
SHAPE_PAIRS = [
    *itertools.product(SHAPES, SHAPES),
    ((2, 1, 3, 1, 4), (5, 1, 2, 4)),
    ((3, 1, 4), (2, 1, 1, 5, 1)),
]


@pytest.mark.parametrize("shape_a, shape_b", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize("fn, make_a, make_b", BINARY)
def test_binary(float64_backend, fn, make_a, make_b, shape_a, shape_b):
    check(fn, make_a(shape_a, seed=1), make_b(shape_b, seed=2))


SCALAR_OPERANDS = table(
    [
        ("x + 2.5", lambda x: x + 2.5, normal),
        ("2.5 + x", lambda x: 2.5 + x, normal),
        ("x - 2.5", lambda x: x - 2.5, normal),
        ("2.5 - x", lambda x: 2.5 - x, normal),
        ("x * 2.5", lambda x: x * 2.5, normal),
        ("2.5 * x", lambda x: 2.5 * x, normal),
        ("x / 2.5", lambda x: x / 2.5, normal),
        ("2.5 / x", lambda x: 2.5 / x, away_from_zero),
        ("x ** 2.5", lambda x: x**2.5, positive),
        ("2.5 ** x", lambda x: 2.5**x, normal),
        ("x ** 2", lambda x: x**2, normal),
        ("x ** -1", lambda x: x**-1, away_from_zero),
        ("2 ** x", lambda x: 2**x, normal),
        ("-x", operator.neg, normal),
        ("maximum(x, 0.5)", lambda x: ag.maximum(x, 0.5), away_from_zero),
        ("minimum(0.5, x)", lambda x: ag.minimum(0.5, x), away_from_zero),
        ("where(x > 0, x, 0.0)", lambda x: ag.where(x > 0, x, 0.0), away_from_zero),
        ("where(x > 0, 1.5, x)", lambda x: ag.where(x > 0, 1.5, x), away_from_zero),
    ]
)


# --- unary elementwise ops ------------------------------------------------------------------------
UNARY = table(
    [
        ("exp", ag.exp, normal),
        ("log", ag.log, positive),
        ("log1p", ag.log1p, lambda shape: positive(shape) - 0.6),
        ("sqrt", ag.sqrt, positive),
        ("tanh", ag.tanh, normal),
        ("sigmoid", ag.sigmoid, normal),
        ("relu", ag.relu, away_from_zero),
        ("abs", ag.abs, away_from_zero),
        ("erf", ag.erf, normal),
        ("sin", ag.sin, normal),
        ("cos", ag.cos, normal),
        ("negative", ag.negative, normal),
        ("clip", lambda x: ag.clip(x, -1.0, 1.0), around_one),
        ("clip_min", lambda x: ag.clip(x, min=0.0), away_from_zero),
        ("clip_max", lambda x: ag.clip(x, max=0.0), away_from_zero),
        ("clone", ag.clone, normal),
        ("astype_float64", lambda x: ag.astype(x, "float64"), normal),
    ]
)


@pytest.mark.parametrize("fn, make", SCALAR_OPERANDS + UNARY)
def test_elementwise(float64_backend, fn, make):
    """Unary ops, and binary ops with a Python scalar on either side, on a (2, 3) input."""
    check(fn, make((2, 3)))


# --- reductions -----------------------------------------------------------------------------------
REDUCTIONS = table(
    [
        ("sum", ag.sum, normal),
        ("mean", ag.mean, normal),
        ("max", ag.max, distinct),
        ("min", ag.min, distinct),
        ("logsumexp", ag.logsumexp, normal),
        ("var", ag.var, normal),
        ("var_correction1", partial(ag.var, correction=1), normal),
    ]
)

REDUCTION_AXES = [
    *(((2, 3, 4), axis) for axis in (None, 0, 1, 2, (-1, 0))),  # (-1, 0): negative, unsorted, not adjacent
    ((5,), 0),
    ((), None),
]
REDUCTION_CASES = [
    pytest.param(*reduction.values, shape, axis, id=f"{reduction.id}-{shape}-{axis}")
    for reduction, (shape, axis) in itertools.product(REDUCTIONS, REDUCTION_AXES)
    if not (reduction.id == "var_correction1" and shape == ())  # one element: no unbiased variance
]


@pytest.mark.parametrize("keepdims", [False, True], ids=["drop", "keepdims"])
@pytest.mark.parametrize("fn, make, shape, axis", REDUCTION_CASES)
def test_reduction(float64_backend, fn, make, shape, axis, keepdims):
    check(lambda x: fn(x, axis=axis, keepdims=keepdims), make(shape))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("fn", [ag.softmax, ag.log_softmax], ids=["softmax", "log_softmax"])
def test_softmax(float64_backend, fn, axis):
    check(lambda x: fn(x, axis), normal((2, 3, 4)))


# --- matmul ---------------------------------------------------------------------------------------
MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((4,), (4,)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 4, 5)),
]


@pytest.mark.parametrize("shape_a, shape_b", MATMUL_SHAPES, ids=str)
def test_matmul(float64_backend, shape_a, shape_b):
    check(operator.matmul, normal(shape_a, seed=1), normal(shape_b, seed=2))


# --- shape ops ------------------------------------------------------------------------------------
SHAPE_OPS = table(
    [
        ("reshape", lambda x: ag.reshape(x, (6, 4)), [(2, 3, 4)]),
        ("reshape_-1", lambda x: ag.reshape(x, (4, -1, 2)), [(2, 3, 4)]),
        ("reshape_flat", lambda x: ag.reshape(x, (-1,)), [(2, 3, 4)]),
        ("reshape_to_0d", lambda x: ag.reshape(x, ()), [(1, 1)]),
        ("view_method", lambda x: x.view(3, 8), [(2, 3, 4)]),
        ("permute_dims", lambda x: ag.permute_dims(x, (2, 0, 1)), [(2, 3, 4)]),
        ("permute_dims_negative", lambda x: ag.permute_dims(x, (-1, 0, -2)), [(2, 3, 4)]),
        ("T", lambda x: x.T, [(2, 3, 4)]),
        ("swapaxes", lambda x: ag.swapaxes(x, 0, 2), [(2, 3, 4)]),
        ("swapaxes_negative", lambda x: ag.swapaxes(x, -1, -2), [(2, 3, 4)]),
        ("matrix_transpose", ag.matrix_transpose, [(3, 4)]),
        ("matrix_transpose_batched", ag.matrix_transpose, [(2, 3, 4)]),
        ("expand_dims_0", lambda x: ag.expand_dims(x, 0), [(2, 3)]),
        ("expand_dims_1", lambda x: ag.expand_dims(x, 1), [(2, 3)]),
        ("expand_dims_-1", lambda x: ag.expand_dims(x, -1), [(2, 3)]),
        ("squeeze_all", ag.squeeze, [(2, 1, 3, 1)]),
        ("squeeze_axis", lambda x: ag.squeeze(x, 1), [(2, 1, 3, 1)]),
        ("squeeze_axes", lambda x: ag.squeeze(x, (1, -1)), [(2, 1, 3, 1)]),
        ("flatten", ag.flatten, [(2, 3, 4)]),
        ("flatten_from_1", lambda x: ag.flatten(x, 1), [(2, 3, 4)]),
        ("flatten_0_to_1", lambda x: ag.flatten(x, 0, 1), [(2, 3, 4)]),
        ("broadcast_to", lambda x: ag.broadcast_to(x, (2, 3, 4)), [(3, 1)]),
        ("broadcast_to_from_0d", lambda x: ag.broadcast_to(x, (2, 3)), [()]),
        ("concat_axis0", lambda a, b, c: ag.concat([a, b, c], axis=0), [(1, 3), (2, 3), (3, 3)]),
        ("concat_axis1", lambda a, b, c: ag.concat([a, b, c], axis=1), [(2, 1, 2), (2, 3, 2), (2, 2, 2)]),
        ("concat_axis-1", lambda a, b, c: ag.concat([a, b, c], axis=-1), [(2, 1), (2, 3), (2, 2)]),
        ("concat_same_input_twice", lambda a, b: ag.concat([a, b, a], axis=0), [(2, 3), (1, 3)]),
        ("stack_axis0", lambda a, b, c: ag.stack([a, b, c], axis=0), [(2, 3)] * 3),
        ("stack_axis1", lambda a, b, c: ag.stack([a, b, c], axis=1), [(2, 3)] * 3),
        ("stack_axis-1", lambda a, b, c: ag.stack([a, b, c], axis=-1), [(2, 3)] * 3),
        ("take_axis1_repeated", lambda x: ag.take(x, [0, 2, 0], axis=1), [(2, 3, 4)]),
    ]
)


@pytest.mark.parametrize("fn, shapes", SHAPE_OPS)
def test_shape_op(float64_backend, fn, shapes):
    check(fn, *(normal(shape, seed=i) for i, shape in enumerate(shapes)))


# --- indexing -------------------------------------------------------------------------------------
INDEXING = table(
    [
        ("x[1:3]", lambda x: x[1:3], (4, 3)),
        ("x[::2]", lambda x: x[::2], (4, 3)),
        ("x[1::2, ::2]", lambda x: x[1::2, ::2], (4, 3)),
        ("x[-3:-1, -2:]", lambda x: x[-3:-1, -2:], (4, 3)),
        ("x[::-1]", lambda x: x[::-1], (4, 3)),
        ("x[3:0:-2, ::-1]", lambda x: x[3:0:-2, ::-1], (4, 3)),
        ("x[None, ..., -2::-1]", lambda x: x[None, ..., -2::-1], (2, 3, 4)),
        ("x[1, :, ::-1]", lambda x: x[1, :, ::-1], (4, 3, 2)),
        ("x[:0:-1] then x[[0, 0]]", lambda x: x[:0:-1][[0, 0]], (4, 3)),
        ("x[:, -1]", lambda x: x[:, -1], (4, 3)),
        ("x[2]", lambda x: x[2], (4, 3)),
        ("x[-1, 0]", lambda x: x[-1, 0], (4, 3)),
        ("x[None]", lambda x: x[None], (4, 3)),
        ("x[:, None, 1:]", lambda x: x[:, None, 1:], (4, 3)),
        ("x[..., 1]", lambda x: x[..., 1], (4, 3, 2)),
        ("x[1, ..., ::2]", lambda x: x[1, ..., ::2], (4, 3, 2)),
        ("x[..., None]", lambda x: x[..., None], (4, 3)),
        ("x[[0, 2, 0, 0]]", lambda x: x[[0, 2, 0, 0]], (4, 3)),
        ("x[[-1, 0, -1]]", lambda x: x[[-1, 0, -1]], (4, 3)),
        ("x[2-D index]", lambda x: x[np.array([[0, 1], [3, 0]])], (4, 3)),
        ("x[:, [2, 0, 2]]", lambda x: x[:, [2, 0, 2]], (4, 3)),
        ("x[1:, [0, 0]]", lambda x: x[1:, [0, 0]], (4, 3)),
        ("x[rows, cols]", lambda x: x[[0, 1, 1, 0], [2, 0, 2, 2]], (4, 3)),
        ("x[rows, cols] broadcast", lambda x: x[np.array([[0], [3]]), np.array([1, 2, 1])], (4, 3)),
        ("x[..., [1, 1, 0]]", lambda x: x[..., [1, 1, 0]], (4, 3, 2)),
        ("x[tensor index]", lambda x: x[ag.tensor([3, 0, 3])], (4, 3)),
    ]
)


@pytest.mark.parametrize("fn, shape", INDEXING)
def test_indexing(float64_backend, fn, shape):
    check(fn, normal(shape))


SCATTER_ADD = table(
    [
        ("x[[0, 0, 1]]", [0, 0, 1], [[2, 2], [1, 1], [0, 0]]),
        ("x[[0, 0, 2], [1, 1, 0]]", ([0, 0, 2], [1, 1, 0]), [[0, 2], [0, 0], [1, 0]]),
        ("x[:, [1, 1]]", (slice(None), [1, 1]), [[0, 2], [0, 2], [0, 2]]),
    ]
)


@pytest.mark.parametrize("key, expected", SCATTER_ADD)
def test_gather_backward_adds_repeated_indices(backend, key, expected):
    """The backward of a gather is a scatter-add: a repeated index gets every contribution."""
    x = ag.ones((3, 2), requires_grad=True)
    x[key].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.asarray(expected, dtype=np.float32))


# --- dtypes and comparisons -----------------------------------------------------------------------
ASTYPE_CHAINS = table(
    [
        ("float64->float32", "float64", ["float32"]),
        ("float64->float32->float64", "float64", ["float32", "float64"]),
        ("float32->float64", "float32", ["float64"]),
        ("float32->float64->float32", "float32", ["float64", "float32"]),
    ]
)


@pytest.mark.parametrize("dtype, chain", ASTYPE_CHAINS)
def test_astype_gradient_has_the_input_dtype(float64_backend, dtype, chain):
    """A cast through float32 is not checkable against float64 differences; its gradient
    must still come back in the input's dtype, with the values passed through."""
    x = ag.tensor(normal((2, 3)), dtype=dtype, requires_grad=True)
    y = x
    for target in chain:
        y = ag.astype(y, target)
    (y * 3.0).sum().backward()
    assert x.grad.dtype == dtype
    assert_close(x.grad, np.full((2, 3), 3.0), dtype="float32")


COMPARISONS = table(
    [
        ("<", operator.lt, ag.less),
        ("<=", operator.le, ag.less_equal),
        (">", operator.gt, ag.greater),
        (">=", operator.ge, ag.greater_equal),
        ("==", operator.eq, ag.equal),
        ("!=", operator.ne, ag.not_equal),
    ]
)


@pytest.mark.parametrize("form", ["tensor-tensor", "tensor-scalar", "scalar-tensor"])
@pytest.mark.parametrize("op, function", COMPARISONS)
def test_comparison_is_bool_and_not_differentiable(backend, op, function, form):
    a = ag.tensor([[0.5, 1.0, 2.0]], requires_grad=True)
    b = ag.tensor([[1.0, 1.0, 1.0], [0.0, 2.0, 2.0]], requires_grad=True)
    left, right = {"tensor-tensor": (a, b), "tensor-scalar": (a, 1.0), "scalar-tensor": (1.0, a)}[form]
    expected = op(*(host(v) if isinstance(v, ag.Tensor) else v for v in (left, right)))
    for out in (op(left, right), function(left, right)):
        assert out.dtype == "bool"
        assert out.requires_grad is False
        assert out.is_leaf
        np.testing.assert_array_equal(out.numpy(), expected)
