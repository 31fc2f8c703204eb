"""`Optimizer`: parameter groups, per-parameter state, zero_grad and state dicts."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable
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


class Optimizer:
    """Base class: holds ``param_groups`` (dicts of hyper-parameters with a ``"params"``
    list) and ``state`` (per parameter). Subclasses implement ``update(p, group, state)``,
    called for every parameter with a gradient, outside the graph."""

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
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
        group = {**self.defaults, **group, "params": list(group["params"])}
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

    @ag.no_grad()
    def step(self) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if p.grad.backend is not p.backend:
                        raise RuntimeError(f"a gradient on {p.grad.backend} for a parameter on {p.backend}")
                    self.update(p, group, self._state_on_backend_of(p))
                    bump_version(p)  # a graph that saved p before the step must not reuse it
                    if p._views:  # state_dict()'s values, .data, detach(): they share p's values
                        p._refresh_views()
        self._persist()

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
            index[id(p)]: {k: P.constant(v, p.backend).clone() if p.backend.is_native(v) else v for k, v in s.items()}
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
            self.state[p] = {k: _state_array(v, p, int(i), k) if isinstance(v, Tensor) else v for k, v in saved.items()}

    # --- pickling: the state's backend arrays travel as tensors (host values and a backend name) ---
    def __getstate__(self) -> dict[str, Any]:
        state = {
            p: {k: Tensor._wrap(v, p.backend) if p.backend.is_native(v) else v for k, v in s.items()}
            for p, s in self.state.items()
        }
        return {**self.__dict__, "state": state}

    def __setstate__(self, pickled: dict[str, Any]) -> None:
        self.__dict__.update(pickled)
        self.state = {
            p: {k: v.array if isinstance(v, Tensor) else v for k, v in s.items()} for p, s in self.state.items()
        }

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params")
        return "\n".join([*lines, ")"])


def _state_array(value: Tensor, p: Tensor, index: int, key: str) -> Any:
    """Saved optimizer state for parameter `index`, checked against that parameter's shape."""
    if value.shape != p.shape:
        raise ValueError(
            f"load_state_dict: state {key!r} of parameter {index} has shape {value.shape}, the "
            f"parameter has shape {p.shape}; the state dict is from another model"
        )
    return to_array(value, p.backend, p.dtype)
