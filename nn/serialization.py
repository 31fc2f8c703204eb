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
    """A state dict of tensors on the current backend, from a file written by `save`.

    Nothing in the file is ever unpickled or evaluated: a file of another kind (a PyTorch
    checkpoint, a pickle, a single ``.npy`` array, arrays of Python objects...) is refused with
    what it is and what to do instead. Arrays saved in another byte order load converted.

    >>> import nn, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "m.npz")
    >>> nn.save({"w": ag.ones(2)}, path)
    >>> nn.load(path)["w"].tolist()
    [1.0, 1.0]
    """
    where = os.fspath(path)
    with open(path, "rb") as f:
        head = f.read(64)
    if not head.startswith(_ZIP_MAGIC):
        raise ValueError(f"load: {where!r} {_not_a_zip(head)}")
    try:
        with zipfile.ZipFile(path) as archive:
            return {name[: -len(".npy")]: _entry(archive, name, where) for name in _members(archive, where)}
    except (zipfile.BadZipFile, EOFError) as e:
        raise ValueError(
            f"load: {where!r} is a damaged or truncated zip archive ({e}); write the checkpoint again with nn.save"
        ) from None


_ZIP_MAGIC = b"PK"
_TORCH_LEGACY_MAGIC = b"\x80\x02\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19"  # pickle of torch.save's magic number
_FROM_TORCH = (
    "nn.load never unpickles a file, since unpickling can run any code. In PyTorch, save the state dict's "
    "arrays instead: np.savez(path, **{k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}), "
    "then nn.load that .npz"
)
_NOT_OURS = "it is not a state dict written by nn.save (a .npz of named arrays)"


def _not_a_zip(head: bytes) -> str:
    """What a file that is no zip archive (so no .npz) is, and what to do, from its first bytes."""
    if not head:
        return "is empty (0 bytes), perhaps from an interrupted copy; nn.save writes whole files"
    if head.startswith(b"\x93NUMPY"):
        return (
            "holds a single array (a .npy file), not a state dict; save state dicts with nn.save, which writes a .npz"
        )
    if head.startswith(_TORCH_LEGACY_MAGIC):
        return f"is a PyTorch checkpoint in torch.save's legacy pickle format. {_FROM_TORCH}"
    if head.startswith(b"\x80"):
        return f"is a Python pickle; {_NOT_OURS}, and nn.load never unpickles a file (unpickling can run any code)"
    if len(head) > 9 and head[8:10] == b'{"':
        return (
            f"looks like a safetensors file; {_NOT_OURS}: read it with safetensors.numpy.load_file, then nn.save that"
        )
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return f"is not a zip archive (it starts with {head[:8]!r}); {_NOT_OURS}"
    return f"is a text file, not a zip archive; {_NOT_OURS}"


def _members(archive: zipfile.ZipFile, where: str) -> list[str]:
    """The archive's member names, each a ``.npy`` array, or a clear error for another layout."""
    names = archive.namelist()
    if any(name.endswith("data.pkl") for name in names):
        raise ValueError(f"load: {where!r} is a PyTorch checkpoint in torch.save's zip format. {_FROM_TORCH}")
    other = [name for name in names if not name.endswith(".npy")]
    if other:
        raise ValueError(f"load: {where!r} holds {other[0]!r}, which is not a .npy array; {_NOT_OURS}")
    return names


def _entry(archive: zipfile.ZipFile, name: str, where: str) -> ag.Tensor:
    """Member `name` as a tensor; its header is read first, so arrays of Python objects (which
    only unpickling could read) are refused before any of their bytes are."""
    entry = f"load: entry {name[: -len('.npy')]!r} of {where!r}"
    try:
        with archive.open(name) as member:
            version = np.lib.format.read_magic(member)
            header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            holds_objects = header(member)[2].hasobject
        if not holds_objects:
            with archive.open(name) as member:
                array = np.lib.format.read_array(member, allow_pickle=False)
    except ValueError as e:
        raise ValueError(f"{entry} is not a valid .npy array ({e}); {_NOT_OURS}") from None
    if holds_objects:
        raise ValueError(f"{entry} holds Python objects, which only unpickling could read, and nn.load never unpickles")
    try:
        return ag.tensor(array)
    except TypeError as e:
        raise TypeError(f"{entry}: {e}") from None
