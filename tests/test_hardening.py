"""Bad input and edge cases that must give PyTorch's behaviour or a clear error, on every
backend (the hardening issue's cases that are fixed; threads and checkpoints have their own
files)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import autograd_core as ag
import nn
import nn.functional as F
import optim


def test_out_of_range_indices_raise_on_every_backend(backend):
    t = ag.asarray([1.0, 2.0, 3.0])
    for bad in (lambda: t[3], lambda: t[-4], lambda: ag.take(t, ag.asarray([0, 3])), lambda: t[ag.asarray([5])]):
        with pytest.raises(IndexError):
            bad()
    assert [v.item() for v in t] == [1.0, 2.0, 3.0]
    assert 5.0 not in t and 2.0 in t
    assert np.asarray(t).dtype == np.float32


def test_iterating_a_0d_tensor_is_an_error(backend):
    with pytest.raises(TypeError, match="0-d"):
        list(ag.asarray(1.0))


def test_embedding_refuses_a_negative_index(backend):
    layer = nn.Embedding(4, 2)
    with pytest.raises(IndexError, match="negative"):
        layer(ag.asarray([0, -1]))
    with pytest.raises(IndexError):
        layer(ag.asarray([4]))
    with pytest.raises(TypeError, match="integers"):
        layer(ag.asarray([0.0, 1.0]))


def test_a_hook_returning_another_shape_is_refused(backend):
    w = ag.asarray([1.0, 2.0])
    w.requires_grad_()
    w.register_hook(lambda g: ag.ones((3, 2)))
    with pytest.raises(RuntimeError, match="returned"):
        (w * 2).sum().backward()


def test_a_float32_parameter_stays_float32_after_a_float64_input(float64_backend):
    w = ag.asarray([1.0, 2.0])
    w.requires_grad_()
    opt = optim.SGD([w], lr=0.1)
    (w * ag.asarray([0.5, 0.25], dtype=ag.float64)).sum().backward()
    opt.step()
    assert w.dtype == ag.float32 and w.grad.dtype == ag.float32


def test_loading_optimizer_state_of_another_shape_is_refused(backend):
    small, large = nn.Linear(2, 1), nn.Linear(2, 3)
    opt = optim.SGD(small.parameters(), lr=0.1, momentum=0.9)
    F.mse_loss(small(ag.ones((1, 2))), ag.zeros((1, 1))).backward()
    opt.step()
    other = optim.SGD(large.parameters(), lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match="parameter 0 has shape"):
        other.load_state_dict(opt.state_dict())


def test_anomaly_mode_checks_what_a_hook_returns(backend):
    x = ag.asarray([1.0, 2.0])
    x.requires_grad_()
    x.register_hook(lambda g: g * math.nan)  # on a leaf: no later VJP would see the nan
    with ag.detect_anomaly(), pytest.raises(RuntimeError, match="a hook .* produced nan"):
        (x * 3).sum().backward()


@pytest.mark.parametrize("labels", [[0.0, 1.0], [True, False]], ids=["float", "bool"])
def test_cross_entropy_says_class_indices_must_be_integers(backend, labels):
    with pytest.raises(TypeError, match="class indices must be integers"):
        F.cross_entropy(ag.zeros((2, 3)), ag.asarray(labels))


@pytest.mark.parametrize("layer", [lambda: nn.Linear(3, 2), lambda: nn.LayerNorm(3)], ids=["linear", "layer_norm"])
def test_a_layer_fed_another_float_dtype_says_so(float64_backend, layer):
    with pytest.raises(TypeError, match="float64 but the weights are float32"):
        layer()(ag.ones((2, 3), dtype=ag.float64))


def test_empty_tensors_behave_as_in_pytorch(backend):
    with pytest.raises(ValueError, match="ambiguous"):
        ag.zeros((0, 3)).reshape(-1, 0)
    assert ag.max(ag.zeros((0, 3)), axis=1).shape == (0,)
    assert ag.logsumexp(ag.zeros((2, 0)), axis=1).tolist() == [-math.inf, -math.inf]
    assert ag.softmax(ag.zeros((2, 0)), axis=1).shape == (2, 0)
    assert nn.Linear(0, 3)(ag.zeros((2, 0))).shape == (2, 3)
    with pytest.raises(ValueError, match="0-d tensors cannot be joined"):
        ag.concat([ag.asarray(1.0), ag.asarray(2.0)])


def test_mixing_backends_is_one_clear_error_everywhere(backend):
    import backends

    other = "numpy" if backend.name != "numpy" else "array_api_strict"
    with backends.use(other):
        foreign_index, foreign_mask, foreign = ag.asarray([0, 1]), ag.asarray([True, False]), ag.ones(2)
    x = ag.ones(2)
    for mixed in (
        lambda: x[foreign_index],
        lambda: x[foreign_mask],
        lambda: ag.take(x, foreign_index),
        lambda: ag.where(foreign_mask, x, 0.0),
        lambda: x.copy_(foreign),
        lambda: F.cross_entropy(ag.zeros((2, 3)), foreign_index),
    ):
        with pytest.raises(RuntimeError, match="move"):
            mixed()


# (ops that are not views: a view follows its base's in-place changes in PyTorch, which the
# hardening issue's views item is about)
IN_PLACE_AFTER_USE = [
    ("add then multiply in place", lambda b: b + 0, lambda b: b.__imul__(2.0)),
    (
        "square root then add in place",
        lambda b: ag.sqrt(b) if isinstance(b, ag.Tensor) else b.sqrt(),
        lambda b: b.__iadd__(5.0),
    ),
    ("sum then assign", lambda b: b.sum(), lambda b: b.__setitem__(0, 7.0)),
]


@pytest.mark.parametrize(("name", "use", "change"), IN_PLACE_AFTER_USE, ids=[c[0] for c in IN_PLACE_AFTER_USE])
def test_an_op_recorded_before_an_in_place_change_keeps_the_old_graph(float64_backend, name, use, change):
    torch = pytest.importorskip("torch")
    grads = []
    for make in (lambda v: ag.asarray(v, dtype=ag.float64), lambda v: torch.tensor(v)):
        x = make([1.0, 2.0])
        x.requires_grad_()
        b = x * 3
        used = use(b)
        change(b)
        (used.sum() * 10 + (b * b).sum()).backward()
        grads.append(np.asarray(x.grad.tolist()))
    np.testing.assert_allclose(grads[0], grads[1])


def test_in_place_changes_of_views_reach_their_base_and_back(backend):
    b = ag.zeros(3)
    v = b[0:2]
    v += 1
    assert b.tolist() == [1.0, 1.0, 0.0] and v.tolist() == [1.0, 1.0]
    w = ag.zeros((2, 3))
    w.T.copy_(ag.ones((3, 2)))
    assert w.tolist() == [[1.0] * 3] * 2
    r = ag.zeros(4)
    r.reshape(2, 2)[0, 1] = 5.0
    assert r.tolist() == [0.0, 5.0, 0.0, 0.0]
    m = ag.zeros((2, 3))
    row = m[1]
    tail = row[1:]
    tail += 2
    assert m.tolist() == [[0.0, 0.0, 0.0], [0.0, 2.0, 2.0]] and row.tolist() == [0.0, 2.0, 2.0]
    c = ag.zeros(3)
    u = c[1:]
    c += 1
    assert u.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="broadcast view"):
        ag.broadcast_to(ag.zeros(1), (3,)).__iadd__(1.0)


VIEW_CHANGES = [
    ("slice times three", lambda b: b[0:2].__imul__(3.0)),
    ("transpose assigned", lambda b: b.reshape(2, 2).T.__setitem__(0, 7.0)),
    ("row of a reshape plus a tensor", lambda b: b.reshape(2, 2)[1].__iadd__(b[0:2] + 0)),
]


@pytest.mark.parametrize(("name", "change"), VIEW_CHANGES, ids=[c[0] for c in VIEW_CHANGES])
def test_gradients_after_an_in_place_change_of_a_view_match_pytorch(float64_backend, name, change):
    torch = pytest.importorskip("torch")
    weights = [1.0, 2.0, 3.0, 4.0]
    grads = []
    for make in (lambda v: ag.asarray(v, dtype=ag.float64), lambda v: torch.tensor(v)):
        x = make([0.5, -1.0, 2.0, 3.0])
        x.requires_grad_()
        b = x * 2
        early = b + 0  # recorded before the change: keeps the old graph
        change(b)
        ((b * make(weights)).sum() + early.sum()).backward()
        grads.append(np.asarray(x.grad.tolist()))
    np.testing.assert_allclose(grads[0], grads[1])


def test_backward_gives_inf_without_library_warnings(backend):
    """A rule the user never wrote does not warn (numpy would warn at 0 ** -0.5 in pow's VJP);
    the gradient is inf as on every backend, and anomaly mode is what reports it."""
    import warnings

    x = ag.tensor([0.0, 4.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x**0.5).sum().backward()
    assert x.grad.tolist() == [float("inf"), 0.25]
    x.grad = None
    with ag.detect_anomaly(), warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeError, match="non-finite|nan|inf"):
            (x**0.5).sum().backward()


@pytest.mark.parametrize("reduce", [ag.max, ag.min, ag.logsumexp], ids=["max", "min", "logsumexp"])
def test_a_reduction_whose_rule_reads_its_input_checks_it(backend, reduce):
    """max, min and logsumexp read their input at backward besides their output: an input
    changed in place after the forward is refused, as in PyTorch, not a silently wrong gradient."""
    if not backend.mutable:
        pytest.skip(f"{backend.name} arrays cannot be changed in place")
    y = ag.tensor([1.0, 3.0, 2.0], requires_grad=True) * 1.0
    z = reduce(y)
    y[1] = 7.0
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        z.backward()


# (what is changed under no_grad, how, and the loss after): the change is invisible to autograd,
# as in PyTorch, so the tensor keeps its graph and the gradient flows through it to `x`
CHANGED_UNDER_NO_GRAD = {
    "add to a product": (lambda x: x * 2, lambda y: y.__iadd__(1.0), lambda y: (y * y).sum()),
    "assign into a product": (lambda x: x * 3, lambda y: y.__setitem__(0, 5.0), lambda y: (y * y).sum()),
    "scale a view": (lambda x: (x * 2)[1:], lambda v: v.__imul__(4.0), lambda v: (v * v).sum()),
}


@pytest.mark.parametrize("name", CHANGED_UNDER_NO_GRAD)
def test_an_in_place_change_under_no_grad_keeps_the_graph(float64_backend, name):
    torch = pytest.importorskip("torch")
    if not float64_backend.mutable:
        pytest.skip(f"{float64_backend.name} arrays cannot be changed in place")
    make, change, loss = CHANGED_UNDER_NO_GRAD[name]
    grads = []
    for module, no_grad in ((ag, ag.no_grad), (torch, torch.no_grad)):
        x = module.tensor([1.0, 2.0, 3.0], dtype=module.float64, requires_grad=True)
        y = make(x)
        with no_grad():
            change(y)
        assert y.requires_grad and not y.is_leaf
        loss(y).backward()
        grads.append(x.grad.tolist())
    np.testing.assert_allclose(grads[0], grads[1])


def test_an_output_changed_under_no_grad_is_refused_at_backward(backend):
    """exp's rule reads its output: a change of it under no_grad is caught, as in PyTorch."""
    if not backend.mutable:
        pytest.skip(f"{backend.name} arrays cannot be changed in place")
    z = ag.exp(ag.tensor([1.0, 2.0], requires_grad=True) * 1.0)
    with ag.no_grad():
        z += 1.0
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        z.sum().backward()
