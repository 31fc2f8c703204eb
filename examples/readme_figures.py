"""The README's figures, rendered from the committed runs they cite.

Every table of measured figures in README.md sits between two markers that name what renders
it and the committed JSON it comes from:

    <!-- figures: bench-mlp results/bench-20261130-061500.json -->
    (generated text)
    <!-- end figures -->

`python examples/readme_figures.py` checks that every block equals what its JSON gives (exit 1
naming those that do not); `--write` rewrites the blocks. `tests/test_readme_figures.py` runs
the check, and also that each cited run was made on the code of this tree (`source_problems`).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the `examples` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import machine
from bench.problems import PHASES
from bench.report import fmt, rows_per_s, table_of
from examples import common, summarize
from examples.common import ROOT

README = ROOT / "README.md"
BLOCK = re.compile(r"<!-- figures: (?P<name>[\w-]+) (?P<sources>[^>]*?) -->\n(?P<body>.*?)<!-- end figures -->",
                   re.DOTALL)
CITED_JSON = re.compile(r"results/[\w./-]+\.json")
LABELS = {"torch": "torch (eager)", "ours:jax": "ours:jax (op by op)"}
ORDER = ("ours:numpy", "ours:torch", "ours:jax", "ours:jax+compile", "ours:array_api_strict", "ours:cupy", "torch",
         "torch-fused", "numpy-by-hand", "jax-jit")  # ours first, then the baselines


def _load(path: str) -> dict:
    return json.loads((ROOT / path).read_text())


def _label(impl: str) -> str:
    return LABELS.get(impl, impl)


def _ratio(value: float, base: float | None) -> str:
    return "-" if base is None else f"{value / base:.2f}"


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
    facts = result["machine"]
    start, end = facts["load_start"][0], facts["load_end"][0]
    return (f"From `{path}` (`{' '.join(result['command'])}`, {facts['cpu']}, {facts['cpu_count']} cores, "
            f"{facts['threads']['threads']} thread, load average {start} at the start and {end} at the end).")


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
        return fmt(r["min_ms"]) if impl == "numpy-by-hand" or base is None else (
            f"{fmt(r['min_ms'])} ({_ratio(r['min_ms'], base['min_ms'])})")

    lines = ["| implementation | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    lines += [f"| {_label(impl)} | " + " | ".join(cell(impl, c) for c in columns) + " |" for impl in table]
    return "\n".join([_bench_caption(path, result), "", *lines, "", _bench_notes(result)])


def _bench_notes(result: dict) -> str:
    """The sentences under the MLP table: ours:torch against torch, the character step, the phase
    split and the per-op cost."""
    mlp, phases = _table(result, "mlp"), _table(result, "phase")
    char, ops = _single(_table(result, "char")), _single(_table(result, "ops"))
    parts = []
    against = {"torch": "torch eager (its default single-tensor AdamW)",
               "torch-fused": "torch-fused (the same fused AdamW kernel as ours:torch's)"}
    for baseline, name in against.items():
        if "ours:torch" in mlp and baseline in mlp:
            ratios = [_ratio(r["min_ms"], mlp[baseline][c]["min_ms"]) for c, r in mlp["ours:torch"].items()]
            on_char = (f", {_ratio(char['ours:torch']['min_ms'], char[baseline]['min_ms'])} on the character model"
                       if "ours:torch" in char and baseline in char else "")
            parts.append(f"Whole step, ours:torch ÷ {name}: " + ", ".join(ratios) + f" across the batches{on_char}.")
    if all(i in phases and all(p in phases[i] for p in PHASES[:2]) for i in ("ours:torch", "torch")):
        engine = {i: sum(phases[i][p]["min_ms"] for p in PHASES[:2]) for i in ("ours:torch", "torch")}
        parts.append("Our engine over torch's kernels against torch's own autograd, forward plus backward at batch "
                     f"{phases['torch'][PHASES[0]]['batch']}: {_ratio(engine['ours:torch'], engine['torch'])}.")
    if char:
        parts.append(f"Character-model step at batch {next(iter(char.values()))['batch']}, minimum ms: "
                     + ", ".join(f"{_label(i)} {fmt(r['min_ms'])}" for i, r in char.items()) + ".")
    split = {i: row for i, row in phases.items() if all(p in row for p in PHASES)}
    if split:
        shares = (f"{_label(i)} " + " / ".join(fmt(row[p]["min_ms"]) for p in PHASES) for i, row in split.items())
        parts.append(f"Phase split at batch {next(iter(split.values()))[PHASES[0]]['batch']} (forward / backward / "
                     f"optimizer, minimum ms): {', '.join(shares)}.")
    if ops:
        us = {i: r["min_ms"] * 1000 for i, r in ops.items()}
        torch = us.get("torch")
        parts.append("Per-op cost (forward plus backward of a 2,000-multiply chain on one-element tensors, minimum "
                     "µs per op): " + ", ".join(f"{_label(i)} {fmt(v)}" + (f" ({v / torch:.2f}x torch)" if torch and
                                                i.startswith("ours:") else "") for i, v in us.items()) + ".")
    return " ".join(parts)


def bench_step(path: str, workload: str) -> str:
    """One workload's step: minimum / median ms and the ratio to torch eager, then ours:jax+compile
    against jax.jit."""
    result = _load(path)
    times = _single(_table(result, workload))
    torch = times.get("torch", {}).get("min_ms")
    lines = ["| implementation | ms per step (min / median) | ÷ torch eager |", "|---|---|---|"]
    lines += [f"| {_label(i)} | {fmt(r['min_ms'])} / {fmt(r['median_ms'])} | {_ratio(r['min_ms'], torch)} |"
              for i, r in times.items()]
    text = [_bench_caption(path, result), "", *lines]
    if "ours:jax+compile" in times and "jax-jit" in times:
        text += ["", f"ours:jax+compile takes {_ratio(times['ours:jax+compile']['min_ms'], times['jax-jit']['min_ms'])}"
                 "x the time of `jax.jit` of the same step written directly in jax (minimum ms)."]
    return "\n".join(text)


def bench_fullbatch(path: str) -> str:
    """The full-batch step in rows per second, for each implementation and data size."""
    result = _load(path)
    table = table_of(result["records"], "fullbatch")
    columns = list(dict.fromkeys(c for row in table.values() for c in row))
    lines = ["| implementation | " + " | ".join(f"{c}: rows/s" for c in columns) + " |",
             "|---" * (len(columns) + 1) + "|"]
    lines += [f"| {impl} | " + " | ".join(f"{rows_per_s(row[c]):,.0f}" if c in row else "-" for c in columns) + " |"
              for impl, row in table.items()]
    gaps = [f"- {s['impl']} at {s['batch']:,} rows: {s['reason']}" for s in result.get("skipped", [])
            if s.get("workload") == "fullbatch"]
    return "\n".join([_bench_caption(path, result), "", *lines, *(["", "Where a cell is empty:", "", *gaps] if gaps
                                                                   else [])])


def bigdata(path: str) -> str:
    """The reference run of examples/bigdata.py in one sentence."""
    r = _load(path)
    (limit,) = r["worker_memory_limit_bytes"]
    return (f"The reference run (`{r['command']}`, `{path}`): {r['rows']:,} x {r['features']} float32 "
            f"({r['data_bytes'] / 1e9:.1f} GB with labels) on {r['workers']} workers of {limit / 2**30:g} GiB each, "
            f"{r['steps']} steps of a {r['model']} model: test accuracy {r['test_accuracy']:.3f} (ceiling "
            f"{r['accuracy_ceiling']:.2f}), {r['rows_per_s']:,.0f} rows/s ({r['median_step_s']:.0f} s per full pass), "
            f"the client's peak memory {r['client_peak_rss_bytes'] / 2**20:.0f} MiB: the rows never reach it. Load "
            f"average at the end: {r['machine']['load_average'][0]:.1f}.")


# --- the examples' full runs -------------------------------------------------------------------------------
def _runs(folder: str) -> dict[str, dict[str, dict]]:
    return summarize.load_runs(ROOT / folder)


def examples_mlp(folder: str) -> str:
    """The MLP examples' table of results/README.md (MNIST, its twins, the character model)."""
    runs = _runs(folder)
    return "\n\n".join([summarize.table(runs), summarize.control_line(ROOT / folder)])


def examples_cnn(folder: str) -> str:
    """The CNN's table of results/README.md, with the twins' yardstick."""
    runs = _runs(folder)
    return "\n\n".join([summarize.cnn_table(runs), summarize.control_line(ROOT / folder, "cnn")])


def examples_sequence(folder: str) -> str:
    """The GPT and LSTM table of results/README.md."""
    return summarize.sequence_table(_runs(folder))


def sequence_models(char: str, lstm: str, gpt: str) -> str:
    """The three character models side by side, and nanoGPT's own figure."""
    rows = [("MLP over 16 characters (`char.py`)", _load(char), "characters 17 on"),
            ("LSTM, 2 x 256 (`lstm_char.py`)", _load(lstm), "characters 17 on, state carried"),
            ("GPT, nanoGPT's CPU recipe (`gpt.py`)", _load(gpt), "every position of 64-character blocks")]
    lines = ["| model (example) | validation nats/char | scored on | steps | wall time s | run |", "|---" * 6 + "|"]
    for (name, r, scored), path in zip(rows, (char, lstm, gpt)):
        steps = r.get("steps", r.get("iters"))
        lines.append(f"| {name} | {r['val_nats']:.3f} | {scored} | {steps:,} | {r['wall_time_s']:.0f} | `{path}` |")
    lines.append("| nanoGPT's README, same recipe | 1.88 | 20 random batches of 12 blocks | 2,000 | | |")
    return "\n".join(lines)


def _epochs(r: dict) -> str:
    return f"{r['epochs']} epoch" + "s" * (r["epochs"] != 1)


QUICK = {  # example -> (what it trains, what its --quick run shows)
    "line": ("a line fit by SGD", lambda r: f"{r['steps']} steps: w = {r['w']:.5f}, b = {r['b']:.6f} (truth 2, 1)"),
    "xor": ("a 2-4-1 tanh network on XOR", lambda r: f"{r['steps']} steps: predictions {r['predictions']}"),
    "spirals": ("an MLP against a linear model on two spirals", lambda r: f"{r['steps']} steps: test accuracy "
                f"{r['mlp_test_accuracy']:.3f} against {r['linear_test_accuracy']:.3f}"),
    "mnist": ("the 784-512-256-10 MLP, AdamW, 10 epochs",
              lambda r: f"{_epochs(r)} on {r['train_size']:,} images: test accuracy {r['test_accuracy']:.3f}"),
    "mnist_cnn": ("the CNN above, OneCycleLR, 4 epochs",
                  lambda r: f"{_epochs(r)} on {r['train_size']:,} images: test accuracy {r['test_accuracy']:.3f}"),
    "char": ("the MLP character model, 6,000 steps", lambda r: f"{r['steps']:,} steps: {r['val_nats']:.3f} nats/char "
             f"(bigram {r['baselines']['bigram']:.3f}) and a sample"),
    "lstm_char": ("a 2 x 256 LSTM character model, 2,000 steps", lambda r: f"{r['steps']:,} steps of a {r['layers']} x "
                  f"{r['hidden']} LSTM: {r['val_nats']:.3f} nats/char and a sample"),
    "gpt": ("nanoGPT's character GPT, 2,000 iterations", lambda r: f"{r['iters']} iterations on a shortened schedule: "
            f"{r['val_nats']:.3f} nats/char, {r['ms_per_iter']['median']:.1f} ms/iter against PyTorch's "
            f"{r['torch_eager_ms_per_iter']['median']:.1f}"),
    "twin_control": ("PyTorch against itself, rows reversed (the twins' yardstick)",
                     lambda r: f"{_epochs(r)}, {r['dtype']}: weights {r['control_max_weight_diff'][-1]:.1e} apart"),
    "bigdata": ("full-batch AdamW on a synthetic set larger than memory (dask)", lambda r: f"{r['rows']:,} rows on "
                f"{r['backend']}, {r['steps']} steps: test accuracy {r['test_accuracy']:.3f} "
                f"(ceiling {r['accuracy_ceiling']:.2f})"),
}


def examples_quick(folder: str) -> str:
    """What each example's --quick run shows and how long it took (``<example>-numpy.json``)."""
    lines = ["| example | what it trains | `--quick` shows | quick s |", "|---|---|---|---|"]
    for name, (trains, shows) in QUICK.items():
        r = _load(f"{folder}/{name}-numpy.json")
        lines.append(f"| `{name}.py` | {trains} | {shows(r)} | {r['wall_time_s']:.1f} |")
    return "\n".join(lines)


RENDERERS: dict[str, Callable[..., str]] = {
    "bench-mlp": bench_mlp,
    "bench-cnn": lambda path: bench_step(path, "cnn"),
    "bench-gpt": lambda path: bench_step(path, "gpt"),
    "examples-mlp": examples_mlp,
    "examples-cnn": examples_cnn,
    "examples-sequence": examples_sequence,
    "sequence-models": sequence_models,
    "examples-quick": examples_quick,
    "bench-fullbatch": bench_fullbatch,
    "bigdata": bigdata,
}


# --- the check ---------------------------------------------------------------------------------------------
def render(name: str, sources: Sequence[str]) -> str:
    """The text of the block `name` from its `sources`."""
    if name not in RENDERERS:
        raise KeyError(f"no renderer named {name!r} (known: {', '.join(RENDERERS)})")
    return RENDERERS[name](*sources).rstrip("\n") + "\n"


def blocks(text: str) -> list[re.Match]:
    """The figure blocks of a README's `text`."""
    return list(BLOCK.finditer(text))


def rewritten(text: str) -> tuple[str, list[str]]:
    """`text` with every figure block rendered afresh from its runs; and why any block could
    not be (it is then left as it was)."""
    problems = []

    def fresh(block: re.Match) -> str:
        try:
            body = render(block["name"], block["sources"].split())
        except (OSError, KeyError, ValueError) as e:
            problems.append(f"block {block['name']}: cannot render it from {block['sources']}: {e}")
            return block.group(0)
        return f"<!-- figures: {block['name']} {block['sources']} -->\n{body}<!-- end figures -->"

    return BLOCK.sub(fresh, text), problems


def cited_runs(text: str) -> list[str]:
    """Every committed run `text` cites: the JSON files it names and those of the folders its
    blocks read."""
    cited = set(CITED_JSON.findall(text))
    for m in blocks(text):
        for source in m["sources"].split():
            folder = ROOT / source
            cited |= ({p.relative_to(ROOT).as_posix() for p in folder.glob("*.json")} if folder.is_dir()
                      else {source})
    return sorted(cited)


def source_problems(path: str) -> str | None:
    """Why the run at `path` cannot be said to come from this tree's code (None if it can): it
    is missing, records no sources, imported a project file from elsewhere, or its files have
    changed since."""
    if not (ROOT / path).is_file():
        return f"{path}: cited but not committed"
    source = _load(path).get("machine", {}).get("source")
    if not source:
        return f"{path}: the run records no source hash (made before runs recorded one)"
    elsewhere = [f for f in source["files"] if Path(f).is_absolute()]
    if elsewhere:
        return f"{path}: the run imported project files from outside the tree: {', '.join(elsewhere)}"
    missing = [f for f in source["files"] if not (ROOT / f).is_file()]
    if missing:
        return f"{path}: files the run imported are gone: {', '.join(missing)}"
    if machine.source_hash(source["files"], ROOT) != source["sha256"]:
        return f"{path}: the code it ran has changed since (rerun it: {_load(path).get('command')})"
    return None


def block_problem(block: re.Match) -> str | None:
    """Why a figure block is not what its runs give (None if it is)."""
    try:
        fresh = render(block["name"], block["sources"].split())
    except (OSError, KeyError, ValueError) as e:
        return f"block {block['name']}: cannot render it from {block['sources']}: {e}"
    return None if fresh == block["body"] else f"block {block['name']}: differs from its JSON (--write rewrites it)"


def main(argv: Sequence[str] | None = None) -> int:
    """Check (or with --write rewrite) the README's figure blocks; the exit status."""
    p = common.Parser(prog="examples/readme_figures.py", description=__doc__, formatter_class=common.HelpFormatter)
    p.add_argument("--write", action="store_true", help="Rewrite the figure blocks of README.md from their JSON.")
    args = p.parse_args(argv)
    text = README.read_text()
    if args.write:
        text, problems = rewritten(text)
        README.write_text(text)
        print("\n".join(problems) or f"rewrote the {len(blocks(text))} figure blocks of {README.name}")
        return 1 if problems else 0
    problems = [problem for block in blocks(text) if (problem := block_problem(block))]
    problems += [problem for path in cited_runs(text) if (problem := source_problems(path))]
    print("\n".join(problems) or f"every figure block of {README.name} is what its runs give, on this code")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
