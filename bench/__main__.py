"""``python -m bench``: numpy against the alternatives, and where the time goes.

    python -m bench                          # quick run, every available built-in backend but dask
    python -m bench --full                   # the whole sweep
    python -m bench --backends numpy,jax --batches 32,128 --threads 1 --workloads mlp,char,ops
    python -m bench --workloads cnn          # one training step of the MNIST CNN at batch 64
    python -m bench --workloads fullbatch --threads 1   # rows/s of a full-batch step: numpy, dask 1 and 2 workers
    python -m bench --workloads transforms --threads 1  # per-sample gradients and an HVP against torch.func and jax
    python -m bench --workloads gpt --numpy-top-pad 64  # numpy with 64 MiB of heap padding (--compare to a run without)
    python -m bench --compare results/a.json results/b.json
    python -m bench --list                   # the implementations and whether they run here
    python -m bench --full --reference       # the reference run: written to the repository's results/

A run writes its JSON, CSV and PNG to runs/ under the current folder (see --out).
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

# Thread settings must reach the libraries before they are imported: this module parses the
# command line and configures threads first, and imports numpy and the rest after.
from bench import threads

# bench.problems' WORKLOADS and OPT_IN_WORKLOADS again: that module imports numpy, which must wait for threads.configure
WORKLOAD_NAMES = ("mlp", "char", "cnn", "gpt", "ops", "phase", "transforms", "fullbatch")
# transforms (function transforms, not a training step) and fullbatch (minutes, dask clusters) run only when named
DEFAULT_WORKLOADS = WORKLOAD_NAMES[:-2]
BASELINE_NAMES = ("torch", "torch-fused", "torch-compile", "numpy-by-hand", "jax-jit", "hips-autograd", "mygrad")
RESULTS = Path(__file__).resolve().parents[1] / "results"  # the committed reference runs: only with --reference
RUNS = Path("runs")  # where runs go by default: under the current folder (git-ignored in the repository)

# name -> (warmup, min_steps, min_time per implementation in seconds, max_steps)
PRESETS = {
    "quick": (2, 8, 0.5, 150),
    "full": (5, 20, 2.0, 500),
}


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _ints(text: str) -> list[int]:
    try:
        values = [int(v) for v in _names(text)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def _count(minimum: int) -> Any:
    """An argparse type: an integer of at least `minimum`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}")
        return value

    return parse


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {text!r}")
    return value


def _workloads(text: str) -> list[str]:
    names = _names(text)
    unknown = [n for n in names if n not in WORKLOAD_NAMES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown workload(s) {unknown}; choose from {', '.join(WORKLOAD_NAMES)}")
    return names


def _backends(text: str) -> list[str]:
    import backends

    names = [backends.canonical(n) for n in _names(text)]
    unknown = [n for n in names if n not in backends.known()]
    if unknown or not names:
        what = f"unknown backend(s) {unknown}" if unknown else f"no backend in {text!r}"
        raise argparse.ArgumentTypeError(f"{what}; choose from {', '.join(backends.known())}")
    return names


def _baselines(text: str) -> list[str]:
    names = [] if text.strip() == "none" else _names(text)
    unknown = [n for n in names if n not in BASELINE_NAMES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown baseline(s) {unknown}; choose from {', '.join(BASELINE_NAMES)}")
    return names


class _Parser(argparse.ArgumentParser):
    """A mistake on the command line is one line on stderr and exit status 2 (no usage block)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line `argv` (default: sys.argv), checked: a mistake exits with status 2."""
    p = _Parser(prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--full",
        action="store_true",
        help="Run the whole sweep: more warm-up, at least 20 steps and "
        "about 2 s per implementation per point. Without it, a quick run: at least 8 steps, about 0.5 s.",
    )
    p.add_argument(
        "--backends",
        type=_backends,
        help="Our backends to time, comma-separated, e.g. numpy,jax "
        "(default: every built-in one but dask, which builds task graphs; plugins such as cubed and "
        "ndonnx are timed when named; those that cannot run here are skipped with the reason).",
    )
    p.add_argument(
        "--baselines",
        type=_baselines,
        default=list(BASELINE_NAMES),
        help=f"Reference implementations, comma-separated, or 'none' (default: {','.join(BASELINE_NAMES)}).",
    )
    p.add_argument(
        "--workloads",
        type=_workloads,
        default=list(DEFAULT_WORKLOADS),
        help=f"Workloads to time, comma-separated, from {','.join(WORKLOAD_NAMES)} (default: all but "
        "transforms, which times function transforms rather than a training step, and fullbatch, which "
        "takes minutes and starts dask clusters).",
    )
    p.add_argument("--batches", type=_ints, help="MLP batch sizes, comma-separated (default: 1,32,128,512,2048).")
    p.add_argument(
        "--threads",
        type=_count(1),
        default=1,
        help="Threads for BLAS, torch and XLA; a count below the "
        "number of cores also pins the process to that many cores (default: 1).",
    )
    p.add_argument("--no-pin", action="store_true", help="Do not pin the process to --threads cores.")
    p.add_argument(
        "--numpy-top-pad",
        type=_count(0),
        metavar="MIB",
        help="Run the numpy backend with MIB MiB of heap padding (sets AUTOGRAD_NUMPY_TOP_PAD; default: "
        "the environment's, where unset glibc's own). The allocator is the whole process's, so time with and "
        "without it in two runs and --compare them.",
    )
    timing = p.add_argument_group("timing (each overrides the quick or full preset)")
    timing_flags = (
        ("--warmup", _count(0), "Untimed steps before timing"),
        ("--steps", _count(1), "Fewest timed steps per implementation and point"),
        ("--min-time", _seconds, "Seconds of timed steps per implementation and point"),
        ("--max-steps", _count(1), "Most timed steps per implementation and point"),
    )
    for (flag, kind, text), quick, full in zip(timing_flags, PRESETS["quick"], PRESETS["full"]):
        timing.add_argument(flag, type=kind, help=f"{text} (default: {quick}, with --full {full}).")
    p.add_argument("--seed", type=_count(0), default=0, help="Seed of the initial weights and the data (default: 0).")
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--out",
        "--json",
        dest="json",
        type=Path,
        metavar="PATH",
        help="The JSON result file; the CSV and PNG are written next to it (default: "
        "runs/bench-<timestamp>.json under the current folder, also copied to "
        "runs/bench-latest.json).",
    )
    where.add_argument(
        "--reference",
        action="store_true",
        help="Write to the repository's results/ folder "
        "instead of runs/ (results/bench-<timestamp>.json and results/bench-latest.json).",
    )
    p.add_argument("--no-plot", action="store_true", help="Do not draw the PNG.")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Show a live progress bar (default: when stderr is a terminal).",
    )
    p.add_argument(
        "--compare",
        nargs=2,
        type=Path,
        metavar=("A.json", "B.json"),
        help="Print two saved runs side by side and exit.",
    )
    p.add_argument(
        "--list",
        action="store_true",
        help="List the implementations, whether they run here and their workloads, and exit.",
    )
    args = p.parse_args(argv)
    if args.json is not None and args.json.suffix != ".json":
        p.error(f"--out {args.json}: expected a file name ending in .json (the CSV and PNG go next to it)")
    for path in args.compare or ():
        if not path.is_file():
            p.error(f"--compare {path}: no such file")
    if not (args.compare or args.list):
        folder = _output_paths(args)[0].parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            p.error(f"cannot create the output folder {folder}: {e.strerror or e}")
    return args


def _plan(args: argparse.Namespace) -> Any:
    from bench.timing import Plan

    warmup, steps, min_time, max_steps = PRESETS["full" if args.full else "quick"]
    return Plan(
        warmup=warmup if args.warmup is None else args.warmup,
        min_steps=steps if args.steps is None else args.steps,
        min_time=min_time if args.min_time is None else args.min_time,
        max_steps=max(max_steps, args.steps or 0) if args.max_steps is None else args.max_steps,
    )


def _implementations(args: argparse.Namespace) -> list[Any]:
    import backends
    from bench import impls

    default = [n for n in backends.known() if n in backends.BUILTINS and not _lazy(n)]
    names = args.backends if args.backends is not None else default
    return impls.select(names, args.baselines)


def _lazy(name: str) -> bool:
    """Whether backend `name` builds task graphs (dask): per-step timings of small models say
    nothing about it, so it is timed only when named (``--backends dask``, ``--workloads fullbatch``)."""
    import backends

    try:
        return backends.get(name).lazy
    except Exception:  # noqa: BLE001 - an unavailable backend is kept, to be skipped with its reason
        return False


def _output_paths(args: argparse.Namespace) -> tuple[Path, bool]:
    """The JSON path, and whether it is the default one (then also copied to bench-latest)."""
    if args.json is not None:
        return args.json, False
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return (RESULTS if args.reference else RUNS) / f"bench-{stamp}.json", True


def _list(implementations: list[Any]) -> int:
    for impl in implementations:
        reason = impl.unavailable()
        print(
            f"{impl.name:24s} {'ok' if reason is None else 'unavailable: ' + reason}  "
            f"[{', '.join(w for w in WORKLOAD_NAMES if w in impl.workloads)}]"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.compare:
        from bench import report

        a, b = args.compare
        try:
            runs = report.load(a), report.load(b)
        except (OSError, ValueError) as e:
            print(f"python -m bench: error: --compare: cannot read a saved run: {e}", file=sys.stderr)
            return 2
        print(report.compare(*runs, (a.name, b.name)))
        return 0
    thread_setup = threads.configure_environment(args.threads, pin=not args.no_pin)
    if args.numpy_top_pad is not None:  # before the numpy backend is made, which reads it
        os.environ["AUTOGRAD_NUMPY_TOP_PAD"] = str(args.numpy_top_pad)

    from bench import machine, report, runner
    from bench.progress import Progress

    implementations = _implementations(args)
    if args.list:
        return _list(implementations)
    settings = runner.Settings(
        workloads=tuple(args.workloads),
        batches=tuple(args.batches or runner.MLP_BATCHES),
        plan=_plan(args),
        threads=args.threads,
        seed=args.seed,
    )
    facts = machine.at_start()
    started = time.perf_counter()
    progress = Progress(len(settings.points()), live=args.progress)
    outcome = runner.run(settings, implementations, progress)
    facts["threads"] = {**thread_setup, **outcome.thread_limits}
    machine.at_end(facts)
    result = {
        "schema": 1,
        "mode": "full" if args.full else "quick",
        "command": ["python", "-m", "bench", *(sys.argv[1:] if argv is None else argv)],
        "settings": settings.as_dict(),
        "duration_s": round(time.perf_counter() - started, 1),
        "machine": facts,
        "records": outcome.records,
        "skipped": outcome.skipped,
        "warnings": outcome.warnings,
    }
    json_path, default_path = _output_paths(args)
    report.write_json(json_path, result)
    report.write_csv(json_path.with_suffix(".csv"), outcome.records)
    written = [json_path, json_path.with_suffix(".csv")]
    if not args.no_plot:
        from bench.plot import plot

        why_not = plot(result, json_path.with_suffix(".png"))
        if why_not:
            print(f"no plot: {why_not}", file=sys.stderr)
        else:
            written.append(json_path.with_suffix(".png"))
    if default_path:
        latest = json_path.with_name("bench-latest.json")
        shutil.copyfile(json_path, latest)
        written.append(latest)
    print(report.text_report(result))
    print(f"took {result['duration_s']:.0f} s; wrote {', '.join(str(p) for p in written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
