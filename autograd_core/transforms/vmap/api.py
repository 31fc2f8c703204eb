"""`vmap`: a function of one example run on a batch of them at once, as `torch.func.vmap`.

Inside the call the batch is a backend of its own (`autograd_core.transforms.vmap.backend.BatchedBackend`) that wraps
the inputs' backend: its arrays hold every example with the batch as a hidden leading axis,
and its namespace answers each function of the standard with a batching rule (or, for a
function without one, by running it per example and stacking). The function's tensors are
ordinary tensors of that backend, so every op, the engine, `grad`, `jvp` and a nested `vmap`
run on it unchanged. Tensors of the wrapped backend that the function reads (weights it
closes over) take part as values shared by every example; their gradients are summed over
the batch.

>>> import autograd_core as ag
>>> from autograd_core import func
>>> x = ag.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> func.vmap(lambda row: row @ row)(x).tolist()  # one dot product per row
[5.0, 25.0]
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import backends
from autograd_core.graph.levels import encloses
from autograd_core.graph.namespace import tensor_namespace
from autograd_core.graph.pytree import tree_flatten, tree_unflatten
from autograd_core.graph.tensor_base import TensorBase
from autograd_core.transforms.vmap.backend import BatchedBackend
from autograd_core.transforms.vmap.edges import enter, leave

RANDOMNESS = ("error", "different", "same")


def _dims_for(dims: Any, tree: Any, what: str) -> list[Any]:
    """One dim (an int or None) per leaf of `tree`, from `dims`: one for all, or a tree of
    them matching a prefix of `tree`'s structure."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(tree_flatten(tree)[0])
    if isinstance(dims, tuple | list) and isinstance(tree, tuple | list) and len(dims) == len(tree):
        return [d for sub, t in zip(dims, tree) for d in _dims_for(sub, t, what)]
    if isinstance(dims, dict) and isinstance(tree, dict) and dims.keys() == tree.keys():
        return [d for k in tree for d in _dims_for(dims[k], tree[k], what)]
    raise ValueError(f"vmap: {what} {dims!r} does not match the structure of the {what.split('_')[0]}puts")


def vmap(
    func: Callable[..., Any],
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """`func`, written for one example, mapped over the axis `in_dims` of its inputs (None: an
    input shared by every example; a tuple or dict of them per argument), its outputs stacked
    along `out_dims`. `randomness` says what a random draw inside means: "error" (refuse),
    "different" (one draw per example) or "same" (one draw shared). `chunk_size` runs the
    batch that many examples at a time, to bound memory.

    >>> import autograd_core as ag
    >>> from autograd_core import func
    >>> w = ag.tensor([1.0, 10.0])
    >>> func.vmap(lambda a, b: a * b, in_dims=(0, None))(ag.tensor([[1.0, 2.0], [3.0, 4.0]]), w).tolist()
    [[1.0, 20.0], [3.0, 40.0]]
    """
    if randomness not in RANDOMNESS:
        raise ValueError(f"vmap: randomness must be one of {RANDOMNESS}, got {randomness!r}")
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"vmap: chunk_size must be a positive int or None, got {chunk_size}")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        flat, spec = tree_flatten(args)
        dims = _dims_for(in_dims if isinstance(in_dims, int | type(None)) else tuple(in_dims), args, "in_dims")
        batched = [(x, d) for x, d in zip(flat, dims) if d is not None]
        if not batched:
            raise ValueError("vmap: no input is mapped over; give at least one tensor an in_dim that is not None")
        sizes = set()
        for x, d in batched:
            if not isinstance(x, TensorBase):
                raise TypeError(f"vmap: an input mapped over must be a tensor, got {type(x).__name__}")
            if not -x.ndim <= d < x.ndim:
                raise ValueError(f"vmap: in_dim {d} is out of range for an input of shape {x.shape}")
            sizes.add(x.shape[d])
        if len(sizes) != 1:
            raise ValueError(f"vmap: the inputs mapped over have different sizes along their in_dims: {sorted(sizes)}")
        size = sizes.pop()
        dims = [None if d is None else d % x.ndim for x, d in zip(flat, dims)]
        if chunk_size is None or size <= chunk_size:
            return _run(func, flat, dims, spec, kwargs, size, out_dims, randomness)
        pieces = []
        for start in range(0, size, chunk_size):
            stop = min(start + chunk_size, size)
            chunk = [x if d is None else _slice(x, d, start, stop) for x, d in zip(flat, dims)]
            pieces.append(_run(func, chunk, dims, spec, kwargs, stop - start, out_dims, randomness))
        return _concat_pieces(pieces, out_dims)

    return wrapper


def _slice(x: TensorBase, dim: int, start: int, stop: int) -> TensorBase:
    return x[(slice(None),) * dim + (slice(start, stop),)]


def _concat_pieces(pieces: list[Any], out_dims: Any) -> Any:
    ag = tensor_namespace()
    flats = [tree_flatten(p)[0] for p in pieces]
    spec = tree_flatten(pieces[0])[1]
    dims = _dims_for(out_dims, pieces[0], "out_dims")
    joined = [ag.concat([f[i] for f in flats], axis=d) for i, d in enumerate(dims)]
    return tree_unflatten(spec, joined)


def _run(
    func: Callable[..., Any],
    flat: list[Any],
    dims: list[Any],
    spec: Any,
    kwargs: dict[str, Any],
    size: int,
    out_dims: Any,
    randomness: str,
) -> Any:
    """`func` on one batch of `size` examples."""
    inner = next(x.backend for x, d in zip(flat, dims) if d is not None)
    enclosing = backends.current()  # inside another vmap, this batch nests in its batch
    if enclosing is not inner and encloses(enclosing, inner):
        inner = enclosing
    batch = BatchedBackend(inner, size, randomness)
    inputs = [x if d is None else enter(x, d, batch) for x, d in zip(flat, dims)]
    with backends.use(batch):
        result = func(*tree_unflatten(spec, inputs), **kwargs)
    leaves, out_spec = tree_flatten(result)
    dims_out = _dims_for(out_dims, result, "out_dims")
    outputs = []
    for y, d in zip(leaves, dims_out):
        if not isinstance(y, TensorBase):
            raise TypeError(
                f"vmap: the function must return tensors (or tuples, lists, dicts of them), got {type(y).__name__}"
            )
        if d is None:
            if y.backend is batch:
                raise ValueError("vmap: an output with out_dims None must be the same for every example")
            outputs.append(y)
            continue
        if not -(y.ndim + 1) <= d <= y.ndim:
            raise ValueError(f"vmap: out_dim {d} is out of range for an output of {y.ndim} dimensions")
        d %= y.ndim + 1
        outputs.append(leave(y, d, batch) if y.backend is batch else _repeated(y, d, size))
    return tree_unflatten(out_spec, outputs)


def _repeated(y: TensorBase, dim: int, size: int) -> TensorBase:
    """An output the same for every example (it never met the batch), repeated along `dim`."""
    ag = tensor_namespace()
    expanded = ag.expand_dims(y, axis=dim)
    return ag.broadcast_to(expanded, (*y.shape[:dim], size, *y.shape[dim:]))


__all__ = ["RANDOMNESS", "vmap"]
