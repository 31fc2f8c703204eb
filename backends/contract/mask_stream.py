"""The random stream dropout draws its masks from: counter-based, so a trace can draw too.

Each draw takes the stream's key and its counter, and advances the counter by one. Its bits
are a hash of (key, counter, element index), computed with the array API's integer ops on
any backend. Nothing is drawn on the host, so a compiled step (`autograd_core.transforms.compile`) takes
the key and the counter as inputs, draws inside its trace, and hands back the counter it
reached: compiled and op-by-op steps give the same masks on every backend, bit for bit.

The hash is Wellons's ``lowbias32`` integer mixer, kept in int64 so every library runs it
(unsigned 32-bit arithmetic is missing or partial in some): each value stays in [0, 2**32),
and the multiply by the constant above 2**31 is split in two halves so that no product
overflows int64.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

WORD = 0xFFFFFFFF
SHIFTS, MULTIPLIERS = (16, 15, 16), (0x7FEB352D, 0x846CA68B, None)  # lowbias32's: x ^= x >> s; x *= m
_KEY_SALT = 0x9E3779B9  # any odd constant: keeps seed 0's first word off 0


class _Stream:
    def __init__(self, key: Any, counter: Any, traced: bool = False) -> None:
        self.key, self.counter, self.traced = key, counter, traced


_stream = _Stream(0, 0)


def in_trace() -> bool:
    """Whether the stream is a trace's inputs (`traced`): a draw then changes from call to
    call of the compiled function, where a draw from the eager stream would be frozen in."""
    return _stream.traced


def manual_seed(seed: int) -> None:
    """Restart the stream at `seed` (any int; its low 63 bits count)."""
    global _stream
    _stream = _Stream(seed & (2**63 - 1), 0)


def get_state() -> tuple[Any, Any]:
    """(key, counter): where the stream stands (ints, or a trace's arrays)."""
    return _stream.key, _stream.counter


def set_state(state: tuple[Any, Any]) -> None:
    _stream.key, _stream.counter = state


def next_draw() -> tuple[Any, Any]:
    """The key and counter of the next draw (ints, or a trace's 0-d arrays), then one step on."""
    key, counter = _stream.key, _stream.counter
    _stream.counter = counter + 1
    return key, counter


@contextlib.contextmanager
def traced(key: Any, counter: Any) -> Iterator[_Stream]:
    """The stream at (`key`, `counter`), a trace's 0-d int64 inputs, for the while; the stream
    yielded holds the counter the trace reached when the block ends."""
    global _stream
    outer, _stream = _stream, _Stream(key, counter, traced=True)
    try:
        yield _stream
    finally:
        _stream = outer


def _mul_word(x: Any, constant: int) -> Any:
    """(x * constant) mod 2**32 for x in [0, 2**32), with no int64 product past 2**63."""
    if constant < 2**31:
        return (x * constant) & WORD
    high, low = constant >> 16, constant & 0xFFFF
    return (x * low + (((x * high) & 0xFFFF) << 16)) & WORD


def _mix(x: Any) -> Any:
    for shift, multiplier in zip(SHIFTS, MULTIPLIERS):
        x = x ^ (x >> shift)
        if multiplier is not None:
            x = _mul_word(x, multiplier)
    return x


def draw_word(xp: Any, key: Any, counter: Any, device: Any = None) -> Any:
    """The 0-d int64 word of draw (`key`, `counter`): three rounds over the key's two halves and the counter."""
    key = xp.asarray(key, dtype=xp.int64, device=device)
    word = _mix((key & WORD) ^ _KEY_SALT)
    word = _mix(word ^ ((key >> 32) & WORD))
    return _mix(word ^ (xp.asarray(counter, dtype=xp.int64, device=device) & WORD))


def threshold(p: float) -> int:
    """The bound under which a draw's bits count as True with probability `p`."""
    return round(p * 2**32)


def bits(xp: Any, shape: tuple[int, ...], key: Any, counter: Any, device: Any = None) -> Any:
    """int64 values uniform in [0, 2**32), one per element of `shape`, for draw (`key`, `counter`):
    one round over each element's flat index xor the draw's word."""
    index = xp.reshape(xp.arange(math.prod(shape), dtype=xp.int64, device=device), shape) & WORD
    return _mix(index ^ draw_word(xp, key, counter, device))


__all__ = [
    "MULTIPLIERS",
    "SHIFTS",
    "bits",
    "draw_word",
    "get_state",
    "in_trace",
    "manual_seed",
    "next_draw",
    "set_state",
    "traced",
]
