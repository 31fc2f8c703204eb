"""The dask backend's kernels that run numpy's on each chunk of an array's leading (batch)
axes, the other axes made one chunk: convolution and pooling (numpy's kernels per chunk of
the batch), and the linear algebra and FFTs that array-api-compat's dask namespace lacks or
takes only on 2-D arrays or one-chunk axes (`Namespace`, the backend's ``xp``).

The batch stays chunked, so the work stays spread over dask's threads or workers; a kernel
that sums over the batch (the gradient of a convolution's weight) sums per-chunk partials
with dask's tree reduction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import array_api_compat.dask.array as xp
import dask
import dask.array as da
import numpy as np

import backends
from autograd_core.graph.namespace import RawNamespace, raw_namespace
from autograd_core.graph.pytree import tree_flatten, tree_map, tree_unflatten
from autograd_core.graph.registry import registry
from backends.contract.namespaces import CompletedNamespace


def per_chunk(func: Callable[..., Any], arrays: Sequence[da.Array], core_ndims: Sequence[int]) -> Any:
    """`func`, a numpy function of stacks of arrays, on each chunk of the leading (loop) axes
    of `arrays`, array k's last ``core_ndims[k]`` axes made one chunk (dask's `apply_gufunc`;
    an array with no loop axes, such as a convolution's weight, goes whole to every call).

    The outputs' core shapes and dtypes are those of `func` on empty stacks (each array with
    loop axes, or every array where none has any, given one loop axis of length 0), so no
    caller repeats a kernel's shape rules; one array, or a tuple (of numpy's named type, such
    as ``SVDResult``) where `func` returns one."""
    looped = any(a.ndim > core for a, core in zip(arrays, core_ndims))
    samples = func(
        *(
            np.zeros((0,) * (a.ndim > core or not looped) + a.shape[a.ndim - core :], a.dtype)
            for a, core in zip(arrays, core_ndims)
        )
    )
    outputs = samples if isinstance(samples, tuple) else (samples,)
    inputs = [_core_dims(f"i{k}", a.shape[a.ndim - core :], {}) for k, (a, core) in enumerate(zip(arrays, core_ndims))]
    sizes: dict[str, int] = {}
    results = [_core_dims(f"o{k}", out.shape[1:], sizes) for k, out in enumerate(outputs)]
    signature = ",".join(inputs) + "->" + ",".join(results)
    loops = max(a.ndim - core for a, core in zip(arrays, core_ndims))
    metas = tuple(np.empty((0,) * (loops + out.ndim - 1), out.dtype) for out in outputs)  # dask's own casts and warns
    result = da.apply_gufunc(
        func,
        signature,
        *(_one_chunk(a, a.ndim - core) for a, core in zip(arrays, core_ndims)),
        meta=metas if len(metas) > 1 else metas[0],
        output_sizes=sizes,
        vectorize=False,
    )
    return tree_unflatten(tree_flatten(samples)[1], list(result)) if isinstance(samples, tuple) else result


def _one_chunk(a: da.Array, start: int) -> da.Array:
    """`a` with its axes from `start` on made one chunk, the leading ones left as they are
    (apply_gufunc's own rechunking would shrink those, and divides by zero on empty axes)."""
    return a.rechunk({d: -1 for d in range(start, a.ndim)})


def _core_dims(prefix: str, shape: tuple[int, ...], sizes: dict[str, int]) -> str:
    """A gufunc signature's core dimensions for `shape`, one fresh name per axis (recorded
    with its size in `sizes`): ``(i0_0,i0_1)``."""
    names = [f"{prefix}_{d}" for d in range(len(shape))]
    sizes.update(zip(names, shape))
    return "(" + ",".join(names) + ")"


def numpy_kernel_per_batch_chunk(
    name: str,
    batched: Sequence[da.Array],
    whole: Sequence[da.Array] = (),
    batch_shape: str | None = None,
    **params: Any,
) -> Any:
    """The numpy backend's kernel of the primitive `name` on each chunk of the batch axis (axis 0) of the
    arrays `batched`, with the arrays `whole` (a weight) and `params`; the parameter called
    `batch_shape`, a shape whose first entry is the whole batch's size, gets each chunk's."""
    kernel = partial(_numpy_kernel, name, batch_shape, params)
    return per_chunk(kernel, [*batched, *whole], [a.ndim - 1 for a in batched] + [a.ndim for a in whole])


def numpy_kernel_summed_over_batch(name: str, batched: Sequence[da.Array], **params: Any) -> da.Array:
    """The numpy backend's kernel of the primitive `name`, which sums over the batch axis (axis 0) of the
    arrays `batched`, on each chunk of that axis (the other axes made one chunk), the
    per-chunk partial results added by dask's tree reduction."""
    kernel = partial(_numpy_kernel, name, None, params)
    batched = [_one_chunk(a, 1) for a in batched]
    sample = kernel(*(np.zeros((0, *a.shape[1:]), a.dtype) for a in batched))
    out = tuple(f"o{d}" for d in range(sample.ndim))
    pairs = [(a, ("n", *(f"i{k}_{d}" for d in range(1, a.ndim)))) for k, a in enumerate(batched)]
    partials = da.blockwise(
        partial(_one_partial, kernel),
        ("n", *out),
        *(v for pair in pairs for v in pair),
        new_axes=dict(zip(out, sample.shape)),
        adjust_chunks={"n": 1},
        dtype=sample.dtype,
        concatenate=True,
    )
    return partials.sum(axis=0)


def map_batch_chunks(
    func: Callable[..., tuple],
    arrays: Sequence[Any],
    batch_axes: Sequence[int | None],
    out_batch_axes: Sequence[int | None],
) -> tuple:
    """`primitives.map_batch_chunks` on dask: one task per chunk of the batch runs
    ``func(numpy's raw namespace, *chunks)``, each batched array chunked as the first one is along its
    batch axis (whole along the others), the other arrays whole; outputs with a batch axis are
    joined along it, the others summed over the chunks."""
    batched = [(a, axis) for a, axis in zip(arrays, batch_axes) if a is not None and axis is not None]
    first, first_axis = batched[0]
    sizes = first.chunks[first_axis]
    blocks = [[None] * len(sizes) if a is None else _blocks(a, axis, sizes) for a, axis in zip(arrays, batch_axes)]
    samples = func(_numpy(), *(_empty_batch(a, axis) for a, axis in zip(arrays, batch_axes)))
    tasks = [dask.delayed(_on_numpy, nout=len(samples))(func, *chunk) for chunk in zip(*blocks)]
    results = []
    for k, (sample, axis) in enumerate(zip(samples, out_batch_axes)):
        pieces = [
            da.from_delayed(task[k], _with_size(sample.shape, axis, size), dtype=sample.dtype, meta=sample[:0])
            for task, size in zip(tasks, sizes)
        ]
        results.append(da.stack(pieces).sum(axis=0) if axis is None else da.concatenate(pieces, axis=axis))
    return tuple(results)


def _blocks(a: da.Array, axis: int | None, sizes: tuple[int, ...]) -> list[Any]:
    """The delayed blocks of `a` chunked by `sizes` along `axis` (None: `a` whole, once per chunk)."""
    if axis is None:
        return [a.rechunk(-1).to_delayed(optimize_graph=False).ravel()[0]] * len(sizes)
    chunked = a.rechunk({d: sizes if d == axis else -1 for d in range(a.ndim)})
    return list(chunked.to_delayed(optimize_graph=False).ravel())


def _empty_batch(a: Any, axis: int | None) -> Any:
    """Zeros shaped as `a` with no rows along `axis` (a whole array's full shape), for the outputs' shapes."""
    if a is None:
        return None
    return np.zeros(a.shape if axis is None else _with_size(a.shape, axis, 0), dtype=a.dtype)


def _with_size(shape: tuple[int, ...], axis: int | None, size: int) -> tuple[int, ...]:
    return shape if axis is None else (*shape[:axis], size, *shape[axis + 1 :])


def _numpy() -> RawNamespace:
    return raw_namespace(backends.get("numpy"))


def _on_numpy(func: Callable[..., tuple], *chunks: Any) -> tuple:
    return func(_numpy(), *chunks)


def _one_partial(kernel: Callable[..., np.ndarray], *blocks: np.ndarray) -> np.ndarray:
    return kernel(*blocks)[None]


def _numpy_kernel(name: str, batch_shape: str | None, params: dict[str, Any], *blocks: np.ndarray) -> Any:
    if batch_shape is not None:
        params = {**params, batch_shape: (blocks[0].shape[0], *params[batch_shape][1:])}
    return registry[name](_numpy(), *blocks, **params)


def _per_matrix(func: Callable[..., Any]) -> staticmethod:
    """A linalg function: numpy's `func` on each chunk of a stack of matrices (each matrix
    whole), with its other arguments (named as the standard names them, as numpy's are)."""

    def per_matrix(x: da.Array, /, *args: Any, **options: Any) -> Any:
        return per_chunk(partial(_applied, func, args, options), [x], [2])

    return staticmethod(per_matrix)


def _applied(func: Callable[..., Any], args: tuple, options: dict[str, Any], x: np.ndarray) -> Any:
    return func(x, *args, **options)


class Linalg(CompletedNamespace):
    """array-api-compat's ``dask.array.linalg`` with what it lacks (det, slogdet, eigh,
    eigvalsh, pinv, matrix_power, cross, svd with full_matrices) and what dask takes only
    on one 2-D array (cholesky, inv, qr, svd, norms and ranks through it, solve of stacks),
    as numpy's function on each chunk of the stack: lazy, the stack kept chunked. Results of
    several arrays are numpy's named tuples (``SVDResult``...), holding dask arrays."""

    module = xp.linalg
    det, slogdet, inv, pinv = (
        _per_matrix(f) for f in (np.linalg.det, np.linalg.slogdet, np.linalg.inv, np.linalg.pinv)
    )
    eigh, eigvalsh, svd, svdvals = (
        _per_matrix(f) for f in (np.linalg.eigh, np.linalg.eigvalsh, np.linalg.svd, np.linalg.svdvals)
    )
    cholesky, qr, matrix_power = (_per_matrix(f) for f in (np.linalg.cholesky, np.linalg.qr, np.linalg.matrix_power))
    matrix_rank, matrix_norm = (_per_matrix(f) for f in (np.linalg.matrix_rank, np.linalg.matrix_norm))

    @staticmethod
    def solve(x1: da.Array, x2: da.Array, /) -> da.Array:
        """dask's own solve for one matrix; numpy's per chunk of a stack (`x2` a vector where
        it is 1-D, as the standard says)."""
        if x1.ndim <= 2 and x2.ndim <= 2:
            return xp.linalg.solve(x1, x2)
        return per_chunk(np.linalg.solve, [x1, x2], [2, 1 if x2.ndim == 1 else 2])

    @staticmethod
    def cross(x1: da.Array, x2: da.Array, /, *, axis: int = -1) -> da.Array:
        """numpy's cross product of 3-vectors along `axis`, per chunk of the other axes."""
        vectors = [xp.moveaxis(x, axis, -1) for x in (x1, x2)]
        return xp.moveaxis(per_chunk(np.cross, vectors, [1, 1]), -1, axis)


def _transform(func: Callable[..., np.ndarray]) -> staticmethod:
    """An n-dimensional FFT: numpy's `func` over `axes` (the standard's default: the last
    ``len(s)`` axes, else all), those axes moved last and made one chunk, per chunk of the
    others; numpy's output dtype (complex128 from float64, as the standard asks)."""

    def transform(
        x: da.Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str = "backward"
    ) -> da.Array:
        if axes is None:
            axes = range(x.ndim - len(s), x.ndim) if s is not None else range(x.ndim)
        axes = [a % x.ndim for a in axes]
        last = list(range(x.ndim - len(axes), x.ndim))
        kernel = partial(func, s=s, axes=[a - x.ndim for a in last], norm=norm)
        return xp.moveaxis(per_chunk(kernel, [xp.moveaxis(x, axes, last)], [len(axes)]), last, axes)

    return staticmethod(transform)


class FFT(CompletedNamespace):
    """array-api-compat's ``dask.array.fft``, whose n-dimensional transforms (the ones the
    engine calls) run numpy's on each chunk of the axes not transformed: dask transforms
    only an axis that is one chunk, and refuses some lengths `s` and odd sizes of rfft's."""

    module = xp.fft
    fftn, ifftn, rfftn, irfftn = (_transform(f) for f in (np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.irfftn))


def _computed(func: Callable[..., Any]) -> Callable[..., Any]:
    """numpy's `func` of an array's values, computed when called because the result's shape
    depends on them (dask's own results have unknown sizes, which every later reshape or
    arange refuses): a dask array, or a tuple of them (numpy's named type), each one chunk."""

    def of_values(namespace: Namespace, x: da.Array) -> Any:
        result = func(namespace.values(x))
        return tree_map(da.from_array, result)

    return of_values


class Namespace(CompletedNamespace):
    """array-api-compat's ``dask.array`` namespace with `linalg` and `fft` completed, the
    `repeat`, `searchsorted` and `eye` forms dask refuses or gets wrong, and the functions whose
    result's size depends on the values (nonzero, unique_*: boolean masks) computed when called."""

    module = xp
    linalg = Linalg()
    fft = FFT()

    def __init__(self, values: Callable[[da.Array], np.ndarray]) -> None:
        self.values = values  # an array's values, computed where the backend computes

    @staticmethod
    def reshape(x: da.Array, /, shape: tuple[int, ...], *, copy: bool | None = None) -> da.Array:
        """dask's reshape, but a new empty array for an empty one: dask cannot split the
        several empty chunks of an empty slice (NotImplementedError), nor merge them by a
        rechunk, though there is nothing to move."""
        if x.size == 0:
            return xp.zeros(np.empty(x.shape, dtype=bool).reshape(shape).shape, dtype=x.dtype)
        return xp.reshape(x, shape, copy=copy)

    def repeat(self, x: da.Array, repeats: Any, /, *, axis: int | None = None) -> da.Array:
        """dask repeats only by an integer: array-valued repeats are computed (the result's
        shape depends on their values) and become the indices of a `take`."""
        if isinstance(repeats, int):
            return xp.repeat(x, repeats, axis=axis)
        if axis is None:
            x, axis = xp.reshape(x, (-1,)), 0
        counts = np.broadcast_to(self.values(da.asarray(repeats)), (x.shape[axis],))
        return xp.take(x, da.from_array(np.repeat(np.arange(x.shape[axis]), counts)), axis=axis)

    @staticmethod
    def searchsorted(x1: da.Array, x2: da.Array, /, *, side: str = "left", sorter: Any = None) -> da.Array:
        """dask's searchsorted, on ``x1`` put in order by `sorter` first where one is given."""
        return xp.searchsorted(x1 if sorter is None else xp.take(x1, sorter), x2, side=side)

    @staticmethod
    def eye(
        n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None, device: Any = None
    ) -> da.Array:
        """A square eye sliced to `n_rows` x `n_cols`: dask's own eye of a wide or tall shape
        with a diagonal offset loses a chunk from its graph ("Missing dependency")."""
        n_cols = n_rows if n_cols is None else n_cols
        return xp.eye(max(n_rows, n_cols), k=k, dtype=dtype, device=device)[:n_rows, :n_cols]

    @staticmethod
    def linspace(
        start: complex, stop: complex, /, num: int, *, dtype: Any = None, device: Any = None, endpoint: bool = True
    ) -> da.Array:
        """dask's linspace; between complex ends, of the real and the imaginary parts apart
        (dask's own calls float() on the ends)."""
        if not (isinstance(start, complex) or isinstance(stop, complex)):
            return xp.linspace(start, stop, num, dtype=dtype, device=device, endpoint=endpoint)
        real, imag = (
            xp.linspace(a, b, num, dtype=xp.float64, endpoint=endpoint)
            for a, b in ((start.real, stop.real), (start.imag, stop.imag))
        )
        return xp.astype(real + 1j * imag, dtype or xp.complex128)

    @staticmethod
    def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> da.Array:
        """Another library's array, through numpy's from_dlpack, one chunk; a dask array
        itself (it has no buffer to share, nor `__dlpack__`)."""
        return x if isinstance(x, da.Array) else da.from_array(np.from_dlpack(x, copy=copy))

    nonzero, unique_values, unique_counts, unique_inverse, unique_all = (
        _computed(f) for f in (np.nonzero, np.unique_values, np.unique_counts, np.unique_inverse, np.unique_all)
    )
