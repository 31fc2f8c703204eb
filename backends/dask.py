"""dask.array, through array-api-compat's namespace: the same engine, modules and optimizers
on arrays split into chunks, computed by dask's local threads or by a dask.distributed cluster.

The device (``device=`` or AUTOGRAD_DEVICE) says where the work runs:

    None or ""          dask's local threaded scheduler, no cluster
    "local:N"           a cluster on this machine (`local_cluster`): a scheduler process and N
                        single-threaded worker processes owned by the backend (closed at
                        exit, or by ``backend.close()``), each worker with the
                        memory limit AUTOGRAD_DASK_WORKER_MEMORY ("2GiB"; default: the
                        machine's memory shared among the workers, as dask does)
    "tcp://host:port"   an existing cluster's scheduler (connecting waits at most
                        AUTOGRAD_DASK_TIMEOUT seconds, default 10)

Everything is lazy: an operation adds tasks to a graph and nothing runs until Python needs
values (``.item()``, ``.numpy()``, printing, ``bool(t)``) or an optimizer step ends, when
`persist` materialises the parameters and optimizer state (on the workers with a cluster) so
the next step's graph starts from them. The exceptions are the results whose shape depends on
values (boolean-mask indexing, nonzero, unique_*, repeat by an array of counts): those values
are computed when the result is made. Arrays made from host data are split along axis 0 into
chunks of AUTOGRAD_DASK_CHUNK_ROWS rows (default 65,536), other axes whole; a parameter, with
fewer rows, is one chunk. Convolution, pooling, the recurrent layers, the linear algebra of
stacks of matrices and the FFTs run numpy's kernels on each chunk of the batch
(backends/dask_kernels.py), so an LSTM over 1,000 steps is one task per chunk, not a few
hundred tasks per step. DLPack consumers (``np.from_dlpack(t)``, ``torch.from_dlpack(t)``)
get the computed values. A cluster's workers must be able to import this project (those
kernels run there).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.util
import os
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import array_api_compat.dask.array as xp
import dask
import dask.array as da
import numpy as np
from dask.utils import parse_bytes

import backends
from autograd_core import primitives as P
from autograd_core.namespace import raw_namespace
from backends.base import Backend
from backends.dask_kernels import (
    Namespace,
    map_batch_chunks,
    numpy_kernel_per_batch_chunk,
    numpy_kernel_summed_over_batch,
)

# The standard's `x.mT` (the engine uses it on raw arrays), which dask.array lacks: the one
# attribute added to dask's class, only where dask has none.
if not hasattr(da.Array, "mT"):
    da.Array.mT = property(xp.matrix_transpose)

DEFAULT_CHUNK_ROWS = 65_536
DEFAULT_TIMEOUT_S = 10.0
WORKERS_START_TIMEOUT_S = 120.0  # a local cluster's workers on a busy machine
PARENT_WATCH = "backends.dask_parent_watch"  # closes a local cluster whose client died
DLPACK_CPU = (1, 0)  # DLPack's (kDLCPU, 0): where computed values are, on the client


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
        super().__init__(Namespace(self.to_numpy), da.Array, None)
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

    def dlpack_exporter(self, x: Any) -> np.ndarray:
        """The computed values: a dask array has no memory to share until then."""
        return self.to_numpy(x)

    def dlpack_device(self, x: Any) -> tuple[int, int]:
        return DLPACK_CPU

    def silent_errors(self) -> contextlib.AbstractContextManager:
        """What computes inside (anomaly mode's checks during backward) uses the quiet threads
        too, not dask's default ones."""
        return dask.config.set(pool=_quiet_threads()) if self.client is None else contextlib.nullcontext()

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
            return list(dask.persist(*arrays, scheduler="threads", pool=_quiet_threads()))
        return self._from_host(self._compute(*arrays))

    def _from_host(self, hosts: tuple) -> list:
        """Numpy arrays persisted on the workers in `chunk_rows`-row chunks. Their lineage is
        the values themselves, which the scheduler keeps: a chunk lost with its workers (even
        every worker, restarted by their nannies) is made again from them. Scattered data has
        no lineage and would be lost for good."""
        arrays = [da.from_array(h, chunks=(self.chunk_rows, *h.shape[1:]) if h.ndim else (), name=False) for h in hosts]
        return self.client.persist(arrays)

    def _compute(self, *arrays: Any) -> tuple:
        if self.client is not None:  # unoptimised: tasks keep their names in every graph they are sent in
            return tuple(self.client.compute(list(arrays), sync=True))
        return dask.compute(*arrays, scheduler="threads", pool=_quiet_threads())

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
    def value_range(self, x: Any) -> tuple[int, int]:
        low, high = self._compute(xp.min(x), xp.max(x))  # one pass over the chunks, not two
        return int(low), int(high)


# --- kernels ---------------------------------------------------------------------------------
@P.index_add.kernel("dask")
def _index_add(ns: Any, values: Any, shape: tuple[int, ...], axis: int, index: Any) -> da.Array:
    """Scatter-add, chunk by chunk: each chunk of `values` (rows along `axis`) is added into
    zeros of `shape` by numpy's ``add.at`` on a worker, and the partial sums are added by
    dask's tree reduction. O(len(index)) work, where the portable default is O(n * len(index))."""
    shape = tuple(shape)
    values = values.rechunk({i: -1 for i in range(values.ndim) if i != axis})
    index = da.asarray(index).rechunk((values.chunks[axis],))
    parts = [
        da.from_delayed(dask.delayed(_index_add_block)(shape, axis, i, v), shape, dtype=values.dtype)
        for i, v in zip(index.to_delayed(), values.to_delayed().ravel())
    ]
    return da.stack(parts).sum(axis=0) if len(parts) > 1 else parts[0]


@P.scatter.kernel("dask")
def _scatter(ns: Any, values: Any, shape: tuple[int, ...], key: tuple) -> da.Array:
    """The portable default with each integer of `key` a one-wide slice (and `values`
    reshaped to match), and zeros where `values` is empty: dask's setitem fails on an
    integer beside a negative step (IndexError) and refuses an empty value array."""
    shape = tuple(shape)
    if 0 in values.shape:
        return xp.zeros(shape, dtype=values.dtype)
    key = tuple(slice(k, k + 1 or None) if isinstance(k, int | np.integer) else k for k in key if k is not None)
    return P.scatter.default(ns, xp.reshape(values, np.broadcast_to(False, shape)[key].shape), shape, key)


@P.cross_entropy_rows.kernel("dask")
def _cross_entropy_rows(ns: Any, logits: Any, target: Any) -> da.Array:
    """The portable default's log-sum-exp minus the target's logit, that logit picked by a
    one-hot mask (dask has no take_along_axis): the same numbers, the rows' chunks kept."""
    shift = xp.max(logits, axis=1, keepdims=True)
    lse = xp.log(xp.sum(xp.exp(logits - shift), axis=1, keepdims=True)) + shift
    one_hot = xp.arange(logits.shape[1], dtype=target.dtype) == xp.expand_dims(target, axis=1)
    return xp.reshape(lse, (-1,)) - xp.sum(xp.where(one_hot, logits, 0.0), axis=1)


@P.erf_kernel.kernel("dask")
def _erf(ns: Any, x: Any) -> da.Array:
    """The numpy backend's erf on each chunk: one task per chunk, not the portable series'
    hundreds of elementwise ones."""
    return x.map_blocks(_erf_block, dtype=x.dtype)


@P.map_batch_chunks.kernel("dask")
def _map_batch_chunks(ns: Any, func: Any, arrays: Any, batch_axes: Any, out_batch_axes: Any) -> tuple:
    """One task per chunk of the batch (a recurrence's time loop is then one task per chunk,
    not one per step and chunk); outputs without a batch axis are summed over the chunks."""
    return map_batch_chunks(func, arrays, batch_axes, out_batch_axes)


# --- convolution and pooling: numpy's kernels per chunk of the batch ---------------------------
# The portable defaults' stacks and strided slices leave chunks that dask's reshape cannot
# merge (NotImplementedError); each chunk of the batch, whole otherwise, is numpy's to do.
@P.im2col.kernel("dask")
def _im2col(ns: Any, x: Any, kernel: Any, stride: Any, dilation: Any, out_size: Any) -> da.Array:
    """numpy's im2col (one strided view, copied) per chunk of the batch."""
    return numpy_kernel_per_batch_chunk(
        "im2col", [x], kernel=kernel, stride=stride, dilation=dilation, out_size=out_size
    )


@P.col2im.kernel("dask")
def _col2im(ns: Any, cols: Any, shape: tuple[int, ...], kernel: Any, stride: Any, dilation: Any) -> da.Array:
    """numpy's col2im per chunk of the batch (each chunk's windows land in its own images)."""
    return numpy_kernel_per_batch_chunk(
        "col2im", [cols], batch_shape="shape", shape=shape, kernel=kernel, stride=stride, dilation=dilation
    )


@P.conv2d.kernel("dask")
def _conv2d(ns: Any, x: Any, weight: Any, geometry: Any) -> da.Array:
    """numpy's convolution per chunk of the batch, the weight whole in every task."""
    return numpy_kernel_per_batch_chunk("conv2d", [x], [weight], geometry=geometry)


@P.conv2d_grad_input.kernel("dask")
def _conv2d_grad_input(ns: Any, grad: Any, weight: Any, input_shape: tuple[int, ...], geometry: Any) -> da.Array:
    """numpy's gradient of the convolution's input per chunk of the batch."""
    return numpy_kernel_per_batch_chunk(
        "conv2d_grad_input", [grad], [weight], batch_shape="input_shape", input_shape=input_shape, geometry=geometry
    )


@P.conv2d_grad_weight.kernel("dask")
def _conv2d_grad_weight(ns: Any, grad: Any, x: Any, weight_shape: tuple[int, ...], geometry: Any) -> da.Array:
    """numpy's gradient of the convolution's weight per chunk of the batch, the chunks'
    partial gradients summed."""
    return numpy_kernel_summed_over_batch("conv2d_grad_weight", [grad, x], weight_shape=weight_shape, geometry=geometry)


@P.max_pool2d.kernel("dask")
def _max_pool2d(ns: Any, x: Any, geometry: Any) -> tuple[da.Array, da.Array]:
    """numpy's max pooling (values and indices, one task per chunk) per chunk of the batch."""
    return numpy_kernel_per_batch_chunk("max_pool2d", [x], geometry=geometry)


@P.max_pool2d_backward.kernel("dask")
def _max_pool2d_backward(ns: Any, grad: Any, indices: Any, input_shape: tuple[int, ...], geometry: Any) -> da.Array:
    """numpy's gradient of max pooling per chunk of the batch (indices are within a plane)."""
    return numpy_kernel_per_batch_chunk(
        "max_pool2d_backward", [grad, indices], batch_shape="input_shape", input_shape=input_shape, geometry=geometry
    )


def _index_add_block(shape: tuple[int, ...], axis: int, index: np.ndarray, values: np.ndarray) -> np.ndarray:
    out = np.zeros(shape, dtype=values.dtype)
    np.add.at(out, (slice(None),) * axis + (index,), values)
    return out


def _erf_block(block: np.ndarray) -> np.ndarray:
    return P.erf_kernel(raw_namespace(backends.get("numpy")), block)


@functools.cache
def _quiet_threads() -> ThreadPoolExecutor:
    """The threads that compute without a cluster, with numpy's floating-point warnings off.

    On dask the arithmetic runs when values are computed, not where it was written: a warning
    would name neither the user's line nor the op, and the engine's `silent_errors` around
    backward (numpy would warn at 0 ** -0.5 in pow's VJP) has ended by then. So dask computes
    as torch, jax and cupy always do, without warnings; anomaly mode finds non-finite values."""
    return ThreadPoolExecutor(
        os.cpu_count() or 1, thread_name_prefix="autograd-dask", initializer=functools.partial(np.seterr, all="ignore")
    )


def _timeout_s() -> float:
    value = os.environ.get("AUTOGRAD_DASK_TIMEOUT", "").strip()
    return float(value) if value else DEFAULT_TIMEOUT_S


def _worker_memory() -> str | None:
    """AUTOGRAD_DASK_WORKER_MEMORY for a local cluster's workers, checked; None when unset."""
    value = os.environ.get("AUTOGRAD_DASK_WORKER_MEMORY", "").strip()
    if not value:
        return None
    try:
        parse_bytes(value)
    except ValueError as e:
        raise ValueError(f"AUTOGRAD_DASK_WORKER_MEMORY={value!r} is not a size: use e.g. 2GiB or 512MiB") from e
    return value


def local_cluster(workers: int, memory_limit: str | None = None) -> Any:
    """A cluster on this machine: a scheduler and `workers` single-threaded worker processes
    (each under a nanny that restarts it), every one in its own process, listening on
    127.0.0.1 with the dashboard on a free port; `memory_limit` per worker (default: the
    machine's memory shared among them). Unlike dask's LocalCluster, whose scheduler runs
    inside this process, the scheduler is a process of its own, as on a real cluster: it keeps
    a record of every computation (dask's spans), and in this process that record grew the
    client's memory by ~0.2 MiB per training step. The scheduler closes the cluster if this
    process dies without closing it (backends/dask_parent_watch.py). Returns once every worker
    has joined."""
    from distributed.deploy.subprocess import SubprocessCluster

    with _children_import_from(sys.path):
        cluster = SubprocessCluster(
            n_workers=workers,
            threads_per_worker=1,
            host="127.0.0.1",
            dashboard_address=":0",
            scheduler_kwargs={"preload": [PARENT_WATCH]},
            worker_kwargs={} if memory_limit is None else {"memory_limit": memory_limit},
        )
    try:
        cluster.wait_for_workers(workers, timeout=WORKERS_START_TIMEOUT_S)
    except BaseException:
        cluster.close()
        raise
    return cluster


@contextlib.contextmanager
def _children_import_from(path: list[str]) -> Iterator[None]:
    """Processes started inside see `path` as their PYTHONPATH, so the scheduler and workers
    can import every module this process can (the functions of a task graph travel as
    references to their modules)."""
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p or os.getcwd() for p in path)
    try:
        yield
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before


def create(device: str | None = None) -> Backend:
    """The dask backend for `device`: None (threads), ``"local:N"`` or a scheduler address."""
    if not device:
        return DaskBackend()
    from distributed import Client

    if device.startswith("local:"):
        workers = device.removeprefix("local:")
        if not workers.isdigit() or int(workers) < 1:
            raise ValueError(f"dask device {device!r}: use local:N with N >= 1 worker processes")
        cluster = local_cluster(int(workers), _worker_memory())
        backend = DaskBackend(device, Client(cluster), cluster)
    else:
        timeout = _timeout_s()
        try:
            client = Client(device, timeout=timeout)
        except (OSError, TimeoutError) as e:
            raise backends.BackendUnavailableError(
                f"cannot reach the dask scheduler at {device!r} within {timeout:g} s ({e}); start one with "
                f"`dask scheduler`, or set AUTOGRAD_DEVICE to local:N for a cluster on this machine, or leave it "
                f"empty for dask's threads"
            ) from e
        backend = DaskBackend(device, client)
    atexit.register(backend.close)
    return backend


# --- special functions: the numpy backend's on each chunk ------------------------------------
def _register_special_kernels() -> None:
    from autograd_core.primitives import special

    for primitive in special.SPECIAL_KERNELS:
        primitive.kernel("dask")(functools.partial(_special_on_chunks, primitive.name))


def _special_on_chunks(name: str, ns: Any, x: da.Array, *order: int) -> da.Array:
    """One task per chunk, not the portable series' hundreds of elementwise ones (the
    primitive travels by name: a cluster's worker looks it up in its own registry)."""
    return x.map_blocks(functools.partial(_special_block, name, order), dtype=x.dtype)


def _special_block(name: str, order: tuple, block: np.ndarray) -> np.ndarray:
    from autograd_core.registry import registry

    return registry[name](raw_namespace(backends.get("numpy")), block, *order)


_register_special_kernels()
