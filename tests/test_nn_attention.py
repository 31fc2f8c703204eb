"""Attention and the transformer encoder: `F.scaled_dot_product_attention`,
`nn.MultiheadAttention`, `nn.TransformerEncoderLayer`, `nn.TransformerEncoder`, and the ops
they need (`masked_fill`, `split`, `chunk`).

Gradients are checked against central differences (float64, every backend) and against
PyTorch (values and gradients of inputs and parameters, by loading the same state_dict).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import autograd_core as ag
import nn
import nn.attention
import nn.functional as F
import nn.transformer
import optim
from helpers import assert_close, host
from torch_oracle import Arg, compare_with_torch, const, normal

TF = torch.nn.functional
F64 = "float64"
RNG = np.random.default_rng(7)
MASK = RNG.random((4, 6)) < 0.6
MASK[1] = False  # a query that may attend to nothing
MASK[2] = True
ADDITIVE = np.where(MASK, RNG.standard_normal((4, 6)), -np.inf)


def leaf(*shape: int, seed: int = 0) -> ag.Tensor:
    return ag.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=F64, requires_grad=True)


# --- ops: masked_fill, split, chunk ----------------------------------------------------------
def pieces(parts) -> object:
    """The pieces joined, each scaled differently, so a gradient sent to the wrong piece shows."""
    lib = ag if isinstance(parts[0], ag.Tensor) else torch
    joined = [p.reshape(-1) * (i + 1) for i, p in enumerate(parts)]
    return lib.concat(joined) if lib is ag else torch.cat(joined)


OPS = [
    pytest.param(
        lambda x, m: ag.masked_fill(x, m, -2.5),
        lambda x, m: x.masked_fill(m, -2.5),
        [normal(3, 4), const(RNG.random((3, 1)) < 0.5)],
        id="masked_fill_broadcast_mask",
    ),
    pytest.param(
        lambda x, m: x.masked_fill(m, float("-inf")).softmax(-1),
        lambda x, m: x.masked_fill(m, -np.inf).softmax(-1),
        [normal(3, 4), const(np.eye(3, 4, dtype=bool))],
        id="masked_fill_method_softmax",
    ),
    pytest.param(
        lambda x: pieces(ag.split(x, 2, axis=1)), lambda x: pieces(x.split(2, dim=1)), [normal(3, 5)], id="split_uneven"
    ),
    pytest.param(
        lambda x: pieces(x.split([1, 3, 1], dim=-1)),
        lambda x: pieces(x.split([1, 3, 1], dim=-1)),
        [normal(2, 5)],
        id="split_sections",
    ),
    pytest.param(lambda x: pieces(ag.chunk(x, 4)), lambda x: pieces(x.chunk(4)), [normal(5, 2)], id="chunk_uneven"),
    pytest.param(
        lambda x: pieces(x.chunk(3, dim=1)), lambda x: pieces(x.chunk(3, dim=1)), [normal(2, 6)], id="chunk_method"
    ),
    pytest.param(lambda x: pieces(x.unbind(1)), lambda x: pieces(x.unbind(1)), [normal(2, 3)], id="unbind"),
]


@pytest.mark.parametrize(("ours", "theirs", "args"), OPS)
def test_ops_match_torch(float64_backend, ours, theirs, args):
    compare_with_torch(ours, theirs, args)


@pytest.mark.parametrize(("n", "how"), [(5, 2), (5, [2, 0, 3]), (0, 3), (7, 7), (6, 4)])
def test_split_and_chunk_shapes_match_torch(backend, n, how):
    x, t = ag.zeros((2, n)), torch.zeros((2, n))
    if isinstance(how, list):
        assert [p.shape for p in ag.split(x, how, axis=1)] == [tuple(p.shape) for p in t.split(how, dim=1)]
        return
    assert [p.shape for p in ag.split(x, how, axis=1)] == [tuple(p.shape) for p in t.split(how, dim=1)]
    assert [p.shape for p in x.chunk(how, dim=1)] == [tuple(p.shape) for p in t.chunk(how, dim=1)]


def test_op_errors(backend):
    x = ag.zeros((2, 5))
    with pytest.raises(ValueError, match="add up to 5"):
        ag.split(x, [1, 3], axis=1)
    with pytest.raises(ValueError, match="positive"):
        ag.split(x, 0, axis=1)
    with pytest.raises(ValueError, match="positive"):
        ag.chunk(x, 0)
    with pytest.raises(TypeError, match="boolean"):
        ag.masked_fill(x, ag.zeros((2, 5)), 1.0)
    assert x.contiguous() is x
    assert ag.masked_fill(ag.arange(3), ag.asarray([True, False, True]), 7).tolist() == [7, 1, 7]


# --- scaled_dot_product_attention --------------------------------------------------------------
def qkv(q=(2, 3, 4, 5), k=(2, 3, 6, 5), v=(2, 3, 6, 3)) -> list[Arg]:
    return [normal(*q), normal(*k), normal(*v)]


SDPA = [  # (id, keyword arguments, inputs: q, k, v and then a mask)
    ("plain", {}, qkv()),
    ("bool_mask_with_empty_row", {}, [*qkv(), const(MASK)]),
    ("additive_minus_inf_row", {}, [*qkv(), const(ADDITIVE)]),
    ("additive_mask_differentiated", {}, [*qkv(), normal(4, 6)]),
    ("mask_broadcast_over_heads", {}, [*qkv(), const(RNG.random((2, 1, 4, 6)) < 0.7)]),
    ("causal_fewer_queries", {"is_causal": True}, qkv()),
    ("causal_more_queries", {"is_causal": True}, qkv(q=(2, 3, 7, 5))),
    ("scale", {"scale": 0.3}, qkv()),
    ("unbatched", {}, qkv((4, 5), (6, 5), (6, 3))),
    ("grouped_query", {"enable_gqa": True}, qkv(k=(2, 1, 6, 5), v=(2, 1, 6, 3))),
]


def sdpa(lib, kwargs):
    def attend(q, k, v, mask=None):
        return lib.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kwargs)

    return attend


@pytest.mark.parametrize(("kwargs", "args"), [pytest.param(k, a, id=i) for i, k, a in SDPA])
def test_sdpa_matches_torch(float64_backend, kwargs, args):
    compare_with_torch(sdpa(F, kwargs), sdpa(TF, kwargs), args)


GRADCHECK = [  # tiny: (id, keyword arguments, query/key/value shapes, mask: None, bool, or "leaf" for a float one)
    ("plain", {}, ((2, 3, 2), (2, 4, 2), (2, 4, 3)), None),
    ("bool_mask", {}, ((3, 2), (4, 2), (4, 3)), MASK[:3, :4]),
    ("additive_mask", {}, ((3, 2), (4, 2), (4, 3)), "leaf"),
    ("causal_more_queries", {"is_causal": True}, ((5, 2), (3, 2), (3, 2)), None),
    ("scale", {"scale": 0.7}, ((3, 2), (4, 2), (4, 2)), None),
]


@pytest.mark.parametrize(("kwargs", "shapes", "mask"), [pytest.param(k, s, m, id=i) for i, k, s, m in GRADCHECK])
def test_sdpa_gradcheck(float64_backend, kwargs, shapes, mask):
    inputs = [leaf(*shape, seed=i) for i, shape in enumerate(shapes)]
    if mask is not None:
        inputs.append(leaf(shapes[0][-2], shapes[1][-2], seed=9) if isinstance(mask, str) else ag.asarray(mask))
    assert ag.gradcheck(sdpa(F, kwargs), inputs)


def test_sdpa_gradgradcheck(float64_backend):
    q, k, v = leaf(1, 3, 2, seed=1), leaf(1, 4, 2, seed=2), leaf(1, 4, 2, seed=3)
    assert ag.gradgradcheck(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=ag.asarray(MASK[:3, :4])), [q, k, v]
    )


def test_sdpa_fully_masked_rows_give_zeros(backend):
    q, k, v = leaf(2, 4, 3), leaf(2, 6, 3, seed=1), leaf(2, 6, 3, seed=2)
    for mask in (ag.asarray(MASK), ag.asarray(ADDITIVE, dtype=F64)):
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        assert np.all(host(out)[:, 1] == 0) and np.all(np.isfinite(host(out)))
        out.sum().backward()
        assert np.all(host(q.grad)[:, 1] == 0) and np.all(np.isfinite(host(k.grad)))
        q.grad = k.grad = v.grad = None


def test_sdpa_dropout(backend):
    q, k = ag.zeros((4, 8, 3)), ag.zeros((4, 8, 3))
    v = ag.ones((4, 8, 1))  # uniform weights 1/8: the output is the kept fraction times 1/(1-p)
    ag.manual_seed(3)
    first = F.scaled_dot_product_attention(q, k, v, dropout_p=0.25)
    ag.manual_seed(3)
    again = F.scaled_dot_product_attention(q, k, v, dropout_p=0.25)
    assert np.array_equal(host(first), host(again))
    big = F.scaled_dot_product_attention(
        ag.zeros((64, 64, 3)), ag.zeros((64, 64, 3)), ag.ones((64, 64, 1)), dropout_p=0.25
    )
    values = host(big)
    assert set(np.round(np.unique(values * 64 * 0.75), 4)) <= set(range(65))  # whole kept counts, scaled by 1/(1-p)
    assert abs(values.mean() - 1.0) < 0.02  # the expected output is unchanged
    assert not np.allclose(values, 1.0)
    assert np.array_equal(host(F.scaled_dot_product_attention(q, k, v, dropout_p=0.0)), np.ones((4, 8, 1)))


def test_sdpa_errors(backend):
    q = ag.zeros((2, 3, 4))
    with pytest.raises(ValueError, match="either attn_mask or is_causal"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=ag.ones((3, 3), dtype=ag.bool), is_causal=True)
    with pytest.raises(TypeError, match="boolean or floating"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=ag.ones((3, 3), dtype=ag.int64))
    with pytest.raises(ValueError, match="multiple of the key/value heads"):
        F.scaled_dot_product_attention(
            ag.zeros((1, 3, 2, 4)), ag.zeros((1, 2, 2, 4)), ag.zeros((1, 2, 2, 4)), enable_gqa=True
        )


# --- modules against PyTorch --------------------------------------------------------------------
def torch_twin(ours: nn.Module, twin: torch.nn.Module) -> torch.nn.Module:
    """Random weights in ours (not the init's zeros), loaded strictly by name into the torch twin."""
    rng = np.random.default_rng(1)
    ours.load_state_dict({k: rng.standard_normal(v.shape) * 0.5 for k, v in ours.state_dict().items()})
    twin = twin.double()
    twin.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    ours.eval(), twin.eval()
    return twin


def check_module(ours, twin, args, call, convert=lambda v: v):
    """Outputs (all of them) and gradients of inputs and parameters, against torch."""
    twin = torch_twin(ours, twin)

    def run(module, lib):
        def forward(*xs):
            out = call(module, lib, *xs)
            outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o is not None]
            flat = [o.reshape(-1) for o in outs]
            return ag.concat(flat) if lib is ag else torch.cat(flat)

        return forward

    compare_with_torch(run(ours, ag), run(twin, torch), args)
    theirs = dict(twin.named_parameters())
    assert [name for name, _ in ours.named_parameters()] == list(theirs)
    for name, p in ours.named_parameters():
        assert_close(p.grad, theirs[name].grad)


def as_lib(lib, value):
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return ag.asarray(value) if lib is ag else torch.tensor(value)


KPM = np.array([[False] * 6, [False, True, False, True, True, False]])
CAUSAL = np.triu(np.ones((5, 5), dtype=bool), 1)
# MultiheadAttention's masks are True where attention is NOT allowed; every query keeps key 0 here
# (PyTorch's need_weights=True path gives NaN for a query with nothing to attend to)
BLOCKED = RNG.random((2, 5, 6)) < 0.4
BLOCKED[..., 0] = False
EMPTY_ROW = np.zeros((5, 5), dtype=bool)
EMPTY_ROW[3] = True
MHA = [  # (id, constructor kwargs, (query, key, value) shapes or one shape for self-attention, forward kwargs)
    ("self_batch_first", dict(batch_first=True), (2, 5, 8), {}),
    ("self_seq_first_heads", dict(), (5, 2, 8), dict(average_attn_weights=False)),
    (
        "cross_kpm_bool_mask",
        dict(batch_first=True),
        ((2, 5, 8), (2, 6, 8), (2, 6, 8)),
        dict(key_padding_mask=KPM, attn_mask=BLOCKED[0]),
    ),
    (
        "float_mask_and_kpm",
        dict(batch_first=True),
        ((2, 4, 8), (2, 6, 8), (2, 6, 8)),
        dict(key_padding_mask=np.where(KPM, -1.5, 0.0), attn_mask=np.where(BLOCKED[0, :4], -np.inf, 0.3)),
    ),
    ("kdim_vdim_no_bias", dict(batch_first=True, kdim=3, vdim=5, bias=False), ((2, 4, 8), (2, 6, 3), (2, 6, 5)), {}),
    (
        "causal_no_weights",
        dict(batch_first=True),
        (2, 5, 8),
        dict(attn_mask=CAUSAL, need_weights=False, is_causal=True),
    ),
    ("3d_mask_unbatched", dict(), (5, 8), dict(attn_mask=BLOCKED[..., :5])),
    ("empty_row_no_weights", dict(batch_first=True), (2, 5, 8), dict(attn_mask=EMPTY_ROW, need_weights=False)),
    (
        "bias_kv_zero_attn",
        dict(add_bias_kv=True, add_zero_attn=True),
        (5, 2, 8),
        dict(key_padding_mask=KPM[:, :5], attn_mask=CAUSAL),
    ),
]


@pytest.mark.parametrize(("make", "shapes", "kwargs"), [pytest.param(m, s, k, id=i) for i, m, s, k in MHA])
def test_multihead_attention_matches_torch(float64_backend, make, shapes, kwargs):
    self_attention = isinstance(shapes[0], int)
    args = [normal(*shapes)] if self_attention else [normal(*s) for s in shapes]

    def call(module, lib, *xs):
        q, k, v = xs * 3 if self_attention else xs
        return module(q, k, v, **{n: as_lib(lib, v) for n, v in kwargs.items()})

    check_module(nn.MultiheadAttention(8, 2, dtype=F64, **make), torch.nn.MultiheadAttention(8, 2, **make), args, call)


ENCODER_LAYERS = [
    ("post_norm_relu", dict(), (5, 2, 8), {}),
    (
        "pre_norm_gelu_batch_first",
        dict(norm_first=True, activation="gelu", batch_first=True),
        (2, 5, 8),
        dict(src_key_padding_mask=KPM[:, :5]),
    ),
    ("post_norm_gelu_mask", dict(activation="gelu"), (5, 2, 8), dict(src_mask=CAUSAL)),
    ("pre_norm_relu_no_bias", dict(norm_first=True, bias=False, batch_first=True), (2, 5, 8), {}),
]


@pytest.mark.parametrize(("make", "shape", "kwargs"), [pytest.param(m, s, k, id=i) for i, m, s, k in ENCODER_LAYERS])
def test_encoder_layer_matches_torch(float64_backend, make, shape, kwargs):
    def call(module, lib, x):
        return module(x, **{n: as_lib(lib, v) for n, v in kwargs.items()})

    check_module(
        nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, dtype=F64, **make),
        torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, **make),
        [normal(*shape)],
        call,
    )


def test_encoder_matches_torch(float64_backend):
    layer = nn.TransformerEncoderLayer(8, 2, 16, dtype=F64, batch_first=True)
    ours = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8, dtype=F64))
    twin = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True),
        2,
        norm=torch.nn.LayerNorm(8),
        enable_nested_tensor=False,
    )
    assert ours.layers[0].linear1.weight is not ours.layers[1].linear1.weight
    assert ours.layers[0].linear1.weight is not layer.linear1.weight

    def call(module, lib, x):
        return module(x, mask=as_lib(lib, CAUSAL), is_causal=True)

    check_module(ours, twin, [normal(2, 5, 8)], call)


def test_modules_gradcheck(float64_backend):
    attention = nn.MultiheadAttention(4, 2, batch_first=True, dtype=F64)
    mask = ag.asarray(CAUSAL[:3, :3])
    x = leaf(1, 3, 4)
    assert ag.gradcheck(lambda x, *params: attention(x, x, x, attn_mask=mask)[0], [x, *attention.parameters()])
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, norm_first=True, dtype=F64)
    assert ag.gradcheck(lambda x, *params: layer(x, src_mask=mask), [leaf(3, 1, 4), *layer.parameters()])


def test_initialisation_and_layout(backend):
    attention = nn.MultiheadAttention(6, 3, add_bias_kv=True)
    reference = torch.nn.MultiheadAttention(6, 3, add_bias_kv=True)
    assert {k: v.shape for k, v in attention.state_dict().items()} == {
        k: tuple(v.shape) for k, v in reference.state_dict().items()
    }
    assert type(attention.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert np.all(host(attention.in_proj_bias) == 0) and np.all(host(attention.out_proj.bias) == 0)
    bound = np.sqrt(6 / (6 + 18))  # xavier_uniform_ over (3E, E)
    weight = host(attention.in_proj_weight)
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > bound * 0.8
    separate = nn.MultiheadAttention(6, 3, kdim=2, vdim=4)
    assert separate.in_proj_weight is None and separate.k_proj_weight.shape == (6, 2)
    layer = nn.TransformerEncoderLayer(6, 3)
    reference_layer = torch.nn.TransformerEncoderLayer(6, 3)
    assert list(layer.state_dict()) == list(reference_layer.state_dict())
    with pytest.raises(ValueError, match="multiple of num_heads"):
        nn.MultiheadAttention(6, 4)
    with pytest.raises(RuntimeError, match="relu/gelu"):
        nn.TransformerEncoderLayer(6, 3, activation="tanh")


def test_module_dropout_train_and_eval(backend):
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5, batch_first=True)
    x = ag.asarray(np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32))
    layer.eval()
    assert np.array_equal(host(layer(x)), host(layer(x)))
    layer.train()
    ag.manual_seed(5)
    first = host(layer(x))
    ag.manual_seed(5)
    assert np.array_equal(first, host(layer(x)))
    assert not np.allclose(first, host(layer(x)))
    attention = nn.MultiheadAttention(8, 2, dropout=0.5, batch_first=True)
    weights = host(attention(x, x, x)[1])  # after dropout, as PyTorch returns them
    assert (weights == 0).any() and abs(weights.sum(-1).mean() - 1) < 0.2


def test_is_causal_needs_the_mask(backend):
    attention = nn.MultiheadAttention(4, 2)
    x = ag.zeros((3, 1, 4))
    with pytest.raises(RuntimeError, match="is_causal"):
        attention(x, x, x, is_causal=True)


def test_float32_stays_float32(backend):
    x = ag.ones((2, 3, 4), requires_grad=True)
    out = F.scaled_dot_product_attention(x, x, x, is_causal=True)
    y, weights = nn.MultiheadAttention(4, 2)(x, x, x, attn_mask=ag.asarray([[0.0, -1.0], [-2.0, 0.0]]))
    (out.sum() + y.sum()).backward()
    assert out.dtype == y.dtype == weights.dtype == x.grad.dtype == ag.float32


def test_mask_shape_errors(backend):
    attention = nn.MultiheadAttention(4, 2)
    x = ag.zeros((2, 3, 4))  # L=2, N=3
    with pytest.raises(ValueError, match=r"attn_mask must have shape \(L, S\) = \(2, 2\)"):
        attention(x, x, x, attn_mask=ag.ones((3, 3), dtype=ag.bool))
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape \(N, S\) = \(3, 2\)"):
        attention(x, x, x, key_padding_mask=ag.ones((2, 3), dtype=ag.bool))


def test_compiled_training_step_matches_eager(backend):
    """A causal encoder layer trained with AdamW: the step through `ag.compile` (no fallback)
    gives the eager step's losses."""
    if not backend.can_compile:
        pytest.skip(f"the {backend.name} backend has no tracing compiler")
    rng = np.random.default_rng(0)
    x, target = (ag.tensor(rng.standard_normal((2, 5, 8)), dtype="float32") for _ in range(2))

    def losses(compiled: bool) -> list[float]:
        ag.manual_seed(0)
        layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
        opt = optim.AdamW(layer.parameters(), lr=1e-2)
        causal = ag.triu(ag.ones((5, 5), dtype=ag.bool), k=1)

        def step(x, target):
            loss = F.mse_loss(layer(x, src_mask=causal, is_causal=True), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

        run = ag.compile(step, modules=[layer], optimizers=[opt]) if compiled else step
        return [run(x, target).item() for _ in range(4)]

    with warnings.catch_warnings():
        warnings.simplefilter("error", ag.CompileFallbackWarning)
        compiled = losses(True)
    eager = losses(False)
    assert compiled[-1] < compiled[0]
    np.testing.assert_allclose(compiled, eager, rtol=1e-5)


class _Block(nn.Module):
    """The pre-norm transformer block of the README (and of the issue that asked for it)."""

    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        t = x.shape[1]
        causal = ag.triu(ag.ones((t, t), dtype=ag.bool), k=1)  # True = masked
        x = x + self.attn(h, h, h, attn_mask=causal, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


def test_readme_block_matches_pytorch_and_is_causal(float64_backend):
    """The README's block: the same function as the same block in PyTorch, and causal (the
    output at a position does not change when later positions do)."""
    ag.manual_seed(0)
    ours = _Block(8, 2).to(dtype="float64")

    class TorchBlock(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = torch.nn.LayerNorm(8), torch.nn.LayerNorm(8)
            self.attn = torch.nn.MultiheadAttention(8, 2, batch_first=True)
            self.mlp = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.GELU(), torch.nn.Linear(32, 8))

        def forward(self, x):
            h = self.ln1(x)
            causal = torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool), diagonal=1)
            x = x + self.attn(h, h, h, attn_mask=causal, need_weights=False)[0]
            return x + self.mlp(self.ln2(x))

    theirs = TorchBlock().double()
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 5, 8))
    out = ours(ag.tensor(x))
    assert_close(out.detach().numpy(), theirs(torch.from_numpy(x)).detach().numpy())
    changed = x.copy()
    changed[:, 3:] += 1.0
    assert_close(ours(ag.tensor(changed)).detach().numpy()[:, :3], out.detach().numpy()[:, :3])
    assert not np.allclose(ours(ag.tensor(changed)).detach().numpy()[:, 3:], out.detach().numpy()[:, 3:])
