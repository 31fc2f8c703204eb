"""Function transforms with `torch.func`'s names and semantics: `grad`, `grad_and_value`,
`vjp`, `jvp`, `jacrev`, `jacfwd`, `hessian`, `hvp`, `vmap` and `functional_call`. They take
and return tensors, or nested tuples, lists and dicts of them, and compose with each other.

A transform records the function with the engine, as ``.backward()`` would, and reads the
result off the graph: backward for `grad` and `vjp`, forward (`autograd_core.autodiff.forward`) for
`jvp`. When a tensor the function reads is itself being differentiated by an outer transform
(or by the user's own ``.backward()``), the result is recorded too, so transforms nest.

>>> import autograd_core as ag
>>> from autograd_core import func
>>> f = lambda x: (x**3).sum()
>>> x = ag.tensor([1.0, 2.0], dtype="float64")
>>> func.grad(f)(x).tolist()  # 3 x^2
[3.0, 12.0]
>>> func.hessian(f)(x).tolist()  # diag(6 x)
[[6.0, 0.0], [0.0, 12.0]]
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import backends
from autograd_core.autodiff import engine
from autograd_core.autodiff.forward import push_forward
from autograd_core.graph import grad_mode, levels, registry
from autograd_core.graph.levels import encloses
from autograd_core.graph.namespace import tensor_namespace
from autograd_core.graph.pytree import tree_flatten, tree_unflatten
from autograd_core.graph.tensor_base import TensorBase
from autograd_core.transforms.vmap.api import vmap

Argnums = int | tuple[int, ...]


def _track(transform: str, x: Any) -> TensorBase:
    """The tensor `transform` differentiates with respect to, in place of the input `x`. Inside
    a vmap it lives on the batch's backend, so its gradient stays one per example."""
    if not isinstance(x, TensorBase):
        raise TypeError(f"{transform}: the inputs to differentiate must be tensors, got {type(x).__name__}")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise TypeError(f"{transform}: only floating-point tensors can be differentiated, got {x.dtype.name}")
    enclosing = backends.current()
    backend = enclosing if enclosing is not x.backend and encloses(enclosing, x.backend) else x.backend
    data = x.array if backend is x.backend else levels.adopt(backend, x.array)
    if x.requires_grad and grad_mode.is_grad_enabled():
        return registry.ALIAS.record(data, backend, (x,))
    return TensorBase._wrap(data, backend).requires_grad_()


def _reaches_outer(outputs: Sequence[Any], own: Sequence[TensorBase]) -> bool:
    """Whether the graph of `outputs` reaches a tensor an outer computation differentiates:
    a leaf that requires grad other than the transform's `own` inputs, or one of them that
    stands for such a tensor. Then the transform's results must be recorded too."""
    if not grad_mode.is_grad_enabled():
        return False
    mine = {id(t) for t in own if t.is_leaf}
    roots = [o for o in outputs if isinstance(o, TensorBase) and o.requires_grad]
    return any(node.is_leaf and id(node) not in mine for node in engine.topological_order(roots)) if roots else False


def _split_aux(transform: str, result: Any, has_aux: bool) -> tuple[Any, Any]:
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise TypeError(f"{transform}(..., has_aux=True): the function must return a pair (output, aux)")
    return result


def _numbers(argnums: Argnums, count: int, transform: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for n in nums:
        if not -count <= n < count:
            raise ValueError(f"{transform}: argnums {argnums} out of range for {count} positional arguments")
    return tuple(n % count for n in nums)


def _settle(tensors: list[Any], keep_graph: bool) -> list[Any]:
    """The transform's results: as recorded when an outer computation differentiates them,
    else cut from the transform's own graph."""
    return [t.detach() if isinstance(t, TensorBase) and not keep_graph else t for t in tensors]


def _zeros_for(inputs: Sequence[TensorBase], grads: Sequence[TensorBase | None]) -> list[TensorBase]:
    ag = tensor_namespace()
    return [ag.zeros_like(x) if g is None else g for x, g in zip(inputs, grads)]


# --- reverse mode -----------------------------------------------------------------------------
def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` gives the cotangents of the primals
    (a tuple, one per primal, each shaped as it), from those of the output (shaped as it).
    With ``has_aux=True`` `func` returns ``(output, aux)`` and the result is ``(output, vjp_fn, aux)``.

    >>> import autograd_core as ag
    >>> from autograd_core import func
    >>> out, vjp_fn = func.vjp(lambda x: x * x, ag.tensor([1.0, 3.0]))
    >>> vjp_fn(ag.ones(2))[0].tolist()
    [2.0, 6.0]
    """
    flat, spec = tree_flatten(primals)
    with grad_mode.enable_grad():
        inputs = [_track("vjp", x) for x in flat]
        output, aux = _split_aux("vjp", func(*tree_unflatten(spec, inputs)), has_aux)
    out_leaves, out_spec = tree_flatten(output)
    for o in out_leaves:
        if not isinstance(o, TensorBase):
            raise TypeError(f"vjp: the function must return tensors, got {type(o).__name__}")
    outer = _reaches_outer(out_leaves, inputs)

    def vjp_fn(cotangents: Any) -> tuple[Any, ...]:
        given, given_spec = tree_flatten(cotangents)
        if given_spec != out_spec and not (len(out_leaves) == 1 and len(given) == 1):
            raise ValueError("vjp_fn: the cotangents must have the structure of the function's output")
        for o, c in zip(out_leaves, given):
            if tuple(c.shape) != o.shape:
                raise ValueError(f"vjp_fn: a cotangent has shape {tuple(c.shape)}, its output has shape {o.shape}")
        pairs = [(o, c) for o, c in zip(out_leaves, given) if o.requires_grad]
        create = outer or any(isinstance(c, TensorBase) and c.requires_grad for c in given)
        grads: list[Any] = [None] * len(inputs)
        if pairs:
            grads = list(
                engine.grad(
                    [o for o, _ in pairs],
                    inputs,
                    grad_outputs=[c for _, c in pairs],
                    retain_graph=True,
                    create_graph=create,
                    allow_unused=True,
                )
            )
        return tree_unflatten(spec, _zeros_for(inputs, grads))

    result = tree_unflatten(out_spec, _settle(out_leaves, outer))
    return (result, vjp_fn, aux) if has_aux else (result, vjp_fn)


def grad_and_value(func: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False) -> Callable[..., Any]:
    """A function returning ``(gradient, value)`` of `func`, which must return a one-element
    tensor: the gradient with respect to the positional argument(s) `argnums` (a tensor or a
    pytree of them; a tuple of them for a tuple of argnums). With ``has_aux=True`` `func`
    returns ``(value, aux)`` and the value part is ``(value, aux)``.

    >>> import autograd_core as ag
    >>> from autograd_core import func
    >>> g, v = func.grad_and_value(lambda x: (x * x).sum())(ag.tensor([1.0, 2.0]))
    >>> g.tolist(), v.item()
    ([2.0, 4.0], 5.0)
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        nums = _numbers(argnums, len(args), "grad")
        args = list(args)
        specs, inputs = [], []
        with grad_mode.enable_grad():
            for n in nums:
                flat, spec = tree_flatten(args[n])
                tracked = [_track("grad", x) for x in flat]
                args[n] = tree_unflatten(spec, tracked)
                specs.append((spec, len(tracked)))
                inputs += tracked
            output, aux = _split_aux("grad", func(*args, **kwargs), has_aux)
        if not isinstance(output, TensorBase) or output.numel() != 1:
            shape = output.shape if isinstance(output, TensorBase) else type(output).__name__
            raise RuntimeError(f"grad: the function must return a one-element tensor to differentiate, got {shape}")
        outer = _reaches_outer([output], inputs)
        grads: Sequence[Any] = [None] * len(inputs)
        if output.requires_grad:
            grads = engine.grad(output, inputs, create_graph=outer, allow_unused=True)
        grads = _zeros_for(inputs, grads)
        trees, start = [], 0
        for spec, count in specs:
            trees.append(tree_unflatten(spec, grads[start : start + count]))
            start += count
        gradient = trees[0] if isinstance(argnums, int) else tuple(trees)
        (value,) = _settle([output], outer)
        return gradient, ((value, aux) if has_aux else value)

    return wrapper


def grad(func: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of `func` (which returns a one-element tensor) as a function of the same
    arguments, with respect to the argument(s) `argnums`; with ``has_aux=True`` `func`
    returns ``(value, aux)`` and the function ``(gradient, aux)``.

    >>> import autograd_core as ag
    >>> from autograd_core import func
    >>> func.grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(ag.tensor([2.0]), ag.tensor([5.0]))
    (tensor([5.]), tensor([2.]))
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        gradient, value = inner(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


# --- forward mode ----------------------------------------------------------------------------
def jvp(
    func: Callable[..., Any],
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> tuple[Any, ...]:
    """``(func(*primals), J @ tangents)``: the output and its directional derivative along
    `tangents` (shaped as the primals), by forward mode. With ``has_aux=True`` `func` returns
    ``(output, aux)`` and the result is ``(output, jvp_out, aux)``.

    >>> import autograd_core as ag
    >>> from autograd_core import func
    >>> out, t = func.jvp(ag.sin, (ag.tensor([0.0]),), (ag.tensor([2.0]),))
    >>> t.tolist()  # cos(0) * 2
    [2.0]
    """
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise TypeError("jvp: primals and tangents must be tuples (one entry per positional argument)")
    flat, spec = tree_flatten(tuple(primals))
    flat_tangents, tangent_spec = tree_flatten(tuple(tangents))
    if tangent_spec != spec:
        raise ValueError("jvp: the tangents must have the structure of the primals")
    for p, t in zip(flat, flat_tangents):
        if not isinstance(t, TensorBase) or tuple(t.shape) != tuple(p.shape):
            raise ValueError(f"jvp: each tangent must be a tensor shaped as its primal {tuple(p.shape)}")
    with grad_mode.enable_grad():
        inputs = [_track("jvp", x) for x in flat]
        output, aux = _split_aux("jvp", func(*tree_unflatten(spec, inputs)), has_aux)
    out_leaves, out_spec = tree_flatten(output)
    differentiable = _reaches_outer(out_leaves, inputs) or any(t.requires_grad for t in flat_tangents)
    roots = [o for o in out_leaves if isinstance(o, TensorBase)]
    pushed = push_forward(roots, {id(q): t for q, t in zip(inputs, flat_tangents)}, differentiable)
    ag = tensor_namespace()
    out_tangents = [ag.zeros_like(o) if t is None else t for o, t in zip(roots, pushed)]
    if strict and any(t is None for t in pushed):
        raise RuntimeError("jvp(strict=True): an output does not depend on the inputs")
    result = (tree_unflatten(out_spec, _settle(out_leaves, differentiable)), tree_unflatten(out_spec, out_tangents))
    return (*result, aux) if has_aux else result


# --- Jacobians and Hessians ---------------------------------------------------------------------
def _partial(func: Callable[..., Any], args: Sequence[Any], nums: tuple[int, ...]) -> Callable[..., Any]:
    """`func` as a function of the arguments `nums` alone, the others fixed to `args`'."""

    def of(*chosen: Any) -> Any:
        full = list(args)
        for n, value in zip(nums, chosen):
            full[n] = value
        return func(*full)

    return of


def jacrev(
    func: Callable[..., Any], argnums: Argnums = 0, *, has_aux: bool = False, chunk_size: int | None = None
) -> Callable[..., Any]:
    """The Jacobian of `func` by reverse mode, one VJP per output element batched by `vmap`:
    shaped ``output.shape + input.shape`` (a tuple over a tuple of argnums; nested as the
    outputs for a pytree output).

    >>> import autograd_core as ag
    >>> from autograd_core import func
    >>> func.jacrev(lambda x: x * x)(ag.tensor([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """

    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        nums = _numbers(argnums, len(args), "jacrev")
        chosen = tuple(args[n] for n in nums)
        result = vjp(_partial(func, args, nums), *chosen, has_aux=has_aux)
        output, vjp_fn = result[0], result[1]
        out_leaves, out_spec = tree_flatten(output)
        in_leaves, in_spec = tree_flatten(chosen)
        ag = tensor_namespace()
        rows = []
        for k, o in enumerate(out_leaves):
            size = o.numel()
            basis = ag.reshape(ag.eye(size, dtype=o.dtype, device=o.device), (size, *o.shape))

            def pull(ct: Any, k: int = k) -> Any:
                cotangents = [ct if j == k else ag.zeros_like(other) for j, other in enumerate(out_leaves)]
                return tree_flatten(vjp_fn(tree_unflatten(out_spec, cotangents)))[0]

            pulled = vmap(pull, chunk_size=chunk_size)(basis)
            rows.append(
                tree_unflatten(in_spec, [ag.reshape(g, (*o.shape, *x.shape)) for g, x in zip(pulled, in_leaves)])
            )
        jac = tree_unflatten(out_spec, [r if not isinstance(argnums, int) else r[0] for r in rows])
        return (jac, result[2]) if has_aux else jac

    return wrapper


def jacfwd(
    func: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False, *, randomness: str = "error"
) -> Callable[..., Any]:
    """The Jacobian of `func` by forward mode, one JVP per input element batched by `vmap`:
    shaped ``output.shape + input.shape``, as `jacrev` gives it.

    >>> import autograd_core as ag
    >>> from autograd_core import func
    >>> func.jacfwd(lambda x: x.sum() * x)(ag.tensor([1.0, 2.0])).tolist()
    [[4.0, 1.0], [2.0, 5.0]]
    """

    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        nums = _numbers(argnums, len(args), "jacfwd")
        chosen = tuple(args[n] for n in nums)
        of = _partial(func, args, nums)
        in_leaves, in_spec = tree_flatten(chosen)
        ag = tensor_namespace()
        columns, out_spec, aux = [], None, None
        for k, x in enumerate(in_leaves):
            size = x.numel()
            basis = ag.reshape(ag.eye(size, dtype=x.dtype, device=x.device), (size, *x.shape))

            def push(t: Any, k: int = k) -> Any:
                tangents = [t if j == k else ag.zeros_like(other) for j, other in enumerate(in_leaves)]
                result = jvp(of, chosen, tree_unflatten(in_spec, tangents), has_aux=has_aux)
                return tree_flatten(result[1])[0]

            pushed = vmap(push, randomness=randomness, out_dims=-1)(basis)
            if out_spec is None:
                result = jvp(
                    of, chosen, tree_unflatten(in_spec, [ag.zeros_like(v) for v in in_leaves]), has_aux=has_aux
                )
                out_leaves, out_spec = tree_flatten(result[0])
                aux = result[2] if has_aux else None
            columns.append([ag.reshape(t, (*o.shape, *x.shape)) for t, o in zip(pushed, out_leaves)])
        per_output = [tree_unflatten(in_spec, [col[j] for col in columns]) for j in range(len(out_leaves))]
        jac = tree_unflatten(out_spec, [p if not isinstance(argnums, int) else p[0] for p in per_output])
        return (jac, aux) if has_aux else jac

    return wrapper


def hessian(func: Callable[..., Any], argnums: Argnums = 0) -> Callable[..., Any]:
    """The Hessian of the scalar function `func`, forward over reverse: ``jacfwd(jacrev(func))``.

    >>> import autograd_core as ag
    >>> from autograd_core import func
    >>> func.hessian(lambda x: x[0] * x[1])(ag.tensor([3.0, 4.0])).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    return jacfwd(jacrev(func, argnums), argnums)


def hvp(func: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """``(func(*primals), H @ tangents)``: the value of the scalar function `func` and its
    Hessian-vector product along `tangents`, forward over reverse (one gradient, one JVP;
    the Hessian is never formed).

    >>> import autograd_core as ag
    >>> from autograd_core import func
    >>> value, hv = func.hvp(lambda x: (x**3).sum(), (ag.tensor([1.0, 2.0]),), (ag.tensor([1.0, 1.0]),))
    >>> value.item(), hv[0].tolist()
    (9.0, [6.0, 12.0])
    """
    nums = tuple(range(len(primals)))
    (_, value), (hv, _) = jvp(grad_and_value(func, nums), tuple(primals), tuple(tangents))
    return value, hv


def functional_call(
    module: Any,
    parameters_and_buffers: dict[str, Any] | Sequence[dict[str, Any]],
    args: Any,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``module(*args, **kwargs)`` with the named tensors in place of its own parameters and
    buffers, as `torch.func.functional_call`; the module's method of the same name does it.

    >>> import autograd_core as ag, nn
    >>> from autograd_core import func
    >>> layer = nn.Linear(2, 1)
    >>> params = {"weight": ag.ones((1, 2)), "bias": ag.zeros(1)}
    >>> func.functional_call(layer, params, ag.tensor([[1.0, 2.0]])).tolist()
    [[3.0]]
    """
    call = getattr(module, "functional_call", None)
    if call is None:
        raise TypeError(f"functional_call needs an nn.Module, got {type(module).__name__}")
    return call(parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "hvp",
    "jacfwd",
    "jacrev",
    "jvp",
    "vjp",
    "vmap",
]
