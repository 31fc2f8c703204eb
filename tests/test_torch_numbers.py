"""Silent wrong numbers and unhelpful errors, PyTorch as the oracle: reductions called with
PyTorch's positional and keyword forms, losses with mismatched shapes or every target ignored,
indexing with keys that are not indices, and the numbers of pinv's gradient, polygamma and
take, compared in float64 on every backend (values and gradients); where PyTorch refuses, we
refuse with an error that names what to pass. A damaged checkpoint gives one clear error."""

from __future__ import annotations

import re
import warnings
import zipfile

import numpy as np
import pytest
import scipy.special
import torch
import torch.nn.functional as TF
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import autograd_core as ag
import nn
import nn.functional as F
from helpers import assert_close, host

RNG = np.random.default_rng(45)
CUBE = RNG.standard_normal((3, 4, 5))


def examples(count: int) -> settings:
    """Hypothesis settings for a test that takes the (function-scoped) backend fixture."""
    return settings(max_examples=count, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def both(values: np.ndarray) -> tuple[ag.Tensor, torch.Tensor]:
    return ag.tensor(values, dtype="float64", requires_grad=True), torch.tensor(values, requires_grad=True)


def first(out):
    """A reduction's tensor: itself, or the values of a ``(values, indices)`` pair."""
    return out[0] if isinstance(out, tuple) else out


def assert_matches(call, values: np.ndarray = CUBE, seed: int = 0) -> None:
    """`call(t)` on our tensor and on PyTorch's: the same shape and values, and (where PyTorch's
    result is differentiable) the same gradient of a random weighting."""
    ours, theirs = both(values)
    got, expected = first(call(ours)), first(call(theirs))
    assert tuple(got.shape) == tuple(expected.shape)
    assert_close(got, expected.detach())
    if expected.requires_grad:
        w = np.random.default_rng(seed).standard_normal(tuple(expected.shape))
        (got * ag.tensor(w, dtype="float64")).sum().backward()
        (expected * torch.tensor(w)).sum().backward()
        assert_close(ours.grad, theirs.grad)


# --- reductions: PyTorch's positional and keyword forms ------------------------------------------
# each written once for both libraries
REDUCTION_CALLS = {
    "sum(1, True)": lambda t: t.sum(1, True),
    "sum((0, 2))": lambda t: t.sum((0, 2)),
    "mean(0)": lambda t: t.mean(0),
    "mean(1, True)": lambda t: t.mean(1, True),
    "var()": lambda t: t.var(),
    "var(True)": lambda t: t.var(True),
    "var(False)": lambda t: t.var(False),
    "var(0, True)": lambda t: t.var(0, True),
    "var(0, False)": lambda t: t.var(0, False),
    "var(0, False, True)": lambda t: t.var(0, False, True),
    "var((0, 2), unbiased=False)": lambda t: t.var((0, 2), unbiased=False),
    "var(1, correction=2, keepdim=True)": lambda t: t.var(1, correction=2, keepdim=True),
    "std()": lambda t: t.std(),
    "std(True)": lambda t: t.std(True),
    "std(False)": lambda t: t.std(False),
    "std(unbiased=False)": lambda t: t.std(unbiased=False),
    "std(1, True, True)": lambda t: t.std(1, True, True),
    "std(dim=-1, correction=0)": lambda t: t.std(dim=-1, correction=0),
    "std([0, 1])": lambda t: t.std([0, 1]),
    "max(1)": lambda t: t.max(1),
    "max(1, True)": lambda t: t.max(1, True),
    "min(dim=-1)": lambda t: t.min(dim=-1),
    "median(0)": lambda t: t.median(0),
    "median()": lambda t: t.median(),
    "norm(2, 1)": lambda t: t.norm(2, 1),
    "norm(1, (0, 2), True)": lambda t: t.norm(1, (0, 2), True),
    "norm(p=3)": lambda t: t.norm(p=3),
    "prod(1, True)": lambda t: t.prod(1, True),
    "logsumexp(1, True)": lambda t: t.logsumexp(1, True),
    "amax((0, 1), True)": lambda t: t.amax((0, 1), True),
    "amin(1)": lambda t: t.amin(1),
    "nansum(1)": lambda t: t.nansum(1),
    "nanmean(1, True)": lambda t: t.nanmean(1, True),
    "kthvalue(2, 1, True)": lambda t: t.kthvalue(2, 1, True),
    "topk(2, 1, False)": lambda t: t.topk(2, 1, False),
    "argmax(1, True)": lambda t: t.argmax(1, True),
}


@pytest.mark.parametrize("call", REDUCTION_CALLS.values(), ids=REDUCTION_CALLS)
def test_reduction_forms_match_pytorch(float64_backend, call):
    assert_matches(call)


@st.composite
def spreads(draw):
    """A shape, the dims to reduce (None: all), keepdim, and how the spread is asked for."""
    shape = tuple(draw(st.lists(st.integers(2, 4), min_size=1, max_size=3)))
    dims = draw(
        st.none()
        | st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, unique_by=lambda d: d % len(shape)).map(tuple)
    )
    keepdim = draw(st.booleans())
    ask = draw(st.sampled_from(["default", "unbiased=True", "unbiased=False", "correction=0", "correction=2"]))
    return shape, dims, keepdim, ask, draw(st.integers(0, 2**16))


def spread_call(name: str, dims, keepdim: bool, ask: str):
    """The method `name` (var or std) called positionally as PyTorch documents each form."""
    key, _, value = ask.partition("=")
    if key == "default":
        return lambda t: getattr(t, name)(dims, keepdim=keepdim)
    if key == "unbiased":
        unbiased = value == "True"
        return lambda t: getattr(t, name)(dims, unbiased, keepdim)
    return lambda t: getattr(t, name)(dims, correction=int(value), keepdim=keepdim)


@pytest.mark.parametrize("name", ["var", "std"])
@examples(20)
@given(case=spreads())
def test_var_and_std_methods_over_random_shapes(float64_backend, name, case):
    shape, dims, keepdim, ask, seed = case
    count = np.prod([shape[d] for d in range(len(shape)) if dims is None or d in {a % len(shape) for a in dims}])
    # at n <= correction PyTorch divides by 0 and warns; the gradient there is not compared
    assume(ask != "correction=2" or count > 2)
    values = np.random.default_rng(seed).standard_normal(shape)
    assert_matches(spread_call(name, dims, keepdim, ask), values, seed)


# the functions: the standard's keywords (correction defaults to 0), PyTorch's (a call naming dim
# or keepdim defaults to its 1) and numpy's ddof
SPREAD_FUNCTIONS = {
    "standard": (
        lambda f, x: f(x, axis=1, correction=1, keepdims=True),
        lambda t, x: t(x, 1, correction=1, keepdim=True),
    ),
    "standard default": (lambda f, x: f(x), lambda t, x: t(x, correction=0)),
    "torch dim": (lambda f, x: f(x, dim=(0, 2)), lambda t, x: t(x, (0, 2))),
    "torch keepdim": (lambda f, x: f(x, keepdim=True), lambda t, x: t(x, keepdim=True)),
    "standard axis": (lambda f, x: f(x, axis=1), lambda t, x: t(x, 1, correction=0)),
    "torch unbiased": (lambda f, x: f(x, 0, True), lambda t, x: t(x, 0, True)),
    "torch unbiased alone": (lambda f, x: f(x, True), lambda t, x: t(x, True)),
    "torch keywords": (
        lambda f, x: f(x, dim=-1, unbiased=False, keepdim=True),
        lambda t, x: t(x, dim=-1, unbiased=False, keepdim=True),
    ),
    "numpy ddof": (lambda f, x: f(x, axis=2, ddof=1), lambda t, x: t(x, 2, correction=1)),
}


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("form", SPREAD_FUNCTIONS.values(), ids=SPREAD_FUNCTIONS)
def test_var_and_std_functions_take_every_spelling(float64_backend, name, form):
    ours, theirs = form
    ag_f, torch_f = getattr(ag, name), getattr(torch, name)
    x, tx = both(CUBE)
    got, expected = ours(ag_f, x), theirs(torch_f, tx)
    assert tuple(got.shape) == tuple(expected.shape)
    assert_close(got, expected.detach())
    got.sum().backward()
    expected.sum().backward()
    assert_close(x.grad, tx.grad)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda x: ag.var(x, correction=1, ddof=1), "only one of correction, ddof and unbiased"),
        (lambda x: ag.std(x, unbiased=True, correction=0), "only one of correction, ddof and unbiased"),
        (lambda x: ag.var(x, axis=0, dim=1), "axis or dim"),
        (lambda x: x.std(0, keepdims=True, keepdim=False), None),
        (lambda x: x.var(1.5), "dim must be an int, a sequence of ints or None"),
        (lambda x: x.std(0, 1), "unbiased must be a bool"),
    ],
    ids=[
        "correction and ddof",
        "unbiased and correction",
        "axis and dim",
        "keepdims spelled twice",
        "float dim",
        "int unbiased",
    ],
)
def test_conflicting_spread_arguments_are_refused(float64_backend, call, match):
    x = ag.tensor(CUBE)
    if match is None:  # keepdims=True, keepdim=False: either asks to keep, as for the other reductions
        assert call(x).shape == (1, 4, 5)
        return
    with pytest.raises(TypeError, match=match):
        call(x)


# --- losses: mismatched shapes --------------------------------------------------------------------
# name: (our call, PyTorch's, how the input is drawn)
LOSSES = {
    "mse_loss": (F.mse_loss, TF.mse_loss),
    "l1_loss": (F.l1_loss, TF.l1_loss),
    "smooth_l1_loss": (F.smooth_l1_loss, TF.smooth_l1_loss),
    "huber_loss": (F.huber_loss, TF.huber_loss),
    "binary_cross_entropy": (F.binary_cross_entropy, TF.binary_cross_entropy),
    "binary_cross_entropy_with_logits": (F.binary_cross_entropy_with_logits, TF.binary_cross_entropy_with_logits),
    "kl_div": (F.kl_div, TF.kl_div),
}
# PyTorch refuses these outright; the pointwise ones it computes broadcast with a warning that
# the result is likely wrong, and we refuse them too (the same error, naming both shapes)
REFUSES_ANOTHER_SHAPE = {
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
}
SHAPE_PAIRS = {
    "(N, 1) and (N,)": ((4, 1), (4,)),
    "(N, C) and (C,)": ((4, 3), (3,)),
    "(N, 3) and (N, 2)": ((4, 3), (4, 2)),
}


def loss_inputs(name: str, input_shape, target_shape):
    rng = np.random.default_rng(1)
    if name == "binary_cross_entropy":
        return rng.uniform(0.1, 0.9, input_shape), rng.uniform(0, 1, target_shape)
    if name == "kl_div":
        return np.log(rng.uniform(0.1, 0.9, input_shape)), rng.uniform(0.1, 0.9, target_shape)
    return rng.standard_normal(input_shape), rng.uniform(0, 1, target_shape)


@pytest.mark.parametrize("shapes", SHAPE_PAIRS.values(), ids=SHAPE_PAIRS)
@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("as_tensor", [True, False], ids=["tensor target", "array target"])
def test_losses_with_another_target_shape(float64_backend, name, shapes, as_tensor):
    ours, theirs = LOSSES[name]
    x, t = loss_inputs(name, *shapes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's broadcast warning, and kl_div's for 'mean'
        try:
            expected = theirs(torch.tensor(x), torch.tensor(t))
        except (ValueError, RuntimeError):
            expected = None
        target = ag.tensor(t) if as_tensor else t
        if expected is None or name in REFUSES_ANOTHER_SHAPE:
            message = f"{name}: target shape {shapes[1]} differs from input shape {shapes[0]}"
            if name not in REFUSES_ANOTHER_SHAPE:
                message = "broadcast"
            with pytest.raises(ValueError, match=re.escape(message)):
                ours(ag.tensor(x), target)
        else:
            assert_close(ours(ag.tensor(x), target), expected)


# --- losses: every target ignored -----------------------------------------------------------------
WEIGHT = np.array([1.0, 2.0, 0.5, 3.0])
CLASS_LOSSES = {"cross_entropy": (F.cross_entropy, TF.cross_entropy), "nll_loss": (F.nll_loss, TF.nll_loss)}
IGNORED = {
    "all -100": (np.full(3, -100), {}),
    "all -100, (N, C, d)": (np.full((3, 2), -100), {}),
    "all ignore_index=2": (np.full(3, 2), {"ignore_index": 2}),
    "some ignored": (np.array([-100, 1, -100]), {}),
}
OPTIONS = {
    "plain": {},
    "weight": {"weight": WEIGHT},
    "label_smoothing": {"label_smoothing": 0.1},
    "weight and label_smoothing": {"weight": WEIGHT, "label_smoothing": 0.2},
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("options", OPTIONS.values(), ids=OPTIONS)
@pytest.mark.parametrize("targets", IGNORED.values(), ids=IGNORED)
@pytest.mark.parametrize("name", CLASS_LOSSES)
def test_ignored_targets_give_pytorchs_value_and_gradient(float64_backend, name, targets, options, reduction):
    if name == "nll_loss" and "label_smoothing" in options:
        pytest.skip("nll_loss has no label_smoothing")
    target, extra = targets
    shape = (3, 4) if target.ndim == 1 else (3, 4, 2)
    x, tx = both(np.random.default_rng(2).standard_normal(shape))
    ours, theirs = CLASS_LOSSES[name]
    arguments = {**extra, **options}
    got = ours(
        x,
        ag.tensor(target),
        reduction=reduction,
        **{k: ag.tensor(v) if k == "weight" else v for k, v in arguments.items()},
    )
    expected = theirs(
        tx,
        torch.tensor(target),
        reduction=reduction,
        **{k: torch.tensor(v) if k == "weight" else v for k, v in arguments.items()},
    )
    np.testing.assert_allclose(host(got), host(expected), rtol=1e-10, atol=1e-12, equal_nan=True)
    got.sum().backward()
    expected.sum().backward()
    assert_close(x.grad, tx.grad)  # finite: zeros where every target is ignored, as PyTorch's


# --- indexing with keys that are not indices -------------------------------------------------------
NOT_INDICES = {
    "float": lambda m: 1.7,
    "numpy float": lambda m: np.float64(1.0),
    "float beside an int": lambda m: (0, 1.0),
    "0-d float tensor": lambda m: m.tensor(1.0),
    "float tensor": lambda m: m.tensor([1.0, 0.0]),
    "complex": lambda m: 1 + 0j,
    "object": lambda m: object(),
}


@pytest.mark.parametrize("key", NOT_INDICES.values(), ids=NOT_INDICES)
def test_a_key_that_is_no_index_raises_index_error(float64_backend, key):
    x = ag.tensor(CUBE)
    with pytest.raises(IndexError):
        torch.tensor(CUBE)[key(torch)]
    message = "only integers, slices (`:`), ellipsis (`...`), None and integer or boolean tensors are valid indices"
    with pytest.raises(IndexError, match=re.escape(message)):
        x[key(ag)]
    with pytest.raises(IndexError, match=re.escape(message)):
        x[key(ag)] = 0.0


# PyTorch takes these (a list of floats truncated, a string refused with TypeError); numpy
# refuses each with IndexError, and so do we: a float is never an index
REFUSED_LIKE_NUMPY = {
    "list of floats": [1.5],
    "nested list with a float": [[0, 1], [1.0, 0]],
    "numpy float array": np.array([1.0]),
    "string": "a",
}


@pytest.mark.parametrize("key", REFUSED_LIKE_NUMPY.values(), ids=REFUSED_LIKE_NUMPY)
def test_keys_numpy_refuses_raise_index_error(float64_backend, key):
    with pytest.raises(IndexError):
        CUBE[key]
    with pytest.raises(IndexError, match="valid indices"):
        ag.tensor(CUBE)[key]


def test_a_ragged_list_key_raises_index_error(float64_backend):
    with pytest.raises(IndexError, match="ragged"):
        ag.tensor(CUBE)[[0, [1]]]


VALID_KEYS = {
    "list of bools": [True, False, True],
    "list of ints": [2, 0],
    "empty list": [],
    "int tensor": lambda: ag.tensor([1, 0]),
    "0-d int tensor": lambda: ag.tensor(1),
    "bool tensor": lambda: ag.tensor([True, False, True]),
    "numpy int": np.int64(1),
    "numpy int array": np.array([2, 1]),
    "numpy bool array": np.array([False, True, True]),
    "tuple with a list": (slice(None), [1, 3]),
    "None and Ellipsis": (None, Ellipsis, 0),
}


@pytest.mark.parametrize("key", VALID_KEYS.values(), ids=VALID_KEYS)
def test_valid_keys_index_as_pytorch(float64_backend, key):
    key = key() if callable(key) else key

    def torch_key(k):
        if isinstance(k, ag.Tensor):
            return torch.tensor(k.numpy())
        if isinstance(k, np.ndarray):
            return torch.tensor(k)
        return tuple(torch_key(e) for e in k) if isinstance(k, tuple) else k

    assert_matches(lambda t: t[torch_key(key) if isinstance(t, torch.Tensor) else key])


# --- take ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("index", [1, [2, 0], [[0, 1], [1, 1]]], ids=["0-d", "1-d", "2-d"])
def test_take_gives_the_index_shape(float64_backend, index):
    values = CUBE[0, 0]
    x, tx = both(values)
    got, expected = x.take(ag.tensor(index)), tx.take(torch.tensor(index))
    assert tuple(got.shape) == tuple(expected.shape)
    assert_close(got, expected.detach())
    got.sum().backward()
    expected.sum().backward()
    assert_close(x.grad, tx.grad)
    assert ag.take(x, ag.tensor(index), axis=0).shape == np.take(values, index, axis=0).shape


# --- pinv at rank-deficient inputs -----------------------------------------------------------------
def factors(m: int, n: int, singular_values, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random orthonormal U (m, r) and V (n, r) and the r singular values: ``U diag(s) V^T``
    is a matrix of rank r."""
    rng = np.random.default_rng(seed)
    r = len(singular_values)
    u, _ = np.linalg.qr(rng.standard_normal((m, r)))
    v, _ = np.linalg.qr(rng.standard_normal((n, r)))
    return u, np.asarray(singular_values, dtype=float), v


PINV_INPUTS = {
    "square, rank 2 of 4, repeated": (4, 4, [2.0, 2.0]),
    "wide, rank 1": (3, 5, [1.5]),
    "tall, rank 2, repeated": (5, 3, [1.0, 1.0]),
    "full rank, repeated": (3, 3, [1.0, 1.0, 1.0]),
    "full rank, distinct": (4, 3, [3.0, 2.0, 0.5]),
}


@pytest.mark.parametrize("shape", PINV_INPUTS.values(), ids=PINV_INPUTS)
def test_pinv_gradient_at_rank_deficient_inputs(float64_backend, shape):
    u, s, v = factors(*shape, seed=3)
    w = np.random.default_rng(4).standard_normal((shape[1], shape[0]))
    x, tx = both(u * s @ v.T)
    (ag.linalg.pinv(x) * ag.tensor(w)).sum().backward()
    (torch.linalg.pinv(tx) * torch.tensor(w)).sum().backward()
    assert_close(x.grad, tx.grad, rtol=1e-8, atol=1e-10)
    # finite differences along a path of constant rank: (U + e B) diag(s) (V + e C)^T
    rng = np.random.default_rng(6)
    b, c = rng.standard_normal(u.shape), rng.standard_normal(v.shape)
    loss = lambda e: float((np.linalg.pinv((u + e * b) * s @ (v + e * c).T) * w).sum())  # noqa: E731
    step = 1e-6
    numeric = (loss(step) - loss(-step)) / (2 * step)
    direction = b * s @ v.T + u * s @ c.T
    np.testing.assert_allclose(float((host(x.grad) * direction).sum()), numeric, rtol=1e-6, atol=1e-8)


def test_pinv_forward_gradient_matches_pytorch(float64_backend):
    u, s, v = factors(4, 3, [2.0, 2.0], seed=5)
    tangent = np.random.default_rng(7).standard_normal((4, 3))
    _, jvp = ag.func.jvp(ag.linalg.pinv, (ag.tensor(u * s @ v.T),), (ag.tensor(tangent),))
    _, torch_jvp = torch.func.jvp(torch.linalg.pinv, (torch.tensor(u * s @ v.T),), (torch.tensor(tangent),))
    assert_close(jvp, torch_jvp, rtol=1e-8, atol=1e-10)


# --- polygamma -----------------------------------------------------------------------------------
# negative non-integers down to -30 (clear of the poles, where the values are ill-conditioned), then positives
POLYGAMMA_AT = np.concatenate([-np.arange(30.0) - f for f in (0.13, 0.5, 0.77)] + [[0.4, 1.0, 3.3, 12.5, 40.0]])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
def test_polygamma_matches_scipy_at_negative_arguments(float64_backend, n):
    got = ag.special.polygamma(n, ag.tensor(POLYGAMMA_AT))
    assert_close(got, scipy.special.polygamma(n, POLYGAMMA_AT), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("n", [0, 2])
def test_polygamma_gradient_matches_scipy_at_negative_arguments(float64_backend, n):
    """The gradient of psi_n is psi_(n+1) (SciPy the oracle: torch's trigamma is 5e-10 off)."""
    x = ag.tensor(POLYGAMMA_AT, requires_grad=True)
    ag.special.polygamma(n, x).sum().backward()
    assert_close(x.grad, scipy.special.polygamma(n + 1, POLYGAMMA_AT), rtol=1e-9, atol=1e-9)


# --- .imag of a real tensor ----------------------------------------------------------------------
def test_imag_of_a_real_tensor_is_absent_for_hasattr(float64_backend):
    real = ag.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError):
        torch.tensor([1.0]).imag  # noqa: B018
    assert not hasattr(real, "imag")
    with pytest.raises(TypeError, match="a real tensor has no imaginary part"):
        real.imag  # noqa: B018
    assert hasattr(ag.tensor([1 + 2j]), "imag")


# --- damaged checkpoints -------------------------------------------------------------------------
# what nn.load says of a file that is not a whole checkpoint
DAMAGED = "damaged or truncated|is damaged|not a zip archive|not a state dict|is empty"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A saved checkpoint's bytes and the state dict it holds."""
    state = {"weight": np.arange(12.0).reshape(3, 4), "bias": np.array([1.0, -2.0, 3.0]), "step": np.array(7)}
    path = tmp_path_factory.mktemp("whole") / "m.npz"
    nn.save(state, path)
    return path.read_bytes(), state


@st.composite
def damages(draw, size: int):
    """Flipped bits at random positions, then perhaps a cut."""
    flips = draw(st.lists(st.tuples(st.integers(0, size - 1), st.integers(1, 255)), min_size=1, max_size=4))
    cut = draw(st.none() | st.integers(0, size - 1))
    return flips, cut


def damage(data: bytes, flips, cut) -> bytes:
    damaged = bytearray(data)
    for position, bits in flips:
        damaged[position] ^= bits
    return bytes(damaged[:cut] if cut is not None else damaged)


def assert_loads_or_says_damaged(path, state) -> None:
    try:
        loaded = nn.load(path)
    except ValueError as e:
        assert str(path) in str(e) and re.search(DAMAGED, str(e)), str(e)
        return
    assert sorted(loaded) == sorted(state)  # damage the checksums do not cover (timestamps...)
    for name, value in state.items():
        np.testing.assert_array_equal(loaded[name].numpy(), value)


@examples(300)
@given(data=st.data())
def test_a_damaged_checkpoint_gives_one_clear_error(backend, checkpoint, tmp_path, data):
    whole, state = checkpoint
    path = tmp_path / "damaged.npz"
    path.write_bytes(damage(whole, *data.draw(damages(len(whole)))))
    assert_loads_or_says_damaged(path, state)


# (offset in a central directory record, the bits flipped): the damages zipfile reports as
# NotImplementedError ("zip file version 13.0", a compression method), RuntimeError (the
# encrypted flag) or OSError, and the ones it reports as BadZipFile
CENTRAL_DIRECTORY_FIELDS = {
    "version needed": (6, 0xAF),
    "flags": (8, 0x01),
    "compression method": (10, 0x0D),
    "crc": (16, 0x01),
    "header offset": (42, 0x0D),
}


@pytest.mark.parametrize("field", CENTRAL_DIRECTORY_FIELDS.values(), ids=CENTRAL_DIRECTORY_FIELDS)
def test_damage_to_each_central_directory_field_says_damaged(backend, checkpoint, tmp_path, field):
    whole, state = checkpoint
    offset, bits = field
    path = tmp_path / "damaged.npz"
    path.write_bytes(damage(whole, [(whole.rfind(zipfile.stringCentralDir) + offset, bits)], None))
    with pytest.raises(ValueError, match=re.escape(repr(str(path))) + f".*({DAMAGED})"):
        nn.load(path)
