"""What every example shares: the command line, a progress line, batching, evaluation,
the JSON record (with the command and the machine it ran on) and the PNG next to it."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, TextIO

import numpy as np

import autograd_core as ag
import backends

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "results"


# --- command line ---------------------------------------------------------------------------
def parser(name: str, description: str) -> argparse.ArgumentParser:
    """An argument parser with the options every example takes (--out, --seed, --quiet)."""
    p = argparse.ArgumentParser(
        prog=f"examples/{name}.py", description=description,
        epilog="The backend is chosen by the AUTOGRAD_BACKEND environment variable (default numpy).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--out", type=Path, default=None,
                   help=f"where to write the JSON (the PNG goes next to it); default results/{name}-<backend>.json")
    p.add_argument("--seed", type=int, default=0, help="seed of the initial weights and of the data order")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--threads", type=int, default=None,
                   help="at most THREADS threads in BLAS, OpenMP and torch (default: the libraries' own choice; "
                        "1 is much faster on a machine shared with other work)")
    return p


_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "XLA_FLAGS")


@contextlib.contextmanager
def limited_threads(n: int | None) -> Iterator[None]:
    """Run the block with at most `n` threads in the BLAS/OpenMP pools and in torch (None:
    leave them). Libraries not yet loaded are limited through their environment variables."""
    if n is None:
        yield
        return
    saved = {var: os.environ.get(var) for var in _THREAD_VARIABLES}
    for var in _THREAD_VARIABLES[:3]:
        os.environ[var] = str(n)
    if "jax" not in sys.modules and n == 1:  # XLA reads its flags once, when jax starts
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = f"{flags} --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1".strip()
    torch = sys.modules.get("torch")
    previous = torch.get_num_threads() if torch else None
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with the bench extra
        limiter: Any = contextlib.nullcontext()
    else:
        limiter = threadpool_limits(n)
    try:
        with limiter:
            if torch:
                torch.set_num_threads(n)
            yield
    finally:
        if torch and previous:
            torch.set_num_threads(previous)
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value


def thread_facts() -> dict[str, Any]:
    """The thread settings in force: environment variables, torch's and the BLAS pools'."""
    facts: dict[str, Any] = {k: os.environ.get(k) for k in _THREAD_VARIABLES}
    if "torch" in sys.modules:
        facts["torch"] = sys.modules["torch"].get_num_threads()
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover
        return facts
    facts["blas"] = {f"{i['internal_api']}:{i['prefix']}": i["num_threads"] for i in threadpool_info()}
    return facts


def main(parser: argparse.ArgumentParser, run: Callable[[argparse.Namespace, Sequence[str] | None], dict],
         argv: Sequence[str] | None = None) -> dict:
    """Parse `argv` (default: the command line) and call ``run(args, argv)`` under the thread limit."""
    args = parser.parse_args(argv)
    with limited_threads(args.threads):
        return run(args, argv)


def output_path(out: Path | None, name: str) -> Path:
    """`out`, or ``results/<name>-<backend>.json``."""
    return out if out is not None else RESULTS_DIR / f"{name}-{backends.current().name}.json"


def command_line(script: str, argv: Sequence[str] | None) -> str:
    """The command that reproduces this run (the backend variable included)."""
    args = sys.argv[1:] if argv is None else list(argv)
    return shlex.join([f"AUTOGRAD_BACKEND={backends.current().name}", "python", f"examples/{script}.py", *args])


# --- progress -----------------------------------------------------------------------------
class Progress:
    """A one-line progress bar on stderr: ``desc  120/430 [#####.....] loss 0.4123  52.1 it/s``.

    Redrawn with '\\r' at most ten times a second; `close()` ends the line.
    """

    def __init__(self, total: int, desc: str = "", enabled: bool = True, stream: TextIO | None = None,
                 width: int = 24) -> None:
        self.total, self.desc, self.enabled, self.width = total, desc, enabled, width
        self.stream = stream or sys.stderr
        self.count, self.start, self._drawn = 0, time.perf_counter(), 0.0
        self.info = ""

    def update(self, n: int = 1, **values: float) -> None:
        """Advance by `n` and show `values` (for example ``loss=0.41``)."""
        self.count += n
        if values:
            self.info = "  ".join(f"{k} {v:.4f}" for k, v in values.items())
        now = time.perf_counter()
        if self.enabled and (now - self._drawn > 0.1 or self.count >= self.total):
            self._drawn = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        filled = int(self.width * self.count / max(self.total, 1))
        rate = self.count / max(now - self.start, 1e-9)
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r{self.desc} {self.count:>{len(str(self.total))}}/{self.total} [{bar}] "
                          f"{self.info}  {rate:.1f} it/s ")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._draw(time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()


def full_batch_training(model: Callable[[ag.Tensor], ag.Tensor], opt: Any, loss_fn: Callable, x: np.ndarray,
                        y: np.ndarray, steps: int, desc: str, quiet: bool = True) -> list[float]:
    """`steps` optimizer steps of ``loss_fn(model(x), y)`` on the whole data; the loss per step."""
    xt, yt = ag.tensor(x), ag.tensor(y)
    losses = []
    bar = Progress(steps, desc, enabled=not quiet)
    for _ in range(steps):
        loss = loss_fn(model(xt), yt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        bar.update(loss=losses[-1])
    bar.close()
    return losses


def forward_with_mask(model: Any, x: Any, keep: Any, dropout_type: type) -> Any:
    """`model` (a Sequential, ours or torch's) on `x`, its `dropout_type` layers replaced by
    a multiplication with `keep` (a mask drawn on the host: 0 or 1/(1-p) per feature), so
    that a compiled step and a twin can use the same dropout."""
    for layer in model:
        x = x * keep if isinstance(layer, dropout_type) else layer(x)
    return x


def log(message: str, quiet: bool = False) -> None:
    """A line on stderr (results go to the JSON; stdout stays free)."""
    if not quiet:
        print(message, file=sys.stderr, flush=True)


# --- data order and evaluation ---------------------------------------------------------------
def shuffled_batches(n: int, batch_size: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Indices of one epoch over `n` examples, shuffled by `rng`, in batches of `batch_size`
    (the last one shorter, as a PyTorch DataLoader without drop_last)."""
    order = rng.permutation(n)
    for start in range(0, n, batch_size):
        yield order[start : start + batch_size]


def num_batches(n: int, batch_size: int) -> int:
    return math.ceil(n / batch_size)


def predict(model: Callable[[ag.Tensor], ag.Tensor], x: np.ndarray, dtype: str = "float32",
            batch_size: int = 1024) -> np.ndarray:
    """The model's outputs on the host for the rows of `x`, evaluated without a graph."""
    outs = []
    with ag.no_grad():
        for start in range(0, len(x), batch_size):
            outs.append(model(ag.tensor(x[start : start + batch_size], dtype=dtype)).numpy())
    return np.concatenate(outs)


def accuracy(model: Callable[[ag.Tensor], ag.Tensor], x: np.ndarray, y: np.ndarray, dtype: str = "float32",
             batch_size: int = 1024) -> float:
    """The fraction of rows whose largest output is at the label."""
    return float(np.mean(predict(model, x, dtype, batch_size).argmax(axis=1) == y))


# --- the record of a run ----------------------------------------------------------------------
def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo where there is one)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_commit() -> str | None:
    """The checked-out commit, with ``+dirty`` for uncommitted changes (read-only git calls)."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode:
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def machine_facts() -> dict[str, Any]:
    """Python and library versions, CPU, core count, load and thread settings of this run."""
    backend = backends.current()
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "backend": backend.name,
        "device": str(backend.device),
        "versions": {d: _version(d) for d in ("autograd-core", "numpy", "torch", "jax", "jaxlib",
                                              "array-api-strict", "array-api-compat", "matplotlib")},
        "threads": thread_facts(),
        "git_commit": _git_commit(),
    }


def write_results(path: Path, results: dict[str, Any], command: str, wall_time_s: float) -> Path:
    """Write `results` as JSON at `path`, with the command, the wall time and the machine facts."""
    record = {**results, "command": command, "wall_time_s": round(wall_time_s, 3), "machine": machine_facts()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n")
    return path


# --- plots -------------------------------------------------------------------------------------
def figure(ncols: int = 1, width: float = 5.0, height: float = 4.0) -> tuple[Any, Any]:
    """A matplotlib figure with `ncols` axes side by side, on the Agg (file-only) backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False)
    return fig, axes[0]


def save_figure(fig: Any, json_path: Path) -> Path:
    """Save `fig` as the PNG next to the JSON at `json_path` and close it."""
    import matplotlib.pyplot as plt

    png = json_path.with_suffix(".png")
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


def plot_curve(ax: Any, values: Sequence[float], title: str, ylabel: str = "loss", xlabel: str = "step",
               log_scale: bool = False) -> None:
    """One training curve on `ax`."""
    ax.plot(np.arange(1, len(values) + 1), values, lw=1)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    if log_scale:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)


def plot_regions(ax: Any, predict_class: Callable[[np.ndarray], np.ndarray], x: np.ndarray, y: np.ndarray,
                 title: str, resolution: int = 200) -> None:
    """The decision regions of a 2-D classifier, with the points (x, labels y) on top."""
    pad = 0.1 * (x.max() - x.min())
    lo, hi = x.min(axis=0) - pad, x.max(axis=0) + pad
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], resolution), np.linspace(lo[1], hi[1], resolution))
    grid = np.stack([gx.ravel(), gy.ravel()], axis=1).astype(x.dtype)
    from matplotlib.colors import ListedColormap

    classes = predict_class(grid).reshape(gx.shape)
    n = int(max(classes.max(), y.max())) + 1
    dark = [f"C{i % 10}" for i in range(n)]
    ax.contourf(gx, gy, classes, levels=np.arange(n + 1) - 0.5, cmap=ListedColormap(dark), alpha=0.25)
    ax.scatter(x[:, 0], x[:, 1], c=y, cmap=ListedColormap(dark), vmin=-0.5, vmax=n - 0.5, s=6, edgecolors="none")
    ax.set(title=title, xticks=[], yticks=[])
