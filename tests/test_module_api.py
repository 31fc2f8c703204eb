"""The Module API as PyTorch 2.13 has it, checked side by side with torch.nn: containers
(Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict), registration and its errors,
the tree walks, train/eval, hooks (forward, forward pre, full backward, backward pre, state
dict), state_dict/load_state_dict, casts and moves, zero_grad, repr, dir and pickling.

Structure tests run once; the ones that touch tensor values take the `backend` fixture.
"""

from __future__ import annotations

import copy
import pickle
import re
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

import autograd_core as ag
import nn
import optim
from helpers import assert_close, host


# --- helpers --------------------------------------------------------------------------------------
def error_of(call) -> BaseException:
    """The exception `call` raises (the test fails when it raises none)."""
    with pytest.raises(Exception) as info:
        call()
    return info.value


def same_error(ours, theirs) -> str:
    """Both calls raise the same exception type; the message of ours, for further checks."""
    a, b = error_of(ours), error_of(theirs)
    assert type(a).__mro__[:-2] == type(b).__mro__[:-2] or isinstance(a, type(b)), (a, b)
    return str(a)


def twin(ours: nn.Module, theirs: torch.nn.Module) -> torch.nn.Module:
    """`theirs` holding our values, loaded strictly by name (float32)."""
    theirs.load_state_dict({k: torch.tensor(host(v)) for k, v in ours.state_dict().items()})
    return theirs


def tags(container) -> list:
    """The modules of a container as their `tag` attributes (ours and torch's alike)."""
    return [m.tag for m in container]


def tagged(cls, tag: int):
    m = cls()
    m.tag = tag
    return m


class TwoInputs(nn.Module):
    def forward(self, a, b):
        return a * b + a


class TorchTwoInputs(torch.nn.Module):
    def forward(self, a, b):
        return a * b + a


class TwoOutputs(nn.Module):
    def forward(self, a):
        return a * 2.0, a * a


class TorchTwoOutputs(torch.nn.Module):
    def forward(self, a):
        return a * 2.0, a * a


def model_pair():
    """A model of every container and several layers, ours and torch's with the same names."""

    def build(lib):
        net = lib.Module()
        net.seq = lib.Sequential(OrderedDict([("fc1", lib.Linear(4, 3)), ("act", lib.ReLU())]))
        net.blocks = lib.ModuleList([lib.Linear(3, 3), lib.LayerNorm(3)])
        net.heads = lib.ModuleDict({"b": lib.Linear(3, 1), "a": lib.Linear(3, 2)})
        net.norm = lib.BatchNorm1d(3)
        net.conv = lib.Sequential(lib.Conv2d(1, 2, 3), lib.BatchNorm2d(2), lib.Dropout(0.1))
        net.rnn = lib.LSTM(3, 2)
        net.embed = lib.Embedding(5, 3)
        net.attn = lib.MultiheadAttention(4, 2)
        net.extra = lib.ParameterList([lib.Parameter(ag.ones(2) if lib is nn else torch.ones(2))])
        net.table = lib.ParameterDict({"scale": lib.Parameter(ag.ones(1) if lib is nn else torch.ones(1))})
        net.shared = net.blocks[0]  # a module reachable by two names
        return net

    return build(nn), build(torch.nn)


# --- Sequential -----------------------------------------------------------------------------------
def test_sequential_takes_an_ordered_dict_by_name():
    ours = nn.Sequential(OrderedDict([("fc1", nn.Linear(2, 3)), ("act", nn.ReLU())]))
    theirs = torch.nn.Sequential(OrderedDict([("fc1", torch.nn.Linear(2, 3)), ("act", torch.nn.ReLU())]))
    assert len(ours) == 2
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()] == ["fc1", "act"]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.fc1 is ours[0]
    assert repr(ours) == repr(theirs)


def test_sequential_refuses_what_is_not_a_module():
    message = same_error(
        lambda: nn.Sequential(nn.Linear(2, 2), "relu"), lambda: torch.nn.Sequential(torch.nn.Linear(2, 2), "relu")
    )
    assert "is not a Module subclass" in message and "str" in message
    for build in (lambda: nn.ModuleList([1]), lambda: nn.ModuleDict({"a": 1}), lambda: nn.Sequential().append(3)):
        assert "is not a Module subclass" in str(error_of(build))


def test_sequential_slices_to_a_sequential_that_runs(backend):
    seq = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    head = seq[:-1]
    assert type(head) is nn.Sequential and len(head) == 2 and head[0] is seq[0]
    x = ag.randn(5, 3)
    assert_close(head(x), seq[1](seq[0](x)), "float32")
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    for index in (slice(None, -1), slice(1, None), slice(None, None, 2)):
        assert [n for n, _ in seq[index].named_children()] == [n for n, _ in theirs[index].named_children()]


def test_sequential_and_module_list_arithmetic_as_torch():
    a = nn.Sequential(tagged(nn.ReLU, 0), tagged(nn.Tanh, 1))
    ta = torch.nn.Sequential(tagged(torch.nn.ReLU, 0), tagged(torch.nn.Tanh, 1))
    assert tags(a + a) == tags(ta + ta) and type(a + a) is nn.Sequential
    assert tags(a * 2) == tags(ta * 2) and tags(2 * a) == tags(2 * ta)
    assert [n for n, _ in (a * 2).named_modules(remove_duplicate=False)] == [
        n for n, _ in (ta * 2).named_modules(remove_duplicate=False)
    ]
    same_error(lambda: a + nn.ModuleList(), lambda: ta + torch.nn.ModuleList())
    same_error(lambda: a * 0, lambda: ta * 0)
    assert a.pop(0).tag == ta.pop(0).tag and tags(a) == tags(ta)
    ml, tml = nn.ModuleList([tagged(nn.ReLU, 5)]), torch.nn.ModuleList([tagged(torch.nn.ReLU, 5)])
    assert tags(ml + [tagged(nn.Tanh, 6)]) == tags(tml + [tagged(torch.nn.Tanh, 6)])
    ml += [tagged(nn.Tanh, 7)]
    tml += [tagged(torch.nn.Tanh, 7)]
    assert tags(ml) == tags(tml)
    same_error(lambda: ml.extend(3), lambda: tml.extend(3))


# random sequences of container operations, replayed on ours and on torch's
OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["append", "insert", "del", "delslice", "set", "slice", "extend", "pop"]),
        st.integers(-6, 6),
        st.integers(-6, 6),
    ),
    max_size=12,
)


def replay(container, cls_relu, ops, counter) -> list:
    """Apply `ops` to `container`; what each step gave (a tag list, or the error type)."""
    seen = []
    for op, i, j in ops:
        n = len(container)
        try:
            if op == "append":
                container.append(tagged(cls_relu, next(counter)))
            elif op == "insert":
                if not 0 <= i <= n:  # torch's ModuleList.insert takes indices in [0, len] only
                    continue
                container.insert(i, tagged(cls_relu, next(counter)))
            elif op == "del":
                del container[i]
            elif op == "delslice":
                del container[i:j]
            elif op == "set":
                container[i] = tagged(cls_relu, next(counter))
            elif op == "slice":
                part = container[i:j]
                seen.append((type(part).__name__, tags(part), [k for k, _ in part.named_children()]))
            elif op == "extend":
                container.extend([tagged(cls_relu, next(counter)) for _ in range(2)])
            elif op == "pop":
                seen.append(container.pop(i).tag)
        except Exception as e:
            seen.append(type(e).__name__)
        seen.append((tags(container), [k for k, _ in container.named_children()], len(container)))
    return seen


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPERATIONS, kind=st.sampled_from(["ModuleList", "Sequential"]))
def test_random_container_operations_match_torch(ops, kind):
    ours = replay(getattr(nn, kind)(), nn.ReLU, ops, iter(range(10**6)))
    theirs = replay(getattr(torch.nn, kind)(), torch.nn.ReLU, ops, iter(range(10**6)))
    assert ours == theirs


def test_module_list_indexes_and_repr_as_torch():
    ours = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()])
    theirs = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)] + [torch.nn.ReLU()])
    assert repr(ours) == repr(theirs)
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList())
    same_error(lambda: ours[4], lambda: theirs[4])
    same_error(lambda: ours["0"], lambda: theirs["0"])
    assert ours[-1] is ours[3] and len(ours) == 4 and list(ours) == [ours[i] for i in range(4)]
    assert not any(name.isdigit() for name in dir(ours))


# --- ModuleDict ---------------------------------------------------------------------------------
def test_module_dict_as_torch():
    def run(lib):
        d = lib.ModuleDict({"b": tagged(lib.ReLU, 1), "a": tagged(lib.Tanh, 2)})
        log = [list(d.keys()), [m.tag for m in d.values()], [(k, m.tag) for k, m in d.items()], list(d), len(d)]
        d["c"] = tagged(lib.ReLU, 3)
        d.update([("d", tagged(lib.ReLU, 4))])
        d.update(OrderedDict([("a", tagged(lib.ReLU, 5))]))
        log += [list(d), d["a"].tag, "c" in d, d.pop("c").tag, "c" in d]
        del d["b"]
        log += [list(d), [n for n, _ in d.named_modules()], list(lib.ModuleDict({"z": lib.Linear(1, 1)}).state_dict())]
        for bad in (lambda: d.update(3), lambda: d.update([("x",)]), lambda: d.update([1])):
            log.append(type(error_of(bad)).__name__)
        d.clear()
        log.append(len(d))
        return log

    assert run(nn) == run(torch.nn)


# --- ParameterList and ParameterDict --------------------------------------------------------------
def test_parameter_list_as_torch(backend):
    ours = nn.ParameterList([ag.ones(2), nn.Parameter(ag.zeros(3))])
    theirs = torch.nn.ParameterList([torch.ones(2), torch.nn.Parameter(torch.zeros(3))])
    assert all(type(p) is nn.Parameter for p in ours) and len(ours) == 2
    ours.append(ag.ones(1))
    theirs.append(torch.ones(1))
    ours.extend([ag.ones(4)])
    theirs.extend([torch.ones(4)])
    ours[0] = ag.full((2,), 3.0)
    theirs[0] = torch.full((2,), 3.0)
    assert [(n, p.shape) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()
    ]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours[0].tolist() == [3.0, 3.0] and ours[-1] is ours[3]
    assert type(ours[1:]) is nn.ParameterList and len(ours[1:]) == len(theirs[1:]) == 3
    same_error(lambda: ours[9], lambda: theirs[9])
    same_error(lambda: ours.extend(ag.ones(2)), lambda: theirs.extend(torch.ones(2)))
    same_error(lambda: ours(ag.ones(1)), lambda: theirs(torch.ones(1)))
    assert "(0): Parameter containing: [" in repr(ours) and "of size 2]" in repr(ours)


def test_parameter_dict_as_torch(backend):
    ours = nn.ParameterDict({"w": ag.ones(2), "b": nn.Parameter(ag.zeros(1))})
    theirs = torch.nn.ParameterDict({"w": torch.ones(2), "b": torch.nn.Parameter(torch.zeros(1))})
    assert list(ours) == list(theirs) == ["b", "w"]  # a plain dict's keys are sorted, as torch does
    assert type(ours["w"]) is nn.Parameter
    ours["c"], theirs["c"] = ag.ones(3), torch.ones(3)
    assert ours.setdefault("d", None) is None and theirs.setdefault("d", None) is None
    assert list(ours.keys()) == list(theirs.keys())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert ours.get("zz", 5) == 5 and "c" in ours and len(ours) == len(theirs)
    assert ours.popitem()[0] == theirs.popitem()[0]
    assert ours.pop("c").shape == (3,) and theirs.pop("c").shape == (3,)
    merged, tmerged = ours | nn.ParameterDict({"e": ag.ones(1)}), theirs | torch.nn.ParameterDict({"e": torch.ones(1)})
    assert list(merged) == list(tmerged) and type(merged) is nn.ParameterDict
    assert list(ours.fromkeys(["x", "y"])) == list(theirs.fromkeys(["x", "y"]))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    same_error(lambda: ours[1], lambda: theirs[1])
    same_error(lambda: ours(1), lambda: theirs(1))
    copied = ours.copy()
    assert list(copied) == list(ours) and copied["w"] is ours["w"]
    ours.clear()
    assert len(ours) == 0 and list(ours.parameters()) == []


# --- assignment and registration ------------------------------------------------------------------
def test_assigning_a_plain_tensor_to_a_parameter_name_is_refused():
    ours, theirs = nn.Linear(2, 2), torch.nn.Linear(2, 2)
    message = same_error(
        lambda: setattr(ours, "weight", ag.zeros(2, 2)), lambda: setattr(theirs, "weight", torch.zeros(2, 2))
    )
    assert "as parameter 'weight'" in message and "Parameter or None expected" in message
    assert "weight" in dict(ours.named_parameters())
    ours.bias, theirs.bias = None, None
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()] == ["weight"]
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    assert ours.bias is None
    ours.bias = nn.Parameter(ag.zeros(2))  # a Parameter may come back under the name
    assert [n for n, _ in ours.named_parameters()] == ["weight", "bias"]


def test_assigning_a_non_module_to_a_child_name_is_refused():
    ours = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2))]))
    theirs = torch.nn.Sequential(OrderedDict([("fc", torch.nn.Linear(2, 2))]))
    message = same_error(lambda: setattr(ours, "fc", 3), lambda: setattr(theirs, "fc", 3))
    assert "as child module 'fc'" in message
    ours.fc, theirs.fc = None, None
    assert list(ours.named_children()) == [] and list(ours.state_dict()) == list(theirs.state_dict()) == []
    ours.fc = nn.ReLU()
    assert "fc" in dict(ours.named_children())


def test_a_buffer_takes_a_tensor_or_none():
    m, t = nn.Module(), torch.nn.Module()
    m.register_buffer("scale", ag.ones(2))
    t.register_buffer("scale", torch.ones(2))
    message = same_error(lambda: setattr(m, "scale", 3.0), lambda: setattr(t, "scale", 3.0))
    assert "tensor or None" in message
    m.scale = None
    assert list(m.state_dict()) == [] and m.scale is None


@pytest.mark.parametrize("method", ["register_parameter", "register_buffer", "add_module", "register_module"])
def test_registration_errors_as_torch(method):
    def value(lib, good: bool):
        if method == "register_parameter":
            return (nn.Parameter(ag.ones(1)) if lib is nn else torch.nn.Parameter(torch.ones(1))) if good else 3
        if method == "register_buffer":
            return (ag.ones(1) if lib is nn else torch.ones(1)) if good else 3
        return lib.ReLU() if good else 3

    def attempts(lib):
        m = lib.Module()
        m.existing = 1
        register = getattr(m, method)
        return [
            lambda: register("a.b", value(lib, True)),
            lambda: register("", value(lib, True)),
            lambda: register("existing", value(lib, True)),
            lambda: register(3, value(lib, True)),
            lambda: register("ok", value(lib, False)),
        ]

    for ours, theirs in zip(attempts(nn), attempts(torch.nn)):
        same_error(ours, theirs)
    m = nn.Module()
    getattr(m, method)("x", value(nn, True))
    assert "x" in dir(m)


def test_non_persistent_buffers_stay_out_of_the_state_dict():
    m, t = nn.BatchNorm1d(2), torch.nn.BatchNorm1d(2)
    m.register_buffer("cache", ag.zeros(3), persistent=False)
    t.register_buffer("cache", torch.zeros(3), persistent=False)
    assert list(m.state_dict()) == list(t.state_dict())
    assert [n for n, _ in m.named_buffers()] == [n for n, _ in t.named_buffers()]


# --- looking things up ------------------------------------------------------------------------------
def test_get_submodule_parameter_buffer_as_torch():
    ours, theirs = model_pair()
    assert ours.get_submodule("seq.fc1") is ours.seq[0]
    assert ours.get_submodule("") is ours
    assert ours.get_parameter("seq.fc1.weight") is ours.seq.fc1.weight
    assert ours.get_buffer("norm.running_mean") is ours.norm.running_mean
    for method, targets in [
        ("get_submodule", ["seq.nope", "seq.fc1.weight", "nope"]),
        ("get_parameter", ["seq.fc1.nope", "seq.fc1", "norm.running_mean", "nope.weight"]),
        ("get_buffer", ["norm.nope", "norm.weight", "seq.fc1.weight"]),
    ]:
        for target in targets:
            ours_error = error_of(lambda m=method, t=target: getattr(ours, m)(t))
            theirs_error = error_of(lambda m=method, t=target: getattr(theirs, m)(t))
            assert type(ours_error) is type(theirs_error) is AttributeError
            assert str(ours_error) == str(theirs_error)


def test_tree_walks_match_torch():
    ours, theirs = model_pair()
    for method, kwargs in [
        ("named_modules", {}),
        ("named_modules", {"remove_duplicate": False}),
        ("named_modules", {"prefix": "net"}),
        ("named_children", {}),
        ("named_parameters", {}),
        ("named_parameters", {"prefix": "p", "recurse": False}),
        ("named_parameters", {"remove_duplicate": False}),
        ("named_buffers", {}),
        ("named_buffers", {"remove_duplicate": False, "prefix": "b"}),
    ]:
        assert [n for n, _ in getattr(ours, method)(**kwargs)] == [n for n, _ in getattr(theirs, method)(**kwargs)], (
            method
        )
    assert len(list(ours.modules())) == len(list(theirs.modules()))
    assert len(list(ours.children())) == len(list(theirs.children()))
    assert len(list(ours.parameters())) == len(list(theirs.parameters()))
    assert len(list(ours.buffers(recurse=False))) == len(list(theirs.buffers(recurse=False)))
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_apply_visits_children_first_as_torch():
    ours, theirs = model_pair()
    names = {id(m): n for n, m in ours.named_modules()}
    tnames = {id(m): n for n, m in theirs.named_modules()}
    seen, tseen = [], []
    assert ours.apply(lambda m: seen.append(names[id(m)])) is ours
    theirs.apply(lambda m: tseen.append(tnames[id(m)]))
    assert seen == tseen


# --- train / eval ----------------------------------------------------------------------------------
def test_train_and_eval_go_through_each_childs_own_train():
    calls = []

    class Frozen(nn.Module):
        def train(self, mode: bool = True):
            calls.append(mode)
            return super().train(False)  # stays in eval mode, whatever is asked

    model = nn.Sequential(nn.Linear(2, 2), Frozen(), nn.Sequential(Frozen(), nn.Dropout()))
    assert model.train() is model and calls == [True, True]
    assert not model[1].training and not model[2][0].training and model[2][1].training and model.training
    assert model.eval() is model and calls == [True, True, False, False]
    assert not any(m.training for m in model.modules())
    same_error(lambda: model.train("yes"), lambda: torch.nn.Linear(1, 1).train("yes"))


def test_requires_grad_freezes_every_parameter():
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    assert model.requires_grad_(False) is model and not any(p.requires_grad for p in model.parameters())
    model.requires_grad_()
    assert all(p.requires_grad for p in model.parameters())


# --- forward hooks ----------------------------------------------------------------------------------
def hook_log(lib, layer, x, **call_kwargs):
    """The events of every kind of forward hook on `layer` called on `x`, and the output."""
    log = []
    handles = [
        layer.register_forward_pre_hook(lambda m, args: log.append(("pre", len(args)))),
        layer.register_forward_pre_hook(lambda m, args: log.append(("pre-first", len(args))), prepend=True),
        layer.register_forward_pre_hook(
            lambda m, args, kwargs: log.append(("pre-kwargs", sorted(kwargs))) or ((args[0] * 2, *args[1:]), kwargs),
            with_kwargs=True,
        ),
        layer.register_forward_hook(lambda m, args, out: log.append(("post", len(args)))),
        layer.register_forward_hook(lambda m, args, out: log.append(("post-first", 0)), prepend=True),
        layer.register_forward_hook(
            lambda m, args, kwargs, out: log.append(("post-kwargs", sorted(kwargs))) or out + 1, with_kwargs=True
        ),
    ]
    out = layer(x, **call_kwargs)
    for h in handles:
        h.remove()
    log.append(("after-remove", host(layer(x, **call_kwargs)).shape))
    return log, out


def test_forward_hooks_order_arguments_and_replacements_as_torch(backend):
    ours = nn.Linear(3, 2)
    theirs = twin(ours, torch.nn.Linear(3, 2))
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    log, out = hook_log(nn, ours, ag.tensor(x))
    tlog, tout = hook_log(torch.nn, theirs, torch.tensor(x))
    assert log == tlog
    assert_close(out, tout, "float32")


def test_forward_pre_hook_must_return_args_and_kwargs():
    ours, theirs = nn.Identity(), torch.nn.Identity()
    ours.register_forward_pre_hook(lambda m, a, k: 3, with_kwargs=True)
    theirs.register_forward_pre_hook(lambda m, a, k: 3, with_kwargs=True)
    same_error(lambda: ours(1), lambda: theirs(1))


def test_a_pre_hook_returning_one_value_gives_the_one_argument():
    layer = nn.Identity()
    layer.register_forward_pre_hook(lambda m, args: "replaced")
    assert layer("x") == "replaced"


def test_always_call_hooks_run_when_forward_raises():
    def run(lib):
        class Failing(lib.Module):
            def forward(self, x):
                raise ValueError("boom")

        log = []
        m = Failing()
        m.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)
        m.register_forward_hook(lambda mod, args, out: log.append("never"))
        with pytest.raises(ValueError, match="boom"):
            m(1)
        return log

    assert run(nn) == run(torch.nn) == [("always", None)]


def test_hook_handles_remove_once_and_work_as_context_managers():
    layer = nn.Identity()
    log = []
    with layer.register_forward_hook(lambda m, a, o: log.append(o)):
        layer(1)
    layer(2)
    handle = layer.register_forward_pre_hook(lambda m, a: log.append("pre"))
    handle.remove()
    handle.remove()
    layer(3)
    assert log == [1]


# --- full backward hooks --------------------------------------------------------------------------
def backward_log(lib, layer, inputs, weights, pre_scale=None, in_scale=None):
    """grad_input and grad_output each hook saw, and the inputs' gradients after backward."""
    log = []

    def full(m, grad_input, grad_output):
        log.append(("full", [None if g is None else host(g) for g in grad_input], [host(g) for g in grad_output]))
        return None if in_scale is None else tuple(None if g is None else g * in_scale for g in grad_input)

    def pre(m, grad_output):
        log.append(("pre", [host(g) for g in grad_output]))
        return None if pre_scale is None else tuple(g * pre_scale for g in grad_output)

    handles = [layer.register_full_backward_hook(full), layer.register_full_backward_pre_hook(pre)]
    out = layer(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    sum(((o * w).sum() for o, w in zip(outs, weights)), start=0.0).backward()
    for h in handles:
        h.remove()
    return log, [None if x.grad is None else host(x.grad) for x in inputs if hasattr(x, "grad")]


def assert_same_logs(ours, theirs):
    (log, grads), (tlog, tgrads) = ours, theirs
    assert [entry[0] for entry in log] == [entry[0] for entry in tlog]
    for entry, tentry in zip(log, tlog):
        for got, expected in zip(entry[1:], tentry[1:]):
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                assert (g is None) == (e is None)
                if g is not None:
                    assert_close(g, e, "float32")
    for g, e in zip(grads, tgrads):
        assert (g is None) == (e is None)
        if g is not None:
            assert_close(g, e, "float32")


@pytest.mark.parametrize("pre_scale, in_scale", [(None, None), (2.0, None), (None, 3.0), (2.0, 3.0)])
def test_full_backward_hooks_of_a_linear_layer_match_torch(backend, pre_scale, in_scale):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32)
    ours = nn.Linear(3, 2)
    theirs = twin(ours, torch.nn.Linear(3, 2))
    assert_same_logs(
        backward_log(nn, ours, [ag.tensor(x, requires_grad=True)], [ag.tensor(w)], pre_scale, in_scale),
        backward_log(torch.nn, theirs, [torch.tensor(x, requires_grad=True)], [torch.tensor(w)], pre_scale, in_scale),
    )


def test_full_backward_hooks_with_several_inputs_and_outputs_match_torch(backend):
    rng = np.random.default_rng(2)
    a, b, w1, w2 = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(4))
    assert_same_logs(
        backward_log(
            nn,
            TwoInputs(),
            [ag.tensor(a, requires_grad=True), ag.tensor(b, requires_grad=True)],
            [ag.tensor(w1)],
            2.0,
            3.0,
        ),
        backward_log(
            torch.nn,
            TorchTwoInputs(),
            [torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)],
            [torch.tensor(w1)],
            2.0,
            3.0,
        ),
    )
    # an input that needs no gradient gets None
    assert_same_logs(
        backward_log(nn, TwoInputs(), [ag.tensor(a, requires_grad=True), ag.tensor(b)], [ag.tensor(w1)]),
        backward_log(
            torch.nn, TorchTwoInputs(), [torch.tensor(a, requires_grad=True), torch.tensor(b)], [torch.tensor(w1)]
        ),
    )
    assert_same_logs(
        backward_log(nn, TwoOutputs(), [ag.tensor(a, requires_grad=True)], [ag.tensor(w1), ag.tensor(w2)], 0.5),
        backward_log(
            torch.nn,
            TorchTwoOutputs(),
            [torch.tensor(a, requires_grad=True)],
            [torch.tensor(w1), torch.tensor(w2)],
            0.5,
        ),
    )


def test_full_backward_hook_fires_at_the_outputs_when_no_input_needs_a_gradient(backend):
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32)
    ours = nn.Linear(3, 2)
    theirs = twin(ours, torch.nn.Linear(3, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_logs(
            backward_log(nn, ours, [ag.tensor(x)], [ag.tensor(w)]),
            backward_log(torch.nn, theirs, [torch.tensor(x)], [torch.tensor(w)]),
        )
    assert ours.weight.grad is not None


def test_full_backward_hooks_in_a_sequential_fire_last_layer_first(backend):
    def run(lib, make):
        model = lib.Sequential(lib.Linear(2, 2), lib.Tanh(), lib.Linear(2, 1))
        if lib is torch.nn:
            twin(make, model)
        log = []
        for i, m in enumerate(model):
            m.register_full_backward_hook(lambda mod, gi, go, i=i: log.append(i))
        x = ag.ones(3, 2, requires_grad=True) if lib is nn else torch.ones(3, 2, requires_grad=True)
        model(x).sum().backward()
        return log, model

    log, ours = run(nn, None)
    tlog, _ = run(torch.nn, ours)
    assert log == tlog == [2, 1, 0]


# --- state_dict and load_state_dict ----------------------------------------------------------------
def test_state_dict_keys_order_and_keep_vars_as_torch():
    ours, theirs = model_pair()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert list(ours.state_dict(prefix="net.")) == list(theirs.state_dict(prefix="net."))
    kept = ours.state_dict(keep_vars=True)
    assert kept["seq.fc1.weight"] is ours.seq.fc1.weight
    detached = ours.state_dict()["seq.fc1.weight"]
    assert type(detached) is not nn.Parameter and not detached.requires_grad
    destination = {}
    assert ours.state_dict(destination=destination) is destination and list(destination) == list(theirs.state_dict())


def test_state_dict_values_share_storage_with_the_parameters(backend):
    m = nn.Linear(2, 2)
    m.state_dict()["weight"].fill_(0)
    assert m.weight.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_state_dict_hooks_as_torch():
    def run(lib):
        log = []
        m = lib.Sequential(lib.Linear(1, 1))
        m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("pre", prefix, keep_vars)))
        m[0].register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("child-pre", prefix)))
        m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: log.append(("post", list(sd), prefix)))
        m[0].register_state_dict_post_hook(lambda mod, sd, prefix, meta: (sd.pop(prefix + "bias"), None)[1])
        log.append(list(m.state_dict(keep_vars=True)))
        h = m.register_load_state_dict_post_hook(lambda mod, keys: log.append(("load-post", list(keys.missing_keys))))
        m[0].register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, *rest: log.append(("load-pre", prefix, sorted(sd)))
        )
        one = ag.ones(1, 1) if lib is nn else torch.ones(1, 1)
        log.append(tuple(m.load_state_dict({"0.weight": one}, strict=False)))
        h.remove()
        bad = lib.Linear(1, 1)
        bad.register_state_dict_post_hook(lambda *a: {})
        log.append(type(error_of(bad.state_dict)).__name__)
        return log

    assert run(nn) == run(torch.nn)


def test_load_state_dict_reports_incompatible_keys_as_torch():
    ours, theirs = (
        nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)),
        torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2)),
    )
    sd = {k: v for k, v in ours.state_dict().items() if k != "0.bias"}
    sd["extra"] = ag.ones(1)
    tsd = {k: torch.tensor(host(v)) for k, v in sd.items()}
    result, tresult = ours.load_state_dict(sd, strict=False), theirs.load_state_dict(tsd, strict=False)
    missing, unexpected = result
    assert (missing, unexpected) == (tresult.missing_keys, tresult.unexpected_keys) == (["0.bias"], ["extra"])
    assert repr(result) == repr(tresult)
    assert repr(ours.load_state_dict(ours.state_dict())) == "<All keys matched successfully>"
    message = same_error(lambda: ours.load_state_dict(sd), lambda: theirs.load_state_dict(tsd))
    assert message == str(error_of(lambda: theirs.load_state_dict(tsd)))
    sd = {**ours.state_dict(), "0.weight": ag.ones(3, 2)}
    tsd = {k: torch.tensor(host(v)) for k, v in sd.items()}
    message = same_error(
        lambda: ours.load_state_dict(sd, strict=False), lambda: theirs.load_state_dict(tsd, strict=False)
    )
    torch_message = str(error_of(lambda: theirs.load_state_dict(tsd, strict=False)))
    assert message == re.sub(r"torch\.Size\(\[(.*?)\]\)", r"(\1)", torch_message)  # shapes print as tuples


def test_load_state_dict_accepts_checkpoints_without_num_batches_tracked(backend):
    ours, theirs = nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3)
    sd = {k: host(v) + 1.0 for k, v in ours.state_dict().items() if k != "num_batches_tracked"}
    assert (
        tuple(ours.load_state_dict(sd))
        == tuple(theirs.load_state_dict({k: torch.tensor(v) for k, v in sd.items()}))
        == ([], [])
    )
    assert_close(ours.running_var, np.full(3, 2.0), "float32")


def test_load_state_dict_copies_into_the_same_parameters(backend):
    source, target = nn.Linear(2, 2), nn.Linear(2, 2)
    weight = target.weight
    target.load_state_dict(source.state_dict())
    assert target.weight is weight and weight.requires_grad
    assert_close(weight, source.weight, "float32")
    target.load_state_dict({"weight": np.zeros((2, 2)), "bias": [1.0, 2.0]})  # arrays and lists too
    assert weight.dtype == ag.float32 and target.bias.tolist() == [1.0, 2.0]
    assigned = ag.ones(2, 2)
    target.load_state_dict({"weight": assigned, "bias": ag.zeros(2)}, assign=True)
    assert type(target.weight) is nn.Parameter and target.weight.requires_grad and target.weight is not weight


# --- casts and moves --------------------------------------------------------------------------------
def test_casts_keep_the_parameter_objects(float64_backend):
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    params = list(model.parameters())
    opt = optim.SGD(model.parameters(), lr=0.1)
    assert model.double() is model
    assert list(model.parameters()) == params and all(p.dtype == ag.float64 for p in params)
    assert model[1].running_mean.dtype == ag.float64 and model[1].num_batches_tracked.dtype == ag.int64
    model(ag.ones(4, 2, dtype="float64")).sum().backward()
    opt.step()
    assert all(p.dtype == ag.float64 for p in params)
    model.float()
    assert all(p.dtype == ag.float32 and p.grad.dtype == ag.float32 for p in params)
    model.to(ag.float64)
    assert params[0].dtype == ag.float64
    model.to(ag.ones(1, dtype="float32"))
    assert params[0].dtype == ag.float32
    model.to(params[0].device)
    model.to(float64_backend.name)
    model.cpu()
    assert list(model.parameters()) == params
    same_error(lambda: model.to(ag.int64), lambda: torch.nn.Linear(1, 1).to(torch.int64))


def test_half(backend):
    try:
        backend.dtype("float16")
    except TypeError:
        pytest.skip(f"{backend.name} has no float16")
    model = nn.Linear(2, 2)
    weight = model.weight
    assert model.half() is model and model.weight is weight and weight.dtype == ag.float16


def test_zero_grad_in_place_or_to_none(backend):
    model = nn.Linear(2, 1)
    model(ag.ones(3, 2)).sum().backward()
    grad = model.weight.grad
    model.zero_grad(set_to_none=False)
    assert model.weight.grad is grad and grad.tolist() == [[0.0, 0.0]]
    model.zero_grad()
    assert model.weight.grad is None


# --- inputs that are not tensors ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda: nn.Linear(2, 3), (4, 2)),
        (lambda: nn.LayerNorm(2), (4, 2)),
        (lambda: nn.BatchNorm1d(2), (4, 2)),
        (lambda: nn.Dropout(), (4, 2)),
        (lambda: nn.LSTM(2, 3), (5, 4, 2)),
        (lambda: nn.Conv2d(1, 1, 1), (1, 1, 2, 2)),
        (lambda: nn.Sequential(nn.Linear(2, 2)), (4, 2)),
    ],
)
def test_a_layer_called_on_an_array_says_to_make_a_tensor(backend, make, shape):
    layer = make()
    for raw in (np.ones(shape, dtype=np.float32), np.ones(shape, dtype=np.float32).tolist()):
        with pytest.raises(TypeError, match=r"takes a Tensor.*ag\.tensor\(\.\.\.\)"):
            layer(raw)


# --- repr, dir, pickling ----------------------------------------------------------------------------
def test_repr_as_torch():
    def build(lib):
        net = lib.Sequential(
            OrderedDict(
                [
                    ("blocks", lib.ModuleList([lib.Linear(2, 2) for _ in range(3)] + [lib.ReLU()])),
                    ("heads", lib.ModuleDict({"a": lib.Tanh(), "b": lib.Linear(2, 1)})),
                    ("empty", lib.Sequential()),
                ]
            )
        )
        return net

    assert repr(build(nn)) == repr(build(torch.nn))

    def two_lines(lib, child):
        class Two(lib.Module):
            def extra_repr(self):
                return "a=1\nb=2"

        m = Two()
        if child:
            m.child = lib.ReLU()
        return repr(m)

    for child in (False, True):
        assert two_lines(nn, child) == two_lines(torch.nn, child)


def test_dir_lists_parameters_buffers_and_children():
    ours, theirs = model_pair()
    names = set(dir(ours))
    assert {"seq", "norm", "forward", "state_dict"} <= names
    assert set(dir(ours.seq.fc1)) >= {"weight", "bias"} and "running_mean" in dir(ours.norm)
    assert {n for n in dir(theirs) if not n.startswith("_")} - names <= {
        n for n in dir(torch.nn.Module) if not n.startswith("_")
    }


def test_pickling_and_deepcopy_keep_the_structure(backend):
    ours, _ = model_pair()
    names = list(ours.state_dict())
    for copied in (pickle.loads(pickle.dumps(ours)), copy.deepcopy(ours)):
        assert list(copied.state_dict()) == names
        assert copied.shared is copied.blocks[0]
        assert type(copied.table) is nn.ParameterDict and list(copied.table) == ["scale"]
        assert len(copied.extra) == 1
        x = ag.ones(2, 4)
        assert_close(copied.seq(x), ours.seq(x), "float32")
        copied.seq.register_forward_hook(lambda m, a, o: None)
        copied.train()
