"""The training loops' progress: `bench.progress.Bar`, a tqdm bar on a terminal and plain
periodic lines elsewhere; without tqdm, plain lines everywhere, said once in one line."""

from __future__ import annotations

from typing import Any

from bench.progress import Bar
from example_support.optional import missing


class Progress(Bar):
    """A `Bar` over `total` steps called `desc`; an enabled one first checks for tqdm."""

    def __init__(self, total: float, desc: str = "", enabled: bool = True, **kwargs: Any) -> None:
        if enabled:
            missing("tqdm", "progress as plain lines, no bar")
        super().__init__(total, desc, enabled, **kwargs)
