"""The yardstick for the MNIST twin: how far two PyTorch runs drift apart when only rounding
differs. Both start from the same weights and see the same batches; the second sees each
batch with its rows reversed (the same mathematics, another summation order).

    python tools/twin_control.py --epochs 10
    python tools/twin_control.py --dtype float64 --epochs 3
    python tools/twin_control.py --model cnn --dtype float64 --epochs 1
    python tools/twin_control.py --quick    # one epoch on 8,000 images: the float32 drift after one epoch

Each run writes its JSON record and PNG to runs/ under the current folder (see --out).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bench.problems import CNN_DROPOUT, CNN_LR
from example_support import cli, optional, plots, records
from example_support.data import load_mnist, num_batches, shuffled_batches
from example_support.mnist import cnn_model, cnn_twin, dropout_masks, images, mnist_model
from example_support.progress import Progress

if TYPE_CHECKING:
    from example_support.twin import TorchTwin

NAME = "twin_control"
QUICK = {"epochs": 1, "limit": 8000}


def twins(model: str, dtype: str, seed: int, total_steps: int) -> tuple[TorchTwin, TorchTwin, Callable]:
    """Two torch twins of the `model` example ("mlp": examples/mnist.py, "cnn": examples/mnist_cnn.py,
    with its schedule, smoothing, clipping and dropout masks), and ``inputs(x, n)``: a batch of
    `n` rows in that model's layout with its dropout mask (None for the MLP)."""
    from example_support.twin import TorchTwin

    if model == "mlp":
        source = mnist_model(dtype, seed)  # only the source of the initial weights
        pair = tuple(TorchTwin(source, dtype, lr=1e-3, weight_decay=0.01) for _ in range(2))
        return *pair, lambda x, n: (x, None)
    source = cnn_model(dtype, seed)
    pair = tuple(cnn_twin(source, dtype, CNN_LR, 0.01, total_steps) for _ in range(2))
    masks = dropout_masks(seed, CNN_DROPOUT, dtype)
    return *pair, lambda x, n: (images(x), masks(n))


def drift(
    epochs: int,
    dtype: str,
    limit: int | None = None,
    batch_size: int = 128,
    seed: int = 0,
    quiet: bool = True,
    model: str = "mlp",
) -> list[float]:
    """The largest weight difference between the two torch runs after each epoch."""
    train = load_mnist().train
    x_all, y_all = train.x[:limit], train.y[:limit]
    first, second, inputs = twins(model, dtype, seed, epochs * num_batches(len(y_all), batch_size))
    order = np.random.default_rng(seed)
    diffs = []
    for epoch in range(1, epochs + 1):
        bar = Progress(num_batches(len(y_all), batch_size), f"epoch {epoch}/{epochs}", enabled=not quiet)
        for idx in shuffled_batches(len(y_all), batch_size, order):
            x, keep = inputs(x_all[idx], len(idx))
            loss = first.step(x, y_all[idx], keep)
            rows = np.arange(len(idx))[::-1]  # the same batch and masks, rows reversed
            second.step(x[rows], y_all[idx][rows], None if keep is None else keep[rows])
            bar.update(loss=loss)
        bar.close()
        a, b = first.net.state_dict(), second.net.state_dict()
        diffs.append(max(float((a[k].double() - b[k].double()).abs().max()) for k in a))
        records.log(f"epoch {epoch}: torch vs torch (rows reversed) max |w1 - w2| {diffs[-1]:.3e}", quiet)
    return diffs


def build_parser() -> argparse.ArgumentParser:
    """The command line of this example."""
    p = cli.parser(NAME, __doc__, QUICK, "tools")
    p.add_argument(
        "--model",
        choices=("mlp", "cnn"),
        default="mlp",
        help="The network of examples/mnist.py (mlp, batch 128) or of examples/mnist_cnn.py (cnn, batch 64).",
    )
    p.add_argument("--epochs", type=cli.positive_int, default=10, help="Passes over the training images.")
    p.add_argument(
        "--dtype", choices=("float32", "float64"), default="float32", help="Floating-point type of both runs."
    )
    p.add_argument(
        "--limit",
        type=cli.positive_int,
        default=None,
        help="Train on the first LIMIT of the 55,000 training images only. Without it, on all of them.",
    )
    return p


def plot(diffs: list[float], dtype: str, json_path: Path) -> Path:
    """The weight difference between the two runs after each epoch."""
    fig, (ax,) = plots.figure(1)
    ax.plot(np.arange(1, len(diffs) + 1), diffs, "o-")
    plots.log_scale_plain(ax.yaxis)
    plots.integer_ticks(ax.xaxis)
    ax.set(title=f"torch vs torch, rows reversed ({dtype})", xlabel="epoch", ylabel="max abs weight difference")
    return plots.save_figure(fig, json_path)


def run(args: argparse.Namespace, argv: Sequence[str] | None = None) -> dict:
    """Run with the parsed `args` (`argv` is recorded as the command); returns what it wrote to the JSON."""
    optional.require("torch", "tools/twin_control.py")
    start = time.perf_counter()
    batch_size = 128 if args.model == "mlp" else 64
    diffs = drift(args.epochs, args.dtype, args.limit, batch_size, seed=args.seed, quiet=args.quiet, model=args.model)
    results = {
        "backend": "torch-only",
        "model": args.model,
        "dtype": args.dtype,
        "epochs": args.epochs,
        "control_max_weight_diff": diffs,
    }
    name = NAME if args.model == "mlp" else f"{NAME}-cnn"
    out = records.output_path(args, f"{name}-{args.dtype}", with_backend=False)
    plots.draw(plot, diffs, args.dtype, out)
    records.write_results(out, results, records.command_line(NAME, argv, "tools"), time.perf_counter() - start)
    return results


def main(argv: Sequence[str] | None = None) -> dict:
    """Run the control from the command line `argv`; returns what it wrote to the JSON."""
    return cli.main(build_parser(), run, argv)


if __name__ == "__main__":
    main()
