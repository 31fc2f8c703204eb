"""The figures of the README and the docs are what the committed runs give, and say which commit
and day those runs were measured on. Whether the runs were made on this code is not a test (a
change to the engine must not fail the test run): ``python tools/figures.py --check`` answers it,
and the last tests here check that it names each stale run with the command that remakes it."""

import json
import re

import pytest

from bench import figures as renderers, machine
from tools import figures

PAGES = {page.relative_to(figures.ROOT).as_posix(): page.read_text() for page in figures.pages()}
BLOCKS = [(name, block) for name, text in PAGES.items() for block in figures.blocks(text)]
# a measured figure: a decimal number (not a version such as 2.13.0), or a number with a unit
UNIT = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])|\d\s*(ms|µs|s|%|GB|MiB)\b")


def _tables(text: str) -> list[str]:
    """Each markdown table of `text` outside code blocks (its lines joined)."""
    text = figures.FENCE.sub("", text)
    return [m.group(0) for m in re.finditer(r"(?m)(^\|.*\n)+", text)]


def test_the_readme_and_the_docs_hold_figure_blocks():
    assert any(name == "README.md" and block["name"] == "headline" for name, block in BLOCKS)
    assert {block["name"] for _, block in BLOCKS} == set(renderers.RENDERERS)  # every renderer is used


@pytest.mark.parametrize("block", [b for _, b in BLOCKS], ids=[f"{n}:{b['name']}" for n, b in BLOCKS])
def test_every_figure_block_equals_what_its_runs_give(block):
    assert figures.block_problem(block) is None, figures.block_problem(block)


@pytest.mark.parametrize("block", [b for _, b in BLOCKS], ids=[f"{n}:{b['name']}" for n, b in BLOCKS])
def test_every_figure_block_says_which_commit_and_day_it_was_measured_on(block):
    first = block["body"].splitlines()[0]
    assert re.match(r"Measured on commits? `[0-9a-f]{7,}(\+dirty)?`,? \(?\d{4}-\d\d-\d\d", first), first


@pytest.mark.parametrize("page", sorted(PAGES))
def test_no_table_of_figures_is_written_by_hand(page):
    outside = figures.BLOCK.sub("", PAGES[page])
    typed = [t.splitlines()[0] for t in _tables(outside) if UNIT.search(re.sub(r"`[^`]*`", "", t))]
    assert not typed, f"tables of measured figures written by hand in {page}: {typed}"


def test_a_typed_table_of_figures_is_noticed():
    table = "| impl | ms |\n|---|---|\n| ours | 1.79 |\n"
    assert [t for t in _tables(table) if UNIT.search(t)]


def test_the_results_readme_is_the_summary_of_its_runs():
    assert (figures.ROOT / "results" / "README.md").read_text() == figures.results_summary(), (
        "results/README.md is stale: python tools/figures.py --write"
    )


def test_markers_shown_inside_a_code_block_are_not_a_block():
    text = "```markdown\n<!-- figures: bench-mlp results/x.json -->\n(generated)\n<!-- end figures -->\n```\n"
    assert figures.blocks(text) == []
    assert figures.rewritten(text) == (text, [])


def test_a_record_without_a_timestamp_takes_its_commits_day():
    record = {"machine": {"git_commit": machine.git_commit() or "unknown"}}
    commit, day = renderers.measured_on(record)
    assert commit == record["machine"]["git_commit"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", day) or not machine.git_commit()
    assert renderers.measured_on({"machine": {"git": "abc1234", "started": "2026-12-01T14:51:22+00:00"}}) == (
        "abc1234",
        "2026-12-01",
    )


def test_provenance_names_every_commit_of_a_mixed_set():
    runs = [{"machine": {"git": c, "started": f"2026-12-0{d}T00:00:00"}} for c, d in (("bbb", 2), ("aaa", 1))]
    assert renderers.provenance(runs) == "Measured on commits `aaa` (2026-12-01), `bbb` (2026-12-02)."
    assert renderers.provenance(runs[:1]) == "Measured on commit `bbb`, 2026-12-02."


@pytest.fixture
def without_git(tmp_path, monkeypatch):
    """git is not on PATH, as in a tree without its history (a release tarball, ``git archive``),
    and no commit's day it gave before is remembered."""
    monkeypatch.setenv("PATH", str(tmp_path))
    renderers._commit_date.cache_clear()
    yield
    renderers._commit_date.cache_clear()


def test_without_git_the_blocks_keep_the_days_they_name(without_git):
    """Runs without a timestamp take their commit's day from git: without it the blocks are
    checked all but that day, and rewriting them keeps the day they name."""
    undated = [b for _, b in BLOCKS if figures.UNKNOWN_DAY in renderers.render(b["name"], b["sources"].split())]
    assert undated  # the examples' runs record no timestamp
    assert [figures.block_problem(b) for b in undated] == [None] * len(undated)
    for text in PAGES.values():
        assert figures.rewritten(text) == (text, [])


# --- freshness: reported by tools/figures.py --check, never a test failure ---------------------------------
def _tree(tmp_path, source: str = "x = 1\n"):
    """A repository in `tmp_path` with one example and one run of it, made on `source`."""
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "line.py").write_text(source)
    (tmp_path / "docs").mkdir()
    (tmp_path / "results").mkdir()
    (tmp_path / "README.md").write_text("The run: `results/line-numpy.json`.\n")
    record = {
        "command": "AUTOGRAD_BACKEND=numpy python examples/line.py --reference",
        "machine": {
            "cpu": "a CPU",
            "cpu_count": 2,
            "python": "3.11",
            "versions": {"numpy": "2"},
            "source": {"files": ["examples/line.py"], "sha256": machine.source_hash(["examples/line.py"], tmp_path)},
        },
    }
    (tmp_path / "results" / "line-numpy.json").write_text(json.dumps(record))
    return tmp_path


def test_a_run_made_on_this_code_is_fresh(tmp_path):
    root = _tree(tmp_path)
    assert figures.all_cited_runs(root) == ["results/line-numpy.json"]
    assert figures.source_problems("results/line-numpy.json", root) is None


def test_a_stale_run_is_named_with_the_command_that_remakes_it(tmp_path):
    root = _tree(tmp_path)
    (root / "examples" / "line.py").write_text("x = 2\n")  # a one-line change to the code the run imported
    problem = figures.source_problems("results/line-numpy.json", root)
    assert "changed since" in problem
    assert problem.endswith("remake it: AUTOGRAD_BACKEND=numpy python examples/line.py --reference")
    (root / "examples" / "line.py").unlink()
    assert "are gone" in figures.source_problems("results/line-numpy.json", root)
    record = json.loads((root / "results" / "line-numpy.json").read_text())
    record["machine"] = {}
    (root / "results" / "line-numpy.json").write_text(json.dumps(record))
    assert "no source hash" in figures.source_problems("results/line-numpy.json", root)


def test_remake_runs_each_recorded_command_once(tmp_path, capsys):
    root = _tree(tmp_path)
    (root / "results" / "bench-latest.json").write_text(json.dumps({"command": ["python", "-m", "bench", "--full"]}))
    (root / "results" / "bench-1.json").write_text(json.dumps({"command": ["python", "-m", "bench", "--full"]}))
    runs = ["results/line-numpy.json", "results/bench-latest.json", "results/bench-1.json"]
    assert figures.remake(runs, dry_run=True, root=root) == []
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        "[1/2] AUTOGRAD_BACKEND=numpy python examples/line.py --reference",
        "[2/2] python -m bench --full",
    ]


def test_remake_reports_a_failed_command(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "r.json").write_text(json.dumps({"command": "exit 3"}))
    assert figures.remake(["results/r.json"], root=tmp_path) == ["exit 3"]


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
    source.write_text("def f(x):\n    return x + 2\n")
    assert machine.source_hash(["a.py"], tmp_path) != before


def test_a_run_records_the_project_files_it_imported():
    import autograd_core  # noqa: F401  (what a run imports)

    files = machine.source_facts()["files"]
    assert {"bench/machine.py", "tools/figures.py", "autograd_core/autodiff/engine.py"} <= set(files)
    assert not any(f.startswith(("/", "tests/")) for f in files)  # neither installed copies nor the tests


def test_the_check_command_exits_1_naming_what_is_stale(tmp_path, monkeypatch, capsys):
    root = _tree(tmp_path)
    (root / "results" / "README.md").write_text(figures.results_summary(root))
    monkeypatch.setattr(figures, "ROOT", root)
    monkeypatch.setattr(figures, "pages", lambda r=root: [root / "README.md"])
    assert figures.main(["--check"]) == 0
    (root / "examples" / "line.py").write_text("x = 2\n")
    assert figures.main(["--check"]) == 1
    assert "python examples/line.py --reference" in capsys.readouterr().out


def test_the_results_summary_from_json(tmp_path):
    facts = {"cpu": "X", "cpu_count": 2, "python": "3", "versions": {"numpy": "2"}}
    records = {
        "mnist-numpy.json": {"test_accuracy": 0.9801, "twin_max_weight_diff": [0.1, 0.02], "wall_time_s": 100},
        "mnist-float64-numpy.json": {"twin_max_weight_diff": [1e-14, 2e-14, 3.5e-14], "wall_time_s": 50},
        "char-numpy.json": {
            "val_nats": 1.7912,
            "baselines": {"uniform": 4.17, "unigram": 3.3, "bigram": 2.48},
            "wall_time_s": 200,
        },
        "xor-torch.json": {"predictions": [-1, 1, 1, -1], "wall_time_s": 1},
        "twin_control-float64.json": {"control_max_weight_diff": [1e-15, 4.25e-14], "epochs": 2},
        "mnist_cnn-jax.json": {"test_accuracy": 0.9931, "compiled": True, "wall_time_s": 300},
        "twin_control-cnn-float64.json": {"control_max_weight_diff": [6.25e-11], "epochs": 1},
        "mnist_cnn-float64-jax.json": {
            "twin_max_weight_diff": [6.5e-11],
            "twin_max_buffer_diff": [2.5e-12],
            "wall_time_s": 400,
        },
        "gpt-torch.json": {
            "val_nats": 1.8765,
            "compiled": False,
            "ms_per_iter": {"min": 75.0, "median": 80.0},
            "torch_eager_ms_per_iter": {"min": 60.5, "median": 64.0},
            "wall_time_s": 250,
        },
        "gpt-float64-torch.json": {"twin_max_loss_diff": 3e-13, "twin_max_weight_diff": 4e-15, "wall_time_s": 30},
        "lstm_char-torch.json": {"val_nats": 1.65, "wall_time_s": 900},
    }
    (tmp_path / "results").mkdir()
    for name, rec in records.items():
        (tmp_path / "results" / name).write_text(json.dumps({**rec, "command": f"cmd {name}", "machine": facts}))
    text = figures.results_summary(tmp_path)
    first_table = text.split("MNIST CNN test accuracy")[0]
    rows = {r.split("|")[1].strip(): r for r in first_table.splitlines() if r.startswith("| ") and "backend" not in r}
    assert set(rows) == {"numpy", "torch"}
    assert "0.9801" in rows["numpy"] and "3.50e-14" in rows["numpy"] and "1.791" in rows["numpy"]
    assert "100 / 50 / 200" in rows["numpy"] and "[-1, 1, 1, -1]" in rows["torch"]
    assert "bigram 2.480" in text and "mnist-jax.json" in text  # a missing run is named
    assert "4.25e-14 in float64 after 2 epochs" in text
    cnn_row = next(r for r in text.splitlines() if r.startswith("| jax |") and "0.9931" in r)
    assert "6.50e-11" in cnn_row and "2.50e-12" in cnn_row and "yes" in cnn_row and "300 / 400" in cnn_row
    assert "6.25e-11 in float64 after 1 epoch apart (`tools/twin_control.py --model cnn`)" in text
    gpt_row = next(r for r in text.splitlines() if r.startswith("| torch |") and "1.8765" in r)
    assert "75.0 / 80.0 (60.5 / 64.0)" in gpt_row and "3.00e-13 / 4.00e-15" in gpt_row and "1.650" in gpt_row
    assert "250 / 30 / 900" in gpt_row
