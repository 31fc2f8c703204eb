"""The transforms on models, against `torch.func` with the same weights, on every backend in
float64: per-sample gradients (`vmap(grad)` through `functional_call`) of an MLP and a CNN,
Jacobians, Hessians and Hessian-vector products of an MLP loss in its parameters, and the
Jacobians of a CNN and of a GPT block in their inputs."""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
import nn
import nn.functional as F
from autograd_core import func
from bench.gpt_model import GPTConfig, gpt
from tests.helpers import assert_close

torch = pytest.importorskip("torch")
tf = pytest.importorskip("torch.func")

rng = np.random.default_rng(11)


def mlp(layers):
    return layers.Sequential(layers.Linear(5, 6), layers.Tanh(), layers.Linear(6, 3))


def cnn(layers):
    return layers.Sequential(
        layers.Conv2d(1, 3, 3, padding=1), layers.ReLU(), layers.MaxPool2d(2), layers.Flatten(), layers.Linear(27, 3)
    )


def gpt_block(layers):
    return gpt(layers, GPTConfig(block_size=4, vocab_size=7, n_layer=1, n_head=2, n_embd=8)).h[0]


INPUTS = {"mlp": (7, 5), "cnn": (7, 1, 6, 6)}


def twins(build):
    """Our model (on the backend under test) and PyTorch's, with the same float64 weights."""
    ag.manual_seed(0)
    ours = build(nn).double()
    theirs = build(torch.nn).double()
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    return ours, theirs


def to_torch(tree):
    return {k: torch.tensor(v.numpy()) for k, v in tree.items()}


def assert_trees_close(ours, theirs):
    if isinstance(theirs, dict):
        assert set(ours) == set(theirs)
        for k in theirs:
            assert_trees_close(ours[k], theirs[k])
    else:
        assert_close(ours, theirs)


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_per_sample_gradients_match_torch_func(float64_backend, name):
    ours, theirs = twins({"mlp": mlp, "cnn": cnn}[name])
    x, y = rng.standard_normal(INPUTS[name]), rng.integers(0, 3, 7)
    params = {k: p.detach() for k, p in ours.named_parameters()}

    def loss_of_one(p, xi, yi):
        return F.cross_entropy(func.functional_call(ours, p, (xi[None],)), yi[None])

    def their_loss(p, xi, yi):
        return torch.nn.functional.cross_entropy(tf.functional_call(theirs, p, (xi[None],)), yi[None])

    got = func.vmap(func.grad(loss_of_one), in_dims=(None, 0, 0))(params, ag.tensor(x, dtype="float64"), ag.tensor(y))
    want = tf.vmap(tf.grad(their_loss), in_dims=(None, 0, 0))(to_torch(params), torch.tensor(x), torch.tensor(y))
    assert_trees_close(got, want)


@pytest.fixture
def mlp_loss(float64_backend):
    """The MLP's mean loss on a batch as a function of its parameters, ours and PyTorch's."""
    ours, theirs = twins(mlp)
    x, y = rng.standard_normal((4, 5)), rng.integers(0, 3, 4)
    xo, yo, xt, yt = ag.tensor(x, dtype="float64"), ag.tensor(y), torch.tensor(x), torch.tensor(y)
    params = {k: p.detach() for k, p in ours.named_parameters()}
    return (
        lambda p: F.cross_entropy(func.functional_call(ours, p, (xo,)), yo),
        lambda p: torch.nn.functional.cross_entropy(tf.functional_call(theirs, p, (xt,)), yt),
        params,
    )


def test_mlp_loss_hessian_and_jacobians_match_torch_func(mlp_loss):
    f, g, params = mlp_loss
    theirs = to_torch(params)
    assert_trees_close(func.jacrev(f)(params), tf.jacrev(g)(theirs))
    assert_trees_close(func.jacfwd(f)(params), tf.jacfwd(g)(theirs))
    assert_trees_close(func.hessian(f)(params), tf.hessian(g)(theirs))


def test_mlp_loss_hvp_matches_torch_func(mlp_loss):
    f, g, params = mlp_loss
    direction = {k: ag.tensor(rng.standard_normal(tuple(v.shape)), dtype="float64") for k, v in params.items()}
    value, (hv,) = func.hvp(f, (params,), (direction,))
    _, want = tf.jvp(tf.grad(g), (to_torch(params),), (to_torch(direction),))
    assert_trees_close(hv, want)
    assert_close(value, g(to_torch(params)))


@pytest.mark.parametrize("name", ["cnn", "gpt_block"])
def test_input_jacobians_match_torch_func(float64_backend, name):
    ours, theirs = twins({"cnn": cnn, "gpt_block": gpt_block}[name])
    x = rng.standard_normal((1, 1, 6, 6) if name == "cnn" else (1, 3, 8))
    want = tf.jacrev(theirs)(torch.tensor(x))
    assert_close(func.jacrev(ours)(ag.tensor(x, dtype="float64")), want)
    assert_close(func.jacfwd(ours)(ag.tensor(x, dtype="float64")), want)
