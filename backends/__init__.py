"""Backend registry and selection.

    backends.current()             # the active Backend (AUTOGRAD_BACKEND, default numpy)
    backends.available()           # {name: reason or None} for every known backend
    backends.set_backend("torch")  # switch for the rest of the program
    with backends.use("jax"): ...  # switch inside a block (a ContextVar, thread and task safe)

Only the chosen library is imported. Third-party backends register a factory
``create(device) -> Backend`` under the entry-point group ``autograd_core.backends``.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from importlib.metadata import entry_points

from backends.contract.backend import Backend, get_rng_state, host_rng, manual_seed, set_rng_state

__all__ = [
    "Backend",
    "BackendUnavailableError",
    "available",
    "canonical",
    "current",
    "from_environment",
    "get",
    "get_rng_state",
    "host_rng",
    "known",
    "manual_seed",
    "registered_as",
    "set_backend",
    "set_rng_state",
    "use",
]

ENTRY_POINT_GROUP = "autograd_core.backends"

# name -> (module of the factory, extra that installs the library)
BUILTINS: dict[str, tuple[str, str | None]] = {
    "numpy": ("backends.numpy", None),
    "array_api_strict": ("backends.array_api_strict", "test"),
    "torch": ("backends.torch", "torch"),
    "jax": ("backends.jax", "jax"),
    "cupy": ("backends.cupy", "cupy"),
    "dask": ("backends.dask", "dask"),
}


class BackendUnavailableError(RuntimeError):
    """A known backend whose library is missing or cannot run here."""


def _entry_points() -> dict[str, Callable[..., Backend]]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in BUILTINS}


def known() -> list[str]:
    """Every backend name: the built-ins, then those registered through entry points."""
    return [*BUILTINS, *_entry_points()]


_instances: dict[tuple[str, str | None], Backend] = {}
_creating = threading.RLock()


def canonical(name: str) -> str:
    """`name` as the registry spells it ("array-api-strict" is accepted for "array_api_strict").

    >>> canonical("array-api-strict")
    'array_api_strict'
    """
    return name.strip().replace("-", "_")


def from_environment() -> tuple[str, str | None]:
    """The (backend, device) that AUTOGRAD_BACKEND and AUTOGRAD_DEVICE select; an empty
    variable counts as unset (numpy, the library's default device)."""
    name = os.environ.get("AUTOGRAD_BACKEND", "").strip() or "numpy"
    return canonical(name), os.environ.get("AUTOGRAD_DEVICE", "").strip() or None


def get(name: str, device: str | None = None) -> Backend:
    """The Backend for library `name` on `device` (created once, then cached).

    >>> get("numpy").name
    'numpy'
    """
    name = canonical(name)
    key = (name, device)
    if key in _instances:
        return _instances[key]
    with _creating:  # threads that first ask at the same moment get one Backend, not one each
        if key not in _instances:
            made = _create(name, device)
            # another name of a device already in use ("cpu" and the default): the same Backend,
            # so that tensors made either way combine
            same = (
                b for (n, _), b in _instances.items() if n == name and b.device is not None and b.device == made.device
            )
            _instances[key] = next(same, made)
    return _instances[key]


def on_device(backend: Backend, device: str | None) -> Backend:
    """`backend`'s library on `device` (the library's own name for one, or a kind: "cpu",
    "cuda"): `backend` itself when that is where it computes already. ``"cpu"`` from a library
    without a CPU device (cupy) is the numpy backend, as ``.cpu()`` brings values to the host.

    >>> on_device(get("numpy"), "cpu") is get("numpy")
    True
    """
    name = str(device)  # a library's device object (torch.device("cpu")) by its name
    if device is None or device == backend.device or name in (backend.device_type, str(backend.device)):
        return backend
    if name == "cpu" and "cpu" not in backend.device_kinds:
        return get("numpy")
    return get(backend.name, device)


def registered_as(backend: Backend) -> tuple[str, str | None]:
    """The (name, device) `get` made `backend` for, so that ``get(*registered_as(b)) is b``; in
    another process they make that process's own Backend (what unpickling a tensor does).

    >>> registered_as(get("numpy"))
    ('numpy', None)
    """
    for key, made in list(_instances.items()):
        if made is backend:
            return key
    raise ValueError(
        f"{backend!r} was not made by backends.get (a backend wrapping another, such as vmap's), so it has no "
        "name another process could make it from"
    )


def _create(name: str, device: str | None) -> Backend:
    if name in BUILTINS:
        module_name, extra = BUILTINS[name]
        try:
            create = importlib.import_module(module_name).create
        except ImportError as e:
            hint = f'pip install -e ".[{extra}]"' if extra else "reinstall the project"
            raise BackendUnavailableError(
                f"backend {name!r} needs a library that is not installed ({e}); install it with: {hint}"
            ) from e
    elif name in (plugins := _entry_points()):
        create = plugins[name].load()
    else:
        raise ValueError(f"unknown backend {name!r}; known backends: {', '.join(known())}")
    return create(device)


def available() -> dict[str, str | None]:
    """{name: None if usable here, else the reason it is not}."""
    reasons: dict[str, str | None] = {}
    for name in known():
        try:
            get(name)
            reasons[name] = None
        except (BackendUnavailableError, ImportError, RuntimeError) as e:
            reasons[name] = str(e)
    return reasons


_default: Backend | None = None
_scoped: ContextVar[Backend | None] = ContextVar("autograd_backend", default=None)


def current() -> Backend:
    """The active backend: the innermost `use(...)`, else `set_backend`, else the environment."""
    global _default
    scoped = _scoped.get()
    if scoped is not None:
        return scoped
    if _default is None:
        _default = get(*from_environment())
    return _default


def _resolve(backend: str | Backend, device: str | None) -> Backend:
    return backend if isinstance(backend, Backend) else get(backend, device)


def set_backend(backend: str | Backend, device: str | None = None) -> Backend:
    """Make `backend` the default for the rest of the program and return it."""
    global _default
    _default = _resolve(backend, device)
    return _default


@contextlib.contextmanager
def use(backend: str | Backend, device: str | None = None) -> Iterator[Backend]:
    """Make `backend` the active one inside a ``with`` block.

    >>> with use("numpy") as b:
    ...     b.name
    'numpy'
    """
    token = _scoped.set(_resolve(backend, device))
    try:
        yield _scoped.get()
    finally:
        _scoped.reset(token)
