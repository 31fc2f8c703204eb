"""What PyTorch's op database does not show of the functions and layers of `nn.functional`
added for it: the layers (state-dict names, PyTorch's weights in, PyTorch's outputs out),
the running statistics instance norm updates, the cases of grid sampling, bagged embeddings
and unpooling its samples miss, the statistics of alpha dropout, and the errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import autograd_core as ag
import nn
import nn.functional as F
from helpers import assert_close, host
from torch_oracle import Arg, compare_with_torch, normal

TF = torch.nn.functional


def _load_from(ours: nn.Module, theirs: torch.nn.Module) -> None:
    """Our layer's parameters and buffers set to the torch layer's, by state-dict name."""
    state = {k: ag.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    assert sorted(ours.state_dict()) == sorted(state)
    ours.load_state_dict(state)


@pytest.mark.parametrize(
    "ours, theirs, shape",
    [
        (
            lambda: nn.Conv3d(2, 4, 3, stride=(1, 2, 1), padding=1, groups=2),
            lambda: torch.nn.Conv3d(2, 4, 3, (1, 2, 1), 1, groups=2),
            (2, 2, 5, 6, 4),
        ),
        (
            lambda: nn.Conv3d(2, 3, 2, padding="same", padding_mode="circular"),
            lambda: torch.nn.Conv3d(2, 3, 2, padding="same", padding_mode="circular"),
            (1, 2, 4, 4, 4),
        ),
        (
            lambda: nn.ConvTranspose1d(2, 4, 3, stride=2, output_padding=1, groups=2),
            lambda: torch.nn.ConvTranspose1d(2, 4, 3, 2, output_padding=1, groups=2),
            (2, 2, 5),
        ),
        (
            lambda: nn.ConvTranspose3d(2, 3, (2, 3, 2), stride=(2, 1, 2), padding=(1, 0, 0), dilation=(2, 1, 1)),
            lambda: torch.nn.ConvTranspose3d(2, 3, (2, 3, 2), (2, 1, 2), (1, 0, 0), dilation=(2, 1, 1)),
            (1, 2, 3, 4, 3),
        ),
        (lambda: nn.PReLU(3), lambda: torch.nn.PReLU(3), (2, 3, 4)),
        (lambda: nn.RMSNorm((3, 4)), lambda: torch.nn.RMSNorm((3, 4)), (2, 3, 4)),
        (lambda: nn.InstanceNorm2d(3, affine=True), lambda: torch.nn.InstanceNorm2d(3, affine=True), (2, 3, 4, 5)),
        (lambda: nn.LocalResponseNorm(3), lambda: torch.nn.LocalResponseNorm(3), (2, 5, 4, 3)),
        (lambda: nn.PixelShuffle(2), lambda: torch.nn.PixelShuffle(2), (1, 8, 2, 3)),
        (lambda: nn.AdaptiveMaxPool3d((2, 1, 3)), lambda: torch.nn.AdaptiveMaxPool3d((2, 1, 3)), (1, 2, 5, 3, 7)),
        (
            lambda: nn.AvgPool3d(2, stride=1, padding=1, count_include_pad=False),
            lambda: torch.nn.AvgPool3d(2, 1, 1, count_include_pad=False),
            (1, 2, 3, 4, 3),
        ),
    ],
)
def test_layer_matches_torch_with_its_weights(float64_backend, ours, theirs, shape):
    torch.manual_seed(0)
    mine, ref = ours().double(), theirs().double()
    _load_from(mine, ref)
    compare_with_torch(mine, ref, [normal(*shape)])


def test_instance_norm_moves_the_running_statistics_as_torch(float64_backend):
    mine, ref = (
        nn.InstanceNorm1d(3, track_running_stats=True).double(),
        torch.nn.InstanceNorm1d(3, track_running_stats=True).double(),
    )
    x = np.random.default_rng(0).standard_normal((4, 3, 6))
    mine(ag.tensor(x)), ref(torch.tensor(x))
    assert_close(mine.running_mean, ref.running_mean)
    assert_close(mine.running_var, ref.running_var)
    mine.eval(), ref.eval()
    assert_close(mine(ag.tensor(x)), ref(torch.tensor(x)))


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_of_a_volume_matches_torch(float64_backend, padding_mode, align_corners):
    grid = Arg(lambda r: r.uniform(-1.4, 1.4, (2, 3, 2, 4, 3)))  # past the edges too
    settings = dict(padding_mode=padding_mode, align_corners=align_corners)
    compare_with_torch(
        lambda x, g: F.grid_sample(x, g, **settings),
        lambda x, g: TF.grid_sample(x, g, **settings),
        [normal(2, 2, 3, 4, 5), grid],
    )


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_with_offsets_matches_torch(float64_backend, mode):
    index, offsets = np.array([0, 2, 1, 4, 4, 3, 1]), np.array([0, 3, 3, 5])
    padding = None if mode == "max" else 4
    compare_with_torch(
        lambda w: F.embedding_bag(ag.tensor(index), w, ag.tensor(offsets), mode=mode, padding_idx=padding),
        lambda w: TF.embedding_bag(torch.tensor(index), w, torch.tensor(offsets), mode=mode, padding_idx=padding),
        [normal(5, 3)],
    )


def test_max_unpool_of_repeated_indices_gives_each_its_gradient(float64_backend):
    # overlapping windows of a max pooling give one maximum twice: one value, every copy's gradient
    index = np.array([[[0, 2, 2, 1]]])
    compare_with_torch(
        lambda x: F.max_unpool1d(x, ag.tensor(index), 1),
        lambda x: TF.max_unpool1d(x, torch.tensor(index), 1),
        [Arg(lambda r: np.array([[[0.5, -1.5, -1.5, 2.0]]]))],
    )


def test_conv_transpose_second_order_with_output_padding_past_the_stride(float64_backend):
    w = ag.tensor(np.random.default_rng(2).standard_normal((2, 1, 2, 2)))
    assert ag.gradgradcheck(
        lambda x: F.conv_transpose2d(x, w, stride=1, output_padding=1, dilation=2),
        (ag.tensor(np.random.default_rng(3).standard_normal((1, 2, 3, 3)), requires_grad=True),),
    )


def test_alpha_dropout_keeps_zero_mean_and_unit_variance(backend):
    ag.manual_seed(0)
    out = F.alpha_dropout(ag.randn(200_000), p=0.3, training=True).numpy()
    assert abs(out.mean()) < 0.02 and abs(out.var() - 1) < 0.02
    alpha, p = 1.7580993408473766, 0.3  # SELU's saturation value, negated; the drop probability
    dropped = alpha * (p - 1) / np.sqrt((alpha * alpha * p + 1) * (1 - p))
    assert np.isclose(out, dropped, atol=1e-5).mean() == pytest.approx(0.3, abs=0.01)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: F.prelu(ag.ones(2, 3), ag.ones(2)), "slopes"),
        (lambda: F.pixel_shuffle(ag.ones(1, 3, 2, 2), 2), "pixel_shuffle"),
        (lambda: F.multi_margin_loss(ag.ones(2, 3), ag.asarray([0, 1]), p=3), "p must be 1 or 2"),
        (lambda: F.gaussian_nll_loss(ag.ones(2, 3), ag.ones(2, 3), ag.ones(3, 2)), "does not fit"),
        (lambda: F.grid_sample(ag.ones(1, 1, 2, 2), ag.zeros(1, 1, 1, 2), mode="bicubic"), "mode"),
        (lambda: F.conv_transpose1d(ag.ones(1, 2, 3), ag.ones(2, 1, 2), stride=1, output_padding=1), "output_padding"),
    ],
)
def test_bad_arguments_say_what_is_wrong(backend, call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    "options",
    [
        {"padding_idx": 2},
        {"max_norm": 1.5},
        {"scale_grad_by_freq": True},
        {"padding_idx": -1, "max_norm": 1.0, "norm_type": 1.0, "scale_grad_by_freq": True},
    ],
)
def test_embedding_options_match_torch(backend, options) -> None:
    """padding_idx (no gradient), max_norm (rows renormalised in place before the lookup) and
    scale_grad_by_freq, through Embedding.from_pretrained, against torch."""
    rng = np.random.default_rng(0)
    table, index, cotangent = (
        2 * rng.standard_normal((6, 3)),
        np.array([[0, 2, 2], [5, 1, 2]]),
        rng.standard_normal((2, 3, 3)),
    )
    theirs = torch.nn.Embedding.from_pretrained(torch.tensor(table), freeze=False, **options)
    ours = nn.Embedding.from_pretrained(ag.tensor(table), freeze=False, **options)
    out, ref = ours(ag.asarray(index)), theirs(torch.tensor(index))
    assert_close(out, ref)
    (out * ag.tensor(cotangent)).sum().backward()
    (ref * torch.tensor(cotangent)).sum().backward()
    assert_close(ours.weight.grad, theirs.weight.grad)
    assert_close(ours.weight, theirs.weight)


def test_embedding_padding_row_starts_at_zero_and_from_pretrained_freezes(backend) -> None:
    assert host(nn.Embedding(5, 2, padding_idx=1).weight[1]).tolist() == [0.0, 0.0]
    assert not nn.Embedding.from_pretrained(ag.ones((3, 2))).weight.requires_grad
    with pytest.raises(AssertionError, match="Padding_idx"):
        nn.Embedding(3, 2, padding_idx=3)


@pytest.mark.parametrize(("dims", "shape", "size"), [(2, (1, 3, 5, 6), (10, 11)), (1, (2, 3, 7), (2, 2, 14))])
def test_conv_transpose_output_size_matches_torch(backend, dims, shape, size) -> None:
    torch.manual_seed(0)
    theirs = getattr(torch.nn, f"ConvTranspose{dims}d")(3, 2, 3, stride=2, padding=1).double()
    ours = getattr(nn, f"ConvTranspose{dims}d")(3, 2, 3, stride=2, padding=1).double()
    ours.load_state_dict({k: ag.tensor(host(v)) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal(shape)
    assert_close(ours(ag.tensor(x), output_size=size), theirs(torch.tensor(x), output_size=size))
    with pytest.raises(ValueError, match="valid sizes range"):
        ours(ag.tensor(x), output_size=(40,) * dims)
