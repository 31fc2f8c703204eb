"""The layers import downward only: no module-level import cycle, no import of a layer above
(`tools/import_cycles.py`'s LAYERS), every public module imports alone in a fresh
interpreter, and nn and optim reach autograd_core through public names."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import import_cycles  # noqa: E402

PUBLIC_MODULES = sorted(
    name
    for name in import_cycles.modules(["autograd_core", "nn", "optim", "backends"])
    if not any(part.startswith("_") for part in name.split("."))
)


def test_no_module_level_import_cycle(capsys):
    assert import_cycles.main([]) == 0, capsys.readouterr().out


def test_the_cycle_check_finds_a_cycle(tmp_path, monkeypatch):
    """The check itself: two modules importing each other at module level are reported."""
    package = tmp_path / "looped"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from looped import b\n")
    (package / "b.py").write_text("def f():\n    from looped import a\n")
    monkeypatch.setattr(import_cycles, "ROOT", tmp_path)
    assert import_cycles.main(["looped"]) == 0  # an import inside a function is no cycle
    (package / "b.py").write_text("from looped.a import x\n")
    assert import_cycles.main(["looped"]) == 1


def test_the_layer_check_finds_an_upward_import(tmp_path, monkeypatch):
    """A module importing a layer above its own at module level is reported; inside a function
    it is not an edge."""
    package = tmp_path / "house"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "floor.py").write_text("def f():\n    from house import roof\n")
    (package / "roof.py").write_text("from house import floor\n")
    monkeypatch.setattr(import_cycles, "ROOT", tmp_path)
    monkeypatch.setattr(import_cycles, "LAYERS", (("floor", ("house.floor",)), ("roof", ("house.roof",))))
    assert import_cycles.main(["house"]) == 0
    (package / "floor.py").write_text("from house.roof import x\n")
    (package / "roof.py").write_text("")
    assert import_cycles.main(["house"]) == 1


def test_an_upward_import_planted_in_the_project_is_reported():
    """The project's own layers: the graph importing the engine would be caught."""
    known = import_cycles.modules(list(import_cycles.PACKAGES))
    graph = {name: import_cycles.imports_of(name, path, known) for name, path in known.items()}
    assert import_cycles.upward_imports(graph, import_cycles.LAYERS) == []
    graph["autograd_core.graph.tensor_base"]["autograd_core.autodiff.engine"] = 1
    assert import_cycles.upward_imports(graph, import_cycles.LAYERS) == [
        "autograd_core.graph.tensor_base (the graph) imports autograd_core.autodiff.engine (autodiff) at line 1"
    ]


def test_every_module_has_a_layer():
    known = import_cycles.modules(list(import_cycles.PACKAGES))
    assert [name for name in known if import_cycles.layer_of(name, import_cycles.LAYERS) is None] == []


def test_the_engine_page_lists_the_layers_in_order():
    """docs/engine.md's table of the house names each layer of the check, bottom first."""
    page = (ROOT / "docs" / "engine.md").read_text()
    rows = [line.split("|")[1].strip() for line in page.split("## The house")[1].splitlines() if line.startswith("| ")]
    assert rows[1:] == [name for name, _ in import_cycles.LAYERS]


def test_each_public_module_imports_alone():
    """A fresh interpreter per module: an import that works only after another module has
    been imported (an order dependence a cycle hides) fails here."""
    runs = {
        name: subprocess.Popen(
            [sys.executable, "-c", f"import {name}"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        for name in PUBLIC_MODULES
        if name not in ("backends.cupy",)  # needs a GPU: its import is checked in test_backends
    }
    failed = {name: run.communicate(timeout=300)[0].decode()[-600:] for name, run in runs.items()}
    assert {name: out for name, out in failed.items() if runs[name].returncode} == {}


def private_names_used(path: Path) -> list[str]:
    """``autograd_core`` names with a leading underscore that a module imports or reads, and
    any import from ``backends.contract.backend``."""
    used = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "backends.contract.backend":
                used.append(f"line {node.lineno}: from backends.contract.backend import ...")
            if node.module.startswith("autograd_core"):
                used += [f"line {node.lineno}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
                if any(part.startswith("_") for part in node.module.split(".")):
                    used.append(f"line {node.lineno}: {node.module}")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and isinstance(node.value, ast.Name)
            and node.value.id in ("ag", "autograd_core", "P", "primitives")
        ):
            used.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    return used


@pytest.mark.parametrize("package", ["nn", "optim"])
def test_layers_use_only_public_names_of_the_core(package):
    used = {
        str(path.relative_to(ROOT)): names
        for path in sorted((ROOT / package).rglob("*.py"))
        if (names := private_names_used(path))
    }
    assert used == {}
