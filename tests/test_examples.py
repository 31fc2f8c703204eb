"""The examples on every backend, shortened to fit CI (their --quick runs where those fit):
each trains, and must reach what the full run reaches in kind (XOR solved, the line found,
the MLP beating the linear model on the spirals, the float64 MNIST twin exact to 1e-12, the
character model under the unigram baseline), and must write its JSON record and PNG where
it is told: by default under runs/ in the current folder, never into the repository's results/."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from example_support import characters, data
from example_support.mnist import mnist_model
from example_support.progress import Progress
from example_support.records import ROOT
from example_support.threads import limited_threads
from examples import char, line, mnist, spirals, xor
from tools import twin_control

SCRIPTS = [line, xor, spirals, mnist, char, twin_control]


@pytest.fixture(autouse=True)
def one_thread():
    """One BLAS/torch thread: on a small shared machine, thread pools spin against each other."""
    with limited_threads(1):
        yield


def read_record(path: Path) -> dict:
    record = json.loads(path.read_text())
    assert record["command"].startswith(f"AUTOGRAD_BACKEND={record['backend']} python examples/")
    assert record["wall_time_s"] > 0
    assert record["machine"]["cpu"] and record["machine"]["versions"]["numpy"]
    assert path.with_suffix(".png").stat().st_size > 1000
    return record


# --- small workloads: every backend converges ---------------------------------------------------
def test_line_converges(backend, tmp_path):
    out = line.main(["--quiet", "--quick", "--out", str(tmp_path / "line.json")])
    assert out["steps"] == line.QUICK["steps"]
    assert out["w"] == pytest.approx(2.0, abs=1e-3)
    assert out["b"] == pytest.approx(1.0, abs=1e-3)
    assert out["final_loss"] < 1e-6 < out["losses"][0]
    assert read_record(tmp_path / "line.json")["backend"] == backend.name


def test_xor_converges(backend, tmp_path):
    out = xor.main(["--quiet", "--quick", "--out", str(tmp_path / "xor.json")])
    assert out["predictions"] == [-1, 1, 1, -1]
    assert np.allclose(out["outputs"], [-1, 1, 1, -1], atol=0.1)
    assert out["steps"] == xor.QUICK["steps"] and out["lr"] == 0.1
    assert read_record(tmp_path / "xor.json")["predictions"] == [-1, 1, 1, -1]


def test_spirals_mlp_beats_the_linear_baseline(backend, tmp_path):
    out = spirals.main(["--quiet", "--quick", "--out", str(tmp_path / "spirals.json")])
    assert out["linear_test_accuracy"] < 0.6  # three arms are not linearly separable
    assert out["mlp_test_accuracy"] > 0.9
    assert out["mlp_final_loss"] < 0.5 < out["linear_final_loss"] < out["uniform_loss"] == pytest.approx(math.log(3))
    assert read_record(tmp_path / "spirals.json")["mlp_test_accuracy"] == out["mlp_test_accuracy"]


def test_spirals_split_is_fixed_and_disjoint():
    a = spirals.split(*spirals.make_spirals())
    b = spirals.split(*spirals.make_spirals())
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    train_points = {tuple(p) for p in a[0]}
    assert not any(tuple(p) in train_points for p in a[2])
    assert np.bincount(a[1]).min() > 100


# --- MNIST: the float64 twin is exact -------------------------------------------------------------
def test_mnist_float64_twin_matches_pytorch(float64_backend, tmp_path):
    """50 AdamW steps (6,400 images, batch 128) of ours and of torch.optim.AdamW, float64."""
    pytest.importorskip("torch")
    out = mnist.main(
        [
            "--quiet",
            "--dtype",
            "float64",
            "--epochs",
            "1",
            "--limit",
            "6400",
            "--eval-limit",
            "512",
            "--torch-twin",
            "--out",
            str(tmp_path / "mnist.json"),
        ]
    )
    assert out["steps"] == 50
    assert out["twin_max_weight_diff"][0] <= 1e-12
    assert out["twin_max_loss_diff"][0] <= 1e-12
    assert out["step_losses"][0] > 2.0 > 1.0 > out["step_losses"][-1]  # it did train
    assert out["val_accuracy"][0] > 0.8 and out["twin_test_accuracy"] == out["test_accuracy"]
    record = read_record(tmp_path / "mnist.json")
    for key in ("backend", "dtype", "epochs", "val_accuracy", "test_accuracy", "twin_max_weight_diff"):
        assert key in record
    assert record["dtype"] == "float64" and len(record["val_accuracy"]) == record["epochs"] == 1


def test_twin_sees_a_different_weight(tmp_path):
    """The twin's comparison can fail: nudge one of our weights and it reports the nudge."""
    pytest.importorskip("torch")
    from example_support.twin import TorchTwin

    model = mnist_model("float64")
    twin = TorchTwin(model, "float64", lr=1e-3, weight_decay=0.01)
    assert twin.max_weight_diff(model) == 0.0
    w = model[2].weight
    host = w.detach().numpy().copy()
    host[3, 7] += 1e-9
    model.load_state_dict({**{k: v.numpy() for k, v in model.state_dict().items()}, "2.weight": host})
    assert twin.max_weight_diff(model) == pytest.approx(1e-9, rel=1e-6)


def test_twin_control_measures_rounding_drift():
    """Two torch runs that differ only in summation order: apart, but by rounding only."""
    pytest.importorskip("torch")
    drift = twin_control.drift(1, "float64", limit=1024)
    assert len(drift) == 1 and 0.0 < drift[0] < 1e-13
    cnn_drift = twin_control.drift(1, "float64", limit=256, batch_size=64, model="cnn")
    assert len(cnn_drift) == 1 and 0.0 < cnn_drift[0] < 1e-12


def test_mnist_records_one_accuracy_per_epoch(tmp_path):
    out = mnist.main(
        ["--quiet", "--epochs", "2", "--limit", "512", "--eval-limit", "300", "--out", str(tmp_path / "m.json")]
    )
    assert len(out["val_accuracy"]) == len(out["train_loss"]) == 2 and out["steps"] == 8
    assert out["train_loss"][1] < out["train_loss"][0]
    assert "twin_max_weight_diff" not in out


# --- the character model --------------------------------------------------------------------------
def test_char_model_beats_the_unigram_baseline(backend, tmp_path):
    # evaluation sizes are multiples of the batch: no new shapes for jax to compile
    out = char.main(
        [
            "--quiet",
            "--steps",
            "60",
            "--batch-size",
            "128",
            "--eval-every",
            "30",
            "--eval-subset",
            "1024",
            "--eval-limit",
            "4096",
            "--sample-length",
            "20",
            "--out",
            str(tmp_path / "char.json"),
        ]
    )
    b = out["baselines"]
    assert b["uniform"] == pytest.approx(math.log(65))
    assert b["bigram"] < b["unigram"] < b["uniform"]
    assert out["val_nats"] < b["unigram"]
    assert out["train_curve"][-1][1] < out["train_curve"][0][1]
    assert len(out["sample"]) == 16 + 20 and out["sample"].startswith(out["sample_prompt"])
    assert read_record(tmp_path / "char.json")["val_nats"] == out["val_nats"]


def test_char_baselines_match_the_source():
    corpus = characters.load_corpus()
    assert len(corpus.chars) == 65 and len(corpus.train) + len(corpus.val) == 1_115_394
    assert characters.baselines(corpus, 16)["bigram"] == pytest.approx(2.482, abs=5e-4)


def test_char_schedule_decays_over_the_last_quarter():
    f = characters.decay_last_quarter(100)
    assert [f(0), f(74), f(75), f(90), f(99)] == [1.0, 1.0, 1.0, 0.4, pytest.approx(0.04)]


# --- the shared pieces ---------------------------------------------------------------------------
def test_progress_line_shows_count_and_loss():
    import io

    stream = io.StringIO()
    bar = Progress(3, "run", stream=stream)
    for loss in (3.0, 2.0, 1.0):
        bar.update(loss=loss)
    bar.close()
    text = stream.getvalue()  # not a terminal: plain lines, no carriage returns
    assert "\r" not in text and text.endswith("\n")
    assert text.splitlines()[-1].startswith("run 3/3 (100%)  loss 1.0000  elapsed")


def test_batches_cover_every_example_once():
    rng = np.random.default_rng(0)
    batches = list(data.shuffled_batches(1000, 128, rng))
    assert len(batches) == data.num_batches(1000, 128) == 8 and len(batches[-1]) == 1000 - 7 * 128
    assert sorted(np.concatenate(batches).tolist()) == list(range(1000))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda m: m.NAME)
def test_help(script, capsys):
    with pytest.raises(SystemExit) as exit_info:
        script.main(["--help"])
    assert exit_info.value.code == 0
    folder = script.__name__.split(".")[0]  # examples/, or tools/ for the yardstick
    assert f"{folder}/{script.NAME}.py" in capsys.readouterr().out


def results_folder() -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (ROOT / "results").iterdir()}


def test_runs_as_a_script_and_writes_only_under_the_current_folder(tmp_path):
    thread_variables = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "XLA_FLAGS")
    env = {k: v for k, v in os.environ.items() if k not in thread_variables}  # the script must set them itself
    env["AUTOGRAD_BACKEND"] = "numpy"
    before = results_folder()
    subprocess.run(
        [sys.executable, str(ROOT / "examples" / "xor.py"), "--quiet", "--threads", "1", "--steps", "5"],
        check=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert results_folder() == before
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "runs",
        "runs/xor-numpy.json",
        "runs/xor-numpy.png",
    ]
    record = read_record(tmp_path / "runs" / "xor-numpy.json")
    assert record["steps"] == 5 and record["command"].endswith("python examples/xor.py --quiet --threads 1 --steps 5")
    assert record["machine"]["threads"]["OMP_NUM_THREADS"] == "1"
