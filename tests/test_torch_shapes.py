"""`autograd_core.torch`'s shape, joining, splitting and indexing functions where PyTorch's op
database does not look: 0-d and empty inputs through every indexing op, PyTorch's calling forms
(a positional dim, tuples of dims, ``as_tuple``), which results are views and which copies, and
the inputs PyTorch refuses. Each case is one call written for both modules (``m`` is
``torch`` or ``autograd_core.torch``), compared on values, shapes, dtypes and gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import autograd_core.torch as at
from helpers import host

RNG = np.random.default_rng(0)
SCALAR = np.array(1.5)
VECTOR = RNG.standard_normal(5)
MATRIX = RNG.standard_normal((3, 4))
EMPTY = np.zeros((0,))
EMPTY_ROWS = np.zeros((2, 0))
NONE = np.zeros((0,), dtype=np.int64)


def ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def at_0(value: int = 0) -> np.ndarray:
    return np.array(value, dtype=np.int64)


# name: (the call, its inputs: floating ones are differentiated)
CASES = {
    # 0-d inputs, as PyTorch takes them: one dimension of size 1 for dim 0 or -1
    "gather_0d": (lambda m, x, i: m.gather(x, 0, i), [SCALAR, at_0()]),
    "gather_0d_vector_index": (lambda m, x, i: m.gather(x, -1, i), [SCALAR, ints(0, 0)]),
    "index_select_0d": (lambda m, x, i: m.index_select(x, 0, i), [SCALAR, at_0()]),
    "index_select_0d_index": (lambda m, x, i: m.index_select(x, 1, i), [MATRIX, at_0(2)]),
    "index_add_0d": (lambda m, x, i, s: m.index_add(x, -1, i, s, alpha=2), [SCALAR, at_0(), SCALAR * 2]),
    "index_copy_0d": (lambda m, x, i, s: m.index_copy(x, 0, i, s), [SCALAR, ints(0), SCALAR * 2]),
    "index_fill_0d": (lambda m, x, i: m.index_fill(x, 0, i, -1.0), [SCALAR, ints(0)]),
    "index_fill_0d_index": (lambda m, x, i: m.index_fill(x, 1, i, 2.0), [MATRIX, at_0(1)]),
    "index_reduce_0d": (lambda m, x, i, s: x.index_reduce(0, i, s, "amax"), [SCALAR, ints(0), SCALAR * 2]),
    "scatter_0d": (lambda m, x, i: m.scatter(x, 0, i, 3.0), [SCALAR, at_0()]),
    "scatter_add_0d": (lambda m, x, i, s: m.scatter_add(x, 0, i, s), [SCALAR, at_0(), SCALAR * 3]),
    "scatter_reduce_0d": (lambda m, x, i, s: m.scatter_reduce(x, 0, i, s, "prod"), [SCALAR, at_0(), SCALAR * 2]),
    "take_along_dim_0d": (lambda m, x, i: m.take_along_dim(x, i), [SCALAR, at_0()]),
    "put_0d": (lambda m, x, i, s: m.put(x, i, s, True), [SCALAR, at_0(), SCALAR]),
    "index_put_0d_index": (lambda m, x, i, v: m.index_put(x, (i,), v), [MATRIX, at_0(2), VECTOR[:4]]),
    "masked_select_0d": (lambda m, x, k: m.masked_select(x, k), [SCALAR, np.array(True)]),
    "masked_fill_0d_mask": (lambda m, x, k: m.masked_fill(x, k, 2.0), [MATRIX, np.array(True)]),
    "nonzero_0d": (lambda m, x: m.nonzero(x), [SCALAR]),
    "nonzero_0d_tuple": (lambda m, x: m.nonzero(x, as_tuple=True), [SCALAR]),
    "argwhere_0d": (lambda m, x: m.argwhere(x), [SCALAR]),
    "squeeze_0d": (lambda m, x: m.squeeze(x, -1), [SCALAR]),
    "transpose_0d": (lambda m, x: m.transpose(x, -1, 0), [SCALAR]),
    "flip_0d": (lambda m, x: m.flip(x, (0,)), [SCALAR]),
    "unfold_0d": (lambda m, x: x.unfold(0, 1, 1), [SCALAR]),
    "repeat_interleave_0d": (lambda m, x: m.repeat_interleave(x, 3), [SCALAR]),
    "stack_0d": (lambda m, x, y: m.stack([x, y], -1), [SCALAR, SCALAR]),
    "column_stack_0d": (lambda m, x, y: m.column_stack([x, y]), [SCALAR, VECTOR[:1]]),
    "dstack_0d": (lambda m, x, y: m.dstack([x, y]), [SCALAR, SCALAR]),
    "kron_0d": (lambda m, x, y: m.kron(x, y), [SCALAR, MATRIX]),
    "select_scatter_0d": (lambda m, x, s: m.select_scatter(x, s, 0, -1), [VECTOR, SCALAR]),
    "unique_consecutive_0d": (lambda m, x: m.unique_consecutive(x, return_inverse=True, return_counts=True), [SCALAR]),
    # empty inputs
    "gather_empty": (lambda m, x, i: m.gather(x, 1, i), [MATRIX, np.zeros((3, 0), np.int64)]),
    "index_select_empty": (lambda m, x, i: m.index_select(x, 1, i), [MATRIX, NONE]),
    "index_add_empty": (lambda m, x, i, s: m.index_add(x, 0, i, s), [MATRIX, NONE, np.zeros((0, 4))]),
    "index_copy_empty": (lambda m, x, i, s: m.index_copy(x, 1, i, s), [MATRIX, NONE, np.zeros((3, 0))]),
    "index_fill_empty": (lambda m, x, i: m.index_fill(x, 1, i, 2.0), [MATRIX, NONE]),
    "index_reduce_empty": (lambda m, x, i, s: x.index_reduce(0, i, s, "prod"), [MATRIX, NONE, np.zeros((0, 4))]),
    "scatter_empty": (lambda m, x, i, s: m.scatter(x, 0, i, s), [MATRIX, np.zeros((0, 4), np.int64), MATRIX[:0]]),
    "take_along_dim_empty": (lambda m, x, i: m.take_along_dim(x, i, 1), [MATRIX, np.zeros((3, 0), np.int64)]),
    "put_empty": (lambda m, x, i, s: m.put(x, i, s), [MATRIX, NONE, EMPTY]),
    "index_put_empty_mask": (lambda m, x, k, v: m.index_put(x, (k,), v), [MATRIX, np.zeros(3, bool), SCALAR]),
    "masked_scatter_empty_mask": (lambda m, x, k, s: m.masked_scatter(x, k, s), [MATRIX, MATRIX < -9, EMPTY]),
    "masked_fill_empty": (lambda m, x, k: m.masked_fill(x, k, 1.0), [EMPTY_ROWS, np.zeros((2, 0), bool)]),
    "nonzero_empty": (lambda m, x: m.nonzero(x), [EMPTY_ROWS]),
    "nonzero_empty_tuple": (lambda m, x: m.nonzero(x, as_tuple=True), [EMPTY_ROWS]),
    "nonzero_static_padded": (lambda m, x: m.nonzero_static(x, size=14, fill_value=7), [MATRIX]),
    "squeeze_empty": (lambda m, x: m.squeeze(x), [np.zeros((1, 0, 1))]),
    "cat_empty_vector": (lambda m, x, y: m.cat([x, y], 1), [EMPTY, MATRIX]),
    "cat_empty_vector_dtype": (lambda m, x, y: m.cat([x, y.int()]), [EMPTY, MATRIX]),
    "cat_all_empty": (lambda m, x, y: m.cat((x, y)), [EMPTY, EMPTY]),
    "block_diag_empty": (lambda m, x, y: m.block_diag(x, y), [EMPTY_ROWS, MATRIX]),
    "cartesian_prod_empty": (lambda m, x, y: m.cartesian_prod(x, y), [EMPTY, VECTOR]),
    "tensor_split_empty": (lambda m, x: m.tensor_split(x, 3, 1), [EMPTY_ROWS]),
    "unfold_empty": (lambda m, x: x.unfold(1, 2, 1), [np.zeros((0, 4))]),
    "unfold_no_window": (lambda m, x: x.unfold(1, 0, 1), [MATRIX]),
    "diagflat_empty": (lambda m, x: m.diagflat(x, 1), [EMPTY]),
    "mH_empty": (lambda m, x: x.mH, [np.zeros((2, 0, 3))]),
    "unique_consecutive_empty": (lambda m, x: m.unique_consecutive(x, return_inverse=True), [EMPTY_ROWS]),
    "combinations_none": (lambda m, x: m.combinations(x, 0), [VECTOR]),
    # PyTorch's forms
    "stack_positional_dim": (lambda m, x, y: m.stack((x, y), 1), [MATRIX, MATRIX]),
    "cat_axis_keyword": (lambda m, x, y: m.cat((x, y), axis=-1), [MATRIX, MATRIX]),
    "squeeze_kept_dim": (lambda m, x: m.squeeze(x, (0, 2)), [np.zeros((1, 3, 2))]),
    "flip_dims_keyword": (lambda m, x: m.flip(x, dims=(0, -1)), [MATRIX]),
    "masked_fill_broadcasts_input": (lambda m, x, k: m.masked_fill(x, k, 0.5), [VECTOR[:4], MATRIX > 0]),
    "masked_fill_in_place": (lambda m, x, k: (x * 1).masked_fill_(k, 3.0), [MATRIX, ints(1, 0, 1, 0) > 0]),
    "tensor_split_tensor_indices": (lambda m, x, i: m.tensor_split(x, i, 1), [MATRIX, ints(-1, 2)]),
    "index_add_repeats": (lambda m, x, i, s: m.index_add(x, 1, i, s, alpha=2), [MATRIX, ints(0, 0, 3), MATRIX[:, :3]]),
    "put_accumulate_repeats": (
        lambda m, x, i, s: m.put(x, i, s, accumulate=True),
        [MATRIX, ints(1, 1, -1), VECTOR[:3]],
    ),
    "index_put_accumulate": (lambda m, x, i, v: m.index_put(x, (i,), v, True), [MATRIX, ints(0, 0), VECTOR[:4]]),
    "unique_consecutive_dim": (
        lambda m, x: m.unique_consecutive(x, return_inverse=True, return_counts=True, dim=0),
        [np.array([[1.0, 2.0], [1.0, 2.0], [3.0, 4.0]])],
    ),
    "slice_scatter_step": (lambda m, x, s: m.slice_scatter(x, s, 1, 1, None, 2), [MATRIX, np.ones((3, 2))]),
    "diagonal_scatter_dims": (
        lambda m, x, s: m.diagonal_scatter(x, s, 1, 0, 2),
        [RNG.standard_normal((3, 2, 4)), np.ones((2, 3))],
    ),
    "rot90_negative": (lambda m, x: m.rot90(x, -1, [1, 0]), [MATRIX]),
    "sum_to_size": (lambda m, x: x.sum_to_size(1, 4), [MATRIX]),
    "atleast_3d_sequence": (lambda m, x, y: m.atleast_3d([x, y]), [SCALAR, MATRIX]),
    "broadcast_tensors_0d": (lambda m, x, y: m.broadcast_tensors(x, y), [SCALAR, MATRIX]),
    "hsplit_indices": (lambda m, x: m.hsplit(x, [1, 3]), [MATRIX]),
}

REFUSED = {  # what PyTorch refuses, refused here too
    "H_of_a_vector": lambda m: m.ones(3).H,
    "hsplit_uneven": lambda m: m.hsplit(m.ones(3, 4), 3),
    "vsplit_vector": lambda m: m.vsplit(m.ones(4), 2),
    "gather_out_of_range": lambda m: m.gather(m.ones(3), 0, m.tensor([3])),
    "index_select_bad_dim": lambda m: m.index_select(m.tensor(1.0), 1, m.tensor([0])),
    "put_out_of_range": lambda m: m.put(m.ones(2), m.tensor([2]), m.ones(1)),
    "unfold_too_wide": lambda m: m.ones(3).unfold(0, 4, 1),
    "rot90_same_dims": lambda m: m.rot90(m.ones(2, 2), 1, [0, 0]),
    "cat_nothing": lambda m: m.cat([]),
}


def _leaves(x):
    if isinstance(x, (list, tuple)):
        for v in x:
            yield from _leaves(v)
    else:
        yield x


def _inputs(module, arrays):
    return [module.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]


@pytest.mark.parametrize("name", CASES)
def test_as_torch(backend, name):
    call, arrays = CASES[name]
    theirs_in, ours_in = _inputs(torch, arrays), _inputs(at, arrays)
    theirs, ours = list(_leaves(call(torch, *theirs_in))), list(_leaves(call(at, *ours_in)))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert o.shape == tuple(t.shape) and o.dtype.name == str(t.dtype).removeprefix("torch."), (o, t)
        np.testing.assert_allclose(host(o), host(t), rtol=1e-12, atol=1e-12)
    pairs = [(o, t) for o, t in zip(ours, theirs) if t.requires_grad]
    differentiated = [(o, t) for o, t in zip(ours_in, theirs_in) if t.requires_grad]
    if not pairs or not differentiated:
        return
    weights = [RNG.standard_normal(tuple(t.shape)) for _, t in pairs]
    try:
        expected = torch.autograd.grad(
            [t for _, t in pairs], [t for _, t in differentiated], [torch.tensor(w) for w in weights], allow_unused=True
        )
    except NotImplementedError:  # unique_consecutive: torch has no gradient (ours is outside the graph)
        return
    recorded = [(o, w) for (o, _), w in zip(pairs, weights) if o.requires_grad]
    got = [None] * len(differentiated)
    if recorded:
        got = at.autograd.grad(
            [o for o, _ in recorded],
            [o for o, _ in differentiated],
            [at.tensor(w) for _, w in recorded],
            allow_unused=True,
        )
    for g, e, (o, _) in zip(got, expected, differentiated):
        zeros = np.zeros(o.shape)
        np.testing.assert_allclose(zeros if g is None else host(g), zeros if e is None else host(e), atol=1e-12)


@pytest.mark.parametrize("name", REFUSED)
def test_refused_as_in_torch(backend, name):
    with pytest.raises(Exception):  # noqa: B017 - torch's exception types differ (RuntimeError mostly)
        REFUSED[name](torch)
    with pytest.raises((ValueError, IndexError, TypeError)):
        REFUSED[name](at)


def test_views_write_through_and_copies_do_not(backend):
    """The views are PyTorch's (transpose, H, mH, select, narrow, unfold, diagonal, slice); the
    ``*_copy`` functions are copies: a write into one leaves the input as it was."""
    x = at.zeros(3, 4)
    x.transpose(0, 1)[0].add_(1)
    x.H[1].add_(2)
    x.mH[2].add_(3)
    at.slice(x, 1, 1, None, 2).add_(10)
    at.transpose_copy(x, 0, 1).add_(100)
    at.unbind_copy(x)[0].add_(100)
    expected = torch.zeros(3, 4)
    expected.transpose(0, 1)[0].add_(1)
    expected.H[1].add_(2)
    expected.mH[2].add_(3)
    expected[:, 1::2].add_(10)
    np.testing.assert_array_equal(host(x), expected.numpy())


def test_scatter_functions_leave_their_input(backend):
    """select_scatter, slice_scatter and diagonal_scatter write out of place."""
    x = at.zeros(3, 3)
    at.select_scatter(x, at.ones(3), 0, 1)
    at.slice_scatter(x, at.ones(3, 1), 1, 0, 1)
    at.diagonal_scatter(x, at.ones(3))
    assert host(x).sum() == 0
