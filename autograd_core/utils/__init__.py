"""PyTorch's ``torch.utils`` over our tensors: `data` (datasets, samplers, `DataLoader`)."""

from autograd_core.utils import data

__all__ = ["data"]
