"""Whether operations are recorded for backward: `no_grad`, `enable_grad`, `is_grad_enabled`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

_enabled = True


def is_grad_enabled() -> bool:
    """Whether new operations are being recorded."""
    return _enabled


def set_grad_enabled(mode: bool) -> None:
    global _enabled
    _enabled = mode


class _GradMode:
    mode: bool

    def __enter__(self) -> None:
        self._previous = _enabled
        set_grad_enabled(self.mode)

    def __exit__(self, *exc: Any) -> None:
        set_grad_enabled(self._previous)

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Stop recording inside a ``with`` block or a decorated function.

    >>> import autograd_core as ag
    >>> x = ag.tensor([1.0], requires_grad=True)
    >>> with ag.no_grad():
    ...     (x * 2).requires_grad
    False
    """

    mode = False


class enable_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Record again inside a ``no_grad`` region."""

    mode = True
