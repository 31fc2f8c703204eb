"""float16 through every layer, loss and reduction, against PyTorch computing in float32 on
the same float16-rounded inputs and weights. Results and gradients stay float16; reductions
accumulate in float32 as PyTorch's do, so a mean of 65,536 ones is 1, not inf. Backends with no
float16 (array_api_strict, dask) refuse it when the tensor is made, saying so.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st
from layer_cases import TF, Case, Input, function, layer, run_ours, run_torch

import autograd_core as ag
import nn
import nn.functional as F


def has_float16(backend) -> bool:
    try:
        backend.dtype("float16")
    except TypeError:
        return False
    return True


@pytest.fixture
def half_backend(backend):
    """The backend under test, for tests that need float16 (skipped where it has none: the
    refusal is tested by `test_backends_without_float16_refuse_it`)."""
    if not has_float16(backend):
        pytest.skip(f"{backend.name} has no float16")
    return backend


def test_backends_without_float16_refuse_it(backend):
    if has_float16(backend):
        assert ag.ones((2,), dtype="float16").dtype == ag.float16
        return
    with pytest.raises(TypeError, match=f"float16.*not supported by the {backend.name} backend"):
        ag.ones((2,), dtype="float16")


def case(name: str, c: Case, *shapes: tuple | Input) -> object:
    return pytest.param(c, tuple(s if isinstance(s, Input) else Input(s) for s in shapes), id=name)


ACTIVATIONS = [
    (nn.ReLU(), torch.nn.ReLU()),
    (nn.Tanh(), torch.nn.Tanh()),
    (nn.Sigmoid(), torch.nn.Sigmoid()),
    (nn.GELU(), torch.nn.GELU()),
    (nn.GELU("tanh"), torch.nn.GELU("tanh")),
    (nn.CELU(), torch.nn.CELU()),
    (nn.ELU(), torch.nn.ELU()),
    (nn.SELU(), torch.nn.SELU()),
    (nn.Hardsigmoid(), torch.nn.Hardsigmoid()),
    (nn.Hardswish(), torch.nn.Hardswish()),
    (nn.Hardtanh(), torch.nn.Hardtanh()),
    (nn.LeakyReLU(), torch.nn.LeakyReLU()),
    (nn.LogSigmoid(), torch.nn.LogSigmoid()),
    (nn.Mish(), torch.nn.Mish()),
    (nn.ReLU6(), torch.nn.ReLU6()),
    (nn.SiLU(), torch.nn.SiLU()),
    (nn.Softplus(), torch.nn.Softplus()),
    (nn.Softsign(), torch.nn.Softsign()),
    (nn.Softmax(dim=1), torch.nn.Softmax(dim=1)),
    (nn.LogSoftmax(dim=1), torch.nn.LogSoftmax(dim=1)),
    (nn.Softmin(dim=1), torch.nn.Softmin(dim=1)),
    (nn.GLU(), torch.nn.GLU()),
    (nn.Flatten(), torch.nn.Flatten()),
    (nn.Dropout(0.5).eval(), torch.nn.Dropout(0.5).eval()),
]

LOSSES = [  # (ours, torch's, how the input is drawn, how the target is)
    (nn.MSELoss, torch.nn.MSELoss, "normal", "normal"),
    (nn.L1Loss, torch.nn.L1Loss, "normal", "normal"),
    (nn.SmoothL1Loss, torch.nn.SmoothL1Loss, "normal", "normal"),
    (nn.HuberLoss, torch.nn.HuberLoss, "normal", "normal"),
    (nn.BCELoss, torch.nn.BCELoss, "prob", "prob"),
    (nn.BCEWithLogitsLoss, torch.nn.BCEWithLogitsLoss, "normal", "prob"),
    (nn.KLDivLoss, torch.nn.KLDivLoss, "normal", "prob"),
]

CASES = (
    [
        case(type(ours).__name__ + ("_tanh" if i == 4 else ""), function(ours, theirs), (6, 8))
        for i, (ours, theirs) in enumerate(ACTIVATIONS)
    ]  # fmt: skip
    + [
        case(f"{ours.__name__}_{r}", layer(ours, theirs, reduction=r), Input((16, 8), drawn), Input((16, 8), target))
        for ours, theirs, drawn, target in LOSSES
        for r in ("mean", "sum", "none")
    ]
    + [
        case(
            f"CrossEntropyLoss_{r}",
            layer(nn.CrossEntropyLoss, torch.nn.CrossEntropyLoss, reduction=r),
            (16, 5),
            Input((16,), "index:5"),
        )  # fmt: skip
        for r in ("mean", "sum", "none")
    ]
    + [
        case(
            "CrossEntropyLoss_smoothed",
            layer(nn.CrossEntropyLoss, torch.nn.CrossEntropyLoss, label_smoothing=0.1),
            (16, 5),
            Input((16,), "index:5"),
        ),  # fmt: skip
        case(
            "CrossEntropyLoss_probabilities",
            layer(nn.CrossEntropyLoss, torch.nn.CrossEntropyLoss),
            (16, 5),
            Input((16, 5), "prob"),
        ),  # fmt: skip
        case(
            "CrossEntropyLoss_many_classes",
            layer(nn.CrossEntropyLoss, torch.nn.CrossEntropyLoss),
            (4, 3000),
            Input((4,), "index:3000"),
        ),  # fmt: skip
        case("softmax_wide", function(nn.Softmax(dim=1), torch.nn.Softmax(dim=1)), Input((4, 3000), "wide")),
        case("log_softmax_wide", function(nn.LogSoftmax(dim=1), torch.nn.LogSoftmax(dim=1)), Input((4, 3000), "wide")),
        case("LayerNorm_wide", layer(nn.LayerNorm, torch.nn.LayerNorm, 4096), Input((3, 4096), "wide")),
        case("NLLLoss", layer(nn.NLLLoss, torch.nn.NLLLoss), (16, 5), Input((16,), "index:5")),
        case("mse_loss_256x256", function(F.mse_loss, TF.mse_loss), (256, 256), (256, 256)),
        case("Linear", layer(nn.Linear, torch.nn.Linear, 8, 4), (6, 8)),
        case("Linear_batched", layer(nn.Linear, torch.nn.Linear, 8, 4), (2, 3, 8)),
        case("Embedding", layer(nn.Embedding, torch.nn.Embedding, 6, 4), Input((2, 5), "index:6")),
        case("LayerNorm", layer(nn.LayerNorm, torch.nn.LayerNorm, 8), (6, 8)),
        case("GroupNorm", layer(nn.GroupNorm, torch.nn.GroupNorm, 2, 4), (3, 4, 5, 5)),
        case("BatchNorm1d_train", layer(nn.BatchNorm1d, torch.nn.BatchNorm1d, 4, train=True), (8, 4)),
        case("BatchNorm1d_eval", layer(nn.BatchNorm1d, torch.nn.BatchNorm1d, 4), (8, 4, 3)),
        case("BatchNorm2d_train", layer(nn.BatchNorm2d, torch.nn.BatchNorm2d, 3, train=True), (2, 3, 5, 5)),
        case("BatchNorm2d_eval", layer(nn.BatchNorm2d, torch.nn.BatchNorm2d, 3), (2, 3, 5, 5)),
        case("Conv1d", layer(nn.Conv1d, torch.nn.Conv1d, 3, 4, 3, padding=1), (2, 3, 9)),
        case("Conv2d", layer(nn.Conv2d, torch.nn.Conv2d, 3, 4, 3, padding=1), (2, 3, 6, 6)),
        case("Conv2d_strided_groups", layer(nn.Conv2d, torch.nn.Conv2d, 4, 4, 3, stride=2, groups=2), (2, 4, 7, 7)),
        case("ConvTranspose2d", layer(nn.ConvTranspose2d, torch.nn.ConvTranspose2d, 3, 4, 3, stride=2), (2, 3, 4, 4)),
        case("MaxPool1d", layer(nn.MaxPool1d, torch.nn.MaxPool1d, 2), (2, 3, 8)),
        case("MaxPool2d", layer(nn.MaxPool2d, torch.nn.MaxPool2d, 2), (2, 3, 6, 6)),
        case("MaxPool2d_padded", layer(nn.MaxPool2d, torch.nn.MaxPool2d, 3, 2, 1), (2, 3, 7, 7)),
        case("AvgPool1d", layer(nn.AvgPool1d, torch.nn.AvgPool1d, 2), (2, 3, 8)),
        case("AvgPool2d", layer(nn.AvgPool2d, torch.nn.AvgPool2d, 2), (2, 3, 6, 6)),
        case("AvgPool2d_padded", layer(nn.AvgPool2d, torch.nn.AvgPool2d, 3, 2, 1), (2, 3, 7, 7)),
        case("AdaptiveAvgPool1d", layer(nn.AdaptiveAvgPool1d, torch.nn.AdaptiveAvgPool1d, 3), (2, 3, 8)),
        case("AdaptiveAvgPool2d", layer(nn.AdaptiveAvgPool2d, torch.nn.AdaptiveAvgPool2d, 3), (2, 3, 7, 7)),
        case("Upsample_nearest", layer(nn.Upsample, torch.nn.Upsample, scale_factor=2), (2, 3, 4, 4)),
        case(
            "Upsample_bilinear", layer(nn.Upsample, torch.nn.Upsample, scale_factor=2, mode="bilinear"), (2, 3, 4, 4)
        ),  # fmt: skip
        case("ZeroPad2d", layer(nn.ZeroPad2d, torch.nn.ZeroPad2d, 1), (2, 3, 4, 4)),
        case("ReflectionPad2d", layer(nn.ReflectionPad2d, torch.nn.ReflectionPad2d, 1), (2, 3, 4, 4)),
        case("ReplicationPad2d", layer(nn.ReplicationPad2d, torch.nn.ReplicationPad2d, 1), (2, 3, 4, 4)),
        case("unfold", function(F.unfold, TF.unfold, kernel_size=2), (2, 3, 4, 4)),
        case("RNN", layer(nn.RNN, torch.nn.RNN, 4, 6, batch_first=True), (2, 5, 4)),
        case("LSTM", layer(nn.LSTM, torch.nn.LSTM, 4, 6, 2, bidirectional=True), (5, 2, 4)),
        case("GRU", layer(nn.GRU, torch.nn.GRU, 4, 6), (5, 2, 4)),
        case("RNNCell", layer(nn.RNNCell, torch.nn.RNNCell, 4, 6), (3, 4)),
        case("LSTMCell", layer(nn.LSTMCell, torch.nn.LSTMCell, 4, 6), (3, 4)),
        case("GRUCell", layer(nn.GRUCell, torch.nn.GRUCell, 4, 6), (3, 4)),
        case(
            "MultiheadAttention",
            layer(nn.MultiheadAttention, torch.nn.MultiheadAttention, 8, 2, batch_first=True),
            (2, 5, 8),
            (2, 6, 8),
            (2, 6, 8),
        ),  # fmt: skip
        case(
            "TransformerEncoderLayer",
            layer(
                nn.TransformerEncoderLayer, torch.nn.TransformerEncoderLayer, 8, 2, 16, dropout=0.0, batch_first=True
            ),
            (2, 5, 8),
        ),  # fmt: skip
        case(
            "scaled_dot_product_attention",
            function(F.scaled_dot_product_attention, TF.scaled_dot_product_attention),
            (2, 2, 5, 4),
            (2, 2, 6, 4),
            (2, 2, 6, 4),
        ),  # fmt: skip
        case(
            "scaled_dot_product_attention_causal",
            function(F.scaled_dot_product_attention, TF.scaled_dot_product_attention, is_causal=True),
            (2, 5, 4),
            (2, 5, 4),
            (2, 5, 4),
        ),  # fmt: skip
    ]
)


def assert_half_close(ours: np.ndarray, theirs: np.ndarray, what: str) -> None:
    """float16 agreement: 1% of each value, and 1% of the largest (float16 keeps 11 bits, and
    sums of many terms round at the scale of their largest)."""
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape}, torch gives {theirs.shape}"
    scale = float(np.max(np.abs(theirs), initial=0.0))
    np.testing.assert_allclose(ours, theirs, rtol=1e-2, atol=1e-2 * max(scale, 1e-3), err_msg=what)


@pytest.mark.parametrize(("c", "inputs"), CASES)
def test_layer_in_float16_matches_torch(half_backend, c, inputs):
    ours = run_ours(c, inputs, "float16")
    if ours.error is not None:
        raise AssertionError(f"float16 fails: {ours.error!r}") from ours.error
    theirs = run_torch(c, inputs, "float16", compute="float32")
    assert theirs.error is None, theirs.error
    assert set(ours.dtypes) == {"float16"}, ours.dtypes
    for i, (o, t) in enumerate(zip(ours.outputs, theirs.outputs, strict=True)):
        assert np.all(np.isfinite(o)), f"output {i} is not finite"
        assert_half_close(o, t, f"output {i}")
    for name, t in theirs.grads.items():
        assert ours.grads[name] is not None, f"{name}: no gradient"
        assert_half_close(ours.grads[name], t, f"gradient of {name}")
    single = run_ours(c, inputs, "float32")  # and our own float32 run agrees as well
    for i, (o, s) in enumerate(zip(ours.outputs, single.outputs, strict=True)):
        assert_half_close(o, s, f"output {i} against our float32 result")


# --- reductions accumulate in float32 ----------------------------------------------------------
REDUCTIONS = {
    "mean": (ag.mean, torch.mean),
    "sum": (ag.sum, torch.sum),
    "var": (lambda x: ag.var(x, correction=1), torch.var),
    "std": (lambda x: ag.std(x, correction=1), torch.std),
    "logsumexp": (lambda x: ag.logsumexp(x, axis=0), lambda x: torch.logsumexp(x, 0)),
    "vector_norm": (ag.linalg.vector_norm, torch.linalg.vector_norm),
    "softmax": (lambda x: ag.softmax(x, axis=0), lambda x: torch.softmax(x, 0)),
    "log_softmax": (lambda x: F.log_softmax(x, dim=0), lambda x: torch.log_softmax(x, 0)),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("n", [65_536, 100_000])
def test_reduction_of_many_float16_values_matches_torch(half_backend, name, n):
    """Over more elements than float16 can count (its largest is 65,504), ours agrees with
    torch's float16 reduction, itself accumulated in float32."""
    ours_fn, torch_fn = REDUCTIONS[name]
    host = np.random.default_rng(0).uniform(0.5, 1.5, n).astype(np.float16)
    x = ag.tensor(host, requires_grad=True)
    ref = torch.tensor(host, requires_grad=True)
    out, ref_out = ours_fn(x), torch_fn(ref)
    assert out.dtype == ag.float16
    weights = np.random.default_rng(1).standard_normal(tuple(ref_out.shape)).astype(np.float16)
    (out * ag.tensor(weights)).sum().backward()
    (ref_out * torch.tensor(weights)).sum().backward()
    assert_half_close(out.detach().numpy().astype(np.float64), ref_out.detach().double().numpy(), name)
    assert x.grad.dtype == ag.float16
    assert_half_close(x.grad.numpy().astype(np.float64), ref.grad.double().numpy(), f"gradient of {name}")


def test_mean_of_65536_float16_ones_is_one(half_backend):
    x = ag.ones((65_536,), dtype="float16", requires_grad=True)
    m = ag.mean(x)
    assert m.dtype == ag.float16 and m.item() == 1.0
    m.backward()
    assert x.grad.dtype == ag.float16
    np.testing.assert_array_equal(x.grad.numpy(), np.full(65_536, np.float16(1 / 65_536)))


def test_sum_of_float16_beyond_its_range_is_inf_as_torch(half_backend):
    """The sum is float16 too: 65,536 ones round to inf there, as torch gives."""
    total = ag.sum(ag.ones((65_536,), dtype="float16"))
    assert total.dtype == ag.float16
    assert total.item() == torch.ones(65_536, dtype=torch.float16).sum().item() == float("inf")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    n=st.integers(1, 3000),
    scale=st.sampled_from([1e-3, 1.0, 30.0]),
    name=st.sampled_from(sorted(REDUCTIONS)),
    seed=st.integers(0, 2**16),
)
def test_float16_reductions_agree_with_torch(half_backend, n, scale, name, seed):
    """Any length and magnitude."""
    ours_fn, torch_fn = REDUCTIONS[name]
    host = (scale * np.random.default_rng(seed).standard_normal(n)).astype(np.float16)
    out, ref = ours_fn(ag.tensor(host)), torch_fn(torch.tensor(host))
    assert out.dtype == ag.float16
    assert_half_close(out.numpy().astype(np.float64), ref.double().numpy(), name)
