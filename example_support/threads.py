"""Thread limits for a run (``--threads``): the BLAS and OpenMP pools, torch's and XLA's, and
the settings in force for the record. threadpoolctl, where installed, limits pools already
loaded; without it only the environment variables (read by libraries not yet loaded) apply."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "XLA_FLAGS")


@contextlib.contextmanager
def limited_threads(n: int | None) -> Iterator[None]:
    """Run the block with at most `n` threads in the BLAS/OpenMP pools and in torch (None:
    leave them). Libraries not yet loaded are limited through their environment variables."""
    if n is None:
        yield
        return
    saved = {var: os.environ.get(var) for var in _THREAD_VARIABLES}
    for var in _THREAD_VARIABLES[:3]:
        os.environ[var] = str(n)
    if "jax" not in sys.modules and n == 1:  # XLA reads its flags once, when jax starts
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = f"{flags} --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1".strip()
    torch = sys.modules.get("torch")
    previous = torch.get_num_threads() if torch else None
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # threadpoolctl comes with the bench extra
        limiter: Any = contextlib.nullcontext()
    else:
        limiter = threadpool_limits(n)
    try:
        with limiter:
            if torch:
                torch.set_num_threads(n)
            yield
    finally:
        if torch and previous:
            torch.set_num_threads(previous)
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value


def thread_facts() -> dict[str, Any]:
    """The thread settings in force: environment variables, torch's and the BLAS pools'."""
    facts: dict[str, Any] = {k: os.environ.get(k) for k in _THREAD_VARIABLES}
    if "torch" in sys.modules:
        facts["torch"] = sys.modules["torch"].get_num_threads()
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover
        return facts
    facts["blas"] = {f"{i['internal_api']}:{i['prefix']}": i["num_threads"] for i in threadpool_info()}
    return facts
