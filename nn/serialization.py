"""Saving and loading state dicts as `.npz` files, readable from any backend."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

import autograd_core as ag


def save(state_dict: dict[str, Any], path: str | os.PathLike) -> None:
    """Write a state dict (name -> tensor) as a `.npz` of host arrays.

    >>> import nn, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "m.npz")
    >>> nn.save(nn.Linear(2, 1).state_dict(), path)
    >>> sorted(nn.load(path))
    ['bias', 'weight']
    """
    arrays = {name: value.numpy() if isinstance(value, ag.Tensor) else np.asarray(value)
              for name, value in state_dict.items()}
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def load(path: str | os.PathLike) -> dict[str, ag.Tensor]:
    """A state dict of tensors on the current backend, from a file written by `save`."""
    with np.load(path) as archive:
        return {name: ag.tensor(archive[name]) for name in archive.files}
