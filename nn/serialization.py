"""Saving and loading state dicts, readable from any backend, in two formats: safetensors (a
path ending in ``.safetensors``; PyTorch's and Hugging Face's format) and numpy's ``.npz`` (any
other path). `load` tells them apart by their content, whatever the file is called. Neither
format holds code, and nothing read from a file is ever unpickled or evaluated.
"""

from __future__ import annotations

import json
import math
import os
import reprlib
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from typing import Any, BinaryIO, NamedTuple

import numpy as np

import autograd_core as ag

SAFETENSORS_SUFFIX = ".safetensors"


def save(state_dict: dict[str, Any], path: str | os.PathLike, *, metadata: dict[str, str] | None = None) -> None:
    """Write a state dict (name -> tensor or array) as host arrays: a safetensors file if `path`
    ends in ``.safetensors``, else a ``.npz``.

    The file is written beside `path` and renamed over it at the end, so a failure midway
    leaves the previous checkpoint whole. Values must be tensors, arrays or numbers; any
    string key round-trips. `metadata` (strings to strings) goes in a safetensors file's
    ``__metadata__``; `load_metadata` reads it back. A safetensors file written here is laid
    out as the reference library writes it, so ``safetensors.torch.load_file`` reads it.

    >>> import nn, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "m.safetensors")
    >>> nn.save(nn.Linear(2, 1).state_dict(), path, metadata={"format": "pt"})
    >>> sorted(nn.load(path)), nn.serialization.load_metadata(path)
    (['bias', 'weight'], {'format': 'pt'})
    """
    arrays = {name: _host_array(name, value) for name, value in state_dict.items()}
    if os.fspath(path).lower().endswith(SAFETENSORS_SUFFIX):
        write = _safetensors_writer(arrays, metadata)
    elif metadata is not None:
        raise ValueError(
            f"save: metadata is stored in safetensors files only, and {os.fspath(path)!r} does not end in "
            f"{SAFETENSORS_SUFFIX}; save to a .safetensors path, or leave metadata out"
        )
    else:
        write = _npz_writer(arrays)
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".partial-", dir=folder)
    try:
        with os.fdopen(handle, "wb") as f:
            write(f)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _npz_writer(arrays: dict[str, np.ndarray]) -> Callable[[BinaryIO], None]:
    def write(f: BinaryIO) -> None:
        with zipfile.ZipFile(f, "w") as archive:
            for name, array in arrays.items():  # as np.savez lays it out, without its keyword names
                with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, array, allow_pickle=False)

    return write


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
    """A state dict of tensors on the current backend, from a safetensors or ``.npz`` file
    (written by `save`, by ``safetensors.torch.save_file`` or by ``np.savez``), whatever its name.

    Nothing in the file is ever unpickled or evaluated: a file of another kind (a PyTorch
    checkpoint, a pickle, a single ``.npy`` array, arrays of Python objects...) is refused with
    what it is and what to do instead, and so is a damaged safetensors file, before anything
    is allocated for it. Arrays saved in another byte order load converted.

    >>> import nn, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "m.npz")
    >>> nn.save({"w": ag.ones(2)}, path)
    >>> nn.load(path)["w"].tolist()
    [1.0, 1.0]
    """
    where = os.fspath(path)
    with open(path, "rb") as f:
        head = f.read(64)
        if _looks_like_safetensors(head):
            return _read_safetensors(f, where)
    if not head.startswith(_ZIP_MAGIC):
        raise ValueError(f"load: {where!r} {_not_a_zip(head)}")
    try:
        with zipfile.ZipFile(path) as archive:
            _check_every_entry_read(archive)
            arrays = {name[: -len(".npy")]: _entry(archive, name, where) for name in _members(archive, where)}
    except _ZIP_DAMAGE as e:
        raise ValueError(
            f"load: {where!r} is a damaged or truncated zip archive ({type(e).__name__}: {e}); write the "
            "checkpoint again with nn.save"
        ) from None
    return {name: _as_tensor(array, _entry_name(name, where)) for name, array in arrays.items()}


def load_metadata(path: str | os.PathLike) -> dict[str, str]:
    """The ``__metadata__`` of a safetensors file (strings to strings; empty if it has none).

    >>> import nn, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "m.safetensors")
    >>> nn.save({"w": ag.ones(2)}, path, metadata={"epoch": "3"})
    >>> nn.serialization.load_metadata(path)
    {'epoch': '3'}
    """
    where = os.fspath(path)
    with open(path, "rb") as f:
        if not _looks_like_safetensors(f.read(9)):
            raise ValueError(
                f"load_metadata: {where!r} is not a safetensors file; only safetensors files hold metadata"
            )
        return _safetensors_layout(f, where).metadata


_ZIP_MAGIC = b"PK"
# what zipfile raises for damaged bytes, by where they are: a bad checksum, magic number or
# offset (BadZipFile, EOFError, OSError), a version or compression method out of range
# (NotImplementedError: "zip file version 13.0"), the encrypted flag (RuntimeError), a name
# that is no longer UTF-8 (UnicodeDecodeError), a compressed stream (zlib.error)
_ZIP_DAMAGE = (
    zipfile.BadZipFile,
    EOFError,
    OSError,
    NotImplementedError,
    RuntimeError,
    UnicodeDecodeError,
    zlib.error,
)
_CHUNK = 1 << 20
_TORCH_LEGACY_MAGIC = b"\x80\x02\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19"  # pickle of torch.save's magic number
_FROM_TORCH = (
    "nn.load never unpickles a file, since unpickling can run any code. In PyTorch, save the state dict as "
    "safetensors instead: safetensors.torch.save_file(model.state_dict(), 'model.safetensors') (or, without "
    "safetensors, np.savez(path, **{k: v.detach().cpu().numpy() for k, v in model.state_dict().items()})), "
    "then nn.load that file"
)
_NOT_OURS = "it is not a state dict written by nn.save (a .safetensors or .npz file of named arrays)"


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
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return f"is not a zip archive (it starts with {head[:8]!r}); {_NOT_OURS}"
    return f"is a text file, not a zip archive; {_NOT_OURS}"


def _check_every_entry_read(archive: zipfile.ZipFile) -> None:
    """zipfile reads the entries that fit in the central directory's length; a damaged length
    field (an entry's comment length...) can hide the entries after it, so the count that the
    end record lists must be the count read (BadZipFile otherwise)."""
    listed = zipfile._EndRecData(archive.fp)[zipfile._ECD_ENTRIES_TOTAL]
    if listed != len(archive.infolist()):
        raise zipfile.BadZipFile(f"its end record lists {listed} entries, but {len(archive.infolist())} were found")


def _members(archive: zipfile.ZipFile, where: str) -> list[str]:
    """The archive's member names, each a ``.npy`` array, or a clear error for another layout."""
    names = archive.namelist()
    if any(name.endswith("data.pkl") for name in names):
        raise ValueError(f"load: {where!r} is a PyTorch checkpoint in torch.save's zip format. {_FROM_TORCH}")
    other = [name for name in names if not name.endswith(".npy")]
    if other:
        raise ValueError(f"load: {where!r} holds {other[0]!r}, which is not a .npy array; {_NOT_OURS}")
    return names


def _entry_name(name: str, where: str) -> str:
    return f"load: entry {name!r} of {where!r}"


def _entry(archive: zipfile.ZipFile, name: str, where: str) -> np.ndarray:
    """Member `name` as a host array. Its header is read first: arrays of Python objects (which
    only unpickling could read) are refused before any of their bytes are read as an array,
    and a header that disagrees with the member's size (damaged) before anything is allocated
    for it. Every member is read to its end, where zipfile checks its checksum, so damaged
    bytes anywhere in it raise (BadZipFile) rather than load."""
    entry = _entry_name(name[: -len(".npy")], where)
    try:
        with archive.open(name) as member:
            version = np.lib.format.read_magic(member)
            header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _, dtype = header(member)
            holds_objects = dtype.hasobject
            follow = archive.getinfo(name).file_size - member.tell()
            if holds_objects:
                while member.read(_CHUNK):
                    pass
            elif math.prod(shape) * dtype.itemsize != follow:
                raise ValueError(f"its header says {shape} of {dtype}, but {follow} bytes of data follow it")
        if not holds_objects:
            with archive.open(name) as member:
                array = np.lib.format.read_array(member, allow_pickle=False)
                if member.read(1):
                    raise ValueError("bytes follow its array")
    except ValueError as e:
        raise ValueError(f"{entry} is damaged or is not a valid .npy array ({e}); {_NOT_OURS}") from None
    if holds_objects:
        raise ValueError(f"{entry} holds Python objects, which only unpickling could read, and nn.load never unpickles")
    return array


def _as_tensor(array: np.ndarray, entry: str) -> ag.Tensor:
    """`array` on the current backend, or the backend's refusal (a dtype it lacks) naming `entry`."""
    try:
        return ag.tensor(array)
    except TypeError as e:
        raise TypeError(f"{entry}: {e}") from None


# safetensors: an 8-byte little-endian header length, a JSON header (name -> dtype, shape and
# [begin, end) byte offsets into the data, plus an optional "__metadata__" of strings), padded
# with spaces to a multiple of 8 bytes, then each tensor's bytes, little-endian, in C order.

# The format's dtypes that numpy holds, in the order of the reference library's dtype enum: it
# writes the tensors widest first (so each one's data stays aligned), then by name.
_SAFETENSORS_DTYPES = {
    code: np.dtype(dtype)
    for code, dtype in [
        ("BOOL", "bool"),
        ("U8", "uint8"),
        ("I8", "int8"),
        ("I16", "int16"),
        ("U16", "uint16"),
        ("F16", "float16"),
        ("I32", "int32"),
        ("U32", "uint32"),
        ("F32", "float32"),
        ("C64", "complex64"),
        ("F64", "float64"),
        ("I64", "int64"),
        ("U64", "uint64"),
    ]
}
_SAFETENSORS_CODES = {dtype: code for code, dtype in _SAFETENSORS_DTYPES.items()}
_WRITE_RANK = {code: rank for rank, code in enumerate(_SAFETENSORS_DTYPES)}
# the format's dtypes that numpy has no dtype for
_NUMPY_LACKS = {
    "BF16": "bfloat16",
    "F8_E4M3": "float8 (e4m3)",
    "F8_E5M2": "float8 (e5m2)",
    "F8_E4M3FNUZ": "float8 (e4m3fnuz)",
    "F8_E5M2FNUZ": "float8 (e5m2fnuz)",
    "F8_E8M0": "float8 (e8m0)",
    "F6_E2M3": "float6 (e2m3)",
    "F6_E3M2": "float6 (e3m2)",
    "F4": "float4",
}
_METADATA = "__metadata__"
_MAX_HEADER_BYTES = 100_000_000  # as the reference library: a larger header is refused, not read


def _looks_like_safetensors(head: bytes) -> bool:
    # a JSON object after the 8-byte length; a zip (.npz) has its compression method there, 0 or 8
    return head[8:9] == b"{"


def _safetensors_writer(arrays: dict[str, np.ndarray], metadata: dict[str, str] | None) -> Callable[[BinaryIO], None]:
    """Lay out the file as the reference library does; every refusal comes before a byte is written."""
    header: dict[str, Any] = {}
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(isinstance(s, str) for item in metadata.items() for s in item):
            raise TypeError(f"save: metadata must map strings to strings (safetensors stores text), got {metadata!r}")
        header[_METADATA] = metadata
    codes = {name: _safetensors_code(name, array) for name, array in arrays.items()}
    order = sorted(arrays, key=lambda name: (-_WRITE_RANK[codes[name]], name))
    offset = 0
    for name in order:
        size = arrays[name].nbytes
        header[name] = {
            "dtype": codes[name],
            "shape": list(arrays[name].shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    try:
        text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"save: a key or metadata string is not valid Unicode ({e})") from None
    text += b" " * (-len(text) % 8)

    def write(f: BinaryIO) -> None:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for name in order:
            array = arrays[name]
            f.write(np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes())

    return write


def _safetensors_code(name: str, array: np.ndarray) -> str:
    if name == _METADATA:
        raise ValueError(f"save: a safetensors file keeps the name {_METADATA!r} for its metadata; rename that entry")
    code = _SAFETENSORS_CODES.get(array.dtype.newbyteorder("="))
    if code is None:
        instead = "cast it to complex64, " if array.dtype.kind == "c" else "cast it, "
        raise TypeError(
            f"save: the safetensors format has no {array.dtype.name} (the dtype of {name!r}); {instead}"
            "or save to a .npz, which holds it"
        )
    return code


class _Stored(NamedTuple):
    """Where a tensor lies in a safetensors file's data, once its header entry has been checked."""

    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    begin: int
    end: int


class _Layout(NamedTuple):
    metadata: dict[str, str]
    tensors: list[_Stored]
    data_start: int


def _read_safetensors(f: BinaryIO, where: str) -> dict[str, ag.Tensor]:
    layout = _safetensors_layout(f, where)
    tensors = {}
    for stored in layout.tensors:
        data = bytearray(stored.end - stored.begin)
        f.seek(layout.data_start + stored.begin)
        if f.readinto(data) != len(data):
            raise _damaged(where, "it became shorter while it was read")
        try:
            array = np.frombuffer(data, dtype=stored.dtype.newbyteorder("<")).reshape(stored.shape)
        except ValueError as e:  # more dimensions than numpy holds
            raise _damaged(where, f"tensor {stored.name!r}: {e}") from None
        if stored.dtype == bool and np.frombuffer(data, dtype=np.uint8).max(initial=0) > 1:
            raise _damaged(where, f"tensor {stored.name!r} is BOOL but holds bytes other than 0 and 1")
        tensors[stored.name] = _as_tensor(array, f"load: tensor {stored.name!r} of {where!r}")
    return tensors


def _damaged(where: str, what: str) -> ValueError:
    return ValueError(f"load: {where!r} is not a valid safetensors file: {what}")


def _safetensors_layout(f: BinaryIO, where: str) -> _Layout:
    """The checked header of the safetensors file `f`: every entry well formed, and the tensors
    tiling the data exactly, so that nothing outside the file is read or allocated."""
    file_size = os.fstat(f.fileno()).st_size
    f.seek(0)
    header_size = int.from_bytes(f.read(8), "little")
    if header_size > file_size - 8:
        raise _damaged(where, f"its header length says {header_size} bytes, but {file_size - 8} follow it (truncated?)")
    if header_size > _MAX_HEADER_BYTES:
        raise _damaged(where, f"its header of {header_size} bytes is over the limit of {_MAX_HEADER_BYTES}")
    try:
        header = json.loads(f.read(header_size).decode("utf-8"), object_pairs_hook=_without_repeats)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise _damaged(where, f"its header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise _damaged(where, "its header is not a JSON object")
    metadata = header.pop(_METADATA, {})
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise _damaged(where, f"its {_METADATA} is {reprlib.repr(metadata)}, not an object of strings")
    tensors = [_stored(name, entry, where) for name, entry in header.items()]
    _check_tiling(tensors, file_size - 8 - header_size, where)
    return _Layout(metadata, tensors, 8 + header_size)


def _without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    entries: dict[str, Any] = {}
    for name, value in pairs:
        if name in entries:
            raise ValueError(f"the name {name!r} appears twice")
        entries[name] = value
    return entries


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _stored(name: str, entry: Any, where: str) -> _Stored:
    if not isinstance(entry, dict) or not {"dtype", "shape", "data_offsets"} <= entry.keys():
        raise _damaged(where, f"tensor {name!r} is {reprlib.repr(entry)}, not an object of dtype, shape, data_offsets")
    code, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if isinstance(code, str) and code in _NUMPY_LACKS:
        raise TypeError(
            f"load: tensor {name!r} of {where!r} is {_NUMPY_LACKS[code]} ({code}), a dtype numpy lacks, so nn.load "
            "cannot hold it; convert it in PyTorch (e.g. to float32 with tensor.float()) and save the file again"
        )
    if not isinstance(code, str) or code not in _SAFETENSORS_DTYPES:
        raise _damaged(where, f"tensor {name!r} has dtype {reprlib.repr(code)}, which the format does not define")
    if not isinstance(shape, list) or not all(_is_count(n) for n in shape):
        raise _damaged(where, f"tensor {name!r} has shape {reprlib.repr(shape)}, not a list of sizes")
    if not (
        isinstance(offsets, list) and len(offsets) == 2 and all(map(_is_count, offsets)) and offsets[0] <= offsets[1]
    ):
        raise _damaged(where, f"tensor {name!r} has data_offsets {reprlib.repr(offsets)}, not [begin, end]")
    dtype = _SAFETENSORS_DTYPES[code]
    needed = math.prod(shape) * dtype.itemsize
    if needed != offsets[1] - offsets[0]:
        raise _damaged(
            where,
            f"tensor {name!r} of shape {reprlib.repr(shape)} and dtype {code} takes {needed} bytes, "
            f"but its data_offsets {offsets} span {offsets[1] - offsets[0]}",
        )
    return _Stored(name, dtype, tuple(shape), offsets[0], offsets[1])


def _check_tiling(tensors: list[_Stored], data_size: int, where: str) -> None:
    """The tensors' byte ranges cover the data exactly: no overlap, no gap, nothing past the end."""
    covered, previous = 0, None
    for stored in sorted(tensors, key=lambda t: (t.begin, t.end)):
        if stored.begin < covered:
            raise _damaged(where, f"the data of tensors {previous!r} and {stored.name!r} overlap")
        if stored.begin > covered:
            raise _damaged(
                where, f"bytes {covered} to {stored.begin} of the data, before {stored.name!r}, are no tensor's"
            )
        covered, previous = stored.end, stored.name
    if covered > data_size:
        raise _damaged(
            where, f"tensor {previous!r} ends at byte {covered} of the data, which has {data_size} (truncated?)"
        )
    if covered < data_size:
        raise _damaged(where, f"the last {data_size - covered} bytes of the data are no tensor's")
