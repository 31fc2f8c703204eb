"""The signature adaptors of `autograd_core.torch`'s tables: each turns one of our functions
into the function PyTorch has under that name, so a table row is the name, an adaptor and
our implementation."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from autograd_core.autodiff.tensor import Tensor
from autograd_core.ops.creation import asarray


def as_tensor(x: Any) -> Tensor:
    """`x` as a tensor (a Python number or nested list becomes one, as torch's functions take them)."""
    return x if isinstance(x, Tensor) else asarray(x)


def method(name: str) -> Callable[..., Any]:
    """``torch.name(input, *args, **kwargs)`` as PyTorch defines it for a Tensor method: the
    input's method of that name.

    >>> import autograd_core as ag
    >>> method("cumsum")(ag.tensor([1.0, 2.0]), 0).tolist()
    [1.0, 3.0]
    """

    def call(input: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(as_tensor(input), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``input.{name}(*args, **kwargs)``: see `autograd_core.Tensor.{name}`."
    return call


def dim_as_axis(f: Callable[..., Any], dim: str = "dim", axis: str = "axis") -> Callable[..., Any]:
    """`f`, which takes `axis=`, taking PyTorch's `dim=` too.

    >>> import autograd_core as ag
    >>> dim_as_axis(ag.concat)([ag.ones(1), ag.zeros(1)], dim=0).tolist()
    [1.0, 0.0]
    """

    @functools.wraps(f)
    def call(*args: Any, **kwargs: Any) -> Any:
        if dim in kwargs:
            kwargs[axis] = kwargs.pop(dim)
        return f(*args, **kwargs)

    return call
