"""Module-level import cycles in the project's packages, and imports of a layer above, found statically.

    python tools/import_cycles.py                  # autograd_core, nn, optim, backends
    python tools/import_cycles.py nn optim         # only these

An edge A -> B is an import that runs when A is imported: any ``import`` or ``from ... import``
outside functions and classes (and outside ``if TYPE_CHECKING:``). ``from pkg import name``
is an edge to the submodule ``pkg.name`` when there is one (a ``.py`` file, a package, or a
compiled extension), else to ``pkg``. Each strongly connected component of more than one
module is a cycle; it is printed with one import of each module that closes it. Exits 1 if
there is any.

The layers, bottom first, are `LAYERS`: a module imports its own layer and those below it. A
module's layer is the one whose pattern names it most closely (``pkg`` is that module alone,
``pkg.*`` the package and every module under it). An import of a layer above is printed with its line, and
the check exits 1 too.
"""

from __future__ import annotations

import argparse
import ast
import math
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("autograd_core", "nn", "optim", "backends")
EXTENSION_SOURCES = (".c",)
LAYERS = (  # bottom first; docs/engine.md describes each
    ("the backend contract and its selection", ("backends", "backends.contract.*")),
    ("the graph", ("autograd_core.graph.*",)),
    ("the primitives", ("autograd_core.primitives.*",)),
    ("the libraries' kernels", ("backends.*",)),
    ("the ops", ("autograd_core.ops.*",)),
    ("autodiff", ("autograd_core.autodiff.*",)),
    ("the transforms", ("autograd_core.transforms.*",)),
    ("export", ("autograd_core.export.*",)),
    ("the public namespace", ("autograd_core",)),
    ("layers and optimizers", ("nn.*", "optim.*")),
    ("data loading", ("autograd_core.utils.*",)),
    ("PyTorch's namespace", ("autograd_core.torch.*",)),
)  # a compiled submodule, built from this source next to it


def modules(packages: list[str]) -> dict[str, Path]:
    """Every module of `packages` by dotted name."""
    found = {}
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def top_level_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that run at import time: not inside a def, class or TYPE_CHECKING."""
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        pending.extend(ast.iter_child_nodes(node))


def is_submodule(name: str, known: dict[str, Path]) -> bool:
    if name in known:
        return True
    folder, leaf = ROOT.joinpath(*name.split(".")[:-1]), name.rsplit(".", 1)[-1]
    return any((folder / (leaf + suffix)).exists() for suffix in EXTENSION_SOURCES) or any(folder.glob(leaf + ".*.so"))


def imports_of(name: str, path: Path, known: dict[str, Path]) -> dict[str, int]:
    """The project modules `name` imports at module level, each with the line of its import."""
    found: dict[str, int] = {}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in top_level_imports(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{a.name}" if is_submodule(f"{base}.{a.name}", known) else base for a in node.names]
        for target in targets:
            if target in known and target != name:
                found.setdefault(target, node.lineno)
    return found


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(graph[target])))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def layer_of(name: str, layers: tuple) -> int | None:
    """The position in `layers` of the layer whose pattern names `name` most closely: ``pkg``
    names that module alone and wins; ``pkg.*`` names pkg and every module under it, the
    longest such pattern winning."""
    best, closeness = None, -1
    for position, (_, patterns) in enumerate(layers):
        for pattern in patterns:
            base = pattern.removesuffix(".*")
            if pattern == base:
                score = math.inf if name == base else -1
            else:
                score = len(base) if name == base or name.startswith(base + ".") else -1
            if score > closeness:
                best, closeness = position, score
    return best


def upward_imports(graph: dict[str, dict[str, int]], layers: tuple) -> list[str]:
    """Each import of a module in a layer above the importer's, as a line to print."""
    found = []
    for name, targets in sorted(graph.items()):
        own = layer_of(name, layers)
        for target, line in sorted(targets.items()):
            above = layer_of(target, layers)
            if own is not None and above is not None and above > own:
                found.append(f"{name} ({layers[own][0]}) imports {target} ({layers[above][0]}) at line {line}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packages", nargs="*", default=list(PACKAGES))
    packages = parser.parse_args(argv).packages
    known = modules(packages)
    graph = {name: imports_of(name, path, known) for name, path in known.items()}
    found = cycles(graph)
    for component in found:
        print(f"an import cycle of {len(component)} modules:")
        for member in component:
            closing = {t: line for t, line in graph[member].items() if t in component}
            where = ", ".join(f"{t} (line {line})" for t, line in sorted(closing.items()))
            print(f"  {member} imports {where}")
    upward = upward_imports(graph, LAYERS)
    for line in upward:
        print(f"a layer imports one above it: {line}")
    return 1 if found or upward else 0


if __name__ == "__main__":
    sys.exit(main())
