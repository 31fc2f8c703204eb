"""The Backend contract: what the engine needs from an array library beyond the standard
namespace itself: moving data to and from the host, dtypes, random numbers, compilation.

Every method here has a portable default written against the array API standard alone
(`self.xp`), so a new library works as soon as it has a namespace; `backends/<lib>.py`
overrides only what that library does differently. The compute kernels the standard lacks
(scatter, convolution, the fused activations...) are primitives of `autograd_core.primitives`,
each with a portable default; a backend registers its own kernels for them by its name.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from backends.contract import mask_stream

# One seeded host generator for the whole process: random numbers are drawn here in
# float64 and moved to the backend, so one seed gives the same weights on every backend.
# Dropout's masks come from `mask_stream` instead, which a compiled step can draw from.
_host_rng = np.random.default_rng(0)


DTYPE_NAMES = (
    "float32",
    "float64",
    "float16",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "complex64",
    "complex128",
    "bool",
)


def manual_seed(seed: int) -> None:
    """Reseed the host generator that every backend draws its random numbers from, and
    restart the stream of dropout masks at `seed`."""
    global _host_rng
    _host_rng = np.random.default_rng(seed)
    mask_stream.manual_seed(seed)


def host_rng() -> np.random.Generator:
    return _host_rng


def get_rng_state() -> tuple[dict, tuple[Any, Any]]:
    """Where the random numbers stand: the host generator's state and the mask stream's."""
    return _host_rng.bit_generator.state, mask_stream.get_state()


def set_rng_state(state: tuple[dict, tuple[Any, Any]]) -> None:
    """Put the random numbers back where `get_rng_state` found them."""
    _host_rng.bit_generator.state, masks = state
    mask_stream.set_state(masks)


# What a tensor cannot hold, by numpy dtype kind, and what to do instead.
_REFUSED_KINDS = {
    "O": "Python objects (dtype object; None or strings among numbers make one): convert it to numbers "
    "first, e.g. np.asarray(values, dtype=np.float32)",
    "U": "strings: a tensor holds numbers; map the text to integers first (a vocabulary index)",
    "S": "bytes strings: a tensor holds numbers; map the text to integers first (a vocabulary index)",
    "V": "records, raw bytes or an extension type (structured, void, bfloat16): convert them to a standard "
    "numeric dtype first, e.g. a.astype(np.float32), or take one field of a record, a['name']",
    "M": "datetime64 values: convert them to numbers first, e.g. (a - a[0]) / np.timedelta64(1, 's')",
    "m": "timedelta64 values: convert them to numbers first, e.g. a / np.timedelta64(1, 's')",
}


def numeric_host_array(host: np.ndarray) -> np.ndarray:
    """`host` as tensors take it: an array of another byte order is converted to the native one
    (the same values; PyTorch refuses those), and any dtype no tensor can hold is refused here,
    when the tensor is made, saying what to do: objects, strings, records, dates and numpy's
    extended precision (float128, complex256), which no backend has.

    >>> numeric_host_array(np.arange(2, dtype=">f8")).dtype.byteorder
    '='
    """
    kind = host.dtype.kind
    if kind in _REFUSED_KINDS:
        raise TypeError(f"cannot make a tensor from a numpy array of {_REFUSED_KINDS[kind]}")
    if kind in "fc" and host.dtype.itemsize > (8 if kind == "f" else 16):
        wider = "float64" if kind == "f" else "complex128"
        raise TypeError(
            f"cannot make a tensor from a numpy array of {host.dtype} (extended precision), which no backend "
            f"holds; convert it first, e.g. a.astype(np.{wider}), which rounds to {wider}"
        )
    return host if host.dtype.isnative else host.astype(host.dtype.newbyteorder("="))


class Backend:
    """One array library on one device, as the engine sees it.

    Attributes read by the core, tests and docs:
        name: registry name (``"numpy"``, ``"torch"``...).
        xp: the array-API namespace of the library.
        array_type: the library's array class: `is_native` tells the library's arrays by it.
        device: the device arrays are created on (``None`` for the library's default).
        mutable: whether arrays may be updated in place (jax: no).
        lazy: whether arrays are task graphs computed on demand (dask); optimizers then call
            `persist` on the new parameters and state after every step.
        supports_float64: whether float64 arrays work.
        device_kinds: the kinds of device the library can target.
        device_type: the kind of device this backend's arrays are on (``"cpu"`` for host
            memory, ``"cuda"``...), PyTorch's ``device.type``.
        can_compile: whether `jit` can trace a whole step into one compiled function.
        defers_operators: whether the arrays' operators return NotImplemented for an operand of a
            type they do not know (``x + other``), so that vmap's batched array on the other side
            answers; where they raise instead (array_api_strict: False), vmap adopts every array
            it meets as a batched one before an operator sees it.
        batch: ``None`` for a library's backend. vmap's backend sets its batch here: the backend
            it batches (``batch.inner``) and how that backend's arrays join the batch as values
            every example shares (``adopt``, ``level_of``, ``shared_gradient``); the graph reads
            it through `autograd_core.graph.levels`, once per sweep.
    """

    name: str = "base"
    mutable: bool = True
    lazy: bool = False  # arrays are task graphs computed on demand (dask): `persist` after each step
    supports_float64: bool = True
    device_kinds: tuple[str, ...] = ("cpu",)
    can_compile: bool = False
    defers_operators: bool = True  # `x + other` returns NotImplemented for an unknown `other` (vmap's arrays)
    batch: Any = None  # vmap's backend: its batch (autograd_core.transforms.vmap.backend.Batch)

    def __init__(self, xp: Any, array_type: type, device: Any = None) -> None:
        self.xp = xp
        self.array_type = array_type
        self.device = device
        self._dtypes: tuple[dict[str, Any], dict[Any, str]] | None = None

    @property
    def device_type(self) -> str:
        return "cpu"

    def __repr__(self) -> str:
        device = "" if self.device is None else f", device={self.device!r}"
        return f"Backend({self.name!r}{device})"

    # --- host transfer -------------------------------------------------------------
    def asarray(self, host: np.ndarray, dtype: Any = None) -> Any:
        """A backend array holding a copy of the numpy array `host`, cast to `dtype`."""
        return self.xp.asarray(host, dtype=dtype, device=self.device)

    def to_numpy(self, x: Any) -> np.ndarray:
        return np.asarray(x)

    def format(self, x: Any, prefix: str = "") -> str:
        """The values of `x` as text, aligned to follow `prefix`."""
        return np.array2string(self.to_numpy(x), separator=", ", prefix=prefix)

    @staticmethod
    def host_array(data: Any) -> np.ndarray:
        """`data` (Python values, or an array of any library) as a numpy array of numbers or
        bools in native byte order (see `numeric_host_array`)."""
        try:
            host = np.asarray(data)
        except (TypeError, RuntimeError):
            try:
                host = np.from_dlpack(data)
            except (TypeError, RuntimeError, BufferError) as e:  # a dtype numpy lacks (torch's bfloat16...)
                raise TypeError(
                    f"cannot read a {type(data).__name__} of dtype {getattr(data, 'dtype', '?')} as a numpy array "
                    f"({e}); convert it to a standard dtype (float32, float64, int64...), or detach it from its "
                    "library's autograd graph, first"
                ) from None
        return numeric_host_array(host)

    def dlpack_exporter(self, x: Any) -> Any:
        """The array whose ``__dlpack__`` shares `x`'s values: `x` itself; libraries whose
        arrays hold no memory until computed (dask) override this and `dlpack_device`."""
        return x

    def dlpack_device(self, x: Any) -> tuple[int, int]:
        """Where `x`'s values are, as DLPack names devices: ``(device type, index)``."""
        return x.__dlpack_device__()

    def synchronize(self, *arrays: Any) -> None:
        """Wait for queued work (on `arrays`, or all) to finish; asynchronous libraries override this."""

    def persist(self, arrays: list) -> list:
        """`arrays` with their values computed and kept, called with the parameters and optimizer
        state at the end of every optimizer step: lazy libraries (dask) materialise them so the
        next step's graph starts from them instead of growing. Eager libraries return `arrays`."""
        return arrays

    def describe(self) -> str:
        """Where this backend computes, in words, for ``python -m backends`` ("" when the device says it all)."""
        return ""

    def silent_errors(self) -> contextlib.AbstractContextManager:
        """A context in which floating-point errors (division by zero, overflow, invalid
        operations) give inf and nan without a warning, as most libraries always do; the engine
        runs backward in it, so rules the user never wrote do not warn (anomaly mode reports
        non-finite gradients instead). Libraries that warn override this."""
        return contextlib.nullcontext()

    def owns_memory(self, x: Any) -> bool:
        """Whether `x` is certainly not a view: no other array can see its memory. The engine
        then keeps a gradient without copying it; the default (False) always copies."""
        return False

    def is_native(self, x: Any) -> bool:
        """Whether `x` is an array of this backend's library."""
        return isinstance(x, self.array_type)

    # --- dtypes ------------------------------------------------------------------------
    def dtype(self, name: str) -> Any:
        """The library's dtype called `name` in the standard (``"float32"``...)."""
        try:
            return self._dtype_tables()[0][name]
        except KeyError:
            raise self._unsupported(name) from None

    def dtype_name(self, dtype: Any) -> str:
        """The standard's name of the library dtype `dtype` (as arrays carry it, or as the
        namespace spells it: numpy's ``np.float32`` type and ``np.dtype("float32")`` alike)."""
        names = self._dtype_tables()[1]
        if dtype in names:
            return names[dtype]
        try:
            return names[self.xp.empty((0,), dtype=dtype).dtype]
        except (KeyError, TypeError, ValueError):
            raise self._unsupported(dtype) from None

    def _unsupported(self, dtype: Any) -> TypeError:
        held = ", ".join(self._dtype_tables()[0])
        return TypeError(
            f"dtype {dtype!r} is not supported by the {self.name} backend, which holds {held}; "
            "convert the values to one of these first"
        )

    def holds(self, dtype: Any) -> bool:
        """Whether arrays of the library dtype `dtype` can be tensors here as they are (numpy's
        big-endian float64 cannot: tensors take it converted, see `numeric_host_array`)."""
        try:
            self.dtype_name(dtype)
        except TypeError:
            return False
        return True

    def _dtype_tables(self) -> tuple[dict[str, Any], dict[Any, str]]:
        """name -> dtype and dtype -> name, keyed by the dtype objects arrays really carry."""
        if self._dtypes is None:
            by_name = {
                n: self.xp.empty((0,), dtype=getattr(self.xp, n)).dtype for n in DTYPE_NAMES if hasattr(self.xp, n)
            }
            self._dtypes = (by_name, {d: n for n, d in by_name.items()})
        return self._dtypes

    # --- random numbers (drawn on the host, see `host_rng`; masks from `mask_stream`) -----
    def randn(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self.asarray(_host_rng.standard_normal(shape).astype(self.to_host_dtype(dtype)), dtype)

    def uniform(self, shape: tuple[int, ...], low: float, high: float, dtype: Any) -> Any:
        draw = _host_rng.uniform(low, high, shape).astype(self.to_host_dtype(dtype))
        return self.asarray(draw, dtype)

    def bernoulli(self, shape: tuple[int, ...], p: float) -> Any:
        """A bool array, True with probability `p`, from the mask stream's next draw (inside a
        trace too: see `mask_stream`)."""
        key, counter = mask_stream.next_draw()
        return self.random_bits(shape, key, counter) < mask_stream.threshold(p)

    def random_bits(self, shape: tuple[int, ...], key: Any, counter: Any) -> Any:
        """`mask_stream.bits`: integers uniform in [0, 2**32) for draw (`key`, `counter`);
        a backend may compute the same hash faster, never another one."""
        return mask_stream.bits(self.xp, shape, key, counter, self.device)

    def to_host_dtype(self, dtype: Any) -> np.dtype:
        return np.dtype(self.dtype_name(dtype))

    # --- queries and compilation -------------------------------------------------------------
    def value_range(self, x: Any) -> tuple[int, int]:
        """The smallest and the largest value of the non-empty integer array `x`, as ints
        (the bounds checks of indices and class targets)."""
        return int(self.xp.min(x)), int(self.xp.max(x))

    def jit(self, fn: Any, donate: tuple[int, ...] = ()) -> Any:
        """`fn` (a pure function of arrays) compiled by the library's tracing compiler, for
        backends with ``can_compile``; `autograd_core.transforms.compile` builds on it. The arguments at
        the positions `donate` are consumed: `fn` returns their new values at the same
        positions of its result tuple, tree for tree, and the backend may reuse the arguments'
        arrays for them (jax donates them to XLA; torch returns new arrays)."""
        raise NotImplementedError(f"the {self.name} backend has no tracing compiler")

    def is_traced(self, x: Any) -> bool:
        """Whether `x` is a placeholder inside a trace (its values unknown until run)."""
        return False

    # --- kernels ---------------------------------------------------------------------
    def implementation(self, primitive: Any) -> Any:
        """The kernel this backend runs for `primitive` (an `autograd_core.graph.registry.Primitive`):
        the one registered under its name, else the portable default."""
        return primitive.kernels.get(self.name, primitive.default)
