"""The PNG: MLP step time against batch size per implementation, the per-op cost, the
character model, the CNN and the phase split (matplotlib with the Agg backend, imported lazily)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.problems import PHASES
from bench.report import Record, impl_order, table_of


def _mlp(ax: Any, records: list[Record]) -> None:
    for impl in impl_order(r for r in records if r["workload"] == "mlp"):
        points = sorted((r["batch"], r["min_ms"]) for r in records if r["workload"] == "mlp" and r["impl"] == impl)
        ax.plot([b for b, _ in points], [t for _, t in points], marker="o", label=impl)
    ax.set(xscale="log", yscale="log", xlabel="batch size", ylabel="ms per step (min)", title="MLP training step")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)


def _bars(ax: Any, records: list[Record], workload: str, scale: float, xlabel: str, title: str,
          log: bool = False) -> None:
    rows = [r for r in records if r["workload"] == workload]
    names = [r["impl"] for r in rows]
    ax.barh(names, [r["min_ms"] * scale for r in rows], label="min")
    ax.plot([r["median_ms"] * scale for r in rows], names, "k|", markersize=12, label="median")
    ax.invert_yaxis()
    ax.set(xlabel=xlabel, title=title, xscale="log" if log else "linear")
    ax.legend(fontsize=7)


def _phases(ax: Any, records: list[Record]) -> None:
    table = table_of(records, "phase")
    names = [impl for impl in impl_order(r for r in records if r["workload"] == "phase") if "total" in table[impl]]
    left = [0.0] * len(names)
    for phase in PHASES:
        widths = [table[impl][phase]["min_ms"] for impl in names]
        ax.barh(names, widths, left=left, label=phase)
        left = [a + b for a, b in zip(left, widths)]
    ax.invert_yaxis()
    batch = next((r["batch"] for r in records if r["workload"] == "phase"), "")
    ax.set(xlabel="ms (min of each phase)", title=f"MLP step by phase, batch {batch}")
    ax.legend(fontsize=7)


def plot(result: dict[str, Any], path: Path) -> str | None:
    """Write the figure of `result` to `path`; returns None, or why no figure was made."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"matplotlib is not installed ({e}); no plot"
    records = result["records"]
    panels = [(w, fn) for w, fn in (
        ("mlp", lambda ax: _mlp(ax, records)),
        ("ops", lambda ax: _bars(ax, records, "ops", 1e3, "µs per op (min)", "per-op cost, 2,000-multiply chain",
                                    log=True)),
        ("char", lambda ax: _bars(ax, records, "char", 1.0, "ms per step (min)", "character model step")),
        ("cnn", lambda ax: _bars(ax, records, "cnn", 1.0, "ms per step (min)", "MNIST CNN step")),
        ("phase", lambda ax: _phases(ax, records)),
    ) if any(r["workload"] == w for r in records)]
    if not panels:
        return "no records to plot"
    columns = min(2, len(panels))
    rows = (len(panels) + 1) // 2
    fig, axes = plt.subplots(rows, columns, figsize=(7 * columns, 4.5 * rows), squeeze=False)
    for ax, (_, draw) in zip(axes.flat, panels):
        draw(ax)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    machine = result["machine"]
    fig.suptitle(f"{machine.get('cpu')}, threads={machine['threads']['threads']}, {machine.get('started')}", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None
