"""The generated figure blocks of the README and the docs, rendered from committed run records.

A block names its renderer and the runs it reads; each renderer here turns those records into
markdown, and every rendering starts by saying which commit and date its runs were measured on
(``provenance``). ``tools/figures.py`` finds the blocks, checks and rewrites them.

    >>> from bench import figures
    >>> print(figures.render("headline", ["results/bench-latest.json"]).splitlines()[0][:20])
    Measured on commit `
"""

from __future__ import annotations

import functools
import json
import subprocess
from collections.abc import Callable, Iterable, Sequence

from bench import example_runs
from bench.impls import baseline as make_baseline
from bench.machine import ROOT
from bench.problems import CHAIN_LENGTH, PHASES, TRANSFORMS, WORKLOADS
from bench.report import TOTAL, fmt, rows_per_s, table_of
from bench.runner import Settings

LABELS = {"torch": "torch (eager)", "ours:jax": "ours:jax (op by op)"}
ORDER = (
    "ours:numpy",
    "ours:torch",
    "ours:jax",
    "ours:jax+compile",
    "ours:torch+compile",
    "ours:array_api_strict",
    "ours:cupy",
    "torch",
    "torch-fused",
    "torch-compile",
    "numpy-by-hand",
    "hips-autograd",
    "mygrad",
    "jax-jit",
)  # ours first, then the baselines


def _load(path: str) -> dict:
    return json.loads((ROOT / path).read_text())


def _label(impl: str) -> str:
    return LABELS.get(impl, impl)


def _ratio(value: float, base: float | None) -> str:
    return "-" if base is None else f"{value / base:.2f}"


# --- provenance ---------------------------------------------------------------------------------------------
@functools.cache
def _commit_date(commit: str) -> str:
    """The day `commit` was made (for records that predate the run's own timestamp)."""
    try:
        day = subprocess.run(
            ["git", "show", "-s", "--format=%cs", commit.removesuffix("+dirty")],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        day = ""
    return day or "date unknown"


def measured_on(record: dict) -> tuple[str, str]:
    """(commit, day) a run record was measured on: the bench's ``git``/``started``, an example's
    ``git_commit``/``finished``; a record without a timestamp takes its commit's day."""
    facts = record.get("machine", {})
    commit = facts.get("git") or facts.get("git_commit") or "unknown"
    stamp = facts.get("finished") or facts.get("started")
    return commit, stamp[:10] if stamp else _commit_date(commit)


def provenance(records: Iterable[dict]) -> str:
    """One sentence naming the commit(s) and day(s) the `records` were measured on."""
    seen = sorted({measured_on(r) for r in records}, key=lambda when: (when[1], when[0]))
    if len(seen) == 1:
        ((commit, day),) = seen
        return f"Measured on commit `{commit}`, {day}."
    return "Measured on commits " + ", ".join(f"`{commit}` ({day})" for commit, day in seen) + "."


# --- the benchmark ---------------------------------------------------------------------------------------
def _table(result: dict, workload: str) -> dict[str, dict[str, dict]]:
    """impl -> column ("b=32", a phase, ...) -> record, as the bench's report has it, ours first
    and then the baselines."""
    rank = {impl: i for i, impl in enumerate(ORDER)}
    table = table_of(result["records"], workload)
    return dict(sorted(table.items(), key=lambda item: rank.get(item[0], len(rank))))


def _single(table: dict[str, dict[str, dict]]) -> dict[str, dict]:
    """impl -> record of a workload measured at one point (one batch size)."""
    return {impl: next(iter(row.values())) for impl, row in table.items()}


def _bench_caption(path: str, result: dict) -> str:
    commit, day = measured_on(result)
    facts = result["machine"]
    start, end = facts["load_start"][0], facts["load_end"][0]
    return (
        f"Measured on commit `{commit}`, {day}, by `{' '.join(result['command'])}` (`{path}`; {facts['cpu']}, "
        f"{facts['cpu_count']} cores, {facts['threads']['threads']} thread, load average {start} at the start "
        f"and {end} at the end)."
    )


def headline(path: str) -> str:
    """The README's table: one training step of each model, minimum ms, and the ratio to torch eager."""
    result = _load(path)
    points = {"MLP b=1": ("mlp", "b=1"), "MLP b=32": ("mlp", "b=32"), "MLP b=128": ("mlp", "b=128")}
    tables = {w: _table(result, w) for w in ("mlp", "cnn", "gpt")}
    points |= {
        name: (w, next(iter(row)))
        for w, name in (("cnn", "MNIST CNN"), ("gpt", "char GPT"))
        if (row := next(iter(tables[w].values()), None))
    }
    impls = [i for i in ORDER if any(i in tables[w] for w, _ in points.values())]

    def cell(impl: str, workload: str, column: str) -> str:
        r, torch = tables[workload].get(impl, {}).get(column), tables[workload].get("torch", {}).get(column)
        if r is None:
            return "-"
        return (
            fmt(r["min_ms"])
            if impl == "torch" or torch is None
            else (f"{fmt(r['min_ms'])} ({_ratio(r['min_ms'], torch['min_ms'])})")
        )

    lines = ["| implementation | " + " | ".join(points) + " |", "|---" * (len(points) + 1) + "|"]
    lines += [f"| {_label(i)} | " + " | ".join(cell(i, w, c) for w, c in points.values()) + " |" for i in impls]
    return "\n".join(
        [
            _bench_caption(path, result),
            "",
            *lines,
            "",
            "Minimum ms per training step (forward, backward, AdamW); in brackets, the ratio to torch "
            "(eager) in the same column.",
        ]
    )


def bench_mlp(path: str) -> str:
    """The MLP step across batches: minimum ms and, in brackets, the ratio to numpy-by-hand."""
    result = _load(path)
    table = _table(result, "mlp")
    columns = list(dict.fromkeys(c for row in table.values() for c in row))
    floor = table.get("numpy-by-hand", {})

    def cell(impl: str, column: str) -> str:
        r = table[impl].get(column)
        if r is None:
            return "-"
        base = floor.get(column)
        return (
            fmt(r["min_ms"])
            if impl == "numpy-by-hand" or base is None
            else (f"{fmt(r['min_ms'])} ({_ratio(r['min_ms'], base['min_ms'])})")
        )

    lines = ["| implementation | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    lines += [f"| {_label(impl)} | " + " | ".join(cell(impl, c) for c in columns) + " |" for impl in table]
    return "\n".join([_bench_caption(path, result), "", *lines, "", _bench_notes(result)])


def _bench_notes(result: dict) -> str:
    """The sentences under the MLP table: ours:torch against torch, the character step, the phase
    split and the per-op cost."""
    mlp, phases = _table(result, "mlp"), _table(result, "phase")
    char, ops = _single(_table(result, "char")), _single(_table(result, "ops"))
    parts = []
    against = {
        "torch": "torch eager (its default single-tensor AdamW)",
        "torch-fused": "torch-fused (the same fused AdamW kernel as ours:torch's)",
    }
    for baseline, name in against.items():
        if "ours:torch" in mlp and baseline in mlp:
            ratios = [_ratio(r["min_ms"], mlp[baseline][c]["min_ms"]) for c, r in mlp["ours:torch"].items()]
            on_char = (
                f", {_ratio(char['ours:torch']['min_ms'], char[baseline]['min_ms'])} on the character model"
                if "ours:torch" in char and baseline in char
                else ""
            )
            parts.append(f"Whole step, ours:torch ÷ {name}: " + ", ".join(ratios) + f" across the batches{on_char}.")
    if all(i in phases and all(p in phases[i] for p in PHASES[:2]) for i in ("ours:torch", "torch")):
        engine = {i: sum(phases[i][p]["min_ms"] for p in PHASES[:2]) for i in ("ours:torch", "torch")}
        parts.append(
            "Our engine over torch's kernels against torch's own autograd, forward plus backward at batch "
            f"{phases['torch'][PHASES[0]]['batch']}: {_ratio(engine['ours:torch'], engine['torch'])}."
        )
    if char:
        parts.append(
            f"Character-model step at batch {next(iter(char.values()))['batch']}, minimum ms: "
            + ", ".join(f"{_label(i)} {fmt(r['min_ms'])}" for i, r in char.items())
            + "."
        )
    split = {i: row for i, row in phases.items() if all(p in row for p in PHASES)}
    if split:
        shares = (f"{_label(i)} " + " / ".join(fmt(row[p]["min_ms"]) for p in PHASES) for i, row in split.items())
        parts.append(
            f"Phase split at batch {next(iter(split.values()))[PHASES[0]]['batch']} (forward / backward / "
            f"optimizer, minimum ms): {', '.join(shares)}."
        )
    if ops:
        us = {i: r["min_ms"] * 1000 for i, r in ops.items()}
        torch = us.get("torch")
        parts.append(
            "Per-op cost (forward plus backward of a 2,000-multiply chain on one-element tensors, minimum "
            "µs per op): "
            + ", ".join(
                f"{_label(i)} {fmt(v)}" + (f" ({v / torch:.2f}x torch)" if torch and i.startswith("ours:") else "")
                for i, v in us.items()
            )
            + "."
        )
    return " ".join(parts)


# the compiled steps against the library's own compiler: (ours, theirs, what theirs is)
COMPILED_PAIRS = (
    ("ours:jax+compile", "jax-jit", "`jax.jit`"),
    ("ours:torch+compile", "torch-compile", "`torch.compile`"),
)


def bench_step(path: str, workload: str) -> str:
    """One workload's step: minimum / median ms and the ratio to torch eager, then each compiled
    step of ours against the library's own compiler of the same step (`COMPILED_PAIRS`)."""
    result = _load(path)
    times = _single(_table(result, workload))
    torch = times.get("torch", {}).get("min_ms")
    lines = ["| implementation | ms per step (min / median) | ÷ torch eager |", "|---|---|---|"]
    lines += [
        f"| {_label(i)} | {fmt(r['min_ms'])} / {fmt(r['median_ms'])} | {_ratio(r['min_ms'], torch)} |"
        for i, r in times.items()
    ]
    text = [_bench_caption(path, result), "", *lines]
    for ours, theirs, compiler in COMPILED_PAIRS:
        if ours in times and theirs in times:
            library = theirs.split("-")[0]
            text += [
                "",
                f"{ours} takes {_ratio(times[ours]['min_ms'], times[theirs]['min_ms'])}x the time of {compiler} "
                f"of the same step written directly in {library} (minimum ms).",
            ]
    return "\n".join(text)


# The speed goals: (implementation, baseline, most it may take as a multiple of the baseline's minimum, points).
# A point is a workload and a column of its table ("b=1", "total" of the phases, "*" its single point, "each
# batch": every MLP batch of the run); None as the points: every workload the baseline runs.
SPEED_GOALS = (
    (
        "ours:torch+compile",
        "torch-compile",
        1.1,
        (("mlp", "b=1"), ("mlp", "b=32"), ("mlp", "b=128"), ("cnn", "*"), ("gpt", "*")),
    ),
    ("ours:torch+compile", "torch", 0.7, (("mlp", "b=1"), ("mlp", "b=32"))),
    ("ours:jax+compile", "jax-jit", 1.05, (("mlp", "each batch"), ("char", "*"), ("cnn", "*"), ("gpt", "*"))),
    ("ours:numpy", "hips-autograd", 0.5, None),
    ("ours:numpy", "mygrad", 0.5, None),
    ("ours:numpy", "torch", 1.0, (("gpt", "*"),)),
)
POINT_NAMES = {"mlp": "MLP", "char": "char", "cnn": "CNN", "gpt": "GPT", "ops": "ops (per op)", "phase": "phase"}


def _goal_points(result: dict, baseline: str, points: Sequence[tuple[str, str]] | None) -> list[tuple[str, str]]:
    """The (workload, column) pairs of one goal in the run `result`: "*" becomes the workload's
    one column, "each batch" every MLP batch; no points: every workload `baseline` runs (the
    MLP at each batch, the phases' total)."""
    if points is None:
        runs = make_baseline(baseline).workloads
        points = [(w, TOTAL if w == "phase" else "*") for w in WORKLOADS if w in runs and w != "mlp"]
        points = [("mlp", "each batch"), *points]
    defaults = dict(Settings().points())
    pairs = []
    for workload, column in points:
        columns = list(dict.fromkeys(c for row in table_of(result["records"], workload).values() for c in row))
        if column == "each batch":
            pairs += [(workload, c) for c in columns or [f"b={b}" for b in Settings().batches]]
        elif column == "*":
            pairs.append((workload, columns[0] if columns else _default_column(workload, defaults)))
        else:
            pairs.append((workload, column))
    return pairs


def _default_column(workload: str, defaults: dict[str, int]) -> str:
    """The column a workload measured at one point has in a run that lacks it."""
    return f"chain of {CHAIN_LENGTH}" if workload == "ops" else f"b={defaults[workload]}"


def goals(path: str) -> str:
    """The speed goals (`SPEED_GOALS`), each the ratio of two implementations' minimum step
    times at one point of the run at `path`, met or missed; a cell whose implementations the run
    lacks says so."""
    return goals_of(_load(path), path)


def goals_of(result: dict, path: str) -> str:
    """`goals` of the run `result` (read from `path`)."""
    tables: dict[str, dict[str, dict[str, dict]]] = {}
    lines = ["| goal | point | ratio of minimums | met |", "|---|---|---|---|"]
    tally = {"met": 0, "missed": 0, "not in this run": 0}
    for impl, base, most, points in SPEED_GOALS:
        for workload, column in _goal_points(result, base, points):
            table = tables.setdefault(workload, table_of(result["records"], workload))
            mine, theirs = table.get(impl, {}).get(column), table.get(base, {}).get(column)
            missing = [i for i, r in ((impl, mine), (base, theirs)) if r is None]
            if missing:
                ratio, verdict = "-", f"not in this run ({', '.join(missing)})"
                tally["not in this run"] += 1
            else:
                value = mine["min_ms"] / theirs["min_ms"]
                ratio, verdict = f"{value:.3f}", "met" if value <= most else "missed"
                tally[verdict] += 1
            where = POINT_NAMES[workload] + ("" if workload == "ops" else f" {column}")
            lines.append(f"| {_label(impl)} ÷ {_label(base)} ≤ {most} | {where} | {ratio} | {verdict} |")
    summary = ", ".join(f"{count} {what}" for what, count in tally.items())
    return "\n".join([_bench_caption(path, result), "", *lines, "", f"Of {sum(tally.values())} goals: {summary}."])


def bench_fullbatch(path: str) -> str:
    """The full-batch step in rows per second, for each implementation and data size."""
    result = _load(path)
    table = table_of(result["records"], "fullbatch")
    columns = list(dict.fromkeys(c for row in table.values() for c in row))
    lines = [
        "| implementation | " + " | ".join(f"{c}: rows/s" for c in columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    lines += [
        f"| {impl} | " + " | ".join(f"{rows_per_s(row[c]):,.0f}" if c in row else "-" for c in columns) + " |"
        for impl, row in table.items()
    ]
    gaps = [
        f"- {s['impl']} at {s['batch']:,} rows: {s['reason']}"
        for s in result.get("skipped", [])
        if s.get("workload") == "fullbatch"
    ]
    return "\n".join(
        [_bench_caption(path, result), "", *lines, *(["", "Where a cell is empty:", "", *gaps] if gaps else [])]
    )


# transforms: (transform, implementation, baseline, most it may take as a multiple of the baseline)
TRANSFORMS_GOALS = (
    ("per_sample", "ours:numpy", "torch", 1.5),
    ("per_sample", "ours:torch", "torch", 1.2),
    ("per_sample", "ours:jax+compile", "jax-jit", 1.2),
    ("hvp", "ours:numpy", "torch", 1.5),
)
TRANSFORMS_NAMES = {"per_sample": "per-sample gradients", "hvp": "HVP", "torch": "torch.func", "jax-jit": "jax-jit"}


def bench_transforms(path: str) -> str:
    """The transforms' goals with the ratios measured (minimum / median, side by side in one
    run), then each implementation's times and ratios to torch.func and jax.jit."""
    result = _load(path)
    table = _table(result, "transforms")

    def ratios(impl: str, phase: str, base: str) -> str:
        mine, theirs = table.get(impl, {}).get(phase), table.get(base, {}).get(phase)
        if mine is None or theirs is None:
            return "-"
        return f"{_ratio(mine['min_ms'], theirs['min_ms'])} / {_ratio(mine['median_ms'], theirs['median_ms'])}"

    def met(impl: str, phase: str, base: str, most: float) -> str:
        mine, theirs = table.get(impl, {}).get(phase), table.get(base, {}).get(phase)
        if mine is None or theirs is None:
            return "not measured"
        return "yes" if mine["min_ms"] / theirs["min_ms"] <= most else "no"

    goals = ["| goal | ratio (min / median) | met (by the minimums) |", "|---|---|---|"]
    goals += [
        f"| {TRANSFORMS_NAMES[phase]}: {impl} ≤ {most}x {TRANSFORMS_NAMES[base]} | {ratios(impl, phase, base)} | "
        f"{met(impl, phase, base, most)} |"
        for phase, impl, base, most in TRANSFORMS_GOALS
    ]
    bases = ("torch", "jax-jit")
    header = [f"{TRANSFORMS_NAMES[phase]}, ms (min / median)" for phase in TRANSFORMS] + [
        f"{TRANSFORMS_NAMES[phase]} ÷ {TRANSFORMS_NAMES[base]}" for phase in TRANSFORMS for base in bases
    ]
    times = ["| implementation | " + " | ".join(header) + " |", "|---" * (len(header) + 1) + "|"]
    for impl, row in table.items():
        cells = [f"{fmt(row[p]['min_ms'])} / {fmt(row[p]['median_ms'])}" if p in row else "-" for p in TRANSFORMS]
        cells += [ratios(impl, phase, base) for phase in TRANSFORMS for base in bases]
        label = "torch (torch.func)" if impl == "torch" else _label(impl)
        times.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join([_bench_caption(path, result), "", *goals, "", *times])


def bigdata(path: str) -> str:
    """The reference run of examples/bigdata.py in one sentence."""
    r = _load(path)
    (limit,) = r["worker_memory_limit_bytes"]
    return (
        f"{provenance([r])} The reference run (`{r['command']}`, `{path}`): {r['rows']:,} x {r['features']} "
        f"float32 ({r['data_bytes'] / 1e9:.1f} GB with labels) on {r['workers']} workers of {limit / 2**30:g} GiB "
        f"each, {r['steps']} steps of a {r['model']} model: test accuracy {r['test_accuracy']:.3f} (ceiling "
        f"{r['accuracy_ceiling']:.2f}), {r['rows_per_s']:,.0f} rows/s ({r['median_step_s']:.0f} s per full pass), "
        f"the client's peak memory {r['client_peak_rss_bytes'] / 2**20:.0f} MiB: the rows never reach it. Load "
        f"average at the end: {r['machine']['load_average'][0]:.1f}."
    )


# --- the examples' full runs -------------------------------------------------------------------------------
def _runs(folder: str) -> dict[str, dict[str, dict]]:
    return example_runs.load_runs(ROOT / folder)


def _of(runs: dict[str, dict[str, dict]], names: Sequence[str]) -> list[dict]:
    """The records of `runs` (backend -> name -> record) whose name is in `names`."""
    return [record for by_name in runs.values() for name, record in by_name.items() if name in names]


def examples_mlp(folder: str) -> str:
    """The MLP examples' table of results/README.md (MNIST, its twins, the character model)."""
    runs = _runs(folder)
    return "\n\n".join(
        [
            provenance(_of(runs, ("mnist", "mnist-float64", "char", "spirals", "xor"))),
            example_runs.table(runs),
            example_runs.control_line(ROOT / folder),
        ]
    )


def examples_cnn(folder: str) -> str:
    """The CNN's table of results/README.md, with the twins' yardstick."""
    runs = _runs(folder)
    return "\n\n".join(
        [
            provenance(_of(runs, ("mnist_cnn", "mnist_cnn-float64"))),
            example_runs.cnn_table(runs),
            example_runs.control_line(ROOT / folder, "cnn"),
        ]
    )


def examples_sequence(folder: str) -> str:
    """The GPT and LSTM table of results/README.md."""
    runs = _runs(folder)
    return "\n\n".join([provenance(_of(runs, ("gpt", "gpt-float64", "lstm_char"))), example_runs.sequence_table(runs)])


def sequence_models(char: str, lstm: str, gpt: str) -> str:
    """The three character models side by side, and nanoGPT's own figure."""
    rows = [
        ("MLP over 16 characters (`char.py`)", _load(char), "characters 17 on"),
        ("LSTM, 2 x 256 (`lstm_char.py`)", _load(lstm), "characters 17 on, state carried"),
        ("GPT, nanoGPT's CPU recipe (`gpt.py`)", _load(gpt), "every position of 64-character blocks"),
    ]
    lines = ["| model (example) | validation nats/char | scored on | steps | wall time s | run |", "|---" * 6 + "|"]
    for (name, r, scored), path in zip(rows, (char, lstm, gpt)):
        steps = r.get("steps", r.get("iters"))
        lines.append(f"| {name} | {r['val_nats']:.3f} | {scored} | {steps:,} | {r['wall_time_s']:.0f} | `{path}` |")
    lines.append("| nanoGPT's README, same recipe | 1.88 | 20 random batches of 12 blocks | 2,000 | | |")
    return "\n".join([provenance(r for _, r, _ in rows), "", *lines])


def _epochs(r: dict) -> str:
    return f"{r['epochs']} epoch" + "s" * (r["epochs"] != 1)


QUICK = {  # example -> (where it is, what it trains, what its --quick run shows)
    "line": (
        "examples",
        "a line fit by SGD",
        lambda r: f"{r['steps']} steps: w = {r['w']:.5f}, b = {r['b']:.6f} (truth 2, 1)",
    ),
    "xor": ("examples", "a 2-4-1 tanh network on XOR", lambda r: f"{r['steps']} steps: predictions {r['predictions']}"),
    "spirals": (
        "examples",
        "an MLP against a linear model on two spirals",
        lambda r: (
            f"{r['steps']} steps: test accuracy {r['mlp_test_accuracy']:.3f} against {r['linear_test_accuracy']:.3f}"
        ),
    ),
    "mnist": (
        "examples",
        "the 784-512-256-10 MLP, AdamW, 10 epochs",
        lambda r: f"{_epochs(r)} on {r['train_size']:,} images: test accuracy {r['test_accuracy']:.3f}",
    ),
    "mnist_cnn": (
        "examples",
        "the MNIST CNN, OneCycleLR, 4 epochs",
        lambda r: f"{_epochs(r)} on {r['train_size']:,} images: test accuracy {r['test_accuracy']:.3f}",
    ),
    "char": (
        "examples",
        "the MLP character model, 6,000 steps",
        lambda r: (
            f"{r['steps']:,} steps: {r['val_nats']:.3f} nats/char (bigram {r['baselines']['bigram']:.3f}) and a sample"
        ),
    ),
    "lstm_char": (
        "examples",
        "a 2 x 256 LSTM character model, 2,000 steps",
        lambda r: (
            f"{r['steps']:,} steps of a {r['layers']} x {r['hidden']} LSTM: {r['val_nats']:.3f} nats/char and a sample"
        ),
    ),
    "gpt": (
        "examples",
        "nanoGPT's character GPT, 2,000 iterations",
        lambda r: (
            f"{r['iters']} iterations on a "
            f"shortened schedule: {r['val_nats']:.3f} nats/char, {r['ms_per_iter']['median']:.1f} ms/iter against "
            f"PyTorch's {r['torch_eager_ms_per_iter']['median']:.1f}"
        ),
    ),
    "bigdata": (
        "examples",
        "full-batch AdamW on a synthetic set larger than memory (dask)",
        lambda r: (
            f"{r['rows']:,} "
            f"rows on {r['backend']}, {r['steps']} steps: test accuracy {r['test_accuracy']:.3f} "
            f"(ceiling {r['accuracy_ceiling']:.2f})"
        ),
    ),
    "twin_control": (
        "tools",
        "PyTorch against itself, rows reversed (the twins' yardstick)",
        lambda r: f"{_epochs(r)}, {r['dtype']}: weights {r['control_max_weight_diff'][-1]:.1e} apart",
    ),
}


def examples_quick(folder: str) -> str:
    """What each script's --quick run shows and how long it took (``<name>-numpy.json``)."""
    records = {name: _load(f"{folder}/{name}-numpy.json") for name in QUICK}
    lines = ["| script | what it trains | `--quick` shows | quick s |", "|---|---|---|---|"]
    for name, (where, trains, shows) in QUICK.items():
        r = records[name]
        lines.append(f"| `{where}/{name}.py` | {trains} | {shows(r)} | {r['wall_time_s']:.1f} |")
    return "\n".join([provenance(records.values()), "", *lines])


RENDERERS: dict[str, Callable[..., str]] = {
    "headline": headline,
    "bench-mlp": bench_mlp,
    "bench-cnn": lambda path: bench_step(path, "cnn"),
    "bench-gpt": lambda path: bench_step(path, "gpt"),
    "bench-fullbatch": bench_fullbatch,
    "bench-transforms": bench_transforms,
    "goals": goals,
    "bigdata": bigdata,
    "examples-mlp": examples_mlp,
    "examples-cnn": examples_cnn,
    "examples-sequence": examples_sequence,
    "sequence-models": sequence_models,
    "examples-quick": examples_quick,
}


def render(name: str, sources: Sequence[str]) -> str:
    """The text of the block `name` from its `sources` (paths relative to the repository root)."""
    if name not in RENDERERS:
        raise KeyError(f"no renderer named {name!r} (known: {', '.join(RENDERERS)})")
    return RENDERERS[name](*sources).rstrip("\n") + "\n"
