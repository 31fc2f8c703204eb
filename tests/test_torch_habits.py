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
    weights = WEIGHTS.ravel()[: int(np.prod(t.shape))].reshape(tuple(t.shape))
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
