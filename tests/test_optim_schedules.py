"""Learning-rate schedules against PyTorch's, step by step: the rates (and cycled momentum)
of every parameter group after construction and after each of 30 steps, the keys the
schedules put in the groups, resuming from ``state_dict``, and the errors for bad arguments.

A schedule is pure Python over the optimizer's groups, so one factory builds both sides:
``make(m, opt)`` with ``m`` either ``optim.lr_scheduler`` or ``torch.optim.lr_scheduler``.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

import autograd_core as ag
import optim

pytestmark = pytest.mark.filterwarnings("ignore:Detected call of:UserWarning")  # torch: steps without training
STEPS = 30
# What the schedules read or write in a parameter group.
GROUP_KEYS = ("lr", "initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum", "momentum", "betas")


def framework(ours: bool) -> SimpleNamespace:
    """The optimizer package, its schedules and a float64 leaf maker of one side."""
    if ours:
        return SimpleNamespace(
            optim=optim,
            sched=optim.lr_scheduler,
            ours=True,
            leaf=lambda v: ag.tensor(v, dtype="float64", requires_grad=True),
        )
    return SimpleNamespace(
        optim=torch.optim,
        sched=torch.optim.lr_scheduler,
        ours=False,
        leaf=lambda v: torch.tensor(v, dtype=torch.float64, requires_grad=True),
    )


def two_groups(f: SimpleNamespace, name: str, settings: dict) -> object:
    """Optimizer `name` over two parameter groups, the second with its own rate."""
    groups = [{"params": [f.leaf([1.0, 2.0])]}, {"params": [f.leaf([3.0])], "lr": 0.05}]
    return getattr(f.optim, name)(groups, **settings)


def snapshot(sched, opt) -> tuple[int, list[float], list[tuple[str, float]]]:
    """What a step changed: last_epoch, get_last_lr() and the groups' schedule keys (flattened)."""
    groups = [
        (f"{i}.{k}", float(v))
        for i, g in enumerate(opt.param_groups)
        for k in GROUP_KEYS
        if k in g
        for v in (g[k] if isinstance(g[k], tuple) else (g[k],))
    ]
    return sched.last_epoch, [float(lr) for lr in sched.get_last_lr()], groups


def assert_same_snapshots(ours: list, theirs: list) -> None:
    """Equal to the last bit (stricter than the 1e-12 asked for): both sides do the same float
    arithmetic in the same order, where a closed form would differ by an ulp here and there."""
    assert ours == theirs


def run(f: SimpleNamespace, case: tuple, steps: int = STEPS, resume_at: int | None = None) -> list:
    """Build `case` on side `f`, step it; with `resume_at`, continue from there on a fresh
    optimizer and schedule loaded from the state dicts."""
    name, settings, make = case
    opt = two_groups(f, name, settings)
    sched = make(f.sched, opt)
    rows = [snapshot(sched, opt)]
    for i in range(steps):
        if i == resume_at:
            saved_opt, saved_sched = opt.state_dict(), sched.state_dict()
            opt = two_groups(f, name, settings)
            sched = make(f.sched, opt)  # construction steps, as in PyTorch: load the optimizer after it
            opt.load_state_dict(saved_opt)
            sched.load_state_dict(saved_sched)
        opt.step()
        sched.step()
        rows.append(snapshot(sched, opt))
    return rows


class Halving:
    """A callable object as a rate function: its state is saved by LambdaLR."""

    def __init__(self) -> None:
        self.base = 0.5

    def __call__(self, epoch: int) -> float:
        return self.base ** (epoch // 4)


def case(name: str, optimizer: str, settings: dict, make) -> object:
    return pytest.param((optimizer, settings, make), id=name)


SGD = ("SGD", dict(lr=0.1, momentum=0.9))
SCHEDULES = [
    case("lambda", *SGD, lambda m, o: m.LambdaLR(o, lambda n: 0.9**n)),
    case("lambda_per_group", *SGD, lambda m, o: m.LambdaLR(o, [lambda n: 1 / (n + 1), Halving()])),
    case("step", *SGD, lambda m, o: m.StepLR(o, step_size=3, gamma=0.5)),
    case("exponential", *SGD, lambda m, o: m.ExponentialLR(o, gamma=0.9)),
    case("cosine_past_T_max", *SGD, lambda m, o: m.CosineAnnealingLR(o, T_max=10)),
    case("cosine_eta_min", "Adam", dict(lr=0.02), lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=0.01)),
    case("linear_default", *SGD, lambda m, o: m.LinearLR(o)),
    case("linear_decay", *SGD, lambda m, o: m.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=12)),
    case("one_cycle_sgd_momentum", *SGD, lambda m, o: m.OneCycleLR(o, max_lr=0.5, total_steps=STEPS)),
    case(
        "one_cycle_adamw_betas_three_phase_linear",
        "AdamW",
        dict(lr=1e-3),
        lambda m, o: m.OneCycleLR(
            o,
            max_lr=[0.5, 0.2],
            total_steps=STEPS,
            anneal_strategy="linear",
            three_phase=True,
            base_momentum=[0.8, 0.7],
            max_momentum=0.9,
        ),
    ),
    case(
        "one_cycle_adam_three_phase_cos",
        "Adam",
        dict(lr=1e-3),
        lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=STEPS, pct_start=0.4, three_phase=True),
    ),
    case(
        "one_cycle_rmsprop_epochs",
        "RMSprop",
        dict(lr=0.01, momentum=0.5),
        lambda m, o: m.OneCycleLR(
            o, max_lr=0.3, epochs=5, steps_per_epoch=6, pct_start=0.25, div_factor=10.0, final_div_factor=100.0
        ),
    ),
    case(
        "one_cycle_adagrad_no_momentum",
        "Adagrad",
        dict(lr=0.01),
        lambda m, o: m.OneCycleLR(o, max_lr=0.3, total_steps=STEPS + 5, cycle_momentum=False),
    ),
    case(
        "sequential_linear_then_cosine",
        *SGD,
        lambda m, o: m.SequentialLR(
            o, [m.LinearLR(o, start_factor=0.1, total_iters=5), m.CosineAnnealingLR(o, 25)], milestones=[5]
        ),
    ),
    case(
        "sequential_three",
        "Adam",
        dict(lr=0.02),
        lambda m, o: m.SequentialLR(
            o,
            [m.ExponentialLR(o, gamma=0.8), m.StepLR(o, step_size=2), m.LambdaLR(o, lambda n: 1 + n)],
            milestones=[4, 11],
        ),
    ),
    case(
        "sequential_nested",
        *SGD,
        lambda m, o: m.SequentialLR(
            o,
            [
                m.SequentialLR(o, [m.LinearLR(o, total_iters=3), m.ExponentialLR(o, 0.9)], milestones=[3]),
                m.CosineAnnealingLR(o, T_max=8),
            ],
            milestones=[10],
        ),
    ),
]


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_schedule_matches_torch_step_by_step(schedule):
    assert_same_snapshots(run(framework(True), schedule), run(framework(False), schedule))


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_resuming_from_state_dicts_continues_the_same_sequence(schedule):
    expected = run(framework(True), schedule)
    assert_same_snapshots(run(framework(True), schedule, resume_at=7), expected)
    assert_same_snapshots(run(framework(False), schedule, resume_at=7), expected)  # the check checks


def test_state_dict_is_a_copy_and_saves_callable_objects_state():
    opt = two_groups(framework(True), *SGD)
    halving = Halving()
    sched = optim.lr_scheduler.LambdaLR(opt, [lambda n: 1.0, halving])
    saved = sched.state_dict()
    assert saved["lr_lambdas"] == [None, {"base": 0.5}]
    assert "optimizer" not in saved
    saved["base_lrs"].append(1.0)
    assert sched.base_lrs == [0.1, 0.05]  # the saved state is a copy
    halving.base = 0.25
    sched.load_state_dict(saved)
    assert halving.base == 0.5


def test_one_cycle_raises_past_total_steps():
    for f in (framework(True), framework(False)):
        opt = two_groups(f, *SGD)
        sched = f.sched.OneCycleLR(opt, max_lr=0.5, total_steps=4)
        for _ in range(4):
            sched.step()
        with pytest.raises(ValueError, match="Tried to step 5 times"):
            sched.step()


def test_resuming_with_last_epoch_matches_torch():
    """A schedule built with ``last_epoch=k`` over groups that hold ``initial_lr``."""
    rows = []
    for f in (framework(True), framework(False)):
        opt = two_groups(f, *SGD)
        for group in opt.param_groups:
            group["initial_lr"] = 2 * group["lr"]
        sched = f.sched.CosineAnnealingLR(opt, T_max=10, last_epoch=4)
        rows.append([snapshot(sched, opt)])
        for _ in range(12):
            sched.step()
            rows[-1].append(snapshot(sched, opt))
    assert_same_snapshots(*rows)


# --- ReduceLROnPlateau on a fixed metric sequence ------------------------------------------------
METRICS = [max(0.3, 1.0 / (1 + i // 5)) + 0.01 * ((i * 7) % 3) for i in range(STEPS)]  # falls, then flat
PLATEAU = [
    pytest.param({}, id="default"),
    pytest.param(dict(patience=2), id="patience_2"),
    pytest.param(dict(mode="max", patience=1, factor=0.5), id="max"),
    pytest.param(dict(threshold_mode="abs", threshold=0.05, patience=1, cooldown=2), id="abs_cooldown"),
    pytest.param(
        dict(mode="max", threshold_mode="abs", threshold=0.01, patience=0, factor=0.5, min_lr=[0.01, 0.002]),
        id="max_abs_min_lr_per_group",
    ),
    pytest.param(dict(patience=0, factor=0.5, min_lr=0.02, eps=0.01), id="min_lr_eps"),
    pytest.param(dict(threshold=0.2, patience=1, cooldown=1), id="large_rel_threshold"),
]


def plateau_run(f: SimpleNamespace, settings: dict, resume_at: int | None = None) -> list:
    opt = two_groups(f, *SGD)
    sched = f.sched.ReduceLROnPlateau(opt, **settings)
    rows = []
    for i, metric in enumerate(METRICS):
        if i == resume_at:
            saved_opt, saved_sched = opt.state_dict(), sched.state_dict()
            opt = two_groups(f, *SGD)
            sched = f.sched.ReduceLROnPlateau(opt)  # every setting comes back from the state dict
            opt.load_state_dict(saved_opt)
            sched.load_state_dict(saved_sched)
        # a 0-d tensor metric on each side, as a validation loss would be
        sched.step(ag.tensor(metric, dtype="float64") if f.ours else torch.tensor(metric, dtype=torch.float64))
        rows.append(
            (
                sched.last_epoch,
                sched.get_last_lr(),
                [g["lr"] for g in opt.param_groups],
                sched.best,
                sched.num_bad_epochs,
                sched.cooldown_counter,
            )
        )
    return rows


@pytest.mark.parametrize("settings", PLATEAU)
def test_reduce_on_plateau_matches_torch(settings):
    ours = plateau_run(framework(True), settings)
    assert ours == plateau_run(framework(False), settings)
    assert ours[-1][2] != ours[0][2] or settings.get("eps")  # the case reduces (or is the eps one)
    assert plateau_run(framework(True), settings, resume_at=11) == ours


# --- bad arguments: refused as PyTorch refuses them ----------------------------------------------
def bad(name: str, make) -> object:
    return pytest.param(make, id=name)


def sgd(f):
    return two_groups(f, *SGD)


BAD = [
    bad("not_an_optimizer", lambda f: f.sched.ExponentialLR(object(), gamma=0.9)),
    bad("resume_without_initial_lr", lambda f: f.sched.StepLR(sgd(f), step_size=2, last_epoch=3)),
    bad("lambda_count", lambda f: f.sched.LambdaLR(sgd(f), [lambda n: 1.0])),
    bad("linear_start_factor_0", lambda f: f.sched.LinearLR(sgd(f), start_factor=0)),
    bad("linear_end_factor_above_1", lambda f: f.sched.LinearLR(sgd(f), end_factor=1.5)),
    bad("one_cycle_no_length", lambda f: f.sched.OneCycleLR(sgd(f), max_lr=0.1, epochs=3)),
    bad("one_cycle_total_steps_0", lambda f: f.sched.OneCycleLR(sgd(f), max_lr=0.1, total_steps=0)),
    bad("one_cycle_epochs_0", lambda f: f.sched.OneCycleLR(sgd(f), max_lr=0.1, epochs=0, steps_per_epoch=3)),
    bad("one_cycle_pct_start_int", lambda f: f.sched.OneCycleLR(sgd(f), max_lr=0.1, total_steps=9, pct_start=1)),
    bad("one_cycle_pct_start_above_1", lambda f: f.sched.OneCycleLR(sgd(f), max_lr=0.1, total_steps=9, pct_start=1.5)),
    bad("one_cycle_anneal", lambda f: f.sched.OneCycleLR(sgd(f), max_lr=0.1, total_steps=9, anneal_strategy="exp")),
    bad("one_cycle_max_lr_count", lambda f: f.sched.OneCycleLR(sgd(f), max_lr=[0.1], total_steps=9)),
    bad(
        "one_cycle_momentum_without_momentum",
        lambda f: f.sched.OneCycleLR(two_groups(f, "Adagrad", {}), max_lr=0.1, total_steps=9),
    ),
    bad("sequential_empty", lambda f: f.sched.SequentialLR(sgd(f), [], milestones=[])),
    bad(
        "sequential_milestone_count",
        lambda f: (
            lambda o: f.sched.SequentialLR(o, [f.sched.ExponentialLR(o, 0.9), f.sched.StepLR(o, 2)], milestones=[2, 4])
        )(sgd(f)),
    ),
    bad(
        "sequential_other_optimizer",
        lambda f: (
            lambda o: f.sched.SequentialLR(
                o, [f.sched.ExponentialLR(o, 0.9), f.sched.StepLR(sgd(f), 2)], milestones=[2]
            )
        )(sgd(f)),
    ),
    bad(
        "sequential_plateau",
        lambda f: (
            lambda o: f.sched.SequentialLR(
                o, [f.sched.ExponentialLR(o, 0.9), f.sched.ReduceLROnPlateau(o)], milestones=[2]
            )
        )(sgd(f)),
    ),
    bad("plateau_factor_1", lambda f: f.sched.ReduceLROnPlateau(sgd(f), factor=1.0)),
    bad("plateau_mode", lambda f: f.sched.ReduceLROnPlateau(sgd(f), mode="avg")),
    bad("plateau_threshold_mode", lambda f: f.sched.ReduceLROnPlateau(sgd(f), threshold_mode="ratio")),
    bad("plateau_min_lr_count", lambda f: f.sched.ReduceLROnPlateau(sgd(f), min_lr=[0.1, 0.1, 0.1])),
]


@pytest.mark.parametrize("make", BAD)
def test_bad_arguments_are_refused_as_torch_refuses_them(make):
    with pytest.raises(Exception) as theirs:  # noqa: B017 - the type is what is compared
        make(framework(False))
    with pytest.raises(type(theirs.value)) as ours:
        make(framework(True))
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value)  # says what was wrong


def test_initial_rates_are_kept_by_a_second_schedule():
    """``initial_lr`` is set once (setdefault), so a second schedule's base is the first rate."""
    for f in (framework(True), framework(False)):
        opt = sgd(f)
        f.sched.ExponentialLR(opt, gamma=0.5).step()
        second = f.sched.StepLR(opt, step_size=1)
        assert second.base_lrs == [0.1, 0.05]
        assert math.isclose(opt.param_groups[0]["lr"], 0.05)
