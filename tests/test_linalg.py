"""The linalg extension and einsum, on every backend: gradients against central finite
differences (float64), values and gradients against PyTorch, second derivatives through
``create_graph=True``, and einsum (ours and the einsum primitive's portable default) against numpy.

One table serves the gradient and the PyTorch checks. Inputs are drawn where the functions
are smooth: invertible matrices shifted away from singularity, symmetric positive-definite
ones for cholesky, random symmetric ones (distinct eigenvalues) for eigh, full-rank random
ones (distinct singular values) for qr/svd/pinv. Decompositions read only one triangle of a
symmetric input, so they are checked through ``sym(a) = (a + a^T) / 2``; eigenvectors and
singular vectors have arbitrary signs, so their losses square them (sign-invariant).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import autograd_core as ag
from autograd_core import primitives as P
from helpers import assert_close, host, portable
from torch_oracle import Arg, compare_with_torch, normal

L, T = ag.linalg, torch.linalg


# --- inputs (host arrays drawn from the oracle's seeded generator) ------------------------------
def invertible(*shape: int, flip: bool = False) -> Arg:
    """Random matrices plus 3 I: well conditioned; `flip` negates the first row (det < 0)."""

    def make(r: np.random.Generator) -> np.ndarray:
        a = r.standard_normal(shape) + 3 * np.eye(shape[-1])
        if flip:
            a[..., 0, :] *= -1
        return a

    return Arg(make)


def spd(*shape: int) -> Arg:
    """Symmetric positive definite: a a^T / n + I."""

    def make(r: np.random.Generator) -> np.ndarray:
        a = r.standard_normal(shape)
        return a @ np.swapaxes(a, -1, -2) / shape[-1] + np.eye(shape[-1])

    return Arg(make)


def sym(x: Any) -> Any:
    """The symmetric part (works on our tensors and torch's alike)."""
    return (x + x.mT) / 2


def case(name: str, ours: Callable, theirs: Callable | None, *args: Arg) -> Any:
    return pytest.param(ours, theirs, args, id=name)


def eigh_both(r: Any) -> Any:
    """A sign-invariant function of both outputs of eigh."""
    return r[1] ** 2 * r[0][..., None, :]


def qr_both(r: Any) -> Any:
    return r[0] ** 2 @ r[1] ** 2


def svd_all(k: int) -> Callable[[Any], Any]:
    """A sign-invariant function of U, S and Vh (their first k columns / rows)."""
    return lambda r: (r[0][..., :k] ** 2 * r[1][..., None, :]) @ r[2][..., :k, :] ** 2


def both(f: Callable[[Any], Any], ours: Callable, theirs: Callable, *args: Arg, name: str) -> Any:
    """The case ``f(decomposition(x))`` for our decomposition and torch's."""
    return case(name, lambda *x: f(ours(*x)), lambda *x: f(theirs(*x)), *args)


EINSUMS = [  # (subscripts, operand shapes): both explicit and implicit outputs, ellipses, diagonals
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("i,i", [(3,), (3,)]),
    ("ijk,kj->i", [(2, 3, 4), (4, 3)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 2)]),
    ("...ij,...jk", [(2, 2, 3), (3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ij,k->ik", [(2, 3), (4,)]),
    ("ij->", [(2, 3)]),
    ("ba", [(2, 3)]),
    ("i,->i", [(3,), ()]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->ji", [(2, 2, 3)]),
    ("bii,bj->bij", [(2, 3, 3), (2, 4)]),
]


def einsum_case(subscripts: str, shapes: list[tuple[int, ...]]) -> Any:
    return case(
        f"einsum[{subscripts}]",
        lambda *x: ag.einsum(subscripts, *x),
        lambda *x: torch.einsum(subscripts, *x),
        *(normal(*s) for s in shapes),
    )


CASES = [
    case("inv", L.inv, T.inv, invertible(3, 3)),
    case("inv_batch", L.inv, T.inv, invertible(2, 3, 3)),
    case("det", L.det, T.det, invertible(3, 3)),
    case("det_negative_batch", L.det, T.det, invertible(2, 3, 3, flip=True)),
    case("slogdet", lambda a: L.slogdet(a).logabsdet, lambda a: T.slogdet(a).logabsdet, invertible(2, 3, 3, flip=True)),
    case("solve", L.solve, T.solve, invertible(3, 3), normal(3, 2)),
    case("solve_vector", L.solve, T.solve, invertible(3, 3), normal(3)),
    case("solve_vector_batch", L.solve, T.solve, invertible(2, 3, 3), normal(3)),
    case("solve_broadcast_b", L.solve, T.solve, invertible(3, 3), normal(2, 3, 2)),
    case("solve_broadcast_both", L.solve, T.solve, invertible(2, 1, 3, 3), normal(3, 3, 2)),
    case("pinv_tall", L.pinv, T.pinv, normal(4, 3)),
    case("pinv_wide_batch", L.pinv, T.pinv, normal(2, 2, 3)),
    case("matrix_power_3", lambda a: L.matrix_power(a, 3), lambda a: T.matrix_power(a, 3), normal(2, 3, 3)),
    case("matrix_power_1", lambda a: L.matrix_power(a, 1), lambda a: T.matrix_power(a, 1), normal(3, 3)),
    case("matrix_power_-2", lambda a: L.matrix_power(a, -2), lambda a: T.matrix_power(a, -2), invertible(3, 3)),
    case("cholesky", lambda a: L.cholesky(sym(a)), lambda a: T.cholesky(sym(a)), spd(3, 3)),
    case(
        "cholesky_upper_batch",
        lambda a: L.cholesky(sym(a), upper=True),
        lambda a: T.cholesky(sym(a), upper=True),
        spd(2, 3, 3),
    ),
    case("eigvalsh", lambda a: L.eigvalsh(sym(a)), lambda a: T.eigvalsh(sym(a)), normal(2, 3, 3)),
    case("eigh_values", lambda a: L.eigh(sym(a)).eigenvalues, lambda a: T.eigh(sym(a)).eigenvalues, normal(3, 3)),
    case(
        "eigh_vectors",
        lambda a: L.eigh(sym(a)).eigenvectors ** 2,
        lambda a: T.eigh(sym(a)).eigenvectors ** 2,
        normal(3, 3),
    ),
    both(eigh_both, lambda a: L.eigh(sym(a)), lambda a: T.eigh(sym(a)), normal(2, 3, 3), name="eigh_both"),
    both(lambda r: r.Q**2, L.qr, T.qr, normal(4, 3), name="qr_Q_tall"),
    both(lambda r: r.R**2, L.qr, T.qr, normal(2, 4, 3), name="qr_R_tall_batch"),
    both(qr_both, L.qr, T.qr, normal(3, 3), name="qr_both_square"),
    both(qr_both, L.qr, T.qr, normal(3, 5), name="qr_both_wide"),
    both(
        qr_both,
        lambda a: L.qr(a, mode="complete"),
        lambda a: T.qr(a, mode="complete"),
        normal(2, 3),
        name="qr_complete_wide",
    ),
    case("svdvals", L.svdvals, T.svdvals, normal(2, 4, 3)),
    both(lambda r: r.S, L.svd, T.svd, normal(3, 4), name="svd_S"),
    both(
        lambda r: r.U**2,
        lambda a: L.svd(a, full_matrices=False),
        lambda a: T.svd(a, full_matrices=False),
        normal(4, 3),
        name="svd_U_tall",
    ),
    both(
        lambda r: r.Vh**2,
        lambda a: L.svd(a, full_matrices=False),
        lambda a: T.svd(a, full_matrices=False),
        normal(3, 4),
        name="svd_Vh_wide",
    ),
    both(
        svd_all(3),
        lambda a: L.svd(a, full_matrices=False),
        lambda a: T.svd(a, full_matrices=False),
        normal(3, 3),
        name="svd_square",
    ),
    both(
        svd_all(3),
        lambda a: L.svd(a, full_matrices=False),
        lambda a: T.svd(a, full_matrices=False),
        normal(2, 4, 3),
        name="svd_tall_batch",
    ),
    both(svd_all(2), L.svd, T.svd, normal(4, 2), name="svd_full_tall"),
    both(svd_all(2), L.svd, T.svd, normal(2, 3), name="svd_full_wide"),
    *(
        case(
            f"matrix_norm_{o}",
            lambda a, o=o: L.matrix_norm(a, ord=o),
            lambda a, o=o: T.matrix_norm(a, ord=o),
            normal(2, 3, 4),
        )
        for o in ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf)
    ),
    case(
        "matrix_norm_keepdims",
        lambda a: L.matrix_norm(a, ord="nuc", keepdims=True),
        lambda a: T.matrix_norm(a, ord="nuc", keepdim=True),
        normal(2, 3, 4),
    ),
    *(
        case(
            f"vector_norm_{o}",
            lambda a, o=o: L.vector_norm(a, ord=o),
            lambda a, o=o: T.vector_norm(a, ord=o),
            normal(3, 4),
        )
        for o in (2, 1, math.inf, -math.inf, 3, 0.5, -1)
    ),
    case("vector_norm_axis", lambda a: L.vector_norm(a, axis=-1), lambda a: T.vector_norm(a, dim=-1), normal(3, 4)),
    case(
        "vector_norm_axes_keepdims",
        lambda a: L.vector_norm(a, axis=(0, 2), keepdims=True, ord=3),
        lambda a: T.vector_norm(a, dim=(0, 2), keepdim=True, ord=3),
        normal(2, 3, 4),
    ),
    *(
        case(
            f"diagonal_{o}",
            lambda a, o=o: L.diagonal(a, offset=o),
            lambda a, o=o: T.diagonal(a, offset=o),
            normal(2, 3, 4),
        )
        for o in (0, 1, -2, 5, -5)
    ),
    *(
        case(
            f"trace_{o}",
            lambda a, o=o: L.trace(a, offset=o),
            lambda a, o=o: T.diagonal(a, offset=o).sum(-1),
            normal(2, 4, 3),
        )
        for o in (0, 2, -1)
    ),
    # torch's cross wants operands of one rank: broadcast them first
    case("cross", L.cross, lambda a, b: T.cross(*torch.broadcast_tensors(a, b)), normal(2, 3), normal(3)),
    case(
        "cross_axis",
        lambda a, b: L.cross(a, b, axis=-2),
        lambda a, b: T.cross(*torch.broadcast_tensors(a, b), dim=-2),
        normal(3, 2),
        normal(4, 3, 2),
    ),
    case("outer", L.outer, torch.outer, normal(3), normal(4)),
    case("tensordot_2", L.tensordot, torch.tensordot, normal(2, 3, 4), normal(3, 4, 2)),
    case(
        "tensordot_1",
        lambda a, b: L.tensordot(a, b, axes=1),
        lambda a, b: torch.tensordot(a, b, dims=1),
        normal(2, 3),
        normal(3, 4),
    ),
    case(
        "tensordot_0",
        lambda a, b: L.tensordot(a, b, axes=0),
        lambda a, b: torch.tensordot(a, b, dims=0),
        normal(2),
        normal(3),
    ),
    case(
        "tensordot_pairs",
        lambda a, b: L.tensordot(a, b, axes=([2, 0], [0, 1])),
        lambda a, b: torch.tensordot(a, b, dims=([2, 0], [0, 1])),
        normal(2, 3, 4),
        normal(4, 2, 5),
    ),
    case("vecdot", L.vecdot, T.vecdot, normal(2, 3), normal(3)),
    case(
        "vecdot_axis",
        lambda a, b: L.vecdot(a, b, axis=-2),
        lambda a, b: T.vecdot(a, b, dim=-2),
        normal(3, 2),
        normal(4, 3, 2),
    ),
    *(einsum_case(s, shapes) for s, shapes in EINSUMS),
    einsum_case("...i->i", [(2, 3)]),  # ellipsis axes left out of the output are summed (PyTorch)
]


def leaves(args: tuple[Arg, ...], seed: int = 0) -> list[ag.Tensor]:
    rng = np.random.default_rng(seed)
    return [ag.tensor(a.make(rng), requires_grad=a.grad) for a in args]


@pytest.mark.parametrize("ours, theirs, args", CASES)
def test_gradcheck(float64_backend, ours, theirs, args):
    assert ag.gradcheck(ours, leaves(args)) is True


def fixed(values: list) -> Arg:
    return Arg(lambda r: np.asarray(values, dtype=np.float64))


# Where the derivative is one-sided or undefined, our choice must still be PyTorch's: ties for
# the largest magnitude share the inf norm's gradient, a zero norm has a zero gradient.
AT_KINKS = [
    *(
        case(
            f"vector_norm_{o}_ties",
            lambda a, o=o: L.vector_norm(a, axis=-1, ord=o),
            lambda a, o=o: T.vector_norm(a, dim=-1, ord=o),
            fixed([[3.0, -3.0, 1.0], [2.0, 0.5, -0.5]]),
        )
        for o in (math.inf, -math.inf)
    ),
    *(
        case(
            f"vector_norm_{o}_zero",
            lambda a, o=o: L.vector_norm(a, axis=-1, ord=o),
            lambda a, o=o: T.vector_norm(a, dim=-1, ord=o),
            fixed([[0.0, 0.0, 0.0], [2.0, 0.0, -1.0]]),
        )
        for o in (2, 1, 3, 0.5)
    ),
    case(
        "matrix_norm_1_ties",
        lambda a: L.matrix_norm(a, ord=1),
        lambda a: T.matrix_norm(a, ord=1),
        fixed([[1.0, -2.0], [1.0, 0.0]]),
    ),
]


@pytest.mark.parametrize("ours, theirs, args", CASES + AT_KINKS)
def test_matches_torch(float64_backend, ours, theirs, args):
    compare_with_torch(ours, theirs, args)


SECOND_ORDER = [
    case("inv", L.inv, None, invertible(2, 3, 3)),
    case("solve", L.solve, None, invertible(3, 3), normal(3, 2)),
    case("solve_vector", L.solve, None, invertible(3, 3), normal(3)),
    case("det", L.det, None, invertible(3, 3)),
    case("slogdet", lambda a: L.slogdet(a).logabsdet, None, invertible(3, 3, flip=True)),
    case("cholesky", lambda a: L.cholesky(sym(a)), None, spd(3, 3)),
    case("eigh_both", lambda a: eigh_both(L.eigh(sym(a))), None, normal(3, 3)),
    case("svd_tall", lambda a: svd_all(2)(L.svd(a, full_matrices=False)), None, normal(3, 2)),
    case("vector_norm", L.vector_norm, None, normal(3, 2)),
    *(einsum_case(s, shapes) for s, shapes in [EINSUMS[0], EINSUMS[7], EINSUMS[14], EINSUMS[16]]),
]


@pytest.mark.parametrize("ours, theirs, args", SECOND_ORDER)
def test_gradgradcheck(float64_backend, ours, theirs, args):
    assert ag.gradgradcheck(ours, leaves(args)) is True


# --- einsum against numpy ------------------------------------------------------------------------
def einsum_operands(shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [rng.standard_normal(s) for s in shapes]


@pytest.mark.parametrize("subscripts, shapes", EINSUMS, ids=[s for s, _ in EINSUMS])
def test_einsum_matches_numpy(float64_backend, subscripts, shapes):
    operands = einsum_operands(shapes)
    assert_close(ag.einsum(subscripts, *(ag.tensor(o) for o in operands)), np.einsum(subscripts, *operands))


@pytest.mark.parametrize("subscripts, shapes", EINSUMS, ids=[s for s, _ in EINSUMS])
def test_portable_einsum_matches_numpy(float64_backend, subscripts, shapes):
    """The standard-only default of the einsum primitive, run on this backend's namespace."""
    operands = einsum_operands(shapes)
    arrays = [float64_backend.asarray(o) for o in operands]
    got = portable(float64_backend, P.einsum, subscripts, *arrays)
    assert tuple(got.shape) == np.einsum(subscripts, *operands).shape
    assert_close(float64_backend.to_numpy(got), np.einsum(subscripts, *operands))


@pytest.mark.parametrize(
    "subscripts, shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),  # no operand for the second term
        ("ij->ii", [(2, 2)]),  # a repeated output label
        ("ij->k", [(2, 2)]),  # an output label no operand has
        ("ijk", [(2, 2)]),  # more labels than axes
        ("i.j", [(2, 2)]),  # a lone dot
    ],
)
def test_einsum_rejects_bad_subscripts(backend, subscripts, shapes):
    with pytest.raises(ValueError, match="einsum"):
        ag.einsum(subscripts, *(ag.ones(s) for s in shapes[:1]))


def test_einsum_promotes_mixed_dtypes(backend):
    out = ag.einsum("i,i", ag.asarray([1, 2, 3]), ag.asarray([0.5, 0.5, 0.5], dtype=ag.float32))
    assert out.dtype == ag.float32 and out.item() == 3.0


def test_main_namespace_has_tensordot_vecdot_einsum():
    assert ag.tensordot is L.tensordot and ag.vecdot is L.vecdot
    assert callable(ag.einsum)


# --- what is outside the graph, or undefined ---------------------------------------------------------
def test_piecewise_constant_parts(float64_backend):
    """vector_norm's ord 0 counts nonzeros (a zero gradient, as torch gives); slogdet's sign,
    matrix_rank and matrix_power(x, 0) are outside the graph."""
    x = ag.tensor([[1.0, 0.0, -2.0], [0.5, 3.0, 0.0]], requires_grad=True)
    count = L.vector_norm(x, ord=0)
    count.backward()
    assert count.item() == 4.0 and np.all(host(x.grad) == 0)
    sign, logabsdet = L.slogdet(x[:, :2])
    assert not sign.requires_grad and logabsdet.requires_grad and sign.item() == 1.0
    rank = L.matrix_rank(x)
    assert rank.item() == 2 and not rank.requires_grad and ag.isdtype(rank.dtype, "integral")
    identity = L.matrix_power(x[:, :2], 0)
    assert not identity.requires_grad and host(identity).tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_matrix_rank_rtol(float64_backend):
    x = ag.tensor(np.diag([1.0, 1e-3, 1e-18]))
    assert L.matrix_rank(x).item() == 2
    assert L.matrix_rank(x, rtol=1e-2).item() == 1


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy warns of the 0/0 it is asked to compute
def test_repeated_eigenvalues(float64_backend):
    """eigvalsh's gradient stays finite at a repeated eigenvalue; eigenvectors' is inf/nan
    there, as in PyTorch."""
    a = ag.tensor(np.eye(3), requires_grad=True)
    L.eigvalsh(a).sum().backward()
    assert_close(a.grad, np.eye(3))
    b = ag.tensor(np.eye(3), requires_grad=True)
    (L.eigh(b).eigenvectors ** 2).sum().backward()
    assert not np.all(np.isfinite(host(b.grad)))


def test_complete_qr_of_a_tall_matrix_has_no_gradient(float64_backend):
    x = ag.tensor(np.random.default_rng(0).standard_normal((4, 2)), requires_grad=True)
    q, r = L.qr(x, mode="complete")
    assert q.shape == (4, 4) and r.shape == (4, 2)
    assert_close(q @ r, x)
    with pytest.raises(NotImplementedError, match="complete"):
        r.sum().backward()


def test_named_results(float64_backend):
    x = ag.tensor(np.random.default_rng(0).standard_normal((3, 2)))
    u, s, vh = L.svd(x)
    assert (u.shape, s.shape, vh.shape) == ((3, 3), (2,), (2, 2))
    assert L.svd(x).S is not None and L.svd(x, full_matrices=False).U.shape == (3, 2)
    assert_close((L.svd(x, full_matrices=False).U * s) @ vh, x)
    assert L.qr(x).Q.shape == (3, 2) and L.qr(x).R.shape == (2, 2)
    symmetric = x.mT @ x
    assert_close(L.eigh(symmetric).eigenvalues, L.eigvalsh(symmetric))
    assert L.slogdet(symmetric).logabsdet.shape == ()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: L.inv(ag.ones((2, 3))), "square"),
        (lambda: L.det(ag.ones(3)), "square"),
        (lambda: L.matrix_norm(ag.ones((2, 2)), ord=3), "ord"),
        (lambda: L.cross(ag.ones(2), ag.ones(2)), "3 elements"),
        (lambda: L.outer(ag.ones((2, 2)), ag.ones(2)), "1-D"),
        (lambda: L.tensordot(ag.ones((2, 3)), ag.ones((2, 3)), axes=1), "axes"),
        (lambda: L.vecdot(ag.ones(2), ag.ones(3)), "axis"),
        (lambda: L.qr(ag.ones((2, 2)), mode="r"), "mode"),
    ],
)
def test_invalid_arguments(backend, call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_diagonal_is_a_view_for_version_checks(float64_backend):
    """An in-place change of the matrix counts against its diagonal (as against any view)."""
    y = ag.tensor(np.ones((2, 2)), requires_grad=True) * 1.0
    d = L.diagonal(y)
    loss = (d * d).sum()
    y[0, 1] = 5.0
    with pytest.raises(RuntimeError, match="modified by an in-place"):
        loss.backward()


def test_complex_decompositions(float64_backend):
    """A complex input's singular values are real; its decompositions are outside the graph,
    and asking for their gradient is refused rather than silently wrong."""
    host_x = np.array([[1 + 1j, 2.0], [0.5, -1j]])
    s = L.svd(ag.tensor(host_x)).S
    assert s.dtype == ag.float64
    assert_close(s, np.linalg.svd(host_x, compute_uv=False))
    x = ag.astype(ag.tensor(host_x.real, requires_grad=True), ag.complex128)
    with pytest.raises(NotImplementedError, match="complex"):
        L.eigh(x)


def test_conformance_edge_cases(backend):
    """Found by the array API test suite: an integer vecdot stays in its dtype (a sum's
    default accumulator would widen it), pinv of an empty matrix is empty (there is no
    largest singular value to scale the cutoff by), and a complex64 matrix's singular values
    are float32."""
    u8 = ag.asarray([[200, 3], [4, 5]], dtype=ag.uint8)
    product = L.vecdot(u8, u8)
    assert product.dtype == ag.uint8 and product.tolist() == [(200 * 200 + 9) % 256, 41]
    for shape, expected in (((0, 3), (3, 0)), ((2, 3, 0), (2, 0, 3)), ((0, 0), (0, 0))):
        assert L.pinv(ag.zeros(shape)).shape == expected
    x = ag.asarray([[1 + 1j, 2.0], [0.5, -1j]], dtype=ag.complex64)
    assert L.svd(x).S.dtype == ag.float32 and L.svdvals(x).dtype == ag.float32
