"""The backend of one `vmap` batch: another backend's library with every array holding a batch
of examples (`autograd_core.transforms.vmap.batched`). It is made per call of a vmapped function, never chosen by
name; its registry name "vmap" is where batching rules for primitives are registered
(``@primitive.kernel("vmap")``). A primitive without one runs its portable default, whose
array-API calls each batch.
"""

from __future__ import annotations

from typing import Any

from autograd_core import primitives as P
from autograd_core.graph import levels
from autograd_core.graph.namespace import raw_namespace
from autograd_core.transforms.vmap import edges, rules  # noqa: F401 - registers the batching rules
from autograd_core.transforms.vmap.batched import BatchedArray, BatchedNamespace, BatchedValueError
from backends.contract.backend import Backend

# The fused kernels of autograd_core.primitives: their portable defaults may write batched
# values into arrays they allocate, which a batch cannot do, so without a batching rule of
# their own they run once per example. Every other primitive is written with array-API calls
# alone, each batched by the namespace's rules, so its default batches as it stands.
KERNELS = frozenset(
    p.name for p in (getattr(P, n) for n in P.__all__) if isinstance(p, P.Primitive) and p.name != "basic_index"
)


class BatchedBackend(Backend):
    """`inner`'s library, batched over `size` examples.

    `randomness` says what random draws mean inside: "error" refuses them, "different" draws
    one per example, "same" draws once for all.
    """

    name = "vmap"

    def __init__(self, inner: Backend, size: int, randomness: str = "error") -> None:
        super().__init__(BatchedNamespace(inner.xp, size, not inner.defers_operators), BatchedArray, inner.device)
        self.inner, self.size, self.randomness = inner, size, randomness
        self.batch = Batch(self)
        self.mutable, self.lazy, self.supports_float64 = inner.mutable, inner.lazy, inner.supports_float64
        self.device_kinds, self.defers_operators = inner.device_kinds, inner.defers_operators

    def __repr__(self) -> str:
        return f"Backend('vmap' over {self.size} examples of {self.inner!r})"

    def owns(self, x: Any) -> bool:
        """Whether `x` is an array batched by this batch (not by an inner or outer one)."""
        return self.xp.is_batched(x)

    # --- the edge of the batch (the primitives of autograd_core.transforms.vmap.edges) ------------------
    def enter(self, x: Any, dim: int) -> Any:
        """The inner array `x` as a batch whose examples lie along its axis `dim`."""
        xp = self.inner.xp
        axes = (dim, *(i for i in range(len(x.shape)) if i != dim))
        return self.xp.batch(xp.permute_dims(x, axes))

    def exit(self, y: Any, dim: int) -> Any:
        """The examples of `y` stacked along axis `dim` of an inner array (`y` repeated, if it
        is the same for every example)."""
        xp = self.inner.xp
        if not self.owns(y):
            y = xp.expand_dims(y, axis=dim)
            return xp.broadcast_to(y, (*y.shape[:dim], self.size, *y.shape[dim + 1 :]))
        value = y.physical
        ndim = len(value.shape)
        axes = (*range(1, dim + 1), 0, *range(dim + 1, ndim))
        return xp.permute_dims(value, axes)

    def sum_batch(self, g: Any) -> Any:
        """The sum over the examples of `g` (a gradient for a value they all share)."""
        return self.inner.xp.sum(g.physical, axis=0) if self.owns(g) else g

    # --- the Backend contract ---------------------------------------------------------------
    def asarray(self, host: Any, dtype: Any = None) -> Any:
        return self.batch.adopt(self.inner.asarray(host, dtype))

    def implementation(self, primitive: Any) -> Any:
        """A primitive's batching rule (its kernel registered as "vmap"), its portable default
        where that batches through this namespace (any primitive but the fused `KERNELS`), else
        its inner kernel run once per example."""
        kernel = primitive.kernels.get(self.name)
        if kernel is not None:
            return kernel
        if primitive.name in ("enter_batch", "exit_batch", "sum_batch"):
            return self._lower_edge(primitive.default)
        if primitive.name in KERNELS:
            return self._per_example(primitive)
        return primitive.default

    def _per_example(self, primitive: Any) -> Any:
        """The fallback: the inner backend's kernel on each example, the results stacked."""
        inner_ns = raw_namespace(self.inner)

        def run(ns: Any, *args: Any, **options: Any) -> Any:
            kernel = inner_ns.kernels.get(primitive) or self.inner.implementation(primitive)
            return self.xp.loop_and_stack(lambda *a, **k: kernel(inner_ns, *a, **k), args, options, name=primitive.name)

        return run

    def _lower_edge(self, kernel: Any) -> Any:
        """An edge op of an inner batch applied under this one: on this batch's arrays it acts
        on each example, whose leading axis is this batch's, so its dim moves by one."""

        def run(ns: Any, x: Any, *rest: Any) -> Any:
            *dim, batched = rest
            if batched is self or not self.owns(x):
                return kernel(ns, x, *rest)
            shifted = [d + 1 for d in dim]
            return self.xp.batch(kernel(ns, x.physical, *shifted, batched))

        return run

    def to_numpy(self, x: Any) -> Any:
        if self.owns(x):
            raise BatchedValueError(
                "vmap: this value differs from example to example, so Python cannot branch on it or read "
                "it inside the vmapped function; use ag.where for data-dependent choices, or return it"
            )
        return self.inner.to_numpy(x)

    def format(self, x: Any, prefix: str = "") -> str:
        if self.owns(x):
            return f"<batched over {self.size} examples, shape {tuple(x.shape)}>"
        return self.inner.format(x, prefix)

    def is_native(self, x: Any) -> bool:
        return self.owns(x) or self.inner.is_native(x)

    def dtype(self, name: str) -> Any:
        return self.inner.dtype(name)

    def dtype_name(self, dtype: Any) -> str:
        return self.inner.dtype_name(dtype)

    def silent_errors(self) -> Any:
        return self.inner.silent_errors()

    def value_range(self, x: Any) -> tuple[int, int]:
        return self.inner.value_range(x.physical if self.owns(x) else x)

    def is_traced(self, x: Any) -> bool:
        return self.inner.is_traced(x.physical if self.owns(x) else x)

    def synchronize(self, *arrays: Any) -> None:
        self.inner.synchronize(*(a.physical if self.owns(a) else a for a in arrays))

    # --- random numbers, per `randomness` ---------------------------------------------------------
    def _draw(self, kind: str, shape: tuple[int, ...], draw: Any) -> Any:
        if self.randomness == "error":
            raise RuntimeError(
                f"vmap: {kind} drawn inside a vmapped function; pass randomness='different' (one draw "
                "per example) or randomness='same' (one draw for all) to vmap"
            )
        if self.randomness == "same":
            return draw(tuple(shape))
        return self.xp.batch(draw((self.size, *shape)))

    def randn(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self._draw("random numbers", shape, lambda s: self.inner.randn(s, dtype))

    def uniform(self, shape: tuple[int, ...], low: float, high: float, dtype: Any) -> Any:
        return self._draw("random numbers", shape, lambda s: self.inner.uniform(s, low, high, dtype))

    def bernoulli(self, shape: tuple[int, ...], p: float) -> Any:
        return self._draw("a random mask (dropout)", shape, lambda s: self.inner.bernoulli(s, p))


class Batch:
    """What the graph asks of a batch (`Backend.batch`, read by `autograd_core.graph.levels`):
    the backend it batches, and how that backend's arrays, values every example shares, meet
    the batch's own."""

    def __init__(self, backend: BatchedBackend) -> None:
        self.backend, self.inner = backend, backend.inner

    def adopt(self, x: Any) -> Any:
        """`x` as a batched array: lifted where the library's operators cannot meet batched
        arrays (`defers_operators` false), else itself."""
        backend = self.backend
        if backend.defers_operators or backend.owns(x) or not self.inner.is_native(x):
            return x
        return backend.xp.lift(levels.adopt(self.inner, x))

    def level_of(self, x: Any) -> Backend:
        return self.backend if self.backend.owns(x) else levels.level_of(self.inner, x)

    def shared_gradient(self, ns: Any, g: Any) -> Any:
        """`g` summed over the batch and recorded (`edges.sum_batch`): the gradient a backward
        sends out of this batch, to a value every example shared."""
        return edges.sum_batch(ns, g, self.backend)


__all__ = ["Batch", "BatchedBackend"]
