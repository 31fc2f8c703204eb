"""Fit a line: points on y = 2x + 1, one Linear(1, 1), full-batch SGD on the mean squared
error; w converges to 2 and b to 1.

    AUTOGRAD_BACKEND=torch python examples/line.py --steps 300
    python examples/line.py --quick    # 150 steps: w and b within 1e-4 of 2 and 1

Each run writes its JSON record and PNG to runs/ under the current folder (see --out).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import autograd_core as ag
import backends
import nn
import nn.functional as F
import optim
from example_support import cli, plots, records
from example_support.progress import Progress

NAME = "line"
QUICK = {"steps": 150}


def line_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`n` points on y = 2x + 1 with x uniform in [-1, 1], as float32 columns."""
    x = np.random.default_rng(seed).uniform(-1, 1, (n, 1)).astype(np.float32)
    return x, 2 * x + 1


def fit_line(steps: int = 300, lr: float = 0.1, n: int = 64, seed: int = 0, quiet: bool = True) -> dict:
    """Train Linear(1, 1) on the line; returns the final ``w``, ``b`` and the loss per step."""
    ag.manual_seed(seed)
    x, y = line_data(n, seed)
    model = nn.Linear(1, 1)
    opt = optim.SGD(model.parameters(), lr=lr)
    xt, yt = ag.tensor(x), ag.tensor(y)
    losses = []
    bar = Progress(steps, NAME, enabled=not quiet)
    for _ in range(steps):  # full batch: every step sees all the points
        opt.zero_grad()
        loss = F.mse_loss(model(xt), yt)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        bar.update(loss=losses[-1])
    bar.close()
    return {"w": model.weight.item(), "b": model.bias.item(), "losses": losses, "x": x, "y": y}


def plot(fit: dict, json_path: Path) -> Path:
    """The points with the fitted line, and the loss curve."""
    fig, (ax_fit, ax_loss) = plots.figure(2)
    ax_fit.scatter(fit["x"][:, 0], fit["y"][:, 0], s=8, label="data: y = 2x + 1")
    grid = np.linspace(-1, 1, 2)
    ax_fit.plot(grid, fit["w"] * grid + fit["b"], color="C1", label=f"fit: y = {fit['w']:.4f}x + {fit['b']:.4f}")
    ax_fit.set(title="line fit", xlabel="x", ylabel="y")
    ax_fit.legend()
    plots.plot_curve(ax_loss, fit["losses"], "mean squared error", log_scale=True)
    return plots.save_figure(fig, json_path)


def build_parser() -> argparse.ArgumentParser:
    """The command line of this example."""
    p = cli.parser(NAME, __doc__, QUICK)
    p.add_argument("--steps", type=cli.positive_int, default=300, help="Full-batch SGD steps.")
    p.add_argument("--lr", type=cli.positive_float, default=0.1, help="SGD learning rate.")
    p.add_argument("--points", type=cli.positive_int, default=64, help="Number of points on the line.")
    return p


def run(args: argparse.Namespace, argv: Sequence[str] | None = None) -> dict:
    """Run with the parsed `args` (`argv` is recorded as the command); returns what it wrote to the JSON."""
    start = time.perf_counter()
    fit = fit_line(args.steps, args.lr, args.points, args.seed, args.quiet)
    results = {
        "backend": backends.current().name,
        "steps": args.steps,
        "lr": args.lr,
        "w": fit["w"],
        "b": fit["b"],
        "final_loss": fit["losses"][-1],
        "losses": fit["losses"],
    }
    out = records.output_path(args, NAME)
    plots.draw(plot, fit, out)
    records.write_results(out, results, records.command_line(NAME, argv), time.perf_counter() - start)
    records.log(f"w = {fit['w']:.6f}, b = {fit['b']:.6f} (target 2, 1); wrote {out}", args.quiet)
    return results


def main(argv: Sequence[str] | None = None) -> dict:
    """Run the line fit from the command line `argv`; returns what it wrote to the JSON."""
    return cli.main(build_parser(), run, argv)


if __name__ == "__main__":
    main()
