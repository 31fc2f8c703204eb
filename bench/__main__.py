"""``python -m bench``: numpy against the alternatives, and where the time goes.

    python -m bench                          # quick run (about 2 minutes), every available backend
    python -m bench --full                   # the whole sweep
    python -m bench --backends numpy,jax --batches 32,128 --threads 1 --workloads mlp,char,ops
    python -m bench --workloads cnn          # one training step of the MNIST CNN at batch 64
    python -m bench --compare results/a.json results/b.json
    python -m bench --list                   # the implementations and whether they run here

Thread settings must reach the libraries before they are imported, so this module parses
the command line and configures threads first, and imports numpy and the rest after.
"""

from __future__ import annotations

import argparse
import datetime
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from bench import threads

WORKLOAD_NAMES = ("mlp", "char", "cnn", "gpt", "ops", "phase")
BASELINE_NAMES = ("torch", "torch-fused", "numpy-by-hand", "jax-jit")
RESULTS = Path("results")

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
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown backend(s) {unknown}; choose from {', '.join(backends.known())}")
    return names


def _baselines(text: str) -> list[str]:
    names = [] if text.strip() == "none" else _names(text)
    unknown = [n for n in names if n not in BASELINE_NAMES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown baseline(s) {unknown}; choose from {', '.join(BASELINE_NAMES)}")
    return names


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--full", action="store_true", help="the whole sweep: more warm-up, >= 20 steps and about "
                   "2 s per implementation per point (the quick run: >= 8 steps, about 0.5 s)")
    p.add_argument("--backends", type=_backends, help="our backends to time, e.g. numpy,jax (default: every known "
                   "one; unavailable ones are skipped with the reason)")
    p.add_argument("--baselines", type=_baselines, default=list(BASELINE_NAMES),
                   help=f"reference implementations, or 'none' (default: {','.join(BASELINE_NAMES)})")
    p.add_argument("--workloads", type=_workloads, default=list(WORKLOAD_NAMES),
                   help=f"which of {','.join(WORKLOAD_NAMES)} (default: all)")
    p.add_argument("--batches", type=_ints, help="MLP batch sizes (default: 1,32,128,512,2048)")
    p.add_argument("--threads", type=int, default=1, help="threads for BLAS, torch and XLA (default 1; a count "
                   "below the number of cores also pins the process to that many cores)")
    p.add_argument("--no-pin", action="store_true", help="do not pin the process to --threads cores")
    timing = p.add_argument_group("timing (override the quick or full preset)")
    timing.add_argument("--warmup", type=int, help="untimed steps before timing")
    timing.add_argument("--steps", type=int, help="minimum timed steps per implementation and point")
    timing.add_argument("--min-time", type=float, help="seconds of timed steps per implementation and point")
    timing.add_argument("--max-steps", type=int, help="at most this many timed steps per point")
    p.add_argument("--seed", type=int, default=0, help="seed of the initial weights and data")
    p.add_argument("--json", type=Path, help="result file (default results/bench-<timestamp>.json, also copied to "
                   "results/bench-latest.json); the CSV and PNG are written next to it")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="live progress bar (default: when stderr is a terminal)")
    p.add_argument("--compare", nargs=2, type=Path, metavar=("A.json", "B.json"), help="print two saved runs "
                   "side by side and exit")
    p.add_argument("--list", action="store_true", help="list the implementations and whether they run here")
    args = p.parse_args(argv)
    if args.threads < 1:
        p.error("--threads must be at least 1")
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

    names = args.backends if args.backends is not None else backends.known()
    return impls.select(names, args.baselines)


def _output_paths(args: argparse.Namespace) -> tuple[Path, bool]:
    """The JSON path, and whether it is the default one (then also copied to bench-latest)."""
    if args.json is not None:
        return args.json, False
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return RESULTS / f"bench-{stamp}.json", True


def _list(implementations: list[Any]) -> int:
    for impl in implementations:
        reason = impl.unavailable()
        print(f"{impl.name:24s} {'ok' if reason is None else 'unavailable: ' + reason}  "
              f"[{', '.join(w for w in WORKLOAD_NAMES if w in impl.workloads)}]")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.compare:
        from bench import report

        a, b = args.compare
        print(report.compare(report.load(a), report.load(b), (a.name, b.name)))
        return 0
    thread_setup = threads.configure_environment(args.threads, pin=not args.no_pin)

    from bench import machine, report, runner
    from bench.progress import Progress

    implementations = _implementations(args)
    if args.list:
        return _list(implementations)
    settings = runner.Settings(
        workloads=tuple(args.workloads),
        batches=tuple(args.batches or runner.MLP_BATCHES),
        plan=_plan(args), threads=args.threads, seed=args.seed,
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
        latest = RESULTS / "bench-latest.json"
        shutil.copyfile(json_path, latest)
        written.append(latest)
    print(report.text_report(result))
    print(f"took {result['duration_s']:.0f} s; wrote {', '.join(str(p) for p in written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
