"""`DataLoader`, as PyTorch's ``torch.utils.data.DataLoader``: batches of a dataset, in the
main process or in worker processes (the standard library's `multiprocessing`).

Batches come out as tensors of the backend current where they are read (``next()`` runs):
with workers, each worker builds its batches on the host (numpy) and the main process moves
them to that backend, so no torch, jax or dask array crosses between processes (see
`_utils.worker`). `pin_memory` is accepted and does nothing: batches are placed by the
current backend's device.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import multiprocessing
import multiprocessing.context
import queue
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import backends
from autograd_core.utils.data._utils.collate import default_collate, default_convert
from autograd_core.utils.data._utils.fetch import IterableDatasetFetcher, MapDatasetFetcher
from autograd_core.utils.data._utils.rng import draw_seed
from autograd_core.utils.data._utils.worker import (
    STATUS_CHECK_INTERVAL,
    ExceptionWrapper,
    HostPickled,
    IterableDatasetStopIteration,
    ResumeIteration,
    WorkerSetup,
    get_worker_info,
    tensors_moved,
    worker_loop,
)
from autograd_core.utils.data.dataset import Dataset, IterableDataset
from autograd_core.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    _InfiniteConstantSampler,
)

T_co = TypeVar("T_co", covariant=True)

_FIXED_AFTER_INIT = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


def _check_arguments(
    dataset: Any, batch_size: int | None, shuffle: bool | None, sampler: Any, batch_sampler: Any, drop_last: bool
) -> None:
    """PyTorch's checks of the ways to choose the order and the batches, with its messages."""
    if isinstance(dataset, IterableDataset):
        given = {"shuffle": shuffle if shuffle not in (False, None) else None, "sampler": sampler}
        for name, value in {**given, "batch_sampler": batch_sampler}.items():
            if value is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified {name} option, but got {name}={value}"
                )
    if sampler is not None and shuffle:
        raise ValueError("sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
        raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last")
    if batch_sampler is None and batch_size is None and drop_last:
        raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")


def _check_workers(num_workers: int, timeout: float, prefetch_factor: int | None, persistent_workers: bool) -> None:
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError(
            "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable "
            "multiprocessing, otherwise set prefetch_factor to None."
        )
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")


class DataLoader(Generic[T_co]):
    """Iterates over `dataset` in batches, as PyTorch's DataLoader, with the same arguments.

    - the order: `sampler` (indices), or ``shuffle=True`` for a new random order each epoch
      (drawn from `generator`, see `_utils.rng`), else in order; an `IterableDataset` gives
      its own order.
    - the batches: `batch_size` samples each (the last shorter unless `drop_last`), put
      together by `collate_fn` (default `default_collate`); or a `batch_sampler` giving lists
      of indices; ``batch_size=None`` yields single samples through `default_convert`.
    - workers: ``num_workers > 0`` reads in that many processes of `multiprocessing_context`
      (the platform's default, or "spawn", "forkserver", "fork" or a context), each holding
      ``prefetch_factor`` (default 2) batches ahead, seeded ``base_seed + worker_id`` and
      then calling ``worker_init_fn(worker_id)``; the batches come in the same order as
      without workers. An iterable dataset is copied to every worker and should split itself
      with `get_worker_info`. A worker's exception is raised again here with its traceback.
      `persistent_workers` keeps the workers from one epoch to the next; `timeout` (seconds,
      0 for none) bounds the wait for a batch.
    - `pin_memory` and `pin_memory_device` are accepted and do nothing; `in_order=False`
      still yields in order, which it allows.

    >>> import autograd_core as ag
    >>> from autograd_core.utils.data import TensorDataset
    >>> data = TensorDataset(ag.arange(10.0).reshape(5, 2), ag.arange(5))
    >>> [y.tolist() for x, y in DataLoader(data, batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    def __init__(
        self,
        dataset: Dataset[T_co],
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | None = None,
        batch_sampler: Sampler | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        _check_workers(num_workers, timeout, prefetch_factor, persistent_workers)
        _check_arguments(dataset, batch_size, shuffle, sampler, batch_sampler, drop_last)
        if batch_sampler is not None:
            batch_size, drop_last = None, False
        if sampler is None:
            if isinstance(dataset, IterableDataset):
                sampler = _InfiniteConstantSampler()
            else:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.sampler, self.batch_sampler, self.generator = sampler, batch_sampler, generator
        self.num_workers, self.timeout, self.worker_init_fn = num_workers, timeout, worker_init_fn
        self.prefetch_factor = 2 if num_workers > 0 and prefetch_factor is None else prefetch_factor
        self.pin_memory, self.pin_memory_device, self.in_order = pin_memory, pin_memory_device, in_order
        self.collate_fn = collate_fn or (default_collate if batch_sampler is not None else default_convert)
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self._iterator: _MultiProcessingDataLoaderIter | None = None
        self._initialized = True

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_initialized", False) and name in _FIXED_AFTER_INIT:
            raise ValueError(f"{name} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def multiprocessing_context(self) -> multiprocessing.context.BaseContext | None:
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context: Any) -> None:
        if context is not None and self.num_workers == 0:
            raise ValueError(
                "multiprocessing_context can only be used with multi-process loading (num_workers > 0), but got "
                f"num_workers={self.num_workers}"
            )
        if isinstance(context, str):
            methods = multiprocessing.get_all_start_methods()
            if context not in methods:
                raise ValueError(
                    f"multiprocessing_context option should specify a valid start method in {methods!r}, but got "
                    f"multiprocessing_context={context!r}"
                )
            context = multiprocessing.get_context(context)
        elif context is not None and not isinstance(context, multiprocessing.context.BaseContext):
            raise TypeError(
                "multiprocessing_context option should be a valid context object or a string specifying the start "
                f"method, but got multiprocessing_context={context}"
            )
        self._multiprocessing_context = context

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        """What each step draws: a list of indices (batching), or one index."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _BaseDataLoaderIter:
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        if not self.persistent_workers:
            return _MultiProcessingDataLoaderIter(self)
        if self._iterator is None:
            self._iterator = _MultiProcessingDataLoaderIter(self)
        else:
            self._iterator.reset(self)
        return self._iterator

    def __len__(self) -> int:
        """The number of batches: the index sampler's length, or for an iterable dataset with a
        length, that length in batches (rounded as `drop_last` says)."""
        if not isinstance(self.dataset, IterableDataset):
            return len(self._index_sampler)
        length = len(self.dataset)  # type: ignore[arg-type]
        if self.batch_size is None:
            return length
        return length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)


class _BaseDataLoaderIter:
    """One pass over a DataLoader: draws the indices and the workers' base seed, and moves each
    batch to the current backend."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        iterable = isinstance(loader.dataset, IterableDataset)
        self._setup = WorkerSetup(
            IterableDatasetFetcher if iterable else MapDatasetFetcher,
            loader.dataset,
            loader._auto_collation,
            loader.collate_fn,
            loader.drop_last,
            draw_seed(loader.generator),
            loader.worker_init_fn,
            loader.num_workers,
        )
        self._sampler_iter = iter(loader._index_sampler)

    def __iter__(self) -> _BaseDataLoaderIter:
        return self

    def __next__(self) -> Any:
        return tensors_moved(self._next_data(), backends.current())

    def __len__(self) -> int:
        return len(self._loader)

    def _next_data(self) -> Any:
        raise NotImplementedError


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._dataset_fetcher = self._setup.fetcher(loader.dataset)

    def _next_data(self) -> Any:
        return self._dataset_fetcher.fetch(next(self._sampler_iter))


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Sends each step's indices to the workers in turn, ``prefetch_factor`` per worker ahead,
    and yields their batches in the order of the steps (PyTorch's protocol)."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        context = loader.multiprocessing_context or multiprocessing.get_context()
        backends.get("numpy")  # made here once: forked workers inherit it (it compiles kernels when made)
        setup = self._setup
        if context.get_start_method() != "fork":
            setup = dataclasses.replace(setup, dataset=HostPickled(loader.dataset))
        self._num_workers, self._prefetch = loader.num_workers, loader.prefetch_factor * loader.num_workers
        self._persistent, self._timeout = loader.persistent_workers, loader.timeout
        self._data_queue, self._done_event = context.Queue(), context.Event()
        self._index_queues, self._workers = [], []
        self._shutdown = False
        for worker_id in range(self._num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()
            arguments = (setup, worker_id, index_queue, self._data_queue, self._done_event)
            worker = context.Process(target=worker_loop, args=arguments, daemon=True)
            worker.start()
            self._index_queues.append(index_queue)
            self._workers.append(worker)
        self._start_epoch()

    def _start_epoch(self) -> None:
        self._send_idx = self._rcvd_idx = 0
        self._task_info: dict[int, tuple] = {}  # step -> (worker,) while awaited, (worker, batch) once early
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch):
            self._try_put_index()

    def reset(self, loader: DataLoader) -> None:
        """A new epoch on the same (persistent) workers: each starts its dataset again."""
        self._sampler_iter = iter(loader._index_sampler)
        for index_queue in self._index_queues:
            index_queue.put(ResumeIteration())
        resumed = 0
        while resumed < self._num_workers:
            number, _ = self._get_data()
            resumed += isinstance(number, ResumeIteration)
        self._start_epoch()

    def _try_put_index(self) -> None:
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return  # every worker has used up its iterable dataset
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._send_idx += 1

    def _get_data(self) -> tuple[Any, Any]:
        """The next ``(step, batch)`` any worker sent; a worker that died, or a wait past
        `timeout`, is an error."""
        while True:
            try:
                return self._data_queue.get(timeout=self._timeout or STATUS_CHECK_INTERVAL)
            except queue.Empty:
                dead = [w for i, w in enumerate(self._workers) if self._workers_status[i] and not w.is_alive()]
                if dead:
                    self._shutdown_workers()
                    pids = ", ".join(str(w.pid) for w in dead)
                    raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from None
                if self._timeout:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None

    def _next_data(self) -> Any:
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._workers_status[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]  # sent to a worker whose dataset has ended
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                return self._delivered(self._task_info.pop(self._rcvd_idx)[1])
            number, data = self._get_data()
            if isinstance(number, ResumeIteration):
                continue
            if isinstance(data, IterableDatasetStopIteration):
                self._worker_ended(data.worker_id)
                self._try_put_index()
            elif number != self._rcvd_idx:
                self._task_info[number] += (data,)
            else:
                del self._task_info[number]
                return self._delivered(data)

    def _delivered(self, data: Any) -> Any:
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _worker_ended(self, worker_id: int) -> None:
        """A worker whose iterable dataset is used up gets no more steps (and, unless
        persistent, is told to exit)."""
        self._workers_status[worker_id] = False
        if not self._persistent:
            self._index_queues[worker_id].put(None)

    def _shutdown_workers(self) -> None:
        if self._shutdown:
            return
        self._shutdown = True
        self._done_event.set()
        for index_queue in self._index_queues:
            index_queue.put(None)
        for worker in self._workers:
            worker.join(timeout=STATUS_CHECK_INTERVAL)
            if worker.is_alive():
                worker.terminate()
        for q in (*self._index_queues, self._data_queue):
            q.cancel_join_thread()
            q.close()

    def __del__(self) -> None:
        if getattr(self, "_workers", None):
            self._shutdown_workers()


__all__ = ["DataLoader", "get_worker_info"]
