"""cupy on a CUDA GPU, through array-api-compat's namespace. Listed as unavailable, with
the reason, where no GPU is present."""

from __future__ import annotations

import array_api_compat.cupy as xp
import cupy
import cupyx
import cupyx.scipy.special

from autograd_core import primitives as P
from autograd_core.primitives import special
from autograd_core.primitives.convolution import scatter_to_maxima
from backends.contract.backend import Backend


class CupyBackend(Backend):
    name = "cupy"
    device_kinds = ("cuda",)

    @property
    def device_type(self) -> str:
        return "cuda"

    def asarray(self, host, dtype=None):
        with cupy.cuda.Device(self.device):
            return cupy.array(host, dtype=dtype)

    def to_numpy(self, x):
        return cupy.asnumpy(x)

    def synchronize(self, *arrays):
        cupy.cuda.Device(self.device).synchronize()


# --- kernels ---------------------------------------------------------------------------------
@P.index_add.kernel("cupy")
def _index_add(ns, values, shape, axis, index):
    out = cupy.zeros(tuple(shape), dtype=values.dtype)
    cupyx.scatter_add(out, (slice(None),) * axis + (index,), values)
    return out


@P.erf_kernel.kernel("cupy")
def _erf(ns, x):
    return cupyx.scipy.special.erf(x)


P.max_pool2d_backward.kernel("cupy")(scatter_to_maxima)


def create(device: str | None = None) -> Backend:
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as e:
        raise RuntimeError(f"cupy is installed but no CUDA GPU is usable here ({e})") from e
    if count == 0:
        raise RuntimeError("cupy is installed but no CUDA GPU is present")
    index = 0 if device in (None, "cuda") else int(str(device).removeprefix("cuda:"))
    return CupyBackend(xp, cupy.ndarray, index)


# --- special functions: cupyx.scipy.special's ----------------------------------------------------
def _register_special_kernels() -> None:
    for name in ("erfc", "erfinv", "ndtri", "log_ndtr", "gammaln", "i0", "i0e", "i1", "i1e"):
        function = getattr(cupyx.scipy.special, name)
        getattr(special, name).kernel("cupy")(lambda ns, x, function=function: function(x))
    special.polygamma.kernel("cupy")(
        lambda ns, x, n: cupyx.scipy.special.digamma(x) if n == 0 else cupyx.scipy.special.polygamma(n, x)
    )


_register_special_kernels()
