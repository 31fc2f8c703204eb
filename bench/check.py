"""The loss cross-check: a fast wrong step must not win.

Every implementation of a point started from the same weights and took the same steps on
the same batches, so at the same step their losses (for the op chain: the gradient of its
weight) agree up to float32 rounding, amplified a little by training (the timer reads them
early enough for that to stay small, see `bench.timing.time_lockstep`). Each value is
compared with the consensus, the median of all of them, so one wrong implementation among
several is singled out; with two that disagree, both are marked.

With dropout (the CNN's and the GPT's), each library draws its own masks, so losses are
compared only within a group of implementations that draw the same masks (`Impl.masks`); one
alone in its group has nothing to be compared with, and its verdict says so.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

# Agreement expected between float32 trajectories of about 15 AdamW steps: measured at up
# to 3e-5 between OpenBLAS, oneDNN and XLA matrix products (MLP, batch 2048).
RTOL = 1e-3
ATOL = 1e-5


@dataclass(frozen=True)
class Verdict:
    """One implementation's check value, the consensus it was held against, and whether they
    agree (None when there was nothing to compare with, and `note` says why)."""

    value: float
    reference: float
    ok: bool | None
    note: str = ""


def cross_check(values: dict[str, float], rtol: float = RTOL, atol: float = ATOL) -> dict[str, Verdict]:
    """name -> Verdict for every value in `values` (name -> check value)."""
    finite = [v for v in values.values() if math.isfinite(v)]
    reference = statistics.median(finite) if finite else math.nan
    verdicts = {}
    for name, value in values.items():
        if len(values) < 2:
            ok = None
        else:
            ok = math.isfinite(value) and abs(value - reference) <= atol + rtol * abs(reference)
        verdicts[name] = Verdict(value, reference, ok)
    return verdicts


def cross_check_within(
    values: dict[str, float], groups: dict[str, str], rtol: float = RTOL, atol: float = ATOL
) -> dict[str, Verdict]:
    """`cross_check` within each group of `groups` (name -> the generator of its dropout masks):
    only implementations that draw the same masks compute the same losses. One alone in its
    group gets ``ok=None`` and a note naming its generator.

    >>> v = cross_check_within({"a": 1.0, "b": 1.0, "c": 2.0}, {"a": "torch", "b": "torch", "c": "jax"})
    >>> v["a"].ok, v["c"].ok, v["c"].note
    (True, None, 'alone in drawing jax dropout masks: nothing to compare with')
    """
    verdicts: dict[str, Verdict] = {}
    for group in dict.fromkeys(groups[name] for name in values):
        members = {name: value for name, value in values.items() if groups[name] == group}
        for name, verdict in cross_check(members, rtol, atol).items():
            note = f"alone in drawing {group} dropout masks: nothing to compare with" if len(members) < 2 else ""
            verdicts[name] = Verdict(verdict.value, verdict.reference, verdict.ok, note)
    return {name: verdicts[name] for name in values}
