"""A module's tensor computed from others on every access (``torch.nn.utils.parametrize``).

`register_parametrization(module, "weight", P)` moves ``module.weight`` to
``module.parametrizations.weight.original`` and makes ``module.weight`` a property that
returns ``P(original)``; reading it records the computation, so gradients reach the
original. Assigning to ``module.weight`` stores ``P.right_inverse(value)`` where `P` has one.
As in PyTorch the module's class becomes a subclass of its own (``ParametrizedLinear``)
holding that property, and the state dict names the originals
(``parametrizations.weight.original``).

>>> import autograd_core as ag, nn
>>> class Symmetric(nn.Module):
...     def forward(self, x):
...         return x.triu() + x.triu(1).mT
>>> layer = register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
>>> bool(ag.all(layer.weight == layer.weight.mT)), type(layer).__name__
(True, 'ParametrizedLinear')
>>> sorted(layer.state_dict())
['bias', 'parametrizations.weight.original']
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor
from nn.containers import ModuleDict, ModuleList
from nn.module import Module, Parameter

__all__ = [
    "ParametrizationList",
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "type_before_parametrizations",
]

_cache: dict[tuple[int, str], Tensor] | None = None  # the values computed inside `cached()`, else None


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Inside the block each parametrized tensor is computed once and then reused (for a
    recurrent model reading its weight at every step)."""
    global _cache
    outer = _cache
    _cache = {} if outer is None else outer
    try:
        yield
    finally:
        _cache = outer


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the original(s) they apply
    to: ``original``, or ``original0``, ``original1``... where the first parametrization's
    `right_inverse` returns several tensors."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        super().__init__(modules)
        self.unsafe = unsafe
        with ag.no_grad():
            new = original
            for module in reversed(list(self)):
                new = module.right_inverse(new) if hasattr(module, "right_inverse") else new
        self.is_tensor = isinstance(new, Tensor)
        if self.is_tensor:
            if not unsafe and (new.shape != original.shape or new.dtype != original.dtype):
                raise ValueError(
                    f"right_inverse must keep the tensor's shape and dtype: {original.shape} {original.dtype} "
                    f"became {new.shape} {new.dtype} (pass unsafe=True to allow it)"
                )
            original.data = new  # the same Parameter, so an optimizer that holds it keeps working
            self.original = original if isinstance(original, Parameter) else Parameter(original, False)
        else:
            self.ntensors = len(new)
            for i, value in enumerate(new):
                setattr(self, f"original{i}", Parameter(value.detach().clone(), original.requires_grad))

    def right_inverse(self, value: Tensor) -> None:
        """Store `value` as the parametrized tensor: the originals become its right inverse."""
        with ag.no_grad():
            for module in reversed(list(self)):
                value = module.right_inverse(value) if hasattr(module, "right_inverse") else value
            if self.is_tensor:
                self.original.data = value
            else:
                for i, part in enumerate(value):
                    getattr(self, f"original{i}").data = part

    def forward(self) -> Tensor:
        first, *rest = list(self)
        x = (
            first(self.original)
            if self.is_tensor
            else first(*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        )
        for module in rest:
            x = module(x)
        return x


def _parametrized_property(name: str) -> property:
    def get(module: Module) -> Tensor:
        if _cache is None:
            return module.parametrizations[name]()
        key = (id(module), name)
        if key not in _cache:
            _cache[key] = module.parametrizations[name]()
        return _cache[key]

    def set_(module: Module, value: Tensor) -> None:
        module.parametrizations[name].right_inverse(value)

    return property(get, set_)


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Make ``module.<tensor_name>`` the output of `parametrization` on the stored original
    (see the module docstring); a second registration on the same name composes after the
    first. Returns `module`."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        existing = module.parametrizations[tensor_name]
        if not unsafe:
            value = parametrization(getattr(module, tensor_name))
            if value.shape != getattr(module, tensor_name).shape:
                raise ValueError(
                    f"the parametrization changes the shape of {tensor_name}; pass unsafe=True to allow it"
                )
        existing.append(parametrization)
        return module
    original = getattr(module, tensor_name, None)
    if not isinstance(original, Tensor):
        raise ValueError(
            f"register_parametrization: {type(module).__name__} has no parameter or buffer {tensor_name!r}"
        )
    if tensor_name in module._parameters or tensor_name in module._buffers:
        delattr(module, tensor_name)
    if not is_parametrized(module):
        module.parametrizations = ModuleDict()
        cls = type(module)
        module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {"_unparametrized_class": cls})
    module.parametrizations[tensor_name] = ParametrizationList([parametrization], original, unsafe=unsafe)
    setattr(type(module), tensor_name, _parametrized_property(tensor_name))
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether `module` has parametrizations (on `tensor_name`, where given)."""
    parametrizations = module._modules.get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return tensor_name is None or tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Undo `register_parametrization` on `tensor_name`: the tensor becomes a parameter again,
    holding its current parametrized value (or, with ``leave_parametrized=False``, the
    original). When no parametrization is left, the module gets its own class back."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {type(module).__name__} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if leave_parametrized:
        with ag.no_grad():
            value = getattr(module, tensor_name)
        if plist.is_tensor:
            original = plist.original
            original.data = value
        else:
            original = Parameter(value.detach(), value.requires_grad)
    elif plist.is_tensor:
        original = plist.original
    else:
        raise ValueError("cannot leave_parametrized=False when the parametrization stores several tensors")
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    module.register_parameter(tensor_name, original if isinstance(original, Parameter) else Parameter(original))
    if not module.parametrizations:
        del module.parametrizations
        module.__class__ = module._unparametrized_class
    return module


def type_before_parametrizations(module: Module) -> type:
    """The class `module` had before any parametrization."""
    return module._unparametrized_class if is_parametrized(module) else type(module)
