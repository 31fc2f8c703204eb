"""Whether operations are recorded for backward: `no_grad`, `enable_grad`, `is_grad_enabled`."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any


class _State(threading.local):
    """Grad mode is per thread, as in PyTorch: `no_grad()` in one thread leaves others recording."""

    enabled = True


state = _State()


def is_grad_enabled() -> bool:
    """Whether new operations are being recorded (in this thread)."""
    return state.enabled


def set_grad_enabled(mode: bool) -> None:
    state.enabled = mode


class _GradMode:
    mode: bool

    def __enter__(self) -> None:
        self._previous = state.enabled
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
