"""A one-line progress bar on stderr, redrawn with a carriage return (no dependency).

When stderr is not a terminal (a log file, a test), it prints one line per finished point
instead, so logs stay readable.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Progress over `total` points; `fraction` of the current one is passed to `update`."""

    def __init__(self, total: int, stream: TextIO | None = None, live: bool | None = None, width: int = 24) -> None:
        self.total, self.width = max(total, 1), width
        self.stream = stream if stream is not None else sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.done, self.label, self.fraction = 0, "", 0.0
        self.started = self.point_started = time.perf_counter()
        self._drawn = False

    def start_point(self, label: str) -> None:
        self.label, self.fraction, self.point_started = label, 0.0, time.perf_counter()
        self._draw()

    def update(self, fraction: float) -> None:
        self.fraction = fraction
        self._draw()

    def finish_point(self, summary: str = "") -> None:
        self.done += 1
        self.fraction = 0.0
        if not self.live:
            elapsed = time.perf_counter() - self.point_started
            self.stream.write(f"[{self.done}/{self.total}] {self.label}: {elapsed:.1f} s{summary}\n")
            self.stream.flush()
        self._draw()

    def log(self, message: str) -> None:
        """Print `message` on its own line, above the bar."""
        self._clear()
        self.stream.write(message + "\n")
        self.stream.flush()
        self._draw()

    def close(self) -> None:
        self._clear()

    def _clear(self) -> None:
        if self._drawn:
            self.stream.write("\r\033[K")
            self._drawn = False

    def _draw(self) -> None:
        if not self.live:
            return
        overall = min(1.0, (self.done + self.fraction) / self.total)
        filled = int(round(overall * self.width))
        elapsed = time.perf_counter() - self.started
        line = f"[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} {self.label} {elapsed:.0f}s"
        self.stream.write("\r\033[K" + line)
        self.stream.flush()
        self._drawn = True
