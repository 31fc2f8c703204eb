"""XOR: a 2-4-1 network (tanh hidden layer, linear output) trained by full-batch SGD on
the mean squared error against targets -1/1; the predictions round to [-1, 1, 1, -1].

    AUTOGRAD_BACKEND=jax python examples/xor.py
    python examples/xor.py --quick    # 500 steps: the predictions are already [-1, 1, 1, -1]

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
from example_support import cli, evaluation, plots, records
from example_support.progress import Progress

NAME = "xor"
QUICK = {"steps": 500}
INPUTS = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.float32)
TARGETS = np.array([[-1], [1], [1], [-1]], dtype=np.float32)


def xor_model(seed: int = 0) -> nn.Module:
    """Linear(2, 4), tanh, Linear(4, 1), initialised from `seed`."""
    ag.manual_seed(seed)
    return nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))


def train_xor(steps: int = 1000, lr: float = 0.1, seed: int = 0, quiet: bool = True) -> dict:
    """Train the XOR network; returns the model, the loss per step and the rounded predictions."""
    model = xor_model(seed)
    opt = optim.SGD(model.parameters(), lr=lr)
    x, y = ag.tensor(INPUTS), ag.tensor(TARGETS)
    losses = []
    bar = Progress(steps, NAME, enabled=not quiet)
    for _ in range(steps):  # full batch: every step sees the four points
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        bar.update(loss=losses[-1])
    bar.close()
    with ag.no_grad():
        outputs = model(ag.tensor(INPUTS)).numpy()[:, 0]
    return {
        "model": model,
        "losses": losses,
        "outputs": outputs.tolist(),
        "predictions": np.clip(np.round(outputs), -1, 1).astype(int).tolist(),
    }


def plot(outcome: dict, json_path: Path) -> Path:
    """The network's output over the plane with the four points, and the loss curve."""
    fig, (ax_surface, ax_loss) = plots.figure(2)
    gx, gy = np.meshgrid(np.linspace(-0.5, 1.5, 101), np.linspace(-0.5, 1.5, 101))
    grid = np.stack([gx.ravel(), gy.ravel()], axis=1).astype(np.float32)
    surface = evaluation.predict(outcome["model"], grid).reshape(gx.shape)
    image = ax_surface.contourf(gx, gy, surface, levels=np.linspace(-1.5, 1.5, 13), cmap="coolwarm", extend="both")
    fig.colorbar(image, ax=ax_surface)
    ax_surface.scatter(INPUTS[:, 0], INPUTS[:, 1], c=TARGETS[:, 0], cmap="coolwarm", edgecolors="k", s=80)
    ax_surface.set(title="network output over the plane", xlabel="a", ylabel="b")
    plots.plot_curve(ax_loss, outcome["losses"], "mean squared error", log_scale=True)
    return plots.save_figure(fig, json_path)


def build_parser() -> argparse.ArgumentParser:
    """The command line of this example."""
    p = cli.parser(NAME, __doc__, QUICK)
    p.add_argument("--steps", type=cli.positive_int, default=1000, help="Full-batch SGD steps.")
    p.add_argument("--lr", type=cli.positive_float, default=0.1, help="SGD learning rate.")
    return p


def run(args: argparse.Namespace, argv: Sequence[str] | None = None) -> dict:
    """Run with the parsed `args` (`argv` is recorded as the command); returns what it wrote to the JSON."""
    start = time.perf_counter()
    outcome = train_xor(args.steps, args.lr, args.seed, args.quiet)
    results = {
        "backend": backends.current().name,
        "steps": args.steps,
        "lr": args.lr,
        "predictions": outcome["predictions"],
        "outputs": outcome["outputs"],
        "targets": TARGETS[:, 0].tolist(),
        "final_loss": outcome["losses"][-1],
        "losses": outcome["losses"],
    }
    out = records.output_path(args, NAME)
    plots.draw(plot, outcome, out)
    records.write_results(out, results, records.command_line(NAME, argv), time.perf_counter() - start)
    records.log(
        f"predictions {outcome['predictions']} (target [-1, 1, 1, -1]), loss {outcome['losses'][-1]:.2e}; wrote {out}",
        args.quiet,
    )
    return results


def main(argv: Sequence[str] | None = None) -> dict:
    """Run XOR from the command line `argv`; returns what it wrote to the JSON."""
    return cli.main(build_parser(), run, argv)


if __name__ == "__main__":
    main()
