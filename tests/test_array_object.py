"""The Tensor as the standard's array object, and one promotion rule on every backend."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from array_api_compat import array_namespace

import autograd_core as ag
from helpers import assert_close


def test_namespace_is_autograd_core_on_every_backend(backend):
    x = ag.asarray([1.0, 2.0])
    assert x.__array_namespace__() is ag
    assert array_namespace(x) is ag
    assert ag.__array_api_version__ == "2024.12"
    with pytest.raises(ValueError, match="api_version"):
        x.__array_namespace__(api_version="2099.01")


def test_asarray_keeps_a_tensor_and_its_graph(backend):
    x = ag.asarray([1.0, 2.0])
    x.requires_grad_()
    assert ag.asarray(x) is x
    y = ag.asarray(x * 3.0)
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


ARITHMETIC = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod, operator.pow]
COMPARISONS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]
BITWISE = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]


@pytest.mark.parametrize("op", ARITHMETIC + COMPARISONS, ids=lambda op: op.__name__)
def test_operators_and_their_reflections_match_numpy(backend, op):
    a, b = np.array([1.5, -2.0, 3.25], dtype=np.float32), np.array([0.5, 4.0, -1.5], dtype=np.float32)
    np.testing.assert_allclose(op(ag.asarray(a), ag.asarray(b)).numpy(), op(a, b), rtol=1e-6)
    np.testing.assert_allclose(op(ag.asarray(a), 2.0).numpy(), op(a, np.float32(2.0)), rtol=1e-6)
    np.testing.assert_allclose(op(2.0, ag.asarray(b)).numpy(), op(np.float32(2.0), b), rtol=1e-6)


@pytest.mark.parametrize("op", BITWISE, ids=lambda op: op.__name__)
def test_bitwise_operators_match_numpy(backend, op):
    a, b = np.array([5, 12, 7], dtype=np.int64), np.array([3, 1, 2], dtype=np.int64)
    np.testing.assert_array_equal(op(ag.asarray(a), ag.asarray(b)).numpy(), op(a, b))
    np.testing.assert_array_equal((~ag.asarray(a)).numpy(), ~a)
    m = np.array([True, False, True])
    np.testing.assert_array_equal((~ag.asarray(m)).numpy(), ~m)


IN_PLACE = [
    (operator.iadd, operator.add),
    (operator.isub, operator.sub),
    (operator.imul, operator.mul),
    (operator.itruediv, operator.truediv),
    (operator.ipow, operator.pow),
]


@pytest.mark.parametrize(("in_place", "op"), IN_PLACE, ids=lambda op: op.__name__)
def test_in_place_operators_keep_the_object_and_dtype(backend, in_place, op):
    x = ag.asarray([1.0, 2.0, 4.0])
    assert in_place(x, 2.0) is x and x.dtype == ag.float32
    np.testing.assert_allclose(x.numpy(), op(np.array([1.0, 2.0, 4.0], dtype=np.float32), 2.0))


def test_matmul_operators(backend):
    a, b = np.arange(6.0).reshape(2, 3), np.arange(3.0)
    np.testing.assert_allclose((ag.asarray(a) @ ag.asarray(b)).numpy(), a @ b)


def test_array_attributes(backend):
    x = ag.zeros((2, 3, 4))
    assert (x.ndim, x.shape, x.size, x.dtype) == (3, (2, 3, 4), 24, ag.float32)
    assert x.size() == (2, 3, 4) and x.size(1) == 3  # PyTorch's method still works
    assert x.mT.shape == (2, 4, 3)
    assert ag.zeros((2, 3)).T.shape == (3, 2)
    assert x.to_device(x.device) is x


def test_scalar_conversions(backend):
    assert float(ag.asarray(2.5)) == 2.5
    assert int(ag.asarray(3)) == 3
    assert bool(ag.asarray(True)) is True
    assert complex(ag.asarray(1.5)) == 1.5 + 0j
    assert [10, 20, 30][ag.asarray(1)] == 20  # __index__
    with pytest.raises(TypeError, match="integer"):
        operator.index(ag.asarray(1.0))
    with pytest.raises(TypeError, match="one element"):
        float(ag.asarray([1.0, 2.0]))


def test_numpy_gets_a_real_array(backend):
    host = np.asarray(ag.asarray([[1.0, 2.0], [3.0, 4.0]]))
    assert host.dtype == np.float32 and host.shape == (2, 2)
    np.testing.assert_array_equal(np.from_dlpack(ag.asarray([1.0, 2.0])), [1.0, 2.0])


def test_iteration_stops_at_the_end_on_every_backend(backend):
    x = ag.asarray([1.0, 2.0, 3.0])
    assert [t.item() for t in x] == [1.0, 2.0, 3.0]
    assert 2.0 in x and 5.0 not in x
    with pytest.raises(IndexError):
        x[3]
    with pytest.raises(IndexError):
        x[-4]


def test_boolean_mask_indexing_and_its_gradient(float64_backend):
    x = ag.asarray([1.0, -2.0, 3.0, -4.0], dtype=ag.float64)
    x.requires_grad_()
    mask = x > 0
    picked = x[mask]
    assert picked.tolist() == [1.0, 3.0]
    (picked * ag.asarray([10.0, 100.0], dtype=ag.float64)).sum().backward()
    assert x.grad.tolist() == [10.0, 0.0, 100.0, 0.0]


def test_boolean_mask_assignment(backend):
    x = ag.asarray([1.0, -2.0, 3.0, -4.0])
    x[x < 0] = 0.0
    assert x.tolist() == [1.0, 0.0, 3.0, 0.0]


# --- one promotion rule on every backend -------------------------------------------------------
PROMOTIONS = [
    # (left, right, expected): tensors given as (values, dtype), scalars as Python values
    (([1, 2], "int64"), 0.5, "float32"),  # PyTorch's choice: the default float dtype
    (([1, 2], "int32"), 2, "int32"),
    (([True, False], "bool"), 1, "int64"),
    (([1.0], "float32"), np.float64(2.0), "float32"),  # a numpy scalar is a Python scalar
    (([1.0], "float32"), ([2.0], "float64"), "float64"),
    (([1], "int8"), ([2], "uint8"), "int16"),
    (([1], "int64"), ([2.0], "float32"), "float32"),
]


@pytest.mark.parametrize(
    ("left", "right", "expected"), PROMOTIONS, ids=[f"{i}-{p[2]}" for i, p in enumerate(PROMOTIONS)]
)
def test_promotion_agrees_across_backends(float64_backend, left, right, expected):
    def make(v):
        return ag.asarray(v[0], dtype=v[1]) if isinstance(v, tuple) else v

    for op in (operator.add, operator.mul):
        assert op(make(left), make(right)).dtype == expected
        assert op(make(right), make(left)).dtype == expected


def test_integer_true_division_gives_the_default_float(backend):
    assert (ag.asarray([1, 2]) / 2).dtype == ag.float32
    assert (ag.asarray([1, 2]) / ag.asarray([2, 4])).tolist() == [0.5, 0.5]


def test_a_float32_leaf_gets_a_float32_gradient_from_a_float64_use(float64_backend):
    w = ag.asarray([1.0, 2.0], dtype=ag.float32)
    w.requires_grad_()
    x = ag.asarray([0.1, 0.2], dtype=ag.float64)
    (w * x).sum().backward()
    assert w.grad.dtype == ag.float32
    assert_close(w.grad, np.array([0.1, 0.2]), "float32")


def test_pytorch_style_methods_match_torchs(backend):
    torch = pytest.importorskip("torch")
    values = np.array([[1.5, -2.5, 0.25], [0.2, 3.0, -0.75]], dtype=np.float32)
    x, t = ag.asarray(values), torch.tensor(values)
    for name in ("floor", "ceil", "round", "trunc", "sign", "square", "reciprocal", "tan", "expm1", "exp2", "isnan"):
        np.testing.assert_allclose(getattr(x, name)().numpy(), getattr(t, name)().numpy(), rtol=1e-6, err_msg=name)
    np.testing.assert_array_equal(x.argmax(dim=1).numpy(), t.argmax(dim=1).numpy())
    np.testing.assert_array_equal(x.flip(0).numpy(), t.flip(0).numpy())
    np.testing.assert_allclose(x.cumsum(1).numpy(), t.cumsum(1).numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.prod(dim=0).numpy(), t.prod(dim=0).numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.std().numpy(), t.std().numpy(), rtol=1e-6)


def test_integer_arrays_beside_ints_none_and_ellipsis_index_as_numpy_does(backend):
    a = np.arange(24.0).reshape(2, 3, 4)
    x, i = ag.asarray(a), ag.asarray([0, 2])
    for key, expected in [
        ((1, i), a[1, [0, 2]]),
        ((i[:1], 1), a[[0], 1]),
        ((None, slice(None), i), a[None, :, [0, 2]]),
        ((slice(None), None, i), a[:, None, [0, 2]]),
        ((Ellipsis, i), a[..., [0, 2]]),
        (True, a[True]),
        (False, a[False]),
    ]:
        np.testing.assert_array_equal(x[key].numpy(), expected)
    np.testing.assert_array_equal(x[ag.asarray(False)].numpy(), a[np.asarray(False)])


def test_boolean_mask_assignment_of_one_value_per_position_and_its_gradient(float64_backend):
    x = ag.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=ag.float64)
    values = ag.asarray([7.0, 8.0, 9.0], dtype=ag.float64)
    x.requires_grad_(), values.requires_grad_()
    y = x * 1.0
    y[ag.asarray([True, False])] = values * 2.0
    assert y.tolist() == [[14.0, 16.0, 18.0], [4.0, 5.0, 6.0]]
    (y * ag.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=ag.float64)).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0], [4.0, 5.0, 6.0]]
    assert values.grad.tolist() == [2.0, 4.0, 6.0]
