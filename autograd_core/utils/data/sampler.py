"""The orders a DataLoader reads a dataset in, as PyTorch's ``torch.utils.data.sampler``.

The random ones take PyTorch's ``generator=`` and draw as `_utils.rng` describes: from the
generator's stream (a new order each ``iter()``), or, without one, from a stream seeded afresh
at each ``iter()`` by the global stream ``ag.manual_seed`` seeds.

>>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

import numpy as np

import autograd_core as ag
from autograd_core.utils.data._utils.rng import numpy_generator

T = TypeVar("T")


class Sampler(Generic[T]):
    """The base of every sampler: an iterable of indices (or of lists of indices, for a batch
    sampler) into a dataset, with ``__len__`` where the count is known.

    >>> class Evens(Sampler[int]):
    ...     def __init__(self, n): self.n = n
    ...     def __iter__(self): return iter(range(0, self.n, 2))
    >>> list(Evens(5))
    [0, 2, 4]
    """

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[T]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``, in order.

    >>> list(SequentialSampler("abc"))
    [0, 1, 2]
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _require_bool(name: str, value: Any, error: type[Exception] = ValueError) -> None:
    if not isinstance(value, bool):
        raise error(f"{name} should be a boolean value, but got {name}={value}")


def _require_positive_int(name: str, value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


def _permutations(rng: np.random.Generator, n: int, count: int) -> list[int]:
    """`count` indices below `n`: whole permutations, then the start of one more."""
    whole, rest = divmod(count, n)
    return [i for _ in range(whole) for i in rng.permutation(n).tolist()] + rng.permutation(n)[:rest].tolist()


class RandomSampler(Sampler[int]):
    """The indices of `data_source` shuffled, a new order each ``iter()``: a permutation (or,
    when `num_samples` exceeds the length, several one after another), or with `replacement`
    `num_samples` draws (default: the length).

    >>> sorted(RandomSampler(range(4)))
    [0, 1, 2, 3]
    >>> len(RandomSampler(range(4), replacement=True, num_samples=10))
    10
    """

    def __init__(
        self, data_source: Sized, replacement: bool = False, num_samples: int | None = None, generator: Any = None
    ) -> None:
        self.data_source, self.replacement, self.generator = data_source, replacement, generator
        self._num_samples = num_samples
        _require_bool("replacement", replacement, TypeError)
        _require_positive_int("num_samples", self.num_samples)

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, rng = len(self.data_source), numpy_generator(self.generator)
        if self.replacement:
            return iter(rng.integers(0, n, self.num_samples).tolist())
        return iter(_permutations(rng, n, self.num_samples))

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given `indices`, in a new random order each ``iter()``.

    >>> sorted(SubsetRandomSampler([7, 3, 5]))
    [3, 5, 7]
    """

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[int]:
        return (self.indices[i] for i in numpy_generator(self.generator).permutation(len(self.indices)).tolist())

    def __len__(self) -> int:
        return len(self.indices)


def _host_values(values: Any) -> np.ndarray:
    return values.detach().numpy() if isinstance(values, ag.Tensor) else np.asarray(values)


class WeightedRandomSampler(Sampler[int]):
    """`num_samples` indices drawn with probabilities proportional to `weights` (which need
    not sum to one), with `replacement` or without.

    >>> list(WeightedRandomSampler([0.0, 1.0, 0.0], 3))
    [1, 1, 1]
    """

    def __init__(
        self, weights: Sequence[float], num_samples: int, replacement: bool = True, generator: Any = None
    ) -> None:
        _require_positive_int("num_samples", num_samples)
        _require_bool("replacement", replacement)
        host = _host_values(weights).astype(np.float64)
        if host.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(host.shape)}")
        if (host < 0).any() or not np.isfinite(host).all() or host.sum() <= 0:
            raise RuntimeError("weights must be finite, non-negative and not all zero")
        self.weights = ag.asarray(host)
        self._probabilities = host / host.sum()
        self.num_samples, self.replacement, self.generator = num_samples, replacement, generator

    def __iter__(self) -> Iterator[int]:
        if not self.replacement and self.num_samples > np.count_nonzero(self._probabilities):
            raise RuntimeError(
                f"cannot sample num_samples={self.num_samples} indices without replacement from "
                f"{np.count_nonzero(self._probabilities)} non-zero weights; lower num_samples or pass replacement=True"
            )
        rng = numpy_generator(self.generator)
        draws = rng.choice(len(self._probabilities), self.num_samples, self.replacement, self._probabilities)
        return iter(draws.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """The indices of `sampler` grouped into lists of `batch_size`; the last, shorter one is
    kept unless `drop_last`.

    >>> list(BatchSampler(range(5), batch_size=2, drop_last=True))
    [[0, 1], [2, 3]]
    """

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool) -> None:
        _require_positive_int("batch_size", batch_size)
        _require_bool("drop_last", drop_last)
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        count = len(self.sampler)  # type: ignore[arg-type]
        return count // self.batch_size if self.drop_last else math.ceil(count / self.batch_size)


class _InfiniteConstantSampler(Sampler[None]):
    """None forever: the placeholder indices a DataLoader over an iterable dataset batches."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]
