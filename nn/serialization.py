"""Saving and loading state dicts as `.npz` files, readable from any backend."""

from __future__ import annotations

import os
import tempfile
import zipfile
from typing import Any

import numpy as np

import autograd_core as ag


def save(state_dict: dict[str, Any], path: str | os.PathLike) -> None:
    """Write a state dict (name -> tensor or array) as a `.npz` of host arrays.

    The file is written beside `path` and renamed over it at the end, so a failure midway
    leaves the previous checkpoint whole. Values must be tensors, arrays or numbers; any
    string key round-trips.

    >>> import nn, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "m.npz")
    >>> nn.save(nn.Linear(2, 1).state_dict(), path)
    >>> sorted(nn.load(path))
    ['bias', 'weight']
    """
    arrays = {name: _host_array(name, value) for name, value in state_dict.items()}
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".partial-", suffix=".npz", dir=folder)
    try:
        with os.fdopen(handle, "wb") as f, zipfile.ZipFile(f, "w") as archive:
            for name, array in arrays.items():  # as np.savez lays it out, without its keyword names
                with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, array, allow_pickle=False)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _host_array(name: str, value: Any) -> np.ndarray:
    if not isinstance(name, str):
        raise TypeError(f"save: state dict keys must be strings, got {name!r}")
    array = value.detach().numpy() if isinstance(value, ag.Tensor) else np.asarray(value)
    if array.dtype.kind not in "biufc":
        raise TypeError(
            f"save: the value of {name!r} is a {type(value).__name__}, not a tensor, array or number; "
            "a checkpoint holds arrays only"
        )
    return array


def load(path: str | os.PathLike) -> dict[str, ag.Tensor]:
    """A state dict of tensors on the current backend, from a file written by `save`."""
    loaded = np.load(path, allow_pickle=False)
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        raise ValueError(
            f"load: {os.fspath(path)!r} holds a single array (a .npy file), not a state dict; "
            "save state dicts with nn.save, which writes a .npz"
        )
    with loaded as archive:
        return {name: ag.tensor(archive[name]) for name in archive.files}
