"""autograd_core.ops.special: values and gradients against torch.special on every backend (in the
domain and at the singular points), gradients and second derivatives against finite
differences, forward mode against the backward, the portable kernels against scipy.special
to their stated accuracy, and scipy.special's signatures."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.special
import torch

import autograd_core as ag
import backends
from autograd_core import func
from autograd_core.primitives import special as kernels
from tests.helpers import assert_close, host, portable

S = ag.special
_R = np.random.default_rng(7)


def uniform(lo: float, hi: float, n: int = 9) -> np.ndarray:
    return _R.uniform(lo, hi, n)


def signed(lo: float, hi: float, n: int = 9) -> np.ndarray:
    return uniform(lo, hi, n) * _R.choice([-1.0, 1.0], n)


# name: (ours, torch's, inputs drawn inside the domain, away from poles and kinks)
UNARY = {
    "entr": (S.entr, torch.special.entr, uniform(0.1, 3.0)),
    "erf": (S.erf, torch.special.erf, signed(0.1, 3.0)),
    "erfc": (S.erfc, torch.special.erfc, signed(0.1, 5.0)),
    "erfinv": (S.erfinv, torch.special.erfinv, signed(0.05, 0.97)),
    "expit": (S.expit, torch.special.expit, signed(0.1, 6.0)),
    "logit": (S.logit, torch.special.logit, uniform(0.03, 0.97)),
    "ndtr": (S.ndtr, torch.special.ndtr, signed(0.1, 6.0)),
    "ndtri": (S.ndtri, torch.special.ndtri, uniform(0.01, 0.99)),
    "log_ndtr": (S.log_ndtr, torch.special.log_ndtr, np.concatenate([signed(0.1, 5.0), [-12.0, -30.0]])),
    "gammaln": (S.gammaln, torch.special.gammaln, np.concatenate([uniform(0.2, 12.0), [-0.4, -2.7, -5.5]])),
    "digamma": (S.digamma, torch.special.digamma, np.concatenate([uniform(0.2, 12.0), [-0.4, -2.7, -5.5]])),
    "trigamma": (
        lambda x: S.polygamma(1, x),
        lambda t: torch.special.polygamma(1, t),
        np.concatenate([uniform(0.2, 12.0), [-0.4, -2.7]]),
    ),
    "i0": (S.i0, torch.special.i0, signed(0.1, 30.0)),
    "i0e": (S.i0e, torch.special.i0e, signed(0.1, 30.0)),
    "i1": (S.i1, torch.special.i1, signed(0.1, 30.0)),
    "i1e": (S.i1e, torch.special.i1e, signed(0.1, 30.0)),
    "sinc": (S.sinc, torch.special.sinc, signed(0.1, 3.0)),
}
BINARY = {
    "xlogy": (S.xlogy, torch.special.xlogy, signed(0.1, 3.0), uniform(0.1, 3.0)),
    "xlog1py": (S.xlog1py, torch.special.xlog1py, signed(0.1, 3.0), uniform(-0.9, 3.0)),
    # torch has no rel_entr: its definition for positive operands
    "rel_entr": (S.rel_entr, lambda x, y: x * (torch.log(x) - torch.log(y)), uniform(0.1, 3.0), uniform(0.1, 3.0)),
}
# torch's polygamma of order >= 1 (digamma's gradient, trigamma) is within 1e-9 (scipy.special
# and mpmath agree with ours to 1e-15), not within float64's rounding
# jax.scipy's log_ndtr is within 4e-13 at -30, which its gradient exp(-x^2/2 - log_ndtr(x))
# multiplies by 450
LOOSE = {"digamma": dict(rtol=1e-8), "trigamma": dict(rtol=1e-8), "log_ndtr": dict(rtol=1e-9)}

# the singular and boundary points, for each function
SPECIAL_POINTS = {
    "entr": [0.0, -1.0, 1.0, math.inf, math.nan],
    "erf": [0.0, -0.0, math.inf, -math.inf, math.nan],
    "erfc": [0.0, 6.0, 27.0, -6.0, math.inf, -math.inf, math.nan],
    "erfinv": [0.0, 1.0, -1.0, 1.5, -2.0, 1 - 1e-16, math.nan],
    "expit": [0.0, 800.0, -800.0, math.inf, -math.inf],
    "logit": [0.0, 1.0, 0.5, -0.5, 1.5, math.nan],
    "ndtr": [0.0, -40.0, 40.0, math.inf, -math.inf],
    "ndtri": [0.0, 1.0, 0.5, 1e-300, -0.1, 1.1, math.nan],
    "log_ndtr": [0.0, -40.0, 40.0, -math.inf, math.inf, math.nan],
    "gammaln": [0.0, -1.0, -2.0, 1.0, 2.0, math.inf, math.nan],
    "digamma": [0.0, -1.0, -2.0, 1.0, math.inf, -math.inf, math.nan],
    "i0": [0.0, 700.0, -700.0, math.nan],
    "i0e": [0.0, 1e5, -1e5, math.inf, math.nan],
    "i1": [0.0, -0.0, 700.0, -700.0, math.nan],
    "i1e": [0.0, 1e5, -1e5, math.inf, math.nan],
    "sinc": [0.0, 1.0, -2.0, 0.5, math.nan],
}
BINARY_POINTS = {
    "xlogy": [(0.0, 0.0), (0.0, -1.0), (0.0, 2.0), (1.0, 0.0), (2.0, -1.0), (0.0, math.nan), (-1.0, math.inf)],
    "xlog1py": [(0.0, -1.0), (0.0, -2.0), (0.0, 2.0), (1.0, -1.0), (0.0, math.nan)],
}


def leaf(values, requires_grad: bool = True) -> ag.Tensor:
    return ag.tensor(np.asarray(values, dtype=np.float64), dtype="float64", requires_grad=requires_grad)


def twin(values) -> torch.Tensor:
    return torch.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


def value_and_grad(fn, *leaves):
    out = fn(*leaves)
    grads = ag.grad(out.sum(), list(leaves))
    return host(out), [host(g) for g in grads]


def torch_value_and_grad(fn, *leaves):
    out = fn(*leaves)
    grads = torch.autograd.grad(out.sum(), leaves)
    return out.detach().numpy(), [g.numpy() for g in grads]


def assert_same(ours, theirs, **tol):
    np.testing.assert_allclose(ours, theirs, **{"rtol": 1e-10, "atol": 1e-12, **tol})


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_torch(float64_backend, name):
    ours, theirs, x = UNARY[name]
    value, (grad,) = value_and_grad(ours, leaf(x))
    expected, (expected_grad,) = torch_value_and_grad(theirs, twin(x))
    assert_same(value, expected, **LOOSE.get(name, {}))
    assert_same(grad, expected_grad, **LOOSE.get(name, {}))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_matches_torch(float64_backend, name):
    ours, theirs, x, y = BINARY[name]
    value, grads = value_and_grad(ours, leaf(x), leaf(y))
    expected, expected_grads = torch_value_and_grad(theirs, twin(x), twin(y))
    assert_same(value, expected)
    for grad, expected_grad in zip(grads, expected_grads):
        assert_same(grad, expected_grad)


# points where torch's gradient is no derivative, left out of the gradients' comparison: digamma's
# at its poles (torch's trigamma gives 6.6e32 at -1; it is a pole, where libraries differ), and
# i1's and i1e's at nan (torch gives 0.5)
TORCH_GRADIENT_UNDEFINED = {"digamma": (-1.0, -2.0, -math.inf), "i1": (math.nan,), "i1e": (math.nan,)}


@pytest.mark.parametrize("name", sorted(SPECIAL_POINTS))
def test_special_points_match_torch(float64_backend, name):
    ours, theirs, _ = UNARY[name]
    points = np.asarray(SPECIAL_POINTS[name])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy warns at the poles it computes
        value, (grad,) = value_and_grad(ours, leaf(points))
    expected, (expected_grad,) = torch_value_and_grad(theirs, twin(points))
    assert_same(value, expected, atol=1e-300)
    undefined = TORCH_GRADIENT_UNDEFINED.get(name, ())
    compared = ~np.isin(points, undefined) & ~(np.isnan(points) & any(map(math.isnan, undefined)))
    assert_same(grad[compared], expected_grad[compared], **{"atol": 1e-300, **LOOSE.get(name, {})})


@pytest.mark.parametrize("name", sorted(BINARY_POINTS))
def test_binary_special_points_match_torch(float64_backend, name):
    ours, theirs, _, _ = BINARY[name]
    x, y = zip(*BINARY_POINTS[name])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value, grads = value_and_grad(ours, leaf(x), leaf(y))
    expected, expected_grads = torch_value_and_grad(theirs, twin(x), twin(y))
    assert_same(value, expected)
    for grad, expected_grad in zip(grads, expected_grads):
        assert_same(grad, expected_grad)


def test_portable_polygamma_at_its_poles(float64_backend):
    """At the negative integers torch's polygamma of order >= 1 gives finite garbage and scipy's
    +-inf; the portable kernel gives inf for odd orders (an even power in the denominator),
    nan for even ones, and at 0 what torch gives; digamma as torch everywhere."""
    x = float64_backend.asarray(np.array([0.0, -1.0, -3.0, -0.0]), dtype=float64_backend.xp.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        values = [float64_backend.to_numpy(portable(float64_backend, kernels.polygamma, x, n)) for n in (0, 1, 2)]
    np.testing.assert_array_equal(values[0], [-math.inf, math.nan, math.nan, math.inf])
    np.testing.assert_array_equal(values[1], [math.inf] * 4)
    np.testing.assert_array_equal(values[2], [-math.inf, math.nan, math.nan, -math.inf])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_gradients_and_second_derivatives(float64_backend, name):
    ours, _, x = UNARY[name]
    x = x / 4 if name in ("i0", "i1") else x  # finite differences of I(30) ~ 1e12 lose the digits
    assert ag.gradcheck(ours, [leaf(x)])
    assert ag.gradgradcheck(ours, [leaf(x)])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_gradients_and_second_derivatives(float64_backend, name):
    ours, _, x, y = BINARY[name]
    assert ag.gradcheck(ours, [leaf(x), leaf(y)])
    assert ag.gradgradcheck(ours, [leaf(x), leaf(y)])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_forward_mode_matches_the_backward(float64_backend, name):
    """Each function is elementwise, so its tangent is its derivative times the input's."""
    ours, _, x = UNARY[name]
    tangent = _R.standard_normal(x.shape)
    _, (derivative,) = value_and_grad(ours, leaf(x))
    _, out_tangent = func.jvp(ours, (leaf(x),), (leaf(tangent, requires_grad=False),))
    assert_same(host(out_tangent), derivative * tangent)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_forward_mode_matches_the_backward(float64_backend, name):
    ours, _, x, y = BINARY[name]
    tx, ty = _R.standard_normal(x.shape), _R.standard_normal(y.shape)
    _, (dx, dy) = value_and_grad(ours, leaf(x), leaf(y))
    tangents = (leaf(tx, requires_grad=False), leaf(ty, requires_grad=False))
    _, out_tangent = func.jvp(ours, (leaf(x), leaf(y)), tangents)
    assert_same(host(out_tangent), dx * tx + dy * ty)


def test_third_derivative_of_gammaln(float64_backend):
    """gammaln' = digamma, digamma' = polygamma(1), then polygamma(2): each order is a node."""
    x = leaf([0.7, 2.5, -1.5])
    (d1,) = ag.grad(S.gammaln(x).sum(), [x], create_graph=True)
    (d2,) = ag.grad(d1.sum(), [x], create_graph=True)
    (d3,) = ag.grad(d2.sum(), [x])
    assert_close(d3, scipy.special.polygamma(2, [0.7, 2.5, -1.5]), rtol=1e-11)


# --- the portable kernels against scipy.special ---------------------------------------------
def _grid(lo: float, hi: float) -> np.ndarray:
    return np.concatenate([np.linspace(lo, hi, 2001), _R.uniform(lo, hi, 500)])


# name: (the portable kernel's arguments after x, scipy's function, inputs, tolerance); i0 and i1
# are nan at +-inf, as in scipy.special and torch
ACCURACY = {
    "erfc": ((), scipy.special.erfc, _grid(-6.0, 26.5), dict(rtol=1e-13)),
    "erfinv": (
        (),
        scipy.special.erfinv,
        np.concatenate([_grid(-1, 1), 1 - np.logspace(-16, -1, 200)]),
        dict(rtol=1e-14),
    ),
    "ndtri": ((), scipy.special.ndtri, np.concatenate([_grid(0, 1), np.logspace(-300, -1, 300)]), dict(rtol=1e-14)),
    "log_ndtr": ((), scipy.special.log_ndtr, _grid(-1e3, 37.0), dict(rtol=1e-13)),
    "gammaln": (
        (),
        scipy.special.gammaln,
        np.concatenate([_grid(-30, 30), np.logspace(-300, 300, 200)]),
        dict(rtol=1e-13, atol=1e-14),
    ),
    "polygamma": (
        (0,),
        scipy.special.psi,
        np.concatenate([_grid(-30, 30), np.logspace(-300, 300, 200)]),
        dict(rtol=1e-13, atol=1e-14),
    ),
    "i0": (
        (),
        scipy.special.i0,
        np.concatenate([_grid(-700, 700), [math.inf, -math.inf]]),
        dict(rtol=1e-13),
    ),
    "i0e": ((), scipy.special.i0e, np.concatenate([_grid(-700, 700), [1e5, -1e10, math.inf]]), dict(rtol=1e-14)),
    "i1": (
        (),
        scipy.special.i1,
        np.concatenate([_grid(-700, 700), [math.inf, -math.inf]]),
        dict(rtol=1e-13),
    ),
    "i1e": ((), scipy.special.i1e, np.concatenate([_grid(-700, 700), [1e5, -1e10]]), dict(rtol=1e-14)),
}


@pytest.mark.parametrize("name", sorted(ACCURACY))
def test_portable_kernel_accuracy(float64_backend, name):
    """The default written in the standard, run on each library's raw arrays (what
    array-api-strict always runs, and any library without its own kernel)."""
    extra, reference, x, tolerance = ACCURACY[name]
    raw = float64_backend.asarray(x, dtype=float64_backend.xp.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ours = float64_backend.to_numpy(portable(float64_backend, getattr(kernels, name), raw, *extra))
    np.testing.assert_allclose(ours, reference(x), **tolerance)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_portable_polygamma_accuracy(n):
    x = np.concatenate([_grid(0.01, 40), _grid(-8.8, -0.1)])
    x = x[np.abs(x - np.round(x)) > 0.05]  # scipy's own reflection loses digits near the poles
    ours = portable(backends.get("numpy"), kernels.polygamma, x, n)
    np.testing.assert_allclose(ours, scipy.special.polygamma(n, x), rtol=1e-12)


# --- scipy.special's signatures and the inputs it is given ---------------------------------------
def test_logsumexp_takes_scipys_arguments(float64_backend):
    a, b = _R.standard_normal((3, 4)), _R.uniform(-1, 1, (3, 4))
    for kwargs in ({}, {"axis": 1}, {"axis": (0, 1), "keepdims": True}, {"axis": 0, "b": b, "return_sign": True}):
        theirs = scipy.special.logsumexp(a, **kwargs)
        ours = S.logsumexp(
            leaf(a, requires_grad=False), **{k: leaf(v, False) if k == "b" else v for k, v in kwargs.items()}
        )
        for o, t in zip(
            ours if isinstance(ours, tuple) else (ours,), theirs if isinstance(theirs, tuple) else (theirs,)
        ):
            assert_same(host(o), t)


def test_logsumexp_of_a_negative_sum_is_nan_without_return_sign(float64_backend):
    out = S.logsumexp(leaf([0.0, 0.0], False), b=leaf([1.0, -2.0], False))
    assert math.isnan(float(out))


def test_logsumexp_weights_get_gradients(float64_backend):
    a, b = leaf(_R.standard_normal(5)), leaf(_R.uniform(0.5, 2.0, 5))
    assert ag.gradcheck(lambda a, b: S.logsumexp(a, b=b), [a, b])


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_softmax_and_log_softmax_over_scipys_axes(float64_backend, axis):
    x = _R.standard_normal((3, 4))
    assert_same(host(S.softmax(leaf(x, False), axis=axis)), scipy.special.softmax(x, axis=axis))
    assert_same(host(S.log_softmax(leaf(x, False), axis=axis)), scipy.special.log_softmax(x, axis=axis))
    assert ag.gradcheck(lambda t: S.log_softmax(t, axis=axis), [leaf(x)])


def test_a_scalar_operand_and_integer_tensors(float64_backend):
    x = leaf([1.0, 2.0])
    assert_same(host(S.xlogy(x, 2.0)), [math.log(2.0), 2 * math.log(2.0)])
    assert_same(host(S.xlogy(0.5, x)), [0.0, 0.5 * math.log(2.0)])
    assert S.gammaln(ag.asarray([1, 2, 3])).dtype == ag.__array_namespace_info__().default_dtypes()["real floating"]


def test_float32_stays_float32(backend):
    x = ag.asarray([0.3, 0.6], dtype=ag.float32)
    for fn in (S.erfinv, S.gammaln, S.digamma, S.i0e, S.log_ndtr, S.ndtri, S.erfc):
        assert fn(x).dtype == ag.float32, fn.__name__
    assert S.polygamma(2, x).dtype == ag.float32


def test_bad_arguments_are_refused():
    x = leaf([1.0])
    with pytest.raises(TypeError, match="order n as a Python integer"):
        S.polygamma(1.5, x)
    with pytest.raises(TypeError, match="make one with autograd_core.asarray"):
        S.gammaln([1.0, 2.0])
    with pytest.raises(TypeError, match="at least one operand must be a tensor"):
        S.xlogy(1.0, 2.0)
    with pytest.raises(TypeError, match="take real tensors, got complex64"):
        S.erfinv(ag.asarray([0.5 + 1j]))
    with pytest.raises(TypeError, match="take real tensors"):
        S.xlogy(x, ag.asarray([2.0 + 0j]))


def test_psi_is_digamma():
    assert S.psi is S.digamma


@pytest.mark.parametrize("name", sorted(UNARY))
def test_vmap_of_the_function_and_its_gradient(name):
    """Per-example values and gradients under vmap, with a batching rule (no loop fallback)."""
    import autograd_core.transforms.vmap.batched

    ours, _, x = UNARY[name]
    batch = leaf(np.stack([x, x[::-1]]), requires_grad=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", autograd_core.transforms.vmap.batched.BatchingFallbackWarning)
        values = func.vmap(ours)(batch)
        grads = func.vmap(func.grad(lambda row: ours(row).sum()))(batch)
    rows = [value_and_grad(ours, leaf(row)) for row in host(batch)]
    assert_same(host(values), np.stack([value for value, _ in rows]))
    assert_same(host(grads), np.stack([grad for _, (grad,) in rows]))
