"""Turning records into what people read and keep: the tables, the one-line verdicts, the
JSON and CSV files, and the side-by-side comparison of two saved runs."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from bench.problems import PHASES, PHASES_OF, WORKLOADS

Record = dict[str, Any]

TITLES = {
    "mlp": "mlp: one training step of the 784-512-256-10 ReLU MLP (forward, backward, AdamW), ms",
    "char": "char: one training step of the character model, ms",
    "cnn": "cnn: one training step of the MNIST CNN (conv, batch norm, pooling; forward, backward, AdamW), ms",
    "gpt": "gpt: one training step of nanoGPT's CPU character GPT (4 layers, 12 x 64 characters), ms",
    "ops": "ops: forward + backward of a 2,000-multiply chain on one-element tensors, µs per op",
    "phase": "phase: the MLP step split into its phases, ms",
    "transforms": "transforms: per-sample gradients (vmap of grad through functional_call) and a Hessian-vector "
    "product of the MLP's mean loss, ms; torch is torch.func, jax-jit jax.jit of jax's transforms",
    "fullbatch": "fullbatch: one full-batch AdamW step of the 64-128-1 MLP of examples/bigdata.py over every row, "
    "rows per second (higher is better)",
}
RATE_WORKLOADS = ("fullbatch",)  # shown as rows per second (the batch is the rows of one step), not ms
BASELINES_FOR_RATIOS = ("numpy-by-hand", "torch")
RATIO_BASELINES = {"transforms": ("torch", "jax-jit")}  # the workloads whose ratios are to other baselines
TOTAL = "total"


def fmt(value: float | None) -> str:
    """A time with three significant figures, no exponent for ordinary sizes."""
    if value is None or not math.isfinite(value):
        return "-"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def grid(corner: str, rows: Sequence[str], columns: Sequence[str], cell: Callable[[str, str], str]) -> str:
    """A text table: `rows` down, `columns` across, `cell(row, column)` inside."""
    body = [[corner, *columns], *([row, *(cell(row, c) for c in columns)] for row in rows)]
    widths = [max(len(line[i]) for line in body) for i in range(len(body[0]))]
    lines = [
        "  ".join(text.ljust(w) if i == 0 else text.rjust(w) for i, (text, w) in enumerate(zip(line, widths)))
        for line in body
    ]
    return "\n".join(lines)


def impl_order(records: Iterable[Record]) -> list[str]:
    """Implementations in the order they were measured (ours first, as selected)."""
    return list(dict.fromkeys(r["impl"] for r in records))


def _column(record: Record) -> str:
    if record["workload"] in RATE_WORKLOADS:
        return f"{record['batch']:,} rows"
    if record["workload"] == "ops":
        return f"chain of {record['ops_per_step']}"
    return record["phase"] if record["workload"] in PHASES_OF else f"b={record['batch']}"


def _scale(workload: str) -> float:
    return 1e3 if workload == "ops" else 1.0  # the op chain is shown in µs per op


def table_of(records: Sequence[Record], workload: str) -> dict[str, dict[str, Record]]:
    """impl -> column -> record for `workload`; the phase workload gains a summed total."""
    table: dict[str, dict[str, Record]] = {}
    for r in records:
        if r["workload"] == workload:
            table.setdefault(r["impl"], {})[_column(r)] = r
    if workload == "phase":
        for row in table.values():
            if all(p in row for p in PHASES):
                row[TOTAL] = {
                    **row[PHASES[0]],
                    "phase": TOTAL,
                    "min_ms": sum(row[p]["min_ms"] for p in PHASES),
                    "median_ms": sum(row[p]["median_ms"] for p in PHASES),
                }
    return table


def workload_report(records: Sequence[Record], workload: str) -> str:
    """The min / median table of one workload and its ratios to the hand-written numpy and
    to PyTorch, or to the workload's `RATIO_BASELINES` (ratio of minimums: above 1 is slower
    than the baseline)."""
    table = table_of(records, workload)
    if not table:
        return ""
    rows = impl_order(r for r in records if r["workload"] == workload)
    columns = list(dict.fromkeys(c for row in table.values() for c in row))
    scale = _scale(workload)

    def timing(impl: str, column: str) -> str:
        r = table[impl].get(column)
        if r is None:
            return "-"
        flag = " !" if r.get("check_ok") is False else ""
        if workload in RATE_WORKLOADS:
            return f"{rows_per_s(r, 'min_ms'):,.0f} / {rows_per_s(r, 'median_ms'):,.0f}{flag}"
        return f"{fmt(r['min_ms'] * scale)} / {fmt(r['median_ms'] * scale)}{flag}"

    how = "best / median" if workload in RATE_WORKLOADS else "min / median"
    parts = [f"== {TITLES[workload]}  ({how})", grid("impl", rows, columns, timing)]
    bases = [b for b in RATIO_BASELINES.get(workload, BASELINES_FOR_RATIOS) if b in table]
    if bases:

        def ratios(impl: str, column: str) -> str:
            mine = table[impl].get(column)
            theirs = [table[b].get(column) for b in bases]
            return " | ".join(
                "-" if mine is None or t is None else f"{mine['min_ms'] / t['min_ms']:.2f}" for t in theirs
            )

        parts += [
            f"-- time relative to {' | '.join(bases)} (ratio of minimums; below 1 is faster)",
            grid("impl", rows, columns, ratios),
        ]
    return "\n".join(parts)


def rows_per_s(record: Record, time_key: str = "min_ms") -> float:
    """Rows per second of a record whose batch is the rows of one step."""
    return record["batch"] / (record[time_key] / 1e3)


def _workers(impl: str) -> int:
    """The worker count of a ``...@local:N`` implementation (0 for the others)."""
    return int(impl.rsplit("@local:", 1)[1]) if "@local:" in impl else 0


def rate_summary(records: Sequence[Record], workload: str = "fullbatch") -> list[str]:
    """Per size: each implementation's best rows per second, and the speed-up of each
    ``...@local:N`` cluster over the one-worker cluster."""
    table = table_of(records, workload)
    lines = []
    for column in dict.fromkeys(c for row in table.values() for c in row):
        rates = {impl: rows_per_s(row[column]) for impl, row in table.items() if column in row}
        single = next((rate for impl, rate in rates.items() if _workers(impl) == 1), None)
        parts = [
            f"{impl} {rate:,.0f}" + (f" ({rate / single:.2f}x 1 worker)" if single and _workers(impl) > 1 else "")
            for impl, rate in rates.items()
        ]
        lines.append(f"{workload} at {column}, rows/s: {', '.join(parts)}")
    return lines


def _geometric_mean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def verdicts(records: Sequence[Record]) -> list[str]:
    """One line per workload: which implementation won (lowest minimum; over several batches
    the geometric mean of the minimums) and by how much, with ours:numpy's place."""
    lines = []
    for workload in WORKLOADS:
        if workload in RATE_WORKLOADS:
            lines.extend(rate_summary(records, workload))
            continue
        table = table_of(records, workload)
        columns = [TOTAL] if workload == "phase" else list(dict.fromkeys(c for row in table.values() for c in row))
        eligible = {
            impl: row
            for impl, row in table.items()
            if all(c in row for c in columns) and not any(r.get("check_ok") is False for r in row.values())
        }
        if not eligible:
            continue
        scale = _scale(workload)
        unit = "µs/op" if workload == "ops" else "ms"
        score = {impl: _geometric_mean([row[c]["min_ms"] * scale for c in columns]) for impl, row in eligible.items()}
        ranked = sorted(score, key=score.get)
        winner = ranked[0]
        over = f"geometric mean over {', '.join(columns)}" if len(columns) > 1 else columns[0]
        line = f"{workload}: {winner} wins ({fmt(score[winner])} {unit}, {over})"
        if len(ranked) > 1:
            line += f", {score[ranked[1]] / score[winner]:.2f}x ahead of {ranked[1]}"
        ours = [impl for impl in ranked if impl.startswith("ours:")]
        if ours and ours[0] not in ranked[:2]:
            line += f"; best of ours: {ours[0]} at {score[ours[0]] / score[winner]:.2f}x the winner's time"
        if len(columns) > 1:
            per_point = [f"{c} {min(eligible, key=lambda i, c=c: eligible[i][c]['min_ms'])}" for c in columns]
            line += f" [fastest per point: {', '.join(per_point)}]"
        lines.append(line)
    lines.extend(phase_shares(records))
    return lines


def phase_shares(records: Sequence[Record]) -> list[str]:
    """Where the time goes: each implementation's phase minimums as shares of their sum."""
    lines = []
    for impl, row in table_of(records, "phase").items():
        if TOTAL in row:
            total = row[TOTAL]["min_ms"]
            shares = ", ".join(f"{p} {100 * row[p]['min_ms'] / total:.0f}%" for p in PHASES)
            lines.append(f"  where the time goes, {impl} at b={row[TOTAL]['batch']}: {shares} of {fmt(total)} ms")
    return lines


def text_report(result: dict[str, Any]) -> str:
    """The whole printed report of a saved or fresh result (the JSON payload)."""
    machine = result["machine"]
    records = result["records"]
    head = (
        f"machine: {machine.get('cpu')} ({machine.get('cpu_count')} cores), threads={machine['threads']['threads']}"
        f", load {machine.get('load_start')} -> {machine.get('load_end')}, mode={result['mode']}"
    )
    parts = [head]
    parts += [text for w in WORKLOADS if (text := workload_report(records, w))]
    for s in result.get("skipped", []):
        where = f" at {s['workload']} b={s['batch']}" if s.get("workload") else ""
        parts.append(f"skipped {s['impl']}{where}: {s['reason']}")
    parts += result.get("warnings", [])
    parts += [check_summary(records), cpu_summary(records), warmup_summary(records)]
    parts.append("== verdicts")
    parts += verdicts(records)
    return "\n".join(parts)


def check_summary(records: Sequence[Record]) -> str:
    """One line on the loss cross-check over all points, naming the implementations that had
    nothing to be compared with (alone in drawing their dropout masks) and why."""
    from bench.check import RTOL

    checked = [r for r in records if r.get("check_ok") is not None]
    marked = sorted({f"{r['impl']} at {r['workload']} b={r['batch']}" for r in checked if not r["check_ok"]})
    steps = sorted({r["check_step"] for r in checked if "check_step" in r})
    head = f"loss cross-check (rtol {RTOL:g}, after {'/'.join(map(str, steps)) or '?'} timed steps): "
    alone = {
        f"{r['impl']} at {r['workload']} b={r['batch']} ({r['check_note']})"
        for r in records
        if r.get("check_ok") is None and r.get("check_note")
    }
    unchecked = f"; not checked: {'; '.join(sorted(alone))}" if alone else ""
    if not checked:
        return head + "nothing to compare (one implementation per point)" + unchecked
    if not marked:
        return head + f"every implementation agrees at every point ({len(checked)} records)" + unchecked
    return head + "MISMATCH, marked with '!': " + "; ".join(marked) + unchecked


def cpu_summary(records: Sequence[Record]) -> str:
    """CPU time over wall time per thread, summarised: about 1 when the process computed on the
    threads it was given; below, it waited (other load on the machine, or an asynchronous
    library); above, more threads than asked were busy."""
    first_phase = lambda r: r["phase"] == PHASES_OF.get(r["workload"], ("step",))[0]  # each step's once
    timed = [r for r in records if first_phase(r) and math.isfinite(r["cpu_over_wall"])]
    if not timed:
        return "cpu/wall: no records"
    per_thread = sorted(timed, key=lambda r: r["cpu_over_wall"] / max(r.get("threads") or 1, 1))

    def where(r: Record) -> str:
        return f"{r['cpu_over_wall'] / max(r.get('threads') or 1, 1):.2f} ({r['impl']}, {r['workload']} {_column(r)})"

    middle = per_thread[len(per_thread) // 2]
    return (
        f"cpu/wall per thread: median {where(middle)}, lowest {where(per_thread[0])}, highest "
        f"{where(per_thread[-1])}; below 1: waiting (other load, async libraries), above 1: extra threads"
    )


def warmup_summary(records: Sequence[Record], at_least: float = 1.0) -> str:
    """The warm-ups of `at_least` seconds (compiling: torch.compile, jax.jit, ag.compile), per point."""
    long: dict[str, dict[str, float]] = {}
    for r in records:
        once = r["phase"] == PHASES_OF.get(r["workload"], ("step",))[0]  # a record per phase: each step's once
        if once and r.get("warmup_s", 0.0) >= at_least:
            long.setdefault(f"{r['workload']} b={r['batch']}", {})[r["impl"]] = r["warmup_s"]
    if not long:
        return f"warm-up: none took {at_least:g} s or more"
    points = (f"{point}: " + ", ".join(f"{impl} {s:.1f}" for impl, s in by.items()) for point, by in long.items())
    return f"warm-up of {at_least:g} s or more (compiling included), s: " + "; ".join(points)


# --- files ---------------------------------------------------------------------------------------
def write_json(path: Path, result: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1, default=str) + "\n")


def write_csv(path: Path, records: Sequence[Record]) -> None:
    """The records as CSV, one row each, columns in the order they first appear."""
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = list(dict.fromkeys(k for r in records for k in r))
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(records)


def load(path: str | Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text())


# --- comparing two runs --------------------------------------------------------------------------
def _key(r: Record) -> tuple[str, int, str, str]:
    return r["workload"], r["batch"], r["phase"], r["impl"]


def _describe(name: str, result: dict[str, Any]) -> str:
    m = result["machine"]
    return (
        f"{name}: {m.get('started')} {m.get('cpu')} threads={m['threads']['threads']} mode={result.get('mode')} "
        f"git={m.get('git')} load {m.get('load_start')} -> {m.get('load_end')}"
    )


def compare(a: dict[str, Any], b: dict[str, Any], names: tuple[str, str] = ("A", "B")) -> str:
    """Two runs side by side: every point measured in both, with the ratio B / A of the
    minimums and of the medians, and the machine facts in which they differ."""
    lines = [_describe(f"A = {names[0]}", a), _describe(f"B = {names[1]}", b)]
    for field in ("cpu", "platform", "numpy_top_pad_mib"):
        if a["machine"].get(field) != b["machine"].get(field):
            lines.append(f"differs: {field}: {a['machine'].get(field)!r} vs {b['machine'].get(field)!r}")
    va, vb = a["machine"].get("versions", {}), b["machine"].get("versions", {})
    lines += [
        f"differs: {lib} {va.get(lib)} vs {vb.get(lib)}"
        for lib in sorted(set(va) | set(vb))
        if va.get(lib) != vb.get(lib)
    ]
    index_b = {_key(r): r for r in b["records"]}
    rows, cells = [], {}
    for r in a["records"]:
        other = index_b.get(_key(r))
        if other is None:
            continue
        label = f"{r['workload']} b={r['batch']}" + (f" {r['phase']}" if r["phase"] != "step" else "") + f" {r['impl']}"
        scale = _scale(r["workload"])
        rows.append(label)
        cells[label] = {
            "A min": fmt(r["min_ms"] * scale),
            "B min": fmt(other["min_ms"] * scale),
            "min B/A": f"{other['min_ms'] / r['min_ms']:.2f}",
            "A median": fmt(r["median_ms"] * scale),
            "B median": fmt(other["median_ms"] * scale),
            "median B/A": f"{other['median_ms'] / r['median_ms']:.2f}",
        }
    if not rows:
        return "\n".join([*lines, "no point was measured in both runs"])
    columns = list(next(iter(cells.values())))
    lines.append("(ms per step; µs per op for ops; B/A above 1: B is slower)")
    lines.append(grid("point", rows, columns, lambda row, col: cells[row][col]))
    only = len(a["records"]) - len(rows), len(b["records"]) - len(rows)
    if any(only):
        lines.append(f"not in both: {only[0]} records only in A, {only[1]} only in B")
    return "\n".join(lines)
