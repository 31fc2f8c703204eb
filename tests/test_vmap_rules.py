"""The batching rules of autograd_core/transforms/vmap/rules.py.

Each fused kernel runs on a batch (of 3, and of 1) against its inner kernel run per example and
stacked, to 1e-12, on numpy, torch, jax and array-api-strict inners, in float64: with the data
batched and the weights the same for every example, with the weights batched too where the rule
branches on them, and with nothing batched; no call may fall back to the loop. Then per-sample
gradients (`vmap` of `grad` through `nn.functional_call`) of a small CNN, of one with batch norm
and of a transformer block run with no fallback at all and equal the per-example loop; and
`test_fallback_list` names the kernels left on the loop.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import autograd_core as ag
import autograd_core.transforms.vmap.batched
import backends
import nn
import nn.functional as F
from autograd_core import func, primitives as P
from autograd_core.graph.namespace import raw_namespace
from autograd_core.primitives import ConvGeometry, PoolGeometry
from autograd_core.transforms.vmap.backend import KERNELS, BatchedBackend
from bench.gpt_model import GPTConfig, gpt
from tests.helpers import assert_close

# jax compiles every op for every shape: slow, as in the rest of the suite (conftest.SLOW_BACKENDS)
INNERS = ["numpy", "torch", pytest.param("jax", marks=pytest.mark.slow), "array_api_strict"]

# the kernels that run once per example under vmap, and why
ON_THE_LOOP = {
    "adam_update": "an optimizer step on the parameters, not a function of one example",
    "map_batch_chunks": "runs a function of its caller on chunks of a batch: what it computes is not known",
    "to_backend": "moves values between backends through the host",
}


@pytest.fixture(params=INNERS)
def inner(request: pytest.FixtureRequest) -> backends.Backend:
    try:
        return backends.get(request.param)
    except (backends.BackendUnavailableError, RuntimeError, ImportError) as e:
        pytest.skip(f"backend {request.param} unavailable: {e}")


@pytest.fixture
def fallbacks(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The names of the kernels and functions that run per example from here on."""
    used: set[str] = set()
    monkeypatch.setattr(autograd_core.transforms.vmap.batched, "FALLBACKS_USED", used)
    return used


# --- one example's arguments ---------------------------------------------------------------------------
class Inputs:
    """Random arrays of one backend; `ns` its raw namespace, for arguments made by a kernel."""

    def __init__(self, backend: backends.Backend, seed: int) -> None:
        self.backend, self.ns, self.rng = backend, raw_namespace(backend), np.random.default_rng(seed)

    def normal(self, *shape: int) -> Any:
        return self.backend.asarray(self.rng.standard_normal(shape))

    def unit(self, *shape: int) -> Any:
        return self.backend.asarray(self.rng.uniform(0.05, 0.95, shape))

    def ints(self, high: int, *shape: int) -> Any:
        return self.backend.asarray(self.rng.integers(0, high, shape))

    def mask(self, *shape: int) -> Any:
        keep = self.rng.random(shape) < 0.7
        keep.reshape(-1)[0] = True  # a mean over the kept rows has one at least
        return self.backend.asarray(keep)


POOL = PoolGeometry((2, 2), (2, 2), (0, 0), (1, 1), False)
POOL_PADDED = PoolGeometry((3, 3), (2, 2), (1, 1), (1, 1), True)  # 6x6 -> 4x4
CONV = ConvGeometry((2, 1), ((1, 1), (0, 2)), (1, 1), 1)  # 3x3 kernel: 6x6 -> 3x6
CONV_GROUPED = ConvGeometry((1, 1), ((1, 1), (1, 1)), (2, 1), 2)  # 3x3 kernel: 5x5 -> 3x5


def ln_backward(part: str) -> Callable[[Inputs], tuple]:
    def make(m: Inputs) -> tuple:
        x, weight, bias = m.normal(2, 3, 4), m.normal(4), m.normal(4)
        _, stats = P.layer_norm(m.ns, x, weight, bias, (4,), 1e-5)
        return m.normal(2, 3, 4), x, (4,), weight, 1e-5, stats, part

    return make


def bn_backward(part: str) -> Callable[[Inputs], tuple]:
    def make(m: Inputs) -> tuple:
        x, weight = m.normal(3, 2, 4, 4), m.normal(2)
        _, mean, var = P.batch_norm(m.ns, x, weight, m.normal(2), 1e-5)
        return m.normal(3, 2, 4, 4), x, weight, mean, var, 1e-5, part

    return make


def pool_backward(m: Inputs) -> tuple:
    x = m.normal(2, 3, 6, 6)
    _, indices = P.max_pool2d(m.ns, x, POOL_PADDED)
    return m.normal(2, 3, 4, 4), indices, (2, 3, 6, 6), POOL_PADDED


def cross_entropy(reduction: str, masked: bool) -> Callable[[Inputs], tuple]:
    def make(m: Inputs) -> tuple:
        classes = m.backend.asarray(np.arange(5))
        return m.normal(4, 5), m.ints(5, 4), classes, m.mask(4) if masked else None, reduction

    return make


class Case(NamedTuple):
    name: str
    primitive: Any
    make: Callable[[Inputs], tuple]  # one example's arguments
    variants: tuple[tuple[int, ...], ...]  # the positions batched, one call each (and none batched)
    summed: tuple[int, ...] | None = None  # compared summed to this trailing shape (a kernel may sum)


BOTH_EITHER = ((0, 1), (0,), (1,))
CASES = [
    Case("relu", P.relu, lambda m: (m.normal(2, 3, 4),), ((0,),)),
    Case("relu_backward", P.relu_backward, lambda m: (m.normal(2, 3), m.normal(2, 3)), BOTH_EITHER),
    Case("tanh_backward", P.tanh_backward, lambda m: (m.normal(2, 3), m.unit(2, 3)), BOTH_EITHER),
    Case("erf_kernel", P.erf_kernel, lambda m: (m.normal(3, 4),), ((0,),)),
    Case("gelu", P.gelu, lambda m: (m.normal(3, 4), "none"), ((0,),)),
    Case("gelu_tanh", P.gelu, lambda m: (m.normal(3, 4), "tanh"), ((0,),)),
    Case("gelu_backward", P.gelu_backward, lambda m: (m.normal(3, 4), m.normal(3, 4), "none"), BOTH_EITHER),
    Case("binary_cross_entropy", P.binary_cross_entropy, lambda m: (m.unit(3, 4), m.unit(3, 4)), BOTH_EITHER),
    Case("linear", P.linear, lambda m: (m.normal(2, 4, 5), m.normal(3, 5), m.normal(3)), ((0,), (0, 1), (2,), (1,))),
    Case("linear_vector", P.linear, lambda m: (m.normal(5), m.normal(3, 5), None), ((0,),)),
    Case("attention_scores", P.attention_scores, lambda m: (m.normal(2, 3, 4), m.normal(2, 5, 4), 0.5), BOTH_EITHER),
    Case(
        "attention_scores_broadcast",
        P.attention_scores,
        lambda m: (m.normal(3, 4), m.normal(2, 5, 4), 0.5),
        BOTH_EITHER,
    ),
    Case("masked_softmax_bool", P.masked_softmax, lambda m: (m.normal(2, 3, 5), m.mask(3, 5)), BOTH_EITHER),
    Case("masked_softmax_float", P.masked_softmax, lambda m: (m.normal(2, 3, 5), m.normal(2, 1, 5)), BOTH_EITHER),
    Case("masked_softmax_none", P.masked_softmax, lambda m: (m.normal(2, 3, 5), None), ((0,),)),
    Case(
        "layer_norm",
        P.layer_norm,
        lambda m: (m.normal(2, 3, 4), m.normal(4), m.normal(4), (4,), 1e-5),
        ((0,), (0, 1), (2,)),
    ),
    Case("layer_norm_two_axes", P.layer_norm, lambda m: (m.normal(2, 3, 4), None, None, (3, 4), 1e-5), ((0,),)),
    Case(
        "layer_norm_backward_input",
        P.layer_norm_backward,
        ln_backward("input"),
        ((0, 1, 5), (0,), (1, 5), (0, 1, 3, 5)),
    ),
    Case(
        "layer_norm_backward_weight",
        P.layer_norm_backward,
        ln_backward("weight"),
        ((0, 1, 5), (0,), (0, 1, 3, 5)),
        summed=(4,),
    ),
    Case("max_pool2d", P.max_pool2d, lambda m: (m.normal(2, 3, 6, 6), POOL), ((0,),)),
    Case("max_pool2d_padded", P.max_pool2d, lambda m: (m.normal(2, 3, 6, 6), POOL_PADDED), ((0,),)),
    Case("max_pool2d_backward", P.max_pool2d_backward, pool_backward, BOTH_EITHER),
    Case("im2col", P.im2col, lambda m: (m.normal(2, 3, 7, 7), (3, 3), (2, 2), (1, 1), (3, 3)), ((0,),)),
    Case("col2im", P.col2im, lambda m: (m.normal(2, 3, 9, 3, 3), (2, 3, 7, 7), (3, 3), (2, 2), (1, 1)), ((0,),)),
    Case("pad2d", P.pad2d, lambda m: (m.normal(2, 3, 4, 4), ((1, 0), (2, 1)), -1.5), ((0,),)),
    Case("cross_entropy_rows", P.cross_entropy_rows, lambda m: (m.normal(4, 5), m.ints(5, 4)), BOTH_EITHER),
    Case(
        "cross_entropy_backward",
        P.cross_entropy_backward,
        lambda m: (m.normal(4), m.normal(4, 5), m.ints(5, 4), m.backend.asarray(np.arange(5))),
        ((0, 1, 2), (1,), (0,), (2,)),
    ),
    Case(
        "cross_entropy_backward_scalar",
        P.cross_entropy_backward,
        lambda m: (m.normal(), m.normal(4, 5), m.ints(5, 4), m.backend.asarray(np.arange(5))),
        ((0, 1, 2), (1, 2), (0,)),
    ),
    Case("cross_entropy_none", P.cross_entropy, cross_entropy("none", True), ((0, 1, 3), (0,), (3,))),
    Case("cross_entropy_sum", P.cross_entropy, cross_entropy("sum", False), ((0, 1), (0,), (1,))),
    Case("cross_entropy_mean", P.cross_entropy, cross_entropy("mean", True), ((0, 1, 3), (0,), (3,))),
    Case("cross_entropy_mean_all", P.cross_entropy, cross_entropy("mean", False), ((0, 1), (1,))),
    Case("conv2d", P.conv2d, lambda m: (m.normal(2, 3, 6, 6), m.normal(4, 3, 3, 3), CONV), BOTH_EITHER),
    Case("conv2d_grouped", P.conv2d, lambda m: (m.normal(2, 4, 5, 5), m.normal(6, 2, 3, 3), CONV_GROUPED), BOTH_EITHER),
    Case(
        "conv2d_grad_input",
        P.conv2d_grad_input,
        lambda m: (m.normal(2, 4, 3, 6), m.normal(4, 3, 3, 3), (2, 3, 6, 6), CONV),
        BOTH_EITHER,
    ),
    Case(
        "conv2d_grad_input_grouped",
        P.conv2d_grad_input,
        lambda m: (m.normal(2, 6, 3, 5), m.normal(6, 2, 3, 3), (2, 4, 5, 5), CONV_GROUPED),
        BOTH_EITHER,
    ),
    Case(
        "conv2d_grad_weight",
        P.conv2d_grad_weight,
        lambda m: (m.normal(2, 4, 3, 6), m.normal(2, 3, 6, 6), (4, 3, 3, 3), CONV),
        BOTH_EITHER,
    ),
    Case(
        "conv2d_grad_weight_grouped",
        P.conv2d_grad_weight,
        lambda m: (m.normal(2, 6, 3, 5), m.normal(2, 4, 5, 5), (6, 2, 3, 3), CONV_GROUPED),
        BOTH_EITHER,
    ),
    Case(
        "batch_norm",
        P.batch_norm,
        lambda m: (m.normal(3, 2, 4, 4), m.normal(2), m.normal(2), 1e-5),
        ((0,), (0, 1, 2), (1,)),
    ),
    Case("batch_norm_plain", P.batch_norm, lambda m: (m.normal(3, 2, 5), None, None, 1e-5), ((0,),)),
    *(
        Case(
            f"batch_norm_backward_{part}",
            P.batch_norm_backward,
            bn_backward(part),
            ((0, 1, 3, 4), (0,), (0, 1, 2, 3, 4)),
        )
        for part in ("input", "weight", "bias")
    ),
    Case("take", P.take, lambda m: (m.normal(5, 3), m.ints(5, 4), 0), BOTH_EITHER),
    Case("take_rows_axis1", P.take_rows, lambda m: (m.normal(3, 5, 2), m.ints(5, 4), 1), BOTH_EITHER),
    Case("index_add", P.index_add, lambda m: (m.normal(4, 3), (5, 3), 0, m.ints(5, 4)), ((0, 3), (0,), (3,))),
    Case("index_add_flat", P.index_add, lambda m: (m.normal(6), (4,), 0, m.ints(4, 6)), ((0, 3), (0,), (3,))),
    Case("index_add_axis1", P.index_add, lambda m: (m.normal(3, 4, 2), (3, 5, 2), 1, m.ints(5, 4)), ((0, 3), (3,))),
    Case("einsum", P.einsum, lambda m: ("ij,jk->ik", m.normal(2, 3), m.normal(3, 4)), ((1, 2), (1,), (2,))),
    Case("einsum_implicit", P.einsum, lambda m: ("jk,ij", m.normal(3, 4), m.normal(2, 3)), ((1, 2), (1,), (2,))),
    Case(
        "einsum_ellipsis",
        P.einsum,
        lambda m: ("...ij,...jk->...ik", m.normal(2, 2, 3), m.normal(3, 4)),
        ((1, 2), (1,), (2,)),
    ),
    Case("einsum_diagonal", P.einsum, lambda m: ("ii,ij->j", m.normal(3, 3), m.normal(3, 4)), ((1, 2), (1,), (2,))),
    Case("scatter", P.scatter, lambda m: (m.normal(2, 3), (4, 5), (slice(1, 3), slice(0, 3))), ((0,),)),
]


# --- running a case ------------------------------------------------------------------------------------
def tree_map(f: Callable[..., Any], *trees: Any) -> Any:
    first = trees[0]
    if isinstance(first, (tuple, list)):
        return tuple(tree_map(f, *parts) for parts in zip(*trees))
    return f(*trees) if hasattr(first, "shape") else first


def batched(batch: BatchedBackend, values: list[Any]) -> Any:
    """The examples `values` (one argument each) as one argument of `batch`."""
    return tree_map(lambda *v: batch.xp.batch(batch.inner.xp.stack(v, axis=0)), *values)


def leaves(tree: Any) -> list[Any]:
    if isinstance(tree, (tuple, list)):
        return [leaf for part in tree for leaf in leaves(part)]
    return [tree] if hasattr(tree, "shape") else []


def summed_to(value: np.ndarray, trailing: tuple[int, ...] | None, lead: int) -> np.ndarray:
    """`value`, whose first `lead` axes are the examples', summed over the example's own leading
    axes down to its `trailing` shape (None: as it is)."""
    if trailing is None or value.ndim == lead + len(trailing):
        return value
    return value.sum(axis=tuple(range(lead, value.ndim - len(trailing))))


def check(case: Case, inner: backends.Backend, size: int, positions: tuple[int, ...]) -> None:
    """`case` on a batch of `size` examples with the arguments at `positions` batched (the
    others example 0's), against its inner kernel on each example."""
    made = Inputs(inner, seed=size)
    examples = [case.make(made) for _ in range(size)]
    batch = BatchedBackend(inner, size)
    args = [batched(batch, [e[p] for e in examples]) if p in positions else a for p, a in enumerate(examples[0])]
    got = case.primitive(raw_namespace(batch), *args)
    wanted = [
        case.primitive(made.ns, *(e[p] if p in positions else a for p, a in enumerate(examples[0])))
        for e in (examples if positions else examples[:1])
    ]
    for got_leaf, *want in zip(leaves(got), *map(leaves, wanted)):
        if not positions:
            assert not batch.owns(got_leaf)
            got_value, want_value, lead = inner.to_numpy(got_leaf), inner.to_numpy(want[0]), 0
        else:  # an output the same for every example may come out unbatched
            got_value, lead = inner.to_numpy(batch.xp.lift(got_leaf).physical), 1
            want_value = np.stack([inner.to_numpy(w) for w in want])
        np.testing.assert_allclose(
            summed_to(got_value, case.summed, lead), summed_to(want_value, case.summed, lead), rtol=1e-12, atol=1e-12
        )


@pytest.mark.parametrize("size", [3, 1])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rule_matches_the_loop(inner, fallbacks, case, size):
    with warnings.catch_warnings():
        warnings.simplefilter("error", autograd_core.transforms.vmap.batched.BatchingFallbackWarning)
        for positions in ((), *case.variants):
            check(case, inner, size, positions)
    assert fallbacks == set(), f"{case.name} fell back for {sorted(fallbacks)}"


def test_fallback_list():
    """The fused kernels without a batching rule: exactly those that stay on the loop."""
    assert {name for name in KERNELS if "vmap" not in P.registry[name].kernels} == set(ON_THE_LOOP)


def test_tree_map_goes_through_named_tuples():
    """A geometry (a named tuple of ints) passes as it is; the arrays of a named result are
    mapped, and the result keeps its type."""
    from autograd_core.transforms.vmap import rules as vmap_rules

    result = ag.linalg.SlogdetResult(np.ones(2), np.zeros(2))
    mapped = vmap_rules.tree_map(lambda a: a + 1, (CONV, result, None))
    assert type(mapped[0]) is ConvGeometry and mapped[0] == CONV and mapped[2] is None
    assert type(mapped[1]) is ag.linalg.SlogdetResult and mapped[1].logabsdet.tolist() == [1.0, 1.0]
    assert len(vmap_rules.leaves((CONV, result))) == 2


# --- per-sample gradients with no fallback ----------------------------------------------------------------
def cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(2, 4, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16, 3),
    )


def cnn_batch_norm() -> nn.Module:
    """Batch norm in training mode: each example's statistics over its own rows and positions."""
    return nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1, bias=False),
        nn.BatchNorm2d(4, track_running_stats=False),
        nn.ReLU(),
        nn.MaxPool2d(2, stride=2, padding=1),
        nn.Flatten(),
        nn.Linear(100, 3),
    )


def transformer_block() -> nn.Module:
    """nanoGPT's block (layer norm, causal attention through F.scaled_dot_product_attention,
    GELU) and a head: (1, T) rows of logits."""
    block = gpt(nn, GPTConfig(block_size=4, vocab_size=5, n_layer=1, n_head=2, n_embd=8)).h[0]
    return nn.Sequential(block, nn.LayerNorm(8), nn.Linear(8, 5))


MODELS = {
    "cnn": (cnn, (2, 8, 8), ()),
    "cnn_batch_norm": (cnn_batch_norm, (2, 8, 8), ()),
    "transformer": (transformer_block, (4, 8), (4,)),
}


def per_sample_case(name: str, examples: tuple[int, ...]) -> tuple:
    """The model's parameters, inputs and class targets for `examples`, and the loss of one example."""
    build, shape, target_shape = MODELS[name]
    rng = np.random.default_rng(5)
    ag.manual_seed(0)
    model = build().double()
    params = {k: p.detach() for k, p in model.named_parameters()}
    x = ag.tensor(rng.standard_normal((*examples, *shape)), dtype="float64")
    y = ag.tensor(rng.integers(0, 3, (*examples, *target_shape)))

    def loss(p: dict, xi: ag.Tensor, yi: ag.Tensor) -> ag.Tensor:
        logits = nn.functional_call(model, p, (xi[None],))
        return F.cross_entropy(ag.reshape(logits, (-1, logits.shape[-1])), ag.reshape(yi, (-1,)))

    return params, x, y, loss


@pytest.mark.parametrize("name", MODELS)
def test_per_sample_gradients_use_no_fallback(inner, fallbacks, name):
    with backends.use(inner), warnings.catch_warnings():
        warnings.simplefilter("error", autograd_core.transforms.vmap.batched.BatchingFallbackWarning)
        params, x, y, loss = per_sample_case(name, (3,))
        got = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
        assert fallbacks == set()
        for i in range(3):
            want = func.grad(loss)(params, x[i], y[i])
            for k in params:
                assert_close(got[k][i], want[k])


def test_nested_per_sample_gradients(fallbacks):
    """vmap of vmap: the outer batch's rules run the inner batch's as their inner kernels."""
    with backends.use("numpy"), warnings.catch_warnings():
        warnings.simplefilter("error", autograd_core.transforms.vmap.batched.BatchingFallbackWarning)
        params, x, y, loss = per_sample_case("cnn", (2, 3))
        per_sample = func.vmap(func.grad(loss), in_dims=(None, 0, 0))
        got = func.vmap(per_sample, in_dims=(None, 0, 0))(params, x, y)
        assert fallbacks == set()
        for i in range(2):
            for j in range(3):
                want = func.grad(loss)(params, x[i, j], y[i, j])
                for k in params:
                    assert_close(got[k][i, j], want[k])
