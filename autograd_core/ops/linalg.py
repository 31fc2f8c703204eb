"""The array API's linear algebra extension (``autograd_core.ops.linalg``), differentiable.

Each primitive runs the backend's own ``xp.linalg`` on raw arrays and declares its VJPs once
against a namespace, as in `autograd_core.ops.core` (in a VJP, ``ns.linalg`` is the library's
linalg namespace or this module). The rules are PyTorch's (derivatives.yaml) and assume what
they need to exist: invertible matrices for inv/solve/det/slogdet, distinct eigenvalues for
eigh and distinct nonzero singular values for svd (repeated ones give inf/nan gradients, as
in PyTorch), full rank for qr. Complex conjugation is out of scope: the rules are for real
dtypes. Each primitive's forward-mode rule (``jvp=``) is its VJP transposed, PyTorch's
FunctionsManual formulas; as the VJPs of cholesky and eigh give symmetric gradients, their
forward rules read the symmetric part of the tangent.

A decomposition with several outputs (eigh, qr, svd) is one primitive whose output packs
them side by side; each public output is a differentiable slice of it, so the VJP sees every
output's gradient at once (zeros for the outputs not used) and all the outputs.

>>> import autograd_core as ag
>>> a = ag.tensor([[2.0, 0.0], [0.0, 4.0]], requires_grad=True)
>>> d = ag.linalg.det(a)
>>> d.backward()
>>> d.item(), a.grad.tolist()
(8.0, [[4.0, 0.0], [0.0, 2.0]])
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from autograd_core.graph import grad_mode
from autograd_core.graph.dtypes import finfo
from autograd_core.graph.namespace import raw_namespace, tensor_namespace
from autograd_core.graph.registry import Primitive
from autograd_core.graph.tensor_base import TensorBase, Vjp
from autograd_core.ops import core as ops, elementwise, layout, statistics
from autograd_core.ops.core import _axes, _operands, _tensor, _view, expand_back, matmul, matrix_transpose, sum_to
from autograd_core.primitives.indexing import basic_index, scatter

__all__ = [
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]

Axis = int | tuple[int, ...] | None


class EighResult(NamedTuple):
    eigenvalues: TensorBase
    eigenvectors: TensorBase


class QRResult(NamedTuple):
    Q: TensorBase  # noqa: N815 - the standard's field names
    R: TensorBase  # noqa: N815


class SlogdetResult(NamedTuple):
    sign: TensorBase
    logabsdet: TensorBase


class SVDResult(NamedTuple):
    U: TensorBase  # noqa: N815
    S: TensorBase  # noqa: N815
    Vh: TensorBase  # noqa: N815


# --- helpers --------------------------------------------------------------------------------
def _matrices(name: str, x: Any, square: bool = False) -> TensorBase:
    x = _tensor(name, x)
    if x.ndim < 2 or (square and x.shape[-1] != x.shape[-2]):
        kind = "square matrices (..., n, n)" if square else "matrices (..., m, n)"
        raise ValueError(f"{name} needs {kind}, got shape {x.shape}")
    return x


def _pair(name: str, x1: Any, x2: Any) -> tuple[TensorBase, TensorBase, Any]:
    a, b, backend = _operands(name, x1, x2)
    if not (isinstance(a, TensorBase) and isinstance(b, TensorBase)):
        raise TypeError(f"{name} needs two tensors")
    return a, b, backend


def _constant(x: TensorBase, make: Callable[[Any, Any, Any], Any]) -> TensorBase:
    """A constant a VJP reads, passed as an extra input: ``make(xp, dtype, device)`` in `x`'s
    dtype on `x`'s backend, outside the graph."""
    return TensorBase._wrap(make(x.backend.xp, x.array.dtype, x.backend.device), x.backend)


def _eye(x: TensorBase, n: int) -> TensorBase:
    return _constant(x, lambda xp, dtype, device: xp.eye(n, dtype=dtype, device=device))


def _triangle(x: TensorBase, n: int, upper: bool) -> TensorBase:
    """Ones on and below (or above) the diagonal, zeros elsewhere: a triangular mask."""

    def make(xp: Any, dtype: Any, device: Any) -> Any:
        ones = xp.ones((n, n), dtype=dtype, device=device)
        return xp.triu(ones) if upper else xp.tril(ones)

    return _constant(x, make)


class _Packing(NamedTuple):
    """Where each output of a decomposition lies in its node: the outputs (their leading axes
    the input's batch axes) flattened side by side along one last axis, in `bounds`."""

    batch: tuple[int, ...]
    shapes: tuple[tuple[int, ...], ...]
    bounds: tuple[int, ...]

    @classmethod
    def of(cls, parts: Sequence[Any], batch: tuple[int, ...]) -> _Packing:
        shapes = tuple(tuple(p.shape)[len(batch) :] for p in parts)
        return cls(batch, shapes, tuple(itertools.accumulate((math.prod(s) for s in shapes), initial=0)))

    def pack(self, xp: Any, parts: Sequence[Any]) -> Any:
        pieces = [xp.reshape(p, (*self.batch, hi - lo)) for p, lo, hi in zip(parts, self.bounds, self.bounds[1:])]
        return xp.concat(pieces, axis=-1)

    def unpack(self, ns: Any, packed: Any) -> list[Any]:
        return [
            ns.reshape(basic_index(ns, packed, (Ellipsis, slice(lo, hi))), (*self.batch, *shape))
            for lo, hi, shape in zip(self.bounds, self.bounds[1:], self.shapes)
        ]


def _decomposition(
    primitive: Primitive, x: TensorBase, parts: Sequence[Any], inputs: Sequence[Any], saved: Sequence[Any] = ()
) -> list[TensorBase]:
    """The outputs `parts` (raw arrays) of the decomposition `primitive` of the matrices `x`,
    as differentiable slices of one node: its `inputs` (`x`, the kernel's options, the
    constants the VJP reads), then the `_Packing`. Parts of different dtypes (real
    eigenvalues beside the complex eigenvectors of a complex input) are returned outside the
    graph."""
    if len({p.dtype for p in parts}) > 1:  # complex input: real eigen/singular values beside complex vectors
        if x.requires_grad and grad_mode.is_grad_enabled():
            raise NotImplementedError(f"{primitive.name}: gradients through complex inputs are not supported")
        return [TensorBase._wrap(p, x.backend) for p in parts]
    packing = _Packing.of(parts, x.shape[:-2])
    node = primitive.record(packing.pack(x.backend.xp, parts), x.backend, (*inputs, packing), saved=saved)
    return packing.unpack(ops, node)


def _unpacked(vjp: Callable[..., Any]) -> Vjp:
    """A decomposition's ``vjp(ns, grads, outs, x, *options_and_constants)``, which gets the
    lists of every output's gradient and value, as the VJP of its packed node."""

    def packed_vjp(ns: Any, g: Any, out: Any, x: Any, *rest: Any) -> Any:
        *options_and_constants, packing = rest
        return vjp(ns, packing.unpack(ns, g), packing.unpack(ns, out), x, *options_and_constants)

    return packed_vjp


def _packed(jvp: Callable[..., Any]) -> Callable[..., Any]:
    """A decomposition's ``jvp(ns, tangent, outs, x, *options_and_constants)``, which gets the
    tangent of `x` and the list of the outputs and gives the list of their tangents, as the
    forward-mode rule of its packed node (only `x` has a tangent)."""

    def packed_jvp(ns: Any, tangents: Sequence[Any], out: Any, x: Any, *rest: Any) -> Any:
        *options_and_constants, packing = rest
        return packing.pack(ns, jvp(ns, tangents[0], packing.unpack(ns, out), x, *options_and_constants))

    return packed_jvp


def _symmetric_part(t: Any) -> Any:
    """``(t + t^T) / 2``: the tangent a rule for symmetric inputs sees, as the transpose of a
    VJP that gives symmetric gradients."""
    return 0.5 * (t + t.mT)


# --- inverses, determinants and solves ----------------------------------------------------
def inv(x: TensorBase, /) -> TensorBase:
    """The inverse of each square matrix; its gradient is ``-inv(x)^T g inv(x)^T``.

    >>> import autograd_core as ag
    >>> ag.linalg.inv(ag.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    x = _matrices("inv", x, square=True)
    return _INV.bind(x)


_INV = Primitive(
    "inv",
    lambda ns, x: ns.linalg.inv(x),
    vjps=(lambda ns, g, out, x: -(out.mT @ g @ out.mT),),
    saves="output",
    jvp=lambda ns, tangents, out, x: -(out @ tangents[0] @ out),
)


def det(x: TensorBase, /) -> TensorBase:
    """The determinant of each square matrix; its gradient is the matrix of cofactors, ``g *
    det(x) * inv(x)^T`` where `x` is invertible and right where it is singular too.

    >>> import autograd_core as ag
    >>> a = ag.tensor([[1.0, 2.0], [2.0, 4.0]], dtype="float64", requires_grad=True)
    >>> ag.linalg.det(a).backward()  # singular: the cofactors [[d, -c], [-b, a]]
    >>> [[round(v, 12) for v in row] for row in a.grad.tolist()]
    [[4.0, -2.0], [-2.0, 1.0]]
    """
    x = _matrices("det", x, square=True)
    return _DET.bind(x)


def _log_det_tangent(ns: Any, x: Any, t: Any) -> Any:
    """``tr(x^-1 t)``, the tangent of log|det x| along `t`."""
    return ns.sum(ns.linalg.inv(x).mT * t, axis=(-2, -1))


def _cofactors(ns: Any, x: Any) -> Any:
    """The matrix of cofactors of each square matrix, det's derivative, by PyTorch's formula
    for singular matrices: with ``x = U diag(s) Vh`` it is ``det(U) det(Vh) U diag(c) Vh``,
    where c_i is the product of the singular values other than s_i."""
    u, s, vh = ns.linalg.svd(x)
    others = statistics._cofactor(ns, s, (s.ndim - 1,))
    sign = ns.linalg.det(u) * ns.linalg.det(vh)
    return (u * (sign[..., None] * others)[..., None, :]) @ vh


_DET = Primitive(
    "det",
    lambda ns, x: ns.linalg.det(x),
    vjps=(lambda ns, g, out, x: g[..., None, None] * _cofactors(ns, x),),
    jvp=lambda ns, tangents, out, x: ns.sum(_cofactors(ns, x) * tangents[0], axis=(-2, -1)),
)


def slogdet(x: TensorBase, /) -> SlogdetResult:
    """``(sign, logabsdet)`` of the determinant of each square matrix. The sign is piecewise
    constant and outside the graph; logabsdet's gradient is ``g * inv(x)^T``."""
    x = _matrices("slogdet", x, square=True)
    sign, logabsdet = _SLOGDET(raw_namespace(x.backend), x.array)
    return SlogdetResult(TensorBase._wrap(sign, x.backend), _SLOGDET.record(logabsdet, x.backend, (x,)))


_SLOGDET = Primitive(  # the kernel gives the sign too; the node is logabsdet
    "slogdet",
    lambda ns, x: ns.linalg.slogdet(x),
    vjps=(lambda ns, g, out, x: g[..., None, None] * ns.linalg.inv(x).mT,),
    jvp=lambda ns, tangents, out, x: _log_det_tangent(ns, x, tangents[0]),
)


def solve(x1: TensorBase, x2: TensorBase, /) -> TensorBase:
    """The solution X of ``x1 @ X = x2``, batched and broadcast. A 1-D `x2` of shape (M,) is
    one right-hand side for every matrix, as the standard has it.

    >>> import autograd_core as ag
    >>> ag.linalg.solve(ag.tensor([[2.0, 0.0], [0.0, 4.0]]), ag.tensor([1.0, 1.0])).tolist()
    [0.5, 0.25]
    """
    a, b, backend = _pair("solve", x1, x2)
    _matrices("solve", a, square=True)
    if b.ndim == 1:
        return solve(a, b[:, None])[..., 0]
    return _SOLVE.bind(a, b, saved=(a,))


def _solve_jvp(ns: Any, tangents: Sequence[Any], out: Any, a: Any, b: Any) -> Any:
    """``a^-1 (db - da X)`` for the solution X."""
    ta, tb = tangents
    if ta is None:
        return ns.linalg.solve(a, tb)
    return ns.linalg.solve(a, -(ta @ out) if tb is None else tb - ta @ out)


_SOLVE = Primitive(  # the VJPs read a and the output (saves="output", and solve passes saved=(a,))
    "solve",
    lambda ns, a, b: ns.linalg.solve(a, b),
    vjps=(
        lambda ns, g, out, a, b: sum_to(ns, -(ns.linalg.solve(a.mT, g) @ out.mT), a.shape),
        lambda ns, g, out, a, b: sum_to(ns, ns.linalg.solve(a.mT, g), b.shape),
    ),
    saves="output",
    jvp=_solve_jvp,
)


def pinv(
    x: TensorBase,
    /,
    *,
    rtol: float | TensorBase | None = None,
    atol: float | TensorBase | None = None,
    hermitian: bool = False,
) -> TensorBase:
    """The Moore-Penrose pseudo-inverse, from the SVD: singular values at most
    ``max(atol, rtol * largest)`` count as zero. Without either, ``rtol`` is ``max(M, N) *
    eps``; with a positive `atol` alone, ``rtol`` is 0 (PyTorch's rule). With `hermitian`,
    the symmetric matrix of `x`'s lower triangle is inverted, as PyTorch's.

    The gradient is Golub and Pereyra's derivative of the pseudo-inverse, written with it, as
    PyTorch's: right wherever the rank stays constant, at rank-deficient matrices and repeated
    singular values too (the SVD's own gradient is nan there)."""
    x = _matrices("pinv", x)
    rtol, atol = _tolerances(x, rtol, atol)
    if not hermitian:
        return _PINV.bind(x, rtol, atol)
    ns = raw_namespace(x.backend)
    lower = ns.tril(x.array)  # PyTorch's reads the lower triangle; its gradient is the formula's at x
    data = _PINV(ns, lower + ns.tril(x.array, k=-1).mT, rtol, atol)
    return _PINV.record(data, x.backend, (x, rtol, atol))


def _tolerances(x: TensorBase, rtol: Any, atol: Any) -> tuple[Any, Any]:
    """PyTorch's ``(rtol, atol)`` for pinv and matrix_rank, tensors as raw arrays that broadcast
    against the singular values' batch: rtol defaults to ``max(M, N) * eps`` unless a
    positive atol is given, then to 0."""
    if rtol is None:
        given = atol is not None and (isinstance(atol, TensorBase) or atol > 0)
        rtol = 0.0 if given else max(x.shape[-2:]) * finfo(x.dtype).eps
    raw = [t.array[..., None] if isinstance(t, TensorBase) else t for t in (rtol, atol)]
    return raw[0], 0.0 if raw[1] is None else raw[1]


def _pinv(ns: Any, x: Any, rtol: Any, atol: Any) -> Any:
    """``V diag(1/s) U^T`` over the singular values above ``max(atol, rtol * largest)``."""
    u, s, vh = ns.linalg.svd(x, full_matrices=False)
    kept = s > _cutoff(ns, s, rtol, atol)
    inverse = ns.where(kept, 1.0 / ns.where(kept, s, 1.0), 0.0)
    return (vh.mT * inverse[..., None, :]) @ u.mT


def _cutoff(ns: Any, s: Any, rtol: Any, atol: Any) -> Any:
    """``max(atol, rtol * largest)`` for the descending values `s`, per matrix."""
    relative = rtol * (s[..., :1] if s.shape[-1] else s)
    return ns.where(relative > atol, relative, atol)


def _pinv_vjp(ns: Any, g: Any, p: Any, a: Any, rtol: Any, atol: Any) -> Any:
    """The transpose of `_pinv_jvp`: ``-P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A)``
    for P = pinv(A), with each ``(I - M) Y`` computed as ``Y - M Y``."""
    h = g.mT @ p @ p.mT
    k = p.mT @ p @ g.mT
    return -(p.mT @ g @ p.mT) + (h - a @ (p @ h)) + (k - (k @ p) @ a)


def _pinv_jvp(ns: Any, tangents: Sequence[Any], p: Any, a: Any, rtol: Any, atol: Any) -> Any:
    """Golub and Pereyra's ``dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P``."""
    t = tangents[0]
    left = p @ p.mT @ t.mT
    right = t.mT @ p.mT @ p
    return -(p @ t @ p) + (left - (left @ a) @ p) + (right - p @ (a @ right))


_PINV = Primitive(
    "pinv",
    _pinv,
    vjps=(_pinv_vjp, None, None),
    saves="inputs and output",
    jvp=_pinv_jvp,
)


def matrix_power(x: TensorBase, n: int, /) -> TensorBase:
    """`x` multiplied by itself `n` times (by repeated squaring; through `inv` for n < 0);
    n == 0 gives identities, constant as in PyTorch."""
    x = _matrices("matrix_power", x, square=True)
    if n == 0:
        identity = _eye(x, x.shape[-1]).array
        return TensorBase._wrap(x.backend.xp.zeros_like(x.array) + identity, x.backend)
    if n < 0:
        x, n = inv(x), -n
    result = None
    while n:
        if n & 1:
            result = x if result is None else result @ x
        n >>= 1
        if n:
            x = x @ x
    return result


def matrix_rank(
    x: TensorBase,
    /,
    *,
    rtol: float | TensorBase | None = None,
    atol: float | TensorBase | None = None,
    hermitian: bool = False,
) -> TensorBase:
    """The number of singular values above ``max(atol, rtol * largest)`` (an int64 tensor,
    outside the graph), the tolerances as `pinv` reads them; with `hermitian`, the absolute
    eigenvalues of the symmetric matrix read from its lower triangle (PyTorch's).

    >>> import autograd_core as ag
    >>> ag.linalg.matrix_rank(ag.tensor([[1.0, 2.0], [2.0, 4.0]])).item()
    1
    """
    x = _matrices("matrix_rank", x)
    rtol, atol = _tolerances(x, rtol, atol)
    ns = raw_namespace(x.backend)
    if hermitian:
        values = ns.flip(ns.sort(ns.abs(ns.linalg.eigvalsh(x.array)), axis=-1), axis=-1)
    else:
        values = ns.linalg.svdvals(x.array)
    count = ns.sum(ns.astype(values > _cutoff(ns, values, rtol, atol), ns.int64), axis=-1)
    return TensorBase._wrap(count, x.backend)


# --- decompositions ---------------------------------------------------------------------------
def cholesky(x: TensorBase, /, *, upper: bool = False) -> TensorBase:
    """The Cholesky factor L (``x = L L^T``) of each symmetric positive-definite matrix, or
    ``U = L^T`` with ``upper=True``. Only the lower triangle of `x` is read, and the gradient
    is symmetric (PyTorch's rule), so check it through a symmetric function of the input.
    """
    x = _matrices("cholesky", x, square=True)
    n = x.shape[-1]
    data = _CHOLESKY(raw_namespace(x.backend), x.array)
    lower = _CHOLESKY.record(data, x.backend, (x, _eye(x, n), _triangle(x, n, upper=False)))
    return matrix_transpose(lower) if upper else lower


def _cholesky_vjp(ns: Any, g: Any, out: Any, x: Any, eye: Any, lower: Any) -> Any:
    """PyTorch's cholesky_backward: ``L^-T Phi L^-1`` with Phi the symmetric matrix whose
    lower triangle is ``tril(L^T g)`` with its diagonal halved."""
    p = (out.mT @ g) * lower
    phi = 0.5 * (p + (p - p * eye).mT)
    return ns.linalg.solve(out.mT, ns.linalg.solve(out.mT, phi).mT).mT


def _cholesky_jvp(ns: Any, tangents: Sequence[Any], out: Any, x: Any, eye: Any, lower: Any) -> Any:
    """PyTorch's cholesky_jvp: ``L Phi(L^-1 dA L^-T)``, Phi the lower triangle with its diagonal
    halved, for the symmetric part of the tangent dA."""
    inner = ns.linalg.solve(out, ns.linalg.solve(out, _symmetric_part(tangents[0])).mT)
    return out @ (inner * lower - 0.5 * inner * eye)


_CHOLESKY = Primitive(  # the node's inputs: x, then the identity and the lower triangular mask the VJP reads
    "cholesky",
    lambda ns, x: ns.linalg.cholesky(x),
    vjps=(_cholesky_vjp, None, None),
    saves="output",
    jvp=_cholesky_jvp,
)


def eigh(x: TensorBase, /) -> EighResult:
    """``(eigenvalues, eigenvectors)`` of each symmetric matrix, eigenvalues ascending.

    The gradient is ``V (diag(g_values) + F * V^T g_vectors) V^T`` with F_ij = 1/(l_j - l_i)
    (skew part, PyTorch's rule): repeated eigenvalues make it inf/nan, as in PyTorch. The
    eigenvectors' signs are arbitrary, so a loss should not depend on them.
    """
    x = _matrices("eigh", x, square=True)
    parts = _EIGH(raw_namespace(x.backend), x.array)
    return EighResult(*_decomposition(_EIGH, x, parts, (x, _eye(x, x.shape[-1]))))


def _eigh_vjp(ns: Any, grads: list, outs: list, x: Any, eye: Any) -> Any:
    (g_values, g_vectors), (values, vectors) = grads, outs
    vtg = vectors.mT @ g_vectors
    gaps = values[..., None, :] - values[..., :, None] + eye  # 1 on the diagonal, where the skew part is 0
    inner = 0.5 * (vtg - vtg.mT) / gaps + eye * g_values[..., None, :]
    return vectors @ inner @ vectors.mT


def _eigh_jvp(ns: Any, t: Any, outs: list, x: Any, eye: Any) -> list:
    """With ``M = V^T dA V`` (dA's symmetric part): ``d values = diag(M)`` and
    ``d V = V (F * M)``, F_ij = 1/(l_j - l_i) off the diagonal and 0 on it."""
    values, vectors = outs
    m = vectors.mT @ _symmetric_part(t) @ vectors
    gaps = values[..., None, :] - values[..., :, None] + eye  # 1 on the diagonal, where M is cleared
    return [ns.sum(m * eye, axis=-1), vectors @ ((m - m * eye) / gaps)]


_EIGH = Primitive(  # the node's inputs: x, the identity, the packing
    "eigh",
    lambda ns, x: ns.linalg.eigh(x),
    vjps=(_unpacked(_eigh_vjp), None, None),
    saves="output",
    jvp=_packed(_eigh_jvp),
)


def eigvalsh(x: TensorBase, /) -> TensorBase:
    """The eigenvalues of each symmetric matrix, ascending; the gradient ``V diag(g) V^T``
    recomputes the eigenvectors V (so it stays finite for repeated eigenvalues)."""
    x = _matrices("eigvalsh", x, square=True)
    return _EIGVALSH.bind(x)


def _eigvalsh_vjp(ns: Any, g: Any, out: Any, x: Any) -> Any:
    vectors = ns.linalg.eigh(x)[1]
    return (vectors * g[..., None, :]) @ vectors.mT


def _eigvalsh_jvp(ns: Any, tangents: Sequence[Any], out: Any, x: Any) -> Any:
    """``diag(V^T dA V)``, the eigenvectors V recomputed as the VJP does."""
    vectors = ns.linalg.eigh(x)[1]
    return ns.sum(vectors * (tangents[0] @ vectors), axis=-2)


_EIGVALSH = Primitive("eigvalsh", lambda ns, x: ns.linalg.eigvalsh(x), vjps=(_eigvalsh_vjp,), jvp=_eigvalsh_jvp)


def qr(x: TensorBase, /, *, mode: str = "reduced") -> QRResult:
    """``(Q, R)`` with ``x = Q R``, Q with orthonormal columns and R upper triangular.

    Differentiable for full-rank inputs in mode "reduced", and "complete" when M <= N
    (the same decomposition); a tall matrix's complete Q is not unique, so its backward
    raises (as PyTorch's). Wide matrices (M < N) differentiate as ``[A1 | A2]`` with
    ``A1 = Q R1`` and ``R2 = Q^T A2``.
    """
    x = _matrices("qr", x)
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', not {mode!r}")
    m, n = x.shape[-2:]
    k = min(m, n)
    parts = _QR(raw_namespace(x.backend), x.array, mode)
    inputs = (x, mode, _eye(x, k), _triangle(x, k, upper=True))
    return QRResult(*_decomposition(_QR, x, parts, inputs, saved=(x,) if m < n else ()))


def _check_qr_mode(x: Any, mode: str) -> None:
    if x.shape[-2] > x.shape[-1] and mode == "complete":
        raise NotImplementedError(
            "qr: the gradient of mode='complete' is not defined for tall matrices "
            "(M > N: the last M - N columns of Q are not unique); use mode='reduced'"
        )


def _qr_vjp(ns: Any, grads: list, outs: list, x: Any, mode: str, eye: Any, upper: Any) -> Any:
    (g_q, g_r), (q, r) = grads, outs
    m, n = x.shape[-2:]
    _check_qr_mode(x, mode)
    if m >= n:
        return _qr_tall_vjp(ns, g_q, g_r, q, r, eye, upper)
    g_r2 = g_r[..., m:]
    g_a1 = _qr_tall_vjp(ns, g_q + x[..., m:] @ g_r2.mT, g_r[..., :m], q, r[..., :m], eye, upper)
    return ns.concat([g_a1, q @ g_r2], axis=-1)


def _qr_tall_vjp(ns: Any, g_q: Any, g_r: Any, q: Any, r: Any, eye: Any, upper: Any) -> Any:
    """PyTorch's linalg_qr_backward for M >= N: ``(g_Q + Q copyltu(M)) R^-T`` with
    ``M = g_R R^T - Q^T g_Q`` (its upper triangle mirrored into a symmetric matrix)."""
    upper_part = (g_r @ r.mT - q.mT @ g_q) * upper
    symmetric = upper_part + upper_part.mT - upper_part * eye
    return ns.linalg.solve(r, (q @ symmetric + g_q).mT).mT


def _qr_jvp(ns: Any, t: Any, outs: list, x: Any, mode: str, eye: Any, upper: Any) -> list:
    """A wide matrix ``[A1 | A2]``: the tall rule for A1, and ``d R2 = dQ^T A2 + Q^T dA2``."""
    q, r = outs
    m, n = x.shape[-2:]
    _check_qr_mode(x, mode)
    if m >= n:
        return list(_qr_tall_jvp(ns, t, q, r, eye, upper))
    d_q, d_r1 = _qr_tall_jvp(ns, t[..., :m], q, r[..., :m], eye, upper)
    return [d_q, ns.concat([d_r1, d_q.mT @ x[..., m:] + q.mT @ t[..., m:]], axis=-1)]


def _qr_tall_jvp(ns: Any, t: Any, q: Any, r: Any, eye: Any, upper: Any) -> tuple[Any, Any]:
    """PyTorch's linalg_qr_jvp for M >= N: with ``B = Q^T dA R^-1``, ``Q^T dQ`` is the skew
    matrix C whose strict lower triangle is B's, ``dR = (B - C) R`` and
    ``dQ = dA R^-1 - Q (B - C)``."""
    t_r_inv = ns.linalg.solve(r.mT, t.mT).mT
    b = q.mT @ t_r_inv
    below = b - b * upper
    b_minus_c = b - below + below.mT
    return t_r_inv - q @ b_minus_c, b_minus_c @ r


_QR = Primitive(  # the node's inputs: x, mode, the identity and the upper triangular mask, the packing
    "qr",
    lambda ns, x, mode: ns.linalg.qr(x, mode=mode),
    vjps=(_unpacked(_qr_vjp), None, None, None, None),
    saves="output",
    jvp=_packed(_qr_jvp),
)


def svd(x: TensorBase, /, *, full_matrices: bool = True) -> SVDResult:
    """``(U, S, Vh)`` with ``x = U diag(S) Vh``, singular values descending.

    The gradient is PyTorch's svd_backward, for distinct nonzero singular values (repeated
    ones give inf/nan). With ``full_matrices=True`` only the first min(M, N) columns of U
    and rows of Vh are differentiated (the others are not unique), as in PyTorch. Signs of
    singular vectors are arbitrary, so a loss should not depend on them.
    """
    x = _matrices("svd", x)
    parts = _SVD(raw_namespace(x.backend), x.array, full_matrices)
    return SVDResult(*_decomposition(_SVD, x, parts, (x, full_matrices, _eye(x, min(x.shape[-2:])))))


def _svd_vjp(ns: Any, grads: list, outs: list, x: Any, full_matrices: bool, eye: Any) -> Any:
    (g_u, g_s, g_vh), (u, s, vh) = grads, outs
    m, n = x.shape[-2:]
    if full_matrices:
        k = min(m, n)
        g_u, u, g_vh, vh = g_u[..., :k], u[..., :k], g_vh[..., :k, :], vh[..., :k, :]
    utg, vtg = u.mT @ g_u, vh @ g_vh.mT
    squares = s * s
    gaps = squares[..., None, :] - squares[..., :, None] + eye  # 1 on the diagonal, where the skew parts are 0
    inner = ((utg - utg.mT) * s[..., None, :] + s[..., :, None] * (vtg - vtg.mT)) / gaps
    inner = inner + eye * g_s[..., None, :]
    if m > n:
        scaled = g_u / s[..., None, :]
        return (u @ inner + scaled - u @ (u.mT @ scaled)) @ vh
    if m < n:
        scaled = g_vh / s[..., :, None]
        return u @ (inner @ vh + scaled - (scaled @ vh.mT) @ vh)
    return u @ inner @ vh


def _svd_jvp(ns: Any, t: Any, outs: list, x: Any, full_matrices: bool, eye: Any) -> list:
    """PyTorch's linalg_svd_jvp, for the first min(M, N) singular vectors (the others, not
    unique, get a zero tangent, as the VJP leaves them out). With ``dP = U^T dA V``:
    ``dS = diag(dP)``, ``U^T dU = F * (dP S + S dP^T)`` and ``V^T dV = F * (S dP + dP^T S)``,
    F_ij = 1/(s_j^2 - s_i^2) off the diagonal and 0 on it; a tall U (a wide V) also moves
    out of its span by ``(dA V - U dP) S^-1`` (``(dA^T U - V dP^T) S^-1``)."""
    u, s, vh = outs
    m, n = x.shape[-2:]
    k = min(m, n)
    u_k, v_k = u[..., :k], vh[..., :k, :].mT
    d_p = u_k.mT @ t @ v_k
    squares = s * s
    gaps = squares[..., None, :] - squares[..., :, None] + eye  # 1 on the diagonal, where the sums are cleared

    def rotation(half: Any) -> Any:
        both = half + half.mT
        return (both - both * eye) / gaps

    d_u = u_k @ rotation(d_p * s[..., None, :])
    d_v = v_k @ rotation(s[..., :, None] * d_p)
    if m > n:
        d_u = d_u + (t @ v_k - u_k @ d_p) / s[..., None, :]
    if m < n:
        d_v = d_v + (t.mT @ u_k - v_k @ d_p.mT) / s[..., None, :]
    d_vh = d_v.mT
    if full_matrices:
        d_u = ns.concat([d_u, ns.zeros_like(u[..., k:])], axis=-1)
        d_vh = ns.concat([d_vh, ns.zeros_like(vh[..., k:, :])], axis=-2)
    return [d_u, ns.sum(d_p * eye, axis=-1), d_vh]


_SVD = Primitive(  # the node's inputs: x, full_matrices, the identity, the packing
    "svd",
    lambda ns, x, full_matrices: ns.linalg.svd(x, full_matrices=full_matrices),
    vjps=(_unpacked(_svd_vjp), None, None, None),
    saves="output",
    jvp=_packed(_svd_jvp),
)


def svdvals(x: TensorBase, /) -> TensorBase:
    """The singular values, descending; the gradient ``U diag(g) Vh`` recomputes the
    singular vectors (so it stays finite for repeated singular values)."""
    x = _matrices("svdvals", x)
    return _SVDVALS.bind(x)


def _svdvals_vjp(ns: Any, g: Any, out: Any, x: Any) -> Any:
    u, _, vh = ns.linalg.svd(x, full_matrices=False)
    return (u * g[..., None, :]) @ vh


def _svdvals_jvp(ns: Any, tangents: Sequence[Any], out: Any, x: Any) -> Any:
    """``diag(U^T dA V)``, the singular vectors recomputed as the VJP does."""
    u, _, vh = ns.linalg.svd(x, full_matrices=False)
    return ns.sum(u * (tangents[0] @ vh.mT), axis=-2)


_SVDVALS = Primitive("svdvals", lambda ns, x: ns.linalg.svdvals(x), vjps=(_svdvals_vjp,), jvp=_svdvals_jvp)


# --- norms ----------------------------------------------------------------------------------
@ops._accumulated_in_float32
def vector_norm(x: TensorBase, /, *, axis: Axis = None, keepdims: bool = False, ord: float = 2) -> TensorBase:  # noqa: A002 - the standard's name
    """The `ord`-norm over `axis` (all axes when None): 2, 1, inf, -inf, 0 (the count of
    nonzeros, zero gradient) or any other p. Where the norm is 0 the gradient is 0, as in
    PyTorch; ties for the largest (smallest) magnitude share the inf (-inf) norm's gradient.

    >>> import autograd_core as ag
    >>> ag.linalg.vector_norm(ag.tensor([3.0, -4.0])).item()
    5.0
    """
    x = _tensor("vector_norm", x)
    axes = None if axis is None else _axes(axis, x.ndim)  # None: the norm of the flattened tensor
    return _VECTOR_NORM.bind(x, axes, keepdims, ord, saved=(x,))


def _norm_slope(ns: Any, out: Any, x: Any, axes: tuple[int, ...], p: float, g: Any = 1.0) -> Any:
    """`g` times the derivative of the `p`-norm over `axes` with respect to each element of
    `x`, in PyTorch's form for each p, so that the zeros (a zero norm or element) and the nans
    of its second order are PyTorch's: 0 where the norm is 0; for p < 1, 0 at a zero element
    (where the slope is infinite); shared evenly among the tied extremes of the inf norms."""
    norm = expand_back(ns, out, x.shape, axes)
    if p == 1:
        return ns.sign(x) * g
    if math.isinf(p):
        hits = ns.astype(ns.abs(x) == norm, x.dtype)
        return ns.sign(x) * ((g / ns.sum(hits, axis=axes, keepdims=True)) * hits)
    if p < 1:
        scaled = ns.sign(x) * ns.where(x == 0, 0.0, ns.abs(x) ** (p - 1))
        return scaled * g * norm ** (1 - p)
    if p == 2:
        return ns.where(norm == 0, 0.0, x / norm) * g
    scaled = ns.sign(x) * ns.abs(x) ** (p - 1) if p < 2 else x * ns.abs(x) ** (p - 2)
    return scaled * ns.where(norm == 0, 0.0, g / norm ** (p - 1))


def _vector_norm_vjp(ns: Any, g: Any, out: Any, x: Any, axes: tuple[int, ...] | None, keepdims: bool, p: float) -> Any:
    if p == 0:
        return ns.zeros_like(x)
    axes = tuple(range(x.ndim)) if axes is None else axes
    return _norm_slope(ns, out, x, axes, p, expand_back(ns, g, x.shape, axes))


def _vector_norm_jvp(
    ns: Any, tangents: Sequence[Any], out: Any, x: Any, axes: tuple[int, ...] | None, keepdims: bool, p: float
) -> Any:
    if p == 0:
        return None
    axes = tuple(range(x.ndim)) if axes is None else axes
    return ns.sum(tangents[0] * _norm_slope(ns, out, x, axes, p), axis=axes, keepdims=keepdims)


_VECTOR_NORM = Primitive(  # the VJP reads x and the output (saves="output", and vector_norm passes saved=(x,))
    "vector_norm",
    lambda ns, x, axes, keepdims, p: ns.linalg.vector_norm(x, axis=axes, keepdims=keepdims, ord=p),
    vjps=(_vector_norm_vjp, None, None, None),
    saves="output",
    jvp=_vector_norm_jvp,
)


_MATRIX_NORMS: dict[Any, Callable[[TensorBase], TensorBase]] = {
    "fro": lambda x: vector_norm(x, axis=(-2, -1)),
    "nuc": lambda x: ops.sum(svdvals(x), axis=-1),
    2: lambda x: ops.max(svdvals(x), axis=-1),
    -2: lambda x: ops.min(svdvals(x), axis=-1),
    1: lambda x: ops.max(ops.sum(elementwise.abs(x), axis=-2), axis=-1),
    -1: lambda x: ops.min(ops.sum(elementwise.abs(x), axis=-2), axis=-1),
    math.inf: lambda x: ops.max(ops.sum(elementwise.abs(x), axis=-1), axis=-1),
    -math.inf: lambda x: ops.min(ops.sum(elementwise.abs(x), axis=-1), axis=-1),
}


def matrix_norm(x: TensorBase, /, *, keepdims: bool = False, ord: float | str = "fro") -> TensorBase:  # noqa: A002 - the standard's name
    """The `ord`-norm of each matrix: "fro", "nuc", 2 and -2 (the extreme singular values),
    1 and -1 (column sums), inf and -inf (row sums). Built from differentiable pieces:
    `vector_norm`, `svdvals`, abs, sum, max and min."""
    x = _matrices("matrix_norm", x)
    if ord not in _MATRIX_NORMS:
        raise ValueError(f"matrix_norm: ord must be one of {list(_MATRIX_NORMS)}, not {ord!r}")
    norm = _MATRIX_NORMS[ord](x)
    return ops.reshape(norm, (*norm.shape, 1, 1)) if keepdims else norm


# --- products, diagonals and traces -----------------------------------------------------------
def outer(x1: TensorBase, x2: TensorBase, /) -> TensorBase:
    """The outer product of two vectors."""
    a, b, backend = _pair("outer", x1, x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"outer needs two 1-D tensors, got shapes {a.shape} and {b.shape}")
    return _OUTER.bind(a, b)


_OUTER = Primitive(
    "outer",
    lambda ns, a, b: ns.linalg.outer(a, b),
    vjps=(lambda ns, g, out, a, b: g @ b, lambda ns, g, out, a, b: a @ g),
    jvp="multilinear",
)


def cross(x1: TensorBase, x2: TensorBase, /, *, axis: int = -1) -> TensorBase:
    """The cross product of 3-element vectors along `axis`, broadcast over the other axes (a
    non-negative `axis` counts in the broadcast shape, as PyTorch's `dim`)."""
    a, b, backend = _pair("cross", x1, x2)
    if axis >= 0:
        axis -= max(a.ndim, b.ndim)
    if not -min(a.ndim, b.ndim) <= axis < 0 or a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ValueError(f"cross needs vectors of 3 elements along axis {axis}, got shapes {a.shape} and {b.shape}")
    return _CROSS.bind(a, b, axis)


_CROSS = Primitive(
    "cross",
    lambda ns, a, b, axis: ns.linalg.cross(a, b, axis=axis),
    vjps=(
        lambda ns, g, out, a, b, axis: sum_to(ns, ns.linalg.cross(b, g, axis=axis), a.shape),
        lambda ns, g, out, a, b, axis: sum_to(ns, ns.linalg.cross(g, a, axis=axis), b.shape),
        None,
    ),
    jvp="multilinear",
)


def tensordot(x1: TensorBase, x2: TensorBase, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> TensorBase:
    """The sum of products over `axes` (the last N of `x1` and first N of `x2`, or two
    sequences of axes), as one matrix product of the permuted, flattened operands.

    >>> import autograd_core as ag
    >>> ag.linalg.tensordot(ag.ones((2, 3)), ag.ones((3, 4)), axes=1).shape
    (2, 4)
    """
    a, b, _ = _pair("tensordot", x1, x2)
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError(f"tensordot: axes must be non-negative, not {axes}")
        axes = (range(a.ndim - axes, a.ndim), range(axes))
    a_axes, b_axes = _axis_list(a, axes[0]), _axis_list(b, axes[1])
    if len(a_axes) != len(b_axes) or any(a.shape[i] != b.shape[j] for i, j in zip(a_axes, b_axes)):
        raise ValueError(
            f"tensordot: axes {a_axes} and {b_axes} do not pair equal sizes of shapes {a.shape} and {b.shape}"
        )
    a_free = [i for i in range(a.ndim) if i not in a_axes]
    b_free = [i for i in range(b.ndim) if i not in b_axes]
    size = math.prod(a.shape[i] for i in a_axes)
    a2 = ops.reshape(ops.permute_dims(a, (*a_free, *a_axes)), (math.prod(a.shape[i] for i in a_free), size))
    b2 = ops.reshape(ops.permute_dims(b, (*b_axes, *b_free)), (size, math.prod(b.shape[i] for i in b_free)))
    return ops.reshape(matmul(a2, b2), (*(a.shape[i] for i in a_free), *(b.shape[i] for i in b_free)))


def _axis_list(x: TensorBase, axes: int | Sequence[int]) -> list[int]:
    axes = [axes] if isinstance(axes, int) else list(axes)
    if any(not -x.ndim <= i < x.ndim for i in axes):
        raise ValueError(f"tensordot: axes {axes} out of range for shape {x.shape}")
    return [i % x.ndim for i in axes]


def vecdot(x1: TensorBase, x2: TensorBase, /, *, axis: int = -1) -> TensorBase:
    """The dot product of the vectors along `axis`, broadcast over the other axes (`x1`
    conjugated when complex), in the promoted dtype.

    >>> import autograd_core as ag
    >>> ag.linalg.vecdot(ag.tensor([1.0, 2.0]), ag.tensor([3.0, 4.0])).item()
    11.0
    """
    a, b, _ = _pair("vecdot", x1, x2)
    if axis >= 0:
        axis -= max(a.ndim, b.ndim)
    if not -min(a.ndim, b.ndim) <= axis < 0 or a.shape[axis] != b.shape[axis]:
        raise ValueError(f"vecdot: shapes {a.shape} and {b.shape} differ along axis {axis}")
    if a.dtype.is_complex:
        a = elementwise.conj(a)
    return ops.sum(a * b, axis=axis, dtype=a.dtype)


def diagonal(x: TensorBase, /, *, offset: int = 0) -> TensorBase:
    """The `offset` diagonal of each matrix (above the main one for offset > 0), a view; its
    gradient is written back onto that diagonal."""
    x = _matrices("diagonal", x)
    return _view(_DIAGONAL.bind(x, offset), x, ("diagonal", offset))


def _write_diagonal(x: TensorBase, offset: int, values: TensorBase) -> TensorBase:
    """`x` with its `offset` diagonal replaced by `values` (written where `_diagonal_vjp` scatters)."""
    rows, cols = x.shape[-2:]
    start = offset if offset >= 0 else -offset * cols
    flat = ops.reshape(x, (*x.shape[:-2], rows * cols))
    length = values.shape[-1]
    along = (..., slice(start, start + (length - 1) * (cols + 1) + 1, cols + 1) if length else slice(0, 0))
    return ops.reshape(ops.index_put(flat, along, values), x.shape)


def _diagonal_layout(shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> layout.Layout:
    rows, cols = shape[-2:]
    length = max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols))
    return (*shape[:-2], length), (*strides[:-2], strides[-2] + strides[-1])


ops._VIEW_OPS["diagonal"] = lambda x, offset: diagonal(x, offset=offset)
ops._VIEW_WRITES["diagonal"] = _write_diagonal
layout.LAYOUTS["diagonal"] = _diagonal_layout


def _diagonal_vjp(ns: Any, g: Any, out: Any, x: Any, offset: int) -> Any:
    """The gradient scattered onto the diagonal: every (cols + 1)-th element of each
    flattened matrix, from the diagonal's first."""
    rows, cols = x.shape[-2:]
    length = g.shape[-1]
    start = (offset if offset >= 0 else -offset * cols) if length else 0
    key = (Ellipsis, slice(start, start + (length - 1) * (cols + 1) + 1 if length else 0, cols + 1))
    return ns.reshape(scatter(ns, g, (*x.shape[:-2], rows * cols), key), x.shape)


_DIAGONAL = Primitive(
    "diagonal",
    lambda ns, x, offset: ns.linalg.diagonal(x, offset=offset),
    vjps=(_diagonal_vjp, None),
    saves="none",
    jvp="linear",
)


def trace(x: TensorBase, /, *, offset: int = 0, dtype: Any = None) -> TensorBase:
    """The sum of the `offset` diagonal of each matrix (in `dtype` when given)."""
    return ops.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


# --- PyTorch's linear algebra beyond the standard -----------------------------------------------
# Compositions of the differentiable ops above, written against the namespace of tensors
# (`tensor_namespace()`), so their gradients, forward-mode rules and batching come from the
# ops they are made of. `autograd_core.torch` gives them PyTorch's names and signatures.
class LUFactorResult(NamedTuple):
    LU: TensorBase  # noqa: N815 - PyTorch's field names
    pivots: TensorBase


class PLUResult(NamedTuple):
    P: TensorBase  # noqa: N815
    L: TensorBase  # noqa: N815
    U: TensorBase  # noqa: N815


class LstsqResult(NamedTuple):
    solution: TensorBase
    residuals: TensorBase
    rank: TensorBase
    singular_values: TensorBase


class EigResult(NamedTuple):
    eigenvalues: TensorBase
    eigenvectors: TensorBase


def _eye_like(x: TensorBase, rows: int, cols: int | None = None) -> TensorBase:
    """The identity (`rows` by `cols`) in `x`'s dtype on `x`'s device, a constant."""
    return tensor_namespace().eye(rows, cols, dtype=x.dtype, device=x.device)


def _info(x: TensorBase) -> TensorBase:
    """The int32 zeros of PyTorch's ``*_ex`` functions' `info`, one per matrix of `x`: a
    failure is not counted here (it raises where the library's kernel raises, as numpy's and
    torch's do, and gives inf or nan where it does not, as jax's)."""
    return tensor_namespace().zeros(x.shape[:-2], dtype="int32", device=x.device)


def _symmetric_from(x: TensorBase, upper: bool) -> TensorBase:
    """`x` with the values of the symmetric matrix its lower (or upper) triangle defines, and
    `x`'s own gradient (PyTorch's eigh reads one triangle; its gradient is not projected)."""
    ns = raw_namespace(x.backend)
    triangle = ns.triu(x.array) if upper else ns.tril(x.array)
    mirror = triangle + (ns.triu(x.array, k=1) if upper else ns.tril(x.array, k=-1)).mT
    return x + TensorBase._wrap(mirror - x.array, x.backend)


def solve_triangular(
    a: TensorBase, b: TensorBase, /, *, upper: bool, left: bool = True, unitriangular: bool = False
) -> TensorBase:
    """The solution X of ``A X = B`` (``X A = B`` when not `left`) for the triangle of `a`
    (upper or lower) alone, with ones on its diagonal when `unitriangular`; `a`'s gradient
    lies in that triangle, as PyTorch's ``linalg.solve_triangular``.

    >>> import autograd_core as ag
    >>> a = ag.tensor([[2.0, 9.0], [1.0, 4.0]])
    >>> solve_triangular(a, ag.tensor([[2.0], [4.0]]), upper=False).tolist()
    [[1.0], [0.75]]
    """
    ns = tensor_namespace()
    a = _matrices("solve_triangular", a, square=True)
    b = _matrices("solve_triangular", b)
    if unitriangular:
        t = (ns.triu(a, k=1) if upper else ns.tril(a, k=-1)) + _eye_like(a, a.shape[-1])
    else:
        t = ns.triu(a) if upper else ns.tril(a)
    if left:
        return solve(t, b)
    return matrix_transpose(solve(matrix_transpose(t), matrix_transpose(b)))


def lu_factor(a: TensorBase, /, *, pivot: bool = True) -> LUFactorResult:
    """``(LU, pivots)`` of ``A = P L U`` by Gaussian elimination with partial pivoting, as
    LAPACK's getrf: L's strict lower triangle and U packed in one matrix, and the 1-based
    int32 row swapped with each row in turn. A composition of differentiable ops (the pivots
    are piecewise constant), so the gradient is the factorisation's.

    >>> import autograd_core as ag
    >>> lu, pivots = lu_factor(ag.tensor([[1.0, 2.0], [3.0, 4.0]], dtype="float64"))
    >>> lu.tolist(), pivots.tolist()
    ([[3.0, 4.0], [0.3333333333333333, 0.6666666666666667]], [2, 2])
    """
    if not pivot:
        raise NotImplementedError("lu_factor: LU without pivoting is not implemented here (nor on PyTorch's CPU)")
    ns = tensor_namespace()
    a = _matrices("lu_factor", a)
    m, n = a.shape[-2:]
    rows, cols = ns.arange(m, device=a.device), ns.arange(n, device=a.device)
    below = rows[:, None]
    pivots = []
    for i in range(min(m, n)):
        p = ns.argmax(ns.abs(a[..., i:, i]), axis=-1, keepdims=True) + i
        pivots.append(p)
        swapped = ns.where(rows == i, p, ns.where(rows == p, i, rows))  # the row each row takes
        a = ns.astype(swapped[..., :, None] == rows, a.dtype) @ a
        head = a[..., i : i + 1, i : i + 1]
        factors = a[..., :, i : i + 1] / ns.where(head == 0, 1.0, head)  # a zero pivot leaves its column
        eliminated = a - ns.where((below > i) & (cols > i), factors * a[..., i : i + 1, :], 0.0)
        a = ns.where((below > i) & (cols == i), factors, eliminated)
    if not pivots:
        return LUFactorResult(a, ns.zeros((*a.shape[:-2], 0), dtype="int32", device=a.device))
    return LUFactorResult(a, ns.astype(ns.concat(pivots, axis=-1) + 1, "int32"))


def _permutation(pivots: TensorBase, m: int, dtype: Any) -> TensorBase:
    """The permutation matrix P (m by m) of LAPACK's 1-based `pivots`: the row swaps they
    make, in turn, are ``A = P L U``."""
    ns = tensor_namespace()
    rows = ns.arange(m, device=pivots.device)
    taken = ns.zeros((*pivots.shape[:-1], m), dtype="int64", device=pivots.device) + rows  # the row at each place
    for i in range(pivots.shape[-1]):
        p = ns.astype(pivots[..., i : i + 1], "int64") - 1
        at_p = ns.sum(ns.where(rows == p, taken, 0), axis=-1, keepdims=True)
        taken = ns.where(rows == i, at_p, ns.where(rows == p, taken[..., i : i + 1], taken))
    return ns.astype(rows[:, None] == taken[..., None, :], dtype)


def lu_unpack(lu: TensorBase, pivots: TensorBase, /, unpack_data: bool = True, unpack_pivots: bool = True) -> PLUResult:
    """``(P, L, U)`` from `lu_factor`'s packed result: L (M by K) unit lower triangular, U (K
    by N) upper triangular, P the permutation of the pivots; those not unpacked are empty,
    as in PyTorch.

    >>> import autograd_core as ag
    >>> p, l, u = lu_unpack(*lu_factor(ag.tensor([[1.0, 2.0], [3.0, 4.0]])))
    >>> (p @ l @ u).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    ns = tensor_namespace()
    lu = _matrices("lu_unpack", lu)
    m, n = lu.shape[-2:]
    k = min(m, n)
    empty = ns.zeros((0,), dtype=lu.dtype, device=lu.device)
    p = _permutation(pivots, m, lu.dtype) if unpack_pivots else empty
    if not unpack_data:
        return PLUResult(p, empty, empty)
    lower = ns.tril(lu[..., :, :k], k=-1) + _eye_like(lu, m, k)
    return PLUResult(p, lower, ns.triu(lu[..., :k, :]))


def lu(a: TensorBase, /, *, pivot: bool = True) -> PLUResult:
    """``(P, L, U)`` with ``A = P L U`` (PyTorch's ``linalg.lu``), differentiable."""
    return lu_unpack(*lu_factor(a, pivot=pivot))


def lu_solve(
    lu: TensorBase, pivots: TensorBase, b: TensorBase, /, *, left: bool = True, adjoint: bool = False
) -> TensorBase:
    """The solution X of ``A X = B`` (``X A = B`` when not `left`; A^T for A when `adjoint`)
    for ``A = P L U`` given as `lu_factor` packs it; differentiable in `lu` and `b`.

    >>> import autograd_core as ag
    >>> lu_solve(*lu_factor(ag.tensor([[2.0, 0.0], [0.0, 4.0]])), ag.tensor([[1.0], [1.0]])).tolist()
    [[0.5], [0.25]]
    """
    b = _matrices("lu_solve", b)
    if not left:  # X A = B is A^T X^T = B^T
        return matrix_transpose(lu_solve(lu, pivots, matrix_transpose(b), adjoint=not adjoint))
    p, lower, upper = lu_unpack(lu, pivots)
    if adjoint:  # A^T = U^T L^T P^T
        y = solve_triangular(matrix_transpose(upper), b, upper=False)
        return p @ solve_triangular(matrix_transpose(lower), y, upper=True, unitriangular=True)
    y = solve_triangular(lower, matrix_transpose(p) @ b, upper=False, unitriangular=True)
    return solve_triangular(upper, y, upper=True)


def _reflectors(a: TensorBase, tau: TensorBase, start: TensorBase) -> TensorBase:
    """``H_1 ... H_k start`` for the Householder reflections ``H_i = I - tau_i v_i v_i^T``
    whose vectors v_i are the columns of `a` below the diagonal, with a 1 on it (LAPACK's
    packing, as geqrf leaves them)."""
    ns = tensor_namespace()
    m, k = a.shape[-2], tau.shape[-1]
    if k > min(a.shape[-2:]):
        raise ValueError(f"householder_product: {k} reflectors, more than the {min(a.shape[-2:])} columns of {a.shape}")
    vectors = ns.tril(a[..., :, :k], k=-1) + _eye_like(a, m, k)
    q = start
    for i in reversed(range(k)):
        v = vectors[..., :, i : i + 1]
        q = q - (tau[..., i : i + 1, None] * v) @ (matrix_transpose(v) @ q)
    return q + ns.zeros((*a.shape[:-2], *q.shape[-2:]), dtype=a.dtype, device=a.device)


def householder_product(a: TensorBase, tau: TensorBase, /) -> TensorBase:
    """The first N columns of ``H_1 ... H_k`` (M by N) for `a`'s packed Householder vectors
    and their scales `tau` (PyTorch's ``linalg.householder_product``, LAPACK's orgqr).

    >>> import autograd_core as ag
    >>> householder_product(ag.tensor([[1.0], [1.0]]), ag.tensor([1.0])).tolist()
    [[0.0], [-1.0]]
    """
    a = _matrices("householder_product", a)
    m, n = a.shape[-2:]
    if m < n:
        raise ValueError(f"householder_product: the input needs at least as many rows as columns, got {a.shape}")
    return _reflectors(a, tau, _eye_like(a, m, n))


def ormqr(
    a: TensorBase, tau: TensorBase, other: TensorBase, /, left: bool = True, transpose: bool = False
) -> TensorBase:
    """`other` multiplied by Q (``Q C`` when `left`, else ``C Q``; Q^T when `transpose`), Q
    the M by M product of `a`'s Householder reflections (PyTorch's ``ormqr``)."""
    a, other = _matrices("ormqr", a), _matrices("ormqr", other)
    q = _reflectors(a, tau, _eye_like(a, a.shape[-2]))
    q = matrix_transpose(q) if transpose else q
    return q @ other if left else other @ q


def geqrf(a: TensorBase, /) -> tuple[TensorBase, TensorBase]:
    """``(a, tau)``: the QR decomposition as LAPACK's geqrf packs it, R on and above the
    diagonal and the Householder vectors (their leading 1 implied) below it, with their scales
    `tau` (dlarfg's convention: ``beta = -sign(alpha) * norm``; tau 0 where the column below
    is zero). Q is ``householder_product(a, tau)``."""
    ns = tensor_namespace()
    a = _matrices("geqrf", a)
    m, n = a.shape[-2:]
    rows, cols = ns.arange(m, device=a.device), ns.arange(n, device=a.device)
    taus = []
    for i in range(min(m, n)):
        alpha = a[..., i, i]
        rest = vector_norm(a[..., i + 1 :, i], axis=-1) if i + 1 < m else ns.zeros_like(alpha)
        beta = ns.where(alpha >= 0, -1.0, 1.0) * ns.sqrt(alpha * alpha + rest * rest)
        reflects = rest != 0
        tau = ns.where(reflects, (beta - alpha) / ns.where(reflects, beta, 1.0), 0.0)
        scale = ns.where(reflects, 1.0 / ns.where(reflects, alpha - beta, 1.0), 0.0)
        v = ns.where(rows == i, 1.0, ns.where(rows > i, a[..., :, i] * scale[..., None], 0.0))
        applied = a - (tau[..., None, None] * v[..., :, None]) * (v[..., None, :] @ a)
        column = ns.where(rows == i, ns.where(reflects, beta, alpha)[..., None], v)
        a = ns.where(cols > i, applied, ns.where((cols == i) & (rows[:, None] >= i), column[..., :, None], a))
        taus.append(tau[..., None])
    tau = ns.concat(taus, axis=-1) if taus else ns.zeros((*a.shape[:-2], 0), dtype=a.dtype, device=a.device)
    return a, tau


def lstsq(a: TensorBase, b: TensorBase, /, rcond: float | None = None, *, driver: str | None = None) -> LstsqResult:
    """``(solution, residuals, rank, singular_values)`` of the least-squares problem
    ``min ||A X - B||``, through the pseudo-inverse (PyTorch's gradient). Which of the others
    are filled follows PyTorch's CPU drivers: residuals (the squared norms of ``A X - B``'s
    columns) for M > N with gels, gelsd and gelss; rank for all but gels; singular values
    for gelsd and gelss; the others empty.
    """
    ns = tensor_namespace()
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise ValueError(f"lstsq: driver must be one of gels, gelsy, gelsd, gelss, not {driver!r}")
    a = _matrices("lstsq", a)
    vector = b.ndim == a.ndim - 1
    b = b[..., None] if vector else b
    m, n = a.shape[-2:]
    rtol = finfo(a.dtype).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    x = pinv(a, rtol=rtol) @ b
    empty = ns.zeros((0,), dtype=a.dtype, device=a.device)
    residuals = empty
    if m > n and driver != "gelsy":
        residuals = ns.sum(ns.square(a @ x - b), axis=-2)
    constant = TensorBase._wrap(a.array, a.backend)
    rank = matrix_rank(constant, rtol=rtol) if driver != "gels" else ns.zeros((0,), dtype="int64", device=a.device)
    values = svdvals(constant) if driver in ("gelsd", "gelss") else empty
    return LstsqResult(x[..., 0] if vector else x, residuals, rank, values)


def eig(x: TensorBase, /) -> EigResult:
    """``(eigenvalues, eigenvectors)`` of each square matrix, complex, as the library's
    LAPACK geev gives them (unit eigenvectors); outside the graph, with a warning where `x`
    requires grad (gradients through complex values are not supported yet). Needs a library
    with ``linalg.eig`` (numpy, torch, jax) or a kernel registered for the ``eig`` primitive."""
    x = _matrices("eig", x, square=True)
    if x.requires_grad and grad_mode.is_grad_enabled():
        warnings.warn(
            "eig: gradients through complex eigenvalues and eigenvectors are not supported yet; "
            "the results are outside the graph",
            stacklevel=2,
        )
    return EigResult(*(TensorBase._wrap(p, x.backend) for p in _EIG(raw_namespace(x.backend), x.array)))


def eigvals(x: TensorBase, /) -> TensorBase:
    """The eigenvalues of each square matrix, complex, in `eig`'s order."""
    return eig(x).eigenvalues


def _library_eig(ns: Any, x: Any) -> tuple[Any, Any]:
    kernel = getattr(ns.linalg, "eig", None)
    if kernel is None:
        raise NotImplementedError(f"eig: the {ns.backend.name} backend's library has no linalg.eig")
    values, vectors = kernel(x)
    dtype = ns.complex64 if x.dtype == ns.float32 else ns.complex128 if x.dtype == ns.float64 else x.dtype
    return ns.astype(values, dtype), ns.astype(vectors, dtype)


_EIG = Primitive("eig", _library_eig)  # a backend whose library lacks linalg.eig may register a kernel


def matrix_exp(x: TensorBase, /) -> TensorBase:
    """The exponential of each square matrix, by scaling and squaring with the degree-13 Padé
    approximant (Higham 2005), composed of matmul and solve (so differentiable). The number of
    squarings is read from the largest 1-norm of the batch (a host value).

    >>> import autograd_core as ag
    >>> round(matrix_exp(ag.tensor([[0.0, 0.0], [0.0, 1.0]], dtype="float64")).tolist()[1][1], 12)
    2.718281828459
    """
    x = _matrices("matrix_exp", x, square=True)
    if x.size == 0:
        return x + 0.0
    norm = TensorBase._wrap(x.array, x.backend)
    largest = float(ops.max(matrix_norm(norm, ord=1)))
    squarings = max(0, math.ceil(math.log2(largest / 5.371920351148152))) if largest > 0 else 0
    a = x / 2.0**squarings
    eye = _eye_like(x, x.shape[-1])
    b = _PADE13
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    r = solve(v - u, v + u)
    for _ in range(squarings):
        r = r @ r
    return r


_PADE13 = (
    *(64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0),
    *(10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0),
)


def multi_dot(tensors: Sequence[TensorBase], /) -> TensorBase:
    """The product of a chain of matrices, the first may be a row vector and the last a
    column vector (1-D, their axis dropped from the result), as PyTorch's."""
    if len(tensors) < 2:
        raise ValueError(f"multi_dot needs at least 2 tensors, got {len(tensors)}")
    first, *middle, last = tensors
    if any(t.ndim != 2 for t in middle) or first.ndim not in (1, 2) or last.ndim not in (1, 2):
        raise ValueError("multi_dot: the first and last tensors must be 1-D or 2-D, the others 2-D")
    result = first[None, :] if first.ndim == 1 else first
    for t in (*middle, last[:, None] if last.ndim == 1 else last):
        result = result @ t
    if last.ndim == 1:
        result = result[..., 0]
    return result[0] if first.ndim == 1 else result


def cond(x: TensorBase, /, p: float | str | None = None) -> TensorBase:
    """The condition number of each matrix in the `p` norm: the ratio of the extreme singular
    values for None, 2 and -2; ``norm(A) * norm(inv(A))`` for the others (square matrices)."""
    x = _matrices("cond", x)
    if p in (None, 2, -2):
        s = svdvals(x)
        ratio = s[..., 0] / s[..., -1]
        return ratio if p != -2 else 1.0 / ratio
    _matrices("cond", x, square=True)
    return matrix_norm(x, ord=p) * matrix_norm(inv(x), ord=p)


def vander(x: TensorBase, /, *, N: int | None = None) -> TensorBase:  # noqa: N803 - PyTorch's keyword
    """The Vandermonde matrix of the vectors along `x`'s last axis: its columns the powers
    0 to N - 1 (N defaults to the length), increasing, as PyTorch's ``linalg.vander``."""
    ns = tensor_namespace()
    x = _tensor("vander", x)
    x = ops.reshape(x, (1,)) if x.ndim == 0 else x
    n = x.shape[-1] if N is None else N
    if n < 1:
        raise ValueError(f"vander: N must be positive, not {N}")
    powers = [ns.ones_like(x)]
    for _ in range(n - 1):
        powers.append(powers[-1] * x)
    return ns.stack(powers, axis=-1)


def tensorinv(x: TensorBase, /, ind: int = 2) -> TensorBase:
    """The inverse of `x` read as a linear map from its first `ind` axes' space to the rest's:
    the result, of shape ``x.shape[ind:] + x.shape[:ind]``, contracted with `x` gives identity."""
    x = _tensor("tensorinv", x)
    if ind <= 0:
        raise ValueError(f"tensorinv: ind must be positive, not {ind}")
    rows, cols = x.shape[:ind], x.shape[ind:]
    if math.prod(rows) != math.prod(cols):
        raise ValueError(f"tensorinv: the products of shape {x.shape}'s first {ind} and last axes must be equal")
    return ops.reshape(inv(ops.reshape(x, (math.prod(rows), math.prod(cols)))), (*cols, *rows))


def tensorsolve(a: TensorBase, b: TensorBase, /, dims: Sequence[int] | None = None) -> TensorBase:
    """The X with ``tensordot(a, X, X.ndim) == b``; `dims` moves those axes of `a` last first."""
    ns = tensor_namespace()
    a, b = _tensor("tensorsolve", a), _tensor("tensorsolve", b)
    if dims is not None:
        dims = [d % a.ndim for d in dims]
        a = ns.permute_dims(a, (*(i for i in range(a.ndim) if i not in dims), *dims))
    unknowns = a.shape[b.ndim :]
    rows = math.prod(b.shape)
    if math.prod(unknowns) != rows:
        raise ValueError(f"tensorsolve: {a.shape} does not map {unknowns} onto {b.shape}'s {rows} values")
    x = solve(ops.reshape(a, (rows, rows)), ops.reshape(b, (rows, 1)))
    return ops.reshape(x, unknowns)


def logdet(x: TensorBase, /) -> TensorBase:
    """``log(det(x))``: nan where the determinant is negative, -inf where it is 0, its
    gradient ``inv(x)^T`` (PyTorch's ``logdet``)."""
    sign, logabsdet = slogdet(x)
    return logabsdet + elementwise.log(sign)


def cholesky_inverse(x: TensorBase, /, upper: bool = False) -> TensorBase:
    """The inverse of ``A = L L^T`` (``U^T U`` when `upper`) from its Cholesky factor."""
    x = _matrices("cholesky_inverse", x, square=True)
    return inv(matrix_transpose(x) @ x if upper else x @ matrix_transpose(x))


def cholesky_solve(b: TensorBase, factor: TensorBase, /, upper: bool = False) -> TensorBase:
    """The solution X of ``A X = B`` for ``A = L L^T`` (``U^T U`` when `upper`) given its factor."""
    factor = _matrices("cholesky_solve", factor, square=True)
    a = matrix_transpose(factor) @ factor if upper else factor @ matrix_transpose(factor)
    return solve(a, _matrices("cholesky_solve", b))


def svd_lowrank(
    x: TensorBase,
    q: int | None = 6,
    niter: int = 2,
    M: TensorBase | None = None,  # noqa: N803 - PyTorch's
) -> tuple[TensorBase, TensorBase, TensorBase]:
    """``(U, S, V)`` of the best rank-`q` approximation of ``x - M`` (PyTorch's draws it by a
    randomized method of `niter` iterations; here it is the truncated SVD it approximates)."""
    x = _matrices("svd_lowrank", x)
    if M is not None:
        x = x - M
    k = min(6 if q is None else q, *x.shape[-2:])
    u, s, vh = svd(x, full_matrices=False)
    return u[..., :k], s[..., :k], matrix_transpose(vh[..., :k, :])


class SVDUVResult(NamedTuple):
    U: TensorBase  # noqa: N815
    S: TensorBase  # noqa: N815
    V: TensorBase  # noqa: N815


class TriangularSolveResult(NamedTuple):
    solution: TensorBase
    cloned_coefficient: TensorBase


def svd_uv(x: TensorBase, /, some: bool = True, compute_uv: bool = True) -> SVDUVResult:
    """PyTorch's ``svd``: ``(U, S, V)`` with ``x = U diag(S) V^T`` (V, not Vh), reduced when
    `some`; without `compute_uv`, U and V are zeros (M by M, N by N) and S is `svdvals`."""
    x = _matrices("svd", x)
    if not compute_uv:
        ns = tensor_namespace()
        m, n = x.shape[-2:]
        zeros = [ns.zeros((*x.shape[:-2], k, k), dtype=x.dtype, device=x.device) for k in (m, n)]
        return SVDUVResult(zeros[0], svdvals(x), zeros[1])
    u, s, vh = svd(x, full_matrices=not some)
    return SVDUVResult(u, s, matrix_transpose(vh))


def triangular_solve(
    b: TensorBase, a: TensorBase, /, upper: bool = True, transpose: bool = False, unitriangular: bool = False
) -> TriangularSolveResult:
    """PyTorch's ``triangular_solve``: the X of ``A X = B`` (A^T when `transpose`) for the
    triangle of A, and a copy of A."""
    a = _matrices("triangular_solve", a, square=True)
    t = matrix_transpose(a) if transpose else a
    x = solve_triangular(t, b, upper=upper != transpose, unitriangular=unitriangular)
    return TriangularSolveResult(x, ops.clone(a))


class LDLFactorResult(NamedTuple):
    LD: TensorBase  # noqa: N815
    pivots: TensorBase


_BUNCH_KAUFMAN = (1.0 + math.sqrt(17.0)) / 8.0


def _batch_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of `shapes`."""
    sizes = itertools.zip_longest(*(reversed(s) for s in shapes), fillvalue=1)
    return tuple(reversed([max(d) if min(d) else 0 for d in sizes]))


def _per_matrix(batch: tuple[int, ...], factor: Callable[..., Any], *inputs: TensorBase) -> list[TensorBase]:
    """`factor` applied to each matrix of the batch in turn (the inputs broadcast over it), its
    results stacked back into the batch's shape: for factorisations that branch on host values."""
    ns = tensor_namespace()
    flat = [ns.reshape(ns.broadcast_to(t, (*batch, *t.shape[-2:])), (-1, *t.shape[-2:])) for t in inputs]
    results = [factor(*(t[i] for t in flat)) for i in range(math.prod(batch))]
    return [ns.reshape(ns.stack(part), (*batch, *part[0].shape)) for part in zip(*results)]


def _swap(n: int, i: int, j: int, like: TensorBase) -> TensorBase:
    """The permutation matrix (n by n) that swaps rows i and j, in `like`'s dtype."""
    ns = tensor_namespace()
    rows = ns.arange(n, device=like.device)
    swapped = ns.where(rows == i, j, ns.where(rows == j, i, rows))
    return ns.astype(swapped[:, None] == rows, like.dtype)


def _below(columns: TensorBase, start: int) -> TensorBase:
    """`columns` with their rows before `start` zeroed."""
    ns = tensor_namespace()
    return ns.where((ns.arange(columns.shape[0], device=columns.device) >= start)[:, None], columns, 0.0)


def _rows_replaced(b: TensorBase, k: int, rows: TensorBase) -> TensorBase:
    """`b` with its rows from `k` on replaced by `rows`."""
    return tensor_namespace().concat([b[:k], rows, b[k + rows.shape[0] :]], axis=0)


def _bunch_kaufman(w: TensorBase, k: int) -> tuple[int, int]:
    """dsytf2's choice at column k of the symmetric `w`: ``(the row to swap in, block size)``."""
    ns = tensor_namespace()
    n = w.shape[-1]
    absakk = abs(float(w[k, k]))
    if k + 1 == n:
        return k, 1
    below = ns.abs(w[k + 1 :, k])
    imax = k + 1 + int(ns.argmax(below))
    colmax = float(below[imax - k - 1])
    if max(absakk, colmax) == 0 or absakk >= _BUNCH_KAUFMAN * colmax:
        return k, 1
    rows = ns.arange(n, device=w.device)
    rowmax = float(ns.max(ns.where((rows >= k) & (rows != imax), ns.abs(w[imax, :]), 0.0)))
    if absakk >= _BUNCH_KAUFMAN * colmax * (colmax / rowmax):
        return k, 1
    return imax, 1 if abs(float(w[imax, imax])) >= _BUNCH_KAUFMAN * rowmax else 2


def _ldl_one(a: TensorBase) -> tuple[TensorBase, TensorBase]:
    """LAPACK's dsytf2 (lower) on one matrix: Bunch-Kaufman's 1 by 1 and 2 by 2 pivots, each
    interchange made on the trailing matrix alone."""
    ns = tensor_namespace()
    n = a.shape[-1]
    w = ns.tril(a) + matrix_transpose(ns.tril(a, k=-1))  # the symmetric matrix of the lower triangle
    columns, pivots, k = [], [], 0
    while k < n:
        kp, step = _bunch_kaufman(w, k)
        if kp != k + step - 1:
            swap = _swap(n, k + step - 1, kp, a)
            w = swap @ w @ swap
        block = w[k : k + step, k : k + step]
        x = _below(w[:, k : k + step], k + step)
        singular = step == 1 and float(block[0, 0]) == 0  # a zero column: nothing to eliminate
        factors = x if singular else matrix_transpose(solve(block, matrix_transpose(x)))
        w = w - factors @ matrix_transpose(x)
        zeros = [ns.zeros((rows, step), dtype=a.dtype, device=a.device) for rows in (k, n - k - step)]
        columns.append(ns.concat([zeros[0], ns.tril(block), zeros[1]], axis=0) + factors)
        pivots += [kp + 1] if step == 1 else [-(kp + 1)] * 2
        k += step
    return ns.concat(columns, axis=1), ns.asarray([pivots], dtype="int32", device=a.device)


def ldl_factor(a: TensorBase, /, *, hermitian: bool = False) -> LDLFactorResult:
    """``(LD, pivots)``: the Bunch-Kaufman factorisation ``A = P L D L^T P^T`` of each
    symmetric matrix (its lower triangle read), packed as LAPACK's sytrf packs it: D's 1 by 1
    and 2 by 2 blocks on the diagonal, L below, the 1-based pivots negative for a 2 by 2 block.
    Not differentiable (as in PyTorch); each pivot's choice is read on the host.

    >>> import autograd_core as ag
    >>> ldl_factor(ag.tensor([[4.0, 2.0], [2.0, 3.0]])).LD.tolist()
    [[4.0, 0.0], [0.5, 2.0]]
    """
    ns = tensor_namespace()
    a = _matrices("ldl_factor", a, square=True)
    if a.size == 0:
        return LDLFactorResult(ns.zeros_like(a), ns.zeros(a.shape[:-1], dtype="int32", device=a.device))
    ld, pivots = _per_matrix(a.shape[:-2], _ldl_one, TensorBase._wrap(a.array, a.backend))
    return LDLFactorResult(ld, pivots[..., 0, :])


def _ldl_solve_one(ld: TensorBase, pivots: TensorBase, b: TensorBase) -> tuple[TensorBase]:
    """LAPACK's dsytrs (lower) for one factorisation (`pivots` one row) and its right-hand sides."""
    n, order = ld.shape[-1], [int(p) for p in pivots[0]]
    steps, k = [], 0
    while k < n:
        steps.append((k, 1 if order[k] > 0 else 2, abs(order[k]) - 1))
        k += steps[-1][1]
    for k, step, kp in steps:  # L D X = B: each interchange, then its column(s) of L and block of D
        if kp != k + step - 1:
            b = _swap(n, k + step - 1, kp, ld) @ b
        block = ld[k : k + step, k : k + step]
        block = block + matrix_transpose(block) - block * _eye(block, step)
        b = b - _below(ld[:, k : k + step], k + step) @ b[k : k + step]
        b = _rows_replaced(b, k, solve(block, b[k : k + step]))
    for k, step, kp in reversed(steps):  # L^T X = B, the interchanges in reverse
        b = _rows_replaced(b, k, b[k : k + step] - matrix_transpose(_below(ld[:, k : k + step], k + step)) @ b)
        if kp != k + step - 1:
            b = _swap(n, k + step - 1, kp, ld) @ b
    return (b,)


def ldl_solve(ld: TensorBase, pivots: TensorBase, b: TensorBase, /, *, hermitian: bool = False) -> TensorBase:
    """The solution X of ``A X = B`` for A as `ldl_factor` packs it (not differentiable, as in
    PyTorch); the batches of `ld` and `b` broadcast.

    >>> import autograd_core as ag
    >>> ldl_solve(*ldl_factor(ag.tensor([[4.0, 2.0], [2.0, 3.0]])), ag.tensor([[6.0], [5.0]])).tolist()
    [[1.0], [1.0]]
    """
    ns = tensor_namespace()
    ld, b = _matrices("ldl_solve", ld, square=True), _matrices("ldl_solve", b)
    batch = _batch_shape(ld.shape[:-2], pivots.shape[:-1], b.shape[:-2])
    if math.prod(batch) == 0 or ld.shape[-1] == 0:
        return ns.zeros((*batch, *b.shape[-2:]), dtype=b.dtype, device=b.device)
    constants = (TensorBase._wrap(t.array, t.backend) for t in (ld, pivots[..., None, :], b))
    return _per_matrix(batch, _ldl_solve_one, *constants)[0]
