"""The benchmark: this framework on every backend against PyTorch, hand-written numpy, jax.jit
and numpy's autograd libraries (HIPS autograd, mygrad), on the same model, weights and
batches. Run it with ``python -m bench``.

Modules, one job each:
    problems   the models, sizes, data and initial weights shared by every implementation
    impls/     the implementations (ours:<backend>, torch, torch-fused, numpy-by-hand, jax-jit,
               hips-autograd, mygrad)
    timing     the lockstep round-robin timer
    check      the loss cross-check between implementations
    threads    thread counts and CPU pinning (before and after the libraries load)
    machine    facts about the machine and the library versions
    runner     the sweep over points
    report     tables, verdicts, JSON, CSV, comparison of two runs
    plot       the PNG
    progress   the progress line

Nothing is imported here, so that ``python -m bench`` can set thread variables before numpy loads.
"""
