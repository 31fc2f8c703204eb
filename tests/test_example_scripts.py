"""The example scripts as a user runs them after ``pip install -e .``: from any folder, with
only the base install's libraries (no matplotlib, no tqdm), and without touching ``sys.path``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from example_support.records import ROOT

LINE = ROOT / "examples" / "line.py"


def run_line(cwd: Path, *flags: str, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    """``python <checkout>/examples/line.py --quick <flags>`` in `cwd`, on numpy, with nothing of
    the checkout on the path but what the install put there (and `pythonpath` first)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUTOGRAD_", "PYTHON"))}
    env["AUTOGRAD_BACKEND"] = "numpy"
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [sys.executable, str(LINE), "--quick", "--threads", "1", *flags],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_an_example_runs_from_a_folder_outside_the_checkout(tmp_path: Path) -> None:
    done = run_line(tmp_path, "--quiet", "--out", str(tmp_path / "line.json"))
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "line.json").read_text())["w"] == pytest.approx(2.0, abs=1e-3)
    assert (tmp_path / "line.png").is_file() or "matplotlib is not installed" in done.stderr


@pytest.mark.slow
def test_an_example_runs_without_matplotlib_and_tqdm_and_says_so_once(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    for module in ("matplotlib", "tqdm"):
        (blocked / module).mkdir(parents=True)
        (blocked / module / "__init__.py").write_text(f"raise ImportError('{module} is blocked by the test')\n")
    work = tmp_path / "work"
    work.mkdir()
    done = run_line(work, "--out", str(work / "line.json"), pythonpath=blocked)  # not --quiet: progress lines
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads((work / "line.json").read_text())["steps"] == 150
    assert not list(work.rglob("*.png"))
    lines = done.stderr.splitlines()
    assert [line for line in lines if "matplotlib" in line] == [
        "matplotlib is not installed: no plot (pip install matplotlib)"
    ]
    assert [line for line in lines if "tqdm" in line] == [
        "tqdm is not installed: progress as plain lines, no bar (pip install tqdm)"
    ]
    assert any(line.startswith("line 150/150 (100%)") for line in lines)


@pytest.mark.slow
def test_the_custom_op_example_runs_from_a_folder_outside_the_checkout(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUTOGRAD_", "PYTHON"))}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "custom_op_swish.py")],
        cwd=tmp_path,
        env={**env, "AUTOGRAD_BACKEND": "numpy"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    primitive, losses = done.stdout.splitlines()
    assert primitive == "<primitive swish: kernels for numpy, torch>"
    assert losses.startswith("numpy: mean squared error ") and losses.endswith(" in 100 Adam steps")


def test_no_example_touches_sys_path() -> None:
    scripts = sorted((ROOT / "examples").glob("*.py"))
    assert scripts
    assert [p.name for p in scripts if "sys.path" in p.read_text(encoding="utf-8")] == []
