"""Zero-sized inputs through every layer, loss and functional form, against PyTorch: a batch of
0, a sequence of 0, 0 features. Where PyTorch returns an empty result (or a reduction over
nothing: nan for a mean, 0 for a sum) we return the same, and backward gives gradients of the
right shapes (zeros, or the bias's sum for ``Linear(0, n)``); where PyTorch raises, we raise a
ValueError or RuntimeError that says what was wrong.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from layer_cases import TF, Case, Input, function, layer, run_ours, run_torch

import autograd_core as ag
import nn
import nn.functional as F


def case(name: str, c: Case, *shapes: tuple | Input, match: str | None = None) -> object:
    inputs = tuple(s if isinstance(s, Input) else Input(s) for s in shapes)
    return pytest.param(c, inputs, match, id=name)


def idx(shape: tuple, n: int) -> Input:
    return Input(shape, f"index:{n}")


def activations() -> list:
    pairs = [
        ("relu", nn.ReLU(), torch.nn.ReLU()),
        ("tanh", nn.Tanh(), torch.nn.Tanh()),
        ("sigmoid", nn.Sigmoid(), torch.nn.Sigmoid()),
        ("gelu", nn.GELU(), torch.nn.GELU()),
        ("gelu_tanh", nn.GELU("tanh"), torch.nn.GELU("tanh")),
        ("celu", nn.CELU(), torch.nn.CELU()),
        ("elu", nn.ELU(), torch.nn.ELU()),
        ("selu", nn.SELU(), torch.nn.SELU()),
        ("hardsigmoid", nn.Hardsigmoid(), torch.nn.Hardsigmoid()),
        ("hardswish", nn.Hardswish(), torch.nn.Hardswish()),
        ("hardtanh", nn.Hardtanh(), torch.nn.Hardtanh()),
        ("leaky_relu", nn.LeakyReLU(), torch.nn.LeakyReLU()),
        ("logsigmoid", nn.LogSigmoid(), torch.nn.LogSigmoid()),
        ("mish", nn.Mish(), torch.nn.Mish()),
        ("relu6", nn.ReLU6(), torch.nn.ReLU6()),
        ("silu", nn.SiLU(), torch.nn.SiLU()),
        ("softplus", nn.Softplus(), torch.nn.Softplus()),
        ("softsign", nn.Softsign(), torch.nn.Softsign()),
        ("softmax", nn.Softmax(dim=1), torch.nn.Softmax(dim=1)),
        ("log_softmax", nn.LogSoftmax(dim=1), torch.nn.LogSoftmax(dim=1)),
        ("softmin", nn.Softmin(dim=1), torch.nn.Softmin(dim=1)),
        ("glu", nn.GLU(), torch.nn.GLU()),
        ("identity", nn.Identity(), torch.nn.Identity()),
        ("flatten", nn.Flatten(), torch.nn.Flatten()),
        ("dropout", nn.Dropout(0.5), torch.nn.Dropout(0.5)),
    ]
    out = []
    for name, ours, theirs in pairs:
        c = function(ours, theirs)
        out += [case(f"{name}_batch0", c, (0, 4)), case(f"{name}_features0", c, (3, 0))]
    return out


def losses() -> list:
    pairs = [
        ("mse", nn.MSELoss, torch.nn.MSELoss, "normal"),
        ("l1", nn.L1Loss, torch.nn.L1Loss, "normal"),
        ("smooth_l1", nn.SmoothL1Loss, torch.nn.SmoothL1Loss, "normal"),
        ("huber", nn.HuberLoss, torch.nn.HuberLoss, "normal"),
        ("bce", nn.BCELoss, torch.nn.BCELoss, "prob"),
        ("bce_logits", nn.BCEWithLogitsLoss, torch.nn.BCEWithLogitsLoss, "prob"),
        ("kl_div", nn.KLDivLoss, torch.nn.KLDivLoss, "prob"),
    ]
    out = []
    for reduction in ("mean", "sum", "none"):
        for name, ours, theirs, target in pairs:
            c = layer(ours, theirs, reduction=reduction)
            out.append(case(f"{name}_{reduction}_empty", c, (0, 3), Input((0, 3), target)))
        for name, ours, theirs in (("cross_entropy", nn.CrossEntropyLoss, torch.nn.CrossEntropyLoss),
                                   ("nll", nn.NLLLoss, torch.nn.NLLLoss)):  # fmt: skip
            c = layer(ours, theirs, reduction=reduction)
            out.append(case(f"{name}_{reduction}_batch0", c, (0, 4), idx((0,), 4)))
            out.append(case(f"{name}_{reduction}_2d_batch0", c, (0, 4, 3), idx((0, 3), 4)))
        c = layer(nn.CrossEntropyLoss, torch.nn.CrossEntropyLoss, reduction=reduction, label_smoothing=0.1)
        out.append(case(f"cross_entropy_smoothed_{reduction}_batch0", c, (0, 4), idx((0,), 4)))
        c = layer(nn.CrossEntropyLoss, torch.nn.CrossEntropyLoss, reduction=reduction)
        out.append(case(f"cross_entropy_probabilities_{reduction}_batch0", c, (0, 4), Input((0, 4), "prob")))
    return out


def recurrent() -> list:
    out = []
    for name, ours, theirs in (("rnn", nn.RNN, torch.nn.RNN), ("lstm", nn.LSTM, torch.nn.LSTM),
                               ("gru", nn.GRU, torch.nn.GRU)):  # fmt: skip
        first = layer(ours, theirs, 3, 5, batch_first=True)
        out += [
            case(f"{name}_seq0_batch_first", first, (2, 0, 3), match="sequence length"),
            case(f"{name}_seq0", layer(ours, theirs, 3, 5), (0, 2, 3), match="sequence length"),
            case(f"{name}_seq0_unbatched", layer(ours, theirs, 3, 5), (0, 3), match="sequence length"),
            case(f"{name}_batch0", first, (0, 4, 3)),
            case(f"{name}_bidirectional_batch0", layer(ours, theirs, 3, 5, 2, bidirectional=True), (4, 0, 3)),
        ]
    for name, ours, theirs in (("rnn_cell", nn.RNNCell, torch.nn.RNNCell), ("lstm_cell", nn.LSTMCell,
                               torch.nn.LSTMCell), ("gru_cell", nn.GRUCell, torch.nn.GRUCell)):  # fmt: skip
        out.append(case(f"{name}_batch0", layer(ours, theirs, 3, 5), (0, 3)))
    return out


def attention() -> list:
    mha = layer(nn.MultiheadAttention, torch.nn.MultiheadAttention, 4, 2, batch_first=True)
    encoder = layer(
        nn.TransformerEncoderLayer, torch.nn.TransformerEncoderLayer, 4, 2, 8, dropout=0.0, batch_first=True
    )
    sdpa = function(F.scaled_dot_product_attention, TF.scaled_dot_product_attention)
    causal = function(F.scaled_dot_product_attention, TF.scaled_dot_product_attention, is_causal=True)
    return [
        case("mha_seq0", mha, (2, 0, 4), (2, 0, 4), (2, 0, 4)),
        case("mha_batch0", mha, (0, 3, 4), (0, 3, 4), (0, 3, 4)),
        case("mha_keys0", mha, (2, 3, 4), (2, 0, 4), (2, 0, 4)),
        case("encoder_layer_seq0", encoder, (2, 0, 4)),
        case("encoder_layer_batch0", encoder, (0, 3, 4)),
        case("sdpa_seq0", sdpa, (2, 2, 0, 4), (2, 2, 0, 4), (2, 2, 0, 4)),
        case("sdpa_batch0", sdpa, (0, 2, 3, 4), (0, 2, 3, 4), (0, 2, 3, 4)),
        case("sdpa_keys0", sdpa, (2, 3, 4), (2, 0, 4), (2, 0, 4)),
        case("sdpa_head_dim0", sdpa, (2, 3, 0), (2, 5, 0), (2, 5, 4)),
        case("sdpa_causal_seq0", causal, (2, 0, 4), (2, 0, 4), (2, 0, 4)),
    ]


def spatial() -> list:
    conv1 = layer(nn.Conv1d, torch.nn.Conv1d, 3, 4, 3)
    conv2 = layer(nn.Conv2d, torch.nn.Conv2d, 3, 4, 3, padding=1)
    return [
        case("conv1d_batch0", conv1, (0, 3, 8)),
        case("conv1d_length0", conv1, (2, 3, 0)),
        case("conv2d_batch0", conv2, (0, 3, 5, 5)),
        case("conv2d_height0", conv2, (2, 3, 0, 5)),
        case("conv_transpose2d_batch0", layer(nn.ConvTranspose2d, torch.nn.ConvTranspose2d, 3, 4, 3), (0, 3, 4, 4)),
        case("max_pool1d_batch0", layer(nn.MaxPool1d, torch.nn.MaxPool1d, 2), (0, 3, 8)),
        case("max_pool2d_batch0", layer(nn.MaxPool2d, torch.nn.MaxPool2d, 2), (0, 3, 4, 4)),
        case("max_pool2d_channels0", layer(nn.MaxPool2d, torch.nn.MaxPool2d, 2), (2, 0, 4, 4)),
        case("avg_pool1d_batch0", layer(nn.AvgPool1d, torch.nn.AvgPool1d, 2), (0, 3, 8)),
        case("avg_pool2d_batch0", layer(nn.AvgPool2d, torch.nn.AvgPool2d, 2), (0, 3, 4, 4)),
        case("avg_pool2d_channels0", layer(nn.AvgPool2d, torch.nn.AvgPool2d, 2), (2, 0, 4, 4)),
        case("adaptive_avg_pool1d_batch0", layer(nn.AdaptiveAvgPool1d, torch.nn.AdaptiveAvgPool1d, 2), (0, 3, 8)),
        case("adaptive_avg_pool2d_batch0", layer(nn.AdaptiveAvgPool2d, torch.nn.AdaptiveAvgPool2d, 2), (0, 3, 4, 4)),
        case("upsample_batch0", layer(nn.Upsample, torch.nn.Upsample, scale_factor=2), (0, 3, 4, 4)),
        case("zero_pad_batch0", layer(nn.ZeroPad2d, torch.nn.ZeroPad2d, 1), (0, 3, 4, 4)),
        case("constant_pad_batch0", layer(nn.ConstantPad2d, torch.nn.ConstantPad2d, 1, 0.5), (0, 3, 4, 4)),
        case("reflection_pad_batch0", layer(nn.ReflectionPad2d, torch.nn.ReflectionPad2d, 1), (0, 3, 4, 4)),
        case("replication_pad_batch0", layer(nn.ReplicationPad2d, torch.nn.ReplicationPad2d, 1), (0, 3, 4, 4)),
        case("unflatten_batch0", layer(nn.Unflatten, torch.nn.Unflatten, 1, (2, 2)), (0, 4)),
        case("dropout2d_batch0", layer(nn.Dropout2d, torch.nn.Dropout2d, train=True), (0, 3, 4, 4)),
        case("unfold_batch0", function(F.unfold, TF.unfold, kernel_size=2), (0, 3, 4, 4)),
    ]


def dense() -> list:
    linear = layer(nn.Linear, torch.nn.Linear, 5, 3)
    return [
        case("linear_in0", layer(nn.Linear, torch.nn.Linear, 0, 3), (4, 0)),
        case("linear_in0_no_bias", layer(nn.Linear, torch.nn.Linear, 0, 3, bias=False), (4, 0)),
        case("linear_out0", layer(nn.Linear, torch.nn.Linear, 5, 0), (4, 5)),
        case("linear_batch0", linear, (0, 5)),
        case("linear_seq0", linear, (2, 0, 5)),
        case("embedding_empty", layer(nn.Embedding, torch.nn.Embedding, 6, 3), idx((0,), 6)),
        case("embedding_seq0", layer(nn.Embedding, torch.nn.Embedding, 6, 3), idx((2, 0), 6)),
        case("layer_norm_features0", layer(nn.LayerNorm, torch.nn.LayerNorm, 0), (3, 0)),
        case("embedding_dim0", layer(nn.Embedding, torch.nn.Embedding, 6, 0), idx((4,), 6)),
        case("layer_norm_batch0", layer(nn.LayerNorm, torch.nn.LayerNorm, 4), (0, 4)),
        case("layer_norm_seq0", layer(nn.LayerNorm, torch.nn.LayerNorm, 4), (2, 0, 4)),
        case("group_norm_batch0", layer(nn.GroupNorm, torch.nn.GroupNorm, 2, 4), (0, 4)),
        case("group_norm_2d_batch0", layer(nn.GroupNorm, torch.nn.GroupNorm, 2, 4), (0, 4, 3, 3)),
        case("batch_norm1d_eval_batch0", layer(nn.BatchNorm1d, torch.nn.BatchNorm1d, 3), (0, 3)),
        case("batch_norm1d_train_batch0", layer(nn.BatchNorm1d, torch.nn.BatchNorm1d, 3, train=True), (0, 3)),
        case("batch_norm1d_train_length0", layer(nn.BatchNorm1d, torch.nn.BatchNorm1d, 3, train=True), (2, 3, 0)),
        case("batch_norm2d_eval_batch0", layer(nn.BatchNorm2d, torch.nn.BatchNorm2d, 3), (0, 3, 4, 4)),
        case("batch_norm2d_train_batch0", layer(nn.BatchNorm2d, torch.nn.BatchNorm2d, 3, train=True), (0, 3, 4, 4)),
    ]


def functional() -> list:
    """The functional forms and the reductions losses are built on, over nothing."""
    return [
        case("linear_fn_in0", function(F.linear, TF.linear), (4, 0), (3, 0), (3,)),
        case("layer_norm_fn_batch0", function(F.layer_norm, TF.layer_norm, normalized_shape=(4,)), (0, 4)),
        case("softmax_fn_dim0", function(lambda x: F.softmax(x, dim=0), lambda x: TF.softmax(x, dim=0)), (0, 3)),
        case("cross_entropy_fn_batch0", function(F.cross_entropy, TF.cross_entropy), (0, 4), idx((0,), 4)),
        case("mean_all", function(ag.mean, torch.mean), (0, 3)),
        case("mean_axis", function(lambda x: ag.mean(x, axis=0), lambda x: torch.mean(x, 0)), (0, 3)),
        case("sum_all", function(ag.sum, torch.sum), (0, 3)),
        case("var_axis", function(lambda x: ag.var(x, axis=0), lambda x: torch.var(x, 0, correction=0)), (0, 3)),
        case("std_axis", function(lambda x: ag.std(x, axis=0), lambda x: torch.std(x, 0, correction=0)), (0, 3)),
        case("prod_axis", function(lambda x: ag.prod(x, axis=0), lambda x: torch.prod(x, 0)), (0, 3)),
        case("logsumexp_axis", function(lambda x: ag.logsumexp(x, axis=0), lambda x: torch.logsumexp(x, 0)), (0, 3)),
        case("norm_all", function(ag.linalg.vector_norm, torch.linalg.vector_norm), (0, 3)),
    ]


CASES = activations() + losses() + recurrent() + attention() + spatial() + dense() + functional()


def _same(ours: np.ndarray, theirs: np.ndarray, what: str) -> None:
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape}, torch gives {theirs.shape}"
    np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-9, equal_nan=True, err_msg=what)


@pytest.mark.parametrize(("c", "inputs", "match"), CASES)
def test_empty_input_matches_torch(float64_backend, c, inputs, match):
    theirs = run_torch(c, inputs, "float64")
    ours = run_ours(c, inputs, "float64")
    if theirs.error is not None:
        assert ours.error is not None, f"torch raises {theirs.error!r}; ours returns {ours.outputs}"
        assert isinstance(ours.error, (ValueError, RuntimeError)), repr(ours.error)
        if match:
            assert match in str(ours.error), f"{ours.error!r} does not say {match!r} (torch: {theirs.error})"
        return
    if ours.error is not None:
        raise AssertionError(f"torch gives a result; ours raises {ours.error!r}") from ours.error
    assert len(ours.outputs) == len(theirs.outputs)
    for i, (o, t) in enumerate(zip(ours.outputs, theirs.outputs)):
        _same(o, t, f"output {i}")
    for name, t in theirs.grads.items():
        o = ours.grads[name]
        if t is None:  # torch's backward never reached it: ours may hold zeros
            assert o is None or not np.any(o), f"{name}: torch gives no gradient, ours {o}"
            continue
        assert o is not None, f"{name}: torch gives a gradient of shape {t.shape}, ours none"
        _same(o, t, f"gradient of {name}")
