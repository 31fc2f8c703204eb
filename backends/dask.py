"""dask.array, through array-api-compat's namespace: the same engine, modules and optimizers
on arrays split into chunks, computed by dask's local threads or by a dask.distributed cluster.

The device (``device=`` or AUTOGRAD_DEVICE) says where the work runs:

    None or ""          dask's local threaded scheduler, no cluster
    "local:N"           a LocalCluster of N single-threaded worker processes owned by the
                        backend (closed at exit, or by ``backend.close()``), each with the
                        memory limit AUTOGRAD_DASK_WORKER_MEMORY ("2GiB"; default: the
                        machine's memory shared among the workers, as dask does)
    "tcp://host:port"   an existing cluster's scheduler (connecting waits at most
                        AUTOGRAD_DASK_TIMEOUT seconds, default 10)

Everything is lazy: an operation adds tasks to a graph and nothing runs until Python needs
values (``.item()``, ``.numpy()``, printing, ``bool(t)``) or an optimizer step ends, when
`persist` materialises the parameters and optimizer state (on the workers with a cluster) so
the next step's graph starts from them. Arrays made from host data are split along axis 0 into
chunks of AUTOGRAD_DASK_CHUNK_ROWS rows (default 65,536), other axes whole; a parameter, with
fewer rows, is one chunk. A cluster's workers must be able to import this project (the
kernels below run there).
"""

from __future__ import annotations

import atexit
import importlib.util
import os
from typing import Any

import array_api_compat.dask.array as xp
import dask
import dask.array as da
import numpy as np
from dask.utils import parse_bytes

import backends
from backends.base import Backend

# The standard's `x.mT` (the engine uses it on raw arrays), which dask.array lacks: the one
# attribute added to dask's class, only where dask has none.
if not hasattr(da.Array, "mT"):
    da.Array.mT = property(xp.matrix_transpose)

DEFAULT_CHUNK_ROWS = 65_536
DEFAULT_TIMEOUT_S = 10.0


class DaskBackend(Backend):
    """dask.array on the threaded scheduler (``client`` None) or on a distributed cluster.

    `device` stays None (array-api-compat's dask namespace takes no other); `address` is the
    device the backend was asked for, as the registry keys it.
    """

    name = "dask"
    mutable = False
    lazy = True
    device_kinds = ("threads", "local:N", "tcp://host:port")

    def __init__(self, address: str | None = None, client: Any = None, cluster: Any = None) -> None:
        super().__init__(xp, da.Array, None)
        self.address, self.client, self.cluster = address, client, cluster
        self.chunk_rows = int(os.environ.get("AUTOGRAD_DASK_CHUNK_ROWS", DEFAULT_CHUNK_ROWS))

    def __repr__(self) -> str:
        return "Backend('dask')" if self.address is None else f"Backend('dask', device={self.address!r})"

    # --- host transfer and computing -----------------------------------------------------------
    def asarray(self, host: np.ndarray, dtype: Any = None) -> da.Array:
        """A copy of `host` in chunks of `chunk_rows` rows along axis 0 (other axes whole)."""
        host = np.array(host, dtype=dtype, copy=True)
        return da.from_array(host, chunks=(self.chunk_rows, *host.shape[1:]) if host.ndim else ())

    def to_numpy(self, x: Any) -> np.ndarray:
        return np.asarray(self._compute(x)[0])

    def synchronize(self, *arrays: Any) -> None:
        """Compute `arrays` and wait for them (their values are dropped: `persist` keeps them)."""
        self._compute(*arrays)

    def persist(self, arrays: list) -> list:
        """`arrays` computed and kept: arrays that hold their values, one task per chunk and no
        history. With a cluster the values come to the client and are sent back as the tasks
        of a new graph (`_from_host`), so the scheduler forgets the step's tasks: persisting in
        place would keep every past step's tasks there, as lineage, growing its memory step by
        step. Parameters and optimizer state are small next to the data."""
        if self.client is None:
            return list(dask.persist(*arrays, scheduler="threads"))
        return self._from_host(self._compute(*arrays))

    def _from_host(self, hosts: tuple) -> list:
        """Numpy arrays persisted on the workers in `chunk_rows`-row chunks. Their lineage is
        the values themselves, which the scheduler keeps: a chunk lost with its workers (even
        every worker, restarted by their nannies) is made again from them. Scattered data has
        no lineage and would be lost for good."""
        arrays = [da.from_array(h, chunks=(self.chunk_rows, *h.shape[1:]) if h.ndim else (), name=False)
                  for h in hosts]
        return self.client.persist(arrays)

    def _compute(self, *arrays: Any) -> tuple:
        if self.client is not None:  # unoptimised: tasks keep their names in every graph they are sent in
            return tuple(self.client.compute(list(arrays), sync=True))
        return dask.compute(*arrays, scheduler="threads")

    def describe(self) -> str:
        """The scheduler: threads, or the cluster's address, workers and dashboard."""
        if self.client is None:
            return "dask's local threaded scheduler (no cluster)"
        info = self.client.scheduler_info()
        has_dashboard = "dashboard" in info.get("services", {}) and importlib.util.find_spec("bokeh") is not None
        dashboard = f"dashboard {self.client.dashboard_link}" if has_dashboard else "no dashboard (pip install bokeh)"
        return f"scheduler {info['address']}, {len(info['workers'])} workers, {dashboard}"

    def close(self) -> None:
        """Disconnect from the cluster, and stop it if this backend started it (``local:N``);
        the registry then makes a new backend for this device when asked again."""
        backends._instances.pop(("dask", self.address), None)
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client = self.cluster = None

    # --- kernels -----------------------------------------------------------------------------------
    def index_add(self, shape: tuple[int, ...], axis: int, index: Any, values: Any) -> da.Array:
        """Scatter-add, chunk by chunk: each chunk of `values` (rows along `axis`) is added into
        zeros of `shape` by numpy's ``add.at`` on a worker, and the partial sums are added by
        dask's tree reduction. O(len(index)) work, where the portable default is O(n * len(index))."""
        values = values.rechunk({i: -1 for i in range(values.ndim) if i != axis})
        index = da.asarray(index).rechunk((values.chunks[axis],))
        parts = [da.from_delayed(dask.delayed(_index_add_block)(shape, axis, i, v), shape, dtype=values.dtype)
                 for i, v in zip(index.to_delayed(), values.to_delayed().ravel())]
        return da.stack(parts).sum(axis=0) if len(parts) > 1 else parts[0]

    def cross_entropy_rows(self, logits: Any, target: Any) -> da.Array:
        """The portable default's log-sum-exp minus the target's logit, that logit picked by a
        one-hot mask (dask has no take_along_axis): the same numbers, the rows' chunks kept."""
        shift = xp.max(logits, axis=1, keepdims=True)
        lse = xp.log(xp.sum(xp.exp(logits - shift), axis=1, keepdims=True)) + shift
        one_hot = xp.arange(logits.shape[1], dtype=target.dtype) == xp.expand_dims(target, axis=1)
        return xp.reshape(lse, (-1,)) - xp.sum(xp.where(one_hot, logits, 0.0), axis=1)

    def erf(self, x: Any) -> da.Array:
        """The numpy backend's erf on each chunk: one task per chunk, not the portable series'
        hundreds of elementwise ones."""
        return x.map_blocks(_erf_block, dtype=x.dtype)


def _index_add_block(shape: tuple[int, ...], axis: int, index: np.ndarray, values: np.ndarray) -> np.ndarray:
    out = np.zeros(shape, dtype=values.dtype)
    np.add.at(out, (slice(None),) * axis + (index,), values)
    return out


def _erf_block(block: np.ndarray) -> np.ndarray:
    return backends.get("numpy").erf(block)


def _timeout_s() -> float:
    value = os.environ.get("AUTOGRAD_DASK_TIMEOUT", "").strip()
    return float(value) if value else DEFAULT_TIMEOUT_S


def _worker_memory() -> str:
    """AUTOGRAD_DASK_WORKER_MEMORY for a LocalCluster's workers, checked; "auto" when unset."""
    value = os.environ.get("AUTOGRAD_DASK_WORKER_MEMORY", "").strip()
    if not value:
        return "auto"
    try:
        parse_bytes(value)
    except ValueError as e:
        raise ValueError(f"AUTOGRAD_DASK_WORKER_MEMORY={value!r} is not a size: use e.g. 2GiB or 512MiB") from e
    return value


def create(device: str | None = None) -> Backend:
    """The dask backend for `device`: None (threads), ``"local:N"`` or a scheduler address."""
    if not device:
        return DaskBackend()
    from distributed import Client, LocalCluster

    if device.startswith("local:"):
        workers = device.removeprefix("local:")
        if not workers.isdigit() or int(workers) < 1:
            raise ValueError(f"dask device {device!r}: use local:N with N >= 1 worker processes")
        cluster = LocalCluster(n_workers=int(workers), threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=":0", memory_limit=_worker_memory())
        backend = DaskBackend(device, Client(cluster), cluster)
    else:
        timeout = _timeout_s()
        try:
            client = Client(device, timeout=timeout)
        except (OSError, TimeoutError) as e:
            raise backends.BackendUnavailableError(
                f"cannot reach the dask scheduler at {device!r} within {timeout:g} s ({e}); start one with "
                f"`dask scheduler`, or set AUTOGRAD_DEVICE to local:N for a cluster on this machine, or leave it "
                f"empty for dask's threads") from e
        backend = DaskBackend(device, client)
    atexit.register(backend.close)
    return backend
