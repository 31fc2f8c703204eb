"""dask.array, through array-api-compat's namespace: the same engine, modules and optimizers
on arrays split into chunks, computed by dask's local threads or by a dask.distributed cluster.

The device (``device=`` or AUTOGRAD_DEVICE) says where the work runs:

    None or ""          dask's local threaded scheduler, no cluster
    "local:N"           a cluster on this machine (`local_cluster`): a scheduler process and N
                        single-threaded worker processes owned by the backend (closed at
                        exit, or by ``backend.close()``), all listening on 127.0.0.1 only,
                        each worker with the memory limit AUTOGRAD_DASK_WORKER_MEMORY
                        ("2GiB"; default: the machine's memory shared among the workers, as
                        dask does)
    "tcp://host:port"   an existing cluster's scheduler, trusted completely: dask's protocol
                        unpickles what it receives (connecting waits at most
                        AUTOGRAD_DASK_TIMEOUT seconds, default 10)

A scheduler lost mid-computation (killed, or unreachable for AUTOGRAD_DASK_TIMEOUT seconds)
raises `SchedulerLostError`, and ``close()`` then stops a local cluster's processes without
waiting on it.

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
import math
import os
import sys
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import array_api_compat.dask.array as xp
import dask
import dask.array as da
import numpy as np
from dask.utils import parse_bytes

import backends
from autograd_core import primitives as P
from autograd_core.graph.namespace import raw_namespace
from autograd_core.graph.registry import registry
from autograd_core.primitives import special
from backends.contract.backend import Backend
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
LOOPBACK = "127.0.0.1"
ADDRESS_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")  # dask's, but inproc (within one process)
DEVICE_FORMS = (
    "use local:N for a cluster of N workers on this machine, a scheduler's address such as tcp://10.0.0.5:8786, "
    "or leave AUTOGRAD_DEVICE empty for dask's threads"
)


class SchedulerLostError(ConnectionError):
    """The dask scheduler went away during a computation: the values on its cluster are gone."""


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
        self.scheduler_address = None if client is None else client.scheduler.address
        self.scheduler_lost = False  # set by a SchedulerLostError: close() then does not wait for it
        # a persisted chunk's key: (its future, the tasks that make it from its values)
        self._lineage: dict[Any, tuple[weakref.ref, dict]] = {}
        self.chunk_rows = _chunk_rows()

    def __repr__(self) -> str:
        return "Backend('dask')" if self.address is None else f"Backend('dask', device={self.address!r})"

    # --- host transfer and computing -----------------------------------------------------------
    def asarray(self, host: np.ndarray, dtype: Any = None) -> da.Array:
        """A copy of `host` in chunks of `chunk_rows` rows along axis 0 (other axes whole)."""
        host = np.array(host, dtype=dtype, copy=True)
        return da.from_array(host, chunks=(self.chunk_rows, *host.shape[1:]) if host.ndim else ())

    def _dtype_tables(self) -> tuple[dict[str, Any], dict[Any, str]]:
        """The namespace's dtypes and float16, which dask arrays hold (numpy's) though
        array-api-compat's dask namespace does not name it."""
        if self._dtypes is None:
            by_name, names = super()._dtype_tables()
            half = np.dtype(np.float16)
            self._dtypes = ({**by_name, "float16": half}, {**names, half: "float16"})
        return self._dtypes

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
            self._check_open()
            return list(dask.persist(*arrays, scheduler="threads", pool=_quiet_threads()))
        return self._from_host(self._compute(*arrays))

    def _from_host(self, hosts: tuple) -> list:
        """Numpy arrays persisted on the workers in `chunk_rows`-row chunks. Their lineage is
        the values themselves, which the scheduler keeps: a chunk lost with its workers (even
        every worker, restarted by their nannies, again and again) is made again from them.
        Scattered data has no lineage and would be lost for good.

        ``client.restart()`` makes the scheduler forget every task, lineage included, and
        cancels every future: the tasks that make each chunk from its values are kept here as
        well, as long as the chunk's future lives, so a computation that needs a cancelled
        chunk sends them instead (`_restored`)."""
        arrays = [da.from_array(h, chunks=(self.chunk_rows, *h.shape[1:]) if h.ndim else (), name=False) for h in hosts]
        with self._scheduler_answers():
            persisted = self.client.persist(arrays)
        for made, kept in zip(arrays, persisted):
            lineage = dict(made.__dask_graph__())
            for key, future in kept.__dask_graph__().items():
                self._lineage[key] = (weakref.ref(future), lineage)
                weakref.finalize(future, self._lineage.pop, key, None)
        return persisted

    def _restored(self, array: da.Array) -> da.Array:
        """`array` with each cancelled future in its graph replaced by the tasks that make its
        chunk from the values (`_from_host`); `array` itself when none is cancelled."""
        graph = array.__dask_graph__()
        lost = [tasks for key, (future, tasks) in list(self._lineage.items()) if _cancelled(future()) and key in graph]
        if not lost:
            return array
        restored = dict(graph)
        for tasks in lost:
            restored.update(tasks)
        return da.Array(restored, array.name, array.chunks, meta=array._meta)

    def _compute(self, *arrays: Any) -> tuple:
        if self.client is None:
            self._check_open()
            return dask.compute(*arrays, scheduler="threads", pool=_quiet_threads())
        with self._scheduler_answers():  # unoptimised: tasks keep their names in every graph they are sent in
            futures = self.client.compute([self._restored(a) for a in arrays])
            self._wait(futures)
            return tuple(self.client.gather(futures))

    def _wait(self, futures: list) -> None:
        """Wait for `futures` (done or failed), asking the scheduler every AUTOGRAD_DASK_TIMEOUT
        seconds whether it still answers: one that is stopped or cut off by the network keeps
        its connections open, so only its silence tells."""
        from distributed import wait

        timeout = _timeout_s()
        while True:
            try:
                return wait(futures, timeout=timeout)
            except TimeoutError:
                try:
                    self.client.sync(self.client.scheduler.identity, callback_timeout=timeout)
                except (TimeoutError, OSError) as e:
                    self.scheduler_lost = True
                    raise SchedulerLostError(self._lost()) from e

    @contextlib.contextmanager
    def _scheduler_answers(self) -> Iterator[None]:
        """A failure while the client has lost its scheduler (dask then cancels every
        computation, or the client closes once AUTOGRAD_DASK_TIMEOUT has passed without it) is
        a `SchedulerLostError` saying so; other failures are the computation's own."""
        try:
            yield
        except SchedulerLostError:
            raise
        except Exception as e:
            if self.client is None or self.client.status == "running":
                raise
            self.scheduler_lost = True
            raise SchedulerLostError(self._lost()) from e

    def _lost(self) -> str:
        return (
            f"lost the dask scheduler at {self.scheduler_address} during a computation, and with it the values "
            f"on its workers: it did not answer within AUTOGRAD_DASK_TIMEOUT={_timeout_s():g} s. Start the "
            f"scheduler again (for local:N, call close() on this backend and get a new one), then resume from "
            f"your last checkpoint (nn.save)"
        )

    def _check_open(self) -> None:
        if self.address is not None:  # a cluster's backend without its client: closed
            raise RuntimeError(
                f"{self!r} was closed (backend.close()), and its cluster's values with it; take the values "
                f"you need (t.numpy(), nn.save) before closing, or compute on backends.get('dask', "
                f"{self.address!r}), a new connection"
            )

    def describe(self) -> str:
        """The scheduler: threads, or the cluster's address, workers and dashboard."""
        if self.client is None:
            return f"closed: {self.address}" if self.address else "dask's local threaded scheduler (no cluster)"
        info = self.client.scheduler_info()
        has_dashboard = "dashboard" in info.get("services", {}) and importlib.util.find_spec("bokeh") is not None
        dashboard = f"dashboard {self.client.dashboard_link}" if has_dashboard else "no dashboard (pip install bokeh)"
        return f"scheduler {info['address']}, {len(info['workers'])} workers, {dashboard}"

    def close(self) -> None:
        """Disconnect from the cluster, and stop it if this backend started it (``local:N``);
        the registry then makes a new backend for this device when asked again. Closing twice
        does nothing; a lost scheduler is not waited for."""
        if backends._instances.get(("dask", self.address)) is self:
            del backends._instances[("dask", self.address)]
        client, cluster, self.client, self.cluster = self.client, self.cluster, None, None
        lost = self.scheduler_lost or (client is not None and client.status != "running")
        if client is not None:
            with contextlib.suppress(TimeoutError):
                client.close(timeout=_timeout_s())
        if cluster is not None:
            _close_cluster(cluster, lost or _scheduler_exited(cluster))

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


Setting = TypeVar("Setting")


def _setting(name: str, default: Setting, parse: Callable[[str], Setting | None], accepted: str) -> Setting:
    """The environment variable `name` read by `parse` (which refuses a value by returning None
    or raising ValueError or OverflowError); `default` when it is unset or empty. A refused
    value is an error naming the variable, the value and what is accepted."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = parse(text)
    except (ValueError, OverflowError):
        value = None
    if value is None:
        raise ValueError(f"{name}={text!r} is not accepted: use {accepted}, or leave it unset")
    return value


def _chunk_rows() -> int:
    """AUTOGRAD_DASK_CHUNK_ROWS: rows per chunk of arrays made from host data."""
    return _setting(
        "AUTOGRAD_DASK_CHUNK_ROWS",
        DEFAULT_CHUNK_ROWS,
        lambda text: int(text) if int(text) >= 1 else None,
        f"a whole number of rows >= 1 (default {DEFAULT_CHUNK_ROWS})",
    )


def _timeout_s() -> float:
    """AUTOGRAD_DASK_TIMEOUT: how long a scheduler may not answer before it counts as lost."""
    return _setting(
        "AUTOGRAD_DASK_TIMEOUT",
        DEFAULT_TIMEOUT_S,
        lambda text: float(text) if 0 < float(text) < math.inf else None,
        f"a finite number of seconds > 0 (default {DEFAULT_TIMEOUT_S:g})",
    )


def _worker_memory() -> str | None:
    """AUTOGRAD_DASK_WORKER_MEMORY for a local cluster's workers, checked; None when unset."""
    return _setting(
        "AUTOGRAD_DASK_WORKER_MEMORY",
        None,
        lambda text: text if parse_bytes(text) > 0 else None,
        "a size such as 2GiB or 512MiB (default: the machine's memory shared among the workers)",
    )


def local_cluster(workers: int, memory_limit: str | None = None) -> Any:
    """A cluster on this machine: a scheduler and `workers` single-threaded worker processes
    (each under a nanny that restarts it), every one in its own process, listening on
    127.0.0.1 only (the dashboard too, on a free port); `memory_limit` per worker (default: the
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
            host=LOOPBACK,
            dashboard_address=f"{LOOPBACK}:0",
            scheduler_kwargs={"preload": [PARENT_WATCH]},
            worker_kwargs={} if memory_limit is None else {"memory_limit": memory_limit},
        )
    try:
        cluster.wait_for_workers(workers, timeout=WORKERS_START_TIMEOUT_S)
    except BaseException:
        cluster.close()
        raise
    return cluster


def _cancelled(future: Any) -> bool:
    """Whether `future` (a distributed Future, or None once collected) was cancelled."""
    return future is not None and future.cancelled()


def _scheduler_exited(cluster: Any) -> bool:
    """Whether the scheduler process of a cluster from `local_cluster` has ended."""
    process = cluster.scheduler.process
    return process is None or process.returncode is not None


def _close_cluster(cluster: Any, scheduler_lost: bool) -> None:
    """Stop a cluster from `local_cluster`. Without its scheduler, dask's own close would ask
    that scheduler to retire the workers and wait for it (30 s a try): the scheduler is marked
    closed first (its process killed if it is still there), so the workers are stopped
    directly, and nothing waits for an answer."""
    if scheduler_lost:
        cluster.shutdown_scheduler = False
        cluster.sync(cluster.scheduler.close)
    cluster.close(timeout=WORKERS_START_TIMEOUT_S)


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


def _local_workers(device: str) -> int | None:
    """N of a ``local:N`` device (None for another device), checked."""
    if not device.startswith("local:"):
        return None
    workers = device.removeprefix("local:")
    if not workers.isdecimal() or int(workers) < 1:
        raise ValueError(f"dask device {device!r}: use local:N with N >= 1 worker processes")
    return int(workers)


def _check_address(device: str) -> None:
    """Refuse a device that is no scheduler address (``[scheme://]host:port``) before trying it."""
    from distributed.comm.addressing import parse_address, parse_host_port

    scheme, location = parse_address(device, strict=False)
    problem = None
    if scheme not in ADDRESS_SCHEMES:
        problem = f"{scheme}:// is not a scheme a scheduler listens on ({', '.join(ADDRESS_SCHEMES)})"
    else:
        try:
            host, port = parse_host_port(location)
        except ValueError as e:
            problem = str(e)
        else:
            if not host or not 1 <= port <= 65535:
                problem = "a scheduler's address needs a host and a port from 1 to 65535"
    if problem is not None:
        raise ValueError(f"dask device {device!r}: {problem}; {DEVICE_FORMS}")


def create(device: str | None = None) -> Backend:
    """The dask backend for `device`: None (threads), ``"local:N"`` or a scheduler address."""
    if not device:
        return DaskBackend()
    from distributed import Client

    workers, timeout = _local_workers(device), _timeout_s()
    _chunk_rows()  # a bad setting is refused before a cluster starts
    if workers is not None:
        cluster = local_cluster(workers, _worker_memory())
        backend = DaskBackend(device, Client(cluster, timeout=timeout), cluster)
    else:
        _check_address(device)
        try:
            client = Client(device, timeout=timeout)
        except (OSError, TimeoutError) as e:
            raise backends.BackendUnavailableError(
                f"cannot reach the dask scheduler at {device!r} within {timeout:g} s (AUTOGRAD_DASK_TIMEOUT; {e}); "
                "start one with "
                f"`dask scheduler`, or set AUTOGRAD_DEVICE to local:N for a cluster on this machine, or leave it "
                f"empty for dask's threads"
            ) from e
        backend = DaskBackend(device, client)
    atexit.register(backend.close)
    return backend


# --- special functions: the numpy backend's on each chunk ------------------------------------
def _register_special_kernels() -> None:
    for primitive in special.SPECIAL_KERNELS:
        primitive.kernel("dask")(functools.partial(_special_on_chunks, primitive.name))
    for primitive in (special.zeta, special.gammainc, special.gammaincc):
        primitive.kernel("dask")(functools.partial(_special_pair_on_chunks, primitive.name))


def _special_pair_on_chunks(name: str, ns: Any, x: da.Array, y: da.Array) -> da.Array:
    """A special function of two arrays, one task per pair of chunks (broadcast together)."""
    x, y = da.broadcast_arrays(x, y)
    return da.map_blocks(functools.partial(_special_pair_block, name), x, y, dtype=x.dtype)


def _special_pair_block(name: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return registry[name](raw_namespace(backends.get("numpy")), x, y)


def _special_on_chunks(name: str, ns: Any, x: da.Array, *order: int) -> da.Array:
    """One task per chunk, not the portable series' hundreds of elementwise ones (the
    primitive travels by name: a cluster's worker looks it up in its own registry)."""
    return x.map_blocks(functools.partial(_special_block, name, order), dtype=x.dtype)


def _special_block(name: str, order: tuple, block: np.ndarray) -> np.ndarray:
    return registry[name](raw_namespace(backends.get("numpy")), block, *order)


_register_special_kernels()
