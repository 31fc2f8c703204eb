"""`autograd_core.torch`'s factories, conversions and random functions, `Generator` objects and
the layout and memory-format markers PyTorch's factories take (tensors here are dense, laid out
by their library: the markers are accepted and change nothing)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor
from autograd_core.ops import creation, random
from autograd_core.ops.random import Generator, default_generator
from autograd_core.torch._adapt import as_tensor, method


class _Marker:
    """A named layout or memory format (``torch.strided``, ``torch.channels_last``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"autograd_core.torch.{self.name}"


strided = _Marker("strided")
MEMORY_FORMATS = {
    name: _Marker(name) for name in ("preserve_format", "contiguous_format", "channels_last", "channels_last_3d")
}


def factory(f: Callable[..., Any]) -> Callable[..., Any]:
    """`f` taking PyTorch's `layout` (strided alone: tensors here are dense), `pin_memory` and
    `memory_format` too, which change nothing here.

    >>> factory(ag.zeros)(2, layout=strided, pin_memory=False).shape
    (2,)
    """

    @functools.wraps(f)
    def call(*args: Any, layout: Any = None, pin_memory: bool = False, memory_format: Any = None, **kwargs: Any) -> Any:
        if layout is not None and not str(layout).endswith("strided"):
            raise ValueError(f"{f.__name__}: layout {layout} is not supported; tensors here are dense (strided)")
        return f(*args, **kwargs)

    return call


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor of the current backend holding `array`'s values (PyTorch's shares the numpy
    memory; here it does on the numpy backend, as ``asarray`` does)."""
    return ag.asarray(array)


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def meshgrid(*tensors: Any, indexing: str = "ij") -> tuple[Tensor, ...]:
    """PyTorch's ``meshgrid``: the tensors as arguments or as one list, a 0-d one counting as
    one element, ``"ij"`` indexing unless told.

    >>> [g.shape for g in meshgrid([ag.zeros(3), ag.tensor(1.0)])]
    [(3, 1), (3, 1)]
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    vectors = [t.reshape(1) if t.ndim == 0 else t for t in map(as_tensor, tensors)]
    return tuple(ag.meshgrid(*vectors, indexing=indexing))


def fill(input: Any, value: Any) -> Tensor:
    """A copy of `input` filled with `value` (a number or a 0-d tensor), recorded as PyTorch's."""
    return as_tensor(input).clone().fill_(value)


def manual_seed(seed: int) -> Generator:
    """Seed the default stream (`autograd_core.manual_seed`); returns its Generator."""
    return default_generator.manual_seed(seed)


def get_rng_state() -> Tensor:
    """The default stream's state (dropout's masks included), as a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state: Any) -> None:
    default_generator.set_state(new_state)


FUNCTIONS: dict[str, Any] = {
    "tensor": ag.tensor,
    "as_tensor": ag.asarray,
    "asarray": ag.asarray,
    "from_numpy": from_numpy,
    "is_tensor": is_tensor,
    **{name: factory(getattr(ag, name)) for name in ("zeros", "ones", "empty", "full", "eye", "arange", "linspace")},
    **{name: factory(getattr(ag, name)) for name in ("zeros_like", "ones_like", "empty_like", "full_like")},
    **{name: factory(getattr(creation, name)) for name in ("logspace", "scalar_tensor", "empty_strided")},
    "empty_permuted": factory(creation.empty_permuted),
    **{name: factory(getattr(creation, name)) for name in ("rand", "randn", "randint", "randperm", "normal")},
    **{name: factory(getattr(creation, name)) for name in ("rand_like", "randn_like", "randint_like")},
    "meshgrid": meshgrid,
    "fill": fill,
    "fill_": method("fill_"),
    "zero_": method("zero_"),
    "bernoulli": random.bernoulli,
    "multinomial": random.multinomial,
    "poisson": random.poisson,
    "Generator": Generator,
    "default_generator": default_generator,
    "manual_seed": manual_seed,
    "seed": default_generator.seed,
    "initial_seed": default_generator.initial_seed,
    "get_rng_state": get_rng_state,
    "set_rng_state": set_rng_state,
    "strided": strided,
    **MEMORY_FORMATS,
}
