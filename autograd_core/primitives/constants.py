"""Tensors around raw arrays computed outside the graph (masks, indices, statistics)."""

from __future__ import annotations

from typing import Any

import backends
from autograd_core.graph.tensor_base import TensorBase


def constant(data: Any, backend: backends.Backend) -> TensorBase:
    """A tensor around the raw array `data` of `backend`, outside the graph: no copy, no
    checks (the array must be `backend`'s own).

    >>> import backends
    >>> from autograd_core.primitives import constant
    >>> numpy = backends.get("numpy")
    >>> constant(numpy.xp.ones(2), numpy).tolist()
    [1.0, 1.0]
    """
    return TensorBase._wrap(data, backend)
