"""MNIST with a convolutional network (batch norm, dropout) under AdamW and a one-cycle schedule.

Two conv-batchnorm-ReLU-maxpool blocks, dropout, a SiLU hidden layer; AdamW under
OneCycleLR (max lr 3e-3), cross-entropy with label smoothing 0.1, gradients clipped to
norm 1, batch 64, on 55,000 images; validation accuracy each epoch (batch norm on its
running statistics, ``model.eval()``), test accuracy at the end.

The network is `bench.problems.mnist_cnn`, which the benchmark times too; its convolutions
have no bias, as usual before batch norm: the norm subtracts any, so a bias's gradient is
zero but for rounding, and Adam would turn that rounding into steps.

On a backend that compiles (jax, torch), the whole training step goes through `ag.compile`
(which traces the learning rate and betas a schedule changes as inputs). The dropout layer
draws its mask inside the compiled step, from the mask stream the step takes as an input and
advances; the stream starts at the seed, so every backend, compiled or not, draws the same masks.

With --torch-twin a PyTorch model starts from the same weights and buffers, sees the same
batches and the same dropout masks (read from the mask stream before each step), and steps
torch.optim.AdamW under torch's OneCycleLR and clip_grad_norm_; the largest difference of the
parameters, and of batch norm's running statistics, is logged after each epoch. (The twin's
batch norm computes its statistics in two passes, see `example_support.twin.TwoPassBatchNorm2d`.)

    AUTOGRAD_BACKEND=numpy python examples/mnist_cnn.py --threads 1
    AUTOGRAD_BACKEND=jax python examples/mnist_cnn.py --threads 1
    AUTOGRAD_BACKEND=numpy python examples/mnist_cnn.py --threads 1 --dtype float64 --epochs 1 --torch-twin
    python examples/mnist_cnn.py --quick    # one epoch on 8,000 images: test accuracy about 0.95

Each run writes its JSON record and PNG to runs/ under the current folder (see --out).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

import numpy as np

import autograd_core as ag
import backends
import nn
import nn.functional as F
import optim
from bench.problems import CNN_DROPOUT
from example_support import cli, evaluation, optional, records
from example_support.data import Split, num_batches, shuffled_batches
from example_support.mnist import (
    LABEL_SMOOTHING,
    MAX_NORM,
    add_data_arguments,
    cnn_model,
    cnn_twin,
    images,
    limited_splits,
    next_dropout_mask,
    write_run,
)
from example_support.progress import Progress

NAME = "mnist_cnn"
QUICK = {"epochs": 1, "limit": 8000, "eval_limit": 2000}
EVAL_BATCH = 500  # divides the 5,000 validation and 10,000 test images: one shape for jax


def training_step(model: nn.Module, opt: optim.Optimizer) -> tuple[Callable[..., ag.Tensor], bool]:
    """``step(x, y) -> loss``: forward (its dropout drawing a new mask), label-smoothed
    cross-entropy, backward, clipping, AdamW; and whether it is compiled (on a backend that
    compiles, the whole step is one `ag.compile` call, which takes the schedule's current
    learning rate and beta1, and the mask stream, as inputs)."""

    def step(x: ag.Tensor, y: ag.Tensor) -> ag.Tensor:
        loss = F.cross_entropy(model(x), y, label_smoothing=LABEL_SMOOTHING)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
        opt.step()
        return loss

    if not backends.current().can_compile:
        return step, False
    return ag.compile(step, modules=[model], optimizers=[opt]), True


def accuracy(model: nn.Module, data: Split, dtype: str) -> float:
    """Accuracy of `model` in evaluation mode (batch norm on its running statistics, no dropout)."""
    model.eval()
    try:
        return evaluation.accuracy(model, images(data.x), data.y, dtype, EVAL_BATCH)
    finally:
        model.train()


def train_cnn(
    train: Split,
    val: Split | None,
    *,
    epochs: int = 4,
    batch_size: int = 64,
    lr: float = 3e-3,
    weight_decay: float = 0.01,
    dtype: str = "float32",
    seed: int = 0,
    torch_twin: bool = False,
    quiet: bool = True,
    dropout: float = CNN_DROPOUT,
) -> dict:
    """Train the network; returns the model, the twin (or None), whether the step was
    compiled and the per-epoch record: ``train_loss`` (mean over the epoch),
    ``val_accuracy``, ``twin_max_weight_diff`` (parameters), ``twin_max_buffer_diff``
    (batch norm's running statistics), per state entry ``twin_weight_diff_by_param``,
    ``twin_max_loss_diff``; and ``step_losses``."""
    model = cnn_model(dtype, seed, dropout)
    opt = optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    total_steps = epochs * num_batches(len(train), batch_size)
    sched = optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=total_steps)
    twin = cnn_twin(model, dtype, lr, weight_decay, total_steps) if torch_twin else None
    step, compiled = training_step(model, opt)
    order = np.random.default_rng(seed)
    record: dict = {
        "train_loss": [],
        "val_accuracy": [],
        "twin_max_weight_diff": [],
        "twin_max_buffer_diff": [],
        "step_losses": [],
        "twin_max_loss_diff": [],
        "twin_weight_diff_by_param": [],
    }
    parameters = {name for name, _ in model.named_parameters()}
    for epoch in range(1, epochs + 1):
        bar = Progress(num_batches(len(train), batch_size), f"epoch {epoch}/{epochs}", enabled=not quiet)
        losses, loss_diff = [], 0.0
        for idx in shuffled_batches(len(train), batch_size, order):
            x, y = train.x[idx], train.y[idx]
            keep = next_dropout_mask(len(idx), dropout, dtype) if twin is not None else None
            loss = step(ag.tensor(images(x), dtype=dtype), ag.tensor(y))
            sched.step()
            losses.append(loss.item())
            if twin is not None:
                loss_diff = max(loss_diff, abs(twin.step(images(x), y, keep) - losses[-1]))
            bar.update(loss=losses[-1])
        bar.close()
        record["train_loss"].append(float(np.mean(losses)))
        record["step_losses"].extend(losses)
        line = f"epoch {epoch}: train loss {record['train_loss'][-1]:.4f}"
        if val is not None:
            record["val_accuracy"].append(accuracy(model, val, dtype))
            line += f", val accuracy {record['val_accuracy'][-1]:.4f}"
        if twin is not None:
            diffs = twin.weight_diffs(model)
            record["twin_weight_diff_by_param"].append(diffs)
            record["twin_max_weight_diff"].append(max(d for k, d in diffs.items() if k in parameters))
            record["twin_max_buffer_diff"].append(max(d for k, d in diffs.items() if k not in parameters))
            record["twin_max_loss_diff"].append(loss_diff)
            line += (
                f", twin max |w - w_torch| {record['twin_max_weight_diff'][-1]:.3e} (running statistics "
                f"{record['twin_max_buffer_diff'][-1]:.3e})"
            )
        records.log(line, quiet)
    return {"model": model, "twin": twin, "compiled": compiled, **record}


def build_parser() -> argparse.ArgumentParser:
    """The command line of this example."""
    p = cli.parser(NAME, __doc__, QUICK)
    p.add_argument("--epochs", type=cli.positive_int, default=4, help="Passes over the training images.")
    p.add_argument("--batch-size", type=cli.positive_int, default=64, help="Images per AdamW step.")
    p.add_argument("--lr", type=cli.positive_float, default=3e-3, help="AdamW's peak learning rate under OneCycleLR.")
    p.add_argument("--weight-decay", type=cli.natural_float, default=0.01, help="AdamW (decoupled) weight decay.")
    add_data_arguments(p)
    p.add_argument(
        "--dropout",
        type=cli.probability,
        default=CNN_DROPOUT,
        help="Probability of dropping a feature before the hidden layer (0: no dropout).",
    )
    p.add_argument(
        "--torch-twin",
        action="store_true",
        help="Train a PyTorch twin from the same weights on the same batches and dropout masks, and log "
        "the largest weight difference after each epoch.",
    )
    return p


def run(args: argparse.Namespace, argv: Sequence[str] | None = None) -> dict:
    """Run with the parsed `args` (`argv` is recorded as the command); returns what it wrote to the JSON."""
    if args.torch_twin:
        optional.require("torch", "--torch-twin")
    start = time.perf_counter()
    train, val, test = limited_splits(args)
    outcome = train_cnn(
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
        dropout=args.dropout,
    )
    train_time = time.perf_counter() - start
    results = {
        "backend": backends.current().name,
        "dtype": args.dtype,
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "lr": args.lr,
        "weight_decay": args.weight_decay,
        "schedule": "OneCycleLR",
        "label_smoothing": LABEL_SMOOTHING,
        "max_grad_norm": MAX_NORM,
        "dropout": args.dropout,
        "compiled": outcome["compiled"],
        "train_size": len(train),
        "val_size": len(val),
        "test_size": len(test),
        "steps": len(outcome["step_losses"]),
        "train_loss": outcome["train_loss"],
        "val_accuracy": outcome["val_accuracy"],
        "test_accuracy": accuracy(outcome["model"], test, args.dtype),
        "train_time_s": round(train_time, 3),
    }
    if outcome["twin"] is not None:
        twin = outcome["twin"]
        results["twin_max_weight_diff"] = outcome["twin_max_weight_diff"]
        results["twin_max_buffer_diff"] = outcome["twin_max_buffer_diff"]
        results["twin_max_loss_diff"] = outcome["twin_max_loss_diff"]
        results["twin_weight_diff_by_param"] = outcome["twin_weight_diff_by_param"]
        predicted = twin.predict(images(test.x), EVAL_BATCH).argmax(axis=1)
        results["twin_test_accuracy"] = float(np.mean(predicted == test.y))
    results["step_losses"] = outcome["step_losses"]
    return write_run(results, args, argv, start, NAME)


def main(argv: Sequence[str] | None = None) -> dict:
    """Run the MNIST CNN example from the command line `argv`; returns what it wrote to the JSON."""
    return cli.main(build_parser(), run, argv)


if __name__ == "__main__":
    main()
