"""nn.spatial (pad, interpolate, adaptive average pooling, channel dropout) and the layers over
it: values and gradients against PyTorch in float64, gradients against finite differences
(first and second order), PyTorch's nearest-neighbour indices and interpolation weights
exactly, dropout's channel masks, and the errors.
"""

from __future__ import annotations

import doctest

import numpy as np
import pytest
import torch

import autograd_core as ag
import backends
import nn
import nn.spatial as S
from helpers import assert_close, host
from torch_oracle import compare_with_torch, normal

TF = torch.nn.functional


def table(cases):
    """pytest params from (id, *values) tuples."""
    return [pytest.param(*values, id=name) for name, *values in cases]


def same_call(name):
    """Our function and PyTorch's of the same name, called with the same keywords."""
    ours, theirs = getattr(S, name), getattr(TF, name)
    return lambda **kw: (lambda x: ours(x, **kw), lambda x: theirs(x, **kw))


pad, interpolate = same_call("pad"), same_call("interpolate")
pool2d, pool1d = same_call("adaptive_avg_pool2d"), same_call("adaptive_avg_pool1d")

# --- every function against PyTorch: (id, ours and theirs, input shape) -------------------------
PAD = [
    ("constant-last_axis", pad(pad=(1, 2)), (2, 3, 5, 6)),
    ("constant-value-crop", pad(pad=(1, -2, 0, 3), value=1.5), (2, 3, 5, 6)),
    ("constant-crop_both_axes", pad(pad=(-1, -1, -2, -1)), (2, 3, 4, 5)),
    ("constant-every_axis", pad(pad=(1, 1, 2, 0, 0, 1, 1, 2)), (2, 3, 4, 5)),
    ("constant-2d_input", pad(pad=(2, 0), value=-2.0), (3, 5)),
    ("reflect-1_axis", pad(pad=(2, 4), mode="reflect"), (2, 3, 5)),
    ("reflect-2_axes", pad(pad=(1, 2, 4, 0), mode="reflect"), (2, 3, 5, 6)),
    ("reflect-negative", pad(pad=(-1, 2, 3, -2), mode="reflect"), (2, 3, 5, 6)),
    ("reflect-3_axes", pad(pad=(1, 1, 2, 0, 2, 2), mode="reflect"), (1, 2, 3, 4, 5)),
    ("reflect-unbatched_widest", pad(pad=(5, 0), mode="reflect"), (3, 6)),
    ("replicate-wider_than_axis", pad(pad=(3, 6), mode="replicate"), (2, 3, 5)),
    ("replicate-negative", pad(pad=(2, -1, 5, 1), mode="replicate"), (2, 3, 4, 5)),
    ("replicate-3_axes", pad(pad=(1, 2, 0, 3, 2, 2), mode="replicate"), (2, 4, 3, 3, 2)),
    ("circular-negative", pad(pad=(2, -1), mode="circular"), (2, 3, 5)),
    ("circular-wrap_once", pad(pad=(5, 0, 1, 3), mode="circular"), (2, 3, 4, 5)),
    ("circular-3_axes", pad(pad=(1, 2, 3, 0, 1, 1), mode="circular"), (1, 2, 3, 4, 5)),
]

INTERPOLATE = [
    ("nearest-1d-up", interpolate(size=7), (2, 3, 5)),
    ("nearest-1d-down", interpolate(size=3), (2, 3, 5)),
    ("nearest-1d-scale_1.7", interpolate(scale_factor=1.7), (2, 3, 5)),
    ("nearest-1d-scale_0.6", interpolate(scale_factor=0.6), (2, 3, 5)),
    ("nearest-1d-recompute", interpolate(scale_factor=2.5, recompute_scale_factor=True), (2, 3, 5)),
    ("nearest-2d-size", interpolate(size=(8, 3)), (2, 2, 5, 7)),
    ("nearest-2d-scale", interpolate(scale_factor=(1.5, 2.3)), (2, 2, 5, 7)),
    ("nearest-2d-half", interpolate(scale_factor=0.5), (2, 2, 5, 7)),
    ("nearest-2d-integer_scale", interpolate(scale_factor=3), (2, 2, 5, 7)),
    ("nearest-2d-scale_1.1_same_size", interpolate(scale_factor=1.1), (1, 2, 4, 4)),
    ("nearest-2d-large_output", interpolate(size=(70, 61)), (1, 2, 5, 7)),
    ("nearest-3d", interpolate(scale_factor=(1.5, 0.7, 2.0)), (1, 2, 3, 4, 5)),
    ("nearest_exact-1d", interpolate(scale_factor=1.7, mode="nearest-exact"), (2, 3, 5)),
    ("nearest_exact-2d", interpolate(size=(3, 11), mode="nearest-exact"), (2, 2, 5, 7)),
    *[
        (f"linear-{name}-align_{a}", interpolate(mode="linear", align_corners=a, **kw), (2, 3, 5))
        for a in (False, True)
        for name, kw in (
            ("up", dict(size=9)),
            ("down", dict(scale_factor=0.6)),
            ("to_1", dict(size=1)),
            ("recompute", dict(scale_factor=2.3, recompute_scale_factor=True)),
        )
    ],
    *[
        (f"bilinear-{name}-align_{a}", interpolate(mode="bilinear", align_corners=a, **kw), (2, 3, 5, 7))
        for a in (False, True)
        for name, kw in (
            ("size", dict(size=(8, 4))),
            ("scale", dict(scale_factor=(1.5, 0.7))),
            ("to_1x1", dict(size=(1, 1))),
            ("large", dict(size=(60, 70))),
        )
    ],
    ("bilinear-default_align", interpolate(mode="bilinear", scale_factor=2), (2, 3, 5, 7)),
    ("bilinear-scale_1.1_same_size", interpolate(mode="bilinear", scale_factor=1.1), (2, 3, 5, 7)),
    ("trilinear", interpolate(mode="trilinear", scale_factor=(1.5, 0.7, 2.0)), (1, 2, 3, 4, 5)),
    ("trilinear-align", interpolate(mode="trilinear", size=(2, 5, 3), align_corners=True), (1, 2, 3, 4, 5)),
    ("area-2d", interpolate(mode="area", size=(3, 4)), (2, 3, 5, 7)),
    ("area-1d", interpolate(mode="area", size=3), (2, 3, 7)),
    ("area-scale", interpolate(mode="area", scale_factor=0.5), (2, 3, 5, 7)),
]

POOL = [
    ("2d-none_keeps_axis", pool2d(output_size=(3, None)), (2, 3, 7, 5)),
    ("2d-int", pool2d(output_size=4), (2, 3, 7, 5)),
    ("2d-larger_than_input", pool2d(output_size=(9, 4)), (2, 3, 7, 5)),
    ("2d-unbatched", pool2d(output_size=(2, 3)), (3, 7, 5)),
    ("2d-global", pool2d(output_size=1), (1, 2, 10, 10)),
    ("1d", pool1d(output_size=3), (2, 3, 7)),
    ("1d-unbatched", pool1d(output_size=5), (3, 7)),
    ("1d-larger_than_input", pool1d(output_size=6), (2, 3, 4)),
]

DROPOUT_EVAL = [
    (
        "dropout2d-eval",
        (lambda x: S.dropout2d(x, 0.3, training=False), lambda x: TF.dropout2d(x, 0.3, training=False)),
        (2, 3, 4, 5),
    ),
    (
        "dropout1d-eval",
        (lambda x: S.dropout1d(x, 0.3, training=False), lambda x: TF.dropout1d(x, 0.3, training=False)),
        (2, 3, 4),
    ),
]


@pytest.mark.parametrize(("fns", "shape"), table(PAD + INTERPOLATE + POOL + DROPOUT_EVAL))
def test_matches_torch(float64_backend, fns, shape):
    compare_with_torch(*fns, [normal(*shape)])


def test_nearest_gradient_is_the_adjoint_of_torchs_forward(float64_backend):
    """PyTorch 2.13's CPU forward resamples 4 pixels by scale_factor=1.1 from [0, 0, 1, 2], but
    its backward routes the gradient as from [0, 1, 2, 3] (its backward kernel takes the
    out == in shortcut its forward does not). Ours match the forward, and the gradient is that
    forward's adjoint."""
    values = np.random.default_rng(0).standard_normal((2, 3, 4))
    x = ag.tensor(values, requires_grad=True)
    out = S.interpolate(x, scale_factor=1.1)
    assert_close(out, TF.interpolate(torch.tensor(values), scale_factor=1.1))
    g = np.random.default_rng(1).standard_normal(out.shape)
    (out * ag.tensor(g)).sum().backward()
    adjoint = np.stack([g[..., 0] + g[..., 1], g[..., 2], g[..., 3], 0 * g[..., 0]], axis=-1)
    assert_close(x.grad, adjoint)


# --- PyTorch's index and weight rules, exactly ---------------------------------------------------
def spatial(values: np.ndarray, dims: int) -> np.ndarray:
    """A 1-D profile laid along the last of `dims` spatial axes of an (N, C, ...) input."""
    return values.reshape(values.shape[:-1] + (1,) * (dims - 1) + values.shape[-1:])


def resample_cases():
    """(n_in, size, scale_factor, recompute) over odd sizes, non-integer factors, both ways."""
    for n_in in (1, 2, 3, 4, 7, 13, 14, 26, 31, 61):
        for size in (1, 3, 5, 22, 41, 46, 100):
            yield n_in, size, None, None
        for factor in (0.3, 0.7, 1 / 3, 1.1, 1.5, 1.7, 2.0, 2.3, 3.7, 4.9):
            for recompute in (None, True):
                if int(n_in * factor) > 0:
                    yield n_in, None, factor, recompute


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_nearest_indices_are_torchs(mode, dims, dtype):
    """Resampling the positions 0..n-1 shows the source index of every output pixel; PyTorch
    computes them in the input's precision (float32 in its small-2-D kernel) with float32
    floors, so a rule in exact arithmetic would differ where dst * scale lands on an integer.
    Host rules: run once, on numpy."""
    with backends.use("numpy"):
        for n_in, size, factor, recompute in resample_cases():
            positions = spatial(np.arange(n_in, dtype=dtype)[None, None], dims)
            kw = dict(
                size=None if size is None else (1,) * (dims - 1) + (size,),
                mode=mode,
                scale_factor=None if factor is None else (1.0,) * (dims - 1) + (factor,),
                recompute_scale_factor=recompute,
            )
            expected = TF.interpolate(torch.tensor(positions), **kw)
            np.testing.assert_array_equal(
                host(S.interpolate(ag.tensor(positions), **kw)), host(expected), err_msg=f"n_in={n_in} {kw}"
            )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("dims", [1, 2])
def test_linear_weights_are_torchs(dims, dtype):
    """Resampling the identity shows every interpolation weight: float32 weights equal
    PyTorch's bit for bit; float64 ones to an FMA's last bit. Host rules: once, on numpy."""
    mode = ("linear", "bilinear")[dims - 1]
    with backends.use("numpy"):
        for n_in, size, factor, recompute in resample_cases():
            for align_corners in (False, True):
                identity = spatial(np.eye(n_in, dtype=dtype)[None], dims)
                kw = dict(
                    size=None if size is None else (1,) * (dims - 1) + (size,),
                    mode=mode,
                    scale_factor=None if factor is None else (1.0,) * (dims - 1) + (factor,),
                    recompute_scale_factor=recompute,
                    align_corners=align_corners,
                )
                expected = TF.interpolate(torch.tensor(identity), **kw)
                tolerance = dict(rtol=0, atol=0) if dtype == "float32" else dict(rtol=0, atol=1e-14)
                np.testing.assert_allclose(
                    host(S.interpolate(ag.tensor(identity), **kw)),
                    host(expected),
                    err_msg=f"n_in={n_in} {kw}",
                    **tolerance,
                )


# --- gradients against finite differences, on every backend ---------------------------------------
def leaf(shape, seed=0):
    return ag.tensor(np.random.default_rng(seed).standard_normal(shape), dtype="float64", requires_grad=True)


def seeded_dropout2d(x):
    ag.manual_seed(3)  # the same channel mask at every evaluation
    return S.dropout2d(x, 0.5)


GRADCHECK = [
    ("pad-constant", lambda x: S.pad(x, (1, -1, 2, 0), value=2.0), (1, 2, 3, 4)),
    ("pad-reflect", lambda x: S.pad(x, (2, 1, -1, 2), mode="reflect"), (1, 2, 3, 4)),
    ("pad-replicate", lambda x: S.pad(x, (2, 3, 1, 0), mode="replicate"), (1, 1, 3, 4)),
    ("pad-circular", lambda x: S.pad(x, (1, 2, -1, 1), mode="circular"), (1, 1, 3, 4)),
    ("nearest-2d", lambda x: S.interpolate(x, scale_factor=1.7), (1, 1, 3, 4)),
    ("nearest_exact-1d-down", lambda x: S.interpolate(x, size=3, mode="nearest-exact"), (1, 2, 5)),
    ("linear", lambda x: S.interpolate(x, size=7, mode="linear"), (1, 2, 5)),
    ("bilinear", lambda x: S.interpolate(x, size=(5, 3), mode="bilinear"), (1, 1, 3, 4)),
    ("bilinear-align", lambda x: S.interpolate(x, size=(5, 3), mode="bilinear", align_corners=True), (1, 1, 3, 4)),
    ("trilinear", lambda x: S.interpolate(x, scale_factor=1.5, mode="trilinear"), (1, 1, 2, 3, 2)),
    ("area", lambda x: S.interpolate(x, size=(2, 3), mode="area"), (1, 1, 5, 4)),
    ("adaptive_avg_pool2d", lambda x: S.adaptive_avg_pool2d(x, (3, 2)), (1, 2, 5, 4)),
    ("adaptive_avg_pool1d", lambda x: S.adaptive_avg_pool1d(x, 3), (2, 5)),
    ("dropout2d", seeded_dropout2d, (2, 3, 2, 2)),
]


@pytest.mark.parametrize(("fn", "shape"), table(GRADCHECK))
def test_gradcheck(float64_backend, fn, shape):
    assert ag.gradcheck(fn, [leaf(shape)]) is True


GRADGRADCHECK = [
    ("pad-constant", lambda x: S.pad(x, (1, -1, 0, 1), value=0.5), (1, 1, 2, 3)),
    ("pad-reflect", lambda x: S.pad(x, (2, 1, 1, 0), mode="reflect"), (1, 1, 2, 3)),
    ("bilinear", lambda x: S.interpolate(x, size=(3, 4), mode="bilinear"), (1, 1, 2, 3)),
    ("nearest", lambda x: S.interpolate(x, scale_factor=1.5), (1, 1, 2, 3)),
]


@pytest.mark.parametrize(("fn", "shape"), table(GRADGRADCHECK))
def test_gradgradcheck(float64_backend, fn, shape):
    """The composed gradients are differentiable again (create_graph=True)."""
    assert ag.gradgradcheck(lambda x: fn(x) * fn(x), [leaf(shape)]) is True


@pytest.mark.parametrize(("fn", "shape"), table(GRADCHECK[:-1]))
def test_float32_stays_float32(backend, fn, shape):
    x = ag.tensor(np.random.default_rng(0).standard_normal(shape), dtype="float32", requires_grad=True)
    out = fn(x)
    out.sum().backward()
    assert out.dtype == ag.float32 and x.grad.dtype == ag.float32
    assert backend.dtype_name(out.array.dtype) == "float32"


# --- modules against PyTorch's ---------------------------------------------------------------------
MODULES = [
    ("identity", lambda: nn.Identity(54, unused=1), lambda: torch.nn.Identity(54, unused=1), (2, 3)),
    ("unflatten", lambda: nn.Unflatten(1, (2, 3)), lambda: torch.nn.Unflatten(1, (2, 3)), (4, 6, 5)),
    ("unflatten-last_minus_1", lambda: nn.Unflatten(-1, (2, -1)), lambda: torch.nn.Unflatten(-1, (2, -1)), (3, 8)),
    ("dropout2d-eval", lambda: nn.Dropout2d(0.3).eval(), lambda: torch.nn.Dropout2d(0.3).eval(), (2, 3, 4, 4)),
    ("dropout1d-eval", lambda: nn.Dropout1d(0.3).eval(), lambda: torch.nn.Dropout1d(0.3).eval(), (2, 3, 4)),
    (
        "adaptive_avg_pool2d",
        lambda: nn.AdaptiveAvgPool2d((3, None)),
        lambda: torch.nn.AdaptiveAvgPool2d((3, None)),
        (2, 3, 7, 5),
    ),
    ("adaptive_avg_pool2d-int", lambda: nn.AdaptiveAvgPool2d(2), lambda: torch.nn.AdaptiveAvgPool2d(2), (2, 3, 7, 5)),
    ("adaptive_avg_pool1d", lambda: nn.AdaptiveAvgPool1d(3), lambda: torch.nn.AdaptiveAvgPool1d(3), (2, 3, 7)),
    ("upsample-nearest", lambda: nn.Upsample(scale_factor=2), lambda: torch.nn.Upsample(scale_factor=2), (2, 3, 4, 5)),
    (
        "upsample-bilinear_size",
        lambda: nn.Upsample(size=(7, 5), mode="bilinear", align_corners=True),
        lambda: torch.nn.Upsample(size=(7, 5), mode="bilinear", align_corners=True),
        (2, 3, 4, 3),
    ),
    (
        "upsample-bilinear_scales",
        lambda: nn.Upsample(scale_factor=(1.5, 0.5), mode="bilinear"),
        lambda: torch.nn.Upsample(scale_factor=(1.5, 0.5), mode="bilinear"),
        (2, 3, 4, 6),
    ),
    ("zero_pad2d-int", lambda: nn.ZeroPad2d(2), lambda: torch.nn.ZeroPad2d(2), (2, 3, 4, 5)),
    ("zero_pad2d-crop", lambda: nn.ZeroPad2d((1, 0, 2, -1)), lambda: torch.nn.ZeroPad2d((1, 0, 2, -1)), (2, 3, 4, 5)),
    (
        "reflection_pad2d",
        lambda: nn.ReflectionPad2d((1, 2, 2, 0)),
        lambda: torch.nn.ReflectionPad2d((1, 2, 2, 0)),
        (2, 3, 4, 5),
    ),
    ("replication_pad2d", lambda: nn.ReplicationPad2d(3), lambda: torch.nn.ReplicationPad2d(3), (3, 4, 5)),
    (
        "constant_pad2d",
        lambda: nn.ConstantPad2d((1, 1, 0, 2), 3.5),
        lambda: torch.nn.ConstantPad2d((1, 1, 0, 2), 3.5),
        (2, 3, 4, 5),
    ),
    (
        "sequential",
        lambda: nn.Sequential(
            nn.ReflectionPad2d(1),
            nn.Upsample(scale_factor=2, mode="bilinear"),
            nn.AdaptiveAvgPool2d((3, 2)),
            nn.Flatten(),
            nn.Unflatten(1, (3, 6)),
        ),
        lambda: torch.nn.Sequential(
            torch.nn.ReflectionPad2d(1),
            torch.nn.Upsample(scale_factor=2, mode="bilinear"),
            torch.nn.AdaptiveAvgPool2d((3, 2)),
            torch.nn.Flatten(),
            torch.nn.Unflatten(1, (3, 6)),
        ),
        (2, 3, 4, 5),
    ),
]


@pytest.mark.parametrize(("make_ours", "make_theirs", "shape"), table(MODULES))
def test_module_matches_torch(float64_backend, make_ours, make_theirs, shape):
    ours, theirs = make_ours(), make_theirs()
    compare_with_torch(ours, theirs, [normal(*shape)])
    assert list(ours.parameters()) == []
    if not isinstance(ours, nn.Dropout):  # PyTorch's dropouts also show an `inplace`, which ours lack
        assert repr(ours) == repr(theirs)


# --- channel dropout -------------------------------------------------------------------------------
def channels_of(values: np.ndarray, channel_axes: int) -> np.ndarray:
    return values.reshape(values.shape[:channel_axes] + (-1,))


@pytest.mark.parametrize(
    ("fn", "shape", "channel_axes"),
    table(
        [
            ("dropout2d", S.dropout2d, (6, 8, 3, 4), 2),
            ("dropout1d", S.dropout1d, (6, 8, 5), 2),
            ("dropout1d-unbatched", S.dropout1d, (48, 5), 1),
            ("module_dropout2d", nn.Dropout2d(0.4), (6, 8, 3, 4), 2),
        ]
    ),
)
def test_dropout_zeroes_whole_channels(backend, fn, shape, channel_axes):
    """Each channel is all zeros or all scaled by 1/(1-p); both happen; the gradient is the mask."""
    p = 0.4
    values = np.random.default_rng(0).uniform(0.5, 2.0, shape)  # no zeros of its own
    x = ag.tensor(values, dtype="float32", requires_grad=True)
    y = fn(x, p) if not isinstance(fn, nn.Module) else fn(x)
    scaled = channels_of(host(y) / values, channel_axes)
    kept = np.all(np.isclose(scaled, 1 / (1 - p), rtol=1e-6), axis=-1)
    dropped = np.all(scaled == 0, axis=-1)
    assert np.all(kept | dropped)
    assert kept.any() and dropped.any()
    y.sum().backward()
    assert_close(host(x.grad), host(y) / values, "float32")


def test_dropout2d_takes_3d_input_as_n_c_l(backend):
    """As PyTorch 2.13: a 3-D input is (N, C, L), each of its channels dropped whole, with a warning."""
    x = ag.ones((6, 8, 5))
    with pytest.warns(UserWarning, match="3-D input"):
        y = host(S.dropout2d(x, 0.5))
    assert np.all(y == y[:, :, :1])
    assert 0 < np.count_nonzero(y[:, :, 0]) < 48
    with pytest.warns(UserWarning, match="5-D input"):
        y = host(S.dropout2d(ag.ones((6, 8, 2, 2, 2)), 0.5))
    assert np.all(channels_of(y, 2) == channels_of(y, 2)[..., :1])


@pytest.mark.parametrize("fn", [S.dropout1d, S.dropout2d])
def test_dropout_edge_cases(backend, fn):
    x = ag.tensor(np.ones((2, 3, 4, 4)[: 4 if fn is S.dropout2d else 3]), dtype="float32", requires_grad=True)
    assert fn(x, 0.0) is x
    assert fn(x, 0.7, training=False) is x
    y = fn(x, 1.0)
    y.sum().backward()
    assert np.all(host(y) == 0) and np.all(host(x.grad) == 0)
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match=r"probability must be in \[0, 1\]"):
            fn(x, p, training=False)


def test_dropout_modules_follow_training_mode(backend):
    x = ag.ones((4, 8, 3, 3))
    layer = nn.Dropout2d(0.5)
    assert 0 < np.count_nonzero(host(layer(x))) < x.size
    assert layer.eval()(x) is x


# --- errors -------------------------------------------------------------------------------------------
ERRORS = [
    ("pad-odd_length", lambda x: S.pad(x, (1,)), ValueError, "odd length 1"),
    ("pad-too_many_axes", lambda x: S.pad(x, (1,) * 10), ValueError, "pad 5 axes, but the input has 4"),
    ("pad-reflect_too_wide", lambda x: S.pad(x, (5, 0), mode="reflect"), ValueError, "smaller than the size 5"),
    ("pad-circular_twice", lambda x: S.pad(x, (1, 6), mode="circular"), ValueError, "more than once"),
    ("pad-negative_size", lambda x: S.pad(x, (-3, -3)), ValueError, "with size -1"),
    (
        "pad-unknown_mode",
        lambda x: S.pad(x, (1, 1), mode="symmetric"),
        ValueError,
        "supported: constant, reflect, replicate, circular",
    ),
    ("pad-value_with_reflect", lambda x: S.pad(x, (1, 1), mode="reflect", value=1.0), ValueError, "takes no value"),
    ("pad-empty_replicate", lambda x: S.pad(x[..., :0], (1, 1), mode="replicate"), ValueError, "size 0"),
    ("interpolate-size_and_scale", lambda x: S.interpolate(x, size=3, scale_factor=2), ValueError, "exactly one"),
    ("interpolate-neither", lambda x: S.interpolate(x), ValueError, "exactly one"),
    (
        "interpolate-unknown_mode",
        lambda x: S.interpolate(x, size=3, mode="lanczos"),
        ValueError,
        "supported: nearest, nearest-exact, linear",
    ),
    (
        "interpolate-antialias",
        lambda x: S.interpolate(x, size=3, mode="bilinear", antialias=True),
        NotImplementedError,
        "antialias=True is not supported",
    ),
    (
        "interpolate-align_corners_nearest",
        lambda x: S.interpolate(x, size=3, align_corners=True),
        ValueError,
        "align_corners applies",
    ),
    ("interpolate-linear_on_4d", lambda x: S.interpolate(x, size=3, mode="linear"), ValueError, "use mode='bilinear'"),
    ("interpolate-float_size", lambda x: S.interpolate(x, size=2.5), TypeError, "size must be an int"),
    ("interpolate-size_length", lambda x: S.interpolate(x, size=(3, 3, 3)), ValueError, "3 entries for 2 spatial"),
    ("interpolate-empty_output", lambda x: S.interpolate(x, scale_factor=0.1), ValueError, "must be positive"),
    (
        "interpolate-recompute_with_size",
        lambda x: S.interpolate(x, size=3, recompute_scale_factor=True),
        ValueError,
        "not meaningful",
    ),
    ("interpolate-2d_input", lambda x: S.interpolate(x[0, 0], size=3), ValueError, r"expected an input \(N, C, L\)"),
    (
        "interpolate-integer_bilinear",
        lambda x: S.interpolate(ag.astype(x, ag.int64), size=3, mode="bilinear"),
        TypeError,
        "floating-point",
    ),
    ("pool-2d_input", lambda x: S.adaptive_avg_pool2d(x[0, 0], 2), ValueError, "expected a 3-D or 4-D"),
    ("pool-negative_size", lambda x: S.adaptive_avg_pool2d(x, (2, -1)), ValueError, "non-negative"),
    ("pool-size_length", lambda x: S.adaptive_avg_pool2d(x, (2, 2, 2)), ValueError, "3 entries for 2"),
    ("dropout1d-4d", lambda x: S.dropout1d(x), ValueError, r"2-D \(C, L\) or 3-D"),
    ("dropout2d-1d", lambda x: S.dropout2d(x[0, 0, 0]), ValueError, "4-D"),
    ("unflatten-not_a_tuple", lambda x: nn.Unflatten(1, 6), TypeError, "tuple of ints"),
    ("unflatten-dim", lambda x: nn.Unflatten(4, (2, 2))(x), IndexError, "out of range"),
    ("pad2d-length", lambda x: nn.ZeroPad2d((1, 2)), ValueError, r"\(left, right, top, bottom\)"),
]


@pytest.mark.parametrize(("call", "error", "message"), table(ERRORS))
def test_errors(backend, call, error, message):
    with pytest.raises(error, match=message):
        call(ag.zeros((2, 3, 4, 5)))


def test_docstring_examples():
    with backends.use("numpy"):
        assert doctest.testmod(S).failed == 0
