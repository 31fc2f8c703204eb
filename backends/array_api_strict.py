"""array-api-strict: the conformance backend. It accepts nothing outside the standard, so
the test suite run on it proves the core is written against the standard alone."""

from __future__ import annotations

import array_api_strict as xp
import numpy as np

from backends.contract.backend import Backend


class StrictBackend(Backend):
    name = "array_api_strict"
    defers_operators = False  # its operators raise TypeError on any operand not its own

    def to_numpy(self, x):
        return np.from_dlpack(x)

    def silent_errors(self):
        return np.errstate(all="ignore")  # it computes with numpy, which warns


def create(device: str | None = None) -> Backend:
    return StrictBackend(xp, xp._array_object.Array, None if device is None else xp.Device(device))
