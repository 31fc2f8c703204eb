"""The graph behind a tensor as Graphviz DOT text, and a renderer that uses Graphviz's
`dot` program when it is installed.

    from autograd_core import viz
    print(viz.to_dot(loss, names={"a": a, "b": b}))
    viz.render(loss, "graph.svg", names=dict(model.named_parameters()))
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

from autograd_core.autodiff.engine import topological_order
from autograd_core.graph.tensor_base import TensorBase

SMALL = 4  # tensors with at most this many elements show their value and gradient


def _values(t: TensorBase | None) -> str:
    if t is None:
        return "None"
    values = t.detach().numpy().reshape(-1).tolist()
    return ", ".join(f"{v:.4g}" for v in values) if len(values) > 1 else f"{values[0]:.4g}"


def _label(t: TensorBase, name: str | None) -> str:
    lines = [name] if name else []
    lines.append(str(t._op) or ("leaf" if t.requires_grad else "constant"))
    lines.append(f"{t.shape} {t.dtype.name}")
    if t.numel() <= SMALL:
        lines.append(f"value {_values(t)}")
        if t.is_leaf:
            lines.append(f"grad {_values(t.grad)}")
    return "\\n".join(line.replace('"', '\\"') for line in lines)


def to_dot(root: TensorBase, names: Mapping[str, TensorBase] | Iterable[tuple[str, TensorBase]] | None = None) -> str:
    """DOT text of every tensor `root` depends on, inputs at the top.

    Each node shows its name (from `names`, e.g. ``dict(model.named_parameters())``), the op
    that made it, its shape and dtype, and for small tensors its value and gradient.

    >>> import autograd_core as ag
    >>> a = ag.tensor(2.0, requires_grad=True)
    >>> print(to_dot(a * 3, {"a": a}).splitlines()[0])
    digraph autograd {
    """
    by_id = {id(t): n for n, t in (names.items() if isinstance(names, Mapping) else names or ())}
    order = topological_order(root)
    ids = {id(t): f"t{i}" for i, t in enumerate(order)}
    lines = ["digraph autograd {", "  rankdir=TB;", '  node [shape=box, fontname="monospace"];']
    for t in order:
        style = ', style=filled, fillcolor="lightblue"' if t.is_leaf else ""
        lines.append(f'  {ids[id(t)]} [label="{_label(t, by_id.get(id(t)))}"{style}];')
    for t in order:
        lines.extend(f"  {ids[id(p)]} -> {ids[id(t)]};" for p in t._parents)
    return "\n".join([*lines, "}"]) + "\n"


def render(root: TensorBase, path: str | Path, names: Mapping[str, TensorBase] | None = None) -> Path:
    """Draw the graph of `root` into `path` (format from the suffix: .svg, .png, .pdf)."""
    dot = shutil.which("dot")
    if dot is None:
        raise RuntimeError(
            "rendering needs Graphviz's `dot` program, which is not on PATH: install it "
            "(`apt-get install graphviz`, `brew install graphviz` or `conda install graphviz`), "
            "or write viz.to_dot(...) to a file and render it elsewhere"
        )
    path = Path(path)
    subprocess.run(
        [dot, f"-T{path.suffix.lstrip('.') or 'svg'}", "-o", str(path)],
        input=to_dot(root, names),
        text=True,
        check=True,
    )
    return path
