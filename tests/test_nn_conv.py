"""Convolution, pooling and normalisation: values and gradients against PyTorch, gradients
against finite differences, each fast kernel against the portable default, module buffers,
and a small CNN's training trajectory against PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_torch_parity_nn import torch_twin

import autograd_core as ag
import backends
import nn
import nn.functional as F
import optim
from autograd_core import primitives as P
from helpers import assert_close, classification_step, host, kernel
from torch_oracle import Arg, compare_with_torch, const, normal

TF = torch.nn.functional
F64 = "float64"


def case(name, ours, theirs, *args):
    return pytest.param(ours, theirs, args, id=name)


def same(name, call, *args):
    """A case whose two sides are the same call on our `F` and torch's."""
    return case(name, lambda *a: call(F, *a), lambda *a: call(TF, *a), *args)


def distinct(*shape):
    """Values 0.1 apart in random order: every pooling window has one clear maximum."""
    n = int(np.prod(shape))
    return Arg(lambda r: r.permutation(n).reshape(shape) * 0.1)


FUNCTIONAL = [
    same("conv2d", lambda f, x, w, b: f.conv2d(x, w, b), normal(2, 3, 7, 6), normal(4, 3, 3, 3), normal(4)),
    same(
        "conv2d_stride_padding",
        lambda f, x, w: f.conv2d(x, w, stride=2, padding=1),
        normal(2, 3, 7, 6),
        normal(4, 3, 3, 3),
    ),
    same(
        "conv2d_tuple_args",
        lambda f, x, w: f.conv2d(x, w, stride=(2, 1), padding=(0, 2), dilation=(1, 2)),
        normal(2, 3, 8, 7),
        normal(4, 3, 3, 2),
    ),
    same(
        "conv2d_same_even_kernel",
        lambda f, x, w: f.conv2d(x, w, padding="same", dilation=2),
        normal(2, 3, 7, 6),
        normal(4, 3, 2, 4),
    ),
    same("conv2d_valid", lambda f, x, w: f.conv2d(x, w, padding="valid"), normal(1, 2, 5, 5), normal(3, 2, 5, 2)),
    same(
        "conv2d_groups",
        lambda f, x, w, b: f.conv2d(x, w, b, padding=1, groups=3),
        normal(2, 6, 5, 5),
        normal(9, 2, 3, 3),
        normal(9),
    ),
    same(
        "conv2d_depthwise", lambda f, x, w: f.conv2d(x, w, groups=4, stride=2), normal(2, 4, 6, 6), normal(4, 1, 3, 3)
    ),
    same("conv2d_unbatched", lambda f, x, w: f.conv2d(x, w, padding=1), normal(3, 5, 4), normal(2, 3, 3, 3)),
    same("conv2d_1x1", lambda f, x, w: f.conv2d(x, w), normal(2, 5, 3, 4), normal(6, 5, 1, 1)),
    same(
        "conv1d",
        lambda f, x, w, b: f.conv1d(x, w, b, stride=2, padding=2, dilation=2),
        normal(2, 3, 11),
        normal(4, 3, 3),
        normal(4),
    ),
    same(
        "conv1d_same_groups", lambda f, x, w: f.conv1d(x, w, padding="same", groups=2), normal(2, 4, 9), normal(6, 2, 4)
    ),
    same(
        "conv_transpose2d",
        lambda f, x, w, b: f.conv_transpose2d(x, w, b),
        normal(2, 3, 4, 5),
        normal(3, 2, 3, 3),
        normal(2),
    ),
    same(
        "conv_transpose2d_stride_output_padding",
        lambda f, x, w: f.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
        normal(2, 3, 4, 5),
        normal(3, 2, 3, 3),
    ),
    same(
        "conv_transpose2d_groups_dilation",
        lambda f, x, w: f.conv_transpose2d(x, w, stride=(2, 3), groups=2, dilation=2),
        normal(1, 4, 3, 3),
        normal(4, 3, 2, 2),
    ),
    same("unfold", lambda f, x: f.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), normal(2, 3, 6, 7)),
    same("max_pool2d", lambda f, x: f.max_pool2d(x, 2), distinct(2, 3, 6, 8)),
    same("max_pool2d_stride_padding_ceil", lambda f, x: f.max_pool2d(x, 3, 2, 1, ceil_mode=True), distinct(2, 3, 8, 7)),
    same("max_pool2d_dilation", lambda f, x: f.max_pool2d(x, (2, 3), (1, 2), dilation=(2, 1)), distinct(2, 2, 7, 8)),
    same("max_pool2d_unbatched", lambda f, x: f.max_pool2d(x, 2, padding=1), distinct(3, 5, 5)),
    same("max_pool2d_ties", lambda f, x: f.max_pool2d(x, 2, 1), Arg(lambda r: np.ones((1, 2, 4, 4)))),
    same("max_pool1d", lambda f, x: f.max_pool1d(x, 3, 2, 1), distinct(2, 3, 10)),
    same("avg_pool2d", lambda f, x: f.avg_pool2d(x, 2), normal(2, 3, 6, 8)),
    same("avg_pool2d_padding", lambda f, x: f.avg_pool2d(x, 3, 2, 1), normal(2, 3, 7, 6)),
    same(
        "avg_pool2d_no_pad_count_ceil",
        lambda f, x: f.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        normal(2, 3, 8, 7),
    ),
    same("avg_pool2d_ceil_with_pad_count", lambda f, x: f.avg_pool2d(x, 3, 2, 1, ceil_mode=True), normal(2, 3, 8, 7)),
    same("avg_pool2d_divisor_override", lambda f, x: f.avg_pool2d(x, 2, divisor_override=3), normal(2, 3, 6, 6)),
    same("avg_pool1d", lambda f, x: f.avg_pool1d(x, 4, 3, 2, count_include_pad=False), normal(2, 3, 11)),
    same(
        "batch_norm_training",
        lambda f, x, w, b: f.batch_norm(x, None, None, w, b, training=True),
        normal(4, 3, 5, 2),
        normal(3),
        normal(3),
    ),
    same("batch_norm_training_1d", lambda f, x: f.batch_norm(x, None, None, training=True, eps=0.1), normal(6, 4)),
    same(
        "batch_norm_eval",
        lambda f, x, m, v, w, b: f.batch_norm(x, m, v, w, b),
        normal(4, 3, 5),
        Arg(lambda r: r.standard_normal(3), grad=False),
        const([0.5, 1.0, 2.0]),
        normal(3),
        normal(3),
    ),
    same("group_norm", lambda f, x, w, b: f.group_norm(x, 2, w, b), normal(3, 4, 5, 2), normal(4), normal(4)),
    same("group_norm_one_group_3d", lambda f, x: f.group_norm(x, 1, eps=0.1), normal(3, 4, 5)),
]


@pytest.mark.parametrize(("ours", "theirs", "args"), FUNCTIONAL)
def test_functional_matches_torch(float64_backend, ours, theirs, args):
    compare_with_torch(ours, theirs, args)


def test_max_pool_indices_and_tied_gradient_match_torch(float64_backend):
    values = np.random.default_rng(0).integers(0, 3, (2, 3, 7, 6)).astype(float)  # many ties
    x, ref = ag.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    out, index = F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)
    ref_out, ref_index = TF.max_pool2d(ref, 3, 2, 1, ceil_mode=True, return_indices=True)
    np.testing.assert_array_equal(host(index), host(ref_index))
    assert index.dtype == ag.int64
    with_nan = values.copy()
    with_nan[0, 0, 2, 3] = with_nan[1, 2, 4, 1] = np.nan  # a NaN is its window's maximum, as in PyTorch
    nan_out, nan_index = F.max_pool2d(ag.tensor(with_nan), 3, 2, 1, ceil_mode=True, return_indices=True)
    ref_nan_out, ref_nan_index = TF.max_pool2d(torch.tensor(with_nan), 3, 2, 1, ceil_mode=True, return_indices=True)
    np.testing.assert_array_equal(host(nan_index), host(ref_nan_index))
    np.testing.assert_array_equal(host(nan_out), host(ref_nan_out))
    out.sum().backward()
    ref_out.sum().backward()
    assert_close(x.grad, ref.grad)  # each window's gradient goes to its first maximum only


def test_max_pool_never_picks_the_padding_of_a_window_of_minus_infinity(float64_backend):
    values = np.full((1, 2, 5, 4), -np.inf)
    values[0, 1, 2, 2] = 1.0
    x, ref = ag.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    out, index = F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)
    ref_out, ref_index = TF.max_pool2d(ref, 3, 2, 1, ceil_mode=True, return_indices=True)
    np.testing.assert_array_equal(host(index), host(ref_index))  # the window's first position inside the input
    out.backward(ag.ones_like(out))
    ref_out.backward(torch.ones_like(ref_out))
    assert_close(x.grad, ref.grad)


# --- gradients against finite differences, every backend (array-api-strict runs the portable kernels)
def leaf(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def spread(*shape, seed=0):
    """Values 0.25 apart: no ties within a pooling window, none within finite-difference reach."""
    return np.random.default_rng(seed).permutation(int(np.prod(shape))).reshape(shape) * 0.25


GRADCHECK = [
    pytest.param(
        lambda x, w: F.conv2d(x, w, stride=2, padding=1, groups=2),
        (leaf(2, 4, 5, 5), leaf(4, 2, 3, 3, seed=1)),
        id="conv2d",
    ),
    pytest.param(
        lambda x, w: F.conv_transpose2d(x, w, stride=2, output_padding=1),
        (leaf(1, 2, 3, 3), leaf(2, 3, 2, 2, seed=1)),
        id="conv_transpose2d",
    ),
    pytest.param(lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), (spread(1, 2, 6, 5),), id="max_pool2d"),
    pytest.param(
        lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        (leaf(1, 2, 6, 5),),
        id="avg_pool2d",
    ),
    pytest.param(
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        (leaf(3, 2, 4), leaf(2, seed=1), leaf(2, seed=2)),
        id="batch_norm",
    ),
    pytest.param(lambda x, w: F.group_norm(x, 2, w), (leaf(2, 4, 3), leaf(4, seed=1)), id="group_norm"),
    pytest.param(lambda x: F.unfold(x, 2, padding=1), (leaf(1, 2, 3, 3),), id="unfold"),
]


@pytest.mark.parametrize(("fn", "inputs"), GRADCHECK)
def test_gradcheck(float64_backend, fn, inputs):
    assert ag.gradcheck(fn, [ag.tensor(a, requires_grad=True) for a in inputs])


@pytest.mark.parametrize(("fn", "inputs"), [GRADCHECK[0], GRADCHECK[1], GRADCHECK[4]])
def test_second_order_gradients(float64_backend, fn, inputs):
    assert ag.gradgradcheck(fn, [ag.tensor(a, requires_grad=True) for a in inputs])


# --- each backend's kernels against the portable default (run on array-api-strict) ---------
GEOMETRY = P.ConvGeometry(stride=(2, 1), padding=((1, 2), (0, 1)), dilation=(1, 2), groups=2)
POOL = P.PoolGeometry(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 2), ceil_mode=True)


def kernel_calls(b, x, w, g):
    def run(primitive, *args):
        return kernel(b, primitive, *args)

    def windows():
        return run(P.im2col, run(P.pad2d, x, ((1, 0), (2, 1)), 0.5), (2, 3), (1, 2), (2, 1), (3, 2))

    def max_pool_backward():
        values, indices = run(P.max_pool2d, x, POOL)
        return run(P.max_pool2d_backward, values * 2.0, indices, (2, 4, 7, 6), POOL)

    channels = ([2.0, 0.5, 1.0, -1.0], [0.1, -0.2, 0.3, 0.0], [1.5, 0.5, 2.0, 1.0])
    weight, mean, var = (b.asarray(np.array(v)) for v in channels)
    return {
        "im2col": windows,
        "col2im": lambda: run(P.col2im, windows() * 2.0, (2, 4, 8, 9), (2, 3), (1, 2), (2, 1)),
        "conv2d": lambda: run(P.conv2d, x, w, GEOMETRY),
        "conv2d_grad_input": lambda: run(P.conv2d_grad_input, g, w, (2, 4, 7, 6), GEOMETRY),
        "conv2d_grad_weight": lambda: run(P.conv2d_grad_weight, g, x, (6, 2, 3, 2), GEOMETRY),
        "max_pool2d": lambda: run(P.max_pool2d, x, POOL),
        "max_pool2d_backward": max_pool_backward,
        "batch_norm": lambda: run(P.batch_norm, x, weight, None, 1e-3),
        **{
            f"batch_norm_backward_{part}{'_unscaled' if unscaled else ''}": (
                lambda part=part, unscaled=unscaled: run(
                    P.batch_norm_backward, x * 2.0, x, None if unscaled else weight, mean, var, 1e-3, part
                )
            )
            for part in ("input", "weight", "bias")
            for unscaled in (False, True)
        },
    }


@pytest.mark.parametrize(
    "name",
    [
        "im2col",
        "col2im",
        "conv2d",
        "conv2d_grad_input",
        "conv2d_grad_weight",
        "max_pool2d",
        "max_pool2d_backward",
        "batch_norm",
        "batch_norm_backward_input",
        "batch_norm_backward_input_unscaled",
        "batch_norm_backward_weight",
        "batch_norm_backward_bias",
    ],
)
def test_kernel_matches_portable_default(float64_backend, name):
    rng = np.random.default_rng(0)
    host_x, host_w = rng.standard_normal((2, 4, 7, 6)), rng.standard_normal((6, 2, 3, 2))
    reference = backends.get("array_api_strict")
    results = []
    for b in (float64_backend, reference):
        x, w = b.asarray(host_x), b.asarray(host_w)
        g = b.asarray(rng.standard_normal(tuple(kernel(b, P.conv2d, x, w, GEOMETRY).shape)))
        rng = np.random.default_rng(0)  # the same draws for both backends
        rng.standard_normal((2, 4, 7, 6)), rng.standard_normal((6, 2, 3, 2))
        out = kernel_calls(b, x, w, g)[name]()
        results.append([b.to_numpy(a) for a in (out if isinstance(out, tuple) else (out,))])
    for mine, default in zip(*results):
        assert mine.shape == default.shape
        assert_close(mine, default)


# --- modules ----------------------------------------------------------------------------------
MODULES = [
    pytest.param(
        lambda: nn.Conv2d(3, 4, 3, stride=2, padding=1, dtype=F64),
        lambda: torch.nn.Conv2d(3, 4, 3, stride=2, padding=1),
        (2, 3, 7, 6),
        id="conv2d",
    ),
    pytest.param(
        lambda: nn.Conv2d(4, 6, (2, 3), padding="same", groups=2, bias=False, dtype=F64),
        lambda: torch.nn.Conv2d(4, 6, (2, 3), padding="same", groups=2, bias=False),
        (2, 4, 5, 5),
        id="conv2d_same_groups",
    ),
    pytest.param(
        lambda: nn.Conv1d(3, 4, 3, dilation=2, dtype=F64),
        lambda: torch.nn.Conv1d(3, 4, 3, dilation=2),
        (2, 3, 9),
        id="conv1d",
    ),
    pytest.param(
        lambda: nn.ConvTranspose2d(3, 4, 3, stride=2, output_padding=1, dtype=F64),
        lambda: torch.nn.ConvTranspose2d(3, 4, 3, stride=2, output_padding=1),
        (2, 3, 4, 4),
        id="conv_transpose2d",
    ),
    pytest.param(
        lambda: nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode="reflect", dtype=F64),
        lambda: torch.nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode="reflect"),
        (2, 2, 5, 6),
        id="conv2d_reflect",
    ),
    pytest.param(
        lambda: nn.Conv2d(2, 3, (2, 3), padding="same", padding_mode="replicate", dtype=F64),
        lambda: torch.nn.Conv2d(2, 3, (2, 3), padding="same", padding_mode="replicate"),
        (2, 2, 5, 6),
        id="conv2d_same_replicate",
    ),
    pytest.param(
        lambda: nn.Conv1d(2, 3, 3, padding=2, padding_mode="circular", dtype=F64),
        lambda: torch.nn.Conv1d(2, 3, 3, padding=2, padding_mode="circular"),
        (2, 2, 7),
        id="conv1d_circular",
    ),
    pytest.param(lambda: nn.MaxPool2d(3, 2, 1), lambda: torch.nn.MaxPool2d(3, 2, 1), (2, 3, 7, 7), id="max_pool2d"),
    pytest.param(
        lambda: nn.AvgPool2d(2, ceil_mode=True),
        lambda: torch.nn.AvgPool2d(2, ceil_mode=True),
        (2, 3, 7, 7),
        id="avg_pool2d",
    ),
    pytest.param(lambda: nn.MaxPool1d(2), lambda: torch.nn.MaxPool1d(2), (2, 3, 7), id="max_pool1d"),
    pytest.param(lambda: nn.AvgPool1d(3, 2), lambda: torch.nn.AvgPool1d(3, 2), (2, 3, 7), id="avg_pool1d"),
    pytest.param(lambda: nn.GroupNorm(2, 4, dtype=F64), lambda: torch.nn.GroupNorm(2, 4), (3, 4, 5), id="group_norm"),
]


@pytest.mark.parametrize(("make_ours", "make_twin", "shape"), MODULES)
def test_module_matches_torch(float64_backend, make_ours, make_twin, shape):
    ours = make_ours()
    rng = np.random.default_rng(1)
    ours.load_state_dict({k: rng.standard_normal(v.shape) for k, v in ours.state_dict().items()})
    twin = torch_twin(ours, make_twin)
    assert repr(ours) == repr(twin)
    x = rng.standard_normal(shape)
    mine, ref = ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, ref_out = ours(mine), twin(ref)
    assert_close(out, ref_out)
    w = rng.standard_normal(out.shape)
    (out * ag.tensor(w)).sum().backward()
    (ref_out * torch.tensor(w)).sum().backward()
    assert_close(mine.grad, ref.grad)
    theirs = dict(twin.named_parameters())
    assert [name for name, _ in ours.named_parameters()] == list(theirs)
    for name, p in ours.named_parameters():
        assert_close(p.grad, theirs[name].grad)


@pytest.mark.parametrize("momentum", [0.1, None], ids=["momentum", "cumulative"])
@pytest.mark.parametrize(
    ("make_ours", "make_twin", "shape"),
    [
        pytest.param(
            lambda m: nn.BatchNorm2d(3, momentum=m, dtype=F64),
            lambda m: torch.nn.BatchNorm2d(3, momentum=m),
            (4, 3, 5, 2),
            id="2d",
        ),
        pytest.param(
            lambda m: nn.BatchNorm1d(3, momentum=m, dtype=F64),
            lambda m: torch.nn.BatchNorm1d(3, momentum=m),
            (6, 3),
            id="1d",
        ),
        pytest.param(
            lambda m: nn.BatchNorm1d(3, momentum=m, affine=False, dtype=F64),
            lambda m: torch.nn.BatchNorm1d(3, momentum=m, affine=False),
            (4, 3, 5),
            id="1d_3d_input_no_affine",
        ),
    ],
)
def test_batch_norm_running_statistics_match_torch(float64_backend, make_ours, make_twin, shape, momentum):
    ours, twin = make_ours(momentum), make_twin(momentum).double()
    assert list(ours.state_dict()) == list(twin.state_dict())
    rng = np.random.default_rng(0)
    for step in range(3):  # training: batch statistics out, running statistics updated
        x = rng.standard_normal(shape) * (step + 1) + step
        mine, ref = ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, ref_out = ours(mine), twin(ref)
        assert_close(out, ref_out)
        w = rng.standard_normal(shape)
        (out * ag.tensor(w)).sum().backward()
        (ref_out * torch.tensor(w)).sum().backward()
        assert_close(mine.grad, ref.grad)
        for name, value in twin.state_dict().items():
            assert_close(ours.state_dict()[name], value)
    ours.eval(), twin.eval()
    x = rng.standard_normal(shape)
    assert_close(ours(ag.tensor(x)), twin(torch.tensor(x)))
    assert int(ours.num_batches_tracked.item()) == 3


def test_module_initialisation_has_torch_shapes_and_bounds():
    for ours, theirs in (
        (nn.Conv2d(6, 8, (3, 5), groups=2), torch.nn.Conv2d(6, 8, (3, 5), groups=2)),
        (nn.Conv1d(4, 2, 3), torch.nn.Conv1d(4, 2, 3)),
        (nn.ConvTranspose2d(4, 6, 3, groups=2), torch.nn.ConvTranspose2d(4, 6, 3, groups=2)),
        (nn.BatchNorm2d(5), torch.nn.BatchNorm2d(5)),
        (nn.GroupNorm(2, 4), torch.nn.GroupNorm(2, 4)),
    ):
        theirs = theirs.state_dict()
        assert list(ours.state_dict()) == list(theirs)
        for name, value in ours.state_dict().items():
            ref = theirs[name].numpy()
            assert value.shape == ref.shape and value.dtype.name == str(ref.dtype).removeprefix("torch."), name
            if name in ("weight", "bias") and isinstance(ours, nn.conv_layers._ConvNd):
                # kaiming uniform (a=sqrt(5)) and the bias rule share one bound: 1/sqrt(fan_in)
                bound = 1 / np.sqrt(np.prod(ref.shape[1:]) if name == "weight" else np.prod(theirs["weight"].shape[1:]))
                assert np.abs(value.numpy()).max() <= bound + 1e-7
                assert name == "bias" or np.abs(value.numpy()).max() > 0.8 * bound  # many draws reach near it
            else:
                np.testing.assert_array_equal(value.numpy(), ref)


# --- buffers ------------------------------------------------------------------------------------
class WithBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(2, 2)
        self.register_buffer("scale", ag.ones(2))
        self.register_buffer("cache", ag.zeros(3), persistent=False)
        self.register_buffer("count", ag.zeros((), dtype=ag.int64))


def test_buffers_are_state_but_not_parameters():
    m = WithBuffers()
    assert list(m.state_dict()) == ["scale", "count", "linear.weight", "linear.bias"]
    assert [n for n, _ in m.named_buffers()] == ["scale", "cache", "count"]
    assert all(not any(b is p for p in m.parameters()) for b in m.buffers())
    m.scale = ag.full((2,), 3.0)  # assigning a tensor to a buffer's name replaces the buffer
    assert m.state_dict()["scale"].tolist() == [3.0, 3.0]
    m.load_state_dict({**m.state_dict(), "scale": np.array([5.0, 6.0])})
    assert m.scale.tolist() == [5.0, 6.0]
    m.double()
    assert m.scale.dtype == ag.float64 and m.count.dtype == ag.int64  # a dtype moves float buffers only
    with pytest.raises(RuntimeError, match="Missing key"):
        m.load_state_dict({k: v for k, v in m.state_dict().items() if k != "scale"})
    with pytest.raises(TypeError, match="tensor or None"):
        m.scale = 3.0
    with pytest.raises(KeyError, match="parameter or sub-module"):
        m.register_buffer("linear", ag.ones(1))


def test_batch_norm_state_moves_between_backends(float64_backend):
    with backends.use("numpy"):
        source = nn.Sequential(nn.Conv2d(2, 3, 3, dtype=F64), nn.BatchNorm2d(3, dtype=F64))
        x = np.random.default_rng(0).standard_normal((4, 2, 5, 5))
        source(ag.tensor(x))  # one training step moves the running statistics
        source.eval()
        expected = source(ag.tensor(x)).detach().numpy()
    target = nn.Sequential(nn.Conv2d(2, 3, 3, dtype=F64), nn.BatchNorm2d(3, dtype=F64)).eval()
    target.load_state_dict(source.state_dict())
    assert target[1].running_mean.backend is float64_backend
    assert_close(target(ag.tensor(x)), expected)
    moved = source.to(float64_backend.name)
    assert all(b.backend is float64_backend for b in moved.buffers())


# --- errors ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: F.conv2d(ag.ones(1, 3, 5, 5), ag.ones(2, 2, 3, 3)), "input has 3 channels"),
        (lambda: F.conv2d(ag.ones(1, 4, 5, 5), ag.ones(3, 2, 3, 3), groups=2), "groups=2 must divide"),
        (lambda: F.conv2d(ag.ones(1, 1, 2, 2), ag.ones(1, 1, 3, 3)), "larger than the padded input"),
        (lambda: F.conv2d(ag.ones(1, 1, 5, 5), ag.ones(1, 1, 3, 3), stride=2, padding="same"), "strided"),
        (lambda: F.conv2d(ag.ones(5, 5), ag.ones(1, 1, 3, 3)), "3-D .unbatched. or 4-D"),
        (lambda: F.conv2d(ag.ones(1, 1, 5, 5), ag.ones(1, 1, 3, 3), stride=(1, 2, 3)), "tuple of 2 ints"),
        (lambda: F.conv_transpose2d(ag.ones(1, 2, 3, 3), ag.ones(2, 1, 3, 3), output_padding=1), "output_padding"),
        (lambda: F.max_pool2d(ag.ones(1, 1, 5, 5), 2, padding=2), "at most half"),
        (lambda: F.avg_pool2d(ag.ones(1, 1, 1, 1), 3), "too small"),
        (lambda: F.batch_norm(ag.ones(1, 3), None, None, training=True), "more than 1 value per channel"),
        (lambda: F.batch_norm(ag.ones(2, 3), ag.zeros(4), ag.ones(4)), "running_mean has shape"),
        (lambda: nn.BatchNorm2d(3)(ag.ones(2, 3)), "expected a 4-D input"),
        (lambda: F.group_norm(ag.ones(2, 3, 4), 2), "must divide"),
        (lambda: nn.Conv2d(3, 4, 3, groups=2), "groups=2 must divide"),
        (lambda: nn.Conv2d(1, 1, 3, padding_mode="mirror"), "padding_mode"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_float32_input_with_float64_weights_is_refused():
    with pytest.raises(TypeError, match="float32 but the weights are float64"):
        F.conv2d(ag.ones(1, 1, 3, 3), ag.ones(1, 1, 2, 2, dtype=ag.float64))


# --- a small CNN trained 20 steps against PyTorch ----------------------------------------------
# The convolution before batch norm has no bias: batch norm cancels it, so its gradient is
# rounding noise that Adam's normalisation would blow up into lr-sized, library-dependent steps.
def small_cnn(dtype: str = F64) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1, bias=False, dtype=dtype),
        nn.BatchNorm2d(4, dtype=dtype),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(4, 4, 3, dtype=dtype),
        nn.AvgPool2d(2, ceil_mode=True),
        nn.Flatten(),
        nn.Linear(4, 3, dtype=dtype),
    )


def torch_small_cnn() -> torch.nn.Module:
    t = torch.nn
    return t.Sequential(
        t.Conv2d(2, 4, 3, padding=1, bias=False),
        t.BatchNorm2d(4),
        t.ReLU(),
        t.MaxPool2d(2),
        t.Conv2d(4, 4, 3),
        t.AvgPool2d(2, ceil_mode=True),
        t.Flatten(),
        t.Linear(4, 3),
    )


def test_cnn_adamw_trajectory_matches_torch(float64_backend):
    model = small_cnn()
    twin = torch_twin(model, torch_small_cnn)
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((8, 2, 6, 6)), rng.integers(0, 3, 8)
    opt = optim.AdamW(model.parameters(), lr=0.01)
    ref_opt = torch.optim.AdamW(twin.parameters(), lr=0.01)
    losses, expected = [], []
    for _ in range(20):
        for m, o, loss_fn, t, out in (
            (model, opt, F.cross_entropy, ag.tensor, losses),
            (twin, ref_opt, TF.cross_entropy, torch.tensor, expected),
        ):
            o.zero_grad()
            loss = loss_fn(m(t(x)), t(y))
            loss.backward()
            o.step()
            out.append(float(loss.detach()))
    assert expected[-1] < expected[0]
    np.testing.assert_allclose(losses, expected, rtol=1e-9, atol=0)
    for name, value in twin.state_dict().items():
        assert_close(model.state_dict()[name], value, rtol=1e-8, atol=1e-12)


def test_compiled_cnn_step_updates_running_statistics(float64_backend):
    if not float64_backend.can_compile:
        pytest.skip(f"{float64_backend.name} has no tracing compiler")
    rng = np.random.default_rng(0)
    x, y = ag.tensor(rng.standard_normal((6, 2, 6, 6))), ag.tensor(rng.integers(0, 3, 6))
    runs = []
    for compiled in (False, True):
        backends.contract.backend.manual_seed(0)
        model = small_cnn()
        opt = optim.SGD(model.parameters(), lr=0.1)

        step = classification_step(model, opt)

        run = ag.compile(step, modules=[model], optimizers=[opt]) if compiled else step
        losses = [float(run(x, y)) for _ in range(4)]
        runs.append((losses, model[1].running_var.numpy(), int(model[1].num_batches_tracked.item())))
    (eager, eager_var, eager_count), (fast, fast_var, fast_count) = runs
    assert_close(fast, eager)
    assert_close(fast_var, eager_var)
    assert eager_count == fast_count == 4
