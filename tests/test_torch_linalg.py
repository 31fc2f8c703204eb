"""PyTorch's linear algebra beyond the standard (`autograd_core.torch.linalg` and the top-level
names of `autograd_core.torch._linalg`), against torch in float64 on every backend, for what
the op database's samples leave out: singular and batched LU factorisations, right-hand
solves, matrix exponentials that need squaring, the tolerances of pinv and matrix_rank,
norms over axes other than the last, least squares of rank-deficient matrices, and the
Tensor methods' forms."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import autograd_core as ag
import autograd_core.torch.linalg as tla
from autograd_core.torch import _linalg
from helpers import assert_close, host

RNG = np.random.default_rng(7)
SQUARE = RNG.standard_normal((2, 4, 4))
WIDE = RNG.standard_normal((3, 5))


def both(values: np.ndarray) -> tuple[ag.Tensor, torch.Tensor]:
    return ag.tensor(values, dtype="float64", requires_grad=True), torch.tensor(values, requires_grad=True)


def assert_same_gradient(ours_out, theirs_out, ours_in, theirs_in, seed: int = 0) -> None:
    weight = np.random.default_rng(seed).standard_normal(tuple(theirs_out.shape))
    (ours_out * ag.tensor(weight)).sum().backward()
    (theirs_out * torch.tensor(weight)).sum().backward()
    assert_close(ours_in.grad, theirs_in.grad)


@pytest.mark.parametrize(
    "matrix",
    [SQUARE, WIDE, WIDE.T.copy(), np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 4.0], [0.0, 5.0, 7.0]])],
    ids=["batched", "wide", "tall", "zero-column"],
)
def test_lu_factor_and_unpack_match_lapack(backend, matrix):
    ours, theirs = both(matrix)
    lu, pivots, _ = tla.lu_factor_ex(ours)
    expected_lu, expected_pivots, _ = torch.linalg.lu_factor_ex(theirs)
    assert_close(lu, expected_lu)
    assert host(pivots).tolist() == expected_pivots.tolist() and pivots.dtype == ag.int32
    p, lower, upper = _linalg.FUNCTIONS["lu_unpack"](lu, pivots)
    for got, want in zip((p, lower, upper), torch.lu_unpack(expected_lu, expected_pivots)):
        assert_close(got, want)
    if matrix[..., 0].any():  # PyTorch's gradient is nan at a singular matrix
        assert_same_gradient(lu, expected_lu, ours, theirs)


def test_lu_factor_refuses_a_singular_matrix(backend):
    with pytest.raises(RuntimeError, match="lu_factor_ex"):
        tla.lu_factor(ag.tensor([[1.0, 2.0], [2.0, 4.0]]))


@pytest.mark.parametrize("left", [True, False])
def test_solve_right_hand_and_vector(backend, left):
    a, ta = both(SQUARE)
    b, tb = both(RNG.standard_normal((2, 4, 3) if left else (2, 3, 4)))
    out, expected = tla.solve(a, b, left=left), torch.linalg.solve(ta, tb, left=left)
    assert_close(out, expected)
    assert_same_gradient(out, expected, a, ta)
    vector = RNG.standard_normal((2, 4))
    assert_close(tla.solve(a, ag.tensor(vector)), torch.linalg.solve(ta, torch.tensor(vector)))


def test_matrix_exp_that_needs_squaring(backend):
    ours, theirs = both(3.0 * SQUARE)
    out, expected = tla.matrix_exp(ours), torch.linalg.matrix_exp(theirs)
    assert_close(out, expected, rtol=1e-10, atol=1e-10)
    assert_same_gradient(out, expected, ours, theirs)


def test_pinv_and_matrix_rank_tolerances(backend):
    low_rank = RNG.standard_normal((4, 2)) @ RNG.standard_normal((2, 4)) + np.diag([0.0, 0.0, 0.0, 1e-3])
    a, ta = ag.tensor(low_rank), torch.tensor(low_rank)
    for kwargs in ({}, {"atol": 1e-2}, {"rtol": 1e-1}, {"atol": 1e-2, "rtol": 1e-6}):
        assert host(tla.matrix_rank(a, **kwargs)).item() == torch.linalg.matrix_rank(ta, **kwargs).item()
        assert_close(tla.pinv(a, **kwargs), torch.linalg.pinv(ta, **kwargs))
    assert host(tla.matrix_rank(a, 1e-2)).item() == 2  # PyTorch's positional tol


@pytest.mark.parametrize("ord_dim", [("fro", (0, 2)), ("nuc", (2, 0)), (1, (-1, 0)), (None, (1,)), (3.5, 2)])
def test_norms_over_leading_axes_keep_their_place(backend, ord_dim):
    order, dim = ord_dim
    cube = RNG.standard_normal((3, 4, 5))
    ours, theirs = both(cube)
    out = tla.norm(ours, order, dim, keepdim=True)
    expected = torch.linalg.norm(theirs, order, dim, keepdim=True)
    assert_close(out, expected)
    assert_same_gradient(out, expected, ours, theirs)


def test_lstsq_of_a_rank_deficient_matrix_and_a_vector(backend):
    deficient = RNG.standard_normal((5, 2)) @ RNG.standard_normal((2, 3))
    b = RNG.standard_normal(5)
    solution, residuals, rank, values = tla.lstsq(ag.tensor(deficient), ag.tensor(b), driver="gelsd")
    expected = torch.linalg.lstsq(torch.tensor(deficient), torch.tensor(b)[:, None], driver="gelsd")
    assert_close(solution, expected.solution[:, 0])
    assert host(rank).item() == expected.rank.item() == 2
    assert_close(values, expected.singular_values)
    assert tuple(residuals.shape) == (1,)  # computed as PyTorch's docs say: M > N


def test_tensor_methods_in_pytorchs_forms(backend):
    a, ta = both(SQUARE[0])
    u, s, v = a.svd(compute_uv=False)
    assert tuple(u.shape) == (4, 4) and float(ag.sum(ag.abs(u))) == 0.0
    assert_close(s, torch.linalg.svdvals(ta))
    lu, pivots, infos = a.lu(get_infos=True)
    assert host(infos).tolist() == [0] if infos.ndim else host(infos).item() == 0
    assert_close(a.pinverse(), ta.pinverse())
    negative = np.diag([-1.0, 2.0])
    assert np.isnan(host(ag.tensor(negative).logdet()))
    solution, copy = a.triangular_solve(a, upper=False, transpose=True)
    expected = torch.triangular_solve(ta, ta, upper=False, transpose=True)
    assert_close(solution, expected.solution)
    assert_close(copy, ta)


def test_svd_lowrank_recovers_a_low_rank_product(backend):
    x = RNG.standard_normal((6, 2)) @ RNG.standard_normal((2, 5))
    u, s, v = _linalg.FUNCTIONS["svd_lowrank"](ag.tensor(x), q=2)
    assert tuple(u.shape) == (6, 2) and tuple(v.shape) == (5, 2)
    assert_close((u * s[None, :]) @ ag.matrix_transpose(v), torch.tensor(x))


def test_ldl_with_two_by_two_pivots_matches_lapack(backend):
    indefinite = np.array([[0.0, 2.0, 1.0], [2.0, 0.0, 3.0], [1.0, 3.0, 1e-3]])  # zero diagonal: 2 by 2 blocks
    ld, pivots = tla.ldl_factor(ag.tensor(indefinite))
    expected = torch.linalg.ldl_factor(torch.tensor(indefinite))
    assert_close(ld, expected.LD)
    assert host(pivots).tolist() == expected.pivots.tolist() and min(expected.pivots.tolist()) < 0
    b = RNG.standard_normal((3, 2))
    assert_close(tla.ldl_solve(ld, pivots, ag.tensor(b)), torch.linalg.solve(torch.tensor(indefinite), torch.tensor(b)))


def test_eig_values_and_the_warning_for_gradients(backend):
    if backend.name == "dask":
        pytest.skip("dask's library has no linalg.eig")
    values = tla.eigvals(ag.tensor(SQUARE[0]))
    assert_close(np.sort_complex(host(values)), np.sort_complex(torch.linalg.eigvals(torch.tensor(SQUARE[0])).numpy()))
    with pytest.warns(UserWarning, match="not supported yet"):
        tla.eig(ag.tensor(SQUARE[0], requires_grad=True))
