"""``python -m backends``: which backends work here, their versions and devices, and why the
others do not. The table is printed whatever AUTOGRAD_BACKEND says; a selection that is not a
backend, or one that cannot run here, is named under it and the exit status is 1."""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
from collections.abc import Sequence

import backends

# distribution that carries each built-in library
_DISTRIBUTIONS = {
    "numpy": "numpy",
    "array_api_strict": "array-api-strict",
    "torch": "torch",
    "jax": "jax",
    "cupy": "cupy-cuda12x",
}


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(_DISTRIBUTIONS.get(name, name))
    except importlib.metadata.PackageNotFoundError:
        return "-"


def table(selected: str, device: str | None) -> tuple[list[tuple[str, ...]], str | None]:
    """The rows of the table, and why the selected backend cannot be used (None if it can)."""
    rows = [("backend", "status", "version", "device", "float64", "in place", "notes")]
    problem = None
    for name in backends.known():
        chosen = name == selected
        try:
            b = backends.get(name, device if chosen else None)
        except (backends.BackendUnavailableError, ImportError, RuntimeError, ValueError) as e:
            rows.append(
                (
                    name,
                    "unavailable",
                    _version(name),
                    device or "-" if chosen else "-",
                    "-",
                    "-",
                    ("selected; " if chosen else "") + str(e),
                )
            )
            problem = f"the selected backend {name!r} cannot run here: {e}" if chosen else problem
            continue
        notes = "; ".join(n for n in ("selected" if chosen else "", b.describe()) if n)
        rows.append(
            (
                name,
                "available",
                _version(name),
                str((device if chosen else None) or b.device or "default"),
                "yes" if b.supports_float64 else "no",
                "yes" if b.mutable else "no",
                notes,
            )
        )
    if selected not in backends.known():
        problem = (
            f"AUTOGRAD_BACKEND={os.environ.get('AUTOGRAD_BACKEND', '')!r} is not a backend; "
            f"known: {', '.join(backends.known())} (one name; array-api-strict is accepted)"
        )
    return rows, problem


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table; returns the exit status (1 when the selection cannot be used)."""
    parser = argparse.ArgumentParser(
        prog="python -m backends",
        description="Which backends work here, their versions and devices, and why the others do not.",
        epilog="Select one with AUTOGRAD_BACKEND=<name> (and AUTOGRAD_DEVICE=<device>); "
        "an empty variable counts as unset.",
    )
    parser.parse_args(argv)
    rows, problem = table(*backends.from_environment())
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])
    print("\nchoose one with AUTOGRAD_BACKEND=<name> (and AUTOGRAD_DEVICE=<device>)")
    if problem:
        print(f"python -m backends: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
