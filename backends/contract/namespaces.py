"""A library's array-API namespace with some of its functions replaced by the backend's."""

from __future__ import annotations

from typing import Any


class CompletedNamespace:
    """A namespace that answers from `module` whatever its subclass does not define.

    A subclass sets `module` (array-api-compat's namespace for the library) and defines the
    functions it replaces; any other name is looked up in `module` once, then kept as a plain
    attribute, so later lookups cost what a module's do.
    """

    module: Any

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.module, name)
        setattr(self, name, value)
        return value
