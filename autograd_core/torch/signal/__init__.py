"""`torch.signal` over our tensors."""

from autograd_core.torch.signal import windows

__all__ = ["windows"]
