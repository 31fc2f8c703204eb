"""The LSTM character model example: a short run on every backend learns (beats the unigram
baseline), writes its JSON and PNG, and scores the same validation targets as char.py."""

from __future__ import annotations

import json

import numpy as np

import autograd_core as ag
from example_support import characters
from examples import lstm_char


def test_short_run_beats_the_unigram_baseline(backend, tmp_path):
    out = lstm_char.main(
        [
            "--quiet",
            "--steps",
            "60",
            "--batch-size",
            "16",
            "--block",
            "32",
            "--hidden",
            "64",
            "--embed",
            "16",
            "--lr",
            "1e-2",
            "--eval-every",
            "30",
            "--eval-chars",
            "2048",
            "--eval-limit",
            "4096",
            "--sample-length",
            "20",
            "--out",
            str(tmp_path / "lstm.json"),
        ]
    )
    b = out["baselines"]
    assert b == characters.baselines(characters.load_corpus(), 16)
    assert out["val_nats"] < b["unigram"]
    assert out["train_curve"][-1][1] < out["train_curve"][0][1]
    assert out["val_positions"] == 4096 and len(out["val_curve"]) == 2
    assert len(out["sample"]) == 16 + 20 and out["sample"].startswith(out["sample_prompt"])
    assert json.loads((tmp_path / "lstm.json").read_text())["val_nats"] == out["val_nats"]
    assert (tmp_path / "lstm.png").stat().st_size > 0


def test_windows_follow_the_streams_and_start_each_epoch_afresh():
    data = np.arange(1000)
    windows = lstm_char.training_windows(data, batch_size=4, block=10, rng=np.random.default_rng(0))
    (first, x0, y0), (again, x1, _) = next(windows), next(windows)
    assert first and not again
    assert x0.shape == y0.shape == (4, 10)
    np.testing.assert_array_equal(y0, x0 + 1)  # the targets are the next characters
    np.testing.assert_array_equal(x1, x0 + 10)  # the next window continues each stream
    np.testing.assert_array_equal(x0[1] - x0[0], 250)  # streams are a quarter of the text apart
    epochs = [next(windows)[0] for _ in range(60)]
    assert sum(epochs) >= 2


def test_evaluation_scores_the_targets_char_py_scores():
    class Uniform:
        """Equal logits everywhere: every scored character costs log(65) nats."""

        def __call__(self, codes, state=None):
            return ag.zeros((*codes.shape, 65)), state

    data = np.random.default_rng(0).integers(0, 65, 1000)
    assert abs(lstm_char.evaluate(Uniform(), data, batch_streams=8, block=16) - np.log(65)) < 1e-5
