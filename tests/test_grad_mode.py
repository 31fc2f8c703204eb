"""Grad mode, anomaly mode and the autograd entry points as PyTorch 2.13 has them, each habit run
on `autograd_core` and on torch side by side with the same assertions (torch is the oracle):
``set_grad_enabled`` as a call, a ``with`` block and a decorator; ``no_grad``/``enable_grad``
with and without parentheses, on generators; ``inference_mode``; ``set_detect_anomaly`` and
``detect_anomaly(check_nan=...)``; ``backward(inputs=...)``; ``grad(materialize_grads=...)``;
``detach_()``; reading ``.grad`` of a non-leaf; ``requires_grad`` of non-leaves. Every mode
must be back as it was after a block left by an exception."""

from __future__ import annotations

import contextlib
import threading
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import autograd_core as ag
from autograd_core.autodiff import engine
from helpers import assert_close, host

# torch's names where ours are flat (`ag.grad`, `ag.set_detect_anomaly`): one namespace per framework
TORCH = SimpleNamespace(
    **{
        name: getattr(torch, name)
        for name in (
            "tensor",
            "no_grad",
            "enable_grad",
            "set_grad_enabled",
            "is_grad_enabled",
            "inference_mode",
            "is_inference_mode_enabled",
            "is_anomaly_enabled",
            "is_anomaly_check_nan_enabled",
            "sqrt",
            "zeros",
        )
    },
    grad=torch.autograd.grad,
    backward=torch.autograd.backward,
    set_detect_anomaly=torch.autograd.set_detect_anomaly,
    detect_anomaly=torch.autograd.detect_anomaly,
)
OURS = SimpleNamespace(
    **{name: getattr(ag, name) for name in vars(TORCH) if name != "backward"}, backward=engine.backward
)
FRAMEWORKS = pytest.mark.parametrize("m", [OURS, TORCH], ids=["ours", "torch"])
NON_LEAF_GRAD = "is not a leaf Tensor is being accessed"


@pytest.fixture(autouse=True)
def _modes_are_back():
    """Every test starts and must end recording, outside inference and anomaly mode."""
    for m in (OURS, TORCH):
        assert m.is_grad_enabled() and not m.is_inference_mode_enabled() and not m.is_anomaly_enabled()
    yield
    for m in (OURS, TORCH):
        assert m.is_grad_enabled() and not m.is_inference_mode_enabled() and not m.is_anomaly_enabled()


def recorded(m) -> bool:
    """Whether an op made now on a tensor that requires grad is recorded."""
    return (m.tensor([1.0], requires_grad=True) * 2).requires_grad


# --- set_grad_enabled, no_grad, enable_grad -------------------------------------------------------


@FRAMEWORKS
def test_set_grad_enabled_called_takes_effect_at_once(m):
    m.set_grad_enabled(False)
    try:
        assert not m.is_grad_enabled() and not recorded(m)
    finally:
        m.set_grad_enabled(True)
    assert recorded(m)


@FRAMEWORKS
@pytest.mark.parametrize("outer", [True, False])
def test_set_grad_enabled_as_a_block_restores_the_mode_before_it(m, outer):
    with m.set_grad_enabled(outer):
        for mode in (False, True):
            with m.set_grad_enabled(mode):
                assert m.is_grad_enabled() is mode and recorded(m) is mode
            assert m.is_grad_enabled() is outer
    assert m.is_grad_enabled()


@FRAMEWORKS
@pytest.mark.parametrize("block", ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode"])
def test_a_block_left_by_an_exception_restores_the_mode(m, block):
    make = {
        "no_grad": m.no_grad,
        "enable_grad": m.enable_grad,
        "set_grad_enabled": lambda: m.set_grad_enabled(False),
        "inference_mode": m.inference_mode,
    }[block]
    with m.no_grad():
        with pytest.raises(KeyError), make():
            raise KeyError("inside")
        assert not m.is_grad_enabled() and not m.is_inference_mode_enabled()
    assert m.is_grad_enabled()


@FRAMEWORKS
def test_a_call_of_set_grad_enabled_inside_a_block_lasts_until_the_block_ends(m):
    with m.no_grad():
        m.set_grad_enabled(True)
        assert recorded(m)
        with m.enable_grad():
            m.set_grad_enabled(False)
            assert not recorded(m)
        assert recorded(m)
    assert m.is_grad_enabled()


@FRAMEWORKS
@pytest.mark.parametrize("mode", [False, True])
def test_set_grad_enabled_as_a_decorator(m, mode):
    with m.set_grad_enabled(not mode):

        @m.set_grad_enabled(mode)
        def inside():
            return m.is_grad_enabled(), recorded(m)

        assert m.is_grad_enabled() is not mode  # decorating changes nothing
        assert inside() == (mode, mode)
        assert m.is_grad_enabled() is not mode


@FRAMEWORKS
@pytest.mark.parametrize("name, mode", [("no_grad", False), ("enable_grad", True)])
def test_no_grad_and_enable_grad_decorate_with_and_without_parentheses(m, name, mode):
    make = getattr(m, name)

    @make()
    def called():
        return recorded(m)

    @make
    def bare():
        return recorded(m)

    with m.set_grad_enabled(not mode):
        assert called() is mode and bare() is mode
        assert m.is_grad_enabled() is not mode
    assert bare.__name__ == "bare"


@FRAMEWORKS
def test_a_decorated_function_that_raises_restores_the_mode(m):
    @m.no_grad()
    def fails():
        raise ValueError("inside")

    with pytest.raises(ValueError):
        fails()
    assert m.is_grad_enabled()


@FRAMEWORKS
@pytest.mark.parametrize("name, mode", [("no_grad", False), ("enable_grad", True), ("inference_mode", False)])
def test_a_decorated_generator_runs_each_step_in_the_mode(m, name, mode):
    @getattr(m, name)()
    def steps():
        received = yield m.is_grad_enabled()
        yield received, m.is_grad_enabled()
        try:
            yield m.is_grad_enabled()
        except KeyError:
            yield "caught", m.is_grad_enabled()
        return "done"

    with m.set_grad_enabled(not mode):
        gen = steps()
        assert next(gen) is mode and m.is_grad_enabled() is not mode
        assert gen.send("sent") == ("sent", mode) and m.is_grad_enabled() is not mode
        assert next(gen) is mode
        assert gen.throw(KeyError("k")) == ("caught", mode) and m.is_grad_enabled() is not mode
        with pytest.raises(StopIteration) as stop:
            next(gen)
        assert stop.value.value == "done" and m.is_grad_enabled() is not mode


@FRAMEWORKS
def test_closing_a_decorated_generator_closes_it_in_the_mode(m):
    seen = []

    @m.no_grad()
    def steps():
        try:
            yield 1
        finally:
            seen.append(m.is_grad_enabled())

    gen = steps()
    next(gen)
    gen.close()
    assert seen == [False] and m.is_grad_enabled()


# --- inference_mode -------------------------------------------------------------------------------


@FRAMEWORKS
def test_inference_mode_records_nothing_and_says_so(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    with m.inference_mode():
        y = x * 2
        assert m.is_inference_mode_enabled() and not m.is_grad_enabled()
        with m.inference_mode(False):  # leaves inference mode and records, even inside no_grad
            assert not m.is_inference_mode_enabled() and recorded(m)
            with m.no_grad(), m.inference_mode(False):
                assert m.is_grad_enabled()
        assert m.is_inference_mode_enabled() and not m.is_grad_enabled()
    assert not y.requires_grad and y.is_leaf
    with m.inference_mode(False):
        assert not m.is_inference_mode_enabled() and recorded(m)


@FRAMEWORKS
def test_inference_mode_decorates_with_and_without_parentheses(m):
    @m.inference_mode()
    def called():
        return m.is_inference_mode_enabled(), recorded(m)

    @m.inference_mode
    def bare():
        return m.is_inference_mode_enabled(), recorded(m)

    @m.inference_mode(False)
    def off():
        return m.is_inference_mode_enabled(), recorded(m)

    assert called() == (True, False) and bare() == (True, False) and off() == (False, True)


# --- random nestings against torch ----------------------------------------------------------------

MODES = st.one_of(
    st.sampled_from([("no_grad",), ("enable_grad",)]),
    st.tuples(st.sampled_from(["set_grad_enabled", "call_set_grad_enabled", "inference_mode"]), st.booleans()),
)


def enter(m, stack: contextlib.ExitStack, mode: tuple) -> None:
    name, *args = mode
    if name == "call_set_grad_enabled":  # the function form: lasts until the enclosing block ends
        m.set_grad_enabled(*args)
    else:
        stack.enter_context(getattr(m, name)(*args))


def observe(m) -> tuple[bool | None, bool, bool]:
    """The modes and whether an op is recorded; grad mode outside inference mode alone: inside,
    under enable_grad, torch says it is on (and records nothing), we that it is off."""
    inference = m.is_inference_mode_enabled()
    return None if inference else m.is_grad_enabled(), inference, recorded(m)


@settings(max_examples=150, deadline=None)
@given(modes=st.lists(MODES, max_size=6), fail=st.booleans())
def test_random_nestings_of_modes_match_torch(modes, fail):
    """At every depth of a random nesting the modes and `requires_grad` of an op's result are
    torch's; after the nesting (left normally or by an exception) everything is back."""
    ours, theirs = seen = [], []
    for m, trace in zip((OURS, TORCH), seen):
        with contextlib.suppress(KeyError), m.enable_grad(), contextlib.ExitStack() as stack:
            for mode in modes:
                enter(m, stack, mode)
                trace.append(observe(m))
            if fail:
                raise KeyError("unwind")
        trace.append(observe(m))
    assert ours == theirs
    assert ours[-1] == (True, False, True)


def test_modes_are_per_thread():
    """A thread inside no_grad leaves another recording, and a new thread starts recording."""
    entered, release, seen = threading.Event(), threading.Event(), []

    def evaluate():
        with ag.no_grad(), ag.inference_mode():
            entered.set()
            release.wait(10)

    thread = threading.Thread(target=evaluate)
    thread.start()
    entered.wait(10)
    seen.append(observe(OURS))
    with ag.no_grad(), ag.set_detect_anomaly(True):
        fresh = threading.Thread(target=lambda: seen.append((*observe(OURS), ag.is_anomaly_enabled())))
        fresh.start()
        fresh.join()
    release.set()
    thread.join()
    assert seen == [(True, False, True), (True, False, True, False)]


# --- anomaly mode ---------------------------------------------------------------------------------


@FRAMEWORKS
def test_set_detect_anomaly_as_a_call_a_block_and_a_decorator(m):
    m.set_detect_anomaly(True)
    try:
        assert m.is_anomaly_enabled() and m.is_anomaly_check_nan_enabled()
    finally:
        m.set_detect_anomaly(False)
    assert not m.is_anomaly_enabled()
    with m.set_detect_anomaly(True, check_nan=False):
        assert m.is_anomaly_enabled() and not m.is_anomaly_check_nan_enabled()
        with pytest.raises(KeyError), m.set_detect_anomaly(False):
            assert not m.is_anomaly_enabled()
            raise KeyError("inside")
        assert m.is_anomaly_enabled() and not m.is_anomaly_check_nan_enabled()
    assert not m.is_anomaly_enabled() and m.is_anomaly_check_nan_enabled()


def test_anomaly_switches_decorate_too():
    """Not in PyTorch (whose anomaly switches are not decorators), as grad mode's are."""

    @ag.set_detect_anomaly(True)
    def switched():
        return ag.is_anomaly_enabled()

    @ag.detect_anomaly(check_nan=False)
    def detecting():
        return ag.is_anomaly_enabled(), ag.is_anomaly_check_nan_enabled()

    assert not ag.is_anomaly_enabled() and switched() and not ag.is_anomaly_enabled()
    assert detecting() == (True, False) and ag.is_anomaly_check_nan_enabled()


@FRAMEWORKS
@pytest.mark.parametrize("check_nan", [True, False])
@pytest.mark.filterwarnings("ignore:Error detected in SqrtBackward0")  # torch's traceback of the forward
def test_detect_anomaly_checks_nan_only_when_asked(m, check_nan):
    x = m.tensor([0.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"), m.detect_anomaly(check_nan=check_nan):
        assert m.is_anomaly_enabled() and m.is_anomaly_check_nan_enabled() is check_nan
        y = m.sqrt(x) * 0.0  # 0 * inf: a nan in the gradient of sqrt's input
        if check_nan:
            with pytest.raises(RuntimeError, match="(?i)nan"):
                y.sum().backward()
        else:
            y.sum().backward()
            assert np.isnan(host(x.grad)).all()
    assert not m.is_anomaly_enabled()


# --- backward(inputs=...), grad(materialize_grads=...) --------------------------------------------


def pair(m, values, **options):
    return m.tensor(np.asarray(values, dtype=np.float32), **options)


@pytest.mark.parametrize("which", ["a", "m", "a_and_m", "b_single"])
def test_backward_with_inputs_fills_only_their_grad(backend, which):
    results = {}
    for name, m in (("ours", OURS), ("torch", TORCH)):
        a, b = pair(m, [1.0, 2.0], requires_grad=True), pair(m, [3.0, -4.0], requires_grad=True)
        mid = a * b
        mid.retain_grad()
        loss = (mid * mid).sum()
        inputs = {"a": [a], "m": [mid], "a_and_m": (a, mid), "b_single": b}[which]
        loss.backward(inputs=inputs, retain_graph=True)
        loss.backward(inputs=inputs)  # accumulates
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # neither the inputs' grads nor the retained one warn
            results[name] = [None if t.grad is None else host(t.grad) for t in (a, b, mid)]
    for ours, theirs in zip(results["ours"], results["torch"]):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert_close(ours, theirs, "float32")


@FRAMEWORKS
def test_backward_of_several_tensors_with_inputs(m):
    a, b = m.tensor([1.0, 2.0], requires_grad=True), m.tensor(3.0, requires_grad=True)
    m.backward([(a * b).sum(), a * b], [None, m.tensor([1.0, 10.0])], inputs=[b])
    assert a.grad is None and b.grad.item() == pytest.approx(3.0 + 21.0)


@FRAMEWORKS
def test_backward_refuses_empty_inputs_and_inputs_that_need_no_grad(m):
    a = m.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="empty"):
        (a * 2).sum().backward(inputs=[])
    with pytest.raises(RuntimeError):
        (a * 2).sum().backward(inputs=[m.tensor([1.0])])
    assert a.grad is None


@FRAMEWORKS
def test_backward_errors(m):
    a = m.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError):
        (a * 2).backward()  # non-scalar without a gradient
    with pytest.raises(RuntimeError):
        m.tensor([1.0]).sum().backward()  # nothing requires grad
    with pytest.raises(RuntimeError):
        m.grad((a * 2).sum(), m.tensor([1.0]))  # an input that requires no grad


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_materializes_zeros_for_unused_inputs(backend, create_graph):
    results = {}
    for name, m in (("ours", OURS), ("torch", TORCH)):
        p, q = pair(m, 1.5, requires_grad=True), pair(m, [1.0, 2.0], requires_grad=True)
        results[name] = m.grad(p * p, (p, q), create_graph=create_graph, materialize_grads=True)
    for ours, theirs in zip(results["ours"], results["torch"]):
        assert ours.shape == tuple(theirs.shape) and ours.requires_grad == theirs.requires_grad
        assert_close(ours, theirs, "float32")


@FRAMEWORKS
def test_grad_without_materialize_grads(m):
    p, q = m.tensor(1.5, requires_grad=True), m.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError):  # allow_unused defaults to materialize_grads
        m.grad(p * p, (p, q), retain_graph=True)
    with pytest.raises(ValueError, match="allow_unused"):
        m.grad(p * p, (p, q), allow_unused=False, materialize_grads=True)
    dp, dq = m.grad(p * p, (p, q), allow_unused=True)
    assert dp.item() == 3.0 and dq is None


# --- detach_, .grad of a non-leaf, requires_grad of non-leaves ------------------------------------


def test_detach_in_place_makes_a_leaf_and_keeps_earlier_ops_flowing_to_the_old_graph(backend):
    results = {}
    for name, m in (("ours", OURS), ("torch", TORCH)):
        a = pair(m, [1.0, 2.0], requires_grad=True)
        b = a * a
        c = (b * 3).sum()  # recorded before detach_: its gradient still reaches `a` through b's graph
        assert b.detach_() is b
        assert b.is_leaf and not b.requires_grad
        c.backward()
        assert b.grad is None
        results[name] = host(a.grad)
    assert_close(results["ours"], results["torch"], "float32")


@FRAMEWORKS
def test_detach_in_place_of_a_leaf_and_refusal_on_a_view(m):
    a = m.tensor([1.0, 2.0], requires_grad=True)
    a.detach_()
    assert a.is_leaf and not a.requires_grad
    b = m.tensor([1.0, 2.0], requires_grad=True)
    for view in (b[0:1], (b * 2)[1:], b.detach()[0:1]):
        with pytest.raises(RuntimeError, match="Can't detach views in-place"):
            view.detach_()


@FRAMEWORKS
def test_the_grad_of_a_non_leaf_warns_and_is_none(m):
    a = m.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    with pytest.warns(UserWarning, match=NON_LEAF_GRAD):
        assert b.grad is None
    b.sum().backward(retain_graph=True)
    with pytest.warns(UserWarning, match=NON_LEAF_GRAD):
        assert b.grad is None
    kept = a * 3
    kept.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert a.grad is not None and kept.grad is None and m.tensor([1.0]).grad is None


@FRAMEWORKS
def test_requires_grad_of_a_non_leaf_cannot_be_turned_off(m):
    a = m.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        b.requires_grad = False
    with pytest.raises(RuntimeError, match="leaf"):
        b.requires_grad_(False)
    assert b.requires_grad
    constant = m.tensor([1.0]) * 2  # made from no tensor that requires grad: a leaf
    constant.requires_grad = True
    assert constant.requires_grad and constant.is_leaf


@FRAMEWORKS
def test_an_integer_tensor_cannot_require_grad(m):
    t = m.tensor([1, 2])
    with pytest.raises(RuntimeError, match="floating point"):
        t.requires_grad = True
    t.requires_grad = False
    assert not t.requires_grad


def test_an_op_that_saved_a_tensor_detached_in_place_after_still_differentiates(backend):
    """PyTorch refuses this backward (the saved tensor was detached in place); here the values
    are unchanged, so the gradient flows through the graph the tensor had."""
    a = ag.tensor([1.0, 2.0], requires_grad=True)
    b = a * a
    c = (b * b).sum()
    b.detach_()
    c.backward()
    assert_close(a.grad, 4 * host(a) ** 3, "float32")


def test_the_checked_fields_are_stored_without_the_compiled_module_too(monkeypatch):
    """Where `_sweep` was not built, GraphFields is a Python class of defaults and a tensor's
    own value lives in its dict, beneath Tensor's `grad` and `requires_grad` properties."""
    python_fields = type("GraphFields", (), {"grad": None, "requires_grad": False})
    monkeypatch.setattr(engine, "GraphFields", python_fields)
    read, write = engine.stored("requires_grad")
    t = python_fields()
    assert read(t) is False
    write(t, True)
    assert read(t) is True and vars(t) == {"requires_grad": True}
