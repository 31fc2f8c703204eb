"""`functional_call`: a module run with other tensors in place of its parameters and buffers,
as ``torch.func.functional_call``. The module's own tensors are put back afterwards, also when
the call raises; gradients go to the tensors given, never to the module's own."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from autograd_core.autodiff.tensor import Tensor
from nn.module import Module

_MISSING = object()  # an attribute the module did not have before the call


def functional_call(
    module: Module,
    parameters_and_buffers: Mapping[str, Tensor] | Sequence[Mapping[str, Tensor]],
    args: Any,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``module(*args, **kwargs)`` with the tensors of `parameters_and_buffers` (a dict from the
    names of `named_parameters` and `named_buffers` to tensors, or a tuple of such dicts) in
    place of the module's own; a single `args` that is not a tuple is the one positional
    argument. The tensors may be any tensors (not only Parameters), so gradients flow to them.

    Names not given keep the module's tensors; with `strict` every parameter and buffer must
    be given, and no other name. With `tie_weights` a tensor given for one of several names of
    a shared parameter (tied embedding and output weights) takes all of them; without it, only
    the name given. A name that is no parameter or buffer (without `strict`) is set as a plain
    attribute for the call, as PyTorch does.

    >>> import autograd_core as ag, nn
    >>> layer = nn.Linear(2, 1)
    >>> weight = ag.tensor([[1.0, 2.0]], requires_grad=True)
    >>> out = nn.functional_call(layer, {"weight": weight, "bias": ag.zeros(1)}, ag.tensor([[3.0, 4.0]]))
    >>> out.tolist()
    [[11.0]]
    >>> out.sum().backward()
    >>> weight.grad.tolist(), layer.weight.grad
    ([[3.0, 4.0]], None)
    """
    if not isinstance(module, Module):
        raise TypeError(f"functional_call needs an nn.Module, got {type(module).__name__}")
    given = _merged(parameters_and_buffers)
    named = list(_named_tensors(module))
    if tie_weights:
        given = _untied(named, given)
    if strict:
        _check_names(module, named, given)
    with _substituted(module, given):
        return module(*(args if isinstance(args, tuple) else (args,)), **(kwargs or {}))


def _merged(parameters_and_buffers: Mapping[str, Tensor] | Sequence[Mapping[str, Tensor]]) -> dict[str, Tensor]:
    """One dict from a dict or a tuple of dicts, refusing a name given twice and a value that is no tensor."""
    dicts = parameters_and_buffers if isinstance(parameters_and_buffers, tuple | list) else (parameters_and_buffers,)
    merged: dict[str, Tensor] = {}
    for d in dicts:
        repeated = sorted(name for name in d if name in merged)
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        merged.update(d)
    for name, value in merged.items():
        if not isinstance(value, Tensor):
            raise TypeError(f"functional_call: the value for {name!r} must be a tensor, got {type(value).__name__}")
    return merged


def _named_tensors(module: Module) -> Iterator[tuple[str, Tensor]]:
    """Every name of every parameter and buffer, a shared one under each of its names."""
    for path, m in module.named_modules(remove_duplicate=False):
        for name, t in [*m._parameters.items(), *m._buffers.items()]:
            if t is not None:
                yield (f"{path}.{name}" if path else name), t


def _untied(named: list[tuple[str, Tensor]], given: dict[str, Tensor]) -> dict[str, Tensor]:
    """`given` with the tensor for one name of a shared parameter or buffer under all its names."""
    names_of: dict[int, list[str]] = {}
    for name, t in named:
        names_of.setdefault(id(t), []).append(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    untied = dict(given)
    for name, value in given.items():
        for other in tied.get(name, ()):
            if other in given and given[other] is not value:
                raise ValueError(
                    f"functional_call got multiple values for keys {sorted(tied[name])}, which are tied. "
                    "Consider using tie_weights=False"
                )
            untied[other] = value
    return untied


def _check_names(module: Module, named: list[tuple[str, Tensor]], given: dict[str, Tensor]) -> None:
    """With ``strict=True``: every parameter and buffer given, and nothing else."""
    valid = {name for name, _ in named}
    unexpected, missing = sorted(set(given) - valid), sorted(valid - set(given))
    errors = [
        f"{what} key(s): {', '.join(map(repr, names))}."
        for what, names in (("Unexpected", unexpected), ("Missing", missing))
        if names
    ]
    if errors:
        raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(errors))


@contextmanager
def _substituted(module: Module, given: dict[str, Tensor]) -> Iterator[None]:
    """The tensors of `given` in the module for the while; its own put back, in reverse order, after."""
    modules = dict(module.named_modules(remove_duplicate=False))
    undo = []
    try:
        for name, value in given.items():
            path, _, local = name.rpartition(".")
            owner = modules.get(path)
            if owner is None:
                raise AttributeError(f"{type(module).__name__} has no submodule {path!r} (from the name {name!r})")
            if local in owner._parameters or local in owner._buffers:
                undo.append((owner, local, owner._swap_tensor(local, value)))
            else:
                undo.append((owner, local, _set_attribute(owner, local, value)))
        yield
    finally:
        for owner, local, previous in reversed(undo):
            if local in owner._parameters or local in owner._buffers:
                owner._swap_tensor(local, previous)
            elif previous is _MISSING:
                delattr(owner, local)
            else:
                setattr(owner, local, previous)


def _set_attribute(owner: Module, name: str, value: Tensor) -> Any:
    """Set a name that is no parameter or buffer; what it was (`_MISSING` for nothing)."""
    previous = getattr(owner, name, _MISSING)
    if previous is not _MISSING and not isinstance(previous, Tensor):
        raise TypeError(f"functional_call: attribute {name!r} of {type(owner).__name__} is not a tensor")
    setattr(owner, name, value)
    return previous


__all__ = ["functional_call"]
