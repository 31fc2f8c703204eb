"""The command lines (the examples, ``python -m bench``, ``python -m backends``) run in
subprocesses as a user runs them: a user's mistake is one line on stderr, exit status 2 and
no traceback, before any training or timing starts; ``--help`` documents every flag once,
with its default at most once; and the bench writes under the current folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from example_support import cli as example_cli, records
from examples import (
    bigdata,
    char,
    gpt,
    line,
    lstm_char,
    mnist,
    mnist_cnn,
    spirals,
    xor,
)
from tools import figures, twin_control

ROOT = records.ROOT
EXAMPLES = [line, xor, spirals, mnist, char, mnist_cnn, twin_control, gpt, lstm_char, bigdata]
TIMEOUT = 120  # seconds; each command below stops at its arguments, before any training


def cli(*command: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess:
    """Run ``python <command>`` with the environment `env` on top of a clean one (no backend,
    no thread variables, the repository importable)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AUTOGRAD_", "XLA_", "OMP_"))}
    base["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, *command], cwd=cwd, env={**base, **env}, capture_output=True, text=True, timeout=TIMEOUT
    )


def example(name: str, folder: str = "examples") -> str:
    return str(ROOT / folder / f"{name}.py")


# (command, environment, what the one-line message must say)
USER_ERRORS = [
    ((example("line"), "--steps", "0"), {}, "argument --steps: expected a positive integer, got '0'"),
    ((example("xor"), "--steps", "-5"), {}, "argument --steps: expected a positive integer, got '-5'"),
    ((example("spirals"), "--lr", "nan"), {}, "argument --lr: expected a positive number, got 'nan'"),
    ((example("mnist"), "--epochs", "0"), {}, "argument --epochs: expected a positive integer"),
    ((example("mnist"), "--batch-size", "ten"), {}, "argument --batch-size: expected a positive integer, got 'ten'"),
    ((example("mnist_cnn"), "--dropout", "1.5"), {}, "argument --dropout: expected a probability in [0, 1)"),
    ((example("char"), "--eval-every", "0"), {}, "argument --eval-every: expected a positive integer"),
    ((example("twin_control", "tools"), "--limit", "-1"), {}, "argument --limit: expected a positive integer"),
    ((example("gpt"), "--n-embd", "30", "--n-head", "4"), {}, "--n-embd 30 is not a multiple of --n-head 4"),
    ((example("lstm_char"), "--seed", "-1"), {}, "argument --seed: expected an integer >= 0"),
    ((example("line"), "--threads", "0"), {}, "argument --threads: expected a positive integer"),
    ((example("line"), "--stpes", "3"), {}, "unrecognized arguments: --stpes 3"),
    ((example("line"),), {"AUTOGRAD_BACKEND": "bogus"}, "unknown backend 'bogus'"),
    ((example("xor"), "--out", "x.json", "--reference"), {}, "not allowed with argument"),
    ((example("xor"), "--out", "runs"), {}, "--out runs: expected a file name ending in .json"),
    ((example("figures", "tools"),), {}, "one of the arguments --check --write --remake is required"),
    ((example("figures", "tools"), "--write", "--stale"), {}, "--stale and --dry-run go with --remake"),
    ((example("figures", "tools"), "--remake", "results/no.json"), {}, "no such run: results/no.json"),
    (("-m", "bench", "--backends", "bogus"), {}, "unknown backend(s) ['bogus']"),
    (("-m", "bench", "--backends", ","), {}, "argument --backends: no backend in ','"),
    (("-m", "bench", "--workloads", "mlp,nope"), {}, "unknown workload(s) ['nope']"),
    (("-m", "bench", "--baselines", "pytorch"), {}, "unknown baseline(s) ['pytorch']"),
    (("-m", "bench", "--threads", "0"), {}, "argument --threads: expected an integer >= 1, got '0'"),
    (("-m", "bench", "--batches", "0,8"), {}, "expected positive integers"),
    (("-m", "bench", "--steps", "0"), {}, "argument --steps: expected an integer >= 1"),
    (("-m", "bench", "--warmup", "-1"), {}, "argument --warmup: expected an integer >= 0"),
    (("-m", "bench", "--min-time", "-0.5"), {}, "argument --min-time: expected a number of seconds >= 0"),
    (("-m", "bench", "--out", "bench.csv"), {}, "expected a file name ending in .json"),
    (("-m", "bench", "--compare", "a.json", "b.json"), {}, "--compare a.json: no such file"),
    (("-m", "bench", "--full", "--quick"), {}, "unrecognized arguments: --quick"),
]


@pytest.mark.parametrize(
    ("command", "env", "message"),
    USER_ERRORS,
    ids=[
        " ".join(Path(c[0]).name if i == 0 else c for i, c in enumerate(cmd)) + (f" {env}" if env else "")
        for cmd, env, _ in USER_ERRORS
    ],
)
def test_a_user_error_is_one_line_and_exit_status_2(command, env, message, tmp_path):
    done = cli(*command, cwd=tmp_path, **env)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert lines[0].startswith(("examples/", "tools/", "python -m bench: error:"))
    assert not list(tmp_path.rglob("*.json"))  # stopped before writing anything


@pytest.mark.parametrize(
    "command", [(example("xor"),), ("-m", "bench", "--backends", "numpy")], ids=["example", "bench"]
)
def test_an_output_folder_that_cannot_be_made_is_a_user_error(command, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = cli(*command, "--out", str(blocker / "sub" / "r.json"), cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert f"cannot create the output folder {blocker / 'sub'}" in done.stderr


@pytest.mark.parametrize("value", ["bogus", "NumPy", "torch,jax"])
def test_backends_table_under_a_bad_selection(value):
    """``python -m backends`` prints its table whatever the variable says, and names the bad
    selection in one line on stderr with a failing exit status."""
    done = cli("-m", "backends", AUTOGRAD_BACKEND=value)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "numpy" in done.stdout and "available" in done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "known:" in lines[0], done.stderr


# --- help ---------------------------------------------------------------------------------------
def option_entries(help_text: str) -> dict[str, str]:
    """The options of an argparse help text: the flags of each entry -> its help, on one line."""
    entries: dict[str, str] = {}
    flags = None
    for text in help_text.splitlines():
        if re.match(r"  -\S", text):
            flags, _, rest = text.strip().partition("  ")
            entries[flags] = rest.strip()
        elif flags is not None and text.startswith("    ") and text.strip():
            entries[flags] = f"{entries[flags]} {text.strip()}".strip()
        else:
            flags = None
    return entries


def check_help(help_text: str) -> None:
    entries = option_entries(help_text)
    assert len(entries) > 3
    for flags, text in entries.items():
        if flags.startswith("-h"):
            continue
        assert text and text[0].isupper() and text.endswith((".", ")")), f"{flags}: {text!r}"
        assert text.count("default") <= 1, f"{flags}: {text!r}"


@pytest.mark.parametrize("script", [*EXAMPLES, figures], ids=lambda m: m.__name__.split(".")[-1])
def test_every_example_flag_is_documented_with_its_default_once(script, capsys):
    with pytest.raises(SystemExit) as exit_info:
        script.main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    check_help(text)
    assert script.__doc__.split("\n\n")[0].replace("\n", " ") in " ".join(text.split("\n"))  # the whole paragraph


def test_example_defaults_show_in_help(capsys):
    with pytest.raises(SystemExit):
        mnist.main(["--help"])
    entries = option_entries(capsys.readouterr().out)
    assert entries["--epochs EPOCHS"] == "Passes over the training images. (default: 10)"
    assert entries["--seed SEED"].endswith("(default: 0)")  # a zero default is still shown
    assert "default" not in entries["--limit LIMIT"] and "default" not in entries["--torch-twin"]


@pytest.mark.parametrize("module", ["bench", "backends"])
def test_module_help(module):
    done = cli("-m", module, "--help")
    assert done.returncode == 0 and f"python -m {module}" in done.stdout
    if module == "bench":
        check_help(done.stdout)
        assert "--out PATH, --json PATH" in done.stdout and "--reference" in done.stdout


# --- --quick ------------------------------------------------------------------------------------
@pytest.mark.parametrize("script", EXAMPLES, ids=lambda m: m.NAME)
def test_quick_sets_its_settings_and_explicit_flags_win(script):
    p = script.build_parser()
    plain, quick = p.parse_args([]), script.build_parser().parse_args(["--quick"])
    assert script.QUICK and all(getattr(quick, k) == v != getattr(plain, k) for k, v in script.QUICK.items())
    key, value = next(iter(script.QUICK.items()))
    flag = "--" + key.replace("_", "-")
    for argv in (["--quick", flag, "7"], [flag, "7", "--quick"]):
        assert getattr(script.build_parser().parse_args(argv), key) == 7
    assert example_cli.quick_text(script.QUICK) in " ".join(p.format_help().split())


# --- where runs are written ---------------------------------------------------------------------------
def test_output_locations():
    from argparse import Namespace

    with_backend = f"xor-{records.backends.current().name}.json"
    assert records.output_path(Namespace(out=None, reference=False), "xor") == Path("runs") / with_backend
    assert records.output_path(Namespace(out=None, reference=True), "xor") == ROOT / "results" / with_backend
    assert records.output_path(Namespace(out=Path("a/b.json"), reference=False), "xor") == Path("a/b.json")
    assert records.output_path(Namespace(out=None, reference=False), "t-float32", with_backend=False) == (
        Path("runs") / "t-float32.json"
    )
    assert records.command_line("xor", ["--reference"]).endswith("python examples/xor.py --reference")
    assert records.command_line("twin_control", [], "tools").endswith("python tools/twin_control.py")


def test_a_dask_run_records_its_settings(monkeypatch):
    monkeypatch.setenv("AUTOGRAD_DEVICE", "local:2")
    monkeypatch.setenv("AUTOGRAD_DASK_WORKER_MEMORY", "2GiB")
    monkeypatch.setenv("AUTOGRAD_DASK_CHUNK_ROWS", "")
    monkeypatch.setattr(records.backends, "current", lambda: SimpleNamespace(name="dask"))
    assert records.command_line("bigdata", []) == (
        "AUTOGRAD_BACKEND=dask AUTOGRAD_DEVICE=local:2 AUTOGRAD_DASK_WORKER_MEMORY=2GiB python examples/bigdata.py"
    )


def test_bench_writes_under_the_current_folder(tmp_path):
    done = cli(
        "-m",
        "bench",
        "--backends",
        "numpy",
        "--baselines",
        "none",
        "--workloads",
        "ops",
        "--warmup",
        "0",
        "--steps",
        "1",
        "--min-time",
        "0",
        "--max-steps",
        "1",
        "--no-plot",
        "--no-progress",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    written = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert len(written) == 3 and written[-1] == "bench-latest.json"
    assert written[0].startswith("bench-") and written[0].endswith(".csv")
    assert f"wrote runs/{written[1]}" in done.stdout
