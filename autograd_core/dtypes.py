"""The framework's dtypes: names from the array API standard, mapped to each backend's own."""

from __future__ import annotations

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

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return other == self.name
        return isinstance(other, DType) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    @property
    def is_floating_point(self) -> bool:
        return self.name.startswith("float")


float16 = DType("float16")
float32 = DType("float32")
float64 = DType("float64")
int8 = DType("int8")
int16 = DType("int16")
int32 = DType("int32")
int64 = DType("int64")
uint8 = DType("uint8")
bool = DType("bool")  # noqa: A001 - the standard's name, as torch.bool

DTYPES = {d.name: d for d in (float16, float32, float64, int8, int16, int32, int64, uint8, bool)}


def as_dtype(dtype: Any) -> DType:
    """A DType from a DType or its name (``"float64"``)."""
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, str) and dtype in DTYPES:
        return DTYPES[dtype]
    raise TypeError(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)} (or autograd_core.<name>)")
