"""Where the client's memory goes while examples/bigdata.py trains: Python's allocations
(tracemalloc) after step A and after step B, and the allocation sites that grew most between.

    AUTOGRAD_BACKEND=dask AUTOGRAD_DEVICE=local:2 python tools/trace_memory.py --at 150 450 -- \\
        --model mlp --rows 20_000 --chunk-rows 10_000 --persist --quiet --threads 1 --out /tmp/trace.json

bigdata's arguments follow ``--`` (its --steps becomes B). Resident memory that grows while
Python's allocations do not is held below Python's objects (the C allocator's free lists and
fragments, native libraries), not by objects the run keeps. tracemalloc slows the run several
times over and its own records count in the resident memory, not in the allocations.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import tracemalloc
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from example_support.records import ROOT

FRAMES = 12  # frames kept per allocation: enough to reach the project's code from dask's


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--at",
        type=int,
        nargs=2,
        metavar=("A", "B"),
        default=(150, 450),
        help="The steps after which Python's allocations are recorded (1-based, A < B).",
    )
    p.add_argument("--top", type=int, default=8, help="How many of the sites that grew most to print.")
    p.add_argument("bigdata_args", nargs=argparse.REMAINDER, help="-- then examples/bigdata.py's arguments.")
    return p


def load_bigdata() -> ModuleType:
    """examples/bigdata.py, loaded from its file (the examples are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("bigdata", ROOT / "examples" / "bigdata.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def trace(
    first: int, last: int, bigdata_args: Sequence[str], top: int = 8, bigdata: ModuleType | None = None
) -> dict[str, Any]:
    """Train `bigdata` (default: examples/bigdata.py) with `bigdata_args` for `last` steps;
    Python's allocated bytes and the resident memory after steps `first` and `last`, and the
    `top` sites whose allocations grew most."""
    bigdata = bigdata or load_bigdata()
    if not 1 <= first < last:
        raise ValueError(f"--at {first} {last}: need 1 <= A < B")
    snapshots: dict[int, tracemalloc.Snapshot] = {}
    measure = bigdata.rss_bytes  # called by bigdata's loop after every step
    steps_done = [0]

    def measure_and_snapshot() -> int | None:
        steps_done[0] += 1
        if steps_done[0] in (first, last):
            gc.collect()
            snapshots[steps_done[0]] = tracemalloc.take_snapshot().filter_traces(
                [tracemalloc.Filter(False, tracemalloc.__file__)]
            )
        return measure()

    tracemalloc.start(FRAMES)
    bigdata.rss_bytes = measure_and_snapshot
    try:
        record = bigdata.main([*bigdata_args, "--steps", str(last)])
    finally:
        bigdata.rss_bytes = measure
        tracemalloc.stop()
    before, after = snapshots[first], snapshots[last]
    grown = [s for s in after.compare_to(before, "traceback") if s.size_diff > 0][:top]
    rss = record["client_rss_bytes"]
    python_bytes = [sum(t.size for t in snap.traces) for snap in (before, after)]
    return {
        "steps": (first, last),
        "python_bytes": python_bytes,
        "python_growth_bytes_per_step": (python_bytes[1] - python_bytes[0]) / (last - first),
        "rss_bytes": [rss[first - 1], rss[last - 1]],
        "rss_growth_bytes_per_step": (rss[last - 1] - rss[first - 1]) / (last - first),
        "grown": [{"bytes": s.size_diff, "blocks": s.count_diff, "traceback": s.traceback.format()} for s in grown],
    }


def report(result: dict[str, Any]) -> str:
    first, last = result["steps"]

    def mib(pair: list[int]) -> str:
        return f"{pair[0] / 2**20:.1f} -> {pair[1] / 2**20:.1f} MiB"

    lines = [
        f"after step {first} and step {last}:",
        f"  Python's allocations {mib(result['python_bytes'])}, "
        f"{result['python_growth_bytes_per_step']:+,.0f} bytes per step",
        f"  resident memory      {mib(result['rss_bytes'])}, "
        f"{result['rss_growth_bytes_per_step']:+,.0f} bytes per step (with tracemalloc's own records)",
    ]
    for site in result["grown"]:
        lines.append(f"\n+{site['bytes']:,} bytes in {site['blocks']:+,} blocks, allocated at")
        lines.extend(site["traceback"][-8:])
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Trace from the command line `argv`; prints the report and returns what it says."""
    args = build_parser().parse_args(argv)
    rest = args.bigdata_args[1:] if args.bigdata_args[:1] == ["--"] else args.bigdata_args
    result = trace(*args.at, rest, args.top)
    print(report(result))
    return result


if __name__ == "__main__":
    main()
