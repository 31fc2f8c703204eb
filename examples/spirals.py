"""Three interleaved spirals: a linear-softmax baseline against an MLP(2, 16, 16, 3) with a
linear head, both trained by full-batch Adam on the cross-entropy, on a fixed train/test split.

    AUTOGRAD_BACKEND=numpy python examples/spirals.py --steps 2000
    python examples/spirals.py --quick    # 300 steps at lr 0.03: the MLP above 0.9, the linear model near 0.5

Each run writes its JSON record and PNG to runs/ under the current folder (see --out).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import autograd_core as ag
import backends
import nn
import nn.functional as F
import optim
from example_support import cli, evaluation, plots, records
from example_support.progress import Progress

NAME = "spirals"
CLASSES = 3
QUICK = {"steps": 300, "lr": 0.03}
DATA_SEED = 1234  # the points and the split are fixed; --seed only changes the initial weights


def make_spirals(
    per_class: int = 200, noise: float = 0.25, turns: float = 1.5, seed: int = DATA_SEED
) -> tuple[np.ndarray, np.ndarray]:
    """`per_class` points on each of three interleaved spiral arms of `turns` turns, the angle
    jittered by `noise` radians (float32 xy, int64 labels)."""
    rng = np.random.default_rng(seed)
    radius = np.tile(np.linspace(0.05, 1.0, per_class), CLASSES)
    labels = np.repeat(np.arange(CLASSES), per_class)
    theta = labels * (2 * np.pi / CLASSES) + 2 * np.pi * turns * radius + noise * rng.standard_normal(radius.shape)
    points = np.stack([radius * np.sin(theta), radius * np.cos(theta)], axis=1)
    return points.astype(np.float32), labels.astype(np.int64)


def split(
    x: np.ndarray, y: np.ndarray, test_fraction: float = 0.25, seed: int = DATA_SEED
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A fixed random train/test split: (x_train, y_train, x_test, y_test)."""
    order = np.random.default_rng(seed + 1).permutation(len(y))
    cut = int(round(len(y) * (1 - test_fraction)))
    train, test = order[:cut], order[cut:]
    return x[train], y[train], x[test], y[test]


def linear_model() -> nn.Module:
    return nn.Linear(2, CLASSES)


def mlp_model(hidden: int = 16) -> nn.Module:
    return nn.Sequential(
        nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, CLASSES)
    )


def train(
    model: nn.Module, x: np.ndarray, y: np.ndarray, steps: int, lr: float, desc: str, quiet: bool = True
) -> list[float]:
    """Full-batch Adam on the cross-entropy; returns the loss per step."""
    opt = optim.Adam(model.parameters(), lr=lr)
    xt, yt = ag.tensor(x), ag.tensor(y)
    losses = []
    bar = Progress(steps, desc, enabled=not quiet)
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(xt), yt)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        bar.update(loss=losses[-1])
    bar.close()
    return losses


def run_spirals(steps: int = 2000, lr: float = 0.01, per_class: int = 200, seed: int = 0, quiet: bool = True) -> dict:
    """Train both models on the same split; returns them, their curves and test accuracies."""
    x_train, y_train, x_test, y_test = split(*make_spirals(per_class))
    out: dict = {"data": (x_train, y_train, x_test, y_test)}
    for name, make in (("linear", linear_model), ("mlp", mlp_model)):
        ag.manual_seed(seed)
        model = make()
        losses = train(model, x_train, y_train, steps, lr, f"{NAME} {name}", quiet)
        out[name] = {
            "model": model,
            "losses": losses,
            "train_accuracy": evaluation.accuracy(model, x_train, y_train),
            "test_accuracy": evaluation.accuracy(model, x_test, y_test),
        }
    return out


def plot(outcome: dict, json_path: Path) -> Path:
    """The decision regions of both models, and their training curves against ln 3."""
    x_train, y_train, x_test, y_test = outcome["data"]
    x, y = np.concatenate([x_train, x_test]), np.concatenate([y_train, y_test])
    fig, axes = plots.figure(3, width=4.5)
    for ax, name in zip(axes, ("linear", "mlp")):
        model = outcome[name]["model"]
        plots.plot_regions(
            ax,
            lambda g, m=model: evaluation.predict(m, g).argmax(axis=1),
            x,
            y,
            f"{name}: test accuracy {outcome[name]['test_accuracy']:.3f}",
        )
    for name in ("linear", "mlp"):
        axes[2].plot(outcome[name]["losses"], label=name, lw=1)
    axes[2].axhline(math.log(CLASSES), color="gray", ls="--", lw=1, label="uniform guess, ln 3")
    axes[2].set(title="training cross-entropy", xlabel="step", ylabel="nats")
    plots.log_scale_plain(axes[2].yaxis)
    plots.integer_ticks(axes[2].xaxis)
    axes[2].legend(loc="best")
    return plots.save_figure(fig, json_path)


def build_parser() -> argparse.ArgumentParser:
    """The command line of this example."""
    p = cli.parser(NAME, __doc__, QUICK)
    p.add_argument("--steps", type=cli.positive_int, default=2000, help="Full-batch Adam steps for each model.")
    p.add_argument("--lr", type=cli.positive_float, default=0.01, help="Adam learning rate.")
    p.add_argument(
        "--per-class",
        type=cli.positive_int,
        default=200,
        help="Points per spiral arm; a quarter of them go to the test set.",
    )
    return p


def run(args: argparse.Namespace, argv: Sequence[str] | None = None) -> dict:
    """Run with the parsed `args` (`argv` is recorded as the command); returns what it wrote to the JSON."""
    start = time.perf_counter()
    outcome = run_spirals(args.steps, args.lr, args.per_class, args.seed, args.quiet)
    x_train, _, x_test, _ = outcome["data"]
    results = {
        "backend": backends.current().name,
        "steps": args.steps,
        "lr": args.lr,
        "train_size": len(x_train),
        "test_size": len(x_test),
        "uniform_loss": math.log(CLASSES),
    }
    for name in ("linear", "mlp"):
        r = outcome[name]
        results.update(
            {
                f"{name}_test_accuracy": r["test_accuracy"],
                f"{name}_train_accuracy": r["train_accuracy"],
                f"{name}_final_loss": r["losses"][-1],
            }
        )
    out = records.output_path(args, NAME)
    plots.draw(plot, outcome, out)
    records.write_results(out, results, records.command_line(NAME, argv), time.perf_counter() - start)
    records.log(
        f"test accuracy: linear {results['linear_test_accuracy']:.3f}, mlp {results['mlp_test_accuracy']:.3f}"
        f"; final loss: linear {results['linear_final_loss']:.3f}, mlp {results['mlp_final_loss']:.3f} "
        f"(uniform guess ln 3 = {math.log(CLASSES):.3f}); wrote {out}",
        args.quiet,
    )
    return results


def main(argv: Sequence[str] | None = None) -> dict:
    """Run the spirals comparison from the command line `argv`; returns what it wrote to the JSON."""
    return cli.main(build_parser(), run, argv)


if __name__ == "__main__":
    main()
