"""``python -m backends``: which backends work here, their versions and devices, and why the
others do not."""

from __future__ import annotations

import importlib.metadata

import backends

# distribution that carries each built-in library
_DISTRIBUTIONS = {"numpy": "numpy", "array_api_strict": "array-api-strict", "torch": "torch", "jax": "jax",
                  "cupy": "cupy-cuda12x"}


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(_DISTRIBUTIONS.get(name, name))
    except importlib.metadata.PackageNotFoundError:
        return "-"


def main() -> None:
    selected = backends.current().name
    rows = [("backend", "status", "version", "device", "float64", "in place", "notes")]
    for name, reason in backends.available().items():
        if reason is None:
            b = backends.get(name)
            rows.append((name, "available", _version(name), str(b.device or "default"),
                         "yes" if b.supports_float64 else "no", "yes" if b.mutable else "no",
                         "selected" if name == selected else ""))
        else:
            rows.append((name, "unavailable", _version(name), "-", "-", "-", reason))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])
    print("\nchoose one with AUTOGRAD_BACKEND=<name> (and AUTOGRAD_DEVICE=<device>)")


if __name__ == "__main__":
    main()
