"""safetensors files: `nn.save` to a ``.safetensors`` path and `nn.load` of one, checked against
the reference library (safetensors.torch, safetensors.numpy) as the oracle: state dicts cross
between PyTorch's modules and ours both ways and give the same outputs, every dtype round-trips,
files are byte for byte the reference's, and a damaged or hostile file is refused with what is
wrong before anything is allocated for it."""

from __future__ import annotations

import json
import pickle
import re
import tracemalloc

import numpy as np
import pytest
import torch

import autograd_core as ag
import nn
from nn import serialization

safetensors_numpy = pytest.importorskip("safetensors.numpy", reason="the test extra installs safetensors")
safetensors_torch = pytest.importorskip("safetensors.torch", reason="the test extra installs safetensors")

# Each builds the same module from PyTorch's torch.nn or from ours, and gives its input's shape.
MODULES = {
    "mlp": (lambda lib: lib.Sequential(lib.Linear(4, 8), lib.ReLU(), lib.Linear(8, 3)), (5, 4)),
    "conv": (lambda lib: lib.Conv2d(2, 3, 3, padding=1), (2, 2, 6, 6)),
    "lstm": (lambda lib: lib.LSTM(4, 5, num_layers=2, batch_first=True), (2, 3, 4)),
    "norms": (lambda lib: lib.Sequential(lib.Linear(4, 6), lib.LayerNorm(6), lib.BatchNorm1d(6)), (5, 4)),
}


def outputs(result) -> list[np.ndarray]:
    """A module's outputs (an LSTM's nest of them too) as host arrays."""
    if isinstance(result, tuple):
        return [array for part in result for array in outputs(part)]
    return [result.detach().numpy() if isinstance(result, torch.Tensor) else result.numpy(force=True)]


def trained_torch_module(kind: str) -> torch.nn.Module:
    """PyTorch's module, with batch norm's running statistics moved off their initial values."""
    build, shape = MODULES[kind]
    torch.manual_seed(0)
    module = build(torch.nn)
    module(torch.randn(*shape))
    return module.eval()


def assert_same_outputs(ours: nn.Module, theirs: torch.nn.Module, kind: str) -> None:
    x = np.random.default_rng(1).standard_normal(MODULES[kind][1]).astype(np.float32)
    with torch.no_grad():
        expected = outputs(theirs(torch.from_numpy(x)))
    actual = outputs(ours.eval()(ag.tensor(x)))
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", MODULES)
def test_a_state_dict_saved_by_pytorch_loads_into_our_module(backend, tmp_path, kind):
    theirs = trained_torch_module(kind)
    safetensors_torch.save_file(theirs.state_dict(), tmp_path / "m.safetensors")
    loaded = nn.load(tmp_path / "m.safetensors")
    assert all(t.backend is backend for t in loaded.values())
    for name, value in theirs.state_dict().items():  # the weights arrive bit for bit, with their dtypes
        np.testing.assert_array_equal(loaded[name].numpy(), value.numpy(), strict=True)
    ours = MODULES[kind][0](nn)
    ours.load_state_dict(loaded)  # strict: the names are PyTorch's
    assert_same_outputs(ours, theirs, kind)


@pytest.mark.parametrize("kind", MODULES)
def test_our_state_dict_loads_into_pytorchs_module(backend, tmp_path, kind):
    ag.manual_seed(0)
    ours = MODULES[kind][0](nn)
    ours(ag.randn(*MODULES[kind][1]))  # batch norm's running statistics move
    nn.save(ours.state_dict(), tmp_path / "m.safetensors")
    theirs = MODULES[kind][0](torch.nn)
    theirs.load_state_dict(safetensors_torch.load_file(tmp_path / "m.safetensors"))  # strict
    for name, value in theirs.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), ours.state_dict()[name].numpy(force=True), strict=True)
    assert_same_outputs(ours, theirs.eval(), kind)


DTYPES = ["bool", "uint8", "int8", "int16", "uint16", "float16", "int32", "uint32", "float32", "complex64"]
DTYPES += ["float64", "int64", "uint64"]


def example(dtype: str, shape=(2, 3)) -> np.ndarray:
    rng = np.random.default_rng(0)
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    if info is not None:  # the extremes too
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    values = rng.standard_normal(shape) * 1e3
    return np.asarray(values + 1j * rng.standard_normal(shape) if dtype.startswith("complex") else values, dtype)


def assert_loads_as_the_backend_makes_them(path, arrays: dict[str, np.ndarray]) -> None:
    """`nn.load` gives what `ag.tensor` gives for each array (of one dtype): its values, or the
    backend's refusal naming a tensor."""
    try:
        ag.tensor(next(iter(arrays.values())))
    except TypeError as refusal:
        with pytest.raises(TypeError, match=f"tensor '({'|'.join(arrays)})' of .*{re.escape(str(refusal))}"):
            nn.load(path)
        return
    loaded = nn.load(path)
    assert sorted(loaded) == sorted(arrays)
    for name, array in arrays.items():
        np.testing.assert_array_equal(loaded[name].numpy(), array, strict=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_round_trips_with_the_reference_library(backend, tmp_path, dtype):
    arrays = {"x": example(dtype), "scalar": example(dtype, ()), "empty": example(dtype, (0, 3))}
    nn.save(arrays, tmp_path / "ours.safetensors")
    theirs = safetensors_numpy.load_file(tmp_path / "ours.safetensors")
    for name, array in arrays.items():
        np.testing.assert_array_equal(theirs[name], array, strict=True)
    safetensors_numpy.save_file(arrays, tmp_path / "theirs.safetensors")
    assert_loads_as_the_backend_makes_them(tmp_path / "theirs.safetensors", arrays)


def test_pytorchs_unsigned_dtypes_load(backend, tmp_path):
    state = {str(d): torch.tensor([0, 7, 2**16 - 1], dtype=d) for d in (torch.uint16, torch.uint32, torch.uint64)}
    safetensors_torch.save_file(state, tmp_path / "m.safetensors")
    assert_loads_as_the_backend_makes_them(tmp_path / "m.safetensors", {k: v.numpy() for k, v in state.items()})


def test_a_file_is_byte_for_byte_the_reference_librarys(tmp_path):
    arrays = {name: example(dtype) for name, dtype in zip("gfedcbaGFEDCBA", DTYPES + ["float32"])}
    arrays["é"], arrays["scalar"] = np.arange(3, dtype=">i4"), np.array(2.5)  # another byte order, 0-d
    metadata = {"note": "ünïcode \n\x01"}  # one key: the reference keeps metadata in a hash map, in no set order
    nn.save(arrays, tmp_path / "ours.safetensors", metadata=metadata)
    little = {name: array.astype(array.dtype.newbyteorder("<")) for name, array in arrays.items()}
    safetensors_numpy.save_file(little, tmp_path / "theirs.safetensors", metadata=metadata)
    ours, theirs = (tmp_path / "ours.safetensors").read_bytes(), (tmp_path / "theirs.safetensors").read_bytes()
    assert ours == theirs
    assert int.from_bytes(ours[:8], "little") % 8 == 0


def test_metadata_round_trips_both_ways(tmp_path):
    nn.save({"w": ag.ones(2)}, tmp_path / "ours.safetensors", metadata={"format": "pt", "epoch": "3"})
    with safetensors_numpy.safe_open(tmp_path / "ours.safetensors", "np") as f:
        assert f.metadata() == {"format": "pt", "epoch": "3"}
    safetensors_torch.save_file({"w": torch.ones(2)}, tmp_path / "theirs.safetensors", metadata={"step": "10"})
    assert serialization.load_metadata(tmp_path / "theirs.safetensors") == {"step": "10"}
    nn.save({"w": ag.ones(2)}, tmp_path / "plain.safetensors")
    assert serialization.load_metadata(tmp_path / "plain.safetensors") == {}
    nn.save({"w": ag.ones(2)}, tmp_path / "m.npz")
    with pytest.raises(ValueError, match="not a safetensors file; only safetensors files hold metadata"):
        serialization.load_metadata(tmp_path / "m.npz")


def test_the_format_follows_the_extension_and_load_follows_the_content(backend, tmp_path):
    state = {"w": ag.asarray([1.0, 2.0])}
    for name in ("m.safetensors", "m.SafeTensors"):
        nn.save(state, tmp_path / name)
        assert safetensors_numpy.load_file(tmp_path / name)["w"].tolist() == [1.0, 2.0]
    for name in ("m.npz", "m.pt", "m"):  # anything else is a .npz
        nn.save(state, tmp_path / name)
        assert np.load(tmp_path / name)["w"].tolist() == [1.0, 2.0]
    safetensors_torch.save_file({"w": torch.tensor([3.0])}, tmp_path / "renamed.npz")
    assert nn.load(tmp_path / "renamed.npz")["w"].tolist() == [3.0]


@pytest.mark.parametrize(
    "value, said",
    [
        (np.ones(2, np.complex128), "no complex128 .*'w'.*cast it to complex64, or save to a .npz"),
        (np.ones(2, np.longdouble), "no float128 .*'w'.*or save to a .npz"),
    ],
    ids=["complex128", "float128"],
)
def test_a_dtype_the_format_lacks_is_refused_at_save(tmp_path, value, said):
    if value.dtype.itemsize == 8:
        pytest.skip("long double is float64 on this platform, which the format holds")
    with pytest.raises(TypeError, match=said):
        nn.save({"b": np.ones(2), "w": value}, tmp_path / "m.safetensors")
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_other_bad_saves_are_refused_before_writing(tmp_path):
    with pytest.raises(ValueError, match="keeps the name '__metadata__'"):
        nn.save({"__metadata__": ag.ones(1)}, tmp_path / "m.safetensors")
    with pytest.raises(TypeError, match="metadata must map strings to strings"):
        nn.save({"w": ag.ones(1)}, tmp_path / "m.safetensors", metadata={"epoch": 3})
    with pytest.raises(ValueError, match="metadata is stored in safetensors files only"):
        nn.save({"w": ag.ones(1)}, tmp_path / "m.npz", metadata={"epoch": "3"})
    with pytest.raises(ValueError, match="not valid Unicode"):
        nn.save({"\ud800": ag.ones(1)}, tmp_path / "m.safetensors")
    assert list(tmp_path.iterdir()) == []


def test_bfloat16_is_refused_naming_the_tensor_and_what_to_do(backend, tmp_path):
    safetensors_torch.save_file({"w": torch.ones(2, dtype=torch.bfloat16)}, tmp_path / "m.safetensors")
    with pytest.raises(TypeError, match=r"tensor 'w' .* is bfloat16 \(BF16\), a dtype numpy lacks.*PyTorch"):
        nn.load(tmp_path / "m.safetensors")


def safetensors_file(header: dict | bytes, data: bytes = b"", header_size: int | None = None) -> bytes:
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return (len(text) if header_size is None else header_size).to_bytes(8, "little") + text + data


def entry(dtype: str, shape: list, begin: int, end: int) -> dict:
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


F32_PAIR = {"a": entry("F32", [2], 0, 8), "b": entry("F32", [1], 8, 12)}
MALFORMED = {
    "header past the end": (safetensors_file({"a": entry("F32", [1], 0, 4)}, header_size=10**6), "1000000 bytes"),
    "bad JSON": (safetensors_file(b'{"a": {"dtype": "F32",'), "not valid JSON"),
    "not UTF-8": (safetensors_file(b'{"\xff": 1}'), "not valid JSON"),
    "deep nesting": (safetensors_file(b'{"a":' + b"[" * 100_000), "not valid JSON"),
    "repeated name": (safetensors_file(b'{"a": 1, "a": 2}'), "'a' appears twice"),
    "entry not an object": (safetensors_file({"a": [1, 2]}), "tensor 'a' is .*not an object"),
    "missing offsets": (safetensors_file({"a": {"dtype": "F32", "shape": [1]}}, bytes(4)), "not an object of dtype"),
    "unknown dtype": (safetensors_file({"a": entry("F31", [1], 0, 4)}, bytes(4)), "dtype 'F31', which the format"),
    "dtype not a string": (safetensors_file({"a": entry(["F32"], [1], 0, 4)}, bytes(4)), r"dtype \['F32'\], which"),
    "negative size": (safetensors_file({"a": entry("F32", [-1], 0, 4)}, bytes(4)), r"shape \[-1\], not a list"),
    "float size": (safetensors_file({"a": entry("F32", [1.0], 0, 4)}, bytes(4)), "not a list of sizes"),
    "reversed offsets": (safetensors_file({"a": entry("F32", [0], 4, 0)}, bytes(4)), r"\[4, 0\], not \[begin, end\]"),
    "span too small": (safetensors_file({"a": entry("F32", [3], 0, 4)}, bytes(4)), "takes 12 bytes.* span 4"),
    "overlap": (
        safetensors_file({"a": entry("F32", [2], 0, 8), "b": entry("F32", [2], 4, 12)}, bytes(12)),
        "tensors 'a' and 'b' overlap",
    ),
    "gap": (safetensors_file({"a": entry("F32", [1], 4, 8)}, bytes(8)), "bytes 0 to 4 of the data, before 'a'"),
    "data past the end": (safetensors_file(F32_PAIR, bytes(10)), "'b' ends at byte 12 of the data, which has 10"),
    "trailing bytes": (safetensors_file(F32_PAIR, bytes(16)), "last 4 bytes of the data are no tensor's"),
    "bad metadata": (safetensors_file({"__metadata__": {"k": 1}}), "__metadata__ is .*not an object of strings"),
    "bool byte": (safetensors_file({"a": entry("BOOL", [2], 0, 2)}, b"\x01\x02"), "BOOL but holds bytes other"),
    "too many dimensions": (safetensors_file({"a": entry("U8", [1] * 70, 0, 1)}, bytes(1)), "tensor 'a': .*dim"),
}


@pytest.mark.parametrize("content, said", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_file_is_refused_saying_what_is_wrong(backend, tmp_path, content, said):
    path = tmp_path / "m.safetensors"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=f"is not a valid safetensors file: .*{said}"):
        nn.load(path)


@pytest.mark.parametrize("cut", [9, 40, 0.5, 0.9, -1])
def test_a_truncated_file_is_refused(backend, tmp_path, cut):
    nn.save({"weight": ag.ones(16, 16), "bias": ag.zeros(16)}, tmp_path / "whole.safetensors")
    data = (tmp_path / "whole.safetensors").read_bytes()
    (tmp_path / "cut.safetensors").write_bytes(data[: cut if isinstance(cut, int) else int(len(data) * cut)])
    with pytest.raises(ValueError, match=r"not a valid safetensors file: .*\(truncated\?\)"):
        nn.load(tmp_path / "cut.safetensors")


@pytest.mark.parametrize(
    "offsets, said", [([0, 4], "takes 4000000000000 bytes"), ([0, 4 * 10**12], "ends at byte 4000000000000")]
)
def test_a_huge_shape_is_refused_before_allocating(backend, tmp_path, offsets, said):
    header = {"a": {"dtype": "F32", "shape": [10**6, 10**6], "data_offsets": offsets}}
    (tmp_path / "m.safetensors").write_bytes(safetensors_file(header, bytes(4)))
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=said):
            nn.load(tmp_path / "m.safetensors")
        assert tracemalloc.get_traced_memory()[1] < 1_000_000
    finally:
        tracemalloc.stop()


def test_a_header_over_the_limit_is_not_read(tmp_path, monkeypatch):
    monkeypatch.setattr(serialization, "_MAX_HEADER_BYTES", 64)
    nn.save({f"w{i}": ag.ones(1) for i in range(5)}, tmp_path / "m.safetensors")
    with pytest.raises(ValueError, match="over the limit of 64"):
        nn.load(tmp_path / "m.safetensors")


class OpensAFile:
    """Unpickling this creates `path`: a loader that creates it has run the file's code."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple:
        return open, (self.path, "w")


def test_a_pickle_renamed_safetensors_is_never_unpickled(backend, tmp_path):
    marker = tmp_path / "ran"
    (tmp_path / "m.safetensors").write_bytes(pickle.dumps({"w": OpensAFile(str(marker))}))
    with pytest.raises(ValueError, match="is a Python pickle.*never unpickles"):
        nn.load(tmp_path / "m.safetensors")
    assert not marker.exists()
