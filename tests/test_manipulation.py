"""The standard's manipulation, searching, sorting and set functions, on every backend.

The functions that move values (flip, roll, repeat, tile, unstack, moveaxis, broadcast_arrays,
take_along_axis, sort) are differentiable: their gradients are checked against central
differences (first and second order) and against PyTorch. The integer-valued ones (argmax,
nonzero, argsort, searchsorted, unique_*...) are checked against numpy's forward, with ties,
descending stable sorts and NaNs, and must stay outside the graph.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import autograd_core as ag
from helpers import host
from torch_oracle import Arg, compare_with_torch, const, normal


def table(cases):
    """pytest params from (id, *values) tuples."""
    return [pytest.param(*values, id=name) for name, *values in cases]


def distinct(shape, seed=0):
    """Values at least 0.25 apart in random order: sorts have no ties, so finite differences
    never swap two elements."""
    n = math.prod(shape)
    return (np.random.default_rng(seed).permutation(n).reshape(shape) - n / 2 + 0.1) * 0.25


def leaf(values):
    return ag.tensor(np.asarray(values, dtype=np.float64), dtype="float64", requires_grad=True)


def ties(*shape: int) -> Arg:
    """Small integers as floats: many equal elements, for the stable order of a sort."""
    return Arg(lambda r: r.integers(0, 3, shape).astype(np.float64))


# --- gradients against central differences -----------------------------------------------------
# (id, fn, input shapes); index arrays are built inside fn, on the backend under test.
GRADIENT_CASES = table(
    [
        ("flip_all", ag.flip, [(2, 3, 4)]),
        ("flip_axis-1", lambda x: ag.flip(x, axis=-1), [(2, 3, 4)]),
        ("flip_axes(0,-1)", lambda x: ag.flip(x, axis=(0, -1)), [(2, 3, 4)]),
        ("flip_0d", ag.flip, [()]),
        ("roll_flattened", lambda x: ag.roll(x, 5), [(2, 3, 4)]),
        ("roll_axis1", lambda x: ag.roll(x, -1, axis=1), [(2, 3, 4)]),
        ("roll_tuple(1,-2)_axes(0,-1)", lambda x: ag.roll(x, (1, -2), axis=(0, -1)), [(2, 3, 4)]),
        ("roll_int_over_axes(1,2)", lambda x: ag.roll(x, 2, axis=(1, 2)), [(2, 3, 4)]),
        ("repeat_int_flattened", lambda x: ag.repeat(x, 2), [(2, 3)]),
        ("repeat_int_axis-1", lambda x: ag.repeat(x, 3, axis=-1), [(2, 3, 2)]),
        ("repeat_numpy_int_axis0", lambda x: ag.repeat(x, np.int64(2), axis=0), [(2, 3)]),
        ("repeat_counts_axis1", lambda x: ag.repeat(x, ag.asarray([2, 0, 3]), axis=1), [(2, 3, 2)]),
        ("repeat_one_count_axis0", lambda x: ag.repeat(x, ag.asarray([3]), axis=0), [(2, 3)]),
        ("repeat_numpy_counts_flattened", lambda x: ag.repeat(x, np.array([1, 2, 0, 1, 3, 1])), [(2, 3)]),
        ("tile_same_rank", lambda x: ag.tile(x, (2, 1, 3)), [(2, 3, 2)]),
        ("tile_more_repetitions", lambda x: ag.tile(x, (2, 1, 2)), [(2, 3)]),
        ("tile_fewer_repetitions", lambda x: ag.tile(x, (3,)), [(2, 3)]),
        ("unstack_axis0_reversed", lambda x: ag.stack(ag.unstack(x)[::-1]), [(3, 4)]),
        ("unstack_axis-1", lambda x: ag.concat(ag.unstack(x, axis=-1)), [(2, 3, 4)]),
        ("moveaxis_0_to_-1", lambda x: ag.moveaxis(x, 0, -1), [(2, 3, 4)]),
        ("moveaxis_(0,-1)_to_(-1,1)", lambda x: ag.moveaxis(x, (0, -1), (-1, 1)), [(2, 3, 4)]),
        ("broadcast_arrays", lambda a, b: ag.stack(ag.broadcast_arrays(a, b)), [(3, 1), (4,)]),
        ("broadcast_arrays_three", lambda a, b, c: ag.concat(ag.broadcast_arrays(a, b, c)), [(2, 1, 3), (4, 1), ()]),
        (
            "take_along_axis_last_repeated",
            lambda x: ag.take_along_axis(x, ag.asarray([[0, 2, 2, 1], [1, 1, 1, 1]])),
            [(2, 3)],
        ),
        (
            "take_along_axis_negative_axis0",
            lambda x: ag.take_along_axis(x, ag.asarray([[-1, 0, -1], [0, 0, -2]]), axis=0),
            [(2, 3)],
        ),
        (
            "take_along_axis_broadcast_indices",
            lambda x: ag.take_along_axis(x, ag.asarray([[[2], [0], [2], [1], [2]]]), axis=1),
            [(2, 3, 4)],
        ),
        (
            "take_along_axis_broadcast_x",
            lambda x: ag.take_along_axis(x, ag.asarray([[[0, 1]], [[1, 1]], [[0, 0]]]), axis=-1),
            [(1, 2, 2)],
        ),
        ("sort_last", ag.sort, [(2, 3, 4)]),
        ("sort_axis0_descending", lambda x: ag.sort(x, axis=0, descending=True), [(3, 4)]),
        ("sort_axis-2_unstable", lambda x: ag.sort(x, axis=-2, stable=False), [(2, 3, 4)]),
        ("sort_0d", ag.sort, [()]),
    ]
)


@pytest.mark.parametrize("fn, shapes", GRADIENT_CASES)
def test_gradient(float64_backend, fn, shapes):
    assert ag.gradcheck(fn, [leaf(distinct(shape, seed=i)) for i, shape in enumerate(shapes)]) is True


SECOND_ORDER = table(
    [
        ("flip", lambda x: ag.flip(x, axis=(0, -1)) ** 2, (2, 3)),
        ("roll", lambda x: ag.roll(x, (1, 2), axis=(0, 1)) ** 2, (2, 3)),
        ("repeat_counts", lambda x: ag.repeat(x, ag.asarray([2, 0, 1]), axis=1) ** 2, (2, 3)),
        ("tile", lambda x: ag.tile(x, (2, 1)) ** 2, (2, 3)),
        ("unstack", lambda x: ag.unstack(x, axis=1)[2] ** 2, (2, 3)),
        ("take_along_axis", lambda x: ag.take_along_axis(x, ag.asarray([[2, 2], [0, -1]]), axis=1) ** 2, (2, 3)),
        ("sort_descending", lambda x: ag.sort(x, axis=0, descending=True) ** 2, (3, 2)),
    ]
)


@pytest.mark.parametrize("fn, shape", SECOND_ORDER)
def test_second_order(float64_backend, fn, shape):
    """The VJPs run with create_graph=True through the namespace's own flip, roll, take and
    index_add (squared, so the second derivative is not zero)."""
    assert ag.gradgradcheck(fn, [leaf(distinct(shape))]) is True


# --- values and gradients against PyTorch --------------------------------------------------------
def case(name, ours, theirs, *args):
    return pytest.param(ours, theirs, args, id=name)


TORCH_CASES = [
    case("flip", lambda x: ag.flip(x, axis=(0, -1)), lambda x: torch.flip(x, (0, -1)), normal(2, 3, 4)),
    case("flip_all", ag.flip, lambda x: torch.flip(x, (0, 1, 2)), normal(2, 3, 4)),
    case("roll", lambda x: ag.roll(x, (1, -2), axis=(0, 2)), lambda x: torch.roll(x, (1, -2), (0, 2)), normal(2, 3, 4)),
    case("roll_flattened", lambda x: ag.roll(x, 7), lambda x: torch.roll(x, 7), normal(2, 3, 4)),
    case(
        "repeat_interleave_int",
        lambda x: ag.repeat(x, 3, axis=1),
        lambda x: torch.repeat_interleave(x, 3, dim=1),
        normal(2, 3, 2),
    ),
    case(
        "repeat_interleave_flattened", lambda x: ag.repeat(x, 2), lambda x: torch.repeat_interleave(x, 2), normal(2, 3)
    ),
    case(
        "repeat_interleave_tensor",
        lambda x, r: ag.repeat(x, r, axis=0),
        lambda x, r: torch.repeat_interleave(x, r, dim=0),
        normal(3, 2),
        const([2, 0, 3]),
    ),
    case("tile", lambda x: ag.tile(x, (2, 1, 3)), lambda x: torch.tile(x, (2, 1, 3)), normal(3, 2)),
    case(
        "unbind",
        lambda x: ag.stack(ag.unstack(x, axis=1)[::-1]),
        lambda x: torch.stack(torch.unbind(x, 1)[::-1]),
        normal(2, 3, 4),
    ),
    case(
        "movedim", lambda x: ag.moveaxis(x, (0, 1), (2, 0)), lambda x: torch.movedim(x, (0, 1), (2, 0)), normal(2, 3, 4)
    ),
    case(
        "take_along_dim",
        lambda x, i: ag.take_along_axis(x, i, axis=1),
        lambda x, i: torch.take_along_dim(x, i, 1),
        normal(2, 3, 2),
        const([[[2, 0], [2, 2], [1, 2], [0, 0]], [[1, 1], [0, 2], [2, 2], [2, 1]]]),
    ),
    case(
        "take_along_dim_broadcast",
        lambda x, i: ag.take_along_axis(x, i, axis=1),
        lambda x, i: torch.take_along_dim(x, i, 1),
        normal(2, 3, 4),
        const([[[2], [0], [2], [2], [1]]]),
    ),
    case("sort", lambda x: ag.sort(x, axis=1), lambda x: torch.sort(x, dim=1, stable=True).values, normal(2, 3, 4)),
    case(
        "sort_descending",
        lambda x: ag.sort(x, axis=0, descending=True),
        lambda x: torch.sort(x, dim=0, descending=True, stable=True).values,
        normal(3, 4),
    ),
    # with ties, the gradient of each position goes to the element the stable order put there
    case("sort_ties", ag.sort, lambda x: torch.sort(x, stable=True).values, ties(3, 8)),
    case(
        "sort_ties_descending",
        lambda x: ag.sort(x, descending=True),
        lambda x: torch.sort(x, descending=True, stable=True).values,
        ties(3, 8),
    ),
]


@pytest.mark.parametrize(("ours", "theirs", "args"), TORCH_CASES)
def test_matches_torch(float64_backend, ours, theirs, args):
    compare_with_torch(ours, theirs, args)


# --- forward values against numpy, integer dtypes kept ---------------------------------------------
X = np.arange(24).reshape(2, 3, 4) * 7 % 11
MANIPULATION_FORWARD = table(
    [
        ("flip", lambda xp, x: xp.flip(x, axis=(0, 2))),
        ("roll", lambda xp, x: xp.roll(x, (2, -1), axis=(1, 0))),
        ("roll_flattened", lambda xp, x: xp.roll(x, -5)),
        ("repeat_int", lambda xp, x: xp.repeat(x, 2, axis=-2)),
        ("repeat_counts", lambda xp, x: xp.repeat(x, np.array([0, 2, 1, 3]), axis=2)),
        ("repeat_flattened", lambda xp, x: xp.repeat(x, 3)),
        ("tile", lambda xp, x: xp.tile(x, (2, 1, 1, 2))),
        ("moveaxis", lambda xp, x: xp.moveaxis(x, (2, 0), (0, 1))),
        ("unstack", lambda xp, x: xp.stack(xp.unstack(x, axis=1))),
        ("take_along_axis", lambda xp, x: xp.take_along_axis(x, np.array([[[3, -1, 0]]]), axis=2)),
        ("broadcast_arrays", lambda xp, x: xp.broadcast_arrays(x[:, :1], x[0])[0]),
        ("sort", lambda xp, x: xp.sort(x, axis=1)),
    ]
)


@pytest.mark.parametrize("fn", MANIPULATION_FORWARD)
def test_forward_matches_numpy(backend, fn):
    """On an int64 tensor: the same values as numpy, the dtype kept."""
    out = fn(ag, ag.asarray(X))
    assert out.dtype == ag.int64
    np.testing.assert_array_equal(out.numpy(), fn(np, X))


# --- searching, sorting and sets: integer results, outside the graph --------------------------------
def with_ties(seed=0):
    return np.random.default_rng(seed).integers(0, 3, (3, 4, 5)).astype(np.float64)


def assert_index_result(out, expected):
    assert isinstance(out, ag.Tensor)
    assert out.dtype == ag.int64
    assert not out.requires_grad and out.is_leaf
    np.testing.assert_array_equal(host(out), expected)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin_first_of_ties(backend, name, axis, keepdims):
    x = with_ties()
    out = getattr(ag, name)(ag.tensor(x, requires_grad=True), axis=axis, keepdims=keepdims)
    assert_index_result(out, getattr(np, name)(x, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 1, -1, (0, 2)])
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
def test_count_nonzero(backend, dtype, axis, keepdims):
    x = with_ties().astype(dtype)
    out = ag.count_nonzero(ag.asarray(x), axis=axis, keepdims=keepdims)
    assert_index_result(out, np.count_nonzero(x, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("x", [with_ties()[0, 0], with_ties(), with_ties() > 1], ids=["1d", "3d", "bool"])
def test_nonzero(backend, x):
    out = ag.nonzero(ag.asarray(x))
    assert isinstance(out, tuple) and len(out) == x.ndim
    for mine, expected in zip(out, np.nonzero(x)):
        assert_index_result(mine, expected)


SORTED = np.array([1.0, 2.0, 2.0, 2.0, 3.0, 5.0])
SEARCHED = np.array([[0.0, 1.0, 2.0], [2.5, 5.0, 9.0]])


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("values", [SEARCHED, SEARCHED[1, 1], SEARCHED[:0]], ids=["2d", "0d", "empty"])
def test_searchsorted(backend, values, side):
    out = ag.searchsorted(ag.asarray(SORTED), ag.asarray(values), side=side)
    assert_index_result(out, np.searchsorted(SORTED, values, side=side))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_sorter(backend, side):
    shuffled = np.array([3.0, 2.0, 5.0, 1.0, 2.0, 2.0])
    sorter = np.argsort(shuffled, kind="stable")
    out = ag.searchsorted(ag.asarray(shuffled), ag.asarray(SEARCHED), side=side, sorter=ag.asarray(sorter))
    assert_index_result(out, np.searchsorted(shuffled, SEARCHED, side=side, sorter=sorter))


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("axis", [0, -1, 1])
def test_argsort_and_sort_stable_with_ties(backend, axis, descending):
    """Equal elements keep their order, descending too (numpy's reference: the stable
    ascending order of -x); sort's values are x gathered by it."""
    x = with_ties()
    expected = np.argsort(-x if descending else x, axis=axis, kind="stable")
    t = ag.asarray(x)
    assert_index_result(ag.argsort(t, axis=axis, descending=descending), expected)
    np.testing.assert_array_equal(
        ag.sort(t, axis=axis, descending=descending).numpy(), np.take_along_axis(x, expected, axis=axis)
    )


@pytest.mark.parametrize("descending", [False, True])
def test_sort_nan_with_the_largest(backend, descending):
    """NaNs sort after every number ascending and before them descending, as in PyTorch."""
    x = np.array([2.0, np.nan, -1.0, 3.0])
    out = ag.sort(ag.asarray(x), descending=descending).numpy()
    expected = torch.sort(torch.tensor(x), descending=descending).values.numpy()
    np.testing.assert_array_equal(out, expected)


def test_sort_0d_is_one_element(backend):
    x = ag.tensor(2.5, dtype="float64", requires_grad=True)
    assert_index_result(ag.argsort(x), np.asarray(0))
    y = ag.sort(x, axis=0)
    assert y.shape == () and y.item() == 2.5
    (y * 3.0).backward()
    assert x.grad.item() == 3.0


UNIQUE_INPUT = np.array([[3.0, 1.0, np.nan, 3.0], [0.0, -0.0, np.nan, 1.0], [2.0, 3.0, 3.0, 0.0]])


def by_value(*columns):
    """Rows of (value, ...) in value order, NaNs last (by their other columns): the set
    functions' order is the backend's choice."""
    rows = sorted(
        zip(*(np.asarray(c).tolist() for c in columns)),
        key=lambda row: (math.isnan(row[0]), 0.0 if math.isnan(row[0]) else row[0], row[1:]),
    )
    return np.array(rows, dtype=np.float64)


def test_unique_all_matches_numpy(backend):
    """NaNs are each distinct, -0.0 and 0.0 are one value; indices are first occurrences."""
    out = ag.unique_all(ag.asarray(UNIQUE_INPUT))
    assert out._fields == ("values", "indices", "inverse_indices", "counts")
    ref = np.unique_all(UNIQUE_INPUT)
    for field in ("indices", "inverse_indices", "counts"):
        assert getattr(out, field).dtype == ag.int64
    np.testing.assert_array_equal(
        by_value(out.values.numpy(), out.indices.numpy(), out.counts.numpy()),
        by_value(ref.values, ref.indices, ref.counts),
    )
    assert out.inverse_indices.shape == UNIQUE_INPUT.shape
    np.testing.assert_array_equal(out.values.numpy()[out.inverse_indices.numpy()], UNIQUE_INPUT)


def test_unique_counts_and_values_match_numpy(backend):
    x = ag.asarray(UNIQUE_INPUT)
    counts = ag.unique_counts(x)
    assert counts._fields == ("values", "counts")
    assert counts.counts.dtype == ag.int64
    ref = np.unique_counts(UNIQUE_INPUT)
    np.testing.assert_array_equal(
        by_value(counts.values.numpy(), counts.counts.numpy()), by_value(ref.values, ref.counts)
    )
    np.testing.assert_array_equal(by_value(ag.unique_values(x).numpy()), by_value(np.unique_values(UNIQUE_INPUT)))


def test_unique_inverse_reconstructs(backend):
    x = with_ties()
    values, inverse = ag.unique_inverse(ag.asarray(x))
    assert ag.unique_inverse(ag.asarray(x))._fields == ("values", "inverse_indices")
    assert_index_result(inverse, np.unique_inverse(x).inverse_indices)
    np.testing.assert_array_equal(values.numpy()[inverse.numpy()], x)


def test_unique_of_integers_and_empty(backend):
    x = np.array([5, 2, 5, 5, 7])
    values, indices, inverse, counts = ag.unique_all(ag.asarray(x))
    assert values.dtype == ag.int64
    assert (values.tolist(), indices.tolist(), inverse.tolist(), counts.tolist()) == (
        [2, 5, 7],
        [1, 0, 4],
        [1, 0, 1, 1, 2],
        [1, 3, 1],
    )
    empty = ag.unique_all(ag.asarray(np.zeros((0,))))
    assert [t.shape for t in empty] == [(0,), (0,), (0,), (0,)]


NOT_DIFFERENTIABLE = table(
    [
        ("argmax", ag.argmax),
        ("argmin", lambda x: ag.argmin(x, axis=0)),
        ("count_nonzero", ag.count_nonzero),
        ("nonzero", lambda x: ag.nonzero(x)[1]),
        ("argsort", ag.argsort),
        ("searchsorted", lambda x: ag.searchsorted(ag.reshape(x, (-1,)), x)),
        ("unique_values", ag.unique_values),
        ("unique_all", lambda x: ag.unique_all(x).values),
        ("unique_counts", lambda x: ag.unique_counts(x).values),
        ("unique_inverse", lambda x: ag.unique_inverse(x).values),
    ]
)


@pytest.mark.parametrize("fn", NOT_DIFFERENTIABLE)
def test_outside_the_graph(backend, fn):
    """Integer results, and the set functions' values (no gradient, as torch.unique)."""
    out = fn(ag.tensor([[1.0, 0.0], [2.0, 3.0]], requires_grad=True))
    assert not out.requires_grad and out.is_leaf


# --- errors ------------------------------------------------------------------------------------------
ERRORS = table(
    [
        ("take_along_axis_past_the_end", lambda x: ag.take_along_axis(x, ag.asarray([[0, 3]]), axis=1), IndexError),
        (
            "take_along_axis_before_the_start",
            lambda x: ag.take_along_axis(x, ag.asarray([[-4], [0]]), axis=-1),
            IndexError,
        ),
        ("take_along_axis_rank", lambda x: ag.take_along_axis(x, ag.asarray([0, 1])), ValueError),
        ("take_along_axis_shapes", lambda x: ag.take_along_axis(x, ag.asarray([[0], [1], [2]])), ValueError),
        ("unstack_axis", lambda x: ag.unstack(x, axis=2), IndexError),
        ("flip_axis", lambda x: ag.flip(x, axis=(0, -3)), IndexError),
        ("roll_lengths", lambda x: ag.roll(x, (1, 2), axis=0), ValueError),
        ("roll_tuple_without_axis", lambda x: ag.roll(x, (1, 2)), ValueError),
        ("moveaxis_repeated", lambda x: ag.moveaxis(x, (0, 1), (1, 1)), ValueError),
        ("moveaxis_lengths", lambda x: ag.moveaxis(x, (0, 1), 0), ValueError),
        ("repeat_negative", lambda x: ag.repeat(x, -1), ValueError),
        ("repeat_negative_count", lambda x: ag.repeat(x, ag.asarray([1, -1, 2]), axis=1), ValueError),
        ("repeat_counts_length", lambda x: ag.repeat(x, ag.asarray([1, 2]), axis=1), ValueError),
        ("nonzero_0d", lambda x: ag.nonzero(x[0, 0]), ValueError),
        ("sort_axis", lambda x: ag.sort(x, axis=2), IndexError),
        ("searchsorted_2d", lambda x: ag.searchsorted(x, x), ValueError),
    ]
)


@pytest.mark.parametrize("fn, error", ERRORS)
def test_errors(backend, fn, error):
    """Refused on every backend alike (jax would clamp an out-of-range index silently)."""
    with pytest.raises(error):
        fn(ag.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
