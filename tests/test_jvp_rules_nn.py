"""Forward mode through the fused primitives of `autograd_core.primitives`: each native JVP
rule, reached through the public functions and layers that use it, against the double-VJP
fallback (`forward.double_vjp_only`) in float64, with tangents on the inputs and on the
parameters; against `torch.func.jvp` for conv2d, layer norm, cross-entropy, attention and the
LSTM; ``grad`` of a ``jvp`` (the rules run on tensors); the rules on every backend; and the
list of the primitives still on the fallback.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
from test_torch_parity_nn import torch_twin

import autograd_core as ag
import backends
import nn
import nn.functional as F
from autograd_core import func
from autograd_core.autodiff import forward
from autograd_core.graph.pytree import tree_flatten
from autograd_core.graph.registry import registry
from autograd_core.ops.core import index_put
from helpers import assert_close

TF = torch.nn.functional
F64 = "float64"
RTOL = dict(rtol=1e-10, atol=1e-12)

# Every recording primitive declared in autograd_core/primitives/ (vmap.py aside) with the
# reason it has no native rule; none is left.
_NO_DERIVATIVE = "PyTorch defines no derivative for it; forward mode refuses it as backward does"
ON_THE_FALLBACK: dict[str, str] = {
    **dict.fromkeys(
        (
            *("airy_ai", "j0", "j1", "y0", "y1", "k0", "k1", "k0e", "k1e", "spherical_bessel_j0"),
            *("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w"),
            *("shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v"),
            *("shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he"),
            *("laguerre_polynomial_l", "legendre_polynomial_p"),
        ),
        _NO_DERIVATIVE,
    ),
    "zeta": "differentiable in q only (x has no derivative in PyTorch); its JVP is the double-VJP fallback's",
    "gammainc": "differentiable in x only (a has no derivative in PyTorch); its JVP is the double-VJP fallback's",
    "gammaincc": "differentiable in x only (a has no derivative in PyTorch); its JVP is the double-VJP fallback's",
}


def ours() -> set[str]:
    """The recording primitives declared in autograd_core/primitives/, vmap.py aside."""
    return {
        name
        for name, p in registry.items()
        if p.records
        and p.default.__module__.startswith("autograd_core.primitives.")
        and p.default.__module__ != "autograd_core.transforms.vmap.edges"
    }


# --- helpers ------------------------------------------------------------------------------------
def randn(rng: np.random.Generator, *shape: int) -> ag.Tensor:
    return ag.tensor(rng.standard_normal(shape), dtype=F64)


def stateless(module: nn.Module, inputs: int = 1) -> tuple[Callable, list[ag.Tensor]]:
    """`module` as a function of its `inputs` then its parameters, and its parameters' values:
    each call puts the given tensors in place of the parameters for its duration."""
    named = list(module.named_parameters())

    def call(*args: ag.Tensor) -> object:
        swapped = []
        for (name, own), value in zip(named, args[inputs:]):
            *path, leaf = name.split(".")
            owner = module
            for part in path:
                owner = getattr(owner, part)
            swapped.append((owner, leaf, own))
            object.__setattr__(owner, leaf, value)
        try:
            return module(*args[:inputs])
        finally:
            for owner, leaf, own in swapped:
                object.__setattr__(owner, leaf, own)

    return call, [p.detach() for _, p in named]


def randomized(module: nn.Module, rng: np.random.Generator, scale: float = 0.5) -> nn.Module:
    """`module` with random float64 weights (not the init's ones and zeros); running variances
    positive."""

    def draw(name: str, shape: tuple[int, ...]) -> np.ndarray:
        return rng.uniform(0.5, 1.5, shape) if name.endswith("running_var") else scale * rng.standard_normal(shape)

    floating = {k: v for k, v in module.state_dict().items() if ag.isdtype(v.dtype, "real floating")}
    module.load_state_dict({k: draw(k, v.shape) for k, v in floating.items()}, strict=False)
    return module


def tangents_for(primals: tuple, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    return tuple(ag.tensor(rng.standard_normal(p.shape), dtype=p.dtype) for p in primals)


def native_and_oracle(f: Callable, primals: tuple, seed: int = 7) -> tuple[list, list, set[str]]:
    """The tangents of `f`'s outputs by the native rules and by the double-VJP fallback alone,
    and the ops that fell back in the native run."""
    tangents = tangents_for(primals, seed)
    forward.FALLBACK_JVPS.clear()
    _, native = func.jvp(f, primals, tangents)
    fell_back = set(forward.FALLBACK_JVPS)
    with forward.double_vjp_only():
        _, oracle = func.jvp(f, primals, tangents)
    return tree_flatten(native)[0], tree_flatten(oracle)[0], fell_back


def assert_native_matches_fallback(f: Callable, primals: tuple) -> None:
    """The native tangents equal the oracle's, and no node of `f` fell back."""
    native, oracle, fell_back = native_and_oracle(f, primals)
    assert not fell_back, f"on the fallback: {sorted(fell_back)}"
    for a, b in zip(native, oracle, strict=True):
        assert a.shape == b.shape
        assert_close(a, b, **RTOL)


# --- the cases: name, builder(rng) -> (function, primals) -----------------------------------------
def module_case(make: Callable[[], nn.Module], *input_shapes: tuple[int, ...], train: bool = True) -> Callable:
    def build(rng: np.random.Generator) -> tuple[Callable, tuple]:
        module = randomized(make(), rng).train(train)
        call, params = stateless(module, len(input_shapes))
        return call, (*(randn(rng, *s) for s in input_shapes), *params)

    return build


def fn_case(f: Callable, *shapes: tuple[int, ...]) -> Callable:
    return lambda rng: (f, tuple(randn(rng, *s) for s in shapes))


def probabilities(f: Callable, *shapes: tuple[int, ...]) -> Callable:
    """Primals in (0.05, 0.95): binary cross-entropy's probabilities and targets."""
    return lambda rng: (f, tuple(ag.tensor(rng.uniform(0.05, 0.95, s), dtype=F64) for s in shapes))


# Constants as host values, made tensors inside the functions: on the backend under test.
TARGETS = [0, 3, 1, 3, 2]
IGNORED = [0, -100, 1, 3, -100]
SPATIAL_TARGETS = [[0, 2, 1], [3, 3, 0]]
CLASS_WEIGHTS = [0.5, 1.0, 2.0, 0.3]
BOOL_MASK = np.random.default_rng(3).uniform(size=(4, 5)) > 0.3


def conv_grad(wrt: int) -> Callable:
    """The gradient of a convolution's squared output for its input (0) or weight (1): its
    node is conv2d_grad_input or conv2d_grad_weight, whose tangent the forward pass needs."""

    def f(x: ag.Tensor, w: ag.Tensor) -> ag.Tensor:
        loss = lambda x, w: (F.conv2d(x, w, stride=2, padding=1, groups=2) ** 2).sum()  # noqa: E731
        return func.grad(loss, argnums=wrt)(x, w)

    return f


def setitem(x: ag.Tensor, v: ag.Tensor) -> ag.Tensor:
    return index_put(x * 2.0, (slice(1, 3), 1), v)


CASES = {
    # activations
    "relu": fn_case(F.relu, (3, 4)),
    "relu_module": module_case(nn.ReLU, (3, 4)),
    "gelu": fn_case(F.gelu, (3, 4)),
    "gelu_tanh_module": module_case(lambda: nn.GELU("tanh"), (3, 4)),
    "erf": fn_case(ag.erf, (3, 4)),
    "softmax": fn_case(lambda x: F.softmax(x, dim=0), (3, 4)),
    "log_softmax": fn_case(F.log_softmax, (3, 4)),
    # linear and einsum
    "linear": fn_case(F.linear, (2, 3, 5), (4, 5), (4,)),
    "linear_no_bias": fn_case(F.linear, (3, 5), (4, 5)),
    "linear_module": module_case(lambda: nn.Linear(5, 4, dtype=F64), (3, 5)),
    "einsum_batched": fn_case(lambda a, b: ag.einsum("bij,bjk->bik", a, b), (2, 3, 4), (2, 4, 5)),
    "einsum_diagonal": fn_case(lambda a: ag.einsum("ii->i", a), (4, 4)),
    "einsum_ellipsis_three": fn_case(lambda a, b, c: ag.einsum("...i,ij,j", a, b, c), (2, 3, 4), (4, 5), (5,)),
    # indexing
    "basic_index": fn_case(lambda x: (x[1:, ::2] * x[:2, -2:])[:, None, ..., ::-1], (3, 4, 2)),
    "setitem_scatter": fn_case(setitem, (4, 3), (2,)),
    "scatter_add_index_add": fn_case(
        lambda x, src: x.scatter_add(1, ag.tensor([[0, 2, 0], [1, 1, 3]]), src), (2, 4), (2, 3)
    ),
    "take": fn_case(lambda x: ag.take(x, [2, 0, 2, -1], axis=1), (3, 4)),
    "embedding": fn_case(lambda w: F.embedding(ag.tensor([[1, 4, 1], [0, 4, 2]]), w), (5, 3)),
    # convolution and pooling
    "conv2d": fn_case(F.conv2d, (2, 3, 7, 6), (4, 3, 3, 3), (4,)),
    "conv2d_stride_padding_dilation_groups": fn_case(
        lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2),
        (2, 4, 8, 7),
        (6, 2, 3, 2),
    ),
    "conv2d_same": fn_case(lambda x, w: F.conv2d(x, w, padding="same", dilation=2), (1, 2, 6, 5), (3, 2, 2, 3)),
    "conv1d": fn_case(lambda x, w: F.conv1d(x, w, stride=2, padding=1), (2, 3, 9), (4, 3, 3)),
    "conv2d_module": module_case(lambda: nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2, dtype=F64), (2, 4, 7, 6)),
    "conv_transpose2d": fn_case(
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
        (2, 4, 4, 3),
        (4, 3, 3, 3),
        (3,),
    ),
    "conv2d_grad_input": fn_case(conv_grad(0), (2, 4, 6, 5), (6, 2, 3, 3)),
    "conv2d_grad_weight": fn_case(conv_grad(1), (2, 4, 6, 5), (6, 2, 3, 3)),
    "max_pool2d": fn_case(lambda x: F.max_pool2d(x, 2), (2, 3, 6, 5)),
    "max_pool2d_padding_ceil_dilation": fn_case(
        lambda x: F.max_pool2d(x, 3, stride=2, padding=1, dilation=(1, 2), ceil_mode=True), (2, 2, 7, 8)
    ),
    "max_pool2d_module_unbatched": module_case(lambda: nn.MaxPool2d(2, stride=1), (3, 4, 5)),
    # normalization
    "layer_norm": fn_case(lambda x, w, b: F.layer_norm(x, (4,), w, b), (2, 3, 4), (4,), (4,)),
    "layer_norm_2d_no_affine": fn_case(lambda x: F.layer_norm(x, (3, 4), eps=0.1), (2, 3, 4)),
    "layer_norm_weight_only": fn_case(lambda x, w: F.layer_norm(x, (4,), w), (3, 4), (4,)),
    "layer_norm_module": module_case(lambda: nn.LayerNorm((3, 4), dtype=F64), (2, 3, 4)),
    "batch_norm_train": fn_case(
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (3, 4, 2, 3), (4,), (4,)
    ),
    "batch_norm_train_no_affine": fn_case(lambda x: F.batch_norm(x, None, None, training=True), (5, 3)),
    "batch_norm2d_module_train": module_case(lambda: nn.BatchNorm2d(4, dtype=F64), (3, 4, 2, 3)),
    "batch_norm2d_module_eval": module_case(lambda: nn.BatchNorm2d(4, dtype=F64), (3, 4, 2, 3), train=False),
    "group_norm": fn_case(lambda x, w, b: F.group_norm(x, 2, w, b), (2, 4, 3, 2), (4,), (4,)),
    "group_norm_module": module_case(lambda: nn.GroupNorm(3, 6, dtype=F64), (2, 6, 5)),
    # losses
    **{
        f"cross_entropy_{reduction}_{name}": fn_case(
            lambda x, r=reduction, t=target, k=options: F.cross_entropy(x, ag.tensor(t), reduction=r, **k), shape
        )
        for reduction in ("mean", "sum", "none")
        for name, shape, target, options in (
            ("plain", (5, 4), TARGETS, {}),
            ("ignored", (5, 4), IGNORED, {}),
            ("ignore_index_3", (5, 4), TARGETS, {"ignore_index": 3}),
            ("spatial", (2, 4, 3), SPATIAL_TARGETS, {}),
            ("weight", (5, 4), IGNORED, {"weight": CLASS_WEIGHTS}),
            ("label_smoothing", (5, 4), IGNORED, {"label_smoothing": 0.2}),
        )
    },
    "cross_entropy_probabilities": fn_case(
        lambda x, p: F.cross_entropy(x, F.softmax(p, dim=1), label_smoothing=0.1), (5, 4), (5, 4)
    ),
    **{
        f"binary_cross_entropy_{reduction}": probabilities(
            lambda x, t, r=reduction: F.binary_cross_entropy(x, t, reduction=r), (3, 4), (3, 4)
        )
        for reduction in ("mean", "sum", "none")
    },
    "binary_cross_entropy_weight": probabilities(
        lambda x, t, w: F.binary_cross_entropy(x, t, weight=w), (3, 4), (3, 4), (4,)
    ),
    # attention
    "sdpa": fn_case(F.scaled_dot_product_attention, (2, 4, 3), (2, 5, 3), (2, 5, 2)),
    "sdpa_bool_mask": fn_case(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=BOOL_MASK), (2, 4, 3), (2, 5, 3), (2, 5, 2)
    ),
    "sdpa_float_mask_with_tangent": fn_case(
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), (2, 4, 3), (2, 5, 3), (2, 5, 2), (4, 5)
    ),
    "sdpa_causal_scale_4d": fn_case(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.7),
        (2, 2, 4, 3),
        (2, 2, 4, 3),
        (2, 2, 4, 3),
    ),
    "multihead_attention": module_case(
        lambda: nn.MultiheadAttention(6, 2, batch_first=True, dtype=F64), (2, 4, 6), (2, 5, 6), (2, 5, 6)
    ),
    "transformer_encoder_layer": module_case(
        lambda: nn.TransformerEncoderLayer(6, 2, dim_feedforward=8, dropout=0.0, batch_first=True, dtype=F64),
        (2, 4, 6),
    ),
    # recurrent scans
    "rnn_tanh_2_layers_bidirectional": module_case(
        lambda: nn.RNN(3, 4, num_layers=2, bidirectional=True, dtype=F64), (5, 2, 3), (4, 2, 4)
    ),
    "rnn_relu": module_case(lambda: nn.RNN(3, 4, nonlinearity="relu", dtype=F64), (5, 2, 3), (1, 2, 4)),
    "lstm_2_layers_bidirectional_batch_first": module_case(
        lambda: nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True, dtype=F64), (2, 5, 3)
    ),
    "gru_2_layers_bidirectional": module_case(
        lambda: nn.GRU(3, 4, num_layers=2, bidirectional=True, dtype=F64), (5, 2, 3), (4, 2, 4)
    ),
    "gru_no_bias_unbatched": module_case(lambda: nn.GRU(3, 4, bias=False, dtype=F64), (5, 3)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_native_rule_matches_the_double_vjp(name):
    """Each case's tangents by the native rules equal the fallback's, and no node fell back."""
    f, primals = CASES[name](np.random.default_rng(0))
    assert_native_matches_fallback(f, primals)


def test_lstm_with_given_states_matches_the_double_vjp():
    """Tangents on h0 and c0 too (the LSTM takes them as a pair)."""
    rng = np.random.default_rng(1)
    run, weights = stateless(randomized(nn.LSTM(3, 4, num_layers=2, dtype=F64), rng), 2)
    primals = (randn(rng, 5, 2, 3), randn(rng, 2, 2, 4), randn(rng, 2, 2, 4), *weights)
    assert_native_matches_fallback(lambda x, h0, c0, *weights: run(x, (h0, c0), *weights), primals)


def test_the_scan_takes_a_tangent_on_the_input_alone():
    """Weights without tangents: the projections' tangents through them are zeros."""
    rng = np.random.default_rng(2)
    for make in (lambda: nn.LSTM(3, 4, dtype=F64), lambda: nn.GRU(3, 4, dtype=F64)):
        module = randomized(make(), rng)
        assert_native_matches_fallback(lambda x, m=module: m(x), (randn(rng, 4, 2, 3),))


# --- against torch.func.jvp -----------------------------------------------------------------------
def torch_conv(x, w, b):
    return TF.conv2d(x, w, b, stride=2, padding=1, dilation=(1, 2), groups=2)


def our_conv(x, w, b):
    return F.conv2d(x, w, b, stride=2, padding=1, dilation=(1, 2), groups=2)


def cross_entropy_pair(target: list = IGNORED, **options):
    """Our cross-entropy and torch's of logits (5, 4) against `target`, with `options`."""
    torch_options = {k: torch.tensor(v, dtype=torch.float64) if k == "weight" else v for k, v in options.items()}
    ours = lambda x: F.cross_entropy(x, ag.tensor(target), **options)  # noqa: E731
    theirs = lambda x: TF.cross_entropy(x, torch.tensor(target), **torch_options)  # noqa: E731
    return pytest.param(ours, theirs, [(5, 4)], id="cross_entropy-" + "-".join(f"{k}={v}" for k, v in options.items()))


def sdpa_pair(**options):
    ours = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **options)  # noqa: E731
    torch_options = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in options.items()}
    theirs = lambda q, k, v: TF.scaled_dot_product_attention(q, k, v, **torch_options)  # noqa: E731
    return pytest.param(ours, theirs, [(2, 4, 3), (2, 5, 3), (2, 5, 2)], id="-".join(["sdpa", *options]))


TORCH_PAIRS = [
    pytest.param(our_conv, torch_conv, [(2, 4, 7, 6), (6, 2, 3, 3), (6,)], id="conv2d"),
    pytest.param(
        lambda x, w, b: F.layer_norm(x, (3, 4), w, b),
        lambda x, w, b: TF.layer_norm(x, (3, 4), w, b),
        [(2, 3, 4), (3, 4), (3, 4)],
        id="layer_norm",
    ),
    cross_entropy_pair(),
    cross_entropy_pair(TARGETS, reduction="sum", ignore_index=3),
    cross_entropy_pair(reduction="none"),
    cross_entropy_pair(label_smoothing=0.2, weight=CLASS_WEIGHTS),
    sdpa_pair(),
    sdpa_pair(attn_mask=BOOL_MASK),
    sdpa_pair(is_causal=True),
]


@pytest.fixture
def numpy_backend():
    with backends.use(backends.get("numpy")):
        yield


@pytest.mark.parametrize(("ours", "theirs", "shapes"), TORCH_PAIRS)
def test_tangents_match_torch_func_jvp(numpy_backend, ours, theirs, shapes):
    rng = np.random.default_rng(4)
    primals, tangents = ([rng.standard_normal(s) for s in shapes] for _ in range(2))
    _, mine = func.jvp(ours, tuple(map(ag.tensor, primals)), tuple(map(ag.tensor, tangents)))
    _, reference = torch.func.jvp(theirs, tuple(map(torch.tensor, primals)), tuple(map(torch.tensor, tangents)))
    assert_close(mine, reference, **RTOL)


def test_lstm_tangents_match_torch_func_jvp(numpy_backend):
    """Tangents on the input, the initial states and every weight of a 2-layer bidirectional LSTM."""
    rng = np.random.default_rng(5)
    lstm = randomized(nn.LSTM(3, 4, num_layers=2, bidirectional=True, dtype=F64), rng)
    twin = torch_twin(lstm, lambda: torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True))
    run, weights = stateless(lstm, 2)
    names = [name for name, _ in lstm.named_parameters()]
    shapes = [(5, 2, 3), (4, 2, 4), (4, 2, 4), *(w.shape for w in weights)]
    primals = [rng.standard_normal(s) for s in shapes[:3]] + [w.numpy() for w in weights]
    tangents = [rng.standard_normal(s) for s in shapes]

    def ours(x, h0, c0, *weights):
        return run(x, (h0, c0), *weights)

    def theirs(x, h0, c0, *weights):
        return torch.func.functional_call(twin, dict(zip(names, weights)), (x, (h0, c0)))

    _, mine = func.jvp(ours, tuple(map(ag.tensor, primals)), tuple(map(ag.tensor, tangents)))
    _, reference = torch.func.jvp(theirs, tuple(map(torch.tensor, primals)), tuple(map(torch.tensor, tangents)))
    for a, b in zip(tree_flatten(mine)[0], torch.utils._pytree.tree_flatten(reference)[0]):
        assert_close(a, b, **RTOL)


# --- grad of jvp: the rules on tensors ------------------------------------------------------------
def grad_of_jvp(f: Callable, primals: tuple, tangents: tuple) -> tuple:
    """The gradient, in the primals, of the squared norm of `f`'s tangent along `tangents`."""

    def norm(*primals):
        _, tangent = func.jvp(f, primals, tangents)
        return sum((t * t).sum() for t in tree_flatten(tangent)[0])

    return func.grad(norm, argnums=tuple(range(len(primals))))(*primals)


@pytest.mark.parametrize(
    "name",
    [
        "conv2d_stride_padding_dilation_groups",
        "layer_norm",
        "cross_entropy_mean_ignored",
        "sdpa_causal_scale_4d",
        "lstm_2_layers_bidirectional_batch_first",
    ],
)
def test_grad_of_jvp_matches_the_double_vjp(name):
    f, primals = CASES[name](np.random.default_rng(0))
    tangents = tangents_for(primals, 8)
    forward.FALLBACK_JVPS.clear()
    native = grad_of_jvp(f, primals, tangents)
    assert not forward.FALLBACK_JVPS
    with forward.double_vjp_only():
        oracle = grad_of_jvp(f, primals, tangents)
    for a, b in zip(native, oracle, strict=True):
        assert_close(a, b, **RTOL)


# --- every backend ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name", ["conv2d_stride_padding_dilation_groups", "layer_norm", "cross_entropy_mean_ignored", "sdpa_bool_mask"]
)
def test_native_rules_on_every_backend(float64_backend, name):
    """The rules run on every library's arrays: the tangents equal numpy's (which the tests
    above hold to the double-VJP oracle), and no node falls back."""
    with backends.use(backends.get("numpy")):
        f, primals = CASES[name](np.random.default_rng(0))
        expected = tree_flatten(func.jvp(f, primals, tangents_for(primals, 7))[1])[0]
    f, primals = CASES[name](np.random.default_rng(0))
    assert all(p.backend is float64_backend for p in primals)
    forward.FALLBACK_JVPS.clear()
    _, tangent = func.jvp(f, primals, tangents_for(primals, 7))
    assert not forward.FALLBACK_JVPS
    for a, b in zip(tree_flatten(tangent)[0], expected, strict=True):
        assert_close(a, b, **RTOL)


def test_the_move_between_backends_moves_the_tangent(numpy_backend):
    """`to`'s tangent is the input's, moved (the double-VJP oracle cannot cross backends)."""
    x, t = ag.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=F64), ag.tensor([[0.3, 1.0], [-1.0, 2.0]], dtype=F64)
    forward.FALLBACK_JVPS.clear()
    out, tangent = func.jvp(lambda x: (x * x).to("array_api_strict") * 3.0, (x,), (t,))
    assert not forward.FALLBACK_JVPS
    assert tangent.backend.name == out.backend.name == "array_api_strict"
    assert_close(tangent.to("numpy"), 6.0 * x * t, **RTOL)


def test_fallback_list():
    """The recording primitives of autograd_core/primitives/ (vmap.py aside) without a native
    rule are exactly those listed, each with its reason."""
    missing = {name for name in ours() if registry[name].jvp is None}
    assert missing == set(ON_THE_FALLBACK)
    assert {
        "relu", "erf", "gelu", "attention_scores", "masked_softmax", "basic_index", "scatter", "index_add",
        "take", "to_backend", "conv2d", "conv2d_grad_input", "conv2d_grad_weight", "max_pool2d", "linear", "einsum",
        "cross_entropy", "binary_cross_entropy", "layer_norm", "batch_norm", "rnn_tanh", "rnn_relu", "lstm", "gru",
    } <= ours()  # fmt: skip
