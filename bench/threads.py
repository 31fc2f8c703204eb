"""Thread counts and CPU pinning.

Two moments matter. Before numpy, torch or jax is imported, `configure_environment` sets
the environment variables the libraries read once at start (OpenMP, OpenBLAS, MKL, XLA's
flags) and pins the process to `threads` cores. After the implementations have imported
their libraries, `limit_loaded_libraries` applies the runtime switches: threadpoolctl for
every BLAS and OpenMP pool already loaded, and ``torch.set_num_threads``.

This module imports only the standard library, so `python -m bench` can call it first.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

_ENV_THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
# XLA's CPU client runs its kernels on an Eigen pool; without it, one thread does the work.
_XLA_SINGLE_THREAD = "--xla_cpu_multi_thread_eigen=false"

_limits: Any = None  # the threadpoolctl limiter, kept alive for the whole run


def configure_environment(threads: int, pin: bool = True) -> dict[str, Any]:
    """Set thread variables for libraries not yet imported, and pin to `threads` cores.

    Returns what was done (recorded with the results). Libraries imported before this call
    keep their pools; `limit_loaded_libraries` still limits those it can.
    """
    for name in _ENV_THREAD_VARIABLES:
        os.environ[name] = str(threads)
    flags = os.environ.get("XLA_FLAGS", "")
    if threads == 1 and _XLA_SINGLE_THREAD not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {_XLA_SINGLE_THREAD}".strip()
    done: dict[str, Any] = {
        "threads": threads,
        "env": {name: os.environ[name] for name in (*_ENV_THREAD_VARIABLES, "XLA_FLAGS") if name in os.environ},
        "imported_before": sorted(m for m in ("numpy", "torch", "jax") if m in sys.modules),
    }
    if pin and hasattr(os, "sched_setaffinity"):
        allowed = sorted(os.sched_getaffinity(0))
        if threads < len(allowed):
            # The last cores: core 0 tends to take more of the interrupts.
            os.sched_setaffinity(0, allowed[-threads:])
    if hasattr(os, "sched_getaffinity"):
        done["affinity"] = sorted(os.sched_getaffinity(0))
    return done


def limit_loaded_libraries(threads: int) -> dict[str, Any]:
    """Limit the thread pools of the libraries loaded so far; returns what was limited."""
    global _limits
    done: dict[str, Any] = {}
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        done["threadpoolctl"] = "not installed: BLAS threads set through the environment only"
    else:
        _limits = threadpool_limits(limits=threads)
        done["threadpoolctl"] = "applied"
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        torch.set_num_threads(threads)
        with contextlib.suppress(RuntimeError):  # only allowed before torch's first parallel work
            torch.set_num_interop_threads(threads)
        done["torch"] = {"num_threads": torch.get_num_threads(), "interop_threads": torch.get_num_interop_threads()}
    return done
