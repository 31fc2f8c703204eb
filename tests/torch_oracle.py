"""PyTorch as a differential oracle: the same host inputs fed to both frameworks, outputs
and gradients compared. Shared by the parity test files."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

import autograd_core as ag
from helpers import assert_close, host


# --- inputs ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Arg:
    """How to draw one input on the host, and whether it is differentiated."""

    make: Callable[[np.random.Generator], np.ndarray]
    grad: bool = True


def normal(*shape: int, scale: float = 1.0) -> Arg:
    return Arg(lambda r: scale * r.standard_normal(shape))


def positive(*shape: int) -> Arg:
    return Arg(lambda r: r.uniform(0.5, 2.0, shape))


def const(value: Any) -> Arg:
    """A fixed, non-differentiated input (class indices, index arrays, masks...)."""
    return Arg(lambda r: np.asarray(value), grad=False)


def mask(*shape: int) -> Arg:
    return Arg(lambda r: r.random(shape) < 0.5, grad=False)


def compare_with_torch(ours: Callable, theirs: Callable, args: Sequence[Arg], seed: int = 0) -> None:
    """Run `ours` on autograd_core tensors and `theirs` on torch tensors built from the same
    host inputs; assert equal float64 outputs, then equal gradients of ``(out * w).sum()``
    for every differentiated input. Outputs and gradients must also be finite."""
    rng = np.random.default_rng(seed)
    inputs = [(a.make(rng), a.grad) for a in args]
    mine = [ag.tensor(h, requires_grad=g) for h, g in inputs]
    ref = [torch.tensor(h, requires_grad=g) for h, g in inputs]
    out, ref_out = ours(*mine), theirs(*ref)
    assert out.shape == tuple(ref_out.shape)
    assert out.dtype == ag.float64
    assert np.all(np.isfinite(host(out)))
    assert_close(out, ref_out)

    weight = rng.standard_normal(out.shape)
    (out * ag.tensor(weight)).sum().backward()
    (ref_out * torch.tensor(weight)).sum().backward()
    for m, r, (_, g) in zip(mine, ref, inputs):
        if g:
            assert m.grad is not None and m.grad.shape == m.shape and m.grad.dtype == ag.float64
            assert np.all(np.isfinite(host(m.grad)))
            assert_close(m.grad, r.grad)
