"""The function transforms of `autograd_core.transforms.func` against `torch.func` (the oracle) on every
backend, in float64: gradients, VJPs, JVPs, Jacobians, Hessians and their compositions."""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import func
from tests.helpers import assert_close

torch = pytest.importorskip("torch")
tf = pytest.importorskip("torch.func")

rng = np.random.default_rng(7)
X = rng.standard_normal((3, 4))
Y = rng.standard_normal((3, 4))
W = rng.standard_normal((4, 2))
T = rng.standard_normal((3, 4))


def ours(a: np.ndarray, requires_grad: bool = False) -> ag.Tensor:
    return ag.tensor(a, dtype="float64", requires_grad=requires_grad)


def theirs(a: np.ndarray) -> torch.Tensor:
    return torch.tensor(a, dtype=torch.float64)


# Each seed function is written once against a namespace (`ag` or `torch`) and its matmul.
SEEDS = {
    "sin_square": lambda ns, x, w: (ns.sin(x) * x**2).sum(),
    "tanh_layer": lambda ns, x, w: ns.tanh(x @ w),
    "exp_softplus": lambda ns, x, w: ns.log1p(ns.exp(x @ w)).sum(axis=0),
    "max_and_mean": lambda ns, x, w: row_max(ns, x * x) * x.mean(),
}


def row_max(ns, x):
    return torch.amax(x, dim=1) if ns is torch else ag.max(x, axis=1)


@pytest.fixture(params=sorted(SEEDS))
def seed(request: pytest.FixtureRequest):
    return SEEDS[request.param]


def test_grad_and_value_match_torch(float64_backend, seed):
    f = lambda x: seed(ag, x, ours(W)).sum()  # noqa: E731
    g = lambda x: seed(torch, x, theirs(W)).sum()  # noqa: E731
    gradient, value = func.grad_and_value(f)(ours(X))
    expected_gradient, expected_value = tf.grad_and_value(g)(theirs(X))
    assert_close(gradient, expected_gradient)
    assert_close(value, expected_value)
    assert not gradient.requires_grad


def test_vjp_matches_torch(float64_backend, seed):
    out, vjp_fn = func.vjp(lambda x, w: seed(ag, x, w), ours(X), ours(W))
    expected_out, expected_fn = tf.vjp(lambda x, w: seed(torch, x, w), theirs(X), theirs(W))
    cotangent = rng.standard_normal(tuple(out.shape))
    for got, want in zip(vjp_fn(ours(cotangent)), expected_fn(theirs(cotangent))):
        assert_close(got, want)
    assert_close(out, expected_out)


def test_jvp_matches_torch(float64_backend, seed):
    tw = rng.standard_normal(W.shape)
    out, tangent = func.jvp(lambda x, w: seed(ag, x, w), (ours(X), ours(W)), (ours(T), ours(tw)))
    expected_out, expected = tf.jvp(lambda x, w: seed(torch, x, w), (theirs(X), theirs(W)), (theirs(T), theirs(tw)))
    assert_close(tangent, expected)
    assert_close(out, expected_out)


def test_argnums_aux_and_pytrees(float64_backend):
    def f(params, x):
        loss = ((x @ params["w"]) ** 2).sum() + params["b"][0].sum()
        return loss, {"doubled": loss * 2}

    params = {"w": ours(W), "b": [ours(np.ones(2))]}
    (grads, x_grad), aux = func.grad(f, argnums=(0, 1), has_aux=True)(params, ours(X))
    assert set(grads) == {"w", "b"} and isinstance(grads["b"], list)
    expected = tf.grad(lambda p, x: f(p, x)[0], argnums=(0, 1))({"w": theirs(W), "b": [theirs(np.ones(2))]}, theirs(X))
    assert_close(grads["w"], expected[0]["w"])
    assert_close(grads["b"][0], expected[0]["b"][0])
    assert_close(x_grad, expected[1])
    assert_close(aux["doubled"], 2 * f(params, ours(X))[0])


def test_named_tuples_round_trip_through_the_pytree():
    from typing import NamedTuple

    from autograd_core.graph.pytree import tree_flatten, tree_map, tree_unflatten

    class Pair(NamedTuple):
        low: int
        high: list

    tree = {"pair": Pair(1, [2, (3,)]), "plain": (4, 5)}
    leaves, spec = tree_flatten(tree)
    assert leaves == [1, 2, 3, 4, 5]
    assert tree_unflatten(spec, leaves) == tree and type(tree_unflatten(spec, leaves)["pair"]) is Pair
    doubled = tree_map(lambda v: v * 2, tree)
    assert doubled["pair"] == Pair(2, [4, (6,)]) and doubled["pair"].high == [4, (6,)]


def test_transforms_leave_inputs_and_grads_alone(float64_backend):
    """No side effect: no .grad accumulates anywhere, the inputs keep requires_grad=False."""
    w = ours(W, requires_grad=True)
    x = ours(X)
    func.grad(lambda x: (x @ w).sum())(x)
    func.jvp(lambda x: x @ w, (x,), (ours(T),))
    assert w.grad is None and not x.requires_grad


def test_nested_grad_is_the_second_derivative(float64_backend):
    f = lambda x: (x**3).sum()  # noqa: E731
    second = func.grad(lambda x: func.grad(f)(x).sum())(ours(X))
    assert_close(second, 6 * X)


def test_jvp_of_grad_and_grad_of_jvp_agree(float64_backend, seed):
    """Forward over reverse and reverse over forward give the same Hessian-vector product."""
    f = lambda x: seed(ag, x, ours(W)).sum()  # noqa: E731
    _, forward_over_reverse = func.jvp(func.grad(f), (ours(X),), (ours(T),))
    reverse_over_forward = func.grad(lambda x: func.jvp(f, (x,), (ours(T),))[1])(ours(X))
    assert_close(forward_over_reverse, reverse_over_forward)


def test_grad_inside_an_outer_backward(float64_backend):
    """A transform's result is differentiable by the user's own .backward()."""
    x = ours(X, requires_grad=True)
    g = func.grad(lambda x: (x**3).sum())(x)
    g.sum().backward()
    assert_close(x.grad, 6 * X)


def test_hvp_matches_torch(float64_backend, seed):
    f = lambda x: seed(ag, x, ours(W)).sum()  # noqa: E731
    value, (hv,) = func.hvp(f, (ours(X),), (ours(T),))
    g = lambda x: seed(torch, x, theirs(W)).sum()  # noqa: E731
    _, expected = tf.jvp(tf.grad(g), (theirs(X),), (theirs(T),))
    assert_close(hv, expected)
    assert_close(value, g(theirs(X)))


def test_clear_errors(float64_backend):
    with pytest.raises(RuntimeError, match="one-element tensor"):
        func.grad(lambda x: x * 2)(ours(X))
    with pytest.raises(TypeError, match="pair"):
        func.grad(lambda x: x.sum(), has_aux=True)(ours(X))
    with pytest.raises(ValueError, match="shaped as its primal"):
        func.jvp(ag.sin, (ours(X),), (ours(W),))
    with pytest.raises(TypeError, match="floating-point"):
        func.grad(lambda i: i.sum())(ag.arange(3))
    with pytest.raises(ValueError, match="argnums"):
        func.grad(lambda x: x.sum(), argnums=2)(ours(X))


# written once against a namespace: jax.numpy and autograd_core share these names
JAX_CASES = {
    "elementwise": lambda ns, x: ns.exp(ns.sin(x)) * x + ns.tanh(x) / (1 + x**2),
    "reductions": lambda ns, x: ns.sum(x**2, axis=0) + ns.max(x, axis=-1).sum() * ns.mean(x),
    "indexing": lambda ns, x: x[1:, ::2] * x[0, None, :2] + x[1:, -1:],
}


@pytest.mark.parametrize("case", sorted(JAX_CASES))
def test_jvp_matches_jax(float64_backend, case):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    fn = JAX_CASES[case]
    out, tangent = func.jvp(lambda x: fn(ag, x), (ours(X),), (ours(T),))
    expected_out, expected = jax.jvp(lambda x: fn(jnp, x), (X,), (T,))
    assert_close(tangent, np.asarray(expected))
    assert_close(out, np.asarray(expected_out))
