"""Where a run is written and what its JSON record holds: the results, the command that
reproduces the run, its wall time and the machine it ran on (the PNG goes next to the JSON)."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import backends
from bench import machine
from example_support.threads import thread_facts

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "results"  # the committed reference runs: written only with --reference
RUNS_DIR = Path("runs")  # where runs go by default: under the current folder (git-ignored in the repository)
DASK_SETTINGS = ("AUTOGRAD_DASK_CHUNK_ROWS", "AUTOGRAD_DASK_WORKER_MEMORY", "AUTOGRAD_DASK_TIMEOUT")


def output_folder(args: argparse.Namespace) -> Path:
    """The folder a run writes to: that of ``--out``, the repository's results/ with
    ``--reference``, else runs/ under the current folder."""
    if args.out is not None:
        return args.out.parent
    return RESULTS_DIR if args.reference else RUNS_DIR


def output_path(args: argparse.Namespace, name: str, with_backend: bool = True) -> Path:
    """Where the JSON goes: ``--out``, else ``<name>-<backend>.json`` (or ``<name>.json``) in
    the `output_folder`."""
    if args.out is not None:
        return args.out
    stem = f"{name}-{backends.current().name}" if with_backend else name
    return output_folder(args) / f"{stem}.json"


def command_line(script: str, argv: Sequence[str] | None, folder: str = "examples") -> str:
    """The command that reproduces this run of `folder`/`script`.py (the backend's variables
    included: the device and, on dask, the chunk size, worker memory and timeout that were set)."""
    args = sys.argv[1:] if argv is None else list(argv)
    backend = backends.current().name
    settings = ("AUTOGRAD_DEVICE", *(DASK_SETTINGS if backend == "dask" else ()))
    where = [
        f"AUTOGRAD_BACKEND={backend}",
        *(f"{name}={value}" for name in settings if (value := os.environ.get(name, "").strip())),
    ]
    return shlex.join([*where, "python", f"{folder}/{script}.py", *args])


def machine_facts() -> dict[str, Any]:
    """Python and library versions, CPU, core count, load and thread settings of this run, and
    when it finished."""
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
        "finished": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    }


def write_results(path: Path, results: dict[str, Any], command: str, wall_time_s: float) -> Path:
    """Write `results` as JSON at `path`, with the command, the wall time and the machine facts."""
    record = {**results, "command": command, "wall_time_s": round(wall_time_s, 3), "machine": machine_facts()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n")
    return path


def log(message: str, quiet: bool = False) -> None:
    """A line on stderr (results go to the JSON; stdout stays free)."""
    if not quiet:
        print(message, file=sys.stderr, flush=True)
