"""The namespace a first-order backward computes with: the backend's own array-API namespace.

A VJP is written once against a namespace argument `ns`. In a first-order backward `ns` is a
`RawNamespace` and the VJP runs on raw backend arrays; with ``create_graph=True`` it is
`autograd_core` and the VJP runs on Tensors. Both answer the standard's functions; what the
standard lacks (scatter, index-add, the fused kernels) is a primitive of the registry, called
with the namespace first (``scatter(ns, ...)``), which finds the backend's kernel.
"""

from __future__ import annotations

import weakref
from types import ModuleType
from typing import Any

import backends


class RawNamespace:
    """``backend.xp`` for everything the standard names, and the backend for the kernels.

    >>> import backends
    >>> ns = raw_namespace(backends.get("numpy"))
    >>> ns.sum(ns.ones((2,))).item()
    2.0
    """

    def __init__(self, backend: backends.Backend) -> None:
        self.backend = backend
        self.xp = backend.xp
        self.kernels: dict[Any, Any] = {}  # primitive -> the kernel this backend runs, found once

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.xp, name)
        setattr(self, name, value)  # found once, then a plain attribute
        return value


_tensors: ModuleType | None = None  # the namespace of tensors, named by the package once it has every op


def set_tensor_namespace(module: ModuleType) -> None:
    """Name the namespace of tensors: `autograd_core` calls this once, after importing every layer."""
    global _tensors
    _tensors = module


def tensor_namespace() -> ModuleType:
    """The namespace of tensors: `autograd_core` itself, whose functions record what they do.

    >>> import autograd_core as ag
    >>> tensor_namespace() is ag
    True
    """
    return _tensors


def raw_namespace(backend: backends.Backend) -> RawNamespace:
    """The raw namespace of `backend`, made on first use and kept on the backend itself, so it
    lives as long as the backend does (a vmap batch's goes with its batch).

    >>> b = backends.get("numpy")
    >>> raw_namespace(b) is raw_namespace(b)
    True
    """
    try:
        return backend._raw_namespace
    except AttributeError:
        ns = backend._raw_namespace = RawNamespace(backend)
        _cache.add(ns)
        return ns


def forget_kernels() -> None:
    """Drop the kernels each namespace has found (a kernel was registered since)."""
    for ns in _cache:
        ns.kernels.clear()


_cache: weakref.WeakSet[RawNamespace] = weakref.WeakSet()  # every namespace alive, for forget_kernels
