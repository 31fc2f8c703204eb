"""What one `ag.func.vmap` call costs the backward() calls after it, in one process.

    python tools/vmap_penalty.py

Times the best of 15 backward() calls of a 2,000-multiply chain before one vmap call and
after it; a sweep's choices are made from the graph it sweeps, so the two should agree.
"""

from __future__ import annotations

import timeit

import autograd_core as ag


def chain() -> ag.Tensor:
    """The sum of a vector multiplied 2,000 times: a graph of 2,001 nodes."""
    y = ag.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for _ in range(2000):
        y = y * 1.0001
    return y.sum()


def best_backward_ms(repeats: int = 15) -> float:
    times = []
    for _ in range(repeats):
        loss = chain()
        start = timeit.default_timer()
        loss.backward()
        times.append(timeit.default_timer() - start)
    return min(times) * 1e3


def main() -> None:
    before = best_backward_ms()
    ag.func.vmap(lambda row: row * 2)(ag.ones((3, 2)))
    after = best_backward_ms()
    print(f"backward of the chain: {before:.2f} ms before one vmap call, {after:.2f} ms after ({after / before:.2f}x)")


if __name__ == "__main__":
    main()
