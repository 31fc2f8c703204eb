"""`torch.signal.windows`: window functions, with PyTorch's signatures."""

from __future__ import annotations
