"""numpy under another name: an example autograd-core backend plugin.

The whole contract is a factory ``create(device) -> Backend`` registered under the
entry-point group ``autograd_core.backends``. Everything the engine needs beyond the array
API standard has a portable default: data movement, dtypes and random numbers in
`backends.contract.backend.Backend`, the kernels the standard lacks in `autograd_core.primitives`. This
backend registers one kernel of its own, the scatter-add behind the gradient of indexing,
`take` and `embedding`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograd_core import primitives
from backends import Backend


class ExampleBackend(Backend):
    name = "numpy_example"  # the name users select it by (AUTOGRAD_BACKEND=numpy_example)
    # mutable, supports_float64, device_kinds and can_compile keep Backend's defaults:
    # in-place updates, float64, CPU only, no tracing compiler.

    def silent_errors(self) -> Any:
        """numpy warns on division by zero; the engine wants inf and nan silently."""
        return np.errstate(all="ignore")


@primitives.index_add.kernel(ExampleBackend.name)
def index_add(ns: Any, values: Any, shape: tuple[int, ...], axis: int, index: Any) -> Any:
    """Zeros of `shape` with `values` added at `index` along `axis`, repeats summed:
    numpy's unbuffered ``add.at`` instead of the portable one-hot matrix product."""
    out = np.zeros(shape, dtype=values.dtype)
    np.add.at(out, (slice(None),) * axis + (index,), values)
    return out


def create(device: str | None = None) -> Backend:
    """The entry point: a Backend for `device` (numpy has only the CPU)."""
    if device not in (None, "cpu"):
        raise RuntimeError(f"the numpy_example backend runs on the CPU only, not on {device!r}")
    return ExampleBackend(np, np.ndarray, None)
