"""`autograd_core.transforms.compile`: a whole training step compiled where the backend can (jax),
giving the same numbers as the op-by-op step, and falling back where it cannot trace."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autograd_core as ag
import nn
import optim
from helpers import assert_close, classification_step


def setup(make_optimizer):
    ag.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.LayerNorm(16), nn.Linear(16, 3)).double()
    opt = make_optimizer(model.parameters())
    return model, opt, classification_step(model, opt)


def data(steps: int = 6):
    rng = np.random.default_rng(0)
    return [(ag.tensor(rng.standard_normal((8, 6))), ag.tensor(rng.integers(0, 3, 8))) for _ in range(steps)]


OPTIMIZERS = {
    "adamw": lambda ps: optim.AdamW(ps, lr=1e-2, weight_decay=0.01),
    "sgd_momentum": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
}


@pytest.mark.parametrize("make_optimizer", OPTIMIZERS.values(), ids=OPTIMIZERS.keys())
def test_compiled_step_matches_the_op_by_op_step(float64_backend, make_optimizer):
    eager_model, _, eager_step = setup(make_optimizer)
    model, opt, step = setup(make_optimizer)
    compiled = ag.compile(step, modules=[model], optimizers=[opt])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ag.CompileFallbackWarning)
        for i, (x, y) in enumerate(data()):
            expected = eager_step(x, y).item()
            # interleave: every third step runs op by op on the compiled model
            got = (step if i % 3 == 2 else compiled)(x, y).item()
            assert got == pytest.approx(expected, rel=1e-12)
    for ours, reference in zip(model.parameters(), eager_model.parameters()):
        assert_close(ours, reference)
        assert ours.grad is not None and ours.grad.shape == ours.shape


def test_untraceable_step_falls_back_with_a_warning(float64_backend):
    model, opt, step = setup(OPTIMIZERS["adamw"])
    eager_model, _, eager_step = setup(OPTIMIZERS["adamw"])

    def branchy(x, y):  # a Python branch on a value: no tracer can follow it
        loss = step(x, y)
        return loss * 2 if loss.item() > 100 else loss

    compiled = ag.compile(branchy, modules=[model], optimizers=[opt])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        losses = [compiled(x, y).item() for x, y in data(3)]
    expected = [eager_step(x, y).item() for x, y in data(3)]
    assert losses == pytest.approx(expected, rel=1e-12)
    fallbacks = [w for w in caught if issubclass(w.category, ag.CompileFallbackWarning)]
    if not float64_backend.can_compile:
        assert not fallbacks  # nothing to compile with: plain op by op, silently
    else:
        assert len(fallbacks) == 1 and "op by op" in str(fallbacks[0].message)


def test_compiled_optimizer_state_round_trips(float64_backend):
    """Step counts come back from a compiled step as Python ints, as the op-by-op step keeps
    them, so the optimizer's state dict loads into a fresh optimizer."""
    model, opt, step = setup(OPTIMIZERS["adamw"])
    compiled = ag.compile(step, modules=[model], optimizers=[opt])
    for x, y in data(2):
        compiled(x, y)
    assert all(type(s["step"]) is int and s["step"] == 2 for s in opt.state.values())
    fresh = optim.AdamW(model.parameters())
    fresh.load_state_dict(opt.state_dict())
    assert all(s["step"] == 2 for s in fresh.state.values())


def test_a_clone_taken_before_compiled_steps_keeps_its_values(float64_backend):
    """jax's compiled step updates the old arrays in place (donated to ``jax.jit``): a clone
    is the way to keep values from before, on every backend."""
    model, opt, step = setup(OPTIMIZERS["adamw"])
    compiled = ag.compile(step, modules=[model], optimizers=[opt])
    first, *rest = data(3)
    compiled(*first)  # creates the optimizer state, op by op
    kept = [p.detach().clone() for p in model.parameters()]
    before = [p.detach().numpy().copy() for p in model.parameters()]
    for x, y in rest:
        compiled(x, y)
    for clone, values in zip(kept, before):
        np.testing.assert_array_equal(clone.numpy(), values)
    assert not any(np.array_equal(p.detach().numpy(), v) for p, v in zip(model.parameters(), before))


@pytest.mark.parametrize("make_optimizer", OPTIMIZERS.values(), ids=OPTIMIZERS.keys())
def test_a_schedule_reaches_the_compiled_step(float64_backend, make_optimizer):
    """Learning rates (and Adam's betas) that change between calls are inputs of the trace,
    not constants frozen into it; a change of another hyper-parameter traces again."""
    eager_model, eager_opt, eager_step = setup(make_optimizer)
    model, opt, step = setup(make_optimizer)
    compiled = ag.compile(step, modules=[model], optimizers=[opt])
    schedules = [optim.lr_scheduler.OneCycleLR(o, max_lr=0.05, total_steps=8) for o in (eager_opt, opt)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ag.CompileFallbackWarning)
        for x, y in data(6):
            assert compiled(x, y).item() == pytest.approx(eager_step(x, y).item(), rel=1e-12)
            for schedule in schedules:
                schedule.step()
            assert isinstance(opt.param_groups[0]["lr"], float)
        for group in (*eager_opt.param_groups, *opt.param_groups):
            group["lr"], group["weight_decay"] = 0.0, 0.5  # no step at all, whatever the decay
        frozen = [p.detach().numpy() for p in model.parameters()]
        x, y = data(1)[0]
        assert compiled(x, y).item() == pytest.approx(eager_step(x, y).item(), rel=1e-12)
    for ours, reference, before in zip(model.parameters(), eager_model.parameters(), frozen):
        assert_close(ours, reference)
        np.testing.assert_array_equal(ours.detach().numpy(), before)
