"""Datasets, as PyTorch's ``torch.utils.data.dataset``: map-style ones (``dataset[i]`` and
``len``) and iterable ones (``iter``), and the ways of combining and splitting them.

>>> import autograd_core as ag
>>> data = TensorDataset(ag.arange(6).reshape(3, 2), ag.tensor([0, 1, 0]))
>>> x, y = data[1]
>>> x.tolist(), y.item(), len(data)
([2, 3], 1, 3)
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from autograd_core.utils.data._utils.rng import numpy_generator

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses give ``__getitem__`` (and usually ``__len__``);
    ``a + b`` concatenates two.

    >>> class Squares(Dataset):
    ...     def __getitem__(self, i): return i * i
    ...     def __len__(self): return 4
    >>> (Squares() + Squares())[5]
    1
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A dataset read as a stream: subclasses give ``__iter__``. With DataLoader workers each
    worker iterates its own copy, so ``__iter__`` should read `get_worker_info` to yield only
    its share (else each sample comes once per worker). ``a + b`` chains two.

    >>> class Count(IterableDataset):
    ...     def __iter__(self): return iter(range(3))
    >>> list(Count() + Count())
    [0, 1, 2, 0, 1, 2]
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset[T_co]) -> ChainDataset:
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple]):
    """Samples that are rows of tensors (or arrays) of one length: ``data[i]`` is the tuple of
    each one's row `i`.

    >>> import numpy as np
    >>> TensorDataset(np.zeros((5, 2)), np.arange(5))[4][1]
    np.int64(4)
    """

    def __init__(self, *tensors: Any) -> None:
        if any(len(t) != len(tensors[0]) for t in tensors):
            raise ValueError(f"Size mismatch between tensors: lengths {[len(t) for t in tensors]}; give one per sample")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return len(self.tensors[0])


class StackDataset(Dataset):
    """Datasets of one length side by side: ``StackDataset(a, b)[i]`` is ``(a[i], b[i])``,
    ``StackDataset(x=a, y=b)[i]`` is ``{"x": a[i], "y": b[i]}``.

    >>> StackDataset(x=[1, 2], y="ab")[1]
    {'x': 2, 'y': 'b'}
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/output, "
                "but both types are given."
            )
        self.datasets: tuple | dict = args or kwargs
        members = list(self.datasets.values() if kwargs else args)
        if not members or any(len(d) != len(members[0]) for d in members):
            raise ValueError(f"Size mismatch between datasets: lengths {[len(d) for d in members]}")
        self._length = len(members[0])

    def __getitem__(self, index: int) -> tuple | dict:
        if isinstance(self.datasets, dict):
            return {key: dataset[index] for key, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """Map-style datasets one after another.

    >>> data = ConcatDataset([[1, 2], [3]])
    >>> len(data), data[2], data[-1], data.cumulative_sizes
    (3, 3, 3, [2, 3])
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise TypeError("ConcatDataset does not support IterableDataset; chain them with ChainDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> T_co:
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class ChainDataset(IterableDataset):
    """Iterable datasets read one after another.

    >>> list(ChainDataset([range(2), range(3)]))
    [0, 1, 0, 1, 2]
    """

    def __init__(self, datasets: Iterable[Iterable]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator:
        for dataset in self.datasets:
            yield from dataset

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)  # type: ignore[arg-type]


class Subset(Dataset[T_co]):
    """The samples of `dataset` at `indices`, in that order.

    >>> data = Subset("abcde", [4, 0])
    >>> data[0], len(data)
    ('e', 2)
    """

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index: Any) -> T_co:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: list[int]) -> list:
        inner = getattr(self.dataset, "__getitems__", None)
        if inner:
            return inner([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def _split_lengths(total: int, lengths: Sequence[float]) -> list[int]:
    """`lengths` as counts: fractions that sum to 1 are floored and the remainder handed out
    one by one from the first split; counts are kept."""
    if not (math.isclose(sum(lengths), 1) and sum(lengths) <= 1):
        return [int(n) for n in lengths]
    for i, fraction in enumerate(lengths):
        if not 0 <= fraction <= 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
    counts = [math.floor(total * fraction) for fraction in lengths]
    for i in range(total - sum(counts)):
        counts[i % len(counts)] += 1
    for i, count in enumerate(counts):
        if count == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.", stacklevel=3)
    return counts


def random_split(dataset: Dataset[T_co], lengths: Sequence[float], generator: Any = None) -> list[Subset[T_co]]:
    """`dataset` split at random into disjoint `Subset` s of the given `lengths`: counts that
    sum to its length, or fractions that sum to 1 (floored, the rest handed out one each from
    the first). `generator` seeds the order as the samplers' does (see `_utils.rng`).

    >>> train, test = random_split(range(10), [0.7, 0.3])
    >>> len(train), len(test), sorted([*train, *test]) == list(range(10))
    (7, 3, True)
    """
    counts = _split_lengths(len(dataset), lengths)  # type: ignore[arg-type]
    if sum(counts) != len(dataset):  # type: ignore[arg-type]
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = numpy_generator(generator).permutation(sum(counts)).tolist()
    ends = itertools.accumulate(counts)
    return [Subset(dataset, order[end - count : end]) for end, count in zip(ends, counts)]


__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "StackDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]
