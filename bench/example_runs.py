"""The examples' reference runs in ``results/`` as markdown tables: the figure blocks of the docs
that read a folder of runs, and ``results/README.md`` (written by ``python tools/figures.py --write``)."""

from __future__ import annotations

import json
from pathlib import Path

BACKENDS = ("numpy", "torch", "jax", "array_api_strict", "cupy")
# file stem (before "-<backend>") -> what it is
RUNS = {
    "mnist": "MNIST, 10 epochs, float32, with the torch twin",
    "mnist-float64": "MNIST, 3 epochs, float64, with the torch twin",
    "char": "character model, 6,000 steps",
    "xor": "XOR",
    "line": "line fit",
    "spirals": "spirals",
    "mnist_cnn": "MNIST CNN, 4 epochs, float32",
    "mnist_cnn-float64": "MNIST CNN, 1 epoch, float64, with the torch twin",
    "gpt": "character GPT, nanoGPT's CPU configuration, 2,000 iterations",
    "gpt-float64": "character GPT, 50 iterations, float64, with the torch twin",
    "lstm_char": "LSTM character model, 2,000 steps",
}
MISSING = "—"
SEQUENCE_NOTE = (
    "The GPT is scored on every position of the whole validation split cut into 64-character blocks "
    "(nanoGPT's measure, without its sampling noise); the LSTM and the MLP character model on the "
    "characters from the 17th on, the LSTM with the state carried through the text."
)


def load_runs(results_dir: Path) -> dict[str, dict[str, dict]]:
    """backend -> run name -> the JSON record, for every ``<run>-<backend>.json`` present."""
    runs: dict[str, dict[str, dict]] = {}
    for backend in BACKENDS:
        for run in RUNS:
            path = results_dir / f"{run}-{backend}.json"
            if path.is_file():
                runs.setdefault(backend, {})[run] = json.loads(path.read_text())
    return runs


def _fmt(value: float | None, spec: str) -> str:
    """`value` formatted, or a dash for a missing one."""
    return MISSING if value is None else format(value, spec)


def _last(record: dict | None, key: str) -> float | None:
    values = (record or {}).get(key)
    return values[-1] if values else None


def _seconds(record: dict | None) -> str:
    return _fmt((record or {}).get("wall_time_s"), ".0f")


def table(runs: dict[str, dict[str, dict]]) -> str:
    """The markdown table of the MLP examples: one row per backend that has any of them."""
    header = [
        "backend",
        "MNIST test accuracy (float32, 10 ep.)",
        "float32 twin max abs weight diff (10 ep.)",
        "float64 twin max abs weight diff (3 ep.)",
        "char model val nats/char",
        "spirals test acc. MLP / linear",
        "XOR predictions",
        "wall time s: MNIST f32 / f64 / char",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for backend, r in runs.items():
        if not any(name in r for name in ("mnist", "mnist-float64", "char", "spirals", "xor", "line")):
            continue
        mnist, mnist64, char = r.get("mnist"), r.get("mnist-float64"), r.get("char")
        spirals = r.get("spirals")
        spiral_cell = (
            MISSING
            if spirals is None
            else (f"{spirals['mlp_test_accuracy']:.3f} / {spirals['linear_test_accuracy']:.3f}")
        )
        cells = [
            backend,
            _fmt((mnist or {}).get("test_accuracy"), ".4f"),
            _fmt(_last(mnist, "twin_max_weight_diff"), ".2e"),
            _fmt(_last(mnist64, "twin_max_weight_diff"), ".2e"),
            _fmt((char or {}).get("val_nats"), ".3f"),
            spiral_cell,
            str(r["xor"]["predictions"]) if "xor" in r else MISSING,
            " / ".join(_seconds(x) for x in (mnist, mnist64, char)),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def cnn_table(runs: dict[str, dict[str, dict]]) -> str:
    """The convolutional network's table: one row per backend that has a CNN run."""
    header = [
        "backend",
        "MNIST CNN test accuracy (float32, 4 ep.)",
        "float64 twin max abs weight diff (1 ep.)",
        "float64 twin max abs running-statistics diff",
        "compiled step",
        "wall time s: f32 / f64",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for backend, r in runs.items():
        cnn, cnn64 = r.get("mnist_cnn"), r.get("mnist_cnn-float64")
        if cnn is None and cnn64 is None:
            continue
        cells = [
            backend,
            _fmt((cnn or {}).get("test_accuracy"), ".4f"),
            _fmt(_last(cnn64, "twin_max_weight_diff"), ".2e"),
            _fmt(_last(cnn64, "twin_max_buffer_diff"), ".2e"),
            MISSING if cnn is None else ("yes" if cnn.get("compiled") else "no"),
            " / ".join(_seconds(x) for x in (cnn, cnn64)),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def sequence_table(runs: dict[str, dict[str, dict]]) -> str:
    """The sequence models' table: one row per backend that has a GPT or LSTM run."""
    header = [
        "backend",
        "GPT val nats/char (nanoGPT 1.88)",
        "GPT ms/iter min / median (PyTorch eager's)",
        "compiled step",
        "float64 twin max loss / weight diff (50 it.)",
        "LSTM val nats/char",
        "wall time s: GPT / twin / LSTM",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for backend, r in runs.items():
        gpt, gpt64, lstm = r.get("gpt"), r.get("gpt-float64"), r.get("lstm_char")
        if gpt is None and gpt64 is None and lstm is None:
            continue
        speed = (
            MISSING
            if gpt is None or "torch_eager_ms_per_iter" not in gpt
            else (
                "{0[min]:.1f} / {0[median]:.1f} ({1[min]:.1f} / {1[median]:.1f})".format(
                    gpt["ms_per_iter"], gpt["torch_eager_ms_per_iter"]
                )
            )
        )
        twin = (
            MISSING if gpt64 is None else (f"{gpt64['twin_max_loss_diff']:.2e} / {gpt64['twin_max_weight_diff']:.2e}")
        )
        cells = [
            backend,
            _fmt((gpt or {}).get("val_nats"), ".4f"),
            speed,
            MISSING if gpt is None else ("yes" if gpt.get("compiled") else "no"),
            twin,
            _fmt((lstm or {}).get("val_nats"), ".3f"),
            " / ".join(_seconds(x) for x in (gpt, gpt64, lstm)),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def baselines_line(runs: dict[str, dict[str, dict]]) -> str:
    """The character-model baselines (the same on every backend: they are counted on the host)."""
    for r in runs.values():
        if "char" in r:
            b = r["char"]["baselines"]
            return (
                f"Character-model baselines on the same validation split (nats/char): uniform {b['uniform']:.3f}, "
                f"unigram {b['unigram']:.3f}, bigram {b['bigram']:.3f}."
            )
    return ""


def control_line(results_dir: Path, model: str = "mlp") -> str:
    """The yardstick of `examples/twin_control.py` for `model` ("mlp" or "cnn"): torch against
    torch, rows reversed."""
    found = []
    stem = "twin_control" if model == "mlp" else f"twin_control-{model}"
    for dtype in ("float32", "float64"):
        path = results_dir / f"{stem}-{dtype}.json"
        if path.is_file():
            r = json.loads(path.read_text())
            epochs = f"{r['epochs']} epoch" + ("s" if r["epochs"] != 1 else "")
            found.append(f"{r['control_max_weight_diff'][-1]:.2e} in {dtype} after {epochs}")
    if not found:
        return ""
    command = "tools/twin_control.py" + ("" if model == "mlp" else f" --model {model}")
    return (
        "Yardstick for the twin columns: two PyTorch runs from the same weights on the same batches, the second "
        "with the rows of each batch reversed (the same mathematics, another summation order), end "
        + " and ".join(found)
        + f" apart (`{command}`)."
    )


def report(runs: dict[str, dict[str, dict]], control: str = "", cnn_control: str = "") -> str:
    """The whole README: the table, the baselines, what is missing, the commands and machines."""
    parts = [
        "# Full runs",
        "",
        "Generated by `python tools/figures.py --write` from the JSON files in this folder; "
        "each JSON also holds the per-epoch / per-step curves, and each has a PNG next to it.",
        "",
        table(runs),
        "",
        baselines_line(runs),
        "",
        control,
        "",
        cnn_table(runs),
        "",
        cnn_control,
        "",
        sequence_table(runs),
        "",
        SEQUENCE_NOTE,
        "",
    ]
    missing = [f"{run}-{b}.json" for b in BACKENDS[:3] for run in RUNS if run not in runs.get(b, {})]
    if missing:
        parts += ["Missing runs: " + ", ".join(missing) + ".", ""]
    parts += ["## Commands", ""]
    for r in runs.values():
        for name, record in r.items():
            commit = record.get("machine", {}).get("git_commit") or "?"
            parts.append(
                f"- `{record.get('command', '?')}` ({RUNS[name]}; {record.get('wall_time_s', '?')} s; commit {commit})"
            )
    machines = {
        json.dumps({k: rec["machine"].get(k) for k in ("cpu", "cpu_count", "python", "versions")}, sort_keys=True)
        for r in runs.values()
        for rec in r.values()
        if "machine" in rec
    }
    parts += ["", "## Machine", ""]
    for m in sorted(machines):
        facts = json.loads(m)
        versions = ", ".join(f"{k} {v}" for k, v in facts["versions"].items() if v)
        parts.append(
            f"- {facts['cpu']} ({facts['cpu_count']} cores, shared with other work), "
            f"Python {facts['python']}; {versions}"
        )
    return "\n".join(parts) + "\n"
