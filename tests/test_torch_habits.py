"""Tensor methods under PyTorch's names take PyTorch's arguments and give PyTorch's results,
checked against torch on every backend: ``values, indices = x.max(1)``, ``x.sort()``,
``x.expand(-1, n)``, ``x == None``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import autograd_core as ag
from helpers import assert_close, host

# ties in every row and column, so the index chosen (the first) and where the gradient goes matter
VALUES = np.array([[1.0, 5.0, 5.0, -2.0], [7.0, 0.0, 7.0, 3.0], [2.0, 2.0, -1.0, 2.0]])
WEIGHTS = np.array([[1.0, 10.0, 100.0, 1000.0], [2.0, 20.0, 200.0, 2000.0], [3.0, 30.0, 300.0, 3000.0]])


def both():
    ours = ag.tensor(VALUES, dtype="float64", requires_grad=True)
    theirs = torch.tensor(VALUES, dtype=torch.float64, requires_grad=True)
    return ours, theirs


def weighted_sum(t, module):
    """A loss that tells apart where each output's gradient goes."""
    weights = np.resize(WEIGHTS.ravel() + np.arange(WEIGHTS.size) * 0.001, tuple(t.shape))
    return (t * module.tensor(weights, dtype=module.float64)).sum()


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_and_min_along_a_dim_give_values_and_indices(float64_backend, name, dim, keepdim):
    ours, theirs = both()
    values, indices = getattr(ours, name)(dim, keepdim=keepdim)
    expected = getattr(theirs, name)(dim, keepdim=keepdim)
    assert_close(values, expected.values.detach().numpy())
    np.testing.assert_array_equal(host(indices), expected.indices.numpy())
    assert getattr(ours, name)(dim=dim, keepdim=keepdim).indices.tolist() == expected.indices.tolist()
    weighted_sum(values, ag).backward()
    weighted_sum(expected.values, torch).backward()
    assert_close(ours.grad, theirs.grad.numpy())  # the first of tied extremes gets it, as in PyTorch


def test_the_accuracy_line_of_a_training_script(float64_backend):
    logits = ag.tensor([[0.1, 2.0, 0.3], [1.5, 0.2, 0.1]], dtype="float64")
    _, predicted = logits.max(1)
    assert (predicted == ag.asarray([1, 0])).astype("float64").mean().item() == 1.0


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_and_min_of_all_elements_and_against_a_tensor(float64_backend, name):
    ours, theirs = both()
    assert getattr(ours, name)().item() == getattr(theirs, name)().item()
    other = np.full_like(VALUES, 2.0)
    got = getattr(ours, name)(ag.tensor(other, dtype="float64"))
    assert_close(got, getattr(theirs, name)(torch.tensor(other)).detach().numpy())


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_gives_values_and_indices(float64_backend, dim, descending):
    ours, theirs = both()
    values, indices = ours.sort(dim, descending=descending)
    expected = theirs.sort(dim=dim, descending=descending, stable=True)
    assert_close(values, expected.values.detach().numpy())
    np.testing.assert_array_equal(host(indices), expected.indices.numpy())
    np.testing.assert_array_equal(host(ours.argsort(dim, descending=descending)), expected.indices.numpy())
    weighted_sum(values, ag).backward()
    weighted_sum(expected.values, torch).backward()
    assert_close(ours.grad, theirs.grad.numpy())


@pytest.mark.parametrize("sizes", [(-1, 4), (2, -1, 4), (3, 4), ((2, 3, 4),)])
def test_expand_keeps_a_dimension_where_given_minus_one(backend, sizes):
    column = np.arange(3.0)[:, None]
    got = ag.tensor(column).expand(*sizes)
    np.testing.assert_array_equal(host(got), torch.tensor(column).expand(*sizes).numpy())


def test_expand_refuses_minus_one_for_a_new_dimension(backend):
    with pytest.raises(ValueError, match="-1 only keeps an existing dimension"):
        ag.ones(3, 1).expand(-1, 3, 4)


def test_a_tensor_compared_with_none(backend):
    t = ag.ones(2)
    assert (t == None) is False  # noqa: E711 - the comparison is the test
    assert (t != None) is True  # noqa: E711
    assert t is not None and t in [t]


MATRIX = np.array([[3.0, -1.0, 2.0, 7.0], [0.0, 5.0, -4.0, 1.0], [6.0, 2.0, 9.0, -3.0]])
INDEX = np.array([[0, 2], [3, 0]])
SCATTER_INDEX = np.array([[0, 1, 2, 0], [2, 0, 0, 1]])  # along dim 0: every position once
# name: (the method call, on our tensor and on torch's; `m` is the module, for index tensors)
METHODS = {
    "tril": lambda t, m: t.tril(1),
    "triu": lambda t, m: t.triu(-1),
    "roll": lambda t, m: t.roll(1, 1),
    "roll_several": lambda t, m: t.roll((1, -2), (0, 1)),
    "gather_smaller_index": lambda t, m: t.gather(1, m.tensor(INDEX)),
    "index_select": lambda t, m: t.index_select(1, m.tensor(np.array([3, 0, 3]))),
    "masked_select_broadcast": lambda t, m: t.masked_select(m.tensor(np.array([True, False, True, True]))),
    "topk_values": lambda t, m: t.topk(2, 1).values,
    "topk_smallest": lambda t, m: t.topk(2, 0, largest=False).values,
    "unfold": lambda t, m: t.unfold(1, 2, 1),
    "unfold_step": lambda t, m: t.reshape(-1).unfold(0, 3, 4),
    "prod_dim": lambda t, m: t.prod(1, keepdim=True),
    "sum_dim_dtype": lambda t, m: t.sum(0, dtype=m.float64),
    "div_trunc": lambda t, m: t.div(-2.5, rounding_mode="trunc"),
    "scatter_add": lambda t, m: t.scatter_add(0, m.tensor(SCATTER_INDEX), t[:2] * 10.0),
    "scatter_tensor": lambda t, m: t.scatter(0, m.tensor(SCATTER_INDEX[:1]), t[:1] * 10.0),
    "scatter_value": lambda t, m: t.scatter(1, m.tensor(np.array([[3], [0], [1]])), value=-1.0),
    "div_floor": lambda t, m: t.div(2.5, rounding_mode="floor"),
}


@pytest.mark.parametrize("name", METHODS)
def test_methods_match_pytorch(float64_backend, name):
    ours = ag.tensor(MATRIX, dtype="float64", requires_grad=True)
    theirs = torch.tensor(MATRIX, dtype=torch.float64, requires_grad=True)
    got, expected = METHODS[name](ours, ag), METHODS[name](theirs, torch)
    assert tuple(got.shape) == tuple(expected.shape)
    assert_close(got, expected.detach().numpy())
    if expected.requires_grad:
        weighted_sum(got, ag).backward()
        weighted_sum(expected, torch).backward()
        assert_close(ours.grad, theirs.grad.numpy())


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_integer_division_rounds_as_pytorch(backend, mode):
    numerators = np.array([7, -7, 6, -6, 5, 0])
    for divisor in (2, -2, 3):
        got = ag.asarray(numerators).div(divisor, rounding_mode=mode)
        assert got.dtype == ag.int64
        assert got.tolist() == torch.tensor(numerators).div(divisor, rounding_mode=mode).tolist()


def test_unknown_rounding_mode_and_window_are_refused(backend):
    with pytest.raises(ValueError, match="rounding_mode"):
        ag.ones(2).div(2, rounding_mode="round")
    with pytest.raises(ValueError, match="no window"):
        ag.ones(2).unfold(0, 3, 1)


def test_scatter_refuses_a_position_named_twice_and_an_index_out_of_range(backend):
    x, twice = ag.zeros((3, 2)), ag.asarray(np.array([[0, 1], [0, 2]]))
    with pytest.raises(ValueError, match="names a position twice"):
        x.scatter(0, twice, ag.ones((2, 2)))
    assert x.scatter_add(0, twice, ag.ones((2, 2))).tolist() == [[2.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
    with pytest.raises(IndexError, match="must lie in"):
        x.scatter_add(0, ag.asarray(np.array([[3, 0]])), ag.ones((1, 2)))


# --- running extremes and log-sum-exp ---------------------------------------------------------
NAN = float("nan")
# ties, a NaN met midway and -inf entries, along both dims
RUNNING = np.array([[1.0, 3.0, 3.0, 2.0, 3.0, 0.5], [4.0, 4.0, -1.0, NAN, 9.0, 4.0], [2.0, -3.0, -3.0, 5.0, -3.0, 7.0]])


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_running_extremes_give_values_and_indices_as_pytorch(float64_backend, name, dim):
    ours = ag.tensor(RUNNING, dtype="float64", requires_grad=True)
    theirs = torch.tensor(RUNNING, dtype=torch.float64, requires_grad=True)
    values, indices = getattr(ours, name)(dim)
    expected = getattr(theirs, name)(dim)
    assert_close(values, expected.values.detach().numpy())
    np.testing.assert_array_equal(host(indices), expected.indices.numpy())  # the later of ties, the first NaN
    assert indices.dtype == ag.int64
    weighted_sum(values, ag).backward()
    weighted_sum(expected.values, torch).backward()
    assert_close(ours.grad, theirs.grad.numpy())


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_running_extremes_of_integers_and_of_a_scalar(backend, name):
    ints = np.array([[3, 1, 3, 7], [0, 0, -2, 5]])
    values, indices = getattr(ag.asarray(ints), name)(1)
    expected = getattr(torch.tensor(ints), name)(1)
    assert values.tolist() == expected.values.tolist() and indices.tolist() == expected.indices.tolist()
    values, indices = getattr(ag.asarray(2.5), name)(0)
    assert values.shape == () and values.item() == 2.5 and indices.item() == 0


LOG_VALUES = np.array([[-1000.0, 0.0, 1000.0, 1000.0, -5.0], [0.3, -0.7, 1.9, -2.2, 0.0]])


@pytest.mark.parametrize("dim", [0, 1])
def test_logcumsumexp_is_stable_and_its_gradient_matches_pytorch(float64_backend, dim):
    ours = ag.tensor(LOG_VALUES, dtype="float64", requires_grad=True)
    theirs = torch.tensor(LOG_VALUES, dtype=torch.float64, requires_grad=True)
    got, expected = ours.logcumsumexp(dim), theirs.logcumsumexp(dim)
    assert np.isfinite(host(got)).all()
    assert_close(got, expected.detach().numpy())
    weighted_sum(got, ag).backward()
    weighted_sum(expected, torch).backward()
    assert_close(ours.grad, theirs.grad.numpy())


def test_logcumsumexp_through_minus_infinity_matches_pytorch(float64_backend):
    """Leading -inf entries give -inf and a nan gradient (0/0), later ones a zero gradient."""
    values = np.array([-np.inf, -np.inf, 1.0, -np.inf, 2.0])
    ours = ag.tensor(values, dtype="float64", requires_grad=True)
    theirs = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    got, expected = ours.logcumsumexp(0), theirs.logcumsumexp(0)
    assert_close(got, expected.detach().numpy())
    weighted_sum(got, ag).backward()
    weighted_sum(expected, torch).backward()
    assert_close(ours.grad, theirs.grad.numpy())  # nan where torch gives nan (assert_allclose: equal_nan)


def test_logcumsumexp_refuses_integers(backend):
    with pytest.raises(TypeError, match="floating-point"):
        ag.arange(3).logcumsumexp(0)


# --- leaving the graph ----------------------------------------------------------------------------
LEAVING = {
    "np.asarray": np.asarray,
    "np.exp": np.exp,
    "np.array": np.array,
    "numpy()": lambda t: t.numpy(),
}


@pytest.mark.parametrize("name", LEAVING)
def test_a_tensor_that_requires_grad_does_not_leave_the_graph_silently(backend, name):
    """As PyTorch: numpy refuses a tensor that requires grad, saying to detach it first."""
    ours = ag.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"requires grad.*detach\(\)\.numpy\(\)"):
        LEAVING[name](ours)
    with pytest.raises(RuntimeError, match="requires grad"):
        LEAVING[name](torch.tensor([1.0, 2.0], requires_grad=True))
    with pytest.raises(RuntimeError, match="requires grad"):
        LEAVING[name](ours * 2)  # made from one that requires grad
    np.testing.assert_array_equal(LEAVING[name](ours.detach()), LEAVING[name](torch.tensor([1.0, 2.0])))


def test_python_values_still_leave_the_graph_as_in_pytorch(backend):
    ours = ag.tensor([1.5, 2.0], requires_grad=True)
    assert ours.numpy(force=True).tolist() == torch.tensor([1.5, 2.0], requires_grad=True).numpy(force=True).tolist()
    assert ours.tolist() == [1.5, 2.0] and ours[0].item() == 1.5 and float(ours[0]) == 1.5 and int(ours[1]) == 2
    with ag.no_grad():
        assert np.asarray(ours * 2).tolist() == [3.0, 4.0]  # made outside the graph, it does not require grad


# --- scatter_reduce and the index family ----------------------------------------------------------
BASE = np.array([[5.0, 2.0, 3.0, 0.0], [4.0, 5.0, 6.0, -1.0], [0.5, 7.0, -2.0, 2.0]])
SOURCE = np.array([[5.0, 5.0, 0.0, 9.0], [5.0, 2.0, 6.0, 3.0], [-4.0, 0.0, 1.0, 8.0]])
# along dim 0: positions named twice and three times, and some never (row 2 of column 3)
REDUCE_INDEX = np.array([[0, 0, 1, 1], [1, 0, 1, 0], [0, 2, 1, 1]])


# (dim, index): positions named once, twice and three times, and some never
REDUCE_CASES = {
    "dim0": (0, REDUCE_INDEX),
    "dim1": (1, np.array([[3, 0, 3, 1], [0, 0, 2, 2], [1, 3, 3, 3]])),
    "dim0-smaller-index": (0, REDUCE_INDEX[:2, :3]),
}


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("case", REDUCE_CASES)
def test_scatter_reduce_matches_pytorch(float64_backend, reduce, include_self, case):
    dim, index = REDUCE_CASES[case]
    smaller = index.shape != SOURCE.shape  # PyTorch's backward refuses a src larger than the index
    results = []
    for module in (ag, torch):
        x, src = (module.tensor(a, dtype=module.float64, requires_grad=True) for a in (BASE, SOURCE))
        out = x.scatter_reduce(
            dim,
            module.tensor(index),
            src[: index.shape[0], : index.shape[1]] if smaller and module is torch else src,
            reduce,
            include_self=include_self,
        )
        weighted_sum(out, module).backward()
        results.append([host(t) for t in (out, x.grad, src.grad)])
    (got, grad_x, grad_src), (expected, want_x, want_src) = results
    assert_close(got, expected)
    assert_close(grad_x, want_x)
    if include_self or reduce not in ("amax", "amin"):
        assert_close(grad_src, want_src)
    else:  # PyTorch counts a left-out self equal to the extreme among the ties; it takes no share here
        np.testing.assert_array_equal(grad_src != 0, want_src != 0)


def test_scatter_reduce_gradient_by_finite_differences(float64_backend):
    index = ag.asarray(REDUCE_INDEX)
    for reduce in ("prod", "mean", "amax"):
        source = SOURCE + np.arange(SOURCE.size).reshape(SOURCE.shape) * 0.01  # no ties: differentiable
        assert ag.gradcheck(
            lambda x, s, r=reduce: x.scatter_reduce(0, index, s, r, include_self=False),
            [
                ag.tensor(BASE, dtype="float64", requires_grad=True),
                ag.tensor(source, dtype="float64", requires_grad=True),
            ],
        )


def test_scatter_reduce_of_integers_and_bad_reduce(backend):
    x, index, src = np.array([1, 8, 3]), np.array([0, 0, 1, 1]), np.array([4, 7, -3, 2])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        got = ag.asarray(x).scatter_reduce(0, ag.asarray(index), ag.asarray(src), reduce)
        assert (
            got.tolist() == torch.tensor(x).scatter_reduce(0, torch.tensor(index), torch.tensor(src), reduce).tolist()
        )
    with pytest.raises(ValueError, match="reduce must be one of"):
        ag.asarray(x).scatter_reduce(0, ag.asarray(index), ag.asarray(src), "max")


INDEX_METHODS = {
    "index_add": lambda t, m: t.index_add(1, m.tensor(np.array([3, 0, 3])), t[:, :3] * 10.0),
    "index_add_alpha": lambda t, m: t.index_add(0, m.tensor(np.array([2, 2])), t[:2] * 3.0, alpha=-0.5),
    "index_copy": lambda t, m: t.index_copy(1, m.tensor(np.array([3, 0])), t[:, 1:3] * 10.0),
    "index_fill": lambda t, m: t.index_fill(1, m.tensor(np.array([1, 3, 1])), -7.0),
    "masked_fill": lambda t, m: t.masked_fill(m.tensor(np.array([True, False, False, True])), 0.5),
    "masked_scatter": lambda t, m: t.masked_scatter(m.tensor(MATRIX > 2.0), t.flip(0) * 10.0),
}


@pytest.mark.parametrize("name", INDEX_METHODS)
def test_index_methods_match_pytorch(float64_backend, name):
    ours = ag.tensor(MATRIX, dtype="float64", requires_grad=True)
    theirs = torch.tensor(MATRIX, dtype=torch.float64, requires_grad=True)
    got, expected = INDEX_METHODS[name](ours, ag), INDEX_METHODS[name](theirs, torch)
    assert_close(got, expected.detach().numpy())
    weighted_sum(got, ag).backward()
    weighted_sum(expected, torch).backward()
    assert_close(ours.grad, theirs.grad.numpy())


def test_masked_scatter_refuses_a_short_source(backend):
    with pytest.raises(ValueError, match="selects 3 elements but source has 2"):
        ag.zeros(4).masked_scatter(ag.asarray([True, True, False, True]), ag.ones(2))
