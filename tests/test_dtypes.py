"""The standard's data type functions (isdtype, result_type, can_cast, finfo, iinfo) and the
inspection namespace, checked against array_api_strict (the standard's tables), torch (where
the standard leaves promotion open) and numpy (machine limits)."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import types

import numpy as np
import pytest

import autograd_core as ag
import backends
from autograd_core.graph import dtypes as D
from autograd_core.ops.info import __array_namespace_info__

xps = pytest.importorskip("array_api_strict")
torch = pytest.importorskip("torch")

STANDARD = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
ALL = [*STANDARD, "float16"]
KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"]
SIGNED = ["int8", "int16", "int32", "int64"]
SCALARS = [True, 3, 2.5, 1j]


def strict_result(*args):
    """array_api_strict's result_type of dtype names and Python scalars, as a name, or None
    where the standard defines none (it knows no float16)."""
    if "float16" in args:
        return None
    try:
        result = xps.result_type(*(getattr(xps, a) if isinstance(a, str) else a for a in args))
    except TypeError:
        return None
    return str(result).removeprefix("array_api_strict.")


def torch_result(*args):
    """torch's promotion of dtype names (as 1-d tensors) and Python scalars, as a name."""
    operands = [torch.empty(1, dtype=getattr(torch, a)) if isinstance(a, str) else a for a in args]
    try:
        return str(torch.result_type(*operands)).removeprefix("torch.")
    except RuntimeError as e:
        pytest.skip(f"torch has no promotion here: {e}")


def ours(*args):
    return D.result_type(*(D.DTYPES[a] if isinstance(a, str) else a for a in args)).name


# --- the dtype objects -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_every_dtype_is_a_module_constant_with_its_layout(name):
    dtype = getattr(D, name)
    assert dtype == name and dtype is D.DTYPES[name] is D.as_dtype(name) and D.DType(name) == dtype
    assert dtype.bits == np.dtype(name).itemsize * 8
    assert dtype.is_floating_point == (name in ("float16", "float32", "float64"))
    assert dtype.is_complex == name.startswith("complex")


def test_the_standard_dtypes_are_the_thirteen_of_the_standard():
    assert list(D.STANDARD_DTYPES) == STANDARD


# --- isdtype -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", STANDARD)
def test_isdtype_kinds_match_the_standard(name, kind):
    assert D.isdtype(getattr(D, name), kind) == xps.isdtype(getattr(xps, name), kind)


@pytest.mark.parametrize("kind", [("bool", "float64"), ("unsigned integer", "complex floating"), ("int8",)])
@pytest.mark.parametrize("name", STANDARD)
def test_isdtype_dtypes_and_tuples_match_the_standard(name, kind):
    def as_kind(k, ns):
        return getattr(ns, k) if k not in KINDS else k

    expected = xps.isdtype(getattr(xps, name), tuple(as_kind(k, xps) for k in kind))
    assert D.isdtype(getattr(D, name), tuple(as_kind(k, D) for k in kind)) == expected
    if len(kind) == 1 and kind[0] not in KINDS:
        assert D.isdtype(getattr(D, name), getattr(D, kind[0])) == expected


def test_float16_is_an_extension_of_real_floating():
    assert D.isdtype(D.float16, "real floating") and D.isdtype(D.float16, "numeric")
    assert not D.isdtype(D.float16, ("integral", "complex floating", "bool"))


@pytest.mark.parametrize(
    "kind, error",
    [
        ("float32", ValueError),
        ("floating", ValueError),
        (3, TypeError),
        (("integral", ("bool",)), TypeError),
        (None, TypeError),
    ],
)
def test_isdtype_refuses_a_bad_kind(kind, error):
    with pytest.raises(error, match="kind"):
        D.isdtype(D.float32, kind)


# --- result_type ------------------------------------------------------------------------------------------

PAIRS = list(itertools.product(ALL, repeat=2))
STANDARD_PAIRS = [p for p in PAIRS if strict_result(*p) is not None]
UINT64_WITH_SIGNED = [p for p in PAIRS if set(p) & {"uint64"} and set(p) & set(SIGNED)]
OPEN_PAIRS = [p for p in PAIRS if p not in STANDARD_PAIRS and p not in UINT64_WITH_SIGNED]


@pytest.mark.parametrize("a, b", STANDARD_PAIRS)
def test_result_type_follows_the_standard_table(a, b):
    assert ours(a, b) == strict_result(a, b)


@pytest.mark.parametrize("a, b", UINT64_WITH_SIGNED)
def test_uint64_with_a_signed_integer_has_no_result_type(a, b):
    with pytest.raises(TypeError, match="uint64 and int"):
        ours(a, b)
    assert not D.can_cast(getattr(D, a), getattr(D, b))


@pytest.mark.parametrize("a, b", OPEN_PAIRS)
def test_result_type_across_kinds_follows_torch(a, b):
    assert ours(a, b) == torch_result(a, b)


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("other, expected", [("bool", None), ("complex64", "complex64"), ("complex128", "complex128")])
def test_wide_unsigned_across_kinds(name, other, expected):
    # torch refuses these pairs; the rule is the one for every other integer: bool gives
    # way to the number, an integer to the complex dtype
    assert ours(other, name) == ours(name, other) == (expected or name)


@pytest.mark.parametrize(
    "names",
    [
        ("uint8", "int8", "float16"),
        ("bool", "int32", "complex64"),
        ("float64", "complex64", "int8"),
        ("int16", "uint8", "bool"),
        ("float16", "float32", "complex64"),
        ("uint32", "float32", "bool"),
    ],
)
def test_result_type_of_many_is_torch_promotion_in_any_order(names):
    expected = str(functools.reduce(torch.promote_types, (getattr(torch, n) for n in names))).removeprefix("torch.")
    assert {ours(*p) for p in itertools.permutations(names)} == {expected}


@pytest.mark.parametrize("scalar", SCALARS)
@pytest.mark.parametrize("name", STANDARD)
def test_python_scalars_are_weak_as_in_torch(name, scalar):
    assert ours(name, scalar) == ours(scalar, name) == torch_result(name, scalar)


@pytest.mark.parametrize("name, scalar", [(n, s) for n in STANDARD for s in SCALARS if strict_result(n, s)])
def test_python_scalars_follow_the_standard_where_it_defines_them(name, scalar):
    assert ours(name, scalar) == strict_result(name, scalar)


@pytest.mark.parametrize("scalar, expected", [(True, "float16"), (3, "float16"), (2.5, "float16"), (1j, "complex64")])
def test_float16_with_a_scalar(scalar, expected):
    # torch gives complex32 for float16 with a complex scalar; there is no such dtype here
    assert ours("float16", scalar) == expected


@pytest.mark.parametrize(
    "args, expected",
    [
        ((True,), "bool"),
        ((3,), "int64"),
        ((2.5,), "float32"),
        ((1j,), "complex64"),
        ((True, 3), "int64"),
        ((3, 2.5), "float32"),
        ((2.5, 1j), "complex64"),
        ((True, 1j), "complex64"),
    ],
)
def test_scalars_alone_give_the_default_dtypes(args, expected):
    assert ours(*args) == expected
    if len(args) == 2:
        assert torch_result(*args) == expected


def test_result_type_reads_the_dtype_of_arrays_and_names():
    array = types.SimpleNamespace(dtype=D.int8)
    assert D.result_type(array, "uint8", 2.5) == D.float32
    assert D.result_type(ag.tensor([1.0, 2.0]), 1j) == D.complex64


@pytest.mark.parametrize("args, error", [((), ValueError), ((np.float32,), TypeError), (("float8",), TypeError)])
def test_result_type_refuses_bad_arguments(args, error):
    with pytest.raises(error):
        D.result_type(*args)


# --- can_cast ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("a, b", list(itertools.product(STANDARD, repeat=2)))
def test_can_cast_matches_the_standard(a, b):
    assert D.can_cast(getattr(D, a), getattr(D, b)) == xps.can_cast(getattr(xps, a), getattr(xps, b))


def test_can_cast_takes_arrays_and_extends_to_float16():
    assert D.can_cast(types.SimpleNamespace(dtype=D.int8), "int16")
    assert D.can_cast(D.float16, D.float32) and D.can_cast(D.float16, D.complex64)
    assert not D.can_cast(D.float32, D.float16) and not D.can_cast(D.int8, D.float16)


# --- finfo and iinfo ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "complex64", "complex128"])
def test_finfo_matches_numpy(name):
    info, expected = D.finfo(name), np.finfo(name)
    assert (info.bits, info.eps, info.max, info.min, info.smallest_normal) == (
        expected.bits,
        float(expected.eps),
        float(expected.max),
        float(expected.min),
        float(expected.smallest_normal),
    )
    assert info.dtype == str(expected.dtype)  # complex: its real component dtype, as the standard says
    assert all(isinstance(v, float) for v in (info.eps, info.max, info.min, info.smallest_normal))


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
def test_iinfo_matches_numpy(name):
    info, expected = D.iinfo(name), np.iinfo(name)
    assert (info.bits, info.max, info.min, info.dtype) == (expected.bits, expected.max, expected.min, name)


def test_info_takes_dtypes_names_and_arrays_and_is_frozen():
    assert D.finfo(D.float32) == D.finfo("float32") == D.finfo(ag.tensor([1.0]))
    assert D.iinfo(types.SimpleNamespace(dtype=D.uint8)).max == 255
    with pytest.raises(dataclasses.FrozenInstanceError):
        D.finfo(D.float32).eps = 1.0


@pytest.mark.parametrize(
    "function, name, hint",
    [
        (D.finfo, "int32", "use iinfo"),
        (D.iinfo, "float32", "use finfo"),
        (D.iinfo, "complex64", "use finfo"),
        (D.finfo, "bool", "bool"),
        (D.iinfo, "bool", "bool"),
    ],
)
def test_info_of_the_wrong_kind_says_which_to_use(function, name, hint):
    with pytest.raises(ValueError, match=hint):
        function(name)


# --- __array_namespace_info__ -----------------------------------------------------------------------------------


def test_capabilities_and_default_dtypes():
    info = __array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}
    assert info.default_dtypes() == {
        "real floating": D.float32,
        "complex floating": D.complex64,
        "integral": D.int64,
        "indexing": D.int64,
    }


def test_default_dtypes_are_what_creation_makes(backend):
    defaults = __array_namespace_info__().default_dtypes()
    assert ag.tensor([1.0]).dtype == defaults["real floating"]
    assert ag.tensor([1]).dtype == defaults["integral"]


def test_devices_are_the_current_backends(backend):
    info = __array_namespace_info__()
    assert info.default_device().backend is backend
    assert info.default_device() in info.devices()


def test_every_standard_dtype_round_trips_through_the_backend(backend):
    for name, dtype in __array_namespace_info__().dtypes().items():
        assert backend.dtype_name(backend.dtype(name)) == name == dtype


@pytest.mark.parametrize("kind", [None, *KINDS, ("bool", "complex floating")])
def test_dtypes_of_a_kind(backend, kind):
    found = __array_namespace_info__().dtypes(kind=kind)
    supported = backend._dtype_tables()[0]
    assert "float16" not in found
    assert found == {
        n: D.DTYPES[n] for n in STANDARD if n in supported and (kind is None or xps.isdtype(getattr(xps, n), kind))
    }


def fake_backend(without: set[str], supports_float64: bool = True) -> backends.Backend:
    """A numpy-based backend whose namespace lacks the dtypes in `without`."""
    namespace = types.SimpleNamespace(empty=np.empty, **{n: getattr(np, n) for n in ALL if n not in without})
    backend = backends.Backend(namespace, np.ndarray)
    backend.supports_float64 = supports_float64
    return backend


def test_dtypes_leave_out_what_the_backend_lacks():
    with backends.use(fake_backend({"complex64", "complex128", "uint64"})):
        info = __array_namespace_info__()
        assert set(info.dtypes()) == set(STANDARD) - {"complex64", "complex128", "uint64"}
        assert info.dtypes(kind="complex floating") == {}
    with backends.use(fake_backend(set(), supports_float64=False)):
        assert set(__array_namespace_info__().dtypes()) == set(STANDARD) - {"float64", "complex128"}
