"""What the MNIST examples (examples/mnist.py, examples/mnist_cnn.py) and the twins' yardstick
(tools/twin_control.py) share: their data flags and splits, their two networks (the MLP and
the CNN of `bench.problems`), the CNN's dropout masks and training settings, the PyTorch twin
of the CNN, and the record and figure of a run."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

import autograd_core as ag
import nn
from backends.contract import mask_stream
from bench.problems import CNN_DROPOUT, CNN_IMAGE, mnist_cnn
from example_support import cli, plots, records
from example_support.data import Split, load_mnist

if TYPE_CHECKING:
    from example_support.twin import TorchTwin

LABEL_SMOOTHING = 0.1  # the CNN's loss
MAX_NORM = 1.0  # the CNN's gradient clipping
FEATURES = 64 * 7 * 7  # what the CNN's dropout drops: its flattened features


# --- the data -----------------------------------------------------------------------------------
def add_data_arguments(p: argparse.ArgumentParser) -> None:
    """The dtype and the data-size flags the MNIST examples share."""
    p.add_argument(
        "--dtype",
        choices=("float32", "float64"),
        default="float32",
        help="Floating-point type of the weights and the images.",
    )
    p.add_argument(
        "--limit",
        type=cli.positive_int,
        default=None,
        help="Train on the first LIMIT of the 55,000 training images only. Without it, on all of them.",
    )
    p.add_argument(
        "--eval-limit",
        type=cli.positive_int,
        default=None,
        help="Evaluate on the first EVAL_LIMIT validation and test images only. Without it, on all 5,000 and 10,000.",
    )


def limited_splits(args: argparse.Namespace) -> tuple[Split, Split, Split]:
    """The training, validation and test splits cut to ``--limit`` and ``--eval-limit``."""
    data = load_mnist()
    return (
        Split(data.train.x[: args.limit], data.train.y[: args.limit]),
        Split(data.val.x[: args.eval_limit], data.val.y[: args.eval_limit]),
        Split(data.test.x[: args.eval_limit], data.test.y[: args.eval_limit]),
    )


def images(x: np.ndarray) -> np.ndarray:
    """Rows of 784 pixels as (N, 1, 28, 28) images, the CNN's input."""
    return x.reshape(-1, *CNN_IMAGE)


# --- the networks ---------------------------------------------------------------------------------
def mnist_model(dtype: str = "float32", seed: int = 0) -> nn.Module:
    """The 784-512-256-10 ReLU MLP of examples/mnist.py, initialised from `seed`."""
    ag.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(784, 512, dtype=dtype),
        nn.ReLU(),
        nn.Linear(512, 256, dtype=dtype),
        nn.ReLU(),
        nn.Linear(256, 10, dtype=dtype),
    )


def cnn_model(dtype: str = "float32", seed: int = 0, dropout: float = CNN_DROPOUT) -> nn.Module:
    """The CNN of examples/mnist_cnn.py (`bench.problems.mnist_cnn`) in `dtype`, initialised from
    `seed` (which also starts the stream its dropout masks come from)."""
    ag.manual_seed(seed)
    return mnist_cnn(nn, dropout).to(dtype=getattr(ag, dtype))


def next_dropout_mask(rows: int, p: float, dtype: str) -> np.ndarray:
    """The mask the CNN's dropout layer draws at its next call on `rows` images, as it scales
    it (1/(1-p) where a feature is kept, 0 where dropped): read from the mask stream before
    the step, for a twin to apply the same one."""
    key, counter = mask_stream.get_state()
    keep = mask_stream.bits(np, (rows, FEATURES), key, counter) < mask_stream.threshold(1 - p)
    return keep.astype(dtype) * np.asarray(1 / (1 - p), dtype)


def dropout_masks(seed: int, p: float, dtype: str) -> Callable[[int], np.ndarray]:
    """``masks(n)``: the CNN's next (n, 3136) dropout mask, 1/(1-p) where a feature is kept
    (probability 1 - p, as `nn.Dropout` draws) and 0 where it is dropped."""
    rng = np.random.default_rng([seed, 1])  # a stream of its own: the data order does not move it

    def masks(n: int) -> np.ndarray:
        keep = rng.random((n, FEATURES)) < 1 - p
        return keep.astype(dtype) * np.asarray(1 / (1 - p), dtype)

    return masks


def forward_with_mask(model: Any, x: Any, keep: Any, dropout_type: type) -> Any:
    """`model` (a Sequential, ours or torch's) on `x`, its `dropout_type` layers replaced by
    a multiplication with `keep` (a mask drawn on the host: 0 or 1/(1-p) per feature), so
    that a compiled step and a twin can use the same dropout."""
    for layer in model:
        x = x * keep if isinstance(layer, dropout_type) else layer(x)
    return x


def cnn_twin(model: nn.Module, dtype: str, lr: float, weight_decay: float, total_steps: int) -> TorchTwin:
    """The CNN's PyTorch twin: the same weights and buffers, label smoothing and clipping, and
    torch's own OneCycleLR over the same number of steps (needs torch)."""
    import torch

    from example_support.twin import TorchTwin

    def schedule(opt: torch.optim.Optimizer) -> Any:
        return torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=total_steps)

    return TorchTwin(
        model,
        dtype,
        lr=lr,
        weight_decay=weight_decay,
        label_smoothing=LABEL_SMOOTHING,
        max_norm=MAX_NORM,
        schedule=schedule,
    )


# --- the record -----------------------------------------------------------------------------------
def plot(results: dict, json_path: Path) -> Path:
    """Loss per step, validation accuracy and (with the twin) weight difference per epoch;
    `results` is the JSON record, so a PNG can be redrawn from a saved run."""
    has_twin = bool(results.get("twin_max_weight_diff"))
    fig, axes = plots.figure(3 if has_twin else 2, width=4.5)
    plots.plot_curve(
        axes[0], results["step_losses"], f"training loss ({results['backend']}, {results['dtype']})", log_scale=True
    )
    epochs = np.arange(1, len(results["val_accuracy"]) + 1)
    axes[1].plot(epochs, results["val_accuracy"], "o-")
    axes[1].set(title=f"validation accuracy (test {results['test_accuracy']:.4f})", xlabel="epoch", ylabel="accuracy")
    axes[1].grid(alpha=0.3)
    if has_twin:
        axes[2].plot(epochs, results["twin_max_weight_diff"], "o-")
        plots.log_scale_plain(axes[2].yaxis)
        axes[2].set(title="max |w - w_torch| after each epoch", xlabel="epoch", ylabel="max abs difference")
        axes[2].grid(alpha=0.3)
    for ax in axes[1:]:
        plots.integer_ticks(ax.xaxis)
    return plots.save_figure(fig, json_path)


def write_run(results: dict, args: argparse.Namespace, argv: Sequence[str] | None, start: float, name: str) -> dict:
    """Write an MNIST example's `results` (JSON and plot) where ``--out`` says, named after the
    example `name` and its dtype, and log the test accuracy; returns `results`."""
    out = records.output_path(args, name if args.dtype == "float32" else f"{name}-{args.dtype}")
    plots.draw(plot, results, out)
    records.write_results(out, results, records.command_line(name, argv), time.perf_counter() - start)
    records.log(f"test accuracy {results['test_accuracy']:.4f}; wrote {out}", args.quiet)
    return results
