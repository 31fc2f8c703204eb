"""Checkpoints: atomic writes, arrays only, any key, a clear error for a .npy."""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
import nn


def test_a_save_that_fails_midway_leaves_the_previous_checkpoint_whole(backend, tmp_path, monkeypatch):
    path = tmp_path / "m.npz"
    nn.save({"w": ag.ones(3)}, path)
    write_array, written = np.lib.format.write_array, []

    def failing_on_the_second(member, array, **kwargs):
        if written:
            raise OSError("disk full")
        written.append(array)
        write_array(member, array, **kwargs)

    monkeypatch.setattr(np.lib.format, "write_array", failing_on_the_second)
    with pytest.raises(OSError, match="disk full"):
        nn.save({"w": ag.zeros(3), "v": ag.zeros(2)}, path)
    monkeypatch.undo()
    assert nn.load(path)["w"].tolist() == [1.0, 1.0, 1.0]
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]  # no partial file left behind


def test_a_value_that_is_not_an_array_is_refused_at_save(backend, tmp_path):
    with pytest.raises(TypeError, match="'note' is a str, not a tensor"):
        nn.save({"w": ag.ones(2), "note": "hello"}, tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize("key", ["file", "allow_pickle", "args", "kwds", "a.b", "layer/0"])
def test_any_string_key_round_trips(backend, tmp_path, key):
    nn.save({key: ag.asarray([1.0, 2.0]), "other": ag.asarray([3.0])}, tmp_path / "m.npz")
    loaded = nn.load(tmp_path / "m.npz")
    assert sorted(loaded) == sorted([key, "other"])
    assert loaded[key].tolist() == [1.0, 2.0]


def test_loading_a_npy_says_what_is_wrong(backend, tmp_path):
    np.save(tmp_path / "w.npy", np.ones(3))
    with pytest.raises(ValueError, match="single array"):
        nn.load(tmp_path / "w.npy")
