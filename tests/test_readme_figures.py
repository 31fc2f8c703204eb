"""The README's figures are the committed runs' figures, and those runs were made on this code."""

import json
import re

import pytest

from bench import machine
from examples import readme_figures, summarize
from examples.common import RESULTS_DIR

README = readme_figures.README.read_text()
RESULTS_README = (RESULTS_DIR / "README.md").read_text()
# tables of facts rather than measurements: what to install, what each backend is
NOT_FIGURES = ("| you want | install |", "| backend | library |")


def _tables(text: str) -> list[str]:
    """Each markdown table of `text` (its lines joined)."""
    return [m.group(0) for m in re.finditer(r"(?m)(^\|.*\n)+", text)]


@pytest.mark.parametrize("block", readme_figures.blocks(README), ids=lambda m: m["name"])
def test_every_figure_block_equals_what_its_runs_give(block):
    assert readme_figures.block_problem(block) is None, readme_figures.block_problem(block)


def test_every_table_of_figures_is_a_generated_block():
    outside = readme_figures.BLOCK.sub("", README)
    hand_written = [t.splitlines()[0] for t in _tables(outside) if not t.startswith(NOT_FIGURES)]
    assert not hand_written, f"tables of figures written by hand in README.md: {hand_written}"


def test_the_results_readme_is_its_summary():
    runs = summarize.load_runs(RESULTS_DIR)
    expected = summarize.report(runs, summarize.control_line(RESULTS_DIR), summarize.control_line(RESULTS_DIR, "cnn"))
    assert expected == RESULTS_README, "results/README.md is stale: run python examples/summarize.py --reference"


@pytest.mark.parametrize("path", readme_figures.cited_runs(README + RESULTS_README))
def test_every_cited_run_was_made_on_this_code(path):
    assert readme_figures.source_problems(path) is None, readme_figures.source_problems(path)


def test_the_source_check_notices_an_edit(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    before = machine.source_hash(["pkg/a.py"], tmp_path)
    (tmp_path / "pkg" / "a.py").write_text("x = 2\n")
    assert machine.source_hash(["pkg/a.py"], tmp_path) != before


def test_the_source_check_ignores_comments_docstrings_and_layout(tmp_path):
    source = tmp_path / "a.py"
    source.write_text('"""Module."""\ndef f(x):\n    """Doc."""\n    return x + 1\n')
    before = machine.source_hash(["a.py"], tmp_path)
    source.write_text('"""Another text."""\n\n\ndef f(x):  # a comment\n    return (x\n            + 1)\n')
    assert machine.source_hash(["a.py"], tmp_path) == before
    source.write_text('def f(x):\n    return x + 2\n')
    assert machine.source_hash(["a.py"], tmp_path) != before


def test_a_run_records_the_project_files_it_imported():
    files = machine.source_facts()["files"]
    assert {"bench/machine.py", "examples/readme_figures.py", "autograd_core/engine.py"} <= set(files)
    assert not any(f.startswith(("/", "tests/")) for f in files)  # neither installed copies nor the tests


def test_a_stale_run_is_named_with_the_command_that_remakes_it(tmp_path, monkeypatch):
    record = {"command": "python examples/line.py --reference",
              "machine": {"source": {"files": ["examples/line.py"], "sha256": "0" * 64}}}
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "line-numpy.json").write_text(json.dumps(record))
    monkeypatch.setattr(readme_figures, "ROOT", tmp_path)
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "line.py").write_text("")
    problem = readme_figures.source_problems("results/line-numpy.json")
    assert "changed since" in problem and "python examples/line.py --reference" in problem
    record["machine"] = {}
    (tmp_path / "results" / "line-numpy.json").write_text(json.dumps(record))
    assert "no source hash" in readme_figures.source_problems("results/line-numpy.json")
