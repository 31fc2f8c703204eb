"""The figures of the README and the docs, and the committed reference runs behind them.

Every table of measured figures sits between two markers that name its renderer (in
``bench/figures.py``) and the committed runs it reads; the generated text starts with the
commit and the day those runs were measured on:

    <!-- figures: bench-mlp results/bench-latest.json -->
    (generated)
    <!-- end figures -->

    python tools/figures.py --check            # what is out of date, each stale run with the command that remakes it
    python tools/figures.py --write            # every block, and results/README.md, rendered again from the runs
    python tools/figures.py --remake RUN.json  # make these runs again (the ones a change claims to move), then --write
    python tools/figures.py --remake --stale   # every run made on older code
    python tools/figures.py --remake           # every cited run: a release step, hours of wall time
    python tools/figures.py --remake --dry-run # the commands, not run

The default test run checks only what is cheap (every block equals its runs, results/README.md
is their summary, no table of figures is typed by hand); whether the runs were made on this
code is ``--check``'s question. Each run records the sha256 of the project's sources it imported
(``machine.source``: their code, so comments, docstrings and layout do not count). In a tree
without git's history (a release tarball), the day of a run without a timestamp cannot be
known: the blocks keep the day they name (`rendered`).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from bench import example_runs, figures, machine
from example_support.cli import HelpFormatter, Parser

ROOT = machine.ROOT
RESULTS = "results"
BLOCK = re.compile(
    r"<!-- figures: (?P<name>[\w-]+) (?P<sources>[^>]*?) -->\n(?P<body>.*?)<!-- end figures -->", re.DOTALL
)
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
CITED_JSON = re.compile(r"results/[\w./-]+\.json")
UNKNOWN_DAY = "date unknown"  # bench.figures' day of a commit that git cannot date
COMMITS = re.compile(rf"`([^`]+)`,? \(?(?:\d{{4}}-\d\d-\d\d|{UNKNOWN_DAY})")  # the commits a provenance names


def pages(root: Path = ROOT) -> list[Path]:
    """The pages that may hold figure blocks: the README and every page of the docs site."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def blocks(text: str) -> list[re.Match]:
    """The figure blocks of `text`, leaving out any shown inside a fenced code block."""
    fenced = [m.span() for m in FENCE.finditer(text)]
    return [m for m in BLOCK.finditer(text) if not any(start <= m.start() < end for start, end in fenced)]


def rendered(block: re.Match) -> str:
    """The body of `block` rendered afresh from its runs.

    A run without a timestamp was measured on its commit's day, which only git's history gives;
    in a tree without it (a release tarball, ``git archive``) the provenance, the first line,
    names that day as unknown. The block's own first line is then kept where it names the same
    commits: everything but those days is still checked, and a rewrite does not lose them.

    >>> block = blocks((ROOT / "docs" / "benchmark.md").read_text())[0]
    >>> rendered(block) == block["body"]
    True
    """
    fresh = figures.render(block["name"], block["sources"].split())
    first, rest = fresh.split("\n", 1)
    stated = block["body"].split("\n", 1)[0]
    if UNKNOWN_DAY in first and set(COMMITS.findall(stated)) == set(COMMITS.findall(first)):
        return f"{stated}\n{rest}"
    return fresh


def block_problem(block: re.Match) -> str | None:
    """Why a figure block is not what its runs give (None if it is)."""
    try:
        fresh = rendered(block)
    except (OSError, KeyError, ValueError) as e:
        return f"block {block['name']}: cannot render it from {block['sources']}: {e}"
    return None if fresh == block["body"] else f"block {block['name']}: differs from its runs (--write rewrites it)"


def rewritten(text: str) -> tuple[str, list[str]]:
    """`text` with every figure block rendered afresh from its runs; and why any block could not
    be (it is then left as it was)."""
    problems = []
    spans = {m.start() for m in blocks(text)}

    def fresh(block: re.Match) -> str:
        if block.start() not in spans:  # an example of the markers inside a code block
            return block.group(0)
        try:
            body = rendered(block)
        except (OSError, KeyError, ValueError) as e:
            problems.append(f"block {block['name']}: cannot render it from {block['sources']}: {e}")
            return block.group(0)
        return f"<!-- figures: {block['name']} {block['sources']} -->\n{body}<!-- end figures -->"

    return BLOCK.sub(fresh, text), problems


def results_summary(root: Path = ROOT) -> str:
    """What results/README.md must say: the summary of the examples' runs in results/."""
    folder = root / RESULTS
    return example_runs.report(
        example_runs.load_runs(folder), example_runs.control_line(folder), example_runs.control_line(folder, "cnn")
    )


def cited_runs(text: str, root: Path = ROOT) -> list[str]:
    """Every committed run `text` cites: the JSON files it names and those of the folders its
    blocks read."""
    cited = set(CITED_JSON.findall(text))
    for m in blocks(text):
        for source in m["sources"].split():
            folder = root / source
            cited |= {p.relative_to(root).as_posix() for p in folder.glob("*.json")} if folder.is_dir() else {source}
    return sorted(p for p in cited if not p.startswith(f"{RESULTS}/README"))


def all_cited_runs(root: Path = ROOT) -> list[str]:
    """The runs cited by the README, the docs and results/README.md."""
    texts = [p.read_text() for p in pages(root)]
    summary = root / RESULTS / "README.md"
    return cited_runs("\n".join([*texts, summary.read_text() if summary.is_file() else ""]), root)


def remake_command(path: str, root: Path = ROOT) -> str:
    """The shell command that made the run at `path` (and makes it again, from the repository root)."""
    command = json.loads((root / path).read_text()).get("command")
    return shlex.join(command) if isinstance(command, list) else command or ""


def source_problems(path: str, root: Path = ROOT) -> str | None:
    """Why the run at `path` cannot be said to come from this tree's code (None if it can): it
    is missing, records no sources, imported a project file from elsewhere, or its files have
    changed since. The message ends with the command that remakes it."""
    if not (root / path).is_file():
        return f"{path}: cited but not committed"
    source = json.loads((root / path).read_text()).get("machine", {}).get("source")
    remake = f"remake it: {remake_command(path, root)}"
    if not source:
        return f"{path}: the run records no source hash; {remake}"
    elsewhere = [f for f in source["files"] if Path(f).is_absolute()]
    if elsewhere:
        return f"{path}: the run imported project files from outside the tree ({', '.join(elsewhere)}); {remake}"
    missing = [f for f in source["files"] if not (root / f).is_file()]
    if missing:
        return f"{path}: files the run imported are gone ({', '.join(missing)}); {remake}"
    if machine.source_hash(source["files"], root) != source["sha256"]:
        return f"{path}: the code it ran has changed since; {remake}"
    return None


def check(root: Path = ROOT) -> list[str]:
    """Every problem: blocks that differ from their runs, a stale results/README.md, runs made
    on older code."""
    problems = [
        f"{page.relative_to(root)}: {p}"
        for page in pages(root)
        for block in blocks(page.read_text())
        if (p := block_problem(block))
    ]
    if (root / RESULTS / "README.md").read_text() != results_summary(root):
        problems.append(f"{RESULTS}/README.md differs from the summary of its runs (--write rewrites it)")
    return problems + [p for path in all_cited_runs(root) if (p := source_problems(path, root))]


def write(root: Path = ROOT) -> list[str]:
    """Rewrite every figure block and results/README.md from the committed runs; the problems."""
    problems = []
    for page in pages(root):
        text, found = rewritten(page.read_text())
        page.write_text(text)
        problems += [f"{page.relative_to(root)}: {p}" for p in found]
    (root / RESULTS / "README.md").write_text(results_summary(root))
    return problems


def remake(paths: Sequence[str], dry_run: bool = False, root: Path = ROOT) -> list[str]:
    """Make the runs at `paths` again by their recorded commands (each command once, in order);
    the commands that failed."""
    commands = list(dict.fromkeys(remake_command(p, root) for p in paths))
    failed = []
    for i, command in enumerate(commands, 1):
        print(f"[{i}/{len(commands)}] {command}", flush=True)
        if not dry_run and subprocess.run(command, shell=True, cwd=root).returncode != 0:
            failed.append(command)
    return failed


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; the exit status (1 when something is out of date or failed)."""
    p = Parser(prog="tools/figures.py", description=__doc__, formatter_class=HelpFormatter)
    action = p.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="Report what is out of date; change nothing.")
    action.add_argument("--write", action="store_true", help="Render every block and results/README.md again.")
    action.add_argument(
        "--remake",
        nargs="*",
        metavar="RUN",
        help="Make these runs (results/....json) again, or every cited run, then --write.",
    )
    p.add_argument("--stale", action="store_true", help="With --remake: only the runs made on older code.")
    p.add_argument("--dry-run", action="store_true", help="With --remake: print the commands, run nothing.")
    args = p.parse_args(argv)
    if (args.stale or args.dry_run) and args.remake is None:
        p.error("--stale and --dry-run go with --remake")
    if args.check:
        problems = check(ROOT)
        print("\n".join(problems) or "every figure block equals its runs, and every run was made on this code")
        if machine.git_commit() is None:
            print("no git history here: the days of runs without a timestamp were not checked (see `rendered`)")
        return 1 if problems else 0
    if args.remake is not None:
        runs = args.remake or all_cited_runs(ROOT)
        unknown = [r for r in runs if not (ROOT / r).is_file()]
        if unknown:
            p.error(f"no such run: {', '.join(unknown)}")
        if args.stale:
            runs = [r for r in runs if source_problems(r, ROOT)]
        failed = remake(runs, args.dry_run, ROOT)
        if args.dry_run:
            return 0
        if failed:
            print("these commands failed (the blocks were not rewritten):\n" + "\n".join(failed), file=sys.stderr)
            return 1
    problems = write(ROOT)
    print("\n".join(problems) or "rewrote every figure block and results/README.md")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
