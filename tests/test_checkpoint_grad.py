"""Gradient checkpointing (`ag.checkpoint`, `nn.utils.checkpoint_sequential`): the gradients
are those of the same computation without it, bit for bit, with dropout drawing the same masks
when the segment runs again; the forward keeps no intermediate of the segment. On every backend.
(Not to be confused with tests/test_checkpoints.py, which saves and loads models.)"""

from __future__ import annotations

import doctest
import gc
import importlib
import weakref

import numpy as np
import pytest

import autograd_core as ag
import backends
import nn
from autograd_core.autodiff import engine


def mlp() -> nn.Sequential:
    """An MLP with dropout after each hidden layer, in training mode, in float64."""
    ag.manual_seed(0)
    return nn.Sequential(
        nn.Linear(6, 16, dtype="float64"),
        nn.Tanh(),
        nn.Dropout(0.3),
        nn.Linear(16, 16, dtype="float64"),
        nn.GELU(),
        nn.Dropout(0.3),
        nn.Linear(16, 3, dtype="float64"),
    ).train()


def inputs(requires_grad: bool = True) -> ag.Tensor:
    return ag.tensor(np.random.default_rng(1).standard_normal((5, 6)), dtype="float64", requires_grad=requires_grad)


def as_host(tensors) -> list[np.ndarray]:
    return [t.detach().numpy() for t in tensors]


def train_step(checkpointed: bool, preserve_rng_state: bool = True, x_requires_grad: bool = True):
    """The loss, the input's gradient and every parameter's, the first 4 layers checkpointed or not."""
    model, x = mlp(), inputs(x_requires_grad)
    body, head = nn.Sequential(*list(model)[:6]), model[6]
    ag.manual_seed(1)  # the dropout masks
    h = ag.checkpoint(body, x, preserve_rng_state=preserve_rng_state) if checkpointed else body(x)
    loss = (head(h) ** 2).sum()
    loss.backward()
    after = backends.host_rng().random()  # where the generator was left
    grads = ([x.grad] if x_requires_grad else []) + [p.grad for p in model.parameters()]
    return loss.item(), as_host(grads), after


def assert_identical(got: list[np.ndarray], expected: list[np.ndarray]) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and np.array_equal(g, e)


def test_mlp_with_dropout_gradients_are_bit_identical(float64_backend, sweep):
    loss, grads, after = train_step(checkpointed=False)
    loss_ck, grads_ck, after_ck = train_step(checkpointed=True)
    assert loss_ck == loss
    assert_identical(grads_ck, grads)
    assert after_ck == after  # running the segment again leaves the generator where it was


def test_dropout_draws_the_forward_masks_again_only_with_the_rng_state(float64_backend):
    _, grads, _ = train_step(checkpointed=False)
    _, grads_fresh, _ = train_step(checkpointed=True, preserve_rng_state=False)
    assert not np.array_equal(grads_fresh[0], grads[0])  # other masks: another gradient


def test_parameters_get_gradients_when_the_inputs_need_none(float64_backend):
    _, grads, _ = train_step(checkpointed=False, x_requires_grad=False)
    _, grads_ck, _ = train_step(checkpointed=True, x_requires_grad=False)
    assert all(g is not None for g in grads_ck)
    assert_identical(grads_ck, grads)


def test_grad_returns_the_same_gradients(float64_backend):
    results = []
    for checkpointed in (False, True):
        model, x = mlp().eval(), inputs()
        out = ag.checkpoint(model, x) if checkpointed else model(x)
        wanted = [x, model[0].weight, model[6].bias]
        results.append(as_host(ag.grad((out * out).sum(), wanted)))
        assert all(p.grad is None for p in model.parameters())  # returned, not accumulated
    assert_identical(results[1], results[0])


def test_tuple_outputs_run_the_segment_again_once(float64_backend):
    calls = []

    def two_heads(model, x):
        calls.append(1)
        h = model[0](x).tanh()
        return model[3](h[:, :16]), ag.sin(h), "passed through"

    results = []
    for checkpointed in (False, True):
        model, x = mlp(), inputs()
        calls.clear()
        a, b, note = ag.checkpoint(two_heads, model, x) if checkpointed else two_heads(model, x)
        assert note == "passed through"
        ((a**2).sum() + (b * 3).sum()).backward()
        results.append(as_host([x.grad, model[0].weight.grad, model[3].weight.grad]))
        assert len(calls) == (2 if checkpointed else 1)  # the forward, then once for the backward
    assert_identical(results[1], results[0])


def test_an_output_left_out_of_the_loss_gets_no_gradient(float64_backend):
    def run(checkpointed: bool) -> list[np.ndarray]:
        model, x = mlp().eval(), inputs()

        def pair(t):
            h = model[0](t)
            return h.tanh(), h * 2

        a, _ = ag.checkpoint(pair, x) if checkpointed else pair(x)
        a.sum().backward()
        return as_host([x.grad, model[0].weight.grad])

    assert_identical(run(True), run(False))


def test_double_backward_matches(float64_backend):
    results = []
    for checkpointed in (False, True):
        model, x = mlp().eval(), inputs()
        segment = nn.Sequential(model[0], model[1], model[3], model[4])
        out = ag.checkpoint(segment, x) if checkpointed else segment(x)
        weight = model[0].weight
        gx, gw = ag.grad((out**3).sum(), [x, weight], create_graph=True)
        ((gx**2).sum() + (gw * gw).sum()).backward()
        results.append((as_host([gx, gw]), as_host([x.grad, weight.grad, model[3].weight.grad])))
    (first, second), (first_ck, second_ck) = results
    assert_identical(first_ck, first)
    # The second-order terms reach the segment twice (through the first-order gradients and
    # through their seed) and are summed after the segment rather than before: the last bit
    # may differ.
    for got, expected in zip(second_ck, second):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_the_forward_keeps_no_intermediate_of_the_segment(backend):
    kept = []
    w = ag.ones((4, 4), requires_grad=True)

    def segment(x):
        h = x @ w
        g = ag.tanh(h)
        kept.extend([weakref.ref(h), weakref.ref(g)])
        return g * 2

    x = ag.ones((3, 4), requires_grad=True)
    plain = segment(x)
    gc.collect()
    assert all(ref() is not None for ref in kept)  # the graph holds them
    kept.clear()
    out = ag.checkpoint(segment, x)
    gc.collect()
    assert all(ref() is None for ref in kept)
    # the checkpointed output reaches its inputs directly
    assert len(engine.topological_order(out)) == 3 < len(engine.topological_order(plain))
    out.sum().backward()
    assert w.grad is not None and x.grad is not None


def test_hooks_of_the_parameters_run_once_on_the_whole_gradient(backend):
    seen = []

    def run(checkpointed: bool) -> list[np.ndarray]:
        w = ag.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
        w.register_hook(lambda g: seen.append(g.numpy()) or g * 10)
        x = ag.tensor([[0.5, -0.25]], requires_grad=True)
        out = ag.checkpoint(lambda t: ag.tanh(t @ w), x) if checkpointed else ag.tanh(x @ w)
        (out.sum() + (w * w).sum()).backward()  # w also outside the segment
        return as_host([w.grad, x.grad])

    assert_identical(run(True), run(False))
    assert len(seen) == 2
    np.testing.assert_array_equal(seen[1], seen[0])


def test_a_closed_over_tensor_made_by_an_op_sends_its_gradient_on(backend):
    def run(checkpointed: bool) -> list[np.ndarray]:
        w = ag.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
        x = ag.tensor([[0.5, -0.25]], requires_grad=True)
        v = w * 2  # recorded before the segment: its graph stays the caller's
        out = ag.checkpoint(lambda t: ag.tanh(t @ v), x) if checkpointed else ag.tanh(x @ v)
        (out.sum() + v.sum()).backward()
        return as_host([w.grad, x.grad])

    assert_identical(run(True), run(False))


def test_nested_checkpoints_and_retain_graph(float64_backend):
    def run(checkpointed: bool) -> list[np.ndarray]:
        model, x = mlp(), inputs()

        def inner(t):
            return model[2](model[1](model[0](t)))

        def outer(t):
            return model[4](model[3](ag.checkpoint(inner, t) if checkpointed else inner(t)))

        ag.manual_seed(1)
        loss = ((ag.checkpoint(outer, x) if checkpointed else outer(x)) ** 2).sum()
        loss.backward(retain_graph=True)
        loss.backward()  # the graph again: twice the gradients
        return as_host([x.grad, model[0].weight.grad, model[0].bias.grad, model[3].weight.grad, model[3].bias.grad])

    assert_identical(run(True), run(False))


def test_use_reentrant_true_computes_the_same(float64_backend):
    _, grads, _ = train_step(checkpointed=False)
    model, x = mlp(), inputs()
    body, head = nn.Sequential(*list(model)[:6]), model[6]
    ag.manual_seed(1)
    (head(ag.checkpoint(body, x, use_reentrant=True)) ** 2).sum().backward()
    assert_identical(as_host([x.grad] + [p.grad for p in model.parameters()]), grads)


def test_keyword_arguments_reach_the_function(backend):
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    out = ag.checkpoint(lambda t, scale=1.0: t * t * scale, x, scale=3.0)
    out.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]


def test_without_recording_it_is_a_plain_call(backend):
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    with ag.no_grad():
        out = ag.checkpoint(lambda t: t * 2, x)
    assert not out.requires_grad
    assert ag.checkpoint(lambda t: t * 2, ag.ones(2)).requires_grad is False


def test_a_function_that_computes_otherwise_when_run_again_is_refused(backend):
    widths = iter([3, 4])
    x = ag.ones((2, 5), requires_grad=True)
    out = ag.checkpoint(lambda t: t[:, : next(widths)] * 2, x)
    with pytest.raises(RuntimeError, match="run again for the backward.*shape \\(2, 3\\)"):
        out.sum().backward()


def test_other_results_are_refused(backend):
    with pytest.raises(TypeError, match="must return a tensor or a tuple"):
        ag.checkpoint(lambda t: {"out": t * 2}, ag.ones(2, requires_grad=True))


@pytest.mark.parametrize("segments", [1, 2, 3, 7])
def test_checkpoint_sequential_matches_the_plain_sequential(float64_backend, segments):
    results = []
    for checkpointed in (False, True):
        model, x = mlp(), inputs()
        ag.manual_seed(1)
        out = nn.utils.checkpoint_sequential(model, segments, x) if checkpointed else model(x)
        (out**2).sum().backward()
        results.append(as_host([out, x.grad, *(p.grad for p in model.parameters())]))
    assert_identical(results[1], results[0])


def test_checkpoint_sequential_takes_a_list_of_functions(backend):
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    out = nn.utils.checkpoint_sequential([ag.sin, ag.exp, ag.tanh], 2, x)
    out.sum().backward()
    expected = ag.tensor([1.0, 2.0], requires_grad=True)
    ag.tanh(ag.exp(ag.sin(expected))).sum().backward()
    assert np.array_equal(x.grad.numpy(), expected.grad.numpy())


@pytest.mark.parametrize("segments", [0, 8])
def test_checkpoint_sequential_refuses_a_wrong_number_of_segments(segments):
    with pytest.raises(ValueError, match="segments must be from 1 to the 7 functions"):
        nn.utils.checkpoint_sequential(mlp(), segments, inputs())


def test_docstring_examples():
    with backends.use("numpy"):
        result = doctest.testmod(importlib.import_module("autograd_core.transforms.checkpoint"))
    assert result.attempted and not result.failed
