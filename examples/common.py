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
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

import autograd_core as ag
import backends
from bench import machine
from bench.plot import plain_log_axis
from bench.progress import Bar

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "results"  # the committed reference runs: written only with --reference
RUNS_DIR = Path("runs")  # where runs go by default: under the current folder (git-ignored in the repository)


# --- command line ---------------------------------------------------------------------------
class UsageError(Exception):
    """A command-line mistake found after parsing (a bad backend, an output folder that cannot
    be made, settings that do not fit together): `main` reports it in one line, exit status 2."""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The description as written, and each flag's default once, after its help (not for
    switches, nor for a default of None: the help says what happens then)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if any(action.default is skip for skip in (None, False, argparse.SUPPRESS)) or "%(default)" in text:
            return text
        return f"{text} (default: %(default)s)"

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)  # a flag stays whole


class Parser(argparse.ArgumentParser):
    """An example's argument parser: a mistake is one line on stderr and exit status 2 (no
    usage block, no traceback), and ``--quick`` applies the example's `quick` settings to the
    flags not given on the command line."""

    def __init__(self, *args: Any, quick: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.quick = quick or {}

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> tuple[Any, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if getattr(parsed, "quick", False) and namespace is None:
            self.set_defaults(**self.quick)  # flags given on the command line still win
            parsed, extras = super().parse_known_args(args, namespace)
        return parsed, extras


def _checked(convert: Callable[[str], Any], test: Callable[[Any], bool], what: str) -> Callable[[str], Any]:
    """An argparse type: `convert`, then refuse a value that fails `test` with "expected `what`"."""

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not test(value):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse


positive_int = _checked(int, lambda v: v > 0, "a positive integer")
natural_int = _checked(int, lambda v: v >= 0, "an integer >= 0")
positive_float = _checked(float, lambda v: 0 < v < math.inf, "a positive number")
natural_float = _checked(float, lambda v: 0 <= v < math.inf, "a number >= 0")
probability = _checked(float, lambda v: 0 <= v < 1, "a probability in [0, 1)")


def quick_text(quick: dict[str, Any]) -> str:
    """The quick settings as command-line flags: ``--steps 100 --eval-limit 4096``."""
    return " ".join(f"--{key.replace('_', '-')} {value}" for key, value in quick.items())


def parser(name: str, description: str, quick: dict[str, Any]) -> Parser:
    """An example's parser, with the flags every example takes (--out, --reference, --quick,
    --seed, --quiet, --threads); `quick` holds the settings of its ``--quick`` run."""
    p = Parser(prog=f"examples/{name}.py", description=description, quick=quick, formatter_class=HelpFormatter,
               epilog="The backend is chosen by the AUTOGRAD_BACKEND environment variable (numpy when unset).")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--out", type=Path, default=None, metavar="PATH",
                       help="Write the JSON record to this .json file, and the PNG next to it. Without --out or "
                            "--reference the run goes to the runs/ folder under the current folder.")
    where.add_argument("--reference", action="store_true",
                       help="Write to the repository's results/ folder, replacing the committed reference run "
                            "(the command recorded in the JSON then includes --reference).")
    p.add_argument("--quick", action="store_true",
                   help=f"Make a short run that finishes in under a minute on numpy: {quick_text(quick)}. "
                        "Flags given on the command line still win.")
    p.add_argument("--seed", type=natural_int, default=0, help="Seed of the initial weights and of the data order.")
    p.add_argument("--quiet", action="store_true", help="Print no progress line and no summary.")
    p.add_argument("--threads", type=positive_int, default=None,
                   help="Use at most THREADS threads in BLAS, OpenMP and torch; 1 is much faster on a machine "
                        "shared with other work. Without it, each library chooses.")
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
    """Parse `argv` (default: the command line), check the backend and the output folder, and
    call ``run(args, argv)`` under the thread limit; a `UsageError` exits with status 2."""
    args = parser.parse_args(argv)
    with limited_threads(args.threads):
        try:
            try:
                backends.current()
            except (ValueError, backends.BackendUnavailableError) as e:
                raise UsageError(f"AUTOGRAD_BACKEND={os.environ.get('AUTOGRAD_BACKEND', '')!r}: {e}") from None
            prepare_output(args)
            return run(args, argv)
        except UsageError as e:
            parser.error(str(e))


def output_folder(args: argparse.Namespace) -> Path:
    """The folder a run writes to: that of ``--out``, the repository's results/ with
    ``--reference``, else runs/ under the current folder."""
    if args.out is not None:
        return args.out.parent
    return RESULTS_DIR if args.reference else RUNS_DIR


def prepare_output(args: argparse.Namespace) -> None:
    """Make the output folder now rather than after the training; a `UsageError` if ``--out``
    is not a .json file or the folder cannot be made or written to."""
    if args.out is not None and args.out.suffix != ".json":
        raise UsageError(f"--out {args.out}: expected a file name ending in .json (the PNG goes next to it)")
    folder = output_folder(args)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create the output folder {folder}: {e.strerror or e}") from None
    if not os.access(folder, os.W_OK):
        raise UsageError(f"cannot write to the output folder {folder}")


def output_path(args: argparse.Namespace, name: str, with_backend: bool = True) -> Path:
    """Where the JSON goes: ``--out``, else ``<name>-<backend>.json`` (or ``<name>.json``) in
    the `output_folder`."""
    if args.out is not None:
        return args.out
    stem = f"{name}-{backends.current().name}" if with_backend else name
    return output_folder(args) / f"{stem}.json"


def command_line(script: str, argv: Sequence[str] | None) -> str:
    """The command that reproduces this run (the backend's variables included: the device and,
    on dask, the chunk size, worker memory and timeout that were set)."""
    args = sys.argv[1:] if argv is None else list(argv)
    backend = backends.current().name
    settings = ("AUTOGRAD_DEVICE", *(DASK_SETTINGS if backend == "dask" else ()))
    where = [f"AUTOGRAD_BACKEND={backend}",
             *(f"{name}={value}" for name in settings if (value := os.environ.get(name, "").strip()))]
    return shlex.join([*where, "python", f"examples/{script}.py", *args])


DASK_SETTINGS = ("AUTOGRAD_DASK_CHUNK_ROWS", "AUTOGRAD_DASK_WORKER_MEMORY", "AUTOGRAD_DASK_TIMEOUT")


# --- progress -----------------------------------------------------------------------------
Progress = Bar  # the training loops' progress: a tqdm bar on a terminal, plain periodic lines elsewhere


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
def machine_facts() -> dict[str, Any]:
    """Python and library versions, CPU, core count, load and thread settings of this run."""
    backend = backends.current()
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": machine.cpu_model(),
        "cpu_count": os.cpu_count(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "backend": backend.name,
        "device": str(backend.device),
        "versions": {k: v for k, v in machine.versions().items() if k != "python"},
        "threads": thread_facts(),
        "git_commit": machine.git_commit(),
        "source": machine.source_facts(),
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
    """One training curve on `ax` (steps from 1, integer ticks; a log scale labelled plainly)."""
    ax.plot(np.arange(1, len(values) + 1), values, lw=1)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    integer_ticks(ax.xaxis)
    if log_scale:
        log_scale_plain(ax.yaxis)
    ax.grid(alpha=0.3)


def integer_ticks(axis: Any) -> None:
    """Ticks at whole numbers only on `axis` (``ax.xaxis``: epochs, steps), even when it spans a
    single epoch (matplotlib's default would tick 0.95, 0.975 ... 1.05)."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1, steps=[1, 2, 5, 10]))


def log_scale_plain(axis: Any) -> None:
    """A log scale on `axis`, labelled with plain numbers (30, 40) rather than 3×10¹, 4×10¹."""
    axis.axes.set(**{f"{axis.axis_name}scale": "log"})
    plain_log_axis(axis)


def legend_outside(ax: Any, fontsize: int = 8) -> None:
    """The legend of `ax` to the right of it, where it covers no line."""
    ax.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def save_curve_figure(fig: Any, ax: Any, json_path: Path) -> Path:
    """Finish a learning-curve figure (steps from 0 on whole-number ticks, so a short run's
    single point still sits on a step axis; a grid; the legend outside) and save it as the PNG
    next to the JSON at `json_path`."""
    ax.set_xlim(left=0)
    integer_ticks(ax.xaxis)
    ax.grid(alpha=0.3)
    legend_outside(ax)
    return save_figure(fig, json_path)


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
