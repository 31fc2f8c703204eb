"""`torch.linalg` over our tensors, with PyTorch's signatures: `autograd_core.linalg`'s functions,
with the rows of `FUNCTIONS` where PyTorch's differ."""

from __future__ import annotations

from typing import Any

from autograd_core import linalg as _ours

FUNCTIONS: dict[str, Any] = {}

globals().update({name: getattr(_ours, name) for name in getattr(_ours, "__all__", ()) if name not in FUNCTIONS})
globals().update(FUNCTIONS)
