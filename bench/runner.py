"""The sweep: which points to measure, and for each one set up the implementations, time
them in lockstep, cross-check their losses and turn the outcome into records."""

from __future__ import annotations

import gc
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from bench import threads
from bench.check import cross_check, cross_check_within
from bench.impls.base import Impl, Runner
from bench.problems import DEFAULT_WORKLOADS, FULLBATCH_ROWS, PHASES_OF, WORKLOADS, Problem, make_problem
from bench.progress import Progress
from bench.timing import Outcome, Plan, time_lockstep

MLP_BATCHES = (1, 32, 128, 512, 2048)
CHAR_BATCH = 256
CNN_BATCH = 64
GPT_BATCH = 12  # nanoGPT's CPU batch, of 64-character blocks
PHASE_BATCH = 128
TRANSFORMS_BATCH = 64


@dataclass(frozen=True)
class Settings:
    """What to measure and how long. `batches` are the MLP's; char, cnn, gpt, phase and
    transforms use fixed ones; `fullbatch_rows` are the data sizes of the fullbatch workload
    (rows in one step). Without `dropout`, the CNN and the GPT are timed without it (every
    implementation then computes the same function, all cross-checked together)."""

    workloads: tuple[str, ...] = DEFAULT_WORKLOADS
    batches: tuple[int, ...] = MLP_BATCHES
    plan: Plan = field(default_factory=Plan)
    threads: int = 1
    seed: int = 0
    char_batch: int = CHAR_BATCH
    cnn_batch: int = CNN_BATCH
    gpt_batch: int = GPT_BATCH
    phase_batch: int = PHASE_BATCH
    transforms_batch: int = TRANSFORMS_BATCH
    fullbatch_rows: tuple[int, ...] = FULLBATCH_ROWS
    dropout: bool = True

    def points(self) -> list[tuple[str, int]]:
        """(workload, batch) in the order they are measured."""
        batch_of = {
            "char": [self.char_batch],
            "cnn": [self.cnn_batch],
            "gpt": [self.gpt_batch],
            "ops": [1],
            "phase": [self.phase_batch],
            "transforms": [self.transforms_batch],
            "mlp": list(self.batches),
            "fullbatch": list(self.fullbatch_rows),
        }
        return [(w, b) for w in WORKLOADS if w in self.workloads for b in batch_of[w]]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Run:
    """Everything a sweep produced: one record per measured point and implementation (and
    phase), the implementations skipped with their reason, the check warnings."""

    records: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    thread_limits: dict[str, Any] = field(default_factory=dict)


def _label(workload: str, batch: int) -> str:
    return "ops" if workload == "ops" else f"{workload} b={batch}"


def _by_phase(values: dict[str, Any], phases: Sequence[str]) -> dict[str, dict[str, float]]:
    """phase -> impl -> check value. A runner's check value is one float for its whole step,
    or a dict with one per phase (transforms: each part computes a result of its own)."""
    return {p: {impl: v[p] if isinstance(v, dict) else v for impl, v in values.items()} for p in phases}


def records_of(
    workload: str,
    batch: int,
    outcome: Outcome,
    phases: Sequence[str],
    chain: int,
    threads_used: int,
    masks: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """One record per implementation and phase; for the op chain the times are per op.

    ``check_ok`` is False when the check value (read after ``check_step`` timed steps) is off
    the consensus, or when the final value (after all the timed steps) is not finite; a
    runner that checks its phases apart is judged phase by phase. With `masks` (a workload
    with dropout: implementation -> the generator of its masks), values are compared only
    within each generator's group; ``check_note`` says why one was compared with none.
    """

    def check(values: dict[str, float]) -> dict[str, Any]:
        return cross_check(values) if masks is None else cross_check_within(values, masks)

    verdicts = {p: check(values) for p, values in _by_phase(outcome.check_values, phases).items()}
    finals = {p: check(values) for p, values in _by_phase(outcome.final_values, phases).items()}
    per = chain if workload == "ops" else 1
    records = []
    for impl, timings in outcome.timings.items():
        for phase in phases:
            verdict, final = verdicts[phase].get(impl), finals[phase].get(impl)
            ok = None if verdict is None else verdict.ok
            if final is not None and not math.isfinite(final.value):
                ok = False
            low, mid, n = timings.stats(phase)
            records.append(
                {
                    "workload": workload,
                    "batch": batch,
                    "impl": impl,
                    "phase": phase,
                    "min_ms": low * 1e3 / per,
                    "median_ms": mid * 1e3 / per,
                    "n": n,
                    "unit": "ms/op" if per > 1 else "ms/step",
                    "ops_per_step": per,
                    "cpu_over_wall": round(timings.cpu_over_wall, 3),
                    "warmup_s": round(outcome.warmup_s.get(impl, 0.0), 3),
                    "threads": threads_used,
                    "check_step": outcome.check_round,
                    "check_value": None if verdict is None else verdict.value,
                    "check_reference": None if verdict is None else verdict.reference,
                    "check_ok": ok,
                    "check_note": "" if verdict is None else verdict.note,
                    "final_value": None if final is None else final.value,
                    "final_reference": None if final is None else final.reference,
                }
            )
    return records


def _setup(
    impls: Sequence[Impl], workload: str, batch: int, settings: Settings, run: Run, progress: Progress
) -> tuple[dict[str, Runner], Problem]:
    problem = make_problem(workload, batch, settings.seed, settings.dropout)
    runners: dict[str, Runner] = {}
    for impl in impls:
        try:
            runners[impl.name] = impl.setup(problem)
        except Exception as e:  # noqa: BLE001 - a setup failure skips that implementation only
            reason = f"setup failed: {type(e).__name__}: {e}".splitlines()[0]
            run.skipped.append({"impl": impl.name, "workload": workload, "batch": batch, "reason": reason})
            progress.log(f"skip {impl.name} at {_label(workload, batch)}: {reason}")
    return runners, problem


def run(settings: Settings, impls: Sequence[Impl], progress: Progress | None = None, limit_threads: bool = True) -> Run:
    """Measure every point of `settings` with every implementation of `impls` that runs here.

    With `limit_threads`, the thread pools of the libraries the implementations loaded are
    limited to ``settings.threads`` for the rest of the process (the CLI's behaviour).
    """
    result = Run()
    points = settings.points()
    progress = progress or Progress(len(points))
    usable = []
    for impl in impls:
        reason = impl.unavailable()
        if reason:
            result.skipped.append({"impl": impl.name, "workload": None, "batch": None, "reason": reason})
            progress.log(f"skip {impl.name}: {reason}")
        else:
            usable.append(impl)
    # The libraries are imported now: limit their thread pools before anything is timed.
    if limit_threads:
        result.thread_limits = threads.limit_loaded_libraries(settings.threads)
    for workload, batch in points:
        progress.start_point(_label(workload, batch))
        here = [impl for impl in usable if workload in impl.workloads]
        runners, problem = _setup(here, workload, batch, settings, result, progress)
        phases = PHASES_OF.get(workload, ("step",))
        outcome = time_lockstep(runners, phases, settings.plan, progress.update)
        for impl, reason in outcome.failures.items():
            result.skipped.append({"impl": impl, "workload": workload, "batch": batch, "reason": reason})
            progress.log(f"dropped {impl} at {_label(workload, batch)}: {reason}")
        masks = {impl.name: impl.masks or impl.name for impl in here} if problem.dropout else None
        records = records_of(workload, batch, outcome, phases, problem.chain, settings.threads, masks)
        for r in records:
            per_phase = isinstance(outcome.check_values.get(r["impl"]), dict)
            if r["check_ok"] is False and (per_phase or r["phase"] == phases[-1]):
                what = f"{r['impl']} ({r['phase']})" if per_phase else r["impl"]
                message = (
                    f"WARNING {_label(workload, batch)}: {what} gave {r['check_value']:.7g} after "
                    f"{r['check_step']} timed steps, the consensus {r['check_reference']:.7g} (final value "
                    f"{r['final_value']:.7g}): beyond float32 tolerance, its result is marked"
                )
                result.warnings.append(message)
                progress.log(message)
        result.records.extend(records)
        del runners
        gc.collect()
        progress.finish_point(f" ({len(outcome.timings)} impls, {outcome.rounds} rounds)")
    progress.close()
    return result
