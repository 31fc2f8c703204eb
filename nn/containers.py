"""Containers with PyTorch's behaviour: `Sequential`, `ModuleList`, `ModuleDict`, `ParameterList`
and `ParameterDict`. Their members are registered, so parameters, state dicts, `.to()` and
`train()` reach them."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import autograd_core as ag
from nn.module import Module, Parameter, _indented


def _pairs(kind: str, items: Any) -> Iterator[tuple[Any, Any]]:
    """The (key, value) pairs of a mapping or an iterable of pairs, refused as PyTorch refuses them."""
    if not isinstance(items, Iterable):
        raise TypeError(
            f"{kind}.update should be called with an iterable of key/value pairs, but got {type(items).__name__}"
        )
    if isinstance(items, Mapping | ModuleDict | ParameterDict):
        yield from items.items()
        return
    for j, pair in enumerate(items):
        if not isinstance(pair, Iterable):
            raise TypeError(f"{kind} update sequence element #{j} should be Iterable; is {type(pair).__name__}")
        if len(pair) != 2:
            raise ValueError(f"{kind} update sequence element #{j} has length {len(pair)}; 2 is required")
        yield pair[0], pair[1]


class _ModuleSequence(Module):
    """What `Sequential` and `ModuleList` share: modules kept under the names "0", "1"...
    (a Sequential built from an OrderedDict keeps its names until an item is deleted), indexed,
    assigned, deleted, appended, inserted, extended and popped as PyTorch's."""

    def _key(self, index: int) -> str:
        """The name of the module at `index` (negative counts from the end)."""
        keys = list(self._modules)
        index = operator.index(index)
        if not -len(keys) <= index < len(keys):
            raise IndexError(f"index {index} is out of range")
        return keys[index]

    def _renumbered(self, modules: Iterable[Module]) -> None:
        """Hold `modules`, in order, under the names "0", "1"..."""
        for name in list(self._modules):
            delattr(self, name)
        for i, module in enumerate(modules):
            self.add_module(str(i), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __setitem__(self, index: int, module: Module) -> None:
        setattr(self, self._key(index), module)

    def __delitem__(self, index: int | slice) -> None:
        if not isinstance(index, slice):
            self._key(index)  # refuses an index out of range
        modules = list(self._modules.values())
        del modules[index]
        self._renumbered(modules)

    def __dir__(self) -> list[str]:
        return [name for name in super().__dir__() if not name.isdigit()]

    def append(self, module: Module) -> _ModuleSequence:
        """Add `module` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> _ModuleSequence:
        """Append each of `modules`; returns self."""
        if not isinstance(modules, Iterable):
            raise TypeError(
                f"{type(self).__name__}.extend should be called with an iterable, but got {type(modules).__name__}"
            )
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> _ModuleSequence:
        """Put `module` before position `index` (negative counts from the end); returns self."""
        if not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._renumbered(modules)
        return self

    def pop(self, index: int | slice) -> Any:
        """Remove and return the module (or the container of modules) at `index`."""
        taken = self[index]
        del self[index]
        return taken


class Sequential(_ModuleSequence):
    """Modules applied one after another; built from modules, or from an OrderedDict of them
    (whose keys name them).

    >>> import nn
    >>> from collections import OrderedDict
    >>> model = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 4)), ("act", nn.Tanh())]))
    >>> model.fc.out_features, type(model[:1]).__name__
    (4, 'Sequential')
    """

    def __init__(self, *modules: Module | OrderedDict[str, Module]) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(modules):
                self.add_module(str(i), module)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):  # the same names, as PyTorch's
            return type(self)(OrderedDict(list(self._modules.items())[index]))
        return self._modules[self._key(index)]

    def _same_kind(self, other: Any) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return other

    def __add__(self, other: Sequential) -> Sequential:
        return Sequential(*self, *self._same_kind(other))

    def __iadd__(self, other: Sequential) -> Sequential:
        return self.extend(list(self._same_kind(other)))

    def __mul__(self, times: int) -> Sequential:
        if not isinstance(times, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(times)}")
        if times <= 0:
            raise ValueError(f"Non-positive multiplication factor {times} for {type(self)}")
        return Sequential(*(list(self) * times))

    __rmul__ = __mul__

    def __imul__(self, times: int) -> Sequential:
        repeated = self * times  # refuses what __mul__ refuses
        return self.extend(list(repeated)[len(self) :])

    def forward(self, x: Any) -> Any:
        for module in self:
            x = module(x)
        return x


class ModuleList(_ModuleSequence):
    """A list of modules, registered so that their parameters are found.

    >>> import nn
    >>> layers = nn.ModuleList(nn.Linear(2, 2) for _ in range(3))
    >>> len(layers[1:]), sum(p.numel() for p in layers.parameters())
    (2, 18)
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return type(self)(list(self._modules.values())[index])
        return self._modules[self._key(index)]

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList([*self, *other])

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __repr__(self) -> str:
        """PyTorch's: a run of modules that print alike shows once, as ``(0-2): 3 x Linear(...)``."""
        blocks: list[list[Any]] = []  # [first index, last index, repr]
        for i, module in enumerate(self):
            text = repr(module)
            if blocks and blocks[-1][2] == text:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, text])
        if not blocks:
            return self._get_name() + "()"
        lines = [_indented(f"({a}): {text}" if a == b else f"({a}-{b}): {b - a + 1} x {text}") for a, b, text in blocks]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules, in insertion order, registered under their keys.

    >>> import nn
    >>> heads = nn.ModuleDict({"cls": nn.Linear(4, 2), "box": nn.Linear(4, 4)})
    >>> list(heads), "cls" in heads
    (['cls', 'box'], True)
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        if key not in self._modules:
            raise KeyError(key)
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        for key in list(self._modules):
            del self[key]

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()

    def values(self) -> Iterable[Module]:
        return self._modules.values()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add (or replace) the modules of a mapping or of an iterable of (key, module) pairs."""
        for key, module in _pairs("ModuleDict", modules):
            self[key] = module


def _as_parameter(value: Any) -> Any:
    """A tensor made a Parameter (a Parameter, or anything else, as it is), as the parameter containers store it."""
    return Parameter(value) if isinstance(value, ag.Tensor) and not isinstance(value, Parameter) else value


def _describe(key: Any, value: Any) -> str:
    """One line of a parameter container's repr."""
    if isinstance(value, ag.Tensor):
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        return f"  ({key}): {kind} containing: [{value.dtype} of size {'x'.join(map(str, value.shape))}]"
    return f"  ({key}): Object of type: {type(value).__name__}"


class _ParameterContainer(Module):
    """A container of parameters is not called."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{type(self).__name__} should not be called.")


class ParameterList(_ParameterContainer):
    """A list of parameters (tensors put in become Parameters), registered as "0", "1"...

    >>> import autograd_core as ag, nn
    >>> scales = nn.ParameterList([ag.ones(2), ag.zeros(3)])
    >>> [name for name, _ in scales.named_parameters()], type(scales[0]).__name__
    (['0', '1'], 'Parameter')
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _key(self, index: int) -> str:
        index = operator.index(index)
        if not -len(self) <= index < len(self):
            raise IndexError(f"index {index} is out of range")
        return str(index % len(self))

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return type(self)(self[i] for i in range(len(self))[index])
        return getattr(self, self._key(index))

    def __setitem__(self, index: int, value: Any) -> None:
        setattr(self, self._key(index), _as_parameter(value))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def __dir__(self) -> list[str]:
        return [name for name in super().__dir__() if not name.isdigit()]

    def append(self, value: Any) -> ParameterList:
        """Add `value` (a tensor becomes a Parameter) at the end; returns self."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append each of `values`; returns self."""
        if not isinstance(values, Iterable) or isinstance(values, ag.Tensor):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got {type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_describe(i, value) for i, value in enumerate(self))


class ParameterDict(_ParameterContainer):
    """A dict of parameters (tensors put in become Parameters), registered under their keys.
    A plain dict given to the constructor or `update` is taken in sorted key order, as PyTorch's.

    >>> import autograd_core as ag, nn
    >>> table = nn.ParameterDict({"scale": ag.ones(1), "bias": ag.zeros(1)})
    >>> list(table), type(table["scale"]).__name__
    (['bias', 'scale'], 'Parameter')
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _checked(key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}')."
            )
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._checked(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[self._checked(key)] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same Parameters."""
        return ParameterDict(OrderedDict(self.items()))

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def pop(self, key: str) -> Any:
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last (key, value) pair."""
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if key in self._keys else default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        """A new ParameterDict with `keys`, each holding `default`."""
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> Iterable[str]:
        return self._keys.keys()

    def items(self) -> Iterator[tuple[str, Any]]:
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterator[Any]:
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        """Add (or replace) the values of a mapping (a plain dict's in sorted key order) or of
        an iterable of (key, value) pairs."""
        ordered = isinstance(parameters, OrderedDict | ParameterDict) or not isinstance(parameters, Mapping)
        pairs = _pairs("ParameterDict", parameters)
        for key, value in pairs if ordered else sorted(pairs, key=lambda pair: pair[0]):
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(_describe(key, value) for key, value in self.items())

    def __or__(self, other: ParameterDict) -> ParameterDict:
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self
