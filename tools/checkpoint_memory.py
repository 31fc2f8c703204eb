"""What gradient checkpointing saves and costs: one training step (forward, backward, AdamW step)
of the bench's GPT (bench/gpt_model.py, nanoGPT's CPU configuration) on numpy float32, with
and without every transformer block checkpointed (`ag.checkpoint`).

    python tools/checkpoint_memory.py                     # batches 12 (the bench's) and 48, 7 timed steps each
    python tools/checkpoint_memory.py --batch 64 --repeats 9 --out /tmp/checkpoint-memory.json

Memory is Python's allocations as tracemalloc counts them (numpy's arrays included), in a run
of its own per variant: the peak during one step, in all (the model, its gradients and the
optimizer's state included) and above what was held before the step. Time is measured without
tracemalloc, the two variants' steps alternating after a warm-up, min and median of each, as
wall-clock and as the process's CPU time (which other processes on a busy machine disturb
less; the load average, at the start and the end, tells how busy it was). The first step's
gradients of both variants are compared too (they must be equal, bit for bit). Prints a table
and writes the figures as JSON (default: results/checkpoint-memory.json).
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import platform
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import autograd_core as ag
import backends
import nn
import nn.functional as F
import optim
from bench.gpt_model import GPTConfig, gpt
from bench.problems import ADAM_EPS, BETAS, GPT_LR, WEIGHT_DECAY
from bench.runner import GPT_BATCH
from bench.threads import limit_loaded_libraries

ROOT = Path(__file__).resolve().parent.parent
GOALS = {"peak_memory_ratio": 0.5, "time_ratio": 1.4}  # the issue's: at most, checkpointed over plain
VARIANTS = ("plain", "checkpointed")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--batch", type=int, nargs="+", default=[GPT_BATCH, 48], help="Blocks of 64 characters per step (one run each)."
    )
    p.add_argument("--repeats", type=int, default=7, help="Timed steps of each variant.")
    p.add_argument("--seed", type=int, default=0, help="The weights' and the batch's seed.")
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="BLAS threads (0: the library's default). One by default: on a busy machine, idle BLAS threads spin "
        "and the times say more about the other processes than about the step.",
    )
    p.add_argument("--out", type=Path, default=ROOT / "results" / "checkpoint-memory.json", help="The JSON written.")
    return p


def checkpoint_blocks(model: nn.Module) -> nn.Module:
    """Run each transformer block of `model` (its ``h``) through `ag.checkpoint`."""
    for block in model.h:
        block.forward = functools.partial(ag.checkpoint, block.forward)
    return model


class Step:
    """One variant's model, optimizer and batch; calling it runs one training step."""

    def __init__(self, variant: str, batch: int, seed: int) -> None:
        config = GPTConfig()
        ag.manual_seed(seed)
        self.model = gpt(nn, config)
        if variant == "checkpointed":
            checkpoint_blocks(self.model)
        self.opt = optim.AdamW(self.model.parameters(), lr=GPT_LR, betas=BETAS, eps=ADAM_EPS, weight_decay=WEIGHT_DECAY)
        rng = np.random.default_rng(seed)
        tokens = rng.integers(0, config.vocab_size, (batch, config.block_size + 1))
        self.x, self.y = ag.tensor(tokens[:, :-1]), ag.tensor(tokens[:, 1:].reshape(-1))

    def __call__(self) -> float:
        loss = F.cross_entropy(self.model(self.x), self.y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    def grads(self) -> list[np.ndarray]:
        return [p.grad.numpy() for p in self.model.parameters()]


def first_steps_agree(batch: int, seed: int) -> bool:
    """Whether one step of each variant from the same weights gives the same loss and gradients."""
    plain, checkpointed = Step("plain", batch, seed), Step("checkpointed", batch, seed)
    if plain() != checkpointed():
        return False
    return all(np.array_equal(a, b) for a, b in zip(plain.grads(), checkpointed.grads()))


def peak_memory(variant: str, batch: int, seed: int) -> dict[str, int]:
    """Python's allocated bytes around one step of `variant` (after a first step, which makes
    the optimizer's state): held before it, and the peak during it."""
    gc.collect()
    tracemalloc.start()
    try:
        step = Step(variant, batch, seed)
        step()
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        step()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return {"held_bytes": held, "peak_bytes": peak, "peak_above_held_bytes": peak - held}


def step_times(steps: dict[str, Callable[[], float]], repeats: int) -> dict[str, dict[str, list[float]]]:
    """Seconds per step of each variant, wall-clock and this process's CPU time (all its
    threads), their steps alternating after one warm-up step each."""
    for step in steps.values():
        step()
    times: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": []} for name in steps}
    for _ in range(repeats):
        for name, step in steps.items():
            wall, cpu = time.perf_counter(), time.process_time()
            step()
            times[name]["cpu"].append(time.process_time() - cpu)
            times[name]["wall"].append(time.perf_counter() - wall)
    return times


def measure(batch: int, repeats: int, seed: int) -> dict[str, Any]:
    """Both variants at `batch`: whether their gradients agree, their memory, their step times."""
    with backends.use("numpy"):
        agree = first_steps_agree(batch, seed)
        memory = {v: peak_memory(v, batch, seed) for v in VARIANTS}
        times = step_times({v: Step(v, batch, seed) for v in VARIANTS}, repeats)
    timing = {
        v: {
            **{f"{kind}_min_s": min(t[kind]) for kind in ("wall", "cpu")},
            **{f"{kind}_median_s": statistics.median(t[kind]) for kind in ("wall", "cpu")},
            **{f"{kind}_times_s": t[kind] for kind in ("wall", "cpu")},
        }
        for v, t in times.items()
    }
    plain, ck = memory["plain"], memory["checkpointed"]
    ratios = {
        "peak_memory_ratio": ck["peak_bytes"] / plain["peak_bytes"],
        "peak_above_held_ratio": ck["peak_above_held_bytes"] / plain["peak_above_held_bytes"],
        **{
            f"{kind}_time_ratio_{stat}": timing["checkpointed"][f"{kind}_{stat}_s"]
            / timing["plain"][f"{kind}_{stat}_s"]
            for kind in ("wall", "cpu")
            for stat in ("min", "median")
        },
    }
    meets = {
        "peak_memory": ratios["peak_memory_ratio"] <= GOALS["peak_memory_ratio"],
        "time": ratios["wall_time_ratio_median"] <= GOALS["time_ratio"],
    }
    return {
        "batch": batch,
        "gradients_identical": agree,
        "memory": memory,
        "timing": timing,
        "ratios": ratios,
        "meets_goals": meets,
    }


def measure_all(batches: Sequence[int], repeats: int, seed: int, threads: int) -> dict[str, Any]:
    """`measure` at each of `batches` (with `threads` BLAS threads, 0: as the library has them),
    with what was measured and on what."""
    limited = limit_loaded_libraries(threads) if threads else {}
    load_start = os.getloadavg()
    runs = [measure(batch, repeats, seed) for batch in batches]
    return {
        "what": "one training step (forward, backward, AdamW step) of bench/gpt_model.py's GPT, numpy float32, "
        "every transformer block checkpointed or not",
        "command": f"python tools/checkpoint_memory.py --batch {' '.join(map(str, batches))} --repeats {repeats} "
        f"--seed {seed} --threads {threads}",
        "config": {**vars(GPTConfig()), "seed": seed, "repeats": repeats},
        "goals": GOALS,
        "runs": runs,
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "cpus": os.cpu_count(),
            "blas_threads": threads or "the library's default",
            "thread_limits": limited,
            "load_average_start": load_start,
            "load_average_end": os.getloadavg(),
        },
    }


def table(result: dict[str, Any]) -> str:
    """One block of rows per batch: memory and time of both variants, and their ratio."""
    mib = 2.0**20
    rows = []
    for run in result["runs"]:
        memory, timing, ratios = run["memory"], run["timing"], run["ratios"]
        rows.append(f"{'batch ' + str(run['batch']):<30}{'plain':>10}{'checkpointed':>14}{'ratio':>8}")
        for label, key, ratio in (
            ("peak memory (MiB)", "peak_bytes", "peak_memory_ratio"),
            ("peak above held (MiB)", "peak_above_held_bytes", "peak_above_held_ratio"),
        ):
            plain, ck = memory["plain"][key] / mib, memory["checkpointed"][key] / mib
            rows.append(f"  {label:<28}{plain:>10.2f}{ck:>14.2f}{ratios[ratio]:>8.2f}")
        for kind in ("wall", "cpu"):
            for stat in ("min", "median"):
                plain, ck = (timing[v][f"{kind}_{stat}_s"] * 1e3 for v in VARIANTS)
                label = f"step {kind} time {stat} (ms)"
                rows.append(f"  {label:<28}{plain:>10.1f}{ck:>14.1f}{ratios[f'{kind}_time_ratio_{stat}']:>8.2f}")
        rows.append(f"  gradients identical: {run['gradients_identical']}; meets the goals: {run['meets_goals']}")
    machine = result["machine"]
    rows.append(
        f"goals (at most): {result['goals']}; {machine['blas_threads']} BLAS thread(s); "
        f"load average {machine['load_average_start'][0]:.1f} at the start, "
        f"{machine['load_average_end'][0]:.1f} at the end, {machine['cpus']} CPUs"
    )
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result = measure_all(args.batch, args.repeats, args.seed, args.threads)
    print(table(result))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
