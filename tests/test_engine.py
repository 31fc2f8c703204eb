"""Engine semantics on every backend: sums over paths, accumulation, ownership of gradients,
grad modes, dtypes, deep graphs and the errors a user meets."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import autograd_core as ag
from autograd_core.autodiff.engine import topological_order


def leaf(value, dtype="float64"):
    return ag.tensor(value, dtype=dtype, requires_grad=True)


def test_diamond_sums_both_paths(backend):
    x = leaf(1.0)
    a = 2 * x
    b, c = 3 * a, a + 1
    (b + c).backward()
    assert x.grad.item() == 8.0


def test_same_tensor_twice_in_one_op(backend):
    x = leaf([3.0, -2.0])
    (x * x).sum().backward()
    assert x.grad.tolist() == [6.0, -4.0]


def test_reused_node_is_visited_once(backend):
    x = leaf(2.0)
    y = x * 3
    z = y * y + y  # dz/dx = (2y + 1) * 3 = 39
    order = topological_order(z)
    assert len(order) == len({id(t) for t in order})
    z.backward()
    assert x.grad.item() == 39.0


def test_leaf_gradients_accumulate_across_backward_calls(backend):
    x = leaf([1.0, 2.0])
    for _ in range(3):
        (x * 5).sum().backward()
    assert x.grad.tolist() == [15.0, 15.0]


def test_two_leaves_never_share_a_gradient_array(backend):
    # The aliasing regression: both inputs of an add receive the very same upstream
    # gradient; if that array became both .grad values, updating one would change the other.
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (a + b).sum().backward()
    assert a.grad.array is not b.grad.array
    if backend.mutable:
        a.grad.array += 1  # works only if the gradient owns writable memory
        assert b.grad.tolist() == [1.0, 1.0]
        assert a.grad.tolist() == [2.0, 2.0]


def test_gradient_of_a_broadcast_is_owned_memory(backend):
    # sum's VJP broadcasts the upstream gradient (a read-only view in numpy): the leaf's
    # .grad must be a writable copy.
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    x.sum().backward()
    if backend.mutable:
        x.grad.array *= 2
        assert x.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_seed_gradient_is_not_aliased(backend):
    x = leaf([1.0, 2.0])
    seed = ag.tensor([1.0, 1.0], dtype="float64")
    x.backward(seed)
    assert x.grad.array is not seed.array


def test_no_grad_records_nothing(backend):
    x = leaf([1.0])
    with ag.no_grad():
        y = x * 2
        assert not ag.is_grad_enabled()
        with ag.enable_grad():
            z = x * 2
    assert ag.is_grad_enabled()
    assert not y.requires_grad and y.is_leaf
    assert z.requires_grad

    @ag.no_grad()
    def double(t):
        return t * 2

    assert not double(x).requires_grad


def test_detach_cuts_the_graph(backend):
    x = leaf([2.0])
    y = x * x.detach()  # only the first factor is differentiated
    y.sum().backward()
    assert x.grad.tolist() == [2.0]


def test_inputs_without_requires_grad_get_no_gradient(backend):
    x, c = leaf([1.0, 2.0]), ag.tensor([3.0, 4.0], dtype="float64")
    (x * c).sum().backward()
    assert c.grad is None and x.grad.tolist() == [3.0, 4.0]


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x * 2.5,
        lambda x: 2.5 * x,
        lambda x: x / 3.0,
        lambda x: 1.0 - x,
        lambda x: x**2,
        lambda x: 2.0**x,
        lambda x: ag.exp(x),
        lambda x: ag.mean(x),
        lambda x: ag.var(x),
        lambda x: x @ ag.matrix_transpose(x),
        lambda x: ag.maximum(x, 0.5),
        lambda x: ag.where(x > 0, x, 0.0),
        lambda x: ag.clip(x, -1.0, 1.0),
        lambda x: ag.softmax(x, 1),
        lambda x: ag.logsumexp(x, 1),
    ],
    ids=[
        "mul",
        "rmul",
        "div",
        "rsub",
        "pow",
        "rpow",
        "exp",
        "mean",
        "var",
        "matmul",
        "maximum",
        "where",
        "clip",
        "softmax",
        "logsumexp",
    ],
)
def test_float32_stays_float32(backend, fn):
    x = ag.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    out = fn(x)
    assert out.dtype == ag.float32
    out.sum().backward()
    assert x.grad.dtype == ag.float32


def test_dtype_inference():
    assert ag.tensor([1.0, 2.0]).dtype == ag.float32
    assert ag.tensor(np.array([1.0, 2.0])).dtype == ag.float64
    assert ag.tensor([1, 2]).dtype == ag.int64
    assert ag.tensor([True]).dtype == ag.bool
    assert ag.tensor([1, 2], dtype="float64").dtype == ag.float64
    assert ag.tensor([1, 2], dtype=ag.float32).dtype == "float32"
    with pytest.raises(TypeError, match="unknown dtype"):
        ag.tensor([1.0], dtype="float128")


def test_only_floating_tensors_require_grad(backend):
    with pytest.raises(TypeError, match="floating"):
        ag.Tensor([1, 2], requires_grad=True)


def test_creation_functions(backend):
    assert ag.zeros(2, 3).shape == (2, 3) and ag.zeros((2, 3)).dtype == ag.float32
    assert ag.ones(4, dtype="float64").tolist() == [1.0] * 4
    assert ag.full((2,), 7.0).tolist() == [7.0, 7.0]
    assert ag.arange(4).tolist() == [0, 1, 2, 3] and ag.arange(4).dtype == ag.int64
    assert ag.arange(0.0, 1.0, 0.5).tolist() == [0.0, 0.5]
    x = ag.randn(3, 2, dtype="float64")
    assert ag.zeros_like(x).dtype == ag.float64 and ag.ones_like(x).shape == (3, 2)
    r = ag.rand(1000).numpy()
    assert r.min() >= 0 and r.max() < 1
    assert all(t.backend is backend for t in (x, ag.zeros(1), ag.arange(2)))


def test_manual_seed_repeats_draws(backend):
    ag.manual_seed(3)
    first = ag.randn(5).numpy()
    ag.manual_seed(3)
    assert np.array_equal(first, ag.randn(5).numpy())


def test_deep_chain_has_no_recursion_limit(backend):
    x = leaf(1.0)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad.item() == 1.0
    del y  # freeing a 100,000-node graph must not recurse either
    gc.collect()


def test_backward_of_a_non_scalar_needs_a_gradient(backend):
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="gradient"):
        (x * 2).backward()
    (x * 2).backward(ag.tensor([1.0, 10.0], dtype="float64"))
    assert x.grad.tolist() == [2.0, 20.0]


def test_gradient_of_the_wrong_shape_is_refused(backend):
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="shape"):
        (x * 2).backward(ag.ones(3, dtype="float64"))


def test_backward_without_a_graph_is_an_error(backend):
    with pytest.raises(RuntimeError, match="does not require grad"):
        ag.tensor([1.0]).sum().backward()


def test_a_vjp_of_the_wrong_shape_is_caught(backend):
    from autograd_core.graph.tensor_base import record

    x = leaf([1.0, 2.0])
    bad = record("bad", x.array * 2, x.backend, (x,), (lambda ns, g, out, x: ns.sum(g),))
    with pytest.raises(RuntimeError, match="VJP of bad"):
        bad.sum().backward()


def test_item_and_conversions(backend):
    t = ag.tensor([[2.5]])
    assert t.item() == 2.5 and float(t) == 2.5 and t.ndim == 2 and t.numel() == 1
    with pytest.raises(ValueError, match="one element"):
        ag.tensor([1.0, 2.0]).item()
    assert isinstance(ag.tensor([1.0, 2.0]).numpy(), np.ndarray)


def test_comparisons_are_not_differentiable(backend):
    x = leaf([1.0, 2.0])
    for mask in (x > 1.5, x <= 1.0, x == 2.0, x != 2.0):
        assert mask.dtype == ag.bool and not mask.requires_grad
    assert (x > 1.5).tolist() == [False, True]


def test_index_errors_are_clear(backend):
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(IndexError, match="out of range"):
        x[[0, 5]]
    assert x[0, [1, 0]].tolist() == [2.0, 1.0]  # an int beside an integer array, as numpy indexes
    with pytest.raises(IndexError, match="adjacent"):
        ag.zeros((2, 2, 2))[[0, 1], :, [0, 1]]


def test_tensor_from_a_reversed_numpy_view(backend):
    values = np.arange(4.0)[::-1]
    assert ag.tensor(values).tolist() == [3.0, 2.0, 1.0, 0.0]
    assert ag.tensor(np.float64(2.5)).shape == ()
