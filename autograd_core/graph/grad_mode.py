"""Whether operations are recorded for backward, per thread as in PyTorch: `no_grad`,
`enable_grad`, `set_grad_enabled`, `inference_mode` and their questions; and `Mode` and
`SetByCall`, what these and anomaly mode's switches share (a ``with`` block, a decorator)."""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
from collections.abc import Callable, Iterator
from typing import Any


class _State(threading.local):
    """Grad mode is per thread, as in PyTorch: `no_grad()` in one thread leaves others recording.
    The modes set `grad` and `inference`; `enabled`, whether ops are recorded, follows from them
    (nothing is inside inference mode, as in PyTorch), and is what the compiled record reads
    off this object (`_sweep.configure`)."""

    enabled = grad = True
    inference = False

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        super().__setattr__("enabled", self.grad and not self.inference)


state = _State()


class Mode:
    """Some attributes of a per-thread `state` set to `values` for the length of a ``with``
    block, or of each call of a function it decorates (each step of a generator function),
    and put back as they were after it, also when an exception leaves it. ``@mode`` without
    parentheses decorates too (``@no_grad``)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and callable(args[0]):  # `@no_grad`, without parentheses
            return cls()(args[0])
        return super().__new__(cls)

    def __init__(self, state: threading.local, **values: Any) -> None:
        self._state, self._values = state, values
        self._previous: list[dict[str, Any]] = []

    def _set(self) -> dict[str, Any]:
        """Set the values; return those they replace."""
        previous = {name: getattr(self._state, name) for name in self._values}
        self._put_back(self._values)
        return previous

    def _put_back(self, values: dict[str, Any]) -> None:
        for name, value in values.items():
            setattr(self._state, name, value)

    @contextlib.contextmanager
    def _scope(self) -> Iterator[None]:
        previous = self._set()
        try:
            yield
        finally:
            self._put_back(previous)

    def __enter__(self) -> None:
        self._previous.append(self._set())

    def __exit__(self, *exc: Any) -> None:
        self._put_back(self._previous.pop())

    def __call__(self, fn: Callable) -> Callable:
        if inspect.isgeneratorfunction(fn):
            return _each_step_in(self, fn)

        @functools.wraps(fn)
        def in_mode(*args: Any, **kwargs: Any) -> Any:
            with self._scope():
                return fn(*args, **kwargs)

        return in_mode


def _each_step_in(mode: Mode, fn: Callable) -> Callable:
    """A generator function whose every step (``next``, ``send``, ``throw``, ``close``) runs
    in `mode`, the code between its steps outside it, as PyTorch's decorators do."""

    @functools.wraps(fn)
    def steps(*args: Any, **kwargs: Any) -> Any:
        generator = fn(*args, **kwargs)
        resume, value = generator.send, None
        while True:
            try:
                with mode._scope():
                    out = resume(value)
            except StopIteration as stop:
                return stop.value
            try:
                resume, value = generator.send, (yield out)
            except GeneratorExit:
                with mode._scope():
                    generator.close()
                raise
            except BaseException as error:  # thrown in: into the generator, in the mode
                resume, value = generator.throw, error

    return steps


class SetByCall(Mode):
    """A mode that the call itself sets (``set_grad_enabled(False)`` is also a statement, as in
    PyTorch). As a ``with`` block it puts back, on exit, what the call replaced; as a
    decorator it puts that back at once, and sets the mode for each call instead."""

    def __init__(self, state: threading.local, **values: Any) -> None:
        super().__init__(state, **values)
        self._replaced = self._set()

    def __enter__(self) -> None:
        self._set()

    def __exit__(self, *exc: Any) -> None:
        self._put_back(self._replaced)

    def __call__(self, fn: Callable) -> Callable:
        self._put_back(self._replaced)
        return super().__call__(fn)


def is_grad_enabled() -> bool:
    """Whether new operations are being recorded (in this thread): False inside
    `inference_mode`, even under `enable_grad`, where PyTorch's says True (and records nothing).

    >>> import autograd_core as ag
    >>> with ag.no_grad():
    ...     ag.is_grad_enabled()
    False
    """
    return state.enabled


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside `inference_mode`.

    >>> import autograd_core as ag
    >>> with ag.inference_mode():
    ...     ag.is_inference_mode_enabled()
    True
    """
    return state.inference


class no_grad(Mode):  # noqa: N801 - PyTorch's name
    """Stop recording inside a ``with`` block or a decorated function (``@no_grad()`` or
    ``@no_grad``).

    >>> import autograd_core as ag
    >>> x = ag.tensor([1.0], requires_grad=True)
    >>> with ag.no_grad():
    ...     (x * 2).requires_grad
    False
    """

    def __init__(self) -> None:
        super().__init__(state, grad=False)


class enable_grad(Mode):  # noqa: N801 - PyTorch's name
    """Record again inside a ``no_grad`` region (a ``with`` block or a decorator).

    >>> import autograd_core as ag
    >>> x = ag.tensor([1.0], requires_grad=True)
    >>> with ag.no_grad(), ag.enable_grad():
    ...     (x * 2).requires_grad
    True
    """

    def __init__(self) -> None:
        super().__init__(state, grad=True)


class set_grad_enabled(SetByCall):  # noqa: N801 - PyTorch's name
    """Record or not from now on (as a call), inside a ``with`` block, or in each call of a
    decorated function; the block and the decorator put the previous mode back after.

    >>> import autograd_core as ag
    >>> x = ag.tensor([1.0], requires_grad=True)
    >>> with ag.set_grad_enabled(False):
    ...     (x * 2).requires_grad
    False
    >>> _ = ag.set_grad_enabled(False)
    >>> ag.is_grad_enabled()
    False
    >>> _ = ag.set_grad_enabled(True)
    """

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): mode must be a bool, not {type(mode).__name__}")
        super().__init__(state, grad=mode)


class inference_mode(Mode):  # noqa: N801 - PyTorch's name
    """`no_grad` that also says so (`is_inference_mode_enabled`); ``inference_mode(False)``
    leaves it and records again, as PyTorch's does. A ``with`` block or a decorator, with or
    without parentheses.

    Nothing is recorded inside, even under `enable_grad` or ``set_grad_enabled(True)``, as in
    PyTorch. Unlike PyTorch's, the tensors made inside are ordinary tensors that require no
    grad, as under `no_grad`: nothing refuses to save them for a backward later, they can be
    changed in place outside, and there is no ``Tensor.is_inference()``; nor is it any faster
    than `no_grad`, which already keeps no graph.

    >>> import autograd_core as ag
    >>> x = ag.tensor([1.0], requires_grad=True)
    >>> with ag.inference_mode():
    ...     (x * 2).requires_grad
    False
    """

    def __init__(self, mode: bool = True) -> None:
        super().__init__(state, grad=not mode, inference=mode)
