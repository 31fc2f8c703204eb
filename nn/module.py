"""`Parameter` and `Module`: the containers a model is built from, with PyTorch's Module API
(registration, tree walks, hooks, state dicts, casts)."""

from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor
from autograd_core.graph.dtypes import DTYPES
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


class HookHandle:
    """What a Module's hook registration returns: ``remove()`` unregisters the hook (a second
    call does nothing); as a context manager it removes the hook on exit.

    >>> import nn
    >>> layer, seen = nn.Identity(), []
    >>> with layer.register_forward_hook(lambda m, args, out: seen.append(out)):
    ...     _ = layer(1)
    >>> _ = layer(2)
    >>> seen
    [1]
    """

    _ids = itertools.count()

    def __init__(self, *registries: dict[int, Any]) -> None:
        self.id = next(HookHandle._ids)
        self._registries = registries

    def remove(self) -> None:
        for registry in self._registries:
            registry.pop(self.id, None)

    def __enter__(self) -> HookHandle:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.remove()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What `Module.load_state_dict` returns: the names it missed and the names it did not know."""

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


# Each Module's hook registries (id -> hook, in call order; the `with_kwargs` and `always_call`
# ones mark ids of the forward hooks, `_call_hooks` the ids of every hook a call runs, so that a
# call without hooks checks one dict), made empty by __init__ and by __setstate__ where missing.
_HOOK_REGISTRIES = (
    "_call_hooks",
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
    "_forward_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called",
    "_backward_pre_hooks",
    "_backward_hooks",
    "_state_dict_pre_hooks",
    "_state_dict_hooks",
    "_load_state_dict_pre_hooks",
    "_load_state_dict_post_hooks",
)


def _typename(value: Any) -> str:
    return type(value).__name__


class Module:
    """Base class of every layer and model: ``__call__`` runs ``forward`` (and any hooks);
    parameters, buffers and sub-modules assigned as attributes are registered.

    >>> import nn
    >>> model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    >>> sum(p.numel() for p in model.parameters())
    82
    """

    training: bool
    _version: int = 1  # the state dict layout's version (`local_metadata["version"]`), as PyTorch's

    def __init__(self) -> None:
        for name in ("_parameters", "_modules", "_buffers", *_HOOK_REGISTRIES):
            object.__setattr__(self, name, OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "training", True)

    # --- attributes: parameters, buffers and sub-modules are registered ----------------------
    # A registered tensor or module is also kept in the instance's __dict__, so that reading it
    # (``self.weight`` in forward) is a plain attribute lookup.
    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError(
                    "cannot assign parameters before Module.__init__() call: call super().__init__() first"
                )
            self._forget(name, self._buffers, self._modules)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' (nn.Parameter or None expected)"
                )
            self.register_parameter(name, None)
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError(
                    "cannot assign module before Module.__init__() call: call super().__init__() first"
                )
            self._forget(name, self._parameters, self._buffers)
            self._modules[name] = value
            object.__setattr__(self, name, value)
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' (nn.Module or None expected)"
                )
            self._modules[name] = None
            object.__setattr__(self, name, None)
        elif params is not None and name in self._buffers:
            if value is not None and not isinstance(value, ag.Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' (a tensor or None expected)")
            self._buffers[name] = value
            object.__setattr__(self, name, value)
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, *registries: dict[str, Any]) -> None:
        """Unregister `name` from `registries` (and drop it as a plain attribute)."""
        for registry in registries:
            registry.pop(name, None)
        self._non_persistent_buffers.discard(name)
        self.__dict__.pop(name, None)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters or name in self._buffers or name in self._modules:
            self._forget(name, self._parameters, self._buffers, self._modules)
        else:
            object.__delattr__(self, name)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in _HOOK_REGISTRIES:  # a module pickled before a registry existed
            self.__dict__.setdefault(name, OrderedDict())

    def __dir__(self) -> list[str]:
        names = [*dir(type(self)), *self.__dict__, *self._parameters, *self._modules, *self._buffers]
        return sorted({n for n in names if not n[0].isdigit()})

    # --- registration ------------------------------------------------------------------------
    def _check_name(self, kind: str, name: Any, registry: dict[str, Any]) -> None:
        """PyTorch's refusals of a name to register a `kind` ("parameter"...) under."""
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in registry:
            taken = " as a parameter or sub-module" if name in self._parameters or name in self._modules else ""
            raise KeyError(f"attribute '{name}' already exists{taken}")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register `param` (or None: a parameter slot left empty, as a bias-free layer's
        ``bias``) under `name`.

        >>> import autograd_core as ag, nn
        >>> m = nn.Module(); m.register_parameter("scale", nn.Parameter(ag.ones(1)))
        >>> [name for name, _ in m.named_parameters()]
        ['scale']
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call: call super().__init__() first")
        self._check_name("parameter", name, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' (nn.Parameter or None required)"
            )
        if param is not None and not param.is_leaf:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                "the forward() method."
            )
        self._parameters[name] = param
        object.__setattr__(self, name, param)

    def register_buffer(self, name: str, tensor: ag.Tensor | None, persistent: bool = True) -> None:
        """Register `tensor` as state that is not a parameter (batch norm's running mean):
        it is saved in `state_dict` (unless not `persistent`), moves with `.to()`, and gets
        no gradient or optimizer update.

        >>> import autograd_core as ag, nn
        >>> m = nn.Module(); m.register_buffer("steps", ag.zeros(()))
        >>> list(m.state_dict()), list(m.parameters())
        (['steps'], [])
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call: call super().__init__() first")
        self._check_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, ag.Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (a tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)
        object.__setattr__(self, name, tensor)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register `module` (or None) as the child `name`.

        >>> import nn
        >>> m = nn.Module(); m.add_module("act", nn.ReLU())
        >>> m
        Module(
          (act): ReLU()
        )
        """
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name("module", name, self._modules)
        self._modules[name] = module
        object.__setattr__(self, name, module)

    def register_module(self, name: str, module: Module | None) -> None:
        """`add_module` under PyTorch's other name."""
        self.add_module(name, module)

    # --- looking things up -------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def get_submodule(self, target: str) -> Module:
        """The sub-module at the dotted path `target` ("" is this module).

        >>> import nn
        >>> nn.Sequential(nn.Linear(1, 1)).get_submodule("0")
        Linear(in_features=1, out_features=1, bias=True)
        """
        module = self
        for item in target.split(".") if target else ():
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path `target` ("block.0.weight")."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> ag.Tensor:
        """The buffer at the dotted path `target` ("norm.running_mean")."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(module, name)

    # --- the tree of modules, parameters and buffers -------------------------------------------
    def named_modules(
        self, memo: set[Module] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """(name, module) pairs, depth first from this one; a module reachable by several
        names comes once unless `remove_duplicate` is False."""
        memo = set() if memo is None else memo
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:  # a loop, not recursion: any depth of nesting
            name, module = stack.pop()
            if module in memo:
                continue
            if remove_duplicate:
                memo.add(module)
            yield name, module
            children = [(f"{name}.{n}" if name else n, m) for n, m in module._modules.items() if m is not None]
            stack.extend(reversed(children))

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        return (m for _, m in self.named_modules(remove_duplicate=remove_duplicate))

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """Direct sub-modules, each once even when assigned under two names."""
        seen: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        return (m for _, m in self.named_children())

    def _named_members(
        self, members: Callable[[Module], Iterable[tuple[str, Any]]], prefix: str, recurse: bool, remove_duplicate: bool
    ) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_name, module in modules:
            for name, value in members(module):
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield (f"{module_name}.{name}" if module_name else name), value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(name, parameter) pairs, each parameter once (unless not `remove_duplicate`) even when shared."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, ag.Tensor]]:
        """(name, buffer) pairs of this module (and its sub-modules), each buffer once."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[ag.Tensor]:
        return (b for _, b in self.named_buffers(recurse=recurse))

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call `fn` on every sub-module (children first), then on this one; returns self.

        >>> import nn
        >>> names = []
        >>> _ = nn.Sequential(nn.Linear(1, 1), nn.ReLU()).apply(lambda m: names.append(type(m).__name__))
        >>> names
        ['Linear', 'ReLU', 'Sequential']
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

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

    # --- modes and gradients ------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode here and, through each child's own ``train``, below; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` of every parameter (freeze with False); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop every parameter's gradient, or with ``set_to_none=False`` zero it in place."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
                continue
            if p.grad.requires_grad:  # a gradient made with create_graph=True
                p.grad = p.grad.detach()
            with ag.no_grad():
                p.grad.zero_()

    # --- calling, and the hooks around it -------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            if not self._call_hooks:
                return self.forward(*args, **kwargs)
            return self._call_with_hooks(args, kwargs)
        except _NotATensorError:
            raise
        except (AttributeError, TypeError) as error:  # costs nothing until raised
            complaint = _raw_input(self, args)
            if complaint is None:
                raise
            raise _NotATensorError(complaint) from error

    def _call_with_hooks(self, args: tuple, kwargs: dict[str, Any]) -> Any:
        """PyTorch's order: forward pre-hooks, forward, forward hooks; the backward hooks are
        set up on the inputs before forward and on the output after the forward hooks."""
        result, called = None, set()
        try:
            for hook_id, hook in tuple(self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    replaced = hook(self, args, kwargs)
                    if replaced is not None:
                        if not (isinstance(replaced, tuple) and len(replaced) == 2):
                            raise RuntimeError(
                                "forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                f"but got {replaced}."
                            )
                        args, kwargs = replaced
                else:
                    replaced = hook(self, args)
                    if replaced is not None:
                        args = replaced if isinstance(replaced, tuple) else (replaced,)
            backward = None
            if (self._backward_hooks or self._backward_pre_hooks) and ag.is_grad_enabled():
                backward = _BackwardHooks(self)
                args = backward.inputs(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in tuple(self._forward_hooks.items()):
                called.add(hook_id)
                replaced = self._run_forward_hook(hook_id, hook, args, kwargs, result)
                result = result if replaced is None else replaced
            return result if backward is None else backward.outputs(result)
        except Exception:
            for hook_id, hook in tuple(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called and hook_id not in called:
                    try:
                        replaced = self._run_forward_hook(hook_id, hook, args, kwargs, result)
                        result = result if replaced is None else replaced
                    except Exception as e:
                        warnings.warn(
                            "module forward hook with ``always_call=True`` raised an exception that was silenced "
                            f"as another error was raised in forward: {e}",
                            stacklevel=2,
                        )
            raise

    def _run_forward_hook(self, hook_id: int, hook: Callable, args: tuple, kwargs: dict[str, Any], result: Any) -> Any:
        if hook_id in self._forward_hooks_with_kwargs:
            return hook(self, args, kwargs, result)
        return hook(self, args, result)

    @staticmethod
    def _register(
        registry: OrderedDict, hook: Callable, prepend: bool = False, *marks: tuple[dict, bool]
    ) -> HookHandle:
        """Add `hook` to `registry` (first with `prepend`), its id to each marking dict whose flag is set."""
        handle = HookHandle(registry, *(mark for mark, _ in marks))
        registry[handle.id] = hook
        for mark, flag in marks:
            if flag:
                mark[handle.id] = True
        if prepend:
            registry.move_to_end(handle.id, last=False)
        return handle

    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> HookHandle:
        """Call ``hook(module, args)`` before every forward (``hook(module, args, kwargs)``
        `with_kwargs`); a non-None return replaces the arguments (`with_kwargs`: an
        ``(args, kwargs)`` pair). `prepend` puts it before the hooks already registered."""
        return self._register(
            self._forward_pre_hooks,
            hook,
            prepend,
            (self._forward_pre_hooks_with_kwargs, with_kwargs),
            (self._call_hooks, True),
        )

    def register_forward_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False, always_call: bool = False
    ) -> HookHandle:
        """Call ``hook(module, args, output)`` after every forward (``hook(module, args, kwargs,
        output)`` `with_kwargs`); a non-None return replaces the output. With `always_call` it
        also runs when forward raises. Returns a handle whose ``remove()`` unregisters it."""
        return self._register(
            self._forward_hooks,
            hook,
            prepend,
            (self._forward_hooks_with_kwargs, with_kwargs),
            (self._forward_hooks_always_called, always_call),
            (self._call_hooks, True),
        )

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> HookHandle:
        """Call ``hook(module, grad_output)`` when the gradients of the outputs are known; a
        non-None return (a tuple as long) replaces them."""
        return self._register(self._backward_pre_hooks, hook, prepend, (self._call_hooks, True))

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> HookHandle:
        """Call ``hook(module, grad_input, grad_output)`` when the gradients of the tensor
        inputs (None for the other arguments and for inputs that need none) are known; a
        non-None return (a tuple as long) replaces grad_input. When no input needs a gradient
        it fires at the outputs, with grad_input all None, as PyTorch's.

        >>> import autograd_core as ag, nn
        >>> layer, seen = nn.Linear(2, 1), []
        >>> _ = layer.register_full_backward_hook(lambda m, gi, go: seen.append((gi[0].shape, go[0].shape)))
        >>> layer(ag.ones(3, 2, requires_grad=True)).sum().backward()
        >>> seen
        [((3, 2), (3, 1))]
        """
        return self._register(self._backward_hooks, hook, prepend, (self._call_hooks, True))

    # --- state ---------------------------------------------------------------------------------
    def register_state_dict_pre_hook(self, hook: Callable[[Module, str, bool], None]) -> HookHandle:
        """Call ``hook(module, prefix, keep_vars)`` before `state_dict` collects this module's state."""
        return self._register(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable[[Module, dict, str, dict], None]) -> HookHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after `state_dict` collected
        this module's state; it may change the dict in place and must return None."""
        return self._register(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., None]) -> HookHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module's values are loaded."""
        return self._register(self._load_state_dict_pre_hooks, hook)

    def register_load_state_dict_post_hook(self, hook: Callable[[Module, _IncompatibleKeys], None]) -> HookHandle:
        """Call ``hook(module, incompatible_keys)`` after this module and its sub-modules are
        loaded; changing the keys' lists in place changes what a strict load refuses."""
        return self._register(self._load_state_dict_post_hooks, hook)

    def state_dict(
        self, *, destination: dict[str, Any] | None = None, prefix: str = "", keep_vars: bool = False
    ) -> dict[str, ag.Tensor]:
        """name -> tensor: each module's parameters, then its persistent buffers, then its
        sub-modules', as in PyTorch; a tensor shared by two modules appears under both names.
        The values are detached (sharing memory with the module's), or with `keep_vars` the
        Parameters and buffers themselves.

        >>> import nn
        >>> list(nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)).state_dict(prefix="net."))[:3]
        ['net.0.weight', 'net.0.bias', 'net.1.weight']
        """
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in tuple(self._state_dict_pre_hooks.values()):
            hook(self, prefix, keep_vars)
        for name, t in self._local_state().items():
            destination[prefix + name] = t if keep_vars else t.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=f"{prefix}{name}.", keep_vars=keep_vars)
        for hook in tuple(self._state_dict_hooks.values()):
            if hook(self, destination, prefix, local_metadata) is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _local_state(self) -> dict[str, ag.Tensor]:
        """This module's own parameters and persistent buffers (not None), by name."""
        buffers = ((n, b) for n, b in self._buffers.items() if n not in self._non_persistent_buffers)
        return {n: t for n, t in itertools.chain(self._parameters.items(), buffers) if t is not None}

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        """Copy values (tensors of any backend, arrays, nested lists) into the parameters and
        buffers in place, converted to each one's backend and dtype; with `assign`, make the
        given tensors the parameters and buffers instead. Returns the missing and unexpected
        names; with `strict` (the default) either, or a shape mismatch, is a RuntimeError.
        A batch-norm checkpoint without ``num_batches_tracked`` loads, as in PyTorch.

        >>> import nn
        >>> nn.Linear(2, 1).load_state_dict({"weight": [[1.0, 2.0]]}, strict=False)
        _IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        metadata = getattr(state_dict, "_metadata", None)
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        self._load_tree(OrderedDict(state_dict), "", metadata or {}, assign, (missing, unexpected, errors))
        if strict:
            if unexpected:
                errors.insert(
                    0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected))
                )
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(self._get_name(), "\n\t".join(errors))
            )
        return _IncompatibleKeys(missing, unexpected)

    def _load_tree(
        self,
        state_dict: dict[str, Any],
        prefix: str,
        metadata: Mapping[str, Any],
        assign: bool,
        found: tuple[list, ...],
    ) -> None:
        """Load this module's entries of `state_dict`, then each sub-module's, then run the load post-hooks."""
        local_metadata = dict(metadata.get(prefix[:-1], {}))
        if assign:
            local_metadata["assign_to_params_buffers"] = True
        self._load_from_state_dict(state_dict, prefix, local_metadata, True, *found)
        for name, child in self._modules.items():
            if child is not None:
                child_prefix = f"{prefix}{name}."
                local = {k: v for k, v in state_dict.items() if k.startswith(child_prefix)}
                child._load_tree(local, child_prefix, metadata, assign, found)
        keys = _IncompatibleKeys(found[0], found[1])
        for hook in tuple(self._load_state_dict_post_hooks.values()):
            if hook(self, keys) is not None:
                raise AssertionError(
                    "Hooks registered with ``register_load_state_dict_post_hook`` are not expected to return new "
                    "values, if incompatible_keys need to be modified, it should be done inplace."
                )

    def _load_from_state_dict(
        self,
        state_dict: dict[str, Any],
        prefix: str,
        local_metadata: dict[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        """Load this module's own parameters and buffers (not its sub-modules') from the
        entries of `state_dict` under `prefix`, recording what is missing, unexpected or wrong
        (PyTorch's protocol, which a subclass may override)."""
        for hook in tuple(self._load_state_dict_pre_hooks.values()):
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local_state = self._local_state()
        for name, current in local_state.items():
            key = prefix + name
            if key in state_dict:
                error = self._load_entry(name, current, key, state_dict[key], local_metadata)
                if error is not None:
                    error_msgs.append(error)
            # PyTorch's batch norm (_NormBase) reads a checkpoint written before num_batches_tracked
            # existed (no version, or version < 2) keeping its count
            elif strict and not (name == "num_batches_tracked" and (local_metadata.get("version") or 0) < 2):
                missing_keys.append(key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix):
                    first, *rest = key[len(prefix) :].split(".", 1)
                    if (first not in self._modules) if rest else (first not in local_state):
                        unexpected_keys.append(key)

    def _load_entry(
        self, name: str, current: ag.Tensor, key: str, value: Any, local_metadata: dict[str, Any]
    ) -> str | None:
        """Put `value` into the parameter or buffer `name`; what went wrong, if anything."""
        try:
            array = to_array(value, current.backend, current.dtype)
        except Exception as e:
            return (
                f'While copying the parameter named "{key}", expected a tensor or array from checkpoint '
                f"but received {type(value)} ({e})"
            )
        if current.ndim == 0 and tuple(array.shape) == (1,):
            array = current.backend.xp.reshape(array, ())
        if tuple(array.shape) != current.shape:
            return (
                f"size mismatch for {key}: copying a param with shape {tuple(array.shape)} from checkpoint, "
                f"the shape in current model is {current.shape}."
            )
        if local_metadata.get("assign_to_params_buffers"):
            given = value.detach() if isinstance(value, ag.Tensor) else Tensor._wrap(array, current.backend)
            setattr(self, name, Parameter(given, current.requires_grad) if isinstance(current, Parameter) else given)
        else:
            with ag.no_grad():
                current.copy_(Tensor._wrap(array, current.backend))
        return None

    # --- casts and moves -----------------------------------------------------------------------
    def _apply(self, convert: Callable[[ag.Tensor], ag.Tensor]) -> Module:
        """Replace the values of every parameter, gradient and buffer by `convert`'s, in place:
        the Parameter objects stay (an optimizer holding them goes on working)."""
        with ag.no_grad():
            for p in self.parameters():
                _write_into(p, convert(p))
                if p.grad is not None:
                    p.grad = convert(p.grad)
            for b in self.buffers():
                _write_into(b, convert(b))
        return self

    def to(self, target: Any = None, *, dtype: Any = None, device: Any = None) -> Module:
        """Move (in place) every parameter, gradient and buffer to another backend or device,
        and cast the floating-point ones to a dtype, as ``Tensor.to`` takes them:
        ``model.to("torch")``, ``model.to(ag.float64)``, ``model.to(x.device)``,
        ``model.to(other_tensor)``, ``model.to(device="cuda")``.

        >>> import autograd_core as ag, nn
        >>> layer = nn.Linear(2, 1); weight = layer.weight
        >>> layer.to(ag.float64).weight is weight, weight.dtype
        (True, autograd_core.float64)
        """
        if isinstance(target, ag.Tensor):
            target, dtype = target.device, dtype or target.dtype
        elif isinstance(target, ag.DType) or (isinstance(target, str) and target in DTYPES):
            target, dtype = None, target
        if dtype is not None and not (ag.as_dtype(dtype).is_floating_point or ag.as_dtype(dtype).is_complex):
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}"
            )

        def convert(t: ag.Tensor) -> ag.Tensor:
            cast = dtype if t.dtype.is_floating_point or t.dtype.is_complex else None
            return t if target is None and device is None and cast is None else t.to(target, dtype=cast, device=device)

        return self._apply(convert)

    def cpu(self) -> Module:
        """Move everything to the CPU, on the same backend."""
        return self.to(device="cpu")

    def half(self) -> Module:
        """Cast the floating-point parameters and buffers to float16."""
        return self.to(dtype=ag.float16)

    def float(self) -> Module:
        """Cast the floating-point parameters and buffers to float32."""
        return self.to(dtype=ag.float32)

    def double(self) -> Module:
        """Cast the floating-point parameters and buffers to float64."""
        return self.to(dtype=ag.float64)

    # --- printing ------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """What ``repr`` shows inside the parentheses besides the children (one line or several)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): {_indented(repr(m))}" for name, m in self._modules.items()]
        if len(extra_lines) == 1 and not child_lines:
            return f"{self._get_name()}({extra_lines[0]})"
        lines = extra_lines + child_lines
        return f"{self._get_name()}(" + ("\n  " + "\n  ".join(lines) + "\n" if lines else "") + ")"


def _indented(text: str) -> str:
    """`text` with its lines after the first indented by two spaces (a child's repr)."""
    return text.replace("\n", "\n  ")


def _write_into(t: ag.Tensor, new: ag.Tensor) -> None:
    """Give the tensor `t` the values (array and backend) of `new`, keeping the object."""
    if new is not t:
        t.backend = new.backend
        t._take_array(new.array, counted=True)


class _NotATensorError(TypeError):
    """A module called on an array or a list where it takes a Tensor."""


def _raw_input(module: Module, args: tuple) -> str | None:
    """The complaint about the first positional argument of `module` that is an array or a
    list of numbers rather than a Tensor (None when there is none)."""
    for i, a in enumerate(args):
        raw = hasattr(a, "__array_namespace__") or hasattr(a, "__array__") or isinstance(a, list)
        if (
            raw
            and not isinstance(a, ag.Tensor)
            and not (isinstance(a, list) and any(isinstance(v, ag.Tensor) for v in a))
        ):
            kind = f"{type(a).__module__}.{type(a).__name__}".removeprefix("builtins.")
            return (
                f"{module._get_name()} takes a Tensor, but argument {i} is a {kind}: wrap it with "
                "ag.tensor(...) or ag.asarray(...)"
            )
    return None


class _BackwardHooks:
    """One call's full backward hooks and backward pre-hooks, as PyTorch's BackwardHook: the
    tensor inputs that need a gradient (and the tensor outputs) pass through one joint node
    (their values flattened and concatenated, then sliced back), whose gradient hook sees
    all their gradients at once and may replace them."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self.n_inputs = self.n_outputs = 0
        self.constant_inputs: dict[int, ag.Tensor] = {}  # tensor inputs that need no gradient: zeros in grad_input
        self.input_positions: list[int] | None = None  # None: no input needs a gradient
        self.output_positions: list[int] = []
        self.grad_outputs: tuple | None = None

    def inputs(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        if not self.module._backward_hooks:
            return args
        self.constant_inputs = {i: a for i, a in enumerate(args) if isinstance(a, ag.Tensor) and not a.requires_grad}
        args, self.input_positions = _joined(args, self._on_grad_inputs)
        return args

    def outputs(self, result: Any) -> Any:
        if not isinstance(result, ag.Tensor | tuple):
            warnings.warn(
                "For backward hooks to be called, module output should be a Tensor or a tuple of Tensors "
                f"but received {type(result)}",
                stacklevel=3,
            )
            return result
        single = isinstance(result, ag.Tensor)
        outputs, positions = _joined((result,) if single else result, self._on_grad_outputs)
        self.n_outputs, self.output_positions = len(outputs), positions or []
        return outputs[0] if single else outputs

    def _on_grad_outputs(self, grads: list[ag.Tensor]) -> list[ag.Tensor]:
        grad_outputs = _through_hooks(
            self.module._backward_pre_hooks,
            lambda hook, grads: hook(self.module, grads),
            _spread(self.output_positions, grads, self.n_outputs),
            "Backward pre hook",
            "grad_output",
        )
        self.grad_outputs = grad_outputs
        if self.input_positions is None and self.module._backward_hooks:
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to module outputs since "
                "no inputs require gradients",
                stacklevel=2,
            )
            none = (None,) * self.n_inputs
            for hook in tuple(self.module._backward_hooks.values()):
                returned = hook(self.module, none, grad_outputs)
                if returned is not None and not all(g is None for g in returned):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should always return None "
                        "or None for all gradients."
                    )
        return [grad_outputs[i] for i in self.output_positions]

    def _on_grad_inputs(self, grads: list[ag.Tensor]) -> list[ag.Tensor] | None:
        if self.grad_outputs is None:  # the gradient reached the inputs without passing the outputs
            return None
        spread = _spread(self.input_positions or [], grads, self.n_inputs)
        grad_inputs = tuple(
            ag.zeros_like(self.constant_inputs[i]) if i in self.constant_inputs else g for i, g in enumerate(spread)
        )
        grad_inputs = _through_hooks(
            self.module._backward_hooks,
            lambda hook, grads: hook(self.module, grads, self.grad_outputs),
            grad_inputs,
            "Backward hook",
            "grad_input",
        )
        self.grad_outputs = None
        return [grad_inputs[i] for i in self.input_positions or []]


def _through_hooks(hooks: dict[int, Callable], call: Callable, grads: tuple, hook_kind: str, name: str) -> tuple:
    """`grads` passed through each of `hooks` in order (``call(hook, grads)``); a hook that
    returns gradients replaces them, one for each."""
    for hook in tuple(hooks.values()):
        replaced = call(hook, grads)
        if replaced is not None:
            if len(replaced) != len(grads):
                raise RuntimeError(
                    f"{hook_kind} returned an invalid number of {name}, got {len(replaced)}, but expected {len(grads)}"
                )
            grads = tuple(replaced)
    return grads


def _spread(positions: list[int], values: list[Any], size: int) -> tuple:
    """A tuple of `size` entries: `values` at `positions`, None elsewhere."""
    spread: list[Any] = [None] * size
    for i, v in zip(positions, values):
        spread[i] = v
    return tuple(spread)


def _joined(values: tuple, on_grads: Callable[[list[ag.Tensor]], list[Any] | None]) -> tuple[tuple, list[int] | None]:
    """`values` with each tensor that needs a gradient replaced by a slice of one joint tensor,
    and their positions (None when there are none). When the joint tensor's gradient is
    known, `on_grads` gets it as one gradient per tensor and may return replacements."""
    positions = [i for i, v in enumerate(values) if isinstance(v, ag.Tensor) and v.requires_grad]
    if not positions:
        return values, None
    tensors = [values[i] for i in positions]
    dtype = ag.result_type(*tensors)
    joint = ag.concat([ag.reshape(ag.astype(t, dtype), (-1,)) for t in tensors])
    bounds = list(itertools.accumulate((t.numel() for t in tensors), initial=0))

    def pieces(flat: ag.Tensor) -> list[ag.Tensor]:
        return [ag.reshape(ag.astype(flat[a:b], t.dtype), t.shape) for t, a, b in zip(tensors, bounds, bounds[1:])]

    def hook(grad: ag.Tensor) -> ag.Tensor | None:
        replaced = on_grads(pieces(grad))
        if replaced is None:
            return None
        parts = [ag.zeros_like(t) if g is None else g for t, g in zip(tensors, replaced)]
        return ag.concat([ag.reshape(ag.astype(g, dtype), (-1,)) for g in parts])

    joint.register_hook(hook)
    out = list(values)
    for i, piece in zip(positions, pieces(joint)):
        out[i] = piece
    return tuple(out), positions
