"""The documentation site (docs/, mkdocs.yml): its examples run, the worked backend plugin of
tests/plugin_example/ works as the plugin page says, and the site builds with warnings as errors.

The pages' ```python blocks run in order in one namespace per page, their ```pycon blocks as
doctests, on the numpy backend (the pages say which backend they use). A block that includes a
file of the repository (``--8<--``, pymdownx.snippets) shows a module that its own tests import;
it is not run again here, where it would declare its primitives a second time.
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import autograd_core as ag
import backends
import nn
import nn.functional as F
import optim
from autograd_core import primitives

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PLUGIN = Path(__file__).resolve().parent / "plugin_example"
PLUGIN_NAME = "numpy_example"

FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
SNIPPET = re.compile(r'^--8<-- "(.+)"$', re.MULTILINE)  # pymdownx.snippets: a file of the repository, included
# pages whose examples need a backend beyond numpy
NEEDS = {"backends.md": "array_api_strict", "onnx.md": "ndonnx", "cubed.md": "cubed"}


def _blocks(page: Path, language: str) -> list[tuple[int, str]]:
    """(line number, code) of each fenced block of `language` on `page`, but those that include a file."""
    text = page.read_text()
    return [
        (text.count("\n", 0, m.start()) + 2, m.group(2))
        for m in FENCE.finditer(text)
        if m.group(1) == language and not SNIPPET.search(m.group(2))
    ]


def run_page(page: Path) -> dict:
    """Run `page`'s examples; returns the namespace its ```python blocks ran in."""
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    report: list[str] = []
    with backends.use("numpy"):
        for line, code in _blocks(page, "python"):
            exec(compile("\n" * (line - 1) + code, str(page), "exec"), namespace)
        text = "".join(code for _, code in _blocks(page, "pycon"))
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(doctest.DocTestParser().get_doctest(text, {}, page.name, str(page), 0), out=report.append)
    assert runner.failures == 0, "".join(report)
    return namespace


PAGES_WITH_EXAMPLES = sorted(
    p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if _blocks(p, "python") or _blocks(p, "pycon")
)


def test_included_files_exist():
    """Every file a page includes is in the repository (as `mkdocs build` checks, faster)."""
    included = [m.group(1) for page in DOCS.rglob("*.md") for m in SNIPPET.finditer(page.read_text())]
    assert {"examples/custom_op_swish.py", "tests/plugin_example/example_backend/__init__.py"} <= set(included)
    assert [path for path in included if not (ROOT / path).is_file()] == []


@pytest.mark.parametrize("page", PAGES_WITH_EXAMPLES)
def test_page_examples_run(page):
    if page in NEEDS:
        pytest.importorskip(NEEDS[page], reason=f"{page}'s examples use the {NEEDS[page]} backend")
    run_page(DOCS / page)


def test_first_training_loop_fits_the_line(capsys):
    """Getting started says the loop ends near weight 3 and bias 1."""
    namespace = run_page(DOCS / "getting-started.md")
    assert abs(namespace["model"].weight.item() - 3.0) < 1e-3
    assert abs(namespace["model"].bias.item() - 1.0) < 1e-3
    assert namespace["loss"].item() < 1e-6
    assert "weight 3.000, bias 1.000" in capsys.readouterr().out


def test_plugin_page_lists_every_backend_method_and_primitive():
    """Every public method of the Backend contract, and every primitive a backend may give a
    kernel of its own, appears on the plugin page (a new one must be documented there)."""
    methods = [
        n for n, v in vars(backends.Backend).items() if not n.startswith("_") and callable(getattr(backends.Backend, n))
    ]
    kernels = [n for n in primitives.__all__ if isinstance(getattr(primitives, n), primitives.Primitive)]
    page = (DOCS / "plugins.md").read_text()
    assert len(methods) > 15 and len(kernels) > 25
    assert [m for m in methods if f"[`{m}`][backends.contract.backend.Backend.{m}]" not in page] == []
    assert [k for k in kernels if f"`{k}`" not in page] == []


# --- the worked plugin -------------------------------------------------------------------------
def _entry_points_txt() -> tuple[dict, str]:
    """The example's [project] table and the entry_points.txt pip would write for it."""
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11")
    project = tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]
    text = "".join(
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in entries.items())
        for group, entries in project["entry-points"].items()
    )
    return project, text


def _register(folder: Path) -> Path:
    """Write the example's installed metadata into `folder` (a *.dist-info, as pip would)."""
    project, entry_points = _entry_points_txt()
    info = folder / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    (info / "entry_points.txt").write_text(entry_points)
    return folder


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """The example backend, registered through its entry point without pip."""
    assert PLUGIN_NAME not in backends.known()
    monkeypatch.syspath_prepend(str(PLUGIN))
    monkeypatch.syspath_prepend(str(_register(tmp_path)))
    return backends.get(PLUGIN_NAME)


def test_entry_point_group_is_the_documented_one():
    project, _ = _entry_points_txt()
    assert backends.ENTRY_POINT_GROUP == "autograd_core.backends"
    assert project["entry-points"][backends.ENTRY_POINT_GROUP] == {PLUGIN_NAME: "example_backend:create"}


def test_plugin_is_a_backend(plugin):
    assert PLUGIN_NAME in backends.known()
    assert type(plugin).__name__ == "ExampleBackend" and plugin.name == PLUGIN_NAME
    assert backends.get(PLUGIN_NAME) is plugin
    with pytest.raises(RuntimeError, match="CPU only"):
        backends.get(PLUGIN_NAME, "cuda")
    with backends.use(PLUGIN_NAME):
        assert ag.ones(3).backend is plugin


def test_plugin_kernel_runs_in_backward(plugin):
    """The gradient of `take` with repeated indices is a scatter-add: the plugin's own kernel,
    which the primitive finds for it (and for no other backend)."""
    kernel = sys.modules["example_backend"].index_add
    assert primitives.index_add.implementation(plugin) is kernel
    assert primitives.index_add.implementation(backends.get("numpy")) is not kernel
    calls = []
    primitives.index_add.kernel(PLUGIN_NAME)(lambda ns, *args: calls.append(args) or kernel(ns, *args))
    try:
        with backends.use(plugin):
            x = ag.tensor([1.0, 2.0, 3.0], dtype="float64", requires_grad=True)
            y = ag.take(x, ag.tensor([0, 2, 2, 1, 2]))
            (y * ag.tensor([1.0, 10.0, 100.0, 1000.0, 10000.0], dtype="float64")).sum().backward()
    finally:
        primitives.index_add.kernel(PLUGIN_NAME)(kernel)
    assert x.grad.backend is plugin
    assert x.grad.tolist() == [1.0, 1000.0, 10110.0]
    assert len(calls) == 1


OPS = {
    "arithmetic": lambda a, b: (a * b + a / (b * b + 1.0) - 3.0 * a).sum(),
    "exp_log": lambda a, b: (ag.exp(a) * ag.log(b * b + 1.0)).mean(),
    "matmul": lambda a, b: ag.sum(ag.matmul(a, ag.matrix_transpose(b)) ** 2),
    "softmax": lambda a, b: (ag.softmax(a, axis=-1) * b).sum(),
    "indexing": lambda a, b: (a[::-1, 1:] * b[:, :2]).sum() + ag.take(b, ag.tensor([0, 0, 2]), axis=1).sum(),
}


@pytest.mark.parametrize("op", OPS)
def test_plugin_ops_equal_numpy(plugin, op):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    results = []
    for backend in (plugin, backends.get("numpy")):
        with backends.use(backend):
            x, y = ag.tensor(a, requires_grad=True), ag.tensor(b, requires_grad=True)
            out = OPS[op](x, y)
            out.backward()
            assert out.backend is backend and x.grad.backend is backend
            results.append([out.detach().numpy(), x.grad.numpy(), y.grad.numpy()])
    for mine, reference in zip(*results):
        np.testing.assert_allclose(mine, reference, rtol=1e-12, atol=1e-12)


def _train(backend, steps: int = 5) -> list[float]:
    """A few AdamW steps of a small embedding MLP from seed 0: the losses."""
    with backends.use(backend):
        ag.manual_seed(0)
        model = nn.Sequential(nn.Embedding(10, 8), nn.Flatten(), nn.Linear(24, 16), nn.ReLU(), nn.Linear(16, 10))
        opt = optim.AdamW(model.parameters(), lr=1e-2)
        tokens = ag.tensor(np.random.default_rng(1).integers(0, 10, (32, 3)))
        targets = ag.tensor(np.random.default_rng(2).integers(0, 10, 32))
        losses = []
        for _ in range(steps):
            loss = F.cross_entropy(model(tokens), targets)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert model[0].weight.backend is backend
        return losses


def test_plugin_trains_as_numpy_does(plugin):
    losses = _train(plugin)
    assert losses[-1] < losses[0]
    np.testing.assert_allclose(losses, _train(backends.get("numpy")), rtol=1e-6)


def test_plugin_selected_by_environment(tmp_path):
    """A fresh process finds the plugin through its entry point when AUTOGRAD_BACKEND names it."""
    path = os.pathsep.join([str(_register(tmp_path)), str(PLUGIN), str(ROOT)])
    env = {**os.environ, "PYTHONPATH": path, "AUTOGRAD_BACKEND": PLUGIN_NAME}
    env.pop("AUTOGRAD_DEVICE", None)
    code = (
        "import backends, autograd_core as ag; x = ag.tensor([1.0, 2.0], requires_grad=True); "
        "(x * x).sum().backward(); print(backends.current().name, type(x.backend).__name__, x.grad.tolist())"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [PLUGIN_NAME, "ExampleBackend", "[2.0,", "4.0]"]


# --- the site ------------------------------------------------------------------------------------
def test_site_builds_strict(tmp_path):
    """`mkdocs build --strict` (as CI runs it): a broken reference or include fails."""
    for module in ("mkdocs", "mkdocstrings_handlers.python", "material"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[docs]')")
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    plugins = (site / "plugins" / "index.html").read_text()
    assert "ExampleBackend" in plugins and "autograd_core.backends" in plugins  # the included example
    reference = (site / "reference" / "autograd_core" / "index.html").read_text()
    for anchor in (
        "autograd_core.autodiff.tensor.Tensor",
        "autograd_core.autodiff.engine.grad",
        "autograd_core.transforms.compile.compile",
    ):
        assert f'id="{anchor}"' in reference
    for anchor in ("autograd_core.graph.registry.Primitive", "autograd_core.graph.registry.Primitive.kernel"):
        assert f'id="{anchor}"' in reference
    assert (
        'id="backends.contract.backend.Backend.asarray"' in (site / "reference" / "backends" / "index.html").read_text()
    )
