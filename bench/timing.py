"""The round-robin timer.

All implementations of one point advance in lockstep: each round times one step of every
implementation, starting each round with the next one in turn, so machine noise (another
process, a frequency change) lands on all of them alike, and after the last round all have
taken the same number of steps on the same batches. That is what lets their losses be
compared afterwards.

Every clock read is preceded by the runner's ``sync()``; the process CPU time is read around
every step, so each result carries CPU time over wall time (above 1: several threads busy;
below 1: waiting).
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from bench.impls.base import CheckValue, Runner


@dataclass(frozen=True)
class Plan:
    """How long to measure one point.

    ``warmup`` untimed steps (more where a runner compiles longer, see `Runner.warmup_steps`),
    then rounds until every implementation has ``min_steps`` timed steps and the point has
    spent ``min_time`` seconds per implementation on the clock (so a point with more
    implementations runs longer), but at most ``max_steps`` rounds.
    The check values are read after ``check_after`` timed rounds (see `time_lockstep`).
    """

    warmup: int = 5
    min_steps: int = 20
    min_time: float = 2.0
    max_steps: int = 10_000
    check_after: int = 10


@dataclass
class Timings:
    """What the clock saw for one implementation at one point (seconds)."""

    phases: dict[str, list[float]]
    wall: float = 0.0
    cpu: float = 0.0

    def stats(self, phase: str) -> tuple[float, float, int]:
        """(minimum, median, count) of the step times of `phase`."""
        samples = self.phases[phase]
        return min(samples), statistics.median(samples), len(samples)

    @property
    def cpu_over_wall(self) -> float:
        return self.cpu / self.wall if self.wall else float("nan")


@dataclass
class Outcome:
    """The result of timing one point: timings and check values of the implementations that
    finished, the reasons of those that failed, and the number of timed rounds.

    `check_values` were read after `check_round` timed rounds; `final_values` after one more
    untimed step that follows the last timed round (the state all the timed steps left).
    `warmup_s` is each implementation's wall time over its warm-up steps (compiling included).
    """

    timings: dict[str, Timings] = field(default_factory=dict)
    check_values: dict[str, CheckValue] = field(default_factory=dict)
    final_values: dict[str, CheckValue] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    rounds: int = 0
    check_round: int = 0
    warmup_s: dict[str, float] = field(default_factory=dict)


def phase_calls(runner: Runner, phases: Sequence[str]) -> list[Callable[[], None]]:
    """The runner's zero-argument call for each phase name ("step" or a phase of `PHASES`)."""
    return [getattr(runner, phase) for phase in phases]


def _untimed_step(runner: Runner, calls: Sequence[Callable[[], None]], k: int) -> None:
    runner.select(k)
    for call in calls:
        call()
    runner.sync()


def _timed_step(
    runner: Runner, calls: Sequence[Callable[[], None]], k: int, into: Timings, names: Sequence[str]
) -> float:
    """One step with a clock read after each phase; returns its wall time."""
    runner.select(k)
    runner.sync()
    clock, cpu_clock = time.perf_counter, time.process_time
    cpu_start = cpu_clock()
    start = previous = clock()
    for name, call in zip(names, calls):
        call()
        runner.sync()
        now = clock()
        into.phases[name].append(now - previous)
        previous = now
    into.cpu += cpu_clock() - cpu_start
    into.wall += previous - start
    return previous - start


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".splitlines()[0][:300]


def time_lockstep(
    runners: dict[str, Runner], phases: Sequence[str], plan: Plan, progress: Callable[[float], None] | None = None
) -> Outcome:
    """Time `runners` (name -> runner) in lockstep rounds, then take one more, untimed step
    with each to read its final check value (the loss after all the timed updates).

    The value that is cross-checked is read earlier, after ``plan.check_after`` timed rounds
    (or at the end, when there are fewer): float32 trajectories of different libraries agree
    to about 1e-6 for a few dozen AdamW steps, but Adam turns the rounding noise of gradients
    near zero into whole steps, so after a few hundred steps two correct implementations can
    differ by percents. The final value is kept, and must be finite.

    A runner that raises is dropped from the point with the reason, never ends the run.
    """
    outcome = Outcome()
    active = {name: phase_calls(r, phases) for name, r in runners.items()}

    def attempt(name: str, action: Callable[[], object]) -> None:
        try:
            action()
        except Exception as e:  # noqa: BLE001 - one broken implementation must not stop the others
            outcome.failures[name] = _describe(e)
            del active[name]

    def read_values(into: dict[str, CheckValue]) -> None:
        for name in list(active):
            attempt(name, lambda n=name: into.__setitem__(n, runners[n].check_value()))

    # a runner that compiles on its first steps (``warmup_steps``) warms up all the others as long, in lockstep
    warmup = max([plan.warmup, *(r.warmup_steps for r in runners.values())])
    for k in range(warmup):
        for name in list(active):
            start = time.perf_counter()
            attempt(name, lambda n=name, k=k: _untimed_step(runners[n], active[n], k))
            outcome.warmup_s[name] = outcome.warmup_s.get(name, 0.0) + time.perf_counter() - start
    outcome.timings = {name: Timings({p: [] for p in phases}) for name in active}
    gc.collect()
    spent, rounds = 0.0, 0
    while active and rounds < plan.max_steps and (rounds < plan.min_steps or spent < plan.min_time * len(active)):
        names = list(active)
        start = rounds % len(names)
        for name in names[start:] + names[:start]:
            k = warmup + rounds

            def timed(n: str = name, k: int = k) -> None:
                nonlocal spent
                spent += _timed_step(runners[n], active[n], k, outcome.timings[n], phases)

            attempt(name, timed)
        rounds += 1
        if rounds == plan.check_after:
            read_values(outcome.check_values)
            outcome.check_round = rounds
        if progress is not None:
            budget = plan.min_time * max(len(active), 1)
            needed = min(rounds / max(plan.min_steps, 1), spent / budget if budget else 1.0)
            progress(min(1.0, max(needed, rounds / plan.max_steps)))
    outcome.rounds = rounds
    for name in list(active):
        attempt(name, lambda n=name: _untimed_step(runners[n], active[n], warmup + rounds))
    read_values(outcome.final_values)
    if rounds < plan.check_after:
        outcome.check_values, outcome.check_round = dict(outcome.final_values), rounds
    for name in outcome.failures:
        outcome.timings.pop(name, None)
        outcome.check_values.pop(name, None)
    return outcome
