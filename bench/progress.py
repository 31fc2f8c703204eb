"""Progress on stderr, for the bench and the examples' training loops.

On a terminal it is a tqdm bar (count, elapsed time, ETA, rate and the latest values),
redrawn in place. Elsewhere (a log file, a pipe, a test), or where tqdm is not installed, it
is plain lines: one each tenth of the way and at least once a minute, so that a log holds
no carriage returns. tqdm comes with the ``bench`` extra; nothing here needs it.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any, TextIO


def format_value(value: float) -> str:
    """A loss-like number for a progress line: four decimals for ordinary sizes, scientific
    notation for tiny or huge ones (so a loss of 1e-12 never shows as 0.0000).

    >>> format_value(0.41234), format_value(1e-12), format_value(2.5e6), format_value(0.0), format_value(7)
    ('0.4123', '1.0e-12', '2.5e+06', '0', '7')
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    v = float(value)
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    return f"{v:.4f}" if 1e-3 <= abs(v) < 1e4 else f"{v:.1e}"


def format_duration(seconds: float) -> str:
    """A duration as tqdm shows it: ``mm:ss``, or ``h:mm:ss`` from an hour on.

    >>> format_duration(75.4), format_duration(3725)
    ('01:15', '1:02:05')
    """
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _tqdm_bar(total: float, desc: str, stream: TextIO, counts: bool) -> Any:
    """A tqdm bar on `stream`, or None when tqdm is not installed."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    # Without counts (fractional progress), show the percentage and the times only.
    bar_format = None if counts else "{l_bar}{bar}| [{elapsed}<{remaining}{postfix}]"
    return tqdm(total=total, desc=desc, file=stream, dynamic_ncols=True, leave=True, bar_format=bar_format)


class Bar:
    """Progress over `total` units on `stream` (default stderr): ``update(loss=0.41)`` after
    each step, ``close()`` at the end. `live` (default: whether `stream` is a terminal)
    chooses the tqdm bar over plain lines; `lines` is how many plain lines a whole run prints
    (None: only what `write` prints), `counts` whether the units are counted (``120/430``)
    or only a fraction is shown.

    >>> import io
    >>> out = io.StringIO()
    >>> bar = Bar(2, "train", stream=out)
    >>> bar.update(loss=1e-12)
    >>> bar.close()
    >>> print(out.getvalue().split("  elapsed")[0])
    train 1/2 (50%)  loss 1.0e-12
    """

    def __init__(
        self,
        total: float,
        desc: str = "",
        enabled: bool = True,
        stream: TextIO | None = None,
        live: bool | None = None,
        lines: int | None = 10,
        interval: float = 60.0,
        counts: bool = True,
    ) -> None:
        self.total, self.desc, self.enabled, self.lines, self.interval, self.counts = (
            total,
            desc,
            enabled,
            lines,
            interval,
            counts,
        )
        self.stream = sys.stderr if stream is None else stream
        self.n: float = 0
        self.note = ""
        self.started = self._printed_time = time.perf_counter()
        self._printed: tuple[float, str] | None = None
        self._printed_part = 0
        live = _is_terminal(self.stream) if live is None else live
        self._tqdm = _tqdm_bar(total, desc, self.stream, counts) if enabled and live else None

    def update(self, n: float = 1, **values: float) -> None:
        """Advance by `n` units and show `values` (``update(loss=0.41)`` shows ``loss 0.4100``)."""
        if values:
            self.note = "  ".join(f"{k} {format_value(v)}" for k, v in values.items())
        self.n += n
        if not self.enabled:
            return
        if self._tqdm is not None:
            self._tqdm.set_postfix_str(self.note, refresh=False)
            self._tqdm.update(n)
        elif self.lines and self._line_due():
            self._print_line()

    def show(self, note: str) -> None:
        """Show `note` (what is being done now) instead of the latest values."""
        self.note = note
        if self._tqdm is not None:
            self._tqdm.set_postfix_str(note)

    def write(self, message: str) -> None:
        """Print `message` on its own line (above the bar on a terminal)."""
        if self._tqdm is not None:
            self._tqdm.write(message, file=self.stream)
        else:
            self.stream.write(message + "\n")
            self.stream.flush()

    def timing(self) -> str:
        """``elapsed 00:12, ETA 00:34``: the time so far and the time left at the mean rate."""
        elapsed = time.perf_counter() - self.started
        left = elapsed * (self.total - self.n) / self.n if self.n > 0 else None
        return f"elapsed {format_duration(elapsed)}, ETA {'?' if left is None else format_duration(max(left, 0))}"

    def line(self) -> str:
        """The plain progress line: count, values, elapsed time, ETA and rate."""
        percent = 100 * self.n / self.total if self.total else 100.0
        done = f"{self.n:g}/{self.total:g} ({percent:.0f}%)" if self.counts else f"{percent:.0f}%"
        rate = self.n / max(time.perf_counter() - self.started, 1e-9)
        speed = f", {rate:.1f} it/s" if rate >= 1 else f", {1 / rate:.1f} s/it" if rate > 0 else ""
        timing = self.timing() + (speed if self.counts else "")
        parts = [f"{self.desc} {done}".strip(), self.note, timing]
        return "  ".join(p for p in parts if p)

    def close(self) -> None:
        """End the bar; the last state is on screen (or in the log) exactly once."""
        if self._tqdm is not None:
            self._tqdm.close()
            self._tqdm = None
        elif self.enabled and self.lines and self._printed != (self.n, self.note):
            self._print_line()

    def _line_due(self) -> bool:
        part = int(self.lines * self.n / self.total) if self.total else 0
        return part > self._printed_part or time.perf_counter() - self._printed_time >= self.interval

    def _print_line(self) -> None:
        self.write(self.line())
        self._printed = (self.n, self.note)
        self._printed_time = time.perf_counter()
        self._printed_part = int(self.lines * self.n / self.total) if self.total and self.lines else 0


class Progress:
    """The bench's progress over `total` points (workload and batch): a bar with the current
    point, and after each point a line with its time, implementations and rounds."""

    def __init__(self, total: int, stream: TextIO | None = None, live: bool | None = None) -> None:
        self.total = max(total, 1)
        self.bar = Bar(self.total, "bench", stream=stream, live=live, lines=None, counts=False)
        self.done, self.label = 0, ""
        self.point_started = time.perf_counter()

    def start_point(self, label: str) -> None:
        """Begin the point called `label` (``mlp b=32``)."""
        self.label, self.point_started = label, time.perf_counter()
        self.bar.show(f"point {self.done + 1}/{self.total}: {label}")

    def update(self, fraction: float) -> None:
        """`fraction` (0 to 1) of the current point is done."""
        self.bar.update(self.done + min(max(fraction, 0.0), 1.0) - self.bar.n)

    def finish_point(self, summary: str = "") -> None:
        """The current point is done; print its line (`summary` appended)."""
        self.done += 1
        self.bar.update(self.done - self.bar.n)
        elapsed = time.perf_counter() - self.point_started
        self.bar.write(f"[{self.done}/{self.total}] {self.label}: {elapsed:.1f} s{summary}; {self.bar.timing()}")

    def log(self, message: str) -> None:
        """Print `message` on its own line, above the bar."""
        self.bar.write(message)

    def close(self) -> None:
        self.bar.close()
