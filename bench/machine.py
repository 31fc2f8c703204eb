"""Facts about the machine and the software a result was measured with."""

from __future__ import annotations

import ast
import datetime
import hashlib
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PROJECT_PACKAGES = ("autograd_core", "backends", "nn", "optim", "bench", "examples", "example_support", "tools")
DISTRIBUTIONS = (
    "autograd-core",
    "numpy",
    "torch",
    "jax",
    "jaxlib",
    "array-api-strict",
    "array-api-compat",
    "cupy-cuda12x",
    "threadpoolctl",
    "matplotlib",
)


def versions() -> dict[str, str | None]:
    """Installed version of each library the bench may use (None if absent), read from the
    package metadata so nothing is imported."""
    found: dict[str, str | None] = {"python": platform.python_version()}
    for name in DISTRIBUTIONS:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (or what the platform module knows)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def blas_info() -> list[dict[str, Any]] | str:
    """threadpoolctl's view of the loaded BLAS and OpenMP libraries (kernel, threads)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    keys = ("user_api", "internal_api", "prefix", "version", "architecture", "threading_layer", "num_threads")
    return [{k: pool.get(k) for k in keys if k in pool} for pool in threadpool_info()]


def git_commit() -> str | None:
    """The checked-out commit of the project (with "+dirty" for local changes outside results/), if known."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
        # the reference runs themselves do not make the code dirty (a remake writes them one after another)
        status = ["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!results"]
        dirty = subprocess.run(status, cwd=ROOT, capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("+dirty" if dirty else "")


def imported_sources() -> list[str]:
    """The project's source files this process has imported (the running script included), as
    paths relative to the repository root. A project module imported from anywhere else (an
    installed copy) is listed by its absolute path, so that a check against this tree fails."""
    found = set()
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path is None or (name.split(".")[0] not in PROJECT_PACKAGES and name != "__main__"):
            continue
        path = Path(path).resolve()
        if path.suffix in (".so", ".pyd"):  # a compiled module counts by its C source
            path = path.with_name(path.name.split(".")[0] + ".c")
        if path.is_relative_to(ROOT):
            found.add(path.relative_to(ROOT).as_posix())
        elif name != "__main__":
            found.add(str(path))
    return sorted(found)


def source_hash(files: Sequence[str], root: Path = ROOT) -> str:
    """sha256 over the names and code of `files` (relative to `root`): the code a result was
    measured with, whatever git knows of it (uncommitted edits included). A Python file counts
    by its syntax tree without docstrings, so comments, docstrings and layout can change
    without making the runs stale; any other file counts byte for byte."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + _code_of(root / name) + b"\0")
    return digest.hexdigest()


def _code_of(path: Path) -> bytes:
    if path.suffix != ".py":
        return path.read_bytes()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree).encode()


def source_facts() -> dict[str, Any]:
    """The files of the project this run imported and their hash; call it at the end of the run,
    when every lazily imported module is in."""
    files = imported_sources()
    return {"files": files, "sha256": source_hash(files)}


def at_start() -> dict[str, Any]:
    """What can be known before the run: versions, CPU, the numpy backend's heap padding, load, time."""
    return {
        "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "versions": versions(),
        "git": git_commit(),
        "numpy_top_pad_mib": os.environ.get("AUTOGRAD_NUMPY_TOP_PAD", "").strip() or None,
        "load_start": load_average(),
    }


def at_end(facts: dict[str, Any]) -> dict[str, Any]:
    """`facts` completed after the run: the load then, and the thread pools that were loaded."""
    facts.update(
        finished=datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        load_end=load_average(),
        blas=blas_info(),
        source=source_facts(),
    )
    return facts
