"""Grad mode, anomaly mode and the backend registry with real threads (per-thread modes, as
PyTorch keeps them; one Backend object per library and device)."""

from __future__ import annotations

import threading

import autograd_core as ag
import backends
import nn
import nn.functional as F
import optim


def run_together(*targets, repeats: int = 1):
    """Start every target in its own thread at the same moment (a barrier), wait for all."""
    barrier = threading.Barrier(len(targets))
    errors: list[BaseException] = []

    def wrapped(target):
        try:
            barrier.wait()
            for _ in range(repeats):
                target()
        except BaseException as e:  # noqa: BLE001 - re-raised in the main thread
            errors.append(e)

    threads = [threading.Thread(target=wrapped, args=(t,)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_no_grad_in_one_thread_leaves_another_recording(backend):
    model = nn.Linear(4, 3)
    opt = optim.SGD(model.parameters(), lr=0.01)
    x, y = ag.ones((8, 4)), ag.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    recorded = []

    def train():
        with backends.use(backend):
            loss = F.cross_entropy(model(x), y)
            recorded.append(loss.requires_grad)
            opt.zero_grad()
            loss.backward()
            with ag.no_grad():
                opt.step()

    def evaluate():
        with backends.use(backend), ag.no_grad():
            assert not model(x).requires_grad

    run_together(train, evaluate, repeats=300)
    assert recorded == [True] * 300
    assert ag.is_grad_enabled()


def in_order(*steps):
    """Run `steps` of (thread number, callable) one after another, each thread's steps in its
    own thread: the interleaving is fixed, so a race that needs it happens every time."""
    turns = [threading.Event() for _ in steps]
    threads = {}
    errors: list[BaseException] = []

    def worker(mine):
        try:
            for i, fn in mine:
                turns[i].wait(10)
                fn()
                if i + 1 < len(turns):
                    turns[i + 1].set()
        except BaseException as e:  # noqa: BLE001 - re-raised in the main thread
            errors.append(e)
            for t in turns:
                t.set()

    for n in {n for n, _ in steps}:
        threads[n] = threading.Thread(target=worker, args=([(i, f) for i, (m, f) in enumerate(steps) if m == n],))
        threads[n].start()
    turns[0].set()
    for t in threads.values():
        t.join()
    if errors:
        raise errors[0]


def test_a_thread_records_while_another_is_inside_no_grad():
    block = ag.no_grad()
    x = ag.tensor([1.0], requires_grad=True)
    recorded = []
    in_order((0, block.__enter__), (1, lambda: recorded.append((x * 2).requires_grad)), (0, lambda: block.__exit__()))
    assert recorded == [True]


def test_overlapping_no_grad_blocks_in_two_threads_restore_grad_mode():
    first, second = ag.no_grad(), ag.no_grad()
    in_order((0, first.__enter__), (1, second.__enter__), (0, lambda: first.__exit__()), (1, lambda: second.__exit__()))
    assert ag.is_grad_enabled()


def test_anomaly_mode_is_per_thread():
    block, seen = ag.detect_anomaly(), []
    in_order((0, block.__enter__), (1, lambda: seen.append(ag.is_anomaly_enabled())), (0, lambda: block.__exit__()))
    assert seen == [False]


def test_threads_that_first_ask_for_a_backend_at_once_get_one_object(monkeypatch):
    import time

    import backends.numpy

    def slow_create(device=None, _create=backends.numpy.create):
        time.sleep(0.05)  # a library import takes this long; the threads all arrive meanwhile
        return _create(device)

    monkeypatch.setattr(backends, "_instances", {})
    monkeypatch.setattr(backends.numpy, "create", slow_create)
    got = []
    run_together(*[lambda: got.append(backends.get("numpy"))] * 4)
    assert len({id(b) for b in got}) == 1
