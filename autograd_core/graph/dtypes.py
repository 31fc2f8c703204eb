"""The framework's dtypes: names from the array API standard, mapped to each backend's own.

Besides the dtype objects this module holds the standard's data type functions, written in
pure Python so that every backend promotes, casts and reports limits the same way:
`isdtype`, `result_type`, `can_cast`, `finfo` and `iinfo`.

float16 is an extension: a "real floating" dtype below float32 in the promotion lattice.
"""

from __future__ import annotations

import builtins
import math
from dataclasses import dataclass
from typing import Any


class DType:
    """A dtype that means the same thing on every backend.

    >>> import autograd_core as ag
    >>> ag.tensor([1.0, 2.0]).dtype
    autograd_core.float32
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"autograd_core.{self.name}"

    def __eq__(self, other: object) -> builtins.bool:
        if isinstance(other, str):
            return other == self.name
        return isinstance(other, DType) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    @property
    def kind(self) -> str:
        """The standard's kind: ``"bool"``, ``"signed integer"``, ``"unsigned integer"``,
        ``"real floating"`` or ``"complex floating"``.

        >>> int8.kind
        'signed integer'
        """
        return _LAYOUT[self.name][0]

    @property
    def bits(self) -> int:
        """Bits one element occupies (a complex number: both components).

        >>> complex64.bits
        64
        """
        return _LAYOUT[self.name][1]

    @property
    def is_floating_point(self) -> builtins.bool:
        """Whether this is a real floating dtype (float16/32/64; complex dtypes are not)."""
        return self.kind == "real floating"

    @property
    def is_complex(self) -> builtins.bool:
        """Whether this is a complex floating dtype (complex64/128)."""
        return self.kind == "complex floating"


# name -> (kind, bits): everything the functions below need to know about a dtype
_LAYOUT: dict[str, tuple[str, int]] = {
    "bool": ("bool", 8),
    **{f"int{b}": ("signed integer", b) for b in (8, 16, 32, 64)},
    **{f"uint{b}": ("unsigned integer", b) for b in (8, 16, 32, 64)},
    **{f"float{b}": ("real floating", b) for b in (16, 32, 64)},
    **{f"complex{b}": ("complex floating", b) for b in (64, 128)},
}

bool = DType("bool")  # noqa: A001 - the standard's name, as torch.bool
int8 = DType("int8")
int16 = DType("int16")
int32 = DType("int32")
int64 = DType("int64")
uint8 = DType("uint8")
uint16 = DType("uint16")
uint32 = DType("uint32")
uint64 = DType("uint64")
float16 = DType("float16")
float32 = DType("float32")
float64 = DType("float64")
complex64 = DType("complex64")
complex128 = DType("complex128")

DTYPES = {
    d.name: d
    for d in (
        bool,
        int8,
        int16,
        int32,
        int64,
        uint8,
        uint16,
        uint32,
        uint64,
        float16,
        float32,
        float64,
        complex64,
        complex128,
    )
}

# The dtypes the standard defines (every one but the float16 extension).
STANDARD_DTYPES = {name: d for name, d in DTYPES.items() if d is not float16}


def as_dtype(dtype: Any) -> DType:
    """A DType from a DType or its name (``"float64"``).

    >>> as_dtype("float64")
    autograd_core.float64
    """
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, str) and dtype in DTYPES:
        return DTYPES[dtype]
    raise TypeError(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)} (or autograd_core.<name>)")


def _dtype_of(arg: Any) -> DType:
    """The DType of a DType, a dtype name, or an array (anything whose ``.dtype`` is a DType)."""
    dtype = getattr(arg, "dtype", arg)
    return as_dtype(dtype)


# --- isdtype -------------------------------------------------------------------------------------

_KINDS: dict[str, frozenset[str]] = {
    "bool": frozenset({"bool"}),
    "signed integer": frozenset({"signed integer"}),
    "unsigned integer": frozenset({"unsigned integer"}),
    "integral": frozenset({"signed integer", "unsigned integer"}),
    "real floating": frozenset({"real floating"}),
    "complex floating": frozenset({"complex floating"}),
    "numeric": frozenset({"signed integer", "unsigned integer", "real floating", "complex floating"}),
}


def isdtype(dtype: DType | str, kind: DType | str | tuple[DType | str, ...]) -> builtins.bool:
    """Whether `dtype` is `kind`: a dtype, a kind name (``"integral"``...) or a tuple of those.

    >>> isdtype(int8, "integral"), isdtype(float32, ("bool", float64))
    (True, False)
    """
    dtype = as_dtype(dtype)
    if isinstance(kind, tuple):
        return any(_is_kind(dtype, k) for k in kind)
    return _is_kind(dtype, kind)


def _is_kind(dtype: DType, kind: Any) -> builtins.bool:
    if isinstance(kind, DType):
        return dtype == kind
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(
                f"unknown dtype kind {kind!r}; use one of {', '.join(map(repr, _KINDS))}, "
                "a dtype (autograd_core.<name>) or a tuple of those"
            )
        return dtype.kind in _KINDS[kind]
    raise TypeError(f"isdtype kind must be a dtype, a kind name or a tuple of those, not {kind!r}")


# --- result_type and can_cast ------------------------------------------------------------------------

# Kinds ordered for mixing (PyTorch's order): the highest kind present decides the result's kind.
_RANK = {"bool": 0, "signed integer": 1, "unsigned integer": 1, "real floating": 2, "complex floating": 3}
_SIGNED = {8: int8, 16: int16, 32: int32, 64: int64}
_UNSIGNED = {8: uint8, 16: uint16, 32: uint32, 64: uint64}
_REAL = {16: float16, 32: float32, 64: float64}
_COMPLEX = {16: complex64, 32: complex64, 64: complex128}  # by component bits (no complex32)
# Python scalar types -> the dtype each stands for with no array to follow (PyTorch's defaults)
_SCALARS: tuple[tuple[type, DType], ...] = ((builtins.bool, bool), (int, int64), (float, float32), (complex, complex64))


def result_type(*arrays_and_dtypes: Any) -> DType:
    """The dtype an operation on these arrays, dtypes and Python scalars returns.

    Within a kind the standard's promotion table applies; mixing kinds (which the standard
    leaves open) follows PyTorch: the highest kind wins, bool < integral < real floating <
    complex floating, and a complex result keeps the precision of any real float. Python
    scalars are weak: one of an array's own kind or lower leaves its dtype alone, one of a
    higher kind gives that kind's default (int64, float32, complex64; complex128 next to
    float64).

    >>> result_type(uint8, int8), result_type(int64, float32), result_type(float32, 2.0)
    (autograd_core.int16, autograd_core.float32, autograd_core.float32)
    >>> result_type(int8, 1.5), result_type(float64, 1j)
    (autograd_core.float32, autograd_core.complex128)
    """
    if not arrays_and_dtypes:
        raise ValueError("result_type needs at least one array, dtype or scalar")
    dtypes, scalars = [], []
    for arg in arrays_and_dtypes:
        scalar = next((d for t, d in _SCALARS if isinstance(arg, t)), None)
        if scalar is not None:
            scalars.append(scalar)
        else:
            dtypes.append(_dtype_of(arg))
    if not dtypes:
        return _highest(scalars)
    result = _promote(dtypes)
    if scalars and _RANK[(scalar := _highest(scalars)).kind] > _RANK[result.kind]:
        result = _COMPLEX[result.bits] if scalar.is_complex and result.is_floating_point else scalar
    return result


def kind_rank(dtype_or_scalar: Any) -> int:
    """The rank of a dtype's kind (or a Python scalar's) in mixing: bool 0, integral 1, real
    floating 2, complex floating 3; the higher kind decides a mixed operation's result kind."""
    if type(dtype_or_scalar) is DType:  # the common case, asked once per operator with a scalar
        return _RANK[dtype_or_scalar.kind]
    scalar = next((d for t, d in _SCALARS if isinstance(dtype_or_scalar, t)), None)
    return _RANK[(scalar or dtype_or_scalar).kind]


def _highest(dtypes: list[DType]) -> DType:
    return max(dtypes, key=lambda d: _RANK[d.kind])


def _promote(dtypes: list[DType]) -> DType:
    """The common dtype of `dtypes`, decided by those of the highest kind present."""
    rank = _RANK[_highest(dtypes).kind]
    if rank == 0:
        return bool
    if rank == 1:
        return _promote_integers(dtypes)
    floats = [d for d in dtypes if _RANK[d.kind] >= 2]
    component_bits = max(d.bits // 2 if d.is_complex else d.bits for d in floats)
    return _COMPLEX[component_bits] if rank == 3 else _REAL[component_bits]


def _promote_integers(dtypes: list[DType]) -> DType:
    signed = max((d.bits for d in dtypes if d.kind == "signed integer"), default=0)
    unsigned = max((d.bits for d in dtypes if d.kind == "unsigned integer"), default=0)
    if not unsigned:
        return _SIGNED[signed]
    if not signed:
        return _UNSIGNED[unsigned]
    if signed > unsigned:
        return _SIGNED[signed]
    if unsigned == 64:
        raise TypeError(
            f"uint64 and int{signed} have no common dtype in the array API standard (no signed "
            "integer holds both); cast one of them first, e.g. with astype"
        )
    return _SIGNED[2 * unsigned]


# The standard promotes only within these families; can_cast never crosses them.
_FAMILY = {
    "bool": "bool",
    "signed integer": "integral",
    "unsigned integer": "integral",
    "real floating": "floating",
    "complex floating": "floating",
}


def can_cast(from_: Any, to: DType | str) -> builtins.bool:
    """Whether `from_` (a dtype or an array) promotes to `to` under the standard's rules:
    only within bool, the integers or the floating dtypes, and never to a narrower dtype.

    >>> can_cast(int8, int32), can_cast(uint8, int8), can_cast(int64, float64)
    (True, False, False)
    """
    source, target = _dtype_of(from_), as_dtype(to)
    if _FAMILY[source.kind] != _FAMILY[target.kind]:
        return False
    try:
        return _promote([source, target]) == target
    except TypeError:  # uint64 with a signed integer
        return False


# --- finfo and iinfo --------------------------------------------------------------------------------


@dataclass(frozen=True)
class FInfo:
    """Machine limits of a floating dtype (the standard's finfo object)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


@dataclass(frozen=True)
class IInfo:
    """Machine limits of an integer dtype (the standard's iinfo object)."""

    bits: int
    max: int
    min: int
    dtype: DType


# IEEE-754 binary formats: real dtype -> (bits of the stored mantissa, largest exponent)
_IEEE = {float16: (10, 15), float32: (23, 127), float64: (52, 1023)}


def finfo(type: Any) -> FInfo:  # noqa: A002 - the standard's parameter name
    """Limits of a floating dtype (a dtype, its name, or an array); for a complex dtype those
    of its real components, with ``dtype`` the real dtype (as the standard says).

    >>> finfo(float32).eps, finfo("complex128").dtype
    (1.1920928955078125e-07, autograd_core.float64)
    """
    dtype = _dtype_of(type)
    if dtype.is_complex:
        dtype = _REAL[dtype.bits // 2]
    if not dtype.is_floating_point:
        hint = "; use iinfo for integer dtypes" if isdtype(dtype, "integral") else ""
        raise ValueError(f"finfo needs a floating dtype, not {dtype.name}{hint}")
    mantissa, max_exponent = _IEEE[dtype]
    largest = math.ldexp(2 - 2.0**-mantissa, max_exponent)
    return FInfo(
        bits=dtype.bits,
        eps=2.0**-mantissa,
        max=largest,
        min=-largest,
        smallest_normal=2.0 ** (1 - max_exponent),
        dtype=dtype,
    )


def iinfo(type: Any) -> IInfo:  # noqa: A002 - the standard's parameter name
    """Limits of an integer dtype (a dtype, its name, or an array).

    >>> iinfo(int8)
    IInfo(bits=8, max=127, min=-128, dtype=autograd_core.int8)
    """
    dtype = _dtype_of(type)
    if not isdtype(dtype, "integral"):
        hint = "; use finfo for floating dtypes" if isdtype(dtype, ("real floating", "complex floating")) else ""
        raise ValueError(f"iinfo needs an integer dtype, not {dtype.name}{hint}")
    if dtype.kind == "unsigned integer":
        return IInfo(bits=dtype.bits, max=2**dtype.bits - 1, min=0, dtype=dtype)
    return IInfo(bits=dtype.bits, max=2 ** (dtype.bits - 1) - 1, min=-(2 ** (dtype.bits - 1)), dtype=dtype)
