"""Which gradient memory the sweep takes over (engine.OWNERSHIP): only arrays it made itself
(sums, casts, a VJP's fresh result) that no hook has seen. A leaf's ``.grad`` must then never share memory with
another leaf's, a hook's, the seed's or the graph's arrays: changing one in place must not
change the other. Each test runs on the compiled loop (where built) and the Python one."""

from __future__ import annotations

import pytest

import autograd_core as ag


@pytest.fixture
def mutable(backend):
    if not backend.mutable:
        pytest.skip(f"{backend.name} arrays are immutable: nothing can be changed in place")
    return backend


def leaf(values):
    return ag.tensor(values, dtype="float64", requires_grad=True)


def values(t):
    return t.detach().tolist()


def test_one_gradient_sent_to_two_parents(mutable, sweep):
    """add's VJP returns its incoming gradient for both operands."""
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (a + b).backward(ag.tensor([1.0, 1.0], dtype="float64"))
    a.grad += 5.0
    assert values(b.grad) == [1.0, 1.0]
    b.grad.array[0] = -1.0
    assert values(a.grad) == [6.0, 6.0]


def test_a_leaf_used_twice_and_its_neighbour(mutable, sweep):
    """x + x sums two contributions (the sweep's own array); y gets add's gradient as it is."""
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    ((x + x) + y).sum().backward()
    assert values(x.grad) == [2.0, 2.0] and values(y.grad) == [1.0, 1.0]
    y.grad *= 3.0
    x.grad *= 10.0
    assert values(x.grad) == [20.0, 20.0] and values(y.grad) == [3.0, 3.0]


def test_x_times_x(mutable, sweep):
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    x.grad += 1.0
    assert values(x.grad) == [3.0, 5.0] and values(x) == [1.0, 2.0]


def test_a_chain_of_adds_into_a_leaf_used_twice(mutable, sweep):
    """Every add hands the seed on unchanged: without copies, x.grad, y.grad and the seed would
    be one array."""
    x, y = leaf([1.0, 2.0]), leaf([0.5, 0.5])
    seed = ag.tensor([1.0, 1.0], dtype="float64")
    (((x + y) + 1.0) + x).backward(seed)
    assert values(x.grad) == [2.0, 2.0] and values(y.grad) == [1.0, 1.0]
    y.grad.array[:] = 9.0
    x.grad.array[:] = 8.0
    assert values(seed) == [1.0, 1.0] and values(x.grad) == [8.0, 8.0] and values(y.grad) == [9.0, 9.0]


def test_the_seed_is_the_caller_s(mutable, sweep):
    x = leaf([1.0, 2.0])
    seed = ag.tensor([1.0, 1.0], dtype="float64")
    (x + 0.0).backward(seed)
    x.grad += 1.0
    assert values(seed) == [1.0, 1.0]


def test_a_hook_keeps_what_it_was_shown(mutable, sweep):
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    shown = []
    x.register_hook(shown.append)
    ((x * y) + (x * 2.0)).sum().backward()  # x's gradient is a sum, then a hook sees it
    x.grad += 100.0
    assert values(shown[0]) == [5.0, 6.0]


def test_a_hook_returns_an_array_it_keeps(mutable, sweep):
    kept = ag.tensor([7.0, 7.0], dtype="float64")
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    h = x * y
    h.register_hook(lambda g: kept)
    x.register_hook(lambda g: kept)
    h.sum().backward()
    x.grad.array[:] = 0.0
    y.grad.array[:] = 0.0
    assert values(kept) == [7.0, 7.0]


def test_a_retained_gradient_and_the_leaf_s(mutable, sweep):
    x = leaf([1.0, 2.0])
    h = x + 1.0
    h.retain_grad()
    (h + h).sum().backward()
    x.grad += 1.0
    assert values(h.grad) == [2.0, 2.0] and values(x.grad) == [3.0, 3.0]


def test_retain_graph_accumulates_into_the_held_gradient_own_memory(mutable, sweep):
    """As in PyTorch, the second backward adds into the tensor a caller holds; the sum is
    fresh memory, shared with no other gradient."""
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    z = x + y
    z.sum().backward(retain_graph=True)
    first = x.grad
    z.sum().backward()
    assert first is x.grad and values(x.grad) == [2.0, 2.0]
    x.grad += 1.0
    assert values(y.grad) == [2.0, 2.0]


def test_a_custom_function_returns_one_array_for_two_arguments(mutable, sweep):
    class Twice(ag.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, grad):
            shared = grad * 2.0
            return shared, shared

    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    Twice.apply(a, b).sum().backward()
    a.grad += 1.0
    assert values(b.grad) == [2.0, 2.0]


def test_create_graph_gradients_are_not_shared(mutable, sweep):
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x + y).sum().backward(create_graph=True)
    x.grad.array[0] = 50.0
    assert values(y.grad) == [1.0, 1.0]
