"""The rest of torch.optim against PyTorch: NAdam, RAdam, Adamax, Adadelta, Rprop, ASGD and
the new options of Adam, AdamW, SGD, RMSprop and Adagrad (20-step float64 trajectories from the
same weights, losses and weights to 1e-10), LBFGS on Rosenbrock's function (iterates and
evaluation counts), ``step(closure)``, named parameters, state dict layouts and round trips, the
new learning-rate schedules (every rate of 30 steps, to the last bit) and ``swa_utils``."""

from __future__ import annotations

import copy
import doctest
import importlib
import math

import numpy as np
import pytest
import torch
from test_optim_schedules import SGD, STEPS, assert_same_snapshots, case, framework, run, two_groups
from test_torch_parity_nn import F64, batch, mlp, torch_mlp, torch_twin, train_ours, train_twin

import autograd_core as ag
import backends
import nn
import optim
from helpers import assert_close

TRAJECTORY = dict(rtol=1e-10, atol=1e-12)


def pair(name: str, cls: str, **settings: object) -> object:
    return pytest.param(cls, settings, id=name)


OPTIMIZERS = [
    pair("nadam", "NAdam", lr=0.01),
    pair("nadam_l2", "NAdam", lr=0.01, weight_decay=0.1),
    pair("nadamw_momentum_decay", "NAdam", lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, momentum_decay=0.01),
    pair("nadam_maximize", "NAdam", lr=0.01, maximize=True),
    pair("radam", "RAdam", lr=0.01),
    pair("radam_rectified_early", "RAdam", lr=0.01, betas=(0.9, 0.9), weight_decay=0.1),  # rho_t > 5 from step 3
    pair("radamw_maximize", "RAdam", lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True),
    pair("adamax", "Adamax", lr=0.01),
    pair("adamax_weight_decay_maximize", "Adamax", lr=0.01, betas=(0.3, 0.9), weight_decay=0.1, maximize=True),
    pair("adadelta", "Adadelta"),
    pair("adadelta_everything", "Adadelta", lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1, maximize=True),
    pair("rprop", "Rprop"),
    pair("rprop_etas_step_sizes", "Rprop", lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.1)),
    pair("rprop_maximize", "Rprop", lr=0.02, maximize=True),
    pair("asgd", "ASGD", lr=0.05),
    pair("asgd_averaging_from_t0", "ASGD", lr=0.05, t0=5, lambd=0.01, alpha=0.5, weight_decay=0.1),
    pair("asgd_maximize", "ASGD", lr=0.05, t0=3, maximize=True),
    pair("adam_amsgrad", "Adam", lr=0.01, amsgrad=True),
    pair("adam_amsgrad_l2_maximize", "Adam", lr=0.01, betas=(0.3, 0.99), amsgrad=True, weight_decay=0.1, maximize=True),
    pair("adam_decoupled_maximize", "Adam", lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True),
    pair("adamw_amsgrad", "AdamW", lr=0.01, amsgrad=True),
    pair("adamw_maximize", "AdamW", lr=0.01, maximize=True),
    pair("sgd_momentum_maximize", "SGD", lr=0.1, momentum=0.9, weight_decay=0.1, maximize=True),
    pair("rmsprop_centered_maximize", "RMSprop", lr=0.01, centered=True, momentum=0.5, maximize=True),
    pair("adagrad_maximize", "Adagrad", lr=0.1, lr_decay=0.01, weight_decay=0.1, maximize=True),
]


def same_start() -> tuple[nn.Module, torch.nn.Module]:
    ag.manual_seed(0)  # the same initial weights whichever tests ran before
    model = mlp(F64)
    return model, torch_twin(model, torch_mlp)


def group_keys(opt: object) -> set[str]:
    return set(opt.state_dict()["param_groups"][0])


@pytest.mark.parametrize(("cls", "settings"), OPTIMIZERS)
def test_trajectory_and_state_layout_match_torch(float64_backend, cls, settings):
    model, twin = same_start()
    opt = getattr(optim, cls)(model.parameters(), **settings)
    torch_opt = getattr(torch.optim, cls)(twin.parameters(), **settings)
    losses = train_ours(model, opt, steps=20)
    expected = train_twin(twin, torch_opt, steps=20)
    assert (expected[-1] < expected[0]) != settings.get("maximize", False)  # the run really descends (ascends)
    np.testing.assert_allclose(losses, expected, **TRAJECTORY)
    theirs = twin.state_dict()
    for name, p in model.state_dict().items():
        assert_close(p, theirs[name], **TRAJECTORY)
    # the same keys in the groups and the state; the state's arrays hold the same values
    assert group_keys(opt) == group_keys(torch_opt)
    ours_state, torch_state = opt.state_dict()["state"], torch_opt.state_dict()["state"]
    assert set(ours_state[0]) == set(torch_state[0])
    for key, value in ours_state[0].items():
        assert_close(value, torch_state[0][key], **TRAJECTORY)


ROUND_TRIPS = [
    pair("nadamw", "NAdam", lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
    pair("radam", "RAdam", lr=0.01, weight_decay=0.1),
    pair("adamax", "Adamax", lr=0.01, maximize=True),
    pair("adadelta", "Adadelta", lr=0.5, weight_decay=0.1),
    pair("rprop", "Rprop", lr=0.05, etas=(0.3, 1.5)),
    pair("asgd", "ASGD", lr=0.05, t0=2),
    pair("adam_amsgrad", "Adam", lr=0.01, amsgrad=True, maximize=True),
]


@pytest.mark.parametrize(("cls", "settings"), ROUND_TRIPS)
def test_state_dict_round_trip_continues_the_same_run(float64_backend, cls, settings):
    """A fresh optimizer (default settings) loaded mid-run continues exactly as the original."""
    model, _ = same_start()
    opt = getattr(optim, cls)(model.parameters(), **settings)
    train_ours(model, opt, steps=3)
    resumed = mlp(F64)
    resumed.load_state_dict({k: v.numpy() for k, v in model.state_dict().items()})
    resumed_opt = getattr(optim, cls)(resumed.parameters())
    resumed_opt.load_state_dict(opt.state_dict())
    assert resumed_opt.param_groups[0] | {"params": None} == opt.param_groups[0] | {"params": None}
    expected = train_ours(model, opt, steps=4)
    assert train_ours(resumed, resumed_opt, steps=4) == expected
    for p, q in zip(model.parameters(), resumed.parameters()):
        assert_close(q, p, rtol=0, atol=0)


# --- LBFGS on Rosenbrock's function --------------------------------------------------------------
def rosenbrock(x):
    """sum (1 - x_i)^2 + 100 (x_{i+1} - x_i^2)^2, in products (the same rounding on both sides)."""
    a, b = x[:-1], x[1:]
    return ((1 - a) * (1 - a) + 100 * ((b - a * a) * (b - a * a))).sum()


def lbfgs_run(ours: bool, start: list[float], settings: dict, steps: int, resume_at: int | None = None) -> list:
    """Per step: the iterate, the loss step() returned, and the counts in the state."""
    lib = optim if ours else torch.optim
    x = (
        ag.tensor(start, dtype=F64, requires_grad=True)
        if ours
        else torch.tensor(start, dtype=torch.float64, requires_grad=True)
    )
    opt = lib.LBFGS([x], **settings)

    def closure():
        opt.zero_grad()
        loss = rosenbrock(x)
        loss.backward()
        return loss

    rows = []
    for i in range(steps):
        if i == resume_at:
            saved = opt.state_dict()
            opt = lib.LBFGS([x])
            opt.load_state_dict(saved)
        loss = opt.step(closure)
        state = opt.state[x]
        rows.append((x.detach().numpy().copy(), float(loss.detach()), state["func_evals"], state["n_iter"]))
    return rows


LBFGS_CASES = [
    pytest.param([-1.5, 2.0], dict(line_search_fn="strong_wolfe"), 4, id="2d_strong_wolfe_to_the_minimum"),
    pytest.param([-1.5, 2.0], dict(max_iter=5), 7, id="2d_fixed_steps"),
    pytest.param([-1.5, 2.0], dict(max_iter=4, lr=0.5, history_size=3), 7, id="2d_short_history"),
    pytest.param([-1.2, 1.0, 0.3, -0.7, 1.5], dict(line_search_fn="strong_wolfe", max_iter=5), 5, id="5d_strong_wolfe"),
    pytest.param(
        [-1.2, 1.0, 0.3, -0.7, 1.5],
        dict(line_search_fn="strong_wolfe", max_iter=4, lr=0.5, history_size=3, max_eval=6),
        6,
        id="5d_strong_wolfe_few_evaluations",
    ),
    pytest.param([-1.2, 1.0, 0.3, -0.7, 1.5], dict(max_iter=5, lr=0.2, tolerance_change=1e-6), 8, id="5d_fixed_steps"),
]


@pytest.mark.parametrize(("start", "settings", "steps"), LBFGS_CASES)
def test_lbfgs_iterates_match_torch(float64_backend, start, settings, steps):
    """The same evaluations and iterations (exactly), the same iterates and losses. PyTorch
    rounds its dot products and ``add_(alpha=)`` differently (BLAS, fused multiply-adds): one
    ulp per operation, which Rosenbrock's curvature amplifies to ~1e-10 over these runs."""
    ours, theirs = lbfgs_run(True, start, settings, steps), lbfgs_run(False, start, settings, steps)
    for (x, loss, evals, iters), (tx, tloss, tevals, titers) in zip(ours, theirs):
        assert (evals, iters) == (tevals, titers)
        np.testing.assert_allclose(x, tx, rtol=1e-9, atol=0)
        np.testing.assert_allclose(loss, tloss, rtol=1e-8, atol=1e-14)
    if settings.get("line_search_fn") and steps == 4:
        np.testing.assert_allclose(ours[-1][0], 1.0, rtol=1e-5)  # at the minimum


@pytest.mark.parametrize(("start", "settings", "steps"), LBFGS_CASES[1::3])
def test_lbfgs_state_dict_round_trip(float64_backend, start, settings, steps):
    """Saved after two steps and loaded into a new LBFGS, it continues exactly (with the
    settings, the history, the direction and the step count of the state)."""
    expected = lbfgs_run(True, start, settings, steps)
    resumed = lbfgs_run(True, start, settings, steps, resume_at=2)
    for (x, *rest), (rx, *rrest) in zip(expected, resumed):
        np.testing.assert_array_equal(x, rx)
        assert rest == rrest
    theirs = torch.optim.LBFGS([torch.zeros(2, requires_grad=True)])
    ours = optim.LBFGS([ag.zeros(2, requires_grad=True)])
    assert group_keys(ours) == group_keys(theirs)


def test_lbfgs_refuses_groups_and_unknown_line_searches(backend):
    w, v = ag.ones(2, requires_grad=True), ag.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="parameter groups"):
        optim.LBFGS([{"params": [w]}, {"params": [v]}])
    with pytest.raises(ValueError, match="strong_wolfe"):
        optim.LBFGS([w], line_search_fn="backtracking")


# --- step(closure), named parameters, PyTorch's flags ---------------------------------------------
CLASSES = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "NAdam", "RAdam", "Adamax", "Adadelta", "Rprop", "ASGD"]


def closure_steps(lib, cls: str, net, inputs) -> list[float]:
    """A closure step under no_grad (the closure still records its graph), then a plain step:
    the loss the closure saw and the one step() returned, and the loss after both steps."""
    opt = getattr(lib, cls)(net.parameters(), lr=0.01)
    seen = []

    def closure():
        opt.zero_grad()
        loss = (net(inputs) ** 2).mean()
        loss.backward()
        seen.append(float(loss.detach()))
        return loss

    with ag.no_grad(), torch.no_grad():
        returned = opt.step(closure)
    assert opt.step() is None
    closure()
    return [*seen[:1], float(returned.detach()), seen[-1]]


@pytest.mark.parametrize("cls", CLASSES)
def test_step_calls_the_closure_with_gradients_enabled_and_returns_its_loss(backend, cls):
    model, twin = same_start()
    x, _ = batch()
    ours = closure_steps(optim, cls, model, ag.tensor(x))
    theirs = closure_steps(torch.optim, cls, twin, torch.tensor(x))
    assert ours[0] == ours[1] and ours[2] != ours[0]
    assert_close(ours, theirs, **TRAJECTORY)


def test_named_parameters_go_into_the_state_dict(backend):
    model, twin = same_start()
    opt = optim.Adam(model.named_parameters(), lr=0.01)
    torch_opt = torch.optim.Adam(twin.named_parameters(), lr=0.01)
    assert opt.param_groups[0]["params"] == list(model.parameters())
    names = ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == names
    assert torch_opt.state_dict()["param_groups"][0]["param_names"] == names
    train_ours(model, opt, steps=2)
    fresh = optim.Adam(mlp(F64).named_parameters())
    fresh.load_state_dict(opt.state_dict())
    assert fresh.param_groups[0]["param_names"] == names
    groups = [{"params": list(model.named_parameters())[:2]}, {"params": list(model.named_parameters())[2:], "lr": 1}]
    assert [g["param_names"] for g in optim.SGD(groups).state_dict()["param_groups"]] == [names[:2], names[2:]]
    with pytest.raises(ValueError, match="with/without names"):
        optim.SGD([("w", model[0].weight), model[0].bias])
    with pytest.raises(ValueError, match="with/without names"):
        optim.SGD([{"params": model[0].named_parameters()}, {"params": model[2].parameters()}])
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(model[0].weight)


@pytest.mark.parametrize("cls", CLASSES)
def test_pytorch_flags_are_accepted_and_differentiable_is_refused(backend, cls):
    w = ag.ones(2, requires_grad=True)
    theirs = getattr(torch.optim, cls)([torch.ones(2, requires_grad=True)], foreach=False)
    assert group_keys(getattr(optim, cls)([w], foreach=False)) == group_keys(theirs)
    with pytest.raises(NotImplementedError, match="differentiable"):
        getattr(optim, cls)([w], differentiable=True)


BAD = [
    ("NAdam", dict(momentum_decay=-0.1), "invalid momentum_decay"),
    ("NAdam", dict(betas=(0.9, 1.0)), "invalid beta2"),
    ("RAdam", dict(lr=-1.0), "invalid lr"),
    ("Adamax", dict(eps=-1e-8), "invalid eps"),
    ("Adadelta", dict(rho=1.5), "invalid rho"),
    ("Rprop", dict(etas=(1.2, 0.5)), "Invalid eta values"),
    ("ASGD", dict(weight_decay=-1.0), "invalid weight_decay"),
    ("LBFGS", dict(lr=-1.0), "invalid lr"),
]


@pytest.mark.parametrize(("cls", "settings", "message"), BAD, ids=[f"{c}-{m}" for c, _, m in BAD])
def test_out_of_range_settings_are_refused_as_torch_refuses_them(backend, cls, settings, message):
    with pytest.raises(ValueError, match=message):
        getattr(optim, cls)([ag.ones(2, requires_grad=True)], **settings)
    with pytest.raises(ValueError):
        getattr(torch.optim, cls)([torch.ones(2, requires_grad=True)], **settings)


# --- schedules: every rate of 30 steps, to the last bit ---------------------------------------------
def swa(m):
    """`swa_utils` of the side whose `lr_scheduler` is `m`."""
    return optim.swa_utils if m is optim.lr_scheduler else torch.optim.swa_utils


class Halving:
    def __init__(self) -> None:
        self.factor = 0.5

    def __call__(self, epoch: int) -> float:
        return self.factor if epoch % 3 == 0 else 1.0


SCHEDULES = [
    case("multiplicative", *SGD, lambda m, o: m.MultiplicativeLR(o, lambda n: 0.95)),
    case("multiplicative_per_group", *SGD, lambda m, o: m.MultiplicativeLR(o, [lambda n: 0.9, Halving()])),
    case("multistep_repeated_milestone", *SGD, lambda m, o: m.MultiStepLR(o, milestones=[3, 8, 8, 20], gamma=0.5)),
    case("constant", *SGD, lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=6)),
    case("constant_default", "Adam", dict(lr=0.02), lambda m, o: m.ConstantLR(o)),
    case("polynomial", *SGD, lambda m, o: m.PolynomialLR(o, total_iters=20, power=2.0)),
    case("polynomial_default", *SGD, lambda m, o: m.PolynomialLR(o)),
    case("warm_restarts", *SGD, lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=7, eta_min=0.001)),
    case("warm_restarts_t_mult", "AdamW", dict(lr=0.01), lambda m, o: m.CosineAnnealingWarmRestarts(o, 3, T_mult=2)),
    case("cyclic_triangular_sgd", *SGD, lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=4)),
    case(
        "cyclic_triangular2_adam_betas",
        "Adam",
        dict(lr=0.02),
        lambda m, o: m.CyclicLR(o, [0.01, 0.02], 0.1, step_size_up=3, step_size_down=5, mode="triangular2"),
    ),
    case(
        "cyclic_exp_range_momenta_per_group",
        *SGD,
        lambda m, o: m.CyclicLR(
            o, 0.001, [0.1, 0.2], 5, mode="exp_range", gamma=0.97, base_momentum=[0.7, 0.8], max_momentum=0.95
        ),
    ),
    case(
        "cyclic_no_momentum",
        "Adagrad",
        dict(lr=0.01),
        lambda m, o: m.CyclicLR(o, 0.01, 0.3, step_size_up=2, cycle_momentum=False),
    ),
    case(
        "cyclic_scale_fn_iterations",
        "RMSprop",
        dict(lr=0.01, momentum=0.9),
        lambda m, o: m.CyclicLR(o, 0.01, 0.1, 3, scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations"),
    ),
    case(
        "sequential_constant_then_warm_restarts",
        *SGD,
        lambda m, o: m.SequentialLR(o, [m.ConstantLR(o, 0.5, 3), m.CosineAnnealingWarmRestarts(o, 5)], milestones=[6]),
    ),
    case(
        "sequential_multistep_then_polynomial",
        *SGD,
        lambda m, o: m.SequentialLR(o, [m.MultiStepLR(o, [2, 4]), m.PolynomialLR(o, 12, 0.5)], milestones=[5]),
    ),
    case("swalr_cos", *SGD, lambda m, o: swa(m).SWALR(o, swa_lr=0.02, anneal_epochs=5)),
    case(
        "swalr_linear_per_group",
        "Adam",
        dict(lr=0.02),
        lambda m, o: swa(m).SWALR(o, swa_lr=[0.05, 0.001], anneal_epochs=8, anneal_strategy="linear"),
    ),
    case("swalr_no_annealing", *SGD, lambda m, o: swa(m).SWALR(o, swa_lr=0.03, anneal_epochs=0)),
    case(
        "swalr_after_cosine",
        *SGD,
        lambda m, o: m.SequentialLR(o, [m.CosineAnnealingLR(o, 10), swa(m).SWALR(o, 0.01, 4)], milestones=[10]),
    ),
]

pytestmark = pytest.mark.filterwarnings(
    "ignore:Detected call of:UserWarning",  # torch: schedules stepped without training
    "ignore:To get the last learning rate:UserWarning",  # torch's SWALR inside SequentialLR
    "ignore:Converting a tensor with requires_grad:UserWarning",
)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_schedule_matches_torch_step_by_step(schedule):
    assert_same_snapshots(run(framework(True), schedule), run(framework(False), schedule))


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_schedule_resumes_from_state_dicts(schedule):
    expected = run(framework(True), schedule)
    assert_same_snapshots(run(framework(True), schedule, resume_at=7), expected)


# ChainedScheduler has no last_epoch (PyTorch's neither): its runs record the rates alone
CHAINED = [
    pytest.param(lambda m, o: m.ChainedScheduler([m.ConstantLR(o, 0.1, 4), m.ExponentialLR(o, 0.9)]), id="two"),
    pytest.param(
        lambda m, o: m.ChainedScheduler([m.LinearLR(o, 0.2, total_iters=5), m.MultiStepLR(o, [9, 15]), m.StepLR(o, 4)]),
        id="three",
    ),
]


def chained_run(f, make, resume_at: int | None = None) -> list:
    opt = two_groups(f, *SGD)
    sched = make(f.sched, opt)
    rows = [sched.get_last_lr()]
    for i in range(STEPS):
        if i == resume_at:
            saved_opt, saved_sched = opt.state_dict(), sched.state_dict()
            opt = two_groups(f, *SGD)
            sched = make(f.sched, opt)
            opt.load_state_dict(saved_opt)
            sched.load_state_dict(saved_sched)
        opt.step()
        sched.step()
        rows.append([*sched.get_last_lr(), *(g["lr"] for g in opt.param_groups)])
    return rows


@pytest.mark.parametrize("make", CHAINED)
def test_chained_scheduler_matches_torch_and_resumes(make):
    expected = chained_run(framework(False), make)
    assert chained_run(framework(True), make) == expected
    assert chained_run(framework(True), make, resume_at=7) == expected


def test_warm_restarts_with_fractional_epochs_match_torch():
    rows = []
    for f in (framework(True), framework(False)):
        opt = f.optim.SGD([f.leaf([1.0])], lr=0.1)
        sched = f.sched.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.01)
        rows.append([])
        for epoch in range(10):
            for i in range(4):
                sched.step(epoch + i / 4)
                rows[-1].append((sched.last_epoch, sched.T_cur, sched.T_i, sched.get_last_lr()))
        with pytest.raises(ValueError, match="non-negative"):
            sched.step(-1)
    assert rows[0] == rows[1]


SCHEDULE_BAD = [
    lambda f, o: f.sched.MultiplicativeLR(o, [lambda n: 1.0]),
    lambda f, o: f.sched.ConstantLR(o, factor=1.5),
    lambda f, o: f.sched.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda f, o: f.sched.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda f, o: f.sched.CyclicLR(o, 0.1, 1.0, mode="sine"),
    lambda f, o: f.sched.CyclicLR(f.optim.Adagrad(o.param_groups[0]["params"]), 0.1, 1.0),
    lambda f, o: f.sched.ChainedScheduler([]),
    lambda f, o: f.sched.ChainedScheduler([f.sched.ExponentialLR(o, 0.9), f.sched.ReduceLROnPlateau(o)]),
    lambda f, o: swa(f.sched).SWALR(o, 0.1, anneal_strategy="step"),
    lambda f, o: swa(f.sched).SWALR(o, 0.1, anneal_epochs=-1),
]


@pytest.mark.parametrize("make", SCHEDULE_BAD)
def test_bad_schedule_arguments_are_refused_as_torch_refuses_them(make):
    with pytest.raises(Exception) as theirs:  # noqa: B017 - the type is what is compared
        make(framework(False), two_groups(framework(False), *SGD))
    with pytest.raises(type(theirs.value)):
        make(framework(True), two_groups(framework(True), *SGD))


# --- swa_utils: AveragedModel and update_bn against torch's -----------------------------------------
def bn_model() -> nn.Module:
    return nn.Sequential(
        nn.Linear(6, 8, dtype=F64), nn.BatchNorm1d(8, dtype=F64), nn.Tanh(), nn.Linear(8, 3, dtype=F64)
    )


def torch_bn_model() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.BatchNorm1d(8), torch.nn.Tanh(), torch.nn.Linear(8, 3))


AVERAGING = {
    "swa": dict(),
    "ema_multi": dict(multi_avg_fn=lambda u: u.get_ema_multi_avg_fn(0.8)),
    "swa_multi": dict(multi_avg_fn=lambda u: u.get_swa_multi_avg_fn()),
    "ema_multi_buffers": dict(multi_avg_fn=lambda u: u.get_ema_multi_avg_fn(0.9), use_buffers=True),
    "ema_avg_fn_buffers": dict(avg_fn=lambda u: u.get_ema_avg_fn(0.7), use_buffers=True),
    "swa_avg_fn": dict(avg_fn=lambda u: u.get_swa_avg_fn()),
}


@pytest.mark.parametrize("settings", AVERAGING.values(), ids=AVERAGING.keys())
def test_averaged_model_and_update_bn_match_torch(float64_backend, settings):
    ag.manual_seed(1)
    model = bn_model()
    twin = torch_twin(model, torch_bn_model)
    rng = np.random.default_rng(3)
    batches = [(rng.standard_normal((10, 6)), rng.integers(0, 3, 10)) for _ in range(6)]
    sides = []
    for lib, utils, net, wrap in (
        (optim, optim.swa_utils, model, ag.tensor),
        (torch.optim, torch.optim.swa_utils, twin, torch.tensor),
    ):
        made = {k: v(utils) if callable(v) else v for k, v in settings.items()}
        averaged = utils.AveragedModel(net, **made)
        opt = lib.SGD(net.parameters(), lr=0.1, momentum=0.9)
        for x, y in batches:
            opt.zero_grad()
            loss = (net(wrap(x)) - wrap(np.eye(3)[y])).square().mean()
            loss.backward()
            opt.step()
            averaged.update_parameters(net)
        before = {k: v.detach().numpy().copy() for k, v in averaged.state_dict().items()}
        utils.update_bn([(wrap(x), wrap(y)) for x, y in batches[:3]] + [wrap(batches[3][0])], averaged)
        after = {k: v.detach().numpy().copy() for k, v in averaged.state_dict().items()}
        averaged.eval()
        sides.append((before, after, averaged(wrap(batches[0][0])).detach().numpy(), averaged.training))
    (before, after, out, training), (t_before, t_after, t_out, t_training) = sides
    assert before.keys() == t_before.keys() and after.keys() == t_after.keys()
    for ours, theirs in ((before, t_before), (after, t_after)):
        for name, value in ours.items():
            assert value.dtype.kind == theirs[name].dtype.kind, name
            assert_close(value, theirs[name], **TRAJECTORY)
    assert int(after["n_averaged"]) == len(batches) and int(after["module.1.num_batches_tracked"]) == 4
    assert_close(out, t_out, **TRAJECTORY)
    assert training == t_training


def test_averaged_model_is_a_copy_and_update_bn_keeps_the_training_flag(backend):
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3, momentum=0.3))
    averaged = optim.swa_utils.AveragedModel(model)
    assert averaged.module is not model and averaged.module[0].weight is not model[0].weight
    with pytest.raises(ValueError, match="one of avg_fn and multi_avg_fn"):
        optim.swa_utils.AveragedModel(model, avg_fn=optim.swa_utils.get_swa_avg_fn(), multi_avg_fn=lambda *a: None)
    with pytest.raises(ValueError, match="decay"):
        optim.swa_utils.get_ema_avg_fn(1.5)
    model.eval()
    optim.swa_utils.update_bn([ag.ones(4, 2)], model)
    assert not model.training and model[1].momentum == 0.3
    optim.swa_utils.update_bn([ag.ones(4, 2)], nn.Linear(2, 2))  # no batch norm: nothing to do
    copied = copy.deepcopy(optim.swa_utils.SWALR(optim.SGD(model.parameters(), lr=0.1), 0.05))
    assert math.isclose(
        copied.get_last_lr()[0],
        torch.optim.swa_utils.SWALR(torch.optim.SGD(torch.nn.Linear(2, 3).parameters(), lr=0.1), 0.05).get_last_lr()[0],
    )


NEW_MODULES = ["optim.nadam", "optim.radam", "optim.adamax", "optim.adadelta", "optim.rprop", "optim.asgd"]
NEW_MODULES += ["optim.lbfgs", "optim.swa_utils", "optim.optimizer"]  # tests/test_docs.py runs the older ones


@pytest.mark.parametrize("name", NEW_MODULES)
def test_docstring_examples(name):
    with backends.use("numpy"):
        result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
