"""cubed (https://cubed-dev.github.io), a backend plugin: the same engine, modules and optimizers
on arrays whose every operation is planned with a bound on each task's memory, then run by
cubed's executors. Registered through the entry-point group ``autograd_core.backends`` (the
project's pyproject.toml: ``cubed = "backends.cubed:create"``), as a third party's would be.

Select it with ``AUTOGRAD_BACKEND=cubed``. Its resources are a `cubed.Spec` built from cubed's
own configuration (``cubed.config``: the ``CUBED_SPEC__*`` environment variables or a
``cubed.yaml``), as for any cubed program:

    CUBED_SPEC__ALLOWED_MEM=500MB   memory a task may use (default 2GB); a plan with a task
                                    projected above it is refused before anything runs
    CUBED_SPEC__WORK_DIR=s3://...   where intermediate arrays are stored (default: a temporary
                                    folder of this process, deleted at exit or by ``close()``)
    CUBED_SPEC__EXECUTOR_NAME=...   the executor (default: cubed's "threads" on this machine);
                                    AUTOGRAD_DEVICE=<executor name> chooses it as well

Like dask, everything is lazy: values are computed when Python needs them (``.item()``,
``.numpy()``, printing) and when an optimizer step ends, when `persist` computes the
parameters and optimizer state and starts the next step's plan from their values.

The defects of cubed 0.27 routed around here, each checked against numpy by
tests/test_cubed.py (docs/cubed.md lists them):

- an integer-array index (``take``) whose result has the input's shape returns the input
  unchanged, whatever the indices (``take(x, [2, 2, 0], axis=1)`` of a 3-wide ``x`` is ``x``);
- a slice with a negative step raises NotImplementedError, one with a step above 1 over a chunk
  it does not divide fails to plan, and arrays take no item assignment;
- ``clip`` with one bound fails when computed (numpy's clip is called with the other missing);
- ``broadcast_to`` makes chunks of length 1 along new axes (a task per row);
- there is no ``take_along_axis``, ``argsort``, ``sort``, ``nonzero`` or ``unique_*``.
"""

from __future__ import annotations

import atexit
import functools
import math
import operator
import shutil
import tempfile
from typing import Any

import array_api_compat.numpy as np_xp
import numpy as np

import backends

try:
    import cubed
except ImportError as e:  # the entry point is installed without the library: say so, as built-ins do
    raise backends.BackendUnavailableError(
        f"backend 'cubed' needs a library that is not installed ({e}); install it with: pip install -e '.[cubed]'"
    ) from e

from autograd_core import primitives as P
from autograd_core.graph.namespace import raw_namespace
from autograd_core.graph.pytree import tree_map
from autograd_core.primitives.convolution import tap
from backends.contract.backend import Backend
from backends.contract.namespaces import CompletedNamespace

EXECUTORS = ("threads", "processes", "single-threaded", "lithops", "modal", "beam", "dask", "ray", "spark", "coiled")
ON_HOST = ("argsort", "sort", "nonzero", "unique_all", "unique_counts", "unique_inverse", "unique_values")
CREATION = ("arange", "empty", "eye", "full", "linspace", "ones", "zeros")
IN_MEMORY_BYTES = 10**6  # cubed's largest array held in memory, not read from storage
DLPACK_CPU = (1, 0)  # DLPack's (kDLCPU, 0): where computed values are


class AllowedMemoryError(ValueError):
    """A plan with a task projected past the spec's ``allowed_mem``: refused before it runs."""


class Namespace(CompletedNamespace):
    """cubed's array API namespace, with every new array made under the backend's `spec` (cubed
    refuses to compute arrays of different specs together) and the defects of cubed 0.27
    routed around: `take`, `clip`, `take_along_axis`."""

    module = cubed

    def __init__(self, spec: cubed.Spec, values: Any) -> None:
        self.spec = spec
        self.values = values  # an array's values, computed by the backend
        for name in CREATION:
            setattr(self, name, functools.partial(getattr(cubed, name), spec=spec))

    def asarray(self, obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> cubed.Array:
        """cubed's asarray under the spec; host data past cubed's 1 MB bound on arrays held in
        memory is read chunk by chunk instead (`from_host`)."""
        if isinstance(obj, cubed.Array):
            return obj if dtype is None else cubed.astype(obj, dtype)
        return from_host(np.asarray(obj, dtype=dtype), self.spec)

    def __getattr__(self, name: str) -> Any:
        """cubed's function `name`, or for those cubed lacks that numpy has (sorting, and the
        functions whose result's size depends on the values: nonzero, unique_*), numpy's
        (array-api-compat's) on the computed values, its results made cubed arrays again."""
        if name in ON_HOST and not hasattr(cubed, name):
            value = functools.partial(self._on_host, getattr(np_xp, name))
            setattr(self, name, value)
            return value
        return super().__getattr__(name)

    def _on_host(self, func: Any, *args: Any, **options: Any) -> Any:
        hosts = [self.values(a) if isinstance(a, cubed.Array) else a for a in args]
        result = func(*hosts, **options)  # an array, nonzero's tuple, or unique_*'s named tuple
        return tree_map(lambda r: from_host(np.asarray(r), self.spec), result)

    def from_dlpack(self, x: Any, /, *, device: Any = None, copy: bool | None = None) -> cubed.Array:
        """A copy of a DLPack exporter's values (cubed has no from_dlpack)."""
        return self.asarray(np.array(np.from_dlpack(x), copy=True))

    def take(self, x: cubed.Array, indices: Any, /, *, axis: int | None = None) -> cubed.Array:
        """cubed's take, except where its result would have `x`'s shape: cubed then returns `x`
        unchanged whatever the indices, so the index is taken one entry longer and the result
        cut back (or `x` itself, for the identity). cubed computes an array index when the
        index is made anyway; it is given here as numpy's."""
        if axis is None:
            x, axis = cubed.reshape(x, (-1,)), 0
        axis %= x.ndim
        host = np.asarray(self.values(indices) if isinstance(indices, cubed.Array) else indices)
        n = x.shape[axis]
        if host.size == 0:  # cubed cannot plan an empty integer index
            return cubed.zeros((*x.shape[:axis], *host.shape, *x.shape[axis + 1 :]), dtype=x.dtype, spec=x.spec)
        if host.ndim != 1 or host.shape[0] != n:
            return x[(slice(None),) * axis + (host,)]
        if np.array_equal(np.where(host < 0, host + n, host), np.arange(n)):
            return x
        longer = x[(slice(None),) * axis + (np.append(host, host[0]),)]
        return longer[(slice(None),) * axis + (slice(0, n),)]

    def broadcast_to(self, x: cubed.Array, /, shape: tuple[int, ...]) -> cubed.Array:
        """cubed's broadcast_to with cubed's automatic chunks along the new and stretched axes,
        where cubed's own makes chunks of length 1 (a scalar's gradient broadcast to a million
        rows was a million tasks); new zeros for an empty result, whose chunks from cubed no
        elementwise op can unify with (rechunk's ValueError "Invalid chunk_limits")."""
        shape = tuple(shape)
        if 0 in shape:
            return cubed.zeros(np.broadcast_shapes(x.shape, shape), dtype=x.dtype, spec=self.spec)
        new = len(shape) - x.ndim
        kept = tuple(c if n > 1 else "auto" for c, n in zip(x.chunks, x.shape))
        return cubed.broadcast_to(x, shape, chunks=("auto",) * new + kept)

    @staticmethod
    def clip(x: cubed.Array, /, min: Any = None, max: Any = None) -> cubed.Array:  # noqa: A002
        """cubed's clip with a missing bound made the dtype's widest (cubed 0.27 hands None to
        numpy's clip, which fails when computed)."""
        if min is None and max is None:
            return x
        if cubed.isdtype(x.dtype, "real floating"):
            low, high = -math.inf, math.inf
        else:
            low, high = (int(v) for v in (cubed.iinfo(x.dtype).min, cubed.iinfo(x.dtype).max))
        return cubed.clip(x, low if min is None else min, high if max is None else max)

    @staticmethod
    def take_along_axis(x: cubed.Array, indices: cubed.Array, /, *, axis: int = -1) -> cubed.Array:
        """``x``'s entries at `indices` along `axis` (cubed has no take_along_axis): each entry
        picked by a one-hot mask and summed over the axis, lazily, chunk by chunk. Negative
        indices count from the end."""
        axis %= x.ndim
        n = x.shape[axis]
        indices = cubed.where(indices < 0, indices + n, indices)
        positions = cubed.reshape(
            cubed.arange(n, dtype=indices.dtype, spec=x.spec), (n, *(1,) * (x.ndim - axis))
        )  # along axis, before the indices' own axis
        chosen = cubed.expand_dims(indices, axis=axis) == positions
        zero = cubed.zeros((), dtype=x.dtype, spec=x.spec)
        return cubed.sum(cubed.where(chosen, cubed.expand_dims(x, axis=axis + 1), zero), axis=axis, dtype=x.dtype)


class CubedBackend(Backend):
    """cubed arrays under one `cubed.Spec` (memory bound, storage, executor).

    >>> import backends
    >>> b = backends.get("cubed")
    >>> b.to_numpy(b.xp.ones((2,)) * 3).tolist()
    [3.0, 3.0]
    """

    name = "cubed"
    mutable = False  # cubed arrays take no item assignment
    lazy = True
    device_kinds = EXECUTORS

    def __init__(self, spec: cubed.Spec, temporary_dir: str | None = None) -> None:
        super().__init__(Namespace(spec, self.to_numpy), cubed.Array, None)
        self.spec = spec
        self.temporary_dir = temporary_dir  # the work_dir this backend made, deleted by close()

    # --- host transfer and computing -----------------------------------------------------------
    def asarray(self, host: np.ndarray, dtype: Any = None) -> cubed.Array:
        """A copy of `host` under the backend's spec (`from_host`)."""
        return from_host(np.array(host, dtype=dtype, copy=True), self.spec)

    def to_numpy(self, x: Any) -> np.ndarray:
        return np.asarray(self._compute(x)[0])

    def _compute(self, *arrays: Any) -> tuple:
        """The values of `arrays`, computed by one plan on the spec's executor. A plan with a
        task projected past ``allowed_mem`` is refused before it runs (cubed's ValueError)."""
        try:
            with np.errstate(all="ignore"):
                return cubed.compute(*arrays)
        except ValueError as e:
            if "exceeds allowed_mem" not in str(e):
                raise
            raise AllowedMemoryError(
                f"{e}: cubed refused the plan before running any task. Give each task more memory where the "
                f"workers have it (CUBED_SPEC__ALLOWED_MEM, now {self.spec.allowed_mem / 1e6:g} MB), or make "
                "each task smaller (smaller batches, or arrays in smaller chunks)"
            ) from e

    def synchronize(self, *arrays: Any) -> None:
        """Compute `arrays` (their values are dropped: `persist` keeps them)."""
        if arrays:
            self._compute(*arrays)

    def persist(self, arrays: list) -> list:
        """`arrays` computed by one plan and made again from their values, so the next step's
        plan starts there instead of growing step by step (parameters and optimizer state are
        small next to the data)."""
        return [self.asarray(h) for h in self._compute(*arrays)] if arrays else []

    def dlpack_exporter(self, x: Any) -> np.ndarray:
        """The computed values: a cubed array has no memory to share until then."""
        return self.to_numpy(x)

    def dlpack_device(self, x: Any) -> tuple[int, int]:
        return DLPACK_CPU

    def _dtype_tables(self) -> tuple[dict[str, Any], dict[Any, str]]:
        """The namespace's dtypes and float16, which cubed arrays hold (numpy's) though cubed's
        namespace does not name it."""
        if self._dtypes is None:
            by_name, names = super()._dtype_tables()
            half = np.dtype(np.float16)
            self._dtypes = ({**by_name, "float16": half}, {**names, half: "float16"})
        return self._dtypes

    def value_range(self, x: Any) -> tuple[int, int]:
        low, high = self._compute(cubed.min(x), cubed.max(x))  # one plan for both
        return int(low), int(high)

    def describe(self) -> str:
        """The executor, the memory bound of a task and where intermediate arrays go."""
        executor = self.spec.executor_name or "threads"
        allowed = f"{self.spec.allowed_mem / 1e9:g} GB"
        return f"cubed's {executor} executor, allowed_mem {allowed} a task, work_dir {self.spec.work_dir}"

    def close(self) -> None:
        """Delete the temporary folder this backend stored intermediate arrays in (also done at
        exit); the registry then makes a new backend when asked again."""
        for key, made in list(backends._instances.items()):
            if made is self:
                del backends._instances[key]
        if self.temporary_dir is not None:
            shutil.rmtree(self.temporary_dir, ignore_errors=True)
            self.temporary_dir = None


def from_host(host: np.ndarray, spec: cubed.Spec) -> cubed.Array:
    """`host` as a cubed array under `spec`, in cubed's automatic chunks: held in memory up to
    cubed's bound for that (`IN_MEMORY_BYTES`), else read chunk by chunk by the tasks that use it
    (cubed's asarray refuses larger arrays)."""
    if host.nbytes <= IN_MEMORY_BYTES:
        return cubed.asarray(host, spec=spec)
    return cubed.from_array(host, spec=spec)


# --- kernels ---------------------------------------------------------------------------------
@P.basic_index.kernel("cubed")
def _basic_index(ns: Any, x: cubed.Array, key: tuple) -> cubed.Array:
    """``x[key]`` with each slice whose step is not 1 taken afterwards as a `take` of the
    positions it reaches: cubed refuses negative steps (NotImplementedError), and a step above
    1 over a chunk it does not divide fails to plan (merge_chunks' ValueError)."""
    plain, gathers = [], []
    for k, n in _expanded(x.shape, key):
        if isinstance(k, slice) and k.indices(n)[2] != 1:
            gathers.append((len([p for p in plain if not isinstance(p, int)]), np.arange(*k.indices(n))))
            k = slice(None)
        plain.append(k)
    out = x[tuple(plain)] if any(k != slice(None) for k in plain) else x
    for axis, positions in gathers:
        out = ns.take(out, positions, axis=axis)
    return out


@P.scatter.kernel("cubed")
def _scatter(ns: Any, values: cubed.Array, shape: tuple[int, ...], key: tuple) -> cubed.Array:
    """Zeros of `shape` with `values` at the basic index `key`, without item assignment (which
    cubed lacks): axis by axis, `values` is spread to the axis's full length by a `take` of
    each position's source and a mask that zeroes the positions `key` does not reach."""
    shape = tuple(shape)
    plain = [slice(k % n, k % n + 1) if isinstance(k, int) else k for k, n in _expanded(shape, key) if k is not None]
    values = cubed.reshape(values, np.broadcast_to(False, shape)[tuple(plain)].shape)  # every axis of `shape`
    zero = cubed.zeros((), dtype=values.dtype, spec=values.spec)
    for axis, (k, n) in enumerate(zip(plain, shape)):
        reached = np.arange(*k.indices(n))
        if np.array_equal(reached, np.arange(n)):
            continue  # the whole axis, in order
        if reached.size == 0:
            values = cubed.zeros(
                (*values.shape[:axis], n, *values.shape[axis + 1 :]), dtype=values.dtype, spec=values.spec
            )
            continue
        source, hit = np.zeros(n, dtype=np.int64), np.zeros((n,) + (1,) * (len(shape) - axis - 1), dtype=bool)
        source[reached], hit[reached] = np.arange(reached.size), True
        values = cubed.where(from_host(hit, values.spec), ns.take(values, source, axis=axis), zero)
    return values


@P.im2col.kernel("cubed")
def _im2col(ns: Any, x: cubed.Array, kernel: Any, stride: Any, dilation: Any, out_size: Any) -> cubed.Array:
    """The portable default's stack of one slice per tap, each through `_basic_index` (cubed
    fails to plan a strided slice over a chunk its step does not divide)."""
    windows = [
        _basic_index(ns, x, tap(i, j, stride, dilation, out_size)) for i in range(kernel[0]) for j in range(kernel[1])
    ]
    return cubed.stack(windows, axis=2)


@P.col2im.kernel("cubed")
def _col2im(ns: Any, cols: Any, shape: tuple[int, ...], kernel: Any, stride: Any, dilation: Any) -> cubed.Array:
    """The windows (N, C, kh*kw, Ho, Wo) added back where they sat, one `_scatter` per tap
    summed (the portable default adds into an array in place, which cubed cannot)."""
    out_size = tuple(cols.shape[3:])
    taps = (
        _scatter(ns, cols[:, :, i * kernel[1] + j, ...], shape, tap(i, j, stride, dilation, out_size))
        for i in range(kernel[0])
        for j in range(kernel[1])
    )
    return functools.reduce(operator.add, taps)


def _expanded(shape: tuple[int, ...], key: tuple) -> list[tuple[Any, int | None]]:
    """The basic index `key` of an array of `shape` with its Ellipsis expanded: each entry (an
    int, a slice, or None for a new axis) with the length of the axis it indexes (None for a
    new axis)."""
    import ndindex  # cubed's own indexing depends on it

    lengths = iter(shape)
    return [(k, None if k is None else next(lengths)) for k in ndindex.ndindex(key).expand(shape).raw]


@P.erf_kernel.kernel("cubed")
def _erf(ns: Any, x: cubed.Array) -> cubed.Array:
    """The numpy backend's erf on each chunk: one task per chunk, not the portable series'
    hundreds of elementwise ones."""
    return cubed.map_blocks(_erf_block, x, dtype=x.dtype)


def _erf_block(block: np.ndarray) -> np.ndarray:
    return P.erf_kernel(raw_namespace(backends.get("numpy")), block)


# --- the factory -------------------------------------------------------------------------------
def spec_for(executor: str | None = None) -> tuple[cubed.Spec, str | None]:
    """A Spec from cubed's configuration (``cubed.config["spec"]``), with `executor` as its
    executor where given, and a new temporary folder (returned too, for deleting) as its
    work_dir where the configuration names none."""
    settings = dict(cubed.config.get("spec", {}))
    if executor:
        settings["executor_name"] = executor
    temporary = None
    if not settings.get("work_dir"):
        temporary = settings["work_dir"] = tempfile.mkdtemp(prefix="autograd-cubed-")
    try:
        spec = cubed.Spec(**settings)
    except (TypeError, ValueError) as e:
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)
        raise ValueError(
            f"cubed's spec configuration {settings} is not accepted ({e}); set sizes such as "
            "CUBED_SPEC__ALLOWED_MEM=2GB, or leave them unset"
        ) from e
    return spec, temporary


def create(device: str | None = None) -> Backend:
    """The cubed backend: `device` is empty (the executor cubed's configuration names, else its
    threads) or one of cubed's executor names (`EXECUTORS`)."""
    if device and device not in EXECUTORS:
        raise ValueError(f"cubed device {device!r}: use one of cubed's executors ({', '.join(EXECUTORS)}) or none")
    spec, temporary = spec_for(device)
    backend = CubedBackend(spec, temporary)
    try:
        spec.executor  # noqa: B018 (a distributed executor's library is imported here, not mid-computation)
    except ImportError as e:
        backend.close()
        name = device or spec.executor_name
        raise RuntimeError(
            f"cubed's {name} executor cannot be used here ({e}): install its library (pip install 'cubed[{name}]'), "
            "or choose another executor (AUTOGRAD_DEVICE, CUBED_SPEC__EXECUTOR_NAME)"
        ) from e
    atexit.register(backend.close)
    return backend
