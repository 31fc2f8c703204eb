"""Odd arrays where tensors are made: dtypes no tensor holds are refused there, saying what to do,
and arrays in the other byte order are converted, on every entry point and backend.

PyTorch refuses the same dtypes (objects, strings, records, dates, float128) in `torch.tensor`; it
also refuses big-endian arrays ("conversion between byte orders is not supported"), which here
load converted, values unchanged, so that checkpoints written on big-endian machines read back.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import autograd_core as ag
import nn
from helpers import holds

ENTRY_POINTS = {
    "tensor": ag.tensor,
    "asarray": ag.asarray,
    "Tensor": ag.Tensor,
    "Parameter": nn.Parameter,
    "tensor as float32": lambda data: ag.tensor(data, dtype="float32"),
    "asarray as float32": lambda data: ag.asarray(data, dtype="float32"),
}

# data no tensor holds -> what the error names
REFUSED = {
    "object array of numbers": (np.array([1.0, 2.0], dtype=object), "Python objects"),
    "object array with a string": (np.array([1.0, "a"], dtype=object), "Python objects"),
    "list holding None": ([1.0, None], "Python objects"),
    "structured": (np.zeros(2, dtype=[("a", "f4"), ("b", "i4")]), "records"),
    "void": (np.zeros(2, dtype="V4"), "records"),
    "datetime64": (np.array(["2020-01-01", "2020-01-02"], dtype="M8[D]"), "datetime64"),
    "timedelta64": (np.array([1, 2], dtype="m8[s]"), "timedelta64"),
    "bytes": (np.array([b"1", b"2"]), "bytes strings"),
    "unicode": (np.array(["1", "2"]), "strings"),
    "list of strings": (["1.5", "2"], "strings"),
    "longdouble": (np.arange(2, dtype=np.longdouble), "extended precision"),
    "clongdouble": (np.arange(2, dtype=np.clongdouble), "extended precision"),
}
BYTE_SWAPPED = [">f4", ">f8", ">i2", ">i4", ">i8", ">u2", ">u4", ">u8", ">c8", ">c16"]


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("case", REFUSED)
def test_a_dtype_no_tensor_holds_is_refused_where_the_tensor_is_made(backend, case, entry):
    data, named = REFUSED[case]
    with pytest.raises(TypeError, match=named):
        ENTRY_POINTS[entry](data)


@pytest.mark.parametrize("case", [c for c in REFUSED if not c.startswith("list")])
def test_pytorch_refuses_these_arrays_too(case):
    data, _ = REFUSED[case]
    with pytest.raises(TypeError, match="can't convert np.ndarray"):
        torch.tensor(data)
    with pytest.raises(TypeError, match="can't convert np.ndarray"):
        torch.tensor(data, dtype=torch.float32)  # no silent conversion of dates or objects to numbers


@pytest.mark.parametrize("data", [[1.0, None], ["1.5", "2"]], ids=["None", "strings"])
def test_pytorch_refuses_python_lists_of_non_numbers_even_with_a_dtype(data):
    with pytest.raises((TypeError, ValueError, RuntimeError)):
        torch.tensor(data, dtype=torch.float32)


@pytest.mark.parametrize("entry", ["tensor", "asarray", "Tensor"])
@pytest.mark.parametrize("swapped", BYTE_SWAPPED)
def test_an_array_in_the_other_byte_order_is_converted_with_its_values(backend, swapped, entry):
    native = np.dtype(swapped).newbyteorder("=")
    values = np.array([0, 1, 7, 100], dtype=native)
    if not holds(backend, native.name):
        pytest.skip(f"{backend.name} holds no {native}")
    made = ENTRY_POINTS[entry](values.astype(swapped))
    assert made.dtype == native.name
    np.testing.assert_array_equal(made.numpy(), values)


def test_pytorch_refuses_the_other_byte_order_which_is_why_this_differs():
    with pytest.raises(ValueError, match="byte order"):
        torch.tensor(np.arange(3, dtype=">f8"))


def test_a_big_endian_parameter_trains(float64_backend):
    w = nn.Parameter(np.array([1.0, -2.0], dtype=">f8"))
    (w * w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, -4.0])


def test_asarray_without_copy_refuses_what_must_be_converted(backend):
    swapped = np.arange(3, dtype=">f8")
    with pytest.raises(ValueError, match="must be copied"):
        ag.asarray(swapped, copy=False)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool"])
def test_a_parameter_of_integers_cannot_require_grad_as_in_pytorch(backend, dtype):
    with pytest.raises(RuntimeError, match="floating point"):
        torch.nn.Parameter(torch.zeros(2, dtype=getattr(torch, dtype)))
    with pytest.raises(TypeError, match="only floating-point tensors can require gradients"):
        nn.Parameter(np.zeros(2, dtype=dtype))
    assert nn.Parameter(np.zeros(2, dtype=dtype), requires_grad=False).dtype == dtype


def test_a_dtype_the_backend_lacks_is_refused_when_made_not_later(backend):
    half = np.ones(3, dtype=np.float16)
    if holds(backend, "float16"):
        assert ag.tensor(half).dtype == "float16"
    else:
        with pytest.raises(TypeError, match=f"not supported by the {backend.name} backend, which holds float32"):
            ag.tensor(half)
    assert ag.tensor(half, dtype="float32").dtype == "float32"  # asked for: converted


def test_a_checkpoint_of_big_endian_arrays_reads_back(float64_backend, tmp_path):
    weights = np.array([[1.5, -2.0, 0.25]], dtype=">f8")
    bias = np.array([3.0], dtype=">f8")
    np.savez(tmp_path / "np.npz", weight=weights, bias=bias)
    nn.save({"weight": weights, "bias": bias}, tmp_path / "ours.npz")
    for name in ("np.npz", "ours.npz"):
        model = nn.Linear(3, 1).to(dtype="float64")
        model.load_state_dict(nn.load(tmp_path / name))
        out = model(ag.tensor([[1.0, 1.0, 1.0]], dtype="float64"))
        assert out.tolist() == [[1.5 - 2.0 + 0.25 + 3.0]]


@pytest.mark.parametrize("entry", ["tensor", "asarray"])
def test_an_array_of_a_dtype_numpy_lacks_is_refused_saying_so(backend, entry):
    bfloat16 = torch.zeros(2, dtype=torch.bfloat16)
    with pytest.raises(TypeError, match=r"dtype torch.bfloat16 .*convert it to a standard dtype"):
        ENTRY_POINTS[entry](bfloat16)


ANY_DTYPE = st.one_of(
    hnp.scalar_dtypes(),
    hnp.integer_dtypes(endianness="?"),
    hnp.unsigned_integer_dtypes(endianness="?"),
    hnp.floating_dtypes(endianness="?"),
    hnp.complex_number_dtypes(endianness="?"),
    hnp.datetime64_dtypes(endianness="?"),
    hnp.byte_string_dtypes(),
    hnp.unicode_string_dtypes(),
    hnp.array_dtypes(),
    st.just(np.dtype(object)),
    st.just(np.dtype(np.longdouble)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), dtype=ANY_DTYPE, entry=st.sampled_from(["tensor", "asarray", "Tensor"]))
def test_any_numpy_array_becomes_its_values_or_is_refused_at_once(backend, data, dtype, entry):
    """Whatever the dtype: a tensor of the same values in the same (native) dtype, or a TypeError
    saying what cannot be held, never another error or other numbers."""
    values = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3)))
    try:
        made = ENTRY_POINTS[entry](values)
    except TypeError as e:
        assert "cannot make a tensor" in str(e) or f"not supported by the {backend.name} backend" in str(e)
        return
    native = values.astype(values.dtype.newbyteorder("="))
    assert made.dtype == native.dtype.name and made.shape == values.shape
    np.testing.assert_array_equal(made.numpy(), native)


def test_arrays_entering_through_an_op_are_converted_or_refused_the_same_way(float64_backend):
    t = ag.tensor([1.0, 2.0, 3.0], dtype="float64")
    swapped = np.array([0.5, 1.0, 2.0], dtype=">f8")
    np.testing.assert_array_equal((t + swapped).numpy(), [1.5, 3.0, 5.0])
    np.testing.assert_array_equal((swapped * t).numpy(), [0.5, 2.0, 6.0])
    np.testing.assert_array_equal(ag.where(np.array([True, False, True]), t, swapped).numpy(), [1.0, 1.0, 3.0])
    with pytest.raises(TypeError, match="Python objects"):
        t + np.array([1.0, None, 2.0], dtype=object)
    with pytest.raises(TypeError, match="datetime64"):
        t * np.array(["2020-01-01"] * 3, dtype="M8[D]")
