"""Reading one batch (or one sample) out of a dataset, in the main process or a worker, as
PyTorch's ``torch.utils.data._utils.fetch``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class MapDatasetFetcher:
    """Indexes a map-style dataset: a list of indices gives the collated samples (through the
    dataset's ``__getitems__`` where it has one), a single index one converted sample."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable, drop_last: bool) -> None:
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, possibly_batched_index: Any) -> Any:
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems:
            return self.collate_fn(getitems(possibly_batched_index))
        return self.collate_fn([self.dataset[i] for i in possibly_batched_index])


class IterableDatasetFetcher:
    """Draws from one iterator of an iterable dataset: as many samples as the batch of
    placeholders asks for (raising StopIteration once it is used up, or on a short last batch
    with `drop_last`), or one sample."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable, drop_last: bool) -> None:
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)
