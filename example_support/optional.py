"""The optional libraries of the examples (matplotlib for the plots, tqdm for the progress
bar, torch for the PyTorch twins and timings): where one is missing, the run goes on without
what it gives and says so in one line, or, asked for it by a flag, stops with a one-line error."""

from __future__ import annotations

import functools
import importlib

from example_support.cli import UsageError
from example_support.records import log


@functools.cache
def missing(module: str, consequence: str) -> bool:
    """Whether `module` cannot be imported; the first time, a line on stderr saying so and what
    the run does without it: ``matplotlib is not installed: no plot (pip install matplotlib)``."""
    try:
        importlib.import_module(module)
    except ImportError:
        log(f"{module} is not installed: {consequence} (pip install {module})")
        return True
    return False


def require(module: str, what: str) -> None:
    """A `UsageError` (one line, exit status 2) if `module` cannot be imported: `what` (a flag
    such as ``--torch-twin``) needs it."""
    try:
        importlib.import_module(module)
    except ImportError:
        raise UsageError(f"{what} needs {module}, which is not installed (pip install {module})") from None
