"""The DataLoader's worker processes, as PyTorch's ``torch.utils.data._utils.worker``.

A worker computes on the host: it runs with the numpy backend current, so what a dataset or
collate function makes there is numpy tensors, and every tensor in a batch is moved to numpy
before it is sent (`tensors_moved`). The main process moves the batches to its current
backend; no torch, jax or dask array crosses between processes. Started by "spawn" or
"forkserver", a worker gets the dataset pickled with its tensors moved to numpy
(`HostPickled`), so it never imports the main process's array library for them; a "fork"
worker inherits the dataset as it is (tensors of a library that cannot be forked, jax's or a
GPU's, call for ``multiprocessing_context="spawn"``).
"""

from __future__ import annotations

import collections.abc
import io
import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

import autograd_core as ag
import backends
from autograd_core.utils.data._utils.fetch import IterableDatasetFetcher

STATUS_CHECK_INTERVAL = 1.0  # seconds between checks that the other side is alive

_worker_info: WorkerInfo | None = None


@dataclass(frozen=True)
class WorkerInfo:
    """Who this worker is: its `id` (0 to ``num_workers - 1``), `num_workers`, the `seed` its
    random streams were seeded with, and its copy of the `dataset`."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker, its `WorkerInfo`; in the main process, None. An iterable
    dataset reads it in ``__iter__`` to give each worker its own share of the data.

    >>> get_worker_info() is None
    True
    """
    return _worker_info


class _KeyErrorMessage(str):
    """A KeyError's text printed as it is, not quoted (KeyError prints its argument's repr)."""

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception caught in a worker, with its traceback as text, raised again in the main
    process by `reraise` with that text (the worker's frames cannot cross processes)."""

    def __init__(self, where: str) -> None:
        kind, value, tb = sys.exc_info()
        self.exc_type = kind
        self.exc_msg = "".join(traceback.format_exception(kind, value, tb))
        self.where = where

    def reraise(self) -> None:
        message = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            message = _KeyErrorMessage(message)
        try:
            exception = self.exc_type(message)
        except Exception:  # an exception type whose constructor takes other arguments
            raise RuntimeError(message) from None
        raise exception


@dataclass(frozen=True)
class IterableDatasetStopIteration:
    """A worker's word that its copy of an iterable dataset is used up."""

    worker_id: int


class ResumeIteration:
    """The main process's word to a persistent worker that a new epoch begins."""


def tensors_moved(data: Any, backend: backends.Backend) -> Any:
    """`data` with each tensor in it (through dicts, named tuples, lists and tuples) moved to
    `backend`; other values unchanged."""
    if isinstance(data, ag.Tensor):
        return data.to(backend)
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(tensors_moved(d, backend) for d in data))
    if isinstance(data, list | tuple):
        return type(data)(tensors_moved(d, backend) for d in data)
    if isinstance(data, collections.abc.Mapping):
        moved = {key: tensors_moved(value, backend) for key, value in data.items()}
        return type(data)(moved) if isinstance(data, dict) else moved
    return data


class _HostPickler(pickle.Pickler):
    """Pickles each tensor as a numpy tensor."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, ag.Tensor) and obj.backend.name != "numpy":
            return obj.to("numpy").__reduce_ex__(pickle.HIGHEST_PROTOCOL)
        return NotImplemented


class HostPickled:
    """A dataset pickled with its tensors moved to numpy, for a worker started afresh."""

    def __init__(self, dataset: Any) -> None:
        buffer = io.BytesIO()
        _HostPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(dataset)
        self.payload = buffer.getvalue()

    def load(self) -> Any:
        return pickle.loads(self.payload)


def _seed_worker(base_seed: int, worker_id: int) -> int:
    """Seed this worker's streams: Python's `random` and ``ag.manual_seed`` with
    ``base_seed + worker_id`` (as PyTorch seeds ``random`` and torch), numpy's global stream
    with a state derived from both."""
    seed = base_seed + worker_id
    random.seed(seed)
    ag.manual_seed(seed)
    np.random.seed(np.random.SeedSequence([base_seed, worker_id]).generate_state(4))
    return seed


@dataclass(frozen=True)
class WorkerSetup:
    """How one DataLoader iterator reads its dataset: what its fetcher is made of, and what
    each of its workers is given (the dataset, for a worker started afresh, `HostPickled`)."""

    fetcher_class: type
    dataset: Any
    auto_collation: bool
    collate_fn: Any
    drop_last: bool
    base_seed: int
    init_fn: Any
    num_workers: int

    def fetcher(self, dataset: Any) -> Any:
        return self.fetcher_class(dataset, self.auto_collation, self.collate_fn, self.drop_last)


def worker_loop(setup: WorkerSetup, worker_id: int, index_queue: Any, data_queue: Any, done_event: Any) -> None:
    """A worker's life: seed, run the init function, then answer each ``(task, indices)`` of
    `index_queue` with ``(task, batch)`` on `data_queue` (an `ExceptionWrapper` for a batch that
    failed), until told None, or its parent process is gone."""
    try:
        with backends.use("numpy"):
            _serve(setup, worker_id, index_queue, data_queue, done_event)
    except KeyboardInterrupt:  # the main process's Ctrl-C reaches the workers too; it reports it
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()


def _serve(setup: WorkerSetup, worker_id: int, index_queue: Any, data_queue: Any, done_event: Any) -> None:
    global _worker_info
    parent = os.getppid()
    seed = _seed_worker(setup.base_seed, worker_id)
    dataset = setup.dataset.load() if isinstance(setup.dataset, HostPickled) else setup.dataset
    _worker_info = WorkerInfo(id=worker_id, num_workers=setup.num_workers, seed=seed, dataset=dataset)
    where = f"in DataLoader worker process {worker_id}"
    failure, fetcher = None, None
    try:
        if setup.init_fn is not None:
            setup.init_fn(worker_id)
        fetcher = setup.fetcher(dataset)
    except Exception:
        failure = ExceptionWrapper(where)
    iteration_end = False
    host = backends.get("numpy")
    while os.getppid() == parent:
        try:
            task = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
        except queue.Empty:
            continue
        if isinstance(task, ResumeIteration):
            data_queue.put((task, None))
            iteration_end = False
            if failure is None:
                fetcher = setup.fetcher(dataset)
            continue
        if task is None:
            break
        if done_event.is_set() or iteration_end:
            continue
        number, index = task
        if failure is not None:
            data, failure = failure, None
        else:
            try:
                data = tensors_moved(fetcher.fetch(index), host)
            except StopIteration:
                if setup.fetcher_class is not IterableDatasetFetcher:
                    data = ExceptionWrapper(where)
                else:
                    data, iteration_end = IterableDatasetStopIteration(worker_id), True
            except Exception:
                data = ExceptionWrapper(where)
        data_queue.put((number, data))
