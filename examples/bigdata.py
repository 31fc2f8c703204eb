"""Logistic regression or an MLP trained by full-batch (or large-batch) AdamW on a synthetic
two-class set made lazily where the computation runs: on the dask backend every chunk of rows
is drawn on a worker from its own seed, so the rows never pass through this process.

A fixed random linear "teacher" labels standard-normal inputs (class 1 where its logit is
positive), and a fraction ``--label-noise`` of the labels is flipped. Both students can draw
the teacher's boundary, so the best accuracy any model can reach is ``1 - label_noise``
(90% by default): the ceiling the curves are drawn against.

    AUTOGRAD_BACKEND=dask AUTOGRAD_DEVICE=local:2 python examples/bigdata.py
    AUTOGRAD_BACKEND=dask AUTOGRAD_DEVICE=tcp://127.0.0.1:8786 python examples/bigdata.py --rows 20_000_000
    python examples/bigdata.py --rows 200_000          # numpy: the same rows, drawn on the host
    AUTOGRAD_BACKEND=cubed python examples/bigdata.py --rows 2_000_000   # cubed: host rows, read by its tasks

The same --seed and --chunk-rows give the same rows on numpy, dask's threaded scheduler and
any cluster. With --persist the rows are computed once and kept on the workers (spilled to
their disks beyond their memory limits); without, every step draws them again from the seeds.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import autograd_core as ag
import backends
import nn
import optim
from bench.synthetic import (
    HIDDEN,
    MODELS,
    SyntheticSet,
    build_model,
    computed,
    loss_and_accuracy,
    tensors,
    train_step,
)
from example_support import cli, plots, records
from example_support.progress import Progress

NAME = "bigdata"


def rows_of(step: int, rows: int, batch_rows: int) -> slice:
    """The rows step `step` trains on: all of them (`batch_rows` 0), else the next
    `batch_rows` in order, wrapping around (a last, shorter batch ends each pass).

    >>> rows_of(0, 10, 0), rows_of(1, 10, 4), rows_of(2, 10, 4), rows_of(3, 10, 4)
    (slice(0, 10, None), slice(4, 8, None), slice(8, 10, None), slice(0, 4, None))
    """
    if not batch_rows or batch_rows >= rows:
        return slice(0, rows)
    per_pass = -(-rows // batch_rows)
    start = (step % per_pass) * batch_rows
    return slice(start, min(start + batch_rows, rows))


def evaluate(model: nn.Module, x: ag.Tensor, y: ag.Tensor) -> tuple[float, float]:
    """The loss and accuracy of `model` on (x, y), without a graph, in one pass."""
    with ag.no_grad():
        loss, accuracy = loss_and_accuracy(model, x, y)
    computed(loss, accuracy)
    return loss.item(), accuracy.item()


def train(
    model: nn.Module,
    x: ag.Tensor,
    y: ag.Tensor,
    *,
    steps: int,
    lr: float,
    weight_decay: float = 0.01,
    batch_rows: int = 0,
    quiet: bool = True,
) -> dict[str, list[float]]:
    """`steps` AdamW steps; returns the loss, accuracy and wall seconds of every step, and this
    process's resident memory after it."""
    opt = optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    record: dict[str, list[float]] = {"loss": [], "accuracy": [], "step_s": [], "rss_bytes": []}
    bar = Progress(steps, f"{NAME} {x.shape[0]:,} rows", enabled=not quiet, lines=steps)
    for step in range(steps):
        rows = rows_of(step, x.shape[0], batch_rows)
        start = time.perf_counter()
        loss, accuracy = train_step(model, opt, *((x, y) if rows == slice(0, x.shape[0]) else (x[rows], y[rows])))
        record["step_s"].append(time.perf_counter() - start)
        record["loss"].append(loss)
        record["accuracy"].append(accuracy)
        record["rss_bytes"].append(rss_bytes())
        bar.update(loss=loss, accuracy=accuracy)
    bar.close()
    return record


# --- where it runs -----------------------------------------------------------------------
def cluster_facts(backend: backends.Backend) -> dict[str, Any]:
    """The scheduler, its dashboard and the workers' threads and memory limits (dask with a
    distributed client); the threaded scheduler and eager backends have none."""
    client = getattr(backend, "client", None)
    if client is None:
        return {"scheduler": None, "dashboard": None, "workers": 0}
    info = client.scheduler_info(n_workers=-1)
    workers = info["workers"].values()
    dashboard = client.dashboard_link if "dashboard" in info.get("services", {}) else None  # None: no bokeh there
    return {
        "scheduler": info["address"],
        "dashboard": dashboard,
        "workers": len(workers),
        "threads_per_worker": sorted({w["nthreads"] for w in workers}),
        "worker_memory_limit_bytes": sorted({w["memory_limit"] for w in workers}),
    }


def rss_bytes() -> int | None:
    """This process's resident memory now (Linux's /proc; None where there is none)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return None


def growth_per_step(rss: Sequence[int | None]) -> float | None:
    """Bytes per step by which the resident memory grew over the second half of the steps (a
    least-squares slope; the first half is start-up: imports, caches, the first graphs)."""
    half = [r for r in rss[len(rss) // 2 :] if r is not None]
    return float(np.polyfit(np.arange(len(half)), half, 1)[0]) if len(half) >= 2 else None


def peak_rss_bytes() -> int:
    """This process's peak resident memory so far (Linux reports kibibytes, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


# --- the command line -----------------------------------------------------------------------
QUICK = {"rows": 200_000, "steps": 40}


def _count(text: str) -> int:
    """A row count such as ``20_000_000`` (underscores allowed), at least 0."""
    return cli.natural_int(text.replace("_", ""))


def build_parser() -> argparse.ArgumentParser:
    """The command line of this example."""
    p = cli.parser(NAME, __doc__, QUICK)
    p.add_argument("--rows", type=_count, default=20_000_000, help="Training rows; 20M x 64 float32 is 5 GiB.")
    p.add_argument("--features", type=cli.positive_int, default=64, help="Inputs per row.")
    p.add_argument("--steps", type=cli.positive_int, default=20, help="AdamW steps.")
    p.add_argument(
        "--model",
        choices=MODELS,
        default="logistic",
        help=f"Logistic regression, or an MLP features-{HIDDEN}-1 with a ReLU.",
    )
    p.add_argument("--lr", type=cli.positive_float, default=0.1, help="AdamW learning rate.")
    p.add_argument("--weight-decay", type=cli.natural_float, default=0.01, help="AdamW weight decay.")
    p.add_argument(
        "--batch-rows",
        type=_count,
        default=0,
        help="Rows per step, taken in order, wrapping around; 0 trains on every row (full batch).",
    )
    p.add_argument(
        "--label-noise",
        type=cli.probability,
        default=0.1,
        help="Fraction of the labels flipped; the accuracy ceiling is 1 minus it.",
    )
    p.add_argument(
        "--chunk-rows",
        type=_count,
        default=250_000,
        help="Rows per block of the data: the dask chunk, and part of the data's definition.",
    )
    p.add_argument("--test-rows", type=_count, default=100_000, help="Held-out rows for the final accuracy.")
    p.add_argument(
        "--persist",
        action="store_true",
        help="Compute the rows once and keep them on the workers, instead of drawing them every step.",
    )
    return p


def plot(record: dict[str, list[float]], ceiling: float, title: str, json_path: Path) -> Path:
    """The loss and the accuracy per step, the accuracy against the ceiling."""
    fig, axes = plots.figure(2)
    plots.plot_curve(axes[0], record["loss"], f"{title}: loss", ylabel="binary cross-entropy")
    plots.plot_curve(axes[1], record["accuracy"], f"{title}: accuracy", ylabel="training accuracy")
    axes[1].axhline(ceiling, color="gray", ls="--", lw=1, label=f"ceiling {ceiling:.2f}")
    axes[1].legend()
    return plots.save_figure(fig, json_path)


def run(args: argparse.Namespace, argv: Sequence[str] | None = None) -> dict:
    """Run with the parsed `args` (`argv` is recorded as the command); returns what it wrote to the JSON."""
    start = time.perf_counter()
    backend = backends.current()
    cluster = cluster_facts(backend)
    dashboard = cluster["dashboard"] or (
        "none: the scheduler serves none (pip install bokeh)"
        if cluster["scheduler"]
        else "none: no distributed scheduler"
    )
    records.log(
        f"{backend!r}: scheduler {cluster['scheduler']}, {cluster['workers']} workers; dashboard: {dashboard}",
        args.quiet,
    )
    data = SyntheticSet(args.rows, args.features, args.seed, args.label_noise, args.chunk_rows)
    test = SyntheticSet(args.test_rows, args.features, args.seed, args.label_noise, args.chunk_rows, stream=1)
    x, y = tensors(data, args.persist)
    records.log(
        f"{data.rows:,} rows x {data.features} features ({data.nbytes / 2**30:.2f} GiB) in "
        f"{len(data.chunks())} blocks; {args.model}, accuracy ceiling {data.ceiling:.3f}",
        args.quiet,
    )
    model = build_model(args.model, args.features, seed=args.seed)
    record = train(
        model,
        x,
        y,
        steps=args.steps,
        lr=args.lr,
        weight_decay=args.weight_decay,
        batch_rows=args.batch_rows,
        quiet=args.quiet,
    )
    test_loss, test_accuracy = evaluate(model, *tensors(test))
    wall = time.perf_counter() - start
    rows_per_step = min(args.batch_rows or data.rows, data.rows)
    results = {
        "backend": backend.name,
        "where": repr(backend),
        **cluster,
        "model": args.model,
        "rows": data.rows,
        "features": data.features,
        "data_bytes": data.nbytes,
        "chunk_rows": data.chunk_rows,
        "blocks": len(data.chunks()),
        "persisted": args.persist,
        "batch_rows": args.batch_rows,
        "steps": args.steps,
        "lr": args.lr,
        "weight_decay": args.weight_decay,
        "label_noise": data.label_noise,
        "accuracy_ceiling": data.ceiling,
        "final_loss": record["loss"][-1],
        "final_train_accuracy": record["accuracy"][-1],
        "test_rows": test.rows,
        "test_loss": test_loss,
        "test_accuracy": test_accuracy,
        "median_step_s": float(np.median(record["step_s"])),
        "rows_per_s": rows_per_step / float(np.median(record["step_s"])),
        "client_peak_rss_bytes": peak_rss_bytes(),
        "client_rss_growth_bytes_per_step": growth_per_step(record["rss_bytes"]),
        "losses": record["loss"],
        "accuracies": record["accuracy"],
        "step_seconds": record["step_s"],
        "client_rss_bytes": record["rss_bytes"],
    }
    out = records.output_path(args, NAME)
    plots.draw(plot, record, data.ceiling, f"{args.model}, {data.rows:,} rows", out)
    records.write_results(out, results, records.command_line(NAME, argv), wall)
    records.log(
        f"final loss {results['final_loss']:.4f}, train accuracy {results['final_train_accuracy']:.4f}, "
        f"test accuracy {test_accuracy:.4f} (ceiling {data.ceiling:.3f}); "
        f"{results['rows_per_s']:,.0f} rows/s; client peak RSS "
        f"{results['client_peak_rss_bytes'] / 2**20:.0f} MiB; {wall:.0f} s; wrote {out}",
        args.quiet,
    )
    return results


def main(argv: Sequence[str] | None = None) -> dict:
    """Train from the command line `argv`; returns what it wrote to the JSON."""
    return cli.main(build_parser(), run, argv)


if __name__ == "__main__":
    main()
