"""Preloaded into the scheduler of a local cluster (`backends.dask.local_cluster`): the
scheduler closes, and closes its workers, once the process that started it is gone.

The client closes its cluster at exit, but a client killed by SIGKILL (or by a signal it does
not handle) runs no exit code, and the scheduler and workers, processes of their own, would
outlive it. An orphan's parent changes (it is adopted by init or a subreaper), so the
scheduler checks its parent's pid once a second.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from tornado.ioloop import PeriodicCallback

CHECK_INTERVAL_MS = 1000


def dask_setup(scheduler: Any) -> None:
    """dask's preload hook: called with the scheduler before its periodic callbacks start."""
    parent = os.getppid()
    closing: list[asyncio.Task] = []

    def close_if_orphaned() -> None:
        if os.getppid() != parent and not closing:
            closing.append(asyncio.ensure_future(scheduler.close(reason="the client process is gone")))

    scheduler.periodic_callbacks["parent-watch"] = PeriodicCallback(close_if_orphaned, CHECK_INTERVAL_MS)
