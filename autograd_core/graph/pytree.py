"""Nested tuples (named tuples as their own type), lists and dicts of tensors ("pytrees"),
flattened to a list of leaves and rebuilt, as the transforms of `autograd_core.transforms.func` take and
return them.

>>> leaves, spec = tree_flatten({"w": 1, "b": (2, [3])})
>>> leaves
[1, 2, 3]
>>> tree_unflatten(spec, [x * 10 for x in leaves])
{'w': 10, 'b': (20, [30])}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# A spec is None for a leaf, or (type, keys, child specs) for a tuple, named tuple, list or
# dict; hashable, so that it can key a cache of traces.
Spec = tuple | None


def _is_named(kind: type) -> bool:
    """Whether `kind` is a named tuple's class (``collections.namedtuple``, ``typing.NamedTuple``)."""
    return issubclass(kind, tuple) and hasattr(kind, "_fields")


def tree_flatten(tree: Any) -> tuple[list[Any], Spec]:
    """The leaves of `tree`, in order, and the spec that `tree_unflatten` rebuilds it from."""
    if isinstance(tree, tuple | list):
        children = [tree_flatten(child) for child in tree]
        kind = type(tree) if type(tree) in (tuple, list) or _is_named(type(tree)) else tuple
        return [leaf for leaves, _ in children for leaf in leaves], (kind, None, tuple(spec for _, spec in children))
    if isinstance(tree, dict):
        keys = tuple(tree)
        children = [tree_flatten(tree[k]) for k in keys]
        return [leaf for leaves, _ in children for leaf in leaves], (dict, keys, tuple(spec for _, spec in children))
    return [tree], None


def tree_unflatten(spec: Spec, leaves: list[Any]) -> Any:
    """The tree of `spec` with `leaves` in the places of its leaves."""
    it = iter(leaves)

    def build(s: Spec) -> Any:
        if s is None:
            return next(it)
        kind, keys, children = s
        values = [build(child) for child in children]
        if kind is dict:
            return dict(zip(keys, values))
        return kind._make(values) if _is_named(kind) else kind(values)

    return build(spec)


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """`tree` with `fn` applied to each leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten(spec, [fn(leaf) for leaf in leaves])


__all__ = ["tree_flatten", "tree_map", "tree_unflatten"]
