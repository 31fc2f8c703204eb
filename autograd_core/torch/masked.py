"""`torch.masked` over our tensors: reductions and normalisations that leave out the masked-out elements."""

from __future__ import annotations
