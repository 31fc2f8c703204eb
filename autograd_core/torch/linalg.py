"""`torch.linalg` over our tensors, with PyTorch's signatures: `autograd_core.linalg`'s functions,
with the rows of `FUNCTIONS` where PyTorch's differ, and PyTorch's functions the standard
lacks (`autograd_core.ops.linalg`'s compositions: lu, lstsq, solve_triangular, ...)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import autograd_core as _ag
from autograd_core import linalg as _ours
from autograd_core.autodiff.tensor import Tensor
from autograd_core.ops import core as _core, linalg as _la, manipulation as _manipulation
from autograd_core.torch._adapt import as_tensor


class _Ex(NamedTuple):
    result: Tensor
    info: Tensor


def _with_info(f: Any, field: str = "result") -> Any:
    """PyTorch's ``*_ex`` of `f`: ``(result, info)``, info the int32 zeros of every matrix
    (a failure raises, whatever `check_errors` says)."""

    def call(a: Any, *args: Any, check_errors: bool = False, **kwargs: Any) -> Any:
        result = f(a, *args, **kwargs)
        return _Ex(result, _la._info(a))

    call.__name__ = call.__qualname__ = f"{f.__name__}_ex"
    call.__doc__ = f"``({field}, info)``: `{f.__name__}` with PyTorch's int32 `info` (zeros)."
    return call


def _vector_b(a: Tensor, b: Tensor) -> bool:
    """PyTorch's rule for solve: `b` is a (batch of) vector(s) when 1-D or one axis short of `a`
    with a's leading shape."""
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))


def solve(a: Any, b: Any, *, left: bool = True) -> Tensor:
    """The X of ``A X = B`` (``X A = B`` when not `left`); B a vector as PyTorch reads it."""
    a, b = as_tensor(a), as_tensor(b)
    if _vector_b(a, b):
        return _ours.solve(a, b[..., None])[..., 0]
    if not left:
        return _core.matrix_transpose(_ours.solve(_core.matrix_transpose(a), _core.matrix_transpose(b)))
    return _ours.solve(a, b)


def cholesky(a: Any, *, upper: bool = False) -> Tensor:
    return _ours.cholesky(as_tensor(a), upper=upper)


def lu_factor(a: Any, *, pivot: bool = True) -> _la.LUFactorResult:
    """``(LU, pivots)``; raises, as PyTorch's, where U has a zero on its diagonal (`lu_factor_ex`
    does not). The check reads the diagonal on the host."""
    lu, pivots = _la.lu_factor(as_tensor(a), pivot=pivot)
    k = min(lu.shape[-2:])
    if lu.size and bool(_ag.any(_ours.diagonal(lu[..., :k, :k]) == 0)):
        raise RuntimeError("linalg.lu_factor: U has a zero on its diagonal (a singular matrix); use lu_factor_ex or lu")
    return _la.LUFactorResult(lu, pivots)


def lu_factor_ex(a: Any, *, pivot: bool = True, check_errors: bool = False) -> tuple[Tensor, Tensor, Tensor]:
    """``(LU, pivots, info)``: `lu_factor` with PyTorch's int32 `info` (zeros)."""
    lu, pivots = _la.lu_factor(as_tensor(a), pivot=pivot)
    return lu, pivots, _la._info(lu)


def ldl_factor_ex(a: Any, *, hermitian: bool = False, check_errors: bool = False) -> tuple[Tensor, Tensor, Tensor]:
    """``(LD, pivots, info)``: `ldl_factor` with PyTorch's int32 `info` (zeros)."""
    ld, pivots = _la.ldl_factor(as_tensor(a), hermitian=hermitian)
    return ld, pivots, _la._info(ld)


def eigh(a: Any, UPLO: str = "L") -> _la.EighResult:  # noqa: N803 - PyTorch's keyword
    """The eigendecomposition of the symmetric matrix the lower (UPLO="L") or upper triangle defines."""
    return _ours.eigh(_la._symmetric_from(as_tensor(a), upper=UPLO.upper() == "U"))


def eigvalsh(a: Any, UPLO: str = "L") -> Tensor:  # noqa: N803
    return _ours.eigvalsh(_la._symmetric_from(as_tensor(a), upper=UPLO.upper() == "U"))


def _normalized(dims: Sequence[int], ndim: int) -> tuple[int, ...]:
    return tuple(d % ndim for d in dims)


def matrix_norm(
    a: Any, ord: Any = "fro", dim: Sequence[int] = (-2, -1), keepdim: bool = False, *, dtype: Any = None
) -> Tensor:  # noqa: A002 - PyTorch's keyword
    """The `ord` norm of the matrices over the two axes `dim`, kept as ones when `keepdim`."""
    a = as_tensor(a) if dtype is None else _core.astype(as_tensor(a), dtype)
    dims = _normalized(dim, a.ndim)
    if len(dims) != 2 or dims[0] == dims[1]:
        raise ValueError(f"matrix_norm: dim must name two different axes, not {dim}")
    norm = _ours.matrix_norm(_manipulation.moveaxis(a, dims, (-2, -1)), ord=ord)
    return _core.expand_dims(norm, axis=tuple(sorted(dims))) if keepdim else norm


def vector_norm(x: Any, ord: float = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    x = as_tensor(x) if dtype is None else _core.astype(as_tensor(x), dtype)
    return _ours.vector_norm(x, axis=dim, keepdims=keepdim, ord=ord)


def norm(a: Any, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """PyTorch's ``linalg.norm``: a matrix norm over two axes (`dim` a pair, or a 2-D input
    with an `ord`), else a vector norm (2 by default; every element when neither is given)."""
    a = as_tensor(a)
    dims = (dim,) if isinstance(dim, int) else dim
    if dims is not None and len(dims) == 2 or dims is None and ord is not None and a.ndim == 2:
        return matrix_norm(a, "fro" if ord is None else ord, (-2, -1) if dims is None else dims, keepdim, dtype=dtype)
    if dims is None and ord is not None and a.ndim != 1:
        raise ValueError(f"linalg.norm: with ord and no dim the input must be 1-D or 2-D, not {a.ndim}-D")
    return vector_norm(a, 2 if ord is None else ord, dims, keepdim, dtype=dtype)


def matrix_rank(a: Any, tol: Any = None, hermitian: bool = False, *, atol: Any = None, rtol: Any = None) -> Tensor:
    """The rank of each matrix; PyTorch's old positional `tol` is `atol` with no `rtol`."""
    if tol is not None:
        atol, rtol = tol, 0.0
    return _ours.matrix_rank(as_tensor(a), rtol=rtol, atol=atol, hermitian=hermitian)


def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, atol: Any = None, rtol: Any = None) -> Tensor:
    """The pseudo-inverse; PyTorch's old positional `rcond` is `rtol`."""
    return _ours.pinv(as_tensor(a), rtol=rtol if rcond is None else rcond, atol=atol, hermitian=hermitian)


def svd(a: Any, full_matrices: bool = True, *, driver: Any = None) -> _la.SVDResult:
    return _ours.svd(as_tensor(a), full_matrices=full_matrices)


def qr(a: Any, mode: str = "reduced") -> _la.QRResult:
    return _ours.qr(as_tensor(a), mode=mode)


def cross(a: Any, b: Any, *, dim: int = -1) -> Tensor:
    return _ours.cross(as_tensor(a), as_tensor(b), axis=dim)


def vecdot(x: Any, y: Any, *, dim: int = -1) -> Tensor:
    return _ours.vecdot(as_tensor(x), as_tensor(y), axis=dim)


def matrix_power(a: Any, n: int) -> Tensor:
    return _ours.matrix_power(as_tensor(a), n)


def diagonal(a: Any, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    return _ours.diagonal(_manipulation.moveaxis(as_tensor(a), (dim1, dim2), (-2, -1)), offset=offset)


FUNCTIONS: dict[str, Any] = {
    "solve": solve,
    "solve_ex": _with_info(solve),
    "inv_ex": _with_info(_ours.inv, "inverse"),
    "cholesky": cholesky,
    "cholesky_ex": _with_info(cholesky, "L"),
    "eigh": eigh,
    "eigvalsh": eigvalsh,
    "matrix_norm": matrix_norm,
    "vector_norm": vector_norm,
    "norm": norm,
    "matrix_rank": matrix_rank,
    "pinv": pinv,
    "svd": svd,
    "qr": qr,
    "cross": cross,
    "vecdot": vecdot,
    "matrix_power": matrix_power,
    "diagonal": diagonal,
    "lu_factor": lu_factor,
    "lu_factor_ex": lu_factor_ex,
    "lu": _la.lu,
    "lu_solve": _la.lu_solve,
    "solve_triangular": _la.solve_triangular,
    "householder_product": _la.householder_product,
    "lstsq": _la.lstsq,
    "eig": _la.eig,
    "eigvals": _la.eigvals,
    "matrix_exp": _la.matrix_exp,
    "multi_dot": _la.multi_dot,
    "cond": _la.cond,
    "vander": _la.vander,
    "tensorinv": _la.tensorinv,
    "tensorsolve": _la.tensorsolve,
    "ldl_factor": _la.ldl_factor,
    "ldl_factor_ex": ldl_factor_ex,
    "ldl_solve": _la.ldl_solve,
}

globals().update({name: getattr(_ours, name) for name in getattr(_ours, "__all__", ()) if name not in FUNCTIONS})
globals().update(FUNCTIONS)
