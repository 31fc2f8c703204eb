"""Datasets, samplers and `DataLoader`, as PyTorch's ``torch.utils.data`` (also reachable as
``autograd_core.torch.utils.data``).

Batches are tensors of the backend current when they are read; worker processes build them
on the host (numpy) and the main process moves them (see `dataloader`). Random orders take
PyTorch's ``generator=`` and draw from numpy streams derived from it (see `_utils.rng`).

>>> import autograd_core as ag
>>> from autograd_core.utils.data import DataLoader, TensorDataset
>>> loader = DataLoader(TensorDataset(ag.arange(6.0), ag.arange(6)), batch_size=4)
>>> [tuple(x.shape) for x, y in loader], len(loader)
([(4,), (2,)], 2)
"""

from autograd_core.utils.data._utils.collate import default_collate, default_convert
from autograd_core.utils.data._utils.worker import WorkerInfo, get_worker_info
from autograd_core.utils.data.dataloader import DataLoader
from autograd_core.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from autograd_core.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "WorkerInfo",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
