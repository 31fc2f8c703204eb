"""MNIST: a 784-512-256-10 ReLU MLP trained with AdamW (lr 1e-3, weight decay 0.01, batch
128) on 55,000 images; validation accuracy each epoch, test accuracy at the end.

With --torch-twin a PyTorch model starts from the same weights, sees the same batches and
steps torch.optim.AdamW; the largest weight difference is logged after each epoch.

The network (`example_support.mnist.mnist_model`) is shared with tools/twin_control.py, the
record and figure of a run with examples/mnist_cnn.py; the training loop is here.

    AUTOGRAD_BACKEND=numpy python examples/mnist.py --torch-twin
    AUTOGRAD_BACKEND=numpy python examples/mnist.py --dtype float64 --epochs 3 --torch-twin
    python examples/mnist.py --quick    # one epoch: test accuracy about 0.97

Each run writes its JSON record and PNG to runs/ under the current folder (see --out).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

import numpy as np

import autograd_core as ag
import backends
import nn.functional as F
import optim
from example_support import cli, evaluation, optional, records
from example_support.data import Split, num_batches, shuffled_batches
from example_support.mnist import add_data_arguments, limited_splits, mnist_model, write_run
from example_support.progress import Progress

NAME = "mnist"
QUICK = {"epochs": 1}


def train_mnist(
    train: Split,
    val: Split | None,
    *,
    epochs: int = 10,
    batch_size: int = 128,
    lr: float = 1e-3,
    weight_decay: float = 0.01,
    dtype: str = "float32",
    seed: int = 0,
    torch_twin: bool = False,
    quiet: bool = True,
) -> dict:
    """Train the MLP; returns the model, the twin (or None) and the per-epoch record:
    ``train_loss`` (mean over the epoch), ``val_accuracy``, ``twin_max_weight_diff`` (and
    per parameter, ``twin_weight_diff_by_param``), ``twin_max_loss_diff``; and ``step_losses``."""
    model = mnist_model(dtype, seed)
    opt = optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    twin = None
    if torch_twin:
        from example_support.twin import TorchTwin

        twin = TorchTwin(model, dtype, lr=lr, weight_decay=weight_decay)
    order = np.random.default_rng(seed)
    record: dict = {
        "train_loss": [],
        "val_accuracy": [],
        "twin_max_weight_diff": [],
        "step_losses": [],
        "twin_max_loss_diff": [],
        "twin_weight_diff_by_param": [],
    }
    for epoch in range(1, epochs + 1):
        bar = Progress(num_batches(len(train), batch_size), f"epoch {epoch}/{epochs}", enabled=not quiet)
        losses, loss_diff = [], 0.0
        for idx in shuffled_batches(len(train), batch_size, order):
            x, y = train.x[idx], train.y[idx]
            loss = F.cross_entropy(model(ag.tensor(x, dtype=dtype)), ag.tensor(y))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if twin is not None:
                loss_diff = max(loss_diff, abs(twin.step(x, y) - losses[-1]))
            bar.update(loss=losses[-1])
        bar.close()
        record["train_loss"].append(float(np.mean(losses)))
        record["step_losses"].extend(losses)
        line = f"epoch {epoch}: train loss {record['train_loss'][-1]:.4f}"
        if val is not None:
            record["val_accuracy"].append(evaluation.accuracy(model, val.x, val.y, dtype, batch_size))
            line += f", val accuracy {record['val_accuracy'][-1]:.4f}"
        if twin is not None:
            diffs = twin.weight_diffs(model)
            record["twin_weight_diff_by_param"].append(diffs)
            record["twin_max_weight_diff"].append(max(diffs.values()))
            record["twin_max_loss_diff"].append(loss_diff)
            line += f", twin max |w - w_torch| {record['twin_max_weight_diff'][-1]:.3e}"
        records.log(line, quiet)
    return {"model": model, "twin": twin, **record}


def build_parser() -> argparse.ArgumentParser:
    """The command line of this example."""
    p = cli.parser(NAME, __doc__, QUICK)
    p.add_argument("--epochs", type=cli.positive_int, default=10, help="Passes over the training images.")
    p.add_argument("--batch-size", type=cli.positive_int, default=128, help="Images per AdamW step.")
    p.add_argument("--lr", type=cli.positive_float, default=1e-3, help="AdamW learning rate.")
    p.add_argument("--weight-decay", type=cli.natural_float, default=0.01, help="AdamW (decoupled) weight decay.")
    add_data_arguments(p)
    p.add_argument(
        "--torch-twin",
        action="store_true",
        help="Train a PyTorch twin from the same weights on the same batches and log the largest weight "
        "difference after each epoch.",
    )
    return p


def run(args: argparse.Namespace, argv: Sequence[str] | None = None) -> dict:
    """Run with the parsed `args` (`argv` is recorded as the command); returns what it wrote to the JSON."""
    if args.torch_twin:
        optional.require("torch", "--torch-twin")
    start = time.perf_counter()
    train, val, test = limited_splits(args)
    outcome = train_mnist(
        train,
        val,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        weight_decay=args.weight_decay,
        dtype=args.dtype,
        seed=args.seed,
        torch_twin=args.torch_twin,
        quiet=args.quiet,
    )
    train_time = time.perf_counter() - start
    results = {
        "backend": backends.current().name,
        "dtype": args.dtype,
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "lr": args.lr,
        "weight_decay": args.weight_decay,
        "train_size": len(train),
        "val_size": len(val),
        "test_size": len(test),
        "steps": len(outcome["step_losses"]),
        "train_loss": outcome["train_loss"],
        "val_accuracy": outcome["val_accuracy"],
        "test_accuracy": evaluation.accuracy(outcome["model"], test.x, test.y, args.dtype, args.batch_size),
        "train_time_s": round(train_time, 3),
    }
    if outcome["twin"] is not None:
        results["twin_max_weight_diff"] = outcome["twin_max_weight_diff"]
        results["twin_max_loss_diff"] = outcome["twin_max_loss_diff"]
        results["twin_weight_diff_by_param"] = outcome["twin_weight_diff_by_param"]
        results["twin_test_accuracy"] = float(np.mean(outcome["twin"].predict(test.x).argmax(axis=1) == test.y))
    results["step_losses"] = outcome["step_losses"]
    return write_run(results, args, argv, start, NAME)


def main(argv: Sequence[str] | None = None) -> dict:
    """Run the MNIST example from the command line `argv`; returns what it wrote to the JSON."""
    return cli.main(build_parser(), run, argv)


if __name__ == "__main__":
    main()
