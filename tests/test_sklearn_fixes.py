"""What scikit-learn's array-API code relies on, on every backend: the set functions return
sorted values (numpy 2.3's hash-based ones do not), numpy's integer scalars and 0-d integer
arrays index an assignment as ints do, booleans are written through a boolean mask, in-place
writes from several threads are never lost, and every in-place operator is differentiable as
its out-of-place form is (PyTorch is the oracle)."""

from __future__ import annotations

import operator
import sys
import threading

import numpy as np
import pytest
import torch

import autograd_core as ag
from helpers import assert_close, host

# numpy 2.3 and later give these values out of order from unique_values (a hash table)
INTEGERS = np.array([100000, -5, 3, 7, -100000, 2**40, 1, 0, 3, -5, -(2**40), 7])
NAN = float("nan")
FLOATS = np.array([3.5, NAN, -1e30, 2.0, NAN, 3.5, 0.25, -7.0, 1e30])  # each NaN is distinct
BOOLS = np.array([True, False, True, True])
SET_INPUTS = {"integers": INTEGERS, "floats with nan": FLOATS, "bools": BOOLS, "matrix": INTEGERS.reshape(3, 4)}


# --- the set functions -------------------------------------------------------------------------
@pytest.mark.parametrize("name", SET_INPUTS)
def test_set_functions_are_sorted_as_numpy_unique(backend, name):
    data = SET_INPUTS[name]
    values, indices, inverse, counts = np.unique(
        data, return_index=True, return_inverse=True, return_counts=True, equal_nan=False
    )
    x = ag.asarray(data)
    found = ag.unique_all(x)
    np.testing.assert_array_equal(host(ag.unique_values(x)), values)
    np.testing.assert_array_equal(host(found.values), values)
    np.testing.assert_array_equal(host(found.indices), indices)
    np.testing.assert_array_equal(host(found.inverse_indices), inverse.reshape(data.shape))
    np.testing.assert_array_equal(host(found.counts), counts)
    np.testing.assert_array_equal(host(ag.unique_counts(x).values), values)
    np.testing.assert_array_equal(host(ag.unique_counts(x).counts), counts)
    np.testing.assert_array_equal(host(ag.unique_inverse(x).values), values)
    np.testing.assert_array_equal(host(ag.unique_inverse(x).inverse_indices), inverse.reshape(data.shape))


@pytest.mark.parametrize("name", SET_INPUTS)
def test_tensor_unique_matches_pytorch(backend, name):
    data = SET_INPUTS[name]
    values, inverse, counts = ag.asarray(data).unique(return_inverse=True, return_counts=True)
    expected = torch.unique(torch.asarray(data), sorted=True, return_inverse=True, return_counts=True)
    for got, want in zip((values, inverse, counts), expected):
        np.testing.assert_array_equal(host(got), host(want))


# --- integer scalars as indices --------------------------------------------------------------
SCALAR_INDICES = {
    "np.int64": np.int64,
    "np.int32": np.int32,
    "np.int16": np.int16,
    "0-d numpy array": np.array,
    "0-d tensor": ag.asarray,
}


@pytest.mark.parametrize("kind", SCALAR_INDICES)
@pytest.mark.parametrize("key", [(1, 2), (2,), (-1, slice(1, 3)), (0, Ellipsis)], ids=["element", "row", "neg", "ell"])
def test_integer_scalars_index_as_ints(backend, kind, key):
    wrap = SCALAR_INDICES[kind]
    as_scalars = tuple(wrap(k) if isinstance(k, int) else k for k in key)
    x, expected = ag.reshape(ag.arange(12.0), (3, 4)), np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(host(x[as_scalars]), expected[key])
    x[as_scalars] = -1.0
    expected[key] = -1.0
    np.testing.assert_array_equal(host(x), expected)


def test_assignment_through_numpy_integer_scalar_is_differentiable(float64_backend):
    value = ag.tensor([1.0, 2.0, 3.0, 4.0], dtype="float64", requires_grad=True)
    x = ag.zeros((3, 4), dtype="float64")
    x[np.int64(1)] = value * 2.0
    x[np.int32(2), np.int64(0)] = value[np.int64(3)]
    (x * ag.reshape(ag.arange(12.0, dtype="float64"), (3, 4))).sum().backward()
    np.testing.assert_array_equal(host(value.grad), [8.0, 10.0, 12.0, 14.0 + 8.0])


@pytest.mark.parametrize(
    "key, error",
    [(np.float64(1.0), IndexError), (np.array(1.5), IndexError), (np.int64(3), IndexError), (np.int64(-4), IndexError)],
    ids=["np.float64", "0-d float array", "past the end", "before the start"],
)
def test_bad_scalar_index_is_refused(backend, key, error):
    x = ag.zeros((3, 4))
    with pytest.raises(error):
        x[key] = 1.0


# --- booleans written through a boolean mask ------------------------------------------------
MASK_WRITES = {
    "True": (np.zeros(4, bool), [True, False, True, False], lambda: True),
    "np.True_": (np.zeros(4, bool), [True, False, True, False], lambda: np.True_),
    "0-d bool tensor": (np.zeros(4, bool), [False, True, True, False], lambda: ag.asarray(True)),
    "one per position": (np.ones(4, bool), [True, True, False, True], lambda: ag.asarray([False, True, False])),
    "rows of a matrix": (
        np.zeros((3, 2), bool),
        [True, False, True],
        lambda: ag.asarray([[True, False], [False, True]]),
    ),
    "row broadcast": (np.zeros((3, 2), bool), [True, False, True], lambda: ag.asarray([False, True])),
    "2-d mask": (np.zeros((2, 2), bool), [[True, False], [True, True]], lambda: ag.asarray([True, False, True])),
    "integers": (np.arange(4), [True, False, True, False], lambda: ag.asarray([-7, 9])),
}


@pytest.mark.parametrize("name", MASK_WRITES)
def test_masked_write_of_any_dtype_matches_numpy(backend, name):
    start, mask, value = MASK_WRITES[name]
    x, expected = ag.asarray(start), start.copy()
    x[ag.asarray(mask)] = value()
    expected[np.array(mask)] = host(value())
    np.testing.assert_array_equal(host(x), expected)
    assert host(x).dtype == expected.dtype


# --- in-place writes from several threads --------------------------------------------------------
@pytest.fixture
def frequent_switches():
    """Threads switch every microsecond, so an unguarded read-modify-write would be interrupted."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def write_columns_together(x, column_value, threads: int = 8) -> None:
    """`threads` threads, started at once, each writing ``x[:, c] = column_value(c)`` for its own
    columns c (every `threads`-th)."""
    barrier, errors = threading.Barrier(threads), []

    def write(first: int) -> None:
        try:
            barrier.wait()
            for c in range(first, x.shape[1], threads):
                x[:, c] = column_value(c)
        except BaseException as e:  # noqa: BLE001 - re-raised in the main thread
            errors.append(e)

    workers = [threading.Thread(target=write, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if errors:
        raise errors[0]


@pytest.mark.parametrize("layout", ["tensor", "transposed view"])  # scikit-learn writes into empty(...).T
def test_no_write_from_threads_is_lost(backend, frequent_switches, layout):
    rows, columns = 8, 96 if backend.lazy else 1280  # a lazy backend's graph grows with each write
    for _ in range(3):
        x = ag.zeros((rows, columns)) if layout == "tensor" else ag.zeros((columns, rows)).T
        write_columns_together(x, lambda c: float(c + 1))
        np.testing.assert_array_equal(host(x), np.broadcast_to(np.arange(1.0, columns + 1), (rows, columns)))


def test_gradient_of_writes_from_threads(float64_backend, frequent_switches):
    rows, columns = 4, 48 if float64_backend.lazy else 256
    w = np.random.default_rng(0).standard_normal((rows, columns))
    weights = ag.tensor(w, dtype="float64", requires_grad=True)
    x = ag.zeros((rows, columns), dtype="float64")
    write_columns_together(x, lambda c: weights[:, c] * float(c + 1))
    (x * x).sum().backward()
    scale = np.arange(1.0, columns + 1)
    assert_close(x, w * scale)
    assert_close(weights.grad, 2 * w * scale**2)


# --- in-place operators differentiate as PyTorch's -------------------------------------------------
A = np.array([[1.3, 0.4, 2.2], [0.7, 1.9, 0.6], [1.1, 0.8, 1.5]])
B = np.array([[0.9, 1.7, 0.3], [1.2, 0.5, 2.4], [0.6, 1.4, 0.8]])


def differentiable_case(operation, use_torch: bool):
    """``y = a * 1`` changed by ``operation(y, b)``, and the gradients of a weighted sum of the
    result with respect to a and b: in PyTorch or here, in float64."""
    if use_torch:
        leaf, constant = (lambda d: torch.tensor(d, requires_grad=True)), torch.tensor
    else:
        leaf, constant = (lambda d: ag.tensor(d, dtype="float64", requires_grad=True)), ag.asarray
    a, b = leaf(A), leaf(B)
    y = operation(a * 1.0, b)
    (y * constant(np.linspace(0.5, 1.5, A.size).reshape(A.shape))).sum().backward()
    return y, a.grad, b.grad


def in_place(name: str):
    method = getattr(operator, name)  # operator.ipow etc.: the augmented assignment itself
    return lambda y, b: method(y, b)


DIFFERENTIABLE = {
    "iadd": in_place("iadd"),
    "isub": in_place("isub"),
    "imul": in_place("imul"),
    "itruediv": in_place("itruediv"),
    "imod": in_place("imod"),
    "ipow": in_place("ipow"),
    "ipow scalar": lambda y, b: operator.ipow(y, 3) * b,
    "imatmul": in_place("imatmul"),
    "polynomial kernel": lambda y, b: operator.ipow(operator.iadd(y @ b.T * 0.5, 1.0), 3),
    "exp_": lambda y, b: y.exp_() * b,
    "tanh_": lambda y, b: y.tanh_() * b,
    "sqrt_": lambda y, b: y.sqrt_() * b,
    "ipow of a view": lambda y, b: (operator.ipow(y[1:], b[1:]), y)[1],
    "exp_ of a view": lambda y, b: (y[:, 0:2].exp_(), y * b)[1],
}


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_in_place_operator_gradients_match_pytorch(float64_backend, name):
    ours = differentiable_case(DIFFERENTIABLE[name], use_torch=False)
    theirs = differentiable_case(DIFFERENTIABLE[name], use_torch=True)
    for got, want in zip(ours, theirs):
        assert_close(got, want)


def test_in_place_change_of_an_in_place_result_is_differentiable(float64_backend):
    """PyTorch refuses this (sigmoid's saved output is overwritten by ``*=``); here each in-place
    result keeps its own values, so the gradient is that of the same steps out of place."""

    def steps(a, b, in_place_ops: bool):
        y = a * 1.0
        if in_place_ops:
            y.sigmoid_()
            y *= b
            return y
        return ag.sigmoid(y) * b

    grads = []
    for in_place_ops in (True, False):
        a, b = (ag.tensor(d, dtype="float64", requires_grad=True) for d in (A, B))
        steps(a, b, in_place_ops).sum().backward()
        grads.append((a.grad, b.grad))
    expected = torch.func.grad(lambda a, b: (torch.sigmoid(a) * b).sum(), argnums=(0, 1))(
        torch.tensor(A), torch.tensor(B)
    )
    for got, reference, want in zip(grads[0], grads[1], expected):
        assert_close(got, want)
        assert_close(reference, want)


def test_in_place_pow_matches_finite_differences(float64_backend):
    def kernel(x):
        k = x @ x.T * 0.3
        k += 1.0
        k **= 3
        return k.sum()

    x = ag.tensor(A, dtype="float64", requires_grad=True)
    kernel(x).backward()
    steps = np.eye(A.size).reshape(A.size, *A.shape) * 1e-6
    differences = [(kernel(ag.asarray(A + s)) - kernel(ag.asarray(A - s))).item() / 2e-6 for s in steps]
    assert_close(x.grad, np.reshape(differences, A.shape), rtol=1e-6, atol=1e-8)


def test_output_read_by_a_later_op_is_still_checked(float64_backend):
    """The alias that keeps an in-place op's saved output apart does not hide a later change from
    the ops that saved the tensor itself."""
    x = ag.tensor(A, dtype="float64", requires_grad=True)
    y = x * 1.0
    y **= 2
    z = y * y
    with ag.no_grad():
        y += 1.0
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        z.sum().backward()


INTEGER_OPERATORS = ["ifloordiv", "iand", "ior", "ixor", "ilshift", "irshift", "imod", "iadd", "imul"]


@pytest.mark.parametrize("name", INTEGER_OPERATORS)
def test_in_place_integer_operators_match_pytorch(backend, name):
    a, b = np.array([[5, 12, 7], [9, 3, 14]]), np.array([[2, 3, 1], [4, 1, 2]])
    ours, theirs = ag.asarray(a), torch.asarray(a)
    result = getattr(operator, name)(ours, ag.asarray(b))
    expected = getattr(operator, name)(theirs, torch.asarray(b))
    assert result is ours
    np.testing.assert_array_equal(host(ours), host(expected))


def test_floor_division_in_place_matches_out_of_place(float64_backend):
    y = ag.asarray(A * 5, dtype="float64")
    y //= ag.asarray(B, dtype="float64")
    np.testing.assert_array_equal(host(y), host(torch.floor_divide(torch.tensor(A * 5), torch.tensor(B))))


# --- arrays handed to numpy and taken from it ---------------------------------------------------
def test_numpy_view_of_a_tensor_is_writable(backend):
    """scikit-learn's compiled kernels (chi2_kernel) take a writable buffer of ``np.asarray(t)``;
    an immutable library (jax) gives a read-only view, so a copy is made, as ``__array__`` says."""
    host = np.asarray(ag.asarray([[1.0, 2.0], [3.0, 4.0]]))
    assert host.flags.writeable
    memoryview(host)[0, 0] = 7.0  # what a typed memoryview of scikit-learn's does
    np.testing.assert_array_equal(host, [[7.0, 2.0], [3.0, 4.0]])


STRIDED = {
    "broadcast": lambda: np.broadcast_to(np.arange(4.0)[:, None], (4, 3)),
    "column of a matrix": lambda: np.arange(8.0).reshape(4, 2)[:, :1],
    "every other row": lambda: np.arange(8.0)[::2, None],
}


@pytest.mark.parametrize("name", STRIDED)
def test_from_dlpack_copies_what_the_library_cannot_share(backend, name):
    """scikit-learn moves numpy arrays to the namespace with from_dlpack; jax shares only compact
    layouts (and no read-only buffer), so the others are copied, as the standard allows."""
    source = STRIDED[name]()
    np.testing.assert_array_equal(host(ag.from_dlpack(source)), source)
