"""The array API inspection namespace: what ``__array_namespace_info__()`` reports about the
current backend (its device and the standard dtypes its library supports)."""

from __future__ import annotations

from typing import Any

import backends
from autograd_core.graph.dtypes import STANDARD_DTYPES, DType, complex64, float32, int64, isdtype
from autograd_core.graph.tensor_base import Device


class Info:
    """The standard's inspection utilities, answered for ``backends.current()``.

    >>> info = __array_namespace_info__()
    >>> info.default_dtypes()["real floating"], info.capabilities()["max dimensions"]
    (autograd_core.float32, 64)
    """

    def capabilities(self) -> dict[str, Any]:
        """What the library supports beyond the always-required API."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> Any:
        """The device arrays are created on: the current backend's."""
        return Device(backends.current())

    def devices(self) -> list[Any]:
        """The devices arrays can be created on (the current backend's device)."""
        return [self.default_device()]

    def default_dtypes(self, *, device: Any = None) -> dict[str, DType]:
        """The dtypes creation functions choose, the same on every device.

        >>> __array_namespace_info__().default_dtypes()["indexing"]
        autograd_core.int64
        """
        return {"real floating": float32, "complex floating": complex64, "integral": int64, "indexing": int64}

    def dtypes(self, *, device: Any = None, kind: str | tuple[str, ...] | None = None) -> dict[str, DType]:
        """The standard dtypes the current backend supports, by name, those of `kind` only if
        given (a kind name or a tuple, as for `isdtype`). Every device of a backend supports
        the same ones, so `device` does not change the answer.

        >>> list(__array_namespace_info__().dtypes(kind="signed integer"))
        ['int8', 'int16', 'int32', 'int64']
        """
        backend = backends.current()
        supported = backend._dtype_tables()[0]
        without = set() if backend.supports_float64 else {"float64", "complex128"}
        return {
            name: d
            for name, d in STANDARD_DTYPES.items()
            if name in supported and name not in without and (kind is None or isdtype(d, kind))
        }


def __array_namespace_info__() -> Info:  # noqa: N807 - the standard's name
    """The standard's inspection namespace for the current backend.

    >>> __array_namespace_info__().dtypes()["float64"]
    autograd_core.float64
    """
    return Info()
