"""What the compiled module (autograd_core/graph/_sweep.c) buys: the same workloads timed with it
and without it, side by side in one run.

    python tools/sweep_ratio.py                 # every workload, 15 interleaved rounds
    python tools/sweep_ratio.py --rounds 30 --workloads chain,mlp1

Each variant is a worker process started once (the module is chosen at import, so one process
cannot hold both): ``compiled`` imports the package as installed, ``python`` blocks the import
of ``autograd_core.graph._sweep`` so the Python definitions run alone. Both are pinned to the same
core with one BLAS thread. The rounds interleave the variants (their order alternating), so
both see the same machine; each sample is the mean of a batch of calls, and the table gives
the minimum and median of the samples and the ratio python / compiled of each.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ("compiled", "python")
# name -> (what it times, the batch of calls per sample)
WORKLOADS = {
    "mul": ("one `a * b` of 1-element tensors that require grad (forward only)", 2000),
    "chain": ("2,000-multiply chain, forward + backward", 3),
    "mlp1": ("MLP 784-512-256-10, batch 1, forward + backward", 20),
    "mlp32": ("MLP 784-512-256-10, batch 32, forward + backward", 10),
    "mlp1-step": ("MLP batch 1, forward + backward + AdamW", 20),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved samples per variant (default 15)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated, from " + ",".join(WORKLOADS))
    args = parser.parse_args()
    names = args.workloads.split(",")
    workers = {variant: _start(variant) for variant in VARIANTS}
    built = {variant: _ask(worker, "built") for variant, worker in workers.items()}
    if not built["compiled"]:
        sys.exit(
            "autograd_core.graph._sweep is not built here: nothing to compare (pip install -e . with a C compiler)"
        )
    samples = {(name, variant): [] for name in names for variant in VARIANTS}
    for name in names:
        for worker in workers.values():
            _ask(worker, name)  # warm-up
        for k in range(args.rounds):
            for variant in VARIANTS if k % 2 == 0 else VARIANTS[::-1]:
                samples[name, variant].append(_ask(workers[variant], name))
    for worker in workers.values():
        worker.stdin.close()
        worker.wait()
    _print_table(names, samples, args.rounds)


def _start(variant: str) -> subprocess.Popen:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    command = [sys.executable, __file__, "--worker", variant]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def _ask(worker: subprocess.Popen, request: str) -> object:
    worker.stdin.write(request + "\n")
    worker.stdin.flush()
    line = worker.stdout.readline()
    if not line:
        sys.exit(f"a worker stopped while answering {request!r}")
    return json.loads(line)


def _print_table(names: list[str], samples: dict, rounds: int) -> None:
    print(f"{rounds} interleaved samples per variant; µs per call; ratio = python / compiled")
    print()
    print("| workload | compiled min | compiled median | python min | python median | ratio min | ratio median |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        c, p = samples[name, "compiled"], samples[name, "python"]
        cmin, cmed, pmin, pmed = min(c), statistics.median(c), min(p), statistics.median(p)
        print(
            f"| {WORKLOADS[name][0]} | {cmin:.1f} | {cmed:.1f} | {pmin:.1f} | {pmed:.1f} "
            f"| {pmin / cmin:.3f} | {pmed / cmed:.3f} |"
        )


# --- the worker --------------------------------------------------------------------------


def worker(variant: str) -> None:
    if variant == "python":
        sys.modules["autograd_core.graph._sweep"] = None  # `from autograd_core import _sweep` raises ImportError
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    from bench.threads import limit_loaded_libraries

    runs = _workloads()
    limit_loaded_libraries(1)
    for request in sys.stdin:
        request = request.strip()
        if request == "built":
            answer: object = sys.modules.get("autograd_core.graph._sweep") is not None
        else:
            run, calls = runs[request], WORKLOADS[request][1]
            start = time.perf_counter()
            for _ in range(calls):
                run()
            answer = (time.perf_counter() - start) / calls * 1e6
        print(json.dumps(answer), flush=True)


def _workloads() -> dict[str, Callable[[], None]]:
    import autograd_core as ag
    from bench.impls.ours import Ours
    from bench.problems import make_problem

    ours = Ours("numpy")
    chain = ours.setup(make_problem("ops", 1))
    mlp1, mlp32, mlp1_step = (ours.setup(make_problem("mlp", batch)) for batch in (1, 32, 1))
    for runner in (mlp1, mlp32, mlp1_step):
        runner.select(0)
    a = ag.tensor([1.0], dtype="float32", requires_grad=True)
    b = ag.tensor([1.0001], dtype="float32", requires_grad=True)

    def forward_backward(runner: object) -> Callable[[], None]:
        return lambda: (runner.forward(), runner.backward())

    return {
        "mul": lambda: a * b,
        "chain": chain.step,
        "mlp1": forward_backward(mlp1),
        "mlp32": forward_backward(mlp32),
        "mlp1-step": lambda: (mlp1_step.forward(), mlp1_step.backward(), mlp1_step.optimizer()),
    }


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2])
    else:
        main()
