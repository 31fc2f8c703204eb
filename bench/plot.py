"""The PNG: MLP step time relative to a baseline against batch size per implementation, the
per-op cost, the character model, the CNN, the phase split and the function transforms
(matplotlib with the Agg backend, imported lazily). The title says whether the run was quick or full, and where."""

from __future__ import annotations

import datetime
import math
from pathlib import Path
from typing import Any

from bench.problems import PHASES, TRANSFORMS
from bench.report import BASELINES_FOR_RATIOS, Record, fmt, impl_order, table_of

MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "<", ">")


def plain_log_axis(axis: Any) -> None:
    """Label the log-scale `axis` (``ax.yaxis``) with plain numbers (0.3, 40, 2000) rather than
    matplotlib's default 4×10¹, on the major and the minor ticks it labels."""
    from matplotlib.ticker import LogFormatter

    class Plain(LogFormatter):  # matplotlib chooses which ticks get a label; this writes it plainly
        def __call__(self, x: float, pos: int | None = None) -> str:
            text = f"{x:g}".replace("e-0", "e-").replace("e+0", "e+")  # 1e-6, not 1e-06
            return text if super().__call__(x, pos) else ""

    axis.set_major_formatter(Plain())
    axis.set_minor_formatter(Plain(labelOnlyBase=False))


def round_ticks(lo: float, hi: float) -> list[float]:
    """Round values within [lo, hi] (lo > 0) for a log axis: 1, 2 and 5 in each decade, or a
    denser series when that gives fewer than three.

    >>> round_ticks(0.4, 30), round_ticks(0.9, 2.5)
    ([0.5, 1.0, 2.0, 5.0, 10.0, 20.0], [1.0, 1.5, 2.0])
    """
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    for mantissas in ((1, 2, 5), (1, 1.5, 2, 3, 5, 7), (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9)):
        ticks = [v for e in decades for m in mantissas if lo <= (v := float(f"{m}e{e}")) <= hi]
        if len(ticks) >= 3:
            break
    return ticks


def _mlp(ax: Any, records: list[Record]) -> None:
    """Step time against batch size, relative to the first baseline measured (numpy-by-hand,
    else torch; absolute where neither ran), one line style and marker per implementation."""
    from matplotlib.ticker import NullLocator

    rows = [r for r in records if r["workload"] == "mlp"]
    ms = {(r["impl"], r["batch"]): r["min_ms"] for r in rows}
    impls = impl_order(rows)
    base = next((b for b in BASELINES_FOR_RATIOS if b in impls), None)
    batches = sorted({r["batch"] for r in rows if base is None or (base, r["batch"]) in ms})
    scale = {b: ms[base, b] if base else 1.0 for b in batches}
    values = []
    for i, impl in enumerate(impls):
        points = [(b, ms[impl, b] / scale[b]) for b in batches if (impl, b) in ms]
        style = (
            {"color": "k", "lw": 2.5, "zorder": 1}
            if impl == base
            else {"marker": MARKERS[i % len(MARKERS)], "ls": "-" if impl.startswith("ours") else "--"}
        )
        ax.plot([b for b, _ in points], [v for _, v in points], label=impl, **style)
        values += [v for _, v in points]
    ax.set(xscale="log", yscale="log", xlabel="batch size" + (f" ({base}: ms per step)" if base else ""))
    ax.set_xticks(batches, [f"{b}\n{fmt(scale[b])}" if base else str(b) for b in batches])
    ticks = round_ticks(min(values) / 1.05, max(values) * 1.05)
    ax.set_yticks(ticks, [f"{t:g}×" if base else f"{t:g}" for t in ticks])
    if base:
        ax.set(ylabel=f"time relative to {base} (min)", title=f"MLP training step against {base} (lower is faster)")
    else:
        ax.set(ylabel="ms per step (min)", title="MLP training step")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_minor_locator(NullLocator())
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.grid(True, alpha=0.3)


def _bars(
    ax: Any, records: list[Record], workload: str, scale: float, xlabel: str, title: str, log: bool = False
) -> None:
    rows = [r for r in records if r["workload"] == workload]
    names = [r["impl"] for r in rows]
    ax.barh(names, [r["min_ms"] * scale for r in rows], label="min")
    ax.plot([r["median_ms"] * scale for r in rows], names, "k|", markersize=12, label="median")
    ax.invert_yaxis()
    ax.set(xlabel=xlabel, title=title, xscale="log" if log else "linear")
    if log:
        plain_log_axis(ax.xaxis)
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


def _transforms(ax: Any, records: list[Record]) -> None:
    """One bar per implementation and transform, side by side (a log axis: the per-sample
    gradients take several times the HVP's time)."""
    table = table_of(records, "transforms")
    names = impl_order(r for r in records if r["workload"] == "transforms")
    height = 0.8 / len(TRANSFORMS)
    for i, phase in enumerate(TRANSFORMS):
        rows = [k for k, impl in enumerate(names) if phase in table[impl]]
        widths = [table[names[k]][phase]["min_ms"] for k in rows]
        ax.barh([k + i * height for k in rows], widths, height, label=phase)
    ax.set_yticks([k + height * (len(TRANSFORMS) - 1) / 2 for k in range(len(names))], names)
    ax.invert_yaxis()
    batch = next(r["batch"] for r in records if r["workload"] == "transforms")
    ax.set(xlabel="ms (min)", xscale="log", title=f"function transforms of the MLP, batch {batch}")
    plain_log_axis(ax.xaxis)
    ax.legend(fontsize=7)


def title(result: dict[str, Any]) -> str:
    """The figure's title: quick or full run, the machine, the thread count, when, the commit."""
    machine = result["machine"]
    mode = result.get("mode", "unknown")
    mode_text = {"full": "full run", "quick": "quick run (short timings: use --full for figures to quote)"}
    when = machine.get("started")
    if when:
        when = datetime.datetime.fromisoformat(when).strftime("%Y-%m-%d %H:%M %Z").strip()
    threads = machine.get("threads", {}).get("threads")
    facts = [
        f"{machine.get('cpu')}, {machine.get('cpu_count')} cores",
        f"{threads} thread{'s' * (threads != 1)}",
        when,
        f"git {machine['git']}" if machine.get("git") else None,
    ]
    return f"bench, {mode_text.get(mode, mode + ' run')}: " + "; ".join(f for f in facts if f)


def figure(result: dict[str, Any]) -> Any:
    """The matplotlib figure of `result` (the run's JSON), one panel per workload measured;
    None when it has no records. Needs matplotlib; uses the Agg (file-only) backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = result["records"]
    panels = [
        draw
        for workload, draw in (
            ("mlp", lambda ax: _mlp(ax, records)),
            (
                "ops",
                lambda ax: _bars(
                    ax, records, "ops", 1e3, "µs per op (min)", "per-op cost, 2,000-multiply chain", log=True
                ),
            ),
            ("char", lambda ax: _bars(ax, records, "char", 1.0, "ms per step (min)", "character model step")),
            ("cnn", lambda ax: _bars(ax, records, "cnn", 1.0, "ms per step (min)", "MNIST CNN step")),
            ("gpt", lambda ax: _bars(ax, records, "gpt", 1.0, "ms per step (min)", "character GPT step")),
            ("phase", lambda ax: _phases(ax, records)),
            ("transforms", lambda ax: _transforms(ax, records)),
        )
        if any(r["workload"] == workload for r in records)
    ]
    if not panels:
        return None
    columns = min(2, len(panels))
    rows = (len(panels) + 1) // 2
    fig, axes = plt.subplots(rows, columns, figsize=(7.5 * columns, 4.5 * rows), squeeze=False)
    for ax, draw in zip(axes.flat, panels):
        draw(ax)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    fig.suptitle(title(result), fontsize=10)
    fig.tight_layout()
    return fig


def plot(result: dict[str, Any], path: Path) -> str | None:
    """Write the figure of `result` to `path`; returns None, or why no figure was made."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"matplotlib is not installed ({e}); no plot"
    fig = figure(result)
    if fig is None:
        return "no records to plot"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None
