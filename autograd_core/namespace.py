"""The namespace a first-order backward computes with: the backend's own array-API namespace,
plus the engine's kernels under the names `autograd_core` gives their differentiable twins.

A VJP is written once against a namespace argument `ns`. In a first-order backward `ns` is a
`RawNamespace` and the VJP runs on raw backend arrays; with ``create_graph=True`` it is
`autograd_core` and the VJP runs on Tensors. Both answer the standard's functions, and both
answer the underscored kernels below (the standard has no scatter or index-add).
"""

from __future__ import annotations

from typing import Any

import backends


class RawNamespace:
    """``backend.xp`` for everything the standard names, plus the backend's kernels.

    >>> import backends
    >>> ns = raw_namespace(backends.get("numpy"))
    >>> ns._scatter(ns.ones((2,)), (4,), (slice(1, 3),)).tolist()
    [0.0, 1.0, 1.0, 0.0]
    """

    def __init__(self, backend: backends.Backend) -> None:
        self.backend = backend
        self.xp = backend.xp

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.xp, name)
        setattr(self, name, value)  # found once, then a plain attribute
        return value

    def _basic_index(self, x: Any, key: tuple) -> Any:
        return self.backend.getitem(x, key)

    def _scatter(self, values: Any, shape: tuple[int, ...], key: tuple) -> Any:
        return self.backend.scatter(tuple(shape), key, values)

    def _index_add(self, values: Any, shape: tuple[int, ...], axis: int, index: Any) -> Any:
        return self.backend.index_add(tuple(shape), axis, index, values)

    def _map_batch_chunks(self, func: Any, arrays: Any, batch_axes: Any, out_batch_axes: Any) -> tuple:
        return self.backend.map_batch_chunks(
            lambda backend, *chunks: func(raw_namespace(backend), *chunks), arrays, batch_axes, out_batch_axes
        )

    def _to_backend(self, values: Any, source: backends.Backend, target: backends.Backend) -> Any:
        return target.asarray(source.to_numpy(values), target.dtype(source.dtype_name(values.dtype)))

    def _erf(self, x: Any) -> Any:
        return self.backend.erf(x)

    def _relu(self, x: Any) -> Any:
        return self.backend.relu(x)

    def _relu_backward(self, grad: Any, out: Any) -> Any:
        return self.backend.relu_backward(grad, out)

    def _tanh_backward(self, grad: Any, out: Any) -> Any:
        return self.backend.tanh_backward(grad, out)

    def _cross_entropy_backward(self, row_grad: Any, logits: Any, target: Any, classes: Any) -> Any:
        return self.backend.cross_entropy_backward(row_grad, logits, target, classes)

    def _gelu_backward(self, grad: Any, x: Any, approximate: str) -> Any:
        return self.backend.gelu_backward(grad, x, approximate)

    def _einsum(self, subscripts: str, *arrays: Any) -> Any:
        return self.backend.einsum(subscripts, *arrays)

    def _layer_norm_backward(
        self,
        grad: Any,
        x: Any,
        normalized_shape: tuple[int, ...],
        weight: Any,
        eps: float,
        stats: tuple[Any, Any],
        part: str,
    ) -> Any:
        return self.backend.layer_norm_backward(grad, x, tuple(normalized_shape), weight, stats, part)

    def _batch_norm_backward(self, grad: Any, x: Any, weight: Any, mean: Any, var: Any, eps: float, part: str) -> Any:
        return self.backend.batch_norm_backward(grad, x, weight, mean, var, eps, part)

    def _max_pool2d_backward(self, grad: Any, indices: Any, input_shape: tuple[int, ...], geometry: Any) -> Any:
        return self.backend.max_pool2d_backward(grad, indices, tuple(input_shape), **geometry._asdict())

    def _conv2d(self, x: Any, weight: Any, geometry: Any) -> Any:
        return self.backend.conv2d(x, weight, **geometry._asdict())

    def _conv2d_grad_input(self, grad: Any, weight: Any, input_shape: tuple[int, ...], geometry: Any) -> Any:
        return self.backend.conv2d_grad_input(grad, weight, tuple(input_shape), **geometry._asdict())

    def _conv2d_grad_weight(self, grad: Any, x: Any, weight_shape: tuple[int, ...], geometry: Any) -> Any:
        return self.backend.conv2d_grad_weight(grad, x, tuple(weight_shape), **geometry._asdict())


def raw_namespace(backend: backends.Backend) -> RawNamespace:
    """The (cached) raw namespace of `backend`."""
    ns = _cache.get(id(backend))
    if ns is None or ns.backend is not backend:
        ns = _cache[id(backend)] = RawNamespace(backend)
    return ns


_cache: dict[int, RawNamespace] = {}
