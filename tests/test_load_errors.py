"""`nn.load` of a file that is not a state dict written by `nn.save` says what the file is and
what to do, and never unpickles or evaluates anything in it."""

from __future__ import annotations

import pickle
import zipfile

import numpy as np
import pytest
import torch

import autograd_core as ag
import nn


class WritesAFileWhenUnpickled:
    """An object whose unpickling creates `path`: loading that creates it has run the file's code."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple:
        return open, (self.path, "w")


def torch_checkpoint(path, legacy: bool) -> None:
    torch.save({"weight": torch.ones(2, 3)}, path, _use_new_zipfile_serialization=not legacy)


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_a_torch_save_checkpoint_is_named_with_what_to_do(backend, tmp_path, legacy):
    path = tmp_path / "model.pt"
    torch_checkpoint(path, legacy)
    kind = "legacy pickle format" if legacy else "zip format"
    with pytest.raises(ValueError, match=f"PyTorch checkpoint in torch.save's {kind}.*never unpickles.*np.savez"):
        nn.load(path)


@pytest.mark.parametrize(
    "content, said",
    [
        (b"", "is empty"),
        (b"weight: 1.0\n", "is a text file"),
        (b"\x00\x01\x02garbage\xff\xfe", "is not a zip archive"),
        (pickle.dumps({"weight": [1.0]}), "is a Python pickle.*never unpickles"),
        (b"\x20\x00\x00\x00\x00\x00\x00\x00" + b'{"weight": {"dtype": "F32"}}', "not a valid safetensors file"),
    ],
    ids=["empty", "text", "binary", "pickle", "damaged safetensors"],
)
def test_a_file_of_another_kind_is_named(backend, tmp_path, content, said):
    path = tmp_path / "model.npz"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=said):
        nn.load(path)


def test_a_single_npy_array_is_not_a_state_dict(backend, tmp_path):
    np.save(tmp_path / "w.npy", np.ones(3))
    with pytest.raises(ValueError, match=r"single array \(a .npy file\)"):
        nn.load(tmp_path / "w.npy")


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.95])
def test_a_truncated_checkpoint_is_named_damaged(backend, tmp_path, cut):
    whole = tmp_path / "whole.npz"
    nn.save({"weight": ag.ones(64, 64), "bias": ag.zeros(64)}, whole)
    data = whole.read_bytes()
    cut_file = tmp_path / "cut.npz"
    cut_file.write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(ValueError, match="damaged or truncated"):
        nn.load(cut_file)


def test_a_zip_of_another_layout_is_refused(backend, tmp_path):
    with zipfile.ZipFile(tmp_path / "other.npz", "w") as archive:
        archive.writestr("notes.txt", "not an array")
    with pytest.raises(ValueError, match="'notes.txt', which is not a .npy array"):
        nn.load(tmp_path / "other.npz")
    with zipfile.ZipFile(tmp_path / "bad.npz", "w") as archive:
        archive.writestr("weight.npy", b"not an npy header")
    with pytest.raises(ValueError, match="entry 'weight' .* is not a valid .npy array"):
        nn.load(tmp_path / "bad.npz")


def test_an_entry_of_strings_is_refused_with_its_name(backend, tmp_path):
    np.savez(tmp_path / "m.npz", weight=np.ones(2), names=np.array(["a", "b"]))
    with pytest.raises(TypeError, match="entry 'names' .*strings"):
        nn.load(tmp_path / "m.npz")


def test_nothing_in_a_file_is_ever_unpickled(backend, tmp_path):
    marker = tmp_path / "ran"
    evil = WritesAFileWhenUnpickled(str(marker))
    np.savez(tmp_path / "objects.npz", weight=np.ones(2), evil=np.array([evil, 1], dtype=object))
    with pytest.raises(ValueError, match="entry 'evil' .*holds Python objects"):
        nn.load(tmp_path / "objects.npz")
    (tmp_path / "plain.pkl").write_bytes(pickle.dumps({"weight": evil}))
    with pytest.raises(ValueError, match="Python pickle"):
        nn.load(tmp_path / "plain.pkl")
    with zipfile.ZipFile(tmp_path / "fake_torch.pt", "w") as archive:
        archive.writestr("archive/data.pkl", pickle.dumps({"weight": evil}))
    with pytest.raises(ValueError, match="PyTorch checkpoint"):
        nn.load(tmp_path / "fake_torch.pt")
    assert not marker.exists()
    pickle.loads(pickle.dumps(evil))  # the marker works: unpickling does create the file
    assert marker.exists()


def test_a_good_checkpoint_still_loads_on_this_backend(backend, tmp_path):
    model = nn.Linear(3, 2)
    nn.save(model.state_dict(), tmp_path / "m.npz")
    loaded = nn.load(tmp_path / "m.npz")
    assert sorted(loaded) == ["bias", "weight"]
    assert all(t.backend is backend for t in loaded.values())
    np.testing.assert_array_equal(loaded["weight"].numpy(), model.weight.detach().numpy())
