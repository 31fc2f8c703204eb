"""Higher-order gradients, freed graphs, in-place safety, hooks, anomaly mode and graph
drawing, on every backend."""

from __future__ import annotations

import gc
import math
import weakref

import numpy as np
import pytest

import autograd_core as ag
import nn
import nn.functional as F
import optim
from autograd_core import viz
from helpers import assert_close

X = np.array([0.3, 0.7, 1.4, 2.2])  # positive, away from kinks: every op below is smooth here

# (name, f, analytic second derivative)
SECOND_DERIVATIVES = [
    ("exp", ag.exp, np.exp),
    ("log", ag.log, lambda x: -1 / x**2),
    ("log1p", ag.log1p, lambda x: -1 / (1 + x) ** 2),
    ("sqrt", ag.sqrt, lambda x: -0.25 * x**-1.5),
    ("tanh", ag.tanh, lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    ("sigmoid", ag.sigmoid, lambda x: (s := 1 / (1 + np.exp(-x))) * (1 - s) * (1 - 2 * s)),
    ("relu", ag.relu, lambda x: 0 * x),
    ("abs", ag.abs, lambda x: 0 * x),
    ("erf", ag.erf, lambda x: -4 * x / math.sqrt(math.pi) * np.exp(-(x**2))),
    ("sin", ag.sin, lambda x: -np.sin(x)),
    ("cos", ag.cos, lambda x: -np.cos(x)),
    ("cube", lambda x: x**3, lambda x: 6 * x),
    ("rpow", lambda x: 2.0**x, lambda x: math.log(2) ** 2 * 2**x),
    ("square", lambda x: x * x, lambda x: 2 + 0 * x),
    ("reciprocal", lambda x: 1 / x, lambda x: 2 / x**3),
    # d2/dx2 log(e^x + e^2x) = e^3x / (e^x + e^2x)^2
    (
        "logsumexp",
        lambda x: ag.logsumexp(ag.stack([x, 2 * x]), 0),
        lambda x: np.exp(3 * x) / (np.exp(x) + np.exp(2 * x)) ** 2,
    ),
]


def leaf(values):
    return ag.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


@pytest.mark.parametrize(("name", "f", "second"), SECOND_DERIVATIVES, ids=[c[0] for c in SECOND_DERIVATIVES])
def test_second_derivatives_of_elementwise_ops(backend, name, f, second):
    x = leaf(X)
    (first,) = ag.grad(f(x).sum(), x, create_graph=True)
    if not first.requires_grad:  # piecewise-linear ops: the gradient is constant in x
        assert name in ("relu", "abs")
        hessian_diagonal = np.zeros_like(X)
    else:
        (hessian_diagonal,) = ag.grad(first.sum(), x)
    assert_close(hessian_diagonal, second(X))


def test_backward_create_graph_gives_differentiable_grads(backend):
    x = leaf([1.5])
    (x**4).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    (d2,) = ag.grad(x.grad.sum(), x)
    assert_close(d2, [12 * 1.5**2])


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, w: ag.tanh(x @ w).sum(axis=0) * ag.sigmoid(x).mean(),
        lambda x, w: F.cross_entropy(x @ w, ag.tensor([0, 1, 1])),
        lambda x, w: F.layer_norm(x @ w, 2) * ag.logsumexp(x, 1, keepdims=True),
        lambda x, w: ag.maximum(x @ w, 0.1) ** 2 + x[[0, 0, 2]] @ ag.abs(w),
    ],
    ids=["tanh_sigmoid", "cross_entropy", "layer_norm", "indexing_maximum"],
)
def test_gradgradcheck(backend, fn):
    rng = np.random.default_rng(0)
    x, w = leaf(rng.standard_normal((3, 4))), leaf(rng.standard_normal((4, 2)))
    assert ag.gradgradcheck(fn, [x, w])


def test_gradgradcheck_rejects_a_wrong_second_derivative(backend):
    from autograd_core.graph.tensor_base import record

    def constant(x):
        return x.detach() if isinstance(x, ag.Tensor) else x

    def bad_square(x):  # right first derivative, but its VJP treats x as a constant
        return record("bad_square", x.array * x.array, x.backend, (x,), (lambda ns, g, out, x: 2 * g * constant(x),))

    with pytest.raises(ag.GradcheckError):
        ag.gradgradcheck(bad_square, [leaf([0.5, 1.5])])


def test_hessian_vector_product_matches_pytorch(backend):
    torch = pytest.importorskip("torch")
    ag.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)).double()
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((5, 4)), rng.integers(0, 3, 5)
    vs = [rng.standard_normal(p.shape) for p in model.parameters()]

    params = list(model.parameters())
    grads = ag.grad(F.cross_entropy(model(ag.tensor(x)), ag.tensor(y)), params, create_graph=True)
    hvp = ag.grad(sum((g * ag.tensor(v)).sum() for g, v in zip(grads, vs)), params)

    twin = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()
    twin.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in model.state_dict().items()})
    loss = torch.nn.functional.cross_entropy(twin(torch.from_numpy(x)), torch.from_numpy(y))
    t_grads = torch.autograd.grad(loss, list(twin.parameters()), create_graph=True)
    t_hvp = torch.autograd.grad(
        sum((g * torch.from_numpy(v)).sum() for g, v in zip(t_grads, vs)), list(twin.parameters())
    )
    for ours, theirs in zip(hvp, t_hvp):
        assert_close(ours, theirs)


def test_grad_arguments(backend):
    x, unused = leaf([1.0, 2.0]), leaf([3.0])
    y = x * x
    (g,) = ag.grad(y, x, grad_outputs=ag.tensor([1.0, 10.0], dtype="float64"), retain_graph=True)
    assert g.tolist() == [2.0, 40.0] and x.grad is None  # returned, not accumulated
    with pytest.raises(RuntimeError, match="allow_unused"):
        ag.grad(y.sum(), [x, unused], retain_graph=True)
    assert ag.grad(y.sum(), [x, unused], allow_unused=True)[1] is None


# --- freed graphs ------------------------------------------------------------------------------
def test_second_backward_needs_retain_graph(backend):
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_retained_graph_accumulates_on_a_second_backward(backend):
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_backward_releases_saved_tensors(backend):
    x = leaf([1.0, 2.0])
    hidden = x.exp()
    saved = weakref.ref(hidden)
    try:
        saved_array = weakref.ref(hidden.array)
    except TypeError:  # this library's arrays take no weak references
        saved_array = None
    y = (hidden * hidden).sum()
    del hidden
    gc.collect()
    assert saved() is not None  # the graph holds it until backward
    y.backward()
    assert saved() is None
    assert saved_array is None or saved_array() is None


# --- in-place safety ---------------------------------------------------------------------------
def test_in_place_ops_bump_the_version(backend):
    t = ag.tensor([1.0, 2.0, 3.0])
    for change in (
        lambda t: t.__iadd__(1),
        lambda t: t.__isub__(1),
        lambda t: t.__imul__(2),
        lambda t: t.__itruediv__(2),
        lambda t: t.__setitem__(0, 5.0),
        lambda t: t.fill_(1.0),
        lambda t: t.zero_(),
        lambda t: t.copy_(ag.tensor([1.0, 2.0, 3.0])),
    ):
        before = t._version
        change(t)
        assert t._version == before + 1
    assert t.tolist() == [1.0, 2.0, 3.0]


def test_modified_saved_tensor_is_refused_at_backward(backend):
    a = leaf([1.0, 2.0])
    b = a * 2
    c = b * b
    b += 1
    with pytest.raises(RuntimeError, match=r"backward of multiply .* version 1, the forward saw version 0"):
        c.sum().backward()


def test_in_place_on_an_unsaved_tensor_is_fine_and_differentiable(backend):
    a = leaf([1.0, 2.0])
    b = a * 3
    b += a  # add saves nothing: b is now 4a
    b.sum().backward()
    assert a.grad.tolist() == [4.0, 4.0]


def test_in_place_on_a_leaf_that_requires_grad(backend):
    w = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        w += 1
    with ag.no_grad():
        w -= 0.5
    assert w.tolist() == [0.5, 1.5] and w.is_leaf and w.requires_grad


def test_setitem_is_differentiable(backend):
    x, v = leaf([1.0, 2.0, 3.0, 4.0]), leaf([10.0])
    y = x * 1
    y[1:3] = v
    y[0] = 0.0
    assert y.tolist() == [0.0, 10.0, 10.0, 4.0]
    (y * ag.tensor([1.0, 2.0, 3.0, 4.0], dtype="float64")).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 4.0] and v.grad.tolist() == [5.0]


def test_optimizer_step_invalidates_graphs_that_saved_parameters(backend):
    layer = nn.Linear(2, 1)
    loss = (layer(ag.ones(1, 2)) ** 2).sum()
    loss.backward(retain_graph=True)
    optim.SGD(layer.parameters(), lr=0.1).step()
    with pytest.raises(RuntimeError, match="in-place"):
        loss.backward()


# --- hooks -------------------------------------------------------------------------------------
def test_hooks_see_and_replace_gradients(backend):
    x = leaf([1.0, 2.0])
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    doubler = x.register_hook(lambda g: g * 2)
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and x.grad.tolist() == [6.0, 6.0]
    doubler.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_hook_on_an_intermediate_changes_what_flows_on(backend):
    x = leaf([1.0, 2.0])
    h = x * 2
    h.register_hook(lambda g: g * 0)
    (h * h + x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_retain_grad(backend):
    x = leaf([1.0, 2.0])
    h = x * x
    h.retain_grad()
    (h * 3).sum().backward()
    assert h.retains_grad and h.grad.tolist() == [3.0, 3.0]
    plain = x * 2
    (plain * 2).sum().backward()
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert plain.grad is None


def test_retained_gradient_is_stored_after_every_hook_as_in_pytorch(backend):
    x = leaf([1.0, 2.0])
    h = x * 2
    h.retain_grad()
    h.register_hook(lambda g: g * 10)  # registered after retain_grad, still runs before the store
    h.sum().backward()
    assert h.grad.tolist() == [10.0, 10.0] and x.grad.tolist() == [20.0, 20.0]


# --- anomaly mode ------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the nan is the point
def test_detect_anomaly_names_the_op_and_the_line(backend):
    x = leaf([0.0, 1.0])
    with ag.detect_anomaly():
        y = ag.sqrt(x) * 0.0  # d sqrt/dx at 0 is inf; times 0 gives nan
        with pytest.raises(RuntimeError, match=r"backward of sqrt produced nan(.|\n)*test_engine_depth.py"):
            y.sum().backward()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_without_anomaly_mode_nan_flows_silently(backend):
    x = leaf([0.0, 1.0])
    (ag.sqrt(x) * 0.0).sum().backward()
    assert math.isnan(x.grad.tolist()[0])


# --- graph pictures ----------------------------------------------------------------------------
def test_dot_of_the_worked_example(backend):
    a, b, c, f = (leaf(v) for v in (2.0, -3.0, 10.0, -2.0))
    loss = (a * b + c) * f
    loss.backward(retain_graph=True)
    dot = viz.to_dot(loss, {"a": a, "b": b, "c": c, "f": f})
    assert dot.startswith("digraph autograd {") and dot.rstrip().endswith("}")
    labels = dict(line.strip().split(" [label=") for line in dot.splitlines() if "[label=" in line)
    node = {label.split("\\n")[0].strip('"'): name for name, label in labels.items()}
    assert "value 2\\ngrad 6" in labels[node["a"]] and "grad -4" in labels[node["b"]]
    assert "() float64" in labels[node["f"]]
    ops = [label.split("\\n")[0].strip('"') for label in labels.values()]
    assert sorted(ops) == ["a", "add", "b", "c", "f", "multiply", "multiply"]
    edges = {tuple(line.strip().rstrip(";").split(" -> ")) for line in dot.splitlines() if "->" in line}
    assert len(edges) == 6 and (node["a"], node["b"]) not in edges
    assert {(node["a"], n) for n in labels} & edges and {(node["f"], n) for n in labels} & edges


def test_render_says_how_to_install_graphviz(backend, monkeypatch, tmp_path):
    x = leaf([1.0])
    monkeypatch.setattr(viz.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="install"):
        viz.render(x * 2, tmp_path / "g.svg")
