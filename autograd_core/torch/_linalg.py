"""`autograd_core.torch`'s linear algebra outside `torch.linalg`: PyTorch's older top-level
names (``torch.cholesky``, ``torch.svd``, ``torch.lu``, ...), which are Tensor methods too,
and the functions that are not (``lu_unpack``, ``svd_lowrank``)."""

from __future__ import annotations

from typing import Any

from autograd_core.ops import linalg

METHODS = (
    *("cholesky", "cholesky_inverse", "cholesky_solve", "det", "geqrf", "inverse", "logdet", "lu", "lu_solve"),
    *("matrix_exp", "matrix_power", "ormqr", "pinverse", "qr", "slogdet", "svd", "triangular_solve"),
)

FUNCTIONS: dict[str, Any] = {
    "lu_unpack": linalg.lu_unpack,
    "svd_lowrank": linalg.svd_lowrank,
}
