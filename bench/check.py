"""The loss cross-check: a fast wrong step must not win.

Every implementation of a point started from the same weights and took the same steps on
the same batches, so at the same step their losses (for the op chain: the gradient of its
weight) agree up to float32 rounding, amplified a little by training (the timer reads them
early enough for that to stay small, see `bench.timing.time_lockstep`). Each value is
compared with the consensus, the median of all of them, so one wrong implementation among
several is singled out; with two that disagree, both are marked.
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
    agree (None when there was nothing to compare with)."""

    value: float
    reference: float
    ok: bool | None


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
