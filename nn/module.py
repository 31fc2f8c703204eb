"""`Parameter` and `Module`: the containers a model is built from."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import autograd_core as ag
from autograd_core.autodiff.tensor import RemovableHandle, bump_version
from autograd_core.ops.creation import to_array


class Parameter(ag.Tensor):
    """A tensor that a Module registers as one of its weights; requires grad by default.

    >>> import autograd_core as ag, nn
    >>> nn.Parameter(ag.zeros(2)).requires_grad
    True
    """

    def __init__(self, data: Any, requires_grad: bool = True) -> None:
        source = data if isinstance(data, ag.Tensor) else ag.tensor(data)
        self._reset(to_array(source, source.backend), source.backend)
        self.requires_grad_(requires_grad)  # refuses an integer Parameter that requires grad, as PyTorch does

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        """A Parameter with a copy of the values and `requires_grad`, nothing else (no `.grad`,
        no attributes), as PyTorch's: a deep-copied model starts without gradients."""
        new = memo[id(self)] = Parameter(self.detach(), self.requires_grad)
        return new

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class Module:
    """Base class of every layer and model: ``__call__`` runs ``forward``; parameters and
    sub-modules assigned as attributes are registered.

    >>> import nn
    >>> model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    >>> sum(p.numel() for p in model.parameters())
    82
    """

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_forward_hooks", [])
        object.__setattr__(self, "training", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("call super().__init__() before assigning attributes in a Module")
        if name in self._buffers and not isinstance(value, (Parameter, Module)):
            if value is not None and not isinstance(value, ag.Tensor):
                raise TypeError(f"cannot assign a {type(value).__name__} to buffer {name!r}: a tensor or None")
            self._buffers[name] = value
            object.__setattr__(self, name, value)
            return
        self._parameters.pop(name, None)
        self._modules.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        self._parameters.pop(name, None)
        self._modules.pop(name, None)
        self._buffers.pop(name, None)
        self._non_persistent_buffers.discard(name)
        object.__delattr__(self, name)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        out = self.forward(*args, **kwargs)
        for hook in self._forward_hooks:
            replaced = hook(self, args, out)
            out = out if replaced is None else replaced
        return out

    def register_forward_hook(self, hook: Callable[[Module, tuple, Any], Any]) -> Any:
        """Call ``hook(module, inputs, output)`` after every forward; a non-None return
        replaces the output. Returns a handle whose ``remove()`` unregisters it."""
        self._forward_hooks.append(hook)
        return RemovableHandle(self._forward_hooks, hook)

    # --- the tree of modules and parameters ----------------------------------------------
    def named_modules(self, prefix: str = "", remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """(name, module) pairs, depth first from this one; a module reachable by several
        names comes once unless `remove_duplicate` is False."""
        seen: set[int] = set()
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if remove_duplicate and id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            children = [(f"{name}.{n}" if name else n, m) for n, m in module._modules.items()]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        return (m for _, m in self.named_modules())

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """Direct sub-modules, each once even when assigned under two names."""
        seen: set[int] = set()
        for name, m in self._modules.items():
            if id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        return (m for _, m in self.named_children())

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(name, parameter) pairs, each parameter once even when shared."""
        seen: set[int] = set()
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        for module_name, module in modules:
            for name, p in module._parameters.items():
                if id(p) not in seen:
                    seen.add(id(p))
                    yield (f"{module_name}.{name}" if module_name else name), p

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        return (p for _, p in self.named_parameters(recurse=recurse))

    def register_buffer(self, name: str, tensor: ag.Tensor | None, persistent: bool = True) -> None:
        """Register `tensor` as state that is not a parameter (batch norm's running mean):
        it is saved in `state_dict` (unless not `persistent`), moves with `.to()`, and gets
        no gradient or optimizer update.

        >>> import autograd_core as ag, nn
        >>> m = nn.Module(); m.register_buffer("steps", ag.zeros(()))
        >>> list(m.state_dict()), list(m.parameters())
        (['steps'], [])
        """
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"buffer name must be a non-empty string without '.', got {name!r}")
        if tensor is not None and not isinstance(tensor, ag.Tensor):
            raise TypeError(f"register_buffer: {name!r} must be a tensor or None, got {type(tensor).__name__}")
        if name in self._parameters or name in self._modules:
            raise KeyError(f"register_buffer: {name!r} is already a parameter or sub-module")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)
        object.__setattr__(self, name, tensor)

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, ag.Tensor]]:
        """(name, buffer) pairs of this module (and its sub-modules), each buffer once."""
        seen: set[int] = set()
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        for module_name, module in modules:
            for name, b in module._buffers.items():
                if b is not None and id(b) not in seen:
                    seen.add(id(b))
                    yield (f"{module_name}.{name}" if module_name else name), b

    def buffers(self, recurse: bool = True) -> Iterator[ag.Tensor]:
        return (b for _, b in self.named_buffers(recurse=recurse))

    def _swap_tensor(self, name: str, tensor: ag.Tensor | None) -> ag.Tensor | None:
        """Put `tensor` (any tensor, not only a Parameter) in place of this module's own
        parameter or buffer `name`, which stays registered as one; return the tensor it
        replaces. `nn.stateless.functional_call` swaps tensors in for a call and back with it,
        where assigning the attribute would unregister a parameter."""
        registered = self._parameters if name in self._parameters else self._buffers
        if name not in registered:
            raise KeyError(f"{type(self).__name__} has no parameter or buffer {name!r}")
        previous = registered[name]
        registered[name] = tensor
        object.__setattr__(self, name, tensor)
        return previous

    def functional_call(
        self,
        parameters_and_buffers: dict[str, ag.Tensor] | tuple[dict[str, ag.Tensor], ...],
        args: Any,
        kwargs: dict[str, Any] | None = None,
        *,
        tie_weights: bool = True,
        strict: bool = False,
    ) -> Any:
        """This module called with other tensors in place of its parameters and buffers: see
        `nn.stateless.functional_call`, which this is (and ``torch.func.functional_call``).

        >>> import autograd_core as ag, nn
        >>> nn.Linear(2, 1).functional_call({"weight": ag.ones((1, 2)), "bias": ag.zeros(1)}, ag.ones((1, 2))).tolist()
        [[2.0]]
        """
        from nn.stateless import functional_call  # nn.stateless builds on this module

        return functional_call(self, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            p.grad = None if set_to_none or p.grad is None else ag.zeros_like(p.grad)

    def train(self, mode: bool = True) -> Module:
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    # --- state ---------------------------------------------------------------------------
    def state_dict(self) -> OrderedDict[str, ag.Tensor]:
        """name -> tensor (detached, sharing memory with the parameter or buffer): each
        module's parameters, then its persistent buffers, then its sub-modules', as in PyTorch."""
        return OrderedDict((name, t.detach()) for name, t in self._state_items())

    def _state_items(self) -> Iterator[tuple[str, ag.Tensor]]:
        """Every name a tensor is reachable by: a parameter shared by two modules (tied
        embedding and output weights) appears under both names, as in PyTorch."""
        for module_name, module in self.named_modules(remove_duplicate=False):
            buffers = [
                (n, b) for n, b in module._buffers.items() if b is not None and n not in module._non_persistent_buffers
            ]
            for name, t in [*module._parameters.items(), *buffers]:
                yield (f"{module_name}.{name}" if module_name else name), t

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> None:
        """Copy values (tensors of any backend, or arrays) into the parameters and buffers,
        converting them to each one's backend and dtype."""
        own = dict(self._state_items())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
        for name, value in state_dict.items():
            if name not in own:
                continue
            p = own[name]
            data = to_array(value, p.backend, p.dtype)
            if tuple(data.shape) != p.shape:
                raise ValueError(
                    f"load_state_dict: size mismatch for {name}: the checkpoint has shape {tuple(data.shape)}, "
                    f"the model has shape {p.shape}"
                )
            p.data = data
            bump_version(p)

    def to(self, target: Any = None, *, dtype: Any = None, device: Any = None) -> Module:
        """Move every parameter (in place, keeping its identity) to another backend, device
        or dtype: ``model.to("torch")``, ``model.to(ag.float64)``, ``model.to(device="cuda")``."""
        with ag.no_grad():
            for p in self.parameters():
                moved = p.to(target, dtype=dtype, device=device)
                if p.grad is not None:
                    p.grad = p.grad.to(target, dtype=dtype, device=device)
                p.data, p.backend = moved.data, moved.backend
                bump_version(p)
            for b in self.buffers():  # a dtype applies to floating-point buffers only, as in PyTorch
                floating = ag.isdtype(b.dtype, "real floating")
                moved = b.to(target, dtype=dtype if floating else None, device=device)
                b.data, b.backend = moved.data, moved.backend
                bump_version(b)
        return self

    def double(self) -> Module:
        return self.to(dtype=ag.float64)

    def float(self) -> Module:
        return self.to(dtype=ag.float32)

    # --- printing ------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        return head + ")" if not lines else head + "\n  " + "\n  ".join(lines) + "\n)"
