"""Running a function whose batch rows are independent chunk by chunk of the batch."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from autograd_core.graph.registry import primitive


@primitive()
def map_batch_chunks(
    ns: Any,
    func: Callable[..., tuple],
    arrays: Sequence[Any],
    batch_axes: Sequence[int | None],
    out_batch_axes: Sequence[int | None],
) -> tuple:
    """``func(ns, *arrays)`` on each chunk of the batch axis: ``batch_axes[k]`` is array k's
    (None: the array goes whole to every call, as a weight does; None entries of `arrays`
    pass as None), `func` returns a tuple whose output k has its batch axis at
    ``out_batch_axes[k]`` (None: a sum over the batch, added up over the chunks).

    Eager libraries, and tensors, have one chunk: ``func(ns, *arrays)``. A chunked library
    (dask) registers a kernel that runs one task per chunk, so that a loop over time steps
    is not one task per step and chunk.
    """
    return func(ns, *arrays)
