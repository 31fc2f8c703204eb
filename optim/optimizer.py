"""`Optimizer`: parameter groups, per-parameter state, zero_grad and state dicts."""

from __future__ import annotations

import copy
import math
import struct
from collections.abc import Callable, Iterable
from typing import Any

import autograd_core as ag
from autograd_core import primitives as P
from autograd_core.autodiff.tensor import Tensor, bump_version
from autograd_core.ops.creation import to_array


def hyperparameter(
    name: str, value: Any, low: float = 0.0, high: float = math.inf, high_included: bool = True
) -> float:
    """`value` (a number or a 0-d tensor) as a float, checked to lie in [low, high] (or [low,
    high) when not `high_included`); NaN, infinities beyond the range and other types are refused."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"{name} must be a number or a 0-d tensor, got a tensor of shape {value.shape}")
        value = value.item()
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    inside = low <= value <= high if high_included else low <= value < high
    if not inside:  # also refuses NaN, which compares False
        bracket = "]" if high_included else ")"
        raise ValueError(f"invalid {name}: {value} (it must be in [{low}, {high}{bracket})")
    return float(value)


def torch_flags(*, maximize: bool = False, differentiable: bool = False, **kernels: Any) -> dict[str, Any]:
    """PyTorch's flags of an optimizer, as they appear in its groups: `maximize` ascends;
    `kernels` (those of ``foreach``, ``capturable`` and ``fused`` that the optimizer has) choose
    PyTorch's kernels and change no result here; ``differentiable=True`` (a step recorded in the
    autograd graph) is refused."""
    if differentiable:
        raise NotImplementedError(
            "differentiable=True (an optimizer step recorded in the autograd graph) is not supported: "
            "write the update with tensor operations (or use autograd_core.func) to differentiate through it"
        )
    return dict(maximize=bool(maximize), differentiable=False, **kernels)


def gradient(p: Tensor, group: dict[str, Any]) -> Any:
    """The array `p`'s update starts from: its gradient, negated where the group maximizes
    (PyTorch negates it first, before weight decay)."""
    return -p.grad.array if group.get("maximize") else p.grad.array


def lerp(start: Any, end: Any, weight: Any) -> Any:
    """``start + weight * (end - start)`` in PyTorch's two forms (``torch.lerp``: the exact one
    for each half of the weights; a traced weight, in a compiled step, takes the first)."""
    if isinstance(weight, (int, float)) and abs(weight) >= 0.5:
        return end - (end - start) * (1 - weight)
    return start + weight * (end - start)


def float32(value: float) -> float:
    """`value` rounded to float32, as PyTorch keeps an optimizer's scalar state (NAdam's
    ``mu_product``, ASGD's ``eta`` and ``mu``: 0-d float32 tensors under the default dtype)."""
    return struct.unpack("f", struct.pack("f", value))[0]


class Optimizer:
    """Base class: holds ``param_groups`` (dicts of hyper-parameters with a ``"params"``
    list) and ``state`` (per parameter). Subclasses implement ``update(p, group, state)``,
    called for every parameter with a gradient, outside the graph."""

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got a Tensor of shape {params.shape}: pass [tensor]"
            )
        self.defaults = defaults
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add a group (a dict with ``"params"``: tensors, or ``(name, tensor)`` pairs as
        ``model.named_parameters()`` gives, whose names go to ``"param_names"``)."""
        if not isinstance(group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(group).__name__}")
        group = {**self.defaults, **group, **_split_names(group["params"])}
        if any(("param_names" in g) != ("param_names" in group) for g in self.param_groups):
            raise ValueError(
                "all optimizer param groups should be with/without names. cannot add param group "
                f"{'with' if 'param_names' in group else 'without'} names to the optimizer"
            )
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for i, p in enumerate(group["params"]):
            if not isinstance(p, Tensor) or not p.is_leaf:
                raise TypeError(f"optimizers take leaf tensors, got {type(p).__name__}")
            if id(p) in seen:
                raise ValueError(
                    f"parameter {i} of a group (shape {p.shape}) is already in this optimizer; "
                    "it would be updated twice: pass each parameter once"
                )
            seen.add(id(p))
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:  # in place, as PyTorch: a gradient held elsewhere reads zeros
                    p.grad = p.grad.detach() if p.grad.requires_grad else p.grad
                    p.grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient. `closure`, when given, is called first
        (with gradients enabled: it re-evaluates the model, calls backward and returns the
        loss), and its loss is returned, as in PyTorch."""
        loss = evaluate(closure)
        with ag.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        if p.grad.backend is not p.backend:
                            raise RuntimeError(f"a gradient on {p.grad.backend} for a parameter on {p.backend}")
                        self.update(p, group, self._state_on_backend_of(p))
                        mark_updated(p)
        self._persist()
        return loss

    def _persist(self) -> None:
        """Hand each backend, in one call, the new parameters and optimizer state
        (`Backend.persist`: a lazy library computes them now, once for all, so the next step's
        graph starts from their values); eager backends have nothing to do."""
        params = [p for group in self.param_groups for p in group["params"] if p.grad is not None and p.backend.lazy]
        for backend in dict.fromkeys(p.backend for p in params):
            mine = [p for p in params if p.backend is backend]
            keys = [[k for k, v in self.state.get(p, {}).items() if backend.is_native(v)] for p in mine]
            arrays = [a for p, ks in zip(mine, keys) for a in (p.array, *(self.state[p][k] for k in ks))]
            done = iter(backend.persist(arrays))
            for p, ks in zip(mine, keys):
                p.array = next(done)
                self.state.get(p, {}).update((k, next(done)) for k in ks)

    def _state_on_backend_of(self, p: Tensor) -> dict[str, Any]:
        """The state of `p`, moved to p's backend if the model was moved (``model.to(...)``)
        since the state was made."""
        state = self.state.setdefault(p, {})
        for key, value in state.items():
            if hasattr(value, "shape") and not p.backend.is_native(value):
                state[key] = p.backend.asarray(p.backend.host_array(value), p.array.dtype)
        return state

    def update(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        raise NotImplementedError

    # --- state dicts: parameters are named by their position across groups, as in PyTorch ---
    def state_dict(self) -> dict[str, Any]:
        index = {id(p): i for i, p in enumerate(p for g in self.param_groups for p in g["params"])}
        groups = [
            {**{k: v for k, v in g.items() if k != "params"}, "params": [index[id(p)] for p in g["params"]]}
            for g in self.param_groups
        ]
        state = {
            index[id(p)]: {k: _as_tensors(v, p.backend, copied=True) for k, v in s.items()}
            for p, s in self.state.items()
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        groups = state_dict["param_groups"]
        if [len(g["params"]) for g in groups] != [len(g["params"]) for g in self.param_groups]:
            raise ValueError("load_state_dict: the saved parameter groups do not match this optimizer's in size")
        params = [p for g in self.param_groups for p in g["params"]]
        for group, saved in zip(self.param_groups, groups):
            group.update({k: copy.deepcopy(v) for k, v in saved.items() if k != "params"})
        self.state = {}
        for i, saved in state_dict["state"].items():
            p = params[int(i)]
            self.state[p] = {k: self._load_state_value(v, p, int(i), k) for k, v in saved.items()}

    def _load_state_value(self, value: Any, p: Tensor, index: int, key: str) -> Any:
        """A saved state entry as this optimizer keeps it: tensors as arrays on p's backend
        (a tensor entry checked to have p's shape), containers copied."""
        if isinstance(value, Tensor):
            return _state_array(value, p, index, key)
        return _map_arrays(value, lambda v: isinstance(v, Tensor), lambda t: to_array(t, p.backend, p.dtype))

    # --- pickling: the state's backend arrays travel as tensors (host values and a backend name) ---
    def __getstate__(self) -> dict[str, Any]:
        state = {p: {k: _as_tensors(v, p.backend, copied=False) for k, v in s.items()} for p, s in self.state.items()}
        return {**self.__dict__, "state": state}

    def __setstate__(self, pickled: dict[str, Any]) -> None:
        self.__dict__.update(pickled)
        self.state = {
            p: {k: _map_arrays(v, lambda t: isinstance(t, Tensor), lambda t: t.array) for k, v in s.items()}
            for p, s in self.state.items()
        }

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params")
        return "\n".join([*lines, ")"])


def evaluate(closure: Callable[[], Any] | None) -> Any:
    """The loss `closure` returns, called with gradients enabled (None without a closure)."""
    if closure is None:
        return None
    with ag.enable_grad():
        return closure()


def mark_updated(p: Tensor) -> None:
    """After a step changed ``p.array``: a graph that saved p before must not reuse it, and the
    views sharing p's values (state_dict()'s, .data, detach()) see the new ones."""
    bump_version(p)
    if p._views:
        p._refresh_views()


def _split_names(params: Any) -> dict[str, list]:
    """A group's ``"params"`` as a list of tensors, and ``"param_names"`` where they came as
    ``(name, tensor)`` pairs (``model.named_parameters()``)."""
    if isinstance(params, Tensor):
        return {"params": [params]}
    if isinstance(params, set):
        raise TypeError(
            "optimizer parameters need to be organized in ordered collections, but the ordering of "
            "tensors in sets will change between runs. Please use a list instead."
        )
    params = list(params)
    named = [p for p in params if isinstance(p, tuple)]
    if not named:
        return {"params": params}
    if len(named) != len(params):
        raise ValueError("all optimizer params should be with/without names. Some param names are missing")
    return {"params": [p for _, p in named], "param_names": [name for name, _ in named]}


def _map_arrays(value: Any, is_array: Callable[[Any], bool], convert: Callable[[Any], Any]) -> Any:
    """`value` with `convert` applied to each array in it (through lists, tuples and dicts:
    LBFGS keeps lists of history vectors)."""
    if isinstance(value, (list, tuple)):
        return type(value)(_map_arrays(v, is_array, convert) for v in value)
    if isinstance(value, dict):
        return {k: _map_arrays(v, is_array, convert) for k, v in value.items()}
    return convert(value) if value is not None and is_array(value) else value


def _as_tensors(value: Any, backend: Any, copied: bool) -> Any:
    """`value` (a state entry) with its backend arrays as tensors (copies, where `copied`)."""
    if copied:
        return _map_arrays(value, backend.is_native, lambda a: P.constant(a, backend).clone())
    return _map_arrays(value, backend.is_native, lambda a: Tensor._wrap(a, backend))


def _state_array(value: Tensor, p: Tensor, index: int, key: str) -> Any:
    """Saved optimizer state for parameter `index`, checked against that parameter's shape."""
    if value.shape != p.shape:
        raise ValueError(
            f"load_state_dict: state {key!r} of parameter {index} has shape {value.shape}, the "
            f"parameter has shape {p.shape}; the state dict is from another model"
        )
    return to_array(value, p.backend, p.dtype)
