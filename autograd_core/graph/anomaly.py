"""`detect_anomaly()`: remember where each op was created, and stop a backward that makes
NaN or inf with the op and the forward line responsible."""

from __future__ import annotations

import os
import threading
import traceback
from typing import Any


class _State(threading.local):
    enabled = False  # per thread, as grad mode is


state = _State()
_CORE = os.path.dirname(os.path.dirname(__file__))  # autograd_core/, above this layer's folder
_PACKAGE_DIRS = (_CORE, os.path.join(os.path.dirname(_CORE), "nn"))


def is_anomaly_enabled() -> bool:
    return state.enabled


class detect_anomaly:  # noqa: N801 - PyTorch's name
    """Inside this block every recorded op keeps its creation site, and backward checks each
    gradient it computes for NaN and inf (one host round trip per op: slow, for debugging).

    >>> import autograd_core as ag
    >>> x = ag.tensor([0.0], requires_grad=True)
    >>> with ag.detect_anomaly():
    ...     y = ag.sqrt(x)
    ...     y.backward(ag.tensor([0.0]))  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    RuntimeError: backward of sqrt produced nan in the gradient of its input 0 ...
    """

    def __enter__(self) -> None:
        self._previous, state.enabled = state.enabled, True

    def __exit__(self, *exc: Any) -> None:
        state.enabled = self._previous


def creation_site() -> str:
    """The innermost stack frames outside this package: where the user's code made the op."""
    frames = [f for f in traceback.extract_stack()[:-2] if not f.filename.startswith(_PACKAGE_DIRS)]
    return "".join(traceback.format_list(frames[-3:])).rstrip()


def check_finite(grad: Any, backend: Any, op: str, input_index: int, trace: str | None) -> None:
    """Raise if the raw gradient array `grad` holds a NaN or an infinity."""
    xp = backend.xp
    if bool(xp.all(xp.isfinite(grad))):
        return
    kind = "nan" if bool(xp.any(xp.isnan(grad))) else "inf"
    where = f"; the op was created at:\n{trace}" if trace else ""
    raise RuntimeError(f"backward of {op} produced {kind} in the gradient of its input {input_index}{where}")
