"""Backends nested by `vmap`: a batch's backend takes the arrays of the backend it batches as
values every example shares. The graph asks these questions of a backend's `batch`
(``None`` for a library), so the `Backend` contract carries one attribute for them.

>>> import backends
>>> numpy = backends.get("numpy")
>>> encloses(numpy, numpy), level_of(numpy, numpy.xp.ones(2)) is numpy
(True, True)
"""

from __future__ import annotations

from typing import Any

import backends


def encloses(outer: backends.Backend, inner: backends.Backend) -> bool:
    """Whether `outer` is `inner` or a batch over it, at any depth: its namespace then takes
    `inner`'s arrays as its own values."""
    while outer is not inner:
        if outer.batch is None:
            return False
        outer = outer.batch.inner
    return True


def adopt(backend: backends.Backend, x: Any) -> Any:
    """`x`, an array of `backend` or of a backend it encloses, as `backend`'s own: itself,
    unless the library's operators cannot meet a batch's arrays (`defers_operators`)."""
    return x if backend.batch is None else backend.batch.adopt(x)


def level_of(backend: backends.Backend, x: Any) -> backends.Backend:
    """The backend, `backend` or one it encloses, whose own array `x` is: where a tensor
    holding `x` belongs (a value every example of a batch shares belongs to the batch's inner
    backend)."""
    return backend if backend.batch is None else backend.batch.level_of(x)


__all__ = ["adopt", "encloses", "level_of"]
