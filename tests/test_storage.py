"""Storage as PyTorch shares it, on every backend, with torch as the oracle: ``detach()``,
``.data``, ``state_dict()``'s values and PyTorch's views (indexing, reshape, transposes,
expand, unsqueeze/squeeze, narrow, unfold, diagonal, split/chunk/unbind) see each other's
in-place changes; the version counter refuses a gradient a change made stale; ``.grad``
accumulates into the tensor already there; ``.to``/``.cpu()``/``device=`` name the backend's
own devices."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

import autograd_core as ag
import nn
from helpers import assert_close, host

START = np.arange(24.0).reshape(2, 3, 4) / 7 - 1


def pair(requires_grad: bool = False):
    ours = ag.tensor(START, dtype="float64", requires_grad=requires_grad)
    theirs = torch.tensor(START, dtype=torch.float64, requires_grad=requires_grad)
    return ours, theirs


# Views PyTorch defines, each as it is called on both libraries (`t` is either tensor).
VIEWS = {
    "index": lambda t: t[1],
    "slice": lambda t: t[:, 1:, ::2],
    "narrow": lambda t: t.narrow(2, 1, 2),
    "select": lambda t: t.select(1, 0),
    "reshape": lambda t: t.reshape(6, 4),
    "view": lambda t: t.view(-1),
    "flatten": lambda t: t.flatten(),
    "transpose": lambda t: t.transpose(0, 2),
    "permute": lambda t: t.permute(2, 0, 1),
    "mT": lambda t: t.mT,
    "movedim": lambda t: t.movedim(0, -1),
    "unsqueeze": lambda t: t.unsqueeze(1),
    "squeeze": lambda t: t[:1].squeeze(0),
    "unflatten": lambda t: t.unflatten(2, (2, 2)),
    "diagonal": lambda t: t.diagonal(0, 1, 2),
    "diagonal_offset": lambda t: t.diagonal(1, 1, 2),
    "split": lambda t: t.split(2, 2)[1],
    "chunk": lambda t: t.chunk(3, 1)[2],
    "unbind": lambda t: t.unbind(2)[3],
    "unfold_apart": lambda t: t.unfold(2, 2, 2),
    "detach": lambda t: t.detach(),
    "data": lambda t: t.data,
}


@pytest.mark.parametrize("name", VIEWS)
def test_a_view_and_its_base_see_each_others_in_place_changes(float64_backend, name):
    make = VIEWS[name]
    (ours, theirs), (base_ours, base_theirs) = pair(), pair()
    make(ours).mul_(-3).add_(0.5)
    make(theirs).mul_(-3).add_(0.5)
    assert_close(ours, theirs.numpy())
    view_ours, view_theirs = make(base_ours), make(base_theirs)
    base_ours.add_(10)
    base_theirs.add_(10)
    assert_close(view_ours, view_theirs.numpy())


# torch refuses an in-place change of one of several views made at once under autograd; we
# allow it, and check its gradient against the single view of the same elements
SAME_ELEMENTS = {
    "split": lambda t: t.narrow(2, 2, 2),
    "chunk": lambda t: t.narrow(1, 2, 1),
    "unbind": lambda t: t.select(2, 3),
}


@pytest.mark.parametrize("name", [n for n in VIEWS if n not in ("detach", "data")])
def test_gradients_through_an_in_place_change_of_a_view(float64_backend, name):
    leaf_ours, leaf_theirs = pair(requires_grad=True)
    weights = np.cos(np.arange(24.0)).reshape(2, 3, 4)
    results = []
    for leaf, lib, make in ((leaf_ours, ag, VIEWS[name]), (leaf_theirs, torch, SAME_ELEMENTS.get(name, VIEWS[name]))):
        base = leaf * 2
        view = make(base)
        view.mul_(view.detach() + 1.5)  # a change whose gradient reads the view's old values
        (base * lib.tensor(weights, dtype=lib.float64)).sum().backward()
        results.append(base)
    assert_close(results[0], results[1].detach().numpy())
    assert_close(leaf_ours.grad, leaf_theirs.grad.numpy())


@pytest.mark.parametrize(
    "make", [lambda t: t[:1].expand(4, 3, 4), lambda t: t.unfold(2, 3, 1)], ids=["expand", "unfold_overlapping"]
)
def test_writing_through_a_view_whose_elements_overlap_is_refused(float64_backend, make):
    """torch refuses the first; the second it leaves undefined (its docs), and we refuse it too."""
    ours, theirs = pair()
    with pytest.raises(RuntimeError):
        theirs[:1].expand(4, 3, 4).mul_(2)
    with pytest.raises(RuntimeError, match="write several elements to one"):
        make(ours).mul_(2)
    assert_close(ours, START)


VIEW_CHAIN = st.lists(st.sampled_from(["index", "transpose", "unsqueeze", "narrow", "detach", "data", "flatten"]))
CHAIN = {
    "index": lambda t: t[-1] if t.ndim > 1 else t[1:],
    "transpose": lambda t: t.transpose(0, -1),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "narrow": lambda t: t.narrow(0, 0, max(t.shape[0] - 1, 1)),
    "detach": lambda t: t.detach(),
    "data": lambda t: t.data,
    "flatten": lambda t: t.flatten(),
}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chain=VIEW_CHAIN.filter(lambda c: len(c) <= 5), value=st.floats(-4, 4))
def test_any_chain_of_views_writes_through_to_its_base_as_in_torch(float64_backend, chain, value):
    ours, theirs = pair()
    views = []
    for t in (ours, theirs):
        for name in chain:
            t = CHAIN[name](t)
        views.append(t)
    views[0].add_(value)
    views[1].add_(value)
    assert_close(ours, theirs.numpy())
    views[0].copy_(ag.ones(views[0].shape, dtype="float64") * 2)
    views[1].copy_(torch.ones(views[1].shape, dtype=torch.float64) * 2)
    assert_close(ours, theirs.numpy())


def test_a_change_through_detach_counts_in_the_version_backward_checks(float64_backend):
    for leaf in pair(requires_grad=True):
        base = leaf * 1
        out = (base * base).sum()
        base.detach().add_(1)
        with pytest.raises(RuntimeError, match="modified by an in-?place operation"):
            out.backward()


def test_a_change_through_data_is_not_seen_by_autograd(float64_backend):
    """Neither library refuses the backward; PyTorch's then reads the changed memory, ours the
    values the forward saw (the gradient of what was computed)."""
    ours, theirs = pair(requires_grad=True)
    for leaf in (ours, theirs):
        out = (leaf * leaf).sum()
        before = leaf._version
        leaf.data.mul_(2)
        assert leaf._version == before
        out.backward()
    assert_close(ours, theirs.detach().numpy())
    assert_close(ours.grad, 2 * START)
    assert ours.requires_grad and isinstance(ours.data, ag.Tensor) and not ours.data.requires_grad


def test_data_assignment_takes_a_tensor_and_says_what_else_to_do(backend):
    p = nn.Parameter(ag.ones(2, 3))
    p.data = ag.zeros(4)
    assert p.shape == (4,) and isinstance(p, nn.Parameter) and p.requires_grad
    with pytest.raises(TypeError, match="takes a Tensor.*asarray"):
        p.data = np.zeros(4)
    other = "numpy" if backend.name != "numpy" else "array_api_strict"
    with pytest.raises(TypeError, match=r"\.to\(t\.device\)"):
        p.data = ag.zeros(4).to(other)


def test_the_habits_of_training_scripts_write_into_the_model(backend):
    """DCGAN's init, a target network's copy, an EMA, a frozen state dict edit."""
    torch.manual_seed(0)
    source, target = nn.Linear(3, 2), nn.Linear(3, 2)
    source.weight.data.normal_(0.0, 0.02)
    assert float(abs(host(source.weight)).max()) < 0.2 and source.weight.requires_grad
    for t, s in zip(target.parameters(), source.parameters()):
        t.data.copy_(s.data)
    assert_close(target.weight, host(source.weight), dtype="float32")
    with ag.no_grad():
        for t, s in zip(target.parameters(), source.parameters()):
            t.mul_(0.5).add_(s.detach() * 0.5)
    assert_close(target.weight, host(source.weight), dtype="float32")
    sd = target.state_dict()
    sd["weight"].fill_(0)
    sd["bias"].add_(1)
    assert not host(target.weight).any()
    assert_close(target.bias, host(source.bias) + 1, dtype="float32")
    x = ag.ones((1, 3))
    target(x).sum().backward()  # the parameters are still leaves of the graph
    assert target.weight.grad is not None


def test_grad_accumulates_into_the_tensor_already_there(float64_backend):
    ours, theirs = pair(requires_grad=True)
    held = []
    for leaf in (ours, theirs):
        (leaf * leaf).sum().backward()
        held.append(leaf.grad)
        (leaf * 3).sum().backward()
        assert leaf.grad is held[-1]
    assert_close(held[0], held[1].numpy())
    assert_close(held[0], 2 * START + 3)


@pytest.mark.parametrize(
    "move",
    [
        lambda t: t.to(t.device),
        lambda t: t.to(device=t.device),
        lambda t: t.to("cpu"),
        lambda t: t.cpu(),
        lambda t: t.to(t),
        lambda t: t.to(t.device, ag.float64),
        lambda t: ag.zeros(2, device="cpu"),
        lambda t: ag.zeros(2, device=t.device),
        lambda t: ag.ones_like(t, device="cpu"),
    ],
    ids=["device", "device=", "cpu-string", "cpu()", "tensor", "device-dtype", "zeros-cpu", "zeros-device", "like"],
)
def test_devices_round_trip_on_the_backends_own_devices(backend, move):
    x = ag.ones(2, requires_grad=True)
    moved = move(x)
    assert moved.device == x.device and moved.backend is x.backend and moved.device.type == "cpu"
    (moved * x).sum().backward() if moved.requires_grad else None


def test_moving_to_another_backend_and_back_is_differentiable(backend):
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    other = "numpy" if backend.name != "numpy" else "array_api_strict"
    there = x.to(other)
    assert there.device != x.device and there.backend.name == other
    back = there.to(x.device)
    (back * back).sum().backward()
    assert back.device == x.device
    assert_close(x.grad, [2.0, 4.0], dtype="float32")


def test_an_unknown_device_is_refused_by_name(backend):
    with pytest.raises((ValueError, RuntimeError)):
        ag.ones(2).to("no-such-device")


LAYOUT_CASES = {
    "transposed": lambda t: t.transpose(0, 2),
    "stepped": lambda t: t[:, :, ::2],
    "expanded": lambda t: t[:1].expand(3, 3, 4),
    "row": lambda t: t[1],
    "diagonal": lambda t: t.diagonal(0, 1, 2),
    "unfolded": lambda t: t.unfold(2, 2, 2),
    "moved": lambda t: t.movedim(2, 0)[1:],
}


@pytest.mark.parametrize("name", LAYOUT_CASES)
def test_reshape_copies_view_refuses_and_contiguous_copies_where_torch_does(float64_backend, name):
    make = LAYOUT_CASES[name]
    ours, theirs = pair()
    a, b = make(ours), make(theirs)
    assert a.is_contiguous() == b.is_contiguous()
    flat_ours, flat_theirs = a.reshape(-1), b.reshape(-1)
    flat_ours.add_(100)
    flat_theirs.add_(100)
    assert_close(ours, theirs.numpy())  # the base changed where torch's reshape was a view
    try:
        b.view(-1)
    except RuntimeError:
        with pytest.raises(RuntimeError, match=r"use \.reshape"):
            a.view(-1)
    else:
        assert a.view(-1).shape == tuple(b.view(-1).shape)
    a.contiguous().mul_(0)
    b.contiguous().mul_(0)
    assert_close(ours, theirs.numpy())


# Every in-place method of both libraries, with arguments each takes (`lib` is ag or torch).
def _like(lib, values):
    return lib.tensor(np.broadcast_to(values, (3, 4)).copy(), dtype=lib.float64)


IN_PLACE = {
    "abs_": lambda lib: (),
    "add_": lambda lib: (_like(lib, np.linspace(-1, 1, 4)),),
    "addcdiv_": lambda lib: (_like(lib, 2.0), _like(lib, np.arange(1.0, 5.0))),
    "addcmul_": lambda lib: (_like(lib, 0.5), _like(lib, np.arange(4.0))),
    "clamp_": lambda lib: (-0.5, 0.5),
    "clip_": lambda lib: (-0.25, None),
    "copy_": lambda lib: (_like(lib, np.arange(4.0)),),
    "div_": lambda lib: (3.0,),
    "exp_": lambda lib: (),
    "fill_": lambda lib: (1.5,),
    "lerp_": lambda lib: (_like(lib, 1.0), 0.25),
    "masked_fill_": lambda lib: (lib.tensor(np.resize([True, False, True, True, False], (3, 4))), -7.0),
    "mul_": lambda lib: (_like(lib, np.arange(4.0)),),
    "neg_": lambda lib: (),
    "pow_": lambda lib: (2,),
    "relu_": lambda lib: (),
    "sigmoid_": lambda lib: (),
    "sqrt_": lambda lib: (),
    "sub_": lambda lib: (1.0,),
    "tanh_": lambda lib: (),
    "zero_": lambda lib: (),
}
RANDOM_IN_PLACE = {
    "normal_": (0.0, 0.02),
    "uniform_": (-0.1, 0.1),
    "exponential_": (50.0,),
    "log_normal_": (-5.0, 0.5),
}
# samplers whose draws repeat (discrete) or spread without bound: checked by their support
RANDOM_IN_PLACE_SUPPORT = {
    "bernoulli_": ((0.5,), lambda v: set(np.unique(v)) == {0.0, 1.0}),
    "geometric_": ((0.5,), lambda v: v.min() >= 1 and np.all(v == np.round(v))),
    "random_": ((0, 10), lambda v: v.min() >= 0 and v.max() < 10 and len(np.unique(v)) == 10),
    "cauchy_": ((0.0, 1.0), lambda v: np.all(np.isfinite(v)) and len(np.unique(v)) > 500),
}


def test_the_in_place_table_is_every_in_place_method():
    methods = {n for n in dir(ag.Tensor) if n.endswith("_") and not n.startswith("_")} - {"requires_grad_", "detach_"}
    assert methods == set(IN_PLACE) | set(RANDOM_IN_PLACE) | set(RANDOM_IN_PLACE_SUPPORT)


VIAS = ("transposed_row", "detach", "data")
# each method through one of the views in the default run (taken in turn), through all with -m slow
SAMPLED = [
    pytest.param(name, via, marks=() if j == i % len(VIAS) else pytest.mark.slow)
    for i, name in enumerate(IN_PLACE)
    for j, via in enumerate(VIAS)
]


@pytest.mark.parametrize(("name", "via"), SAMPLED)
def test_every_in_place_method_writes_through_views_as_in_torch(float64_backend, name, via):
    make = {"transposed_row": lambda t: t[1].mT, "detach": lambda t: t[1].detach().mT, "data": lambda t: t.data[1].mT}
    ours, theirs = pair()
    for t, lib in ((ours, ag), (theirs, torch)):
        getattr(make[via](t), name)(*(a.mT if getattr(a, "ndim", 0) == 2 else a for a in IN_PLACE[name](lib)))
    assert_close(ours, theirs.numpy(), equal_nan=True)


@pytest.mark.parametrize("name", [n for n in IN_PLACE if n not in ("copy_", "fill_", "zero_", "masked_fill_")])
def test_every_in_place_method_through_a_view_has_torchs_gradient(float64_backend, name):
    grads = []
    for lib in (ag, torch):
        leaf = lib.tensor(START, dtype=lib.float64, requires_grad=True)
        base = leaf * 1.5
        getattr(base[1], name)(*IN_PLACE[name](lib))
        (base * lib.tensor(np.cos(START), dtype=lib.float64)).sum().backward()
        grads.append(leaf.grad)
    assert_close(grads[0], grads[1].numpy(), equal_nan=True)


@pytest.mark.parametrize("name", RANDOM_IN_PLACE)
def test_random_in_place_methods_write_through_data(backend, name):
    layer = nn.Linear(30, 20)
    getattr(layer.weight.data, name)(*RANDOM_IN_PLACE[name])
    values = host(layer.weight)
    assert layer.weight.requires_grad and layer.weight.is_leaf
    assert 0 < values.std() < 0.1 and len(np.unique(values)) > 500


@pytest.mark.parametrize("name", RANDOM_IN_PLACE_SUPPORT)
def test_random_in_place_samplers_write_their_support_through_data(backend, name):
    layer = nn.Linear(30, 20)
    args, in_support = RANDOM_IN_PLACE_SUPPORT[name]
    getattr(layer.weight.data, name)(*args)
    assert layer.weight.requires_grad and layer.weight.is_leaf
    assert in_support(host(layer.weight))


@pytest.mark.parametrize("optimizer", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_an_optimizer_step_reaches_the_views_of_the_parameters(backend, optimizer):
    """``sd = model.state_dict()`` before a step holds the stepped values after it, as in PyTorch."""
    import optim

    model = nn.Linear(3, 2)
    sd, data, detached = model.state_dict(), model.weight.data, model.weight.detach()
    opt = getattr(optim, optimizer)(model.parameters(), lr=0.1)
    model(ag.ones((4, 3))).sum().backward()
    held = model.weight.grad
    opt.step()
    for view in (sd["weight"], data, detached):
        assert_close(view, host(model.weight), dtype="float32")
    opt.zero_grad(set_to_none=False)
    assert model.weight.grad is held and not host(held).any()


def test_a_torch_device_object_names_the_same_place(backend):
    x = ag.ones(2)
    assert x.to(torch.device("cpu")) is x and ag.zeros(2, device=torch.device("cpu")).device == x.device
