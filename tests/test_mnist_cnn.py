"""The MNIST CNN example on every backend, shortened to fit CI: it trains, its compiled step
(jax) follows the schedule, the float64 twin agrees with PyTorch to 1e-10, and it writes its
JSON record and PNG. The twin's own pieces (the batch norm it uses, the shared dropout
masks) are checked against PyTorch here too."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import autograd_core as ag
import nn
import optim
from autograd_core.transforms.compile import CompileFallbackWarning
from example_support import mnist as shared
from example_support.threads import limited_threads
from examples import mnist_cnn


@pytest.fixture(autouse=True)
def one_thread():
    """One BLAS/torch thread: on a small shared machine, thread pools spin against each other."""
    with limited_threads(1):
        yield


def read_record(path) -> dict:
    record = json.loads(path.read_text())
    assert record["command"].startswith(f"AUTOGRAD_BACKEND={record['backend']} python examples/mnist_cnn.py")
    assert record["wall_time_s"] > 0 and record["machine"]["cpu"]
    assert path.with_suffix(".png").stat().st_size > 1000
    return record


def test_cnn_trains_and_writes_its_record(backend, tmp_path):
    """Two epochs of 4 steps: the loss falls, evaluation runs in eval mode, jax compiles the step."""
    out = tmp_path / "cnn.json"
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)  # a step that falls back is a failure
        result = mnist_cnn.main(
            ["--quiet", "--epochs", "2", "--limit", "256", "--eval-limit", "500", "--out", str(out)]
        )
    assert result["steps"] == 8 and result["compiled"] == backend.can_compile
    assert result["train_loss"][1] < result["train_loss"][0]
    assert len(result["val_accuracy"]) == 2 and 0.2 < result["test_accuracy"] <= 1.0  # above chance after 8 steps
    assert "twin_max_weight_diff" not in result
    record = read_record(out)
    assert record["backend"] == backend.name and record["dtype"] == "float32"
    for key in ("schedule", "label_smoothing", "max_grad_norm", "dropout", "compiled", "test_accuracy"):
        assert record[key] == result[key]


def test_cnn_float64_twin_matches_pytorch(float64_backend, tmp_path):
    """10 steps with dropout, label smoothing, clipping and OneCycleLR, ours against torch, float64."""
    pytest.importorskip("torch")
    out = tmp_path / "cnn64.json"
    result = mnist_cnn.main(
        [
            "--quiet",
            "--dtype",
            "float64",
            "--epochs",
            "1",
            "--limit",
            "640",
            "--eval-limit",
            "500",
            "--torch-twin",
            "--out",
            str(out),
        ]
    )
    assert result["steps"] == 10
    assert result["twin_max_weight_diff"][0] <= 1e-10
    assert result["twin_max_buffer_diff"][0] <= 1e-10
    assert result["twin_max_loss_diff"][0] <= 1e-12
    assert result["step_losses"][-1] < result["step_losses"][0]
    assert result["twin_test_accuracy"] == result["test_accuracy"]
    by_entry = result["twin_weight_diff_by_param"][0]
    assert {"1.running_mean", "1.running_var", "5.num_batches_tracked", "0.weight", "12.bias"} <= set(by_entry)
    assert read_record(out)["dtype"] == "float64"


def test_compiled_step_follows_the_schedule(backend):
    """The step reads the learning rate the schedule set for this step, compiled or not: at lr 0
    the weights stay put (a trace that froze the first rate would move them)."""
    model = shared.cnn_model()
    opt = optim.AdamW(model.parameters(), lr=1e-3)
    step, compiled = mnist_cnn.training_step(model, opt)
    assert compiled == backend.can_compile
    x = ag.tensor(np.random.default_rng(0).random((4, 1, 28, 28), dtype=np.float32))
    y = ag.tensor([0, 1, 2, 3])
    weights = lambda: [p.detach().numpy().copy() for p in model.parameters()]
    step(x, y)  # the first and the later steps are traced apart (the optimizer state appears)
    before = weights()
    opt.param_groups[0]["lr"] = 0.0
    step(x, y)
    assert all(np.array_equal(a, b) for a, b in zip(before, weights()))
    opt.param_groups[0]["lr"] = 1e-3
    step(x, y)
    assert not all(np.array_equal(a, b) for a, b in zip(before, weights()))
    assert opt.param_groups[0]["lr"] == 1e-3 and isinstance(opt.param_groups[0]["betas"][0], float)


def test_the_twin_reads_the_mask_the_dropout_layer_draws(backend):
    """`next_dropout_mask` is the mask the CNN's dropout applies at its next call (in training
    mode, on features of ones the output is the mask itself)."""
    drop = shared.cnn_model("float32", seed=5)[9]
    assert isinstance(drop, nn.Dropout) and drop.p == 0.25
    expected = shared.next_dropout_mask(3, 0.25, "float32")
    drawn = drop(ag.ones((3, shared.FEATURES), dtype=ag.float32)).numpy()
    np.testing.assert_array_equal(drawn, expected)
    assert not np.array_equal(shared.next_dropout_mask(3, 0.25, "float32"), expected)  # the stream moved on


def test_dropout_masks_are_seeded_and_scaled():
    masks = shared.dropout_masks(3, 0.25, "float64")
    first = masks(512)
    assert first.shape == (512, 64 * 7 * 7) and first.dtype == np.float64
    assert set(np.unique(first)) == {0.0, 1 / 0.75}
    assert abs(np.mean(first == 0) - 0.25) < 0.01
    assert not np.array_equal(first, masks(512))  # a new mask each step
    np.testing.assert_array_equal(first, shared.dropout_masks(3, 0.25, "float64")(512))


def test_forward_with_mask_replaces_only_the_dropout_layer():
    model = shared.cnn_model("float64")
    x = ag.tensor(np.random.default_rng(1).random((2, 1, 28, 28)))
    ones = ag.ones((2, 64 * 7 * 7), dtype=ag.float64)
    model.eval()
    np.testing.assert_array_equal(
        shared.forward_with_mask(model, x, ones, nn.Dropout).detach().numpy(), model(x).detach().numpy()
    )
    model.train()
    out = shared.forward_with_mask(model, x, ones * 0.0, nn.Dropout).detach().numpy()
    np.testing.assert_array_equal(out[0], out[1])  # nothing of the two images got through
    assert not np.array_equal(*model(x).detach().numpy())


def test_twin_batch_norm_matches_torch():
    """The twin's two-pass batch norm is torch's BatchNorm2d in value, gradient and running statistics."""
    torch = pytest.importorskip("torch")
    from example_support.twin import TwoPassBatchNorm2d

    x = torch.tensor(np.random.default_rng(2).normal(0.3, 2.0, (8, 3, 5, 5)), requires_grad=True)
    ours, theirs = TwoPassBatchNorm2d(3, dtype=torch.float64), torch.nn.BatchNorm2d(3, dtype=torch.float64)
    with torch.no_grad():
        for bn in (ours, theirs):
            bn.weight.copy_(torch.tensor([0.5, 1.0, 2.0]))
            bn.bias.copy_(torch.tensor([0.1, -0.2, 0.3]))
    results = []
    for bn in (ours, theirs):
        for _ in range(2):
            out = bn(x)
        (grad,) = torch.autograd.grad((out * torch.arange(out.numel()).reshape(out.shape)).sum(), x)
        results.append((out, grad, bn.running_mean, bn.running_var, bn.num_batches_tracked))
    for a, b in zip(*results):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)
    ours.eval()
    theirs.eval()
    torch.testing.assert_close(ours(x), theirs(x), rtol=1e-12, atol=1e-12)


def test_help(capsys):
    with pytest.raises(SystemExit) as exit_info:
        mnist_cnn.main(["--help"])
    assert exit_info.value.code == 0
    assert "examples/mnist_cnn.py" in capsys.readouterr().out
