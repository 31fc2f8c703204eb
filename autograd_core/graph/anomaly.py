"""`detect_anomaly()`: remember where each op was created, and stop a backward that makes
NaN or inf with the op and the forward line responsible."""

from __future__ import annotations

import os
import threading
import traceback
import warnings
from typing import Any

from autograd_core.graph.grad_mode import Mode, SetByCall


class _State(threading.local):
    enabled = False  # per thread, as grad mode is; the compiled record reads it (`_sweep.configure`)
    check_nan = True


state = _State()
_CORE = os.path.dirname(os.path.dirname(__file__))  # autograd_core/, above this layer's folder
_PACKAGE_DIRS = (_CORE, os.path.join(os.path.dirname(_CORE), "nn"))


def is_anomaly_enabled() -> bool:
    """Whether ops record their creation site (in this thread).

    >>> import autograd_core as ag
    >>> with ag.set_detect_anomaly(True):
    ...     ag.is_anomaly_enabled()
    True
    """
    return state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode, when on, checks the gradients for NaN and inf (PyTorch's question:
    True outside anomaly mode too, unless a ``check_nan=False`` is in force).

    >>> import autograd_core as ag
    >>> with ag.set_detect_anomaly(True, check_nan=False):
    ...     ag.is_anomaly_check_nan_enabled()
    False
    """
    return state.check_nan


def checks_gradients() -> bool:
    """Whether a backward now checks each gradient it computes (`check_finite`)."""
    return state.enabled and state.check_nan


class detect_anomaly(Mode):  # noqa: N801 - PyTorch's name
    """Inside this block (or decorated function) every recorded op keeps its creation site,
    and, with `check_nan`, backward checks each gradient it computes for NaN and inf (one host
    round trip per op: slow, for debugging; it warns so, as PyTorch's does).

    >>> import autograd_core as ag
    >>> x = ag.tensor([0.0], requires_grad=True)
    >>> with ag.detect_anomaly():
    ...     y = ag.sqrt(x)
    ...     y.backward(ag.tensor([0.0]))  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    RuntimeError: backward of sqrt produced nan in the gradient of its input 0 ...
    """

    def __init__(self, check_nan: bool = True) -> None:
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
            "enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )
        super().__init__(state, enabled=True, check_nan=check_nan)


class set_detect_anomaly(SetByCall):  # noqa: N801 - PyTorch's name
    """Anomaly mode on or off from now on (as a call), inside a ``with`` block, or in each call
    of a decorated function; the block and the decorator put the previous mode back after.

    >>> import autograd_core as ag
    >>> _ = ag.set_detect_anomaly(True)
    >>> ag.is_anomaly_enabled()
    True
    >>> _ = ag.set_detect_anomaly(False)
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        super().__init__(state, enabled=mode, check_nan=check_nan)


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
