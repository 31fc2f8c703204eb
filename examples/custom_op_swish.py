"""A custom op with a kernel per library: swish, ``x * sigmoid(x)`` (PyTorch's SiLU), declared
once as a registered primitive. Its portable default and its VJP are written against a
namespace and run on every backend; numpy runs a numba kernel (with ``pip install -e
".[fast]"``), torch its own SiLU kernels. The script trains a small regression with it.

    AUTOGRAD_BACKEND=torch python examples/custom_op_swish.py

Declaring registers the primitive's name, so the module is imported, not run twice, in one
process: ``from examples.custom_op_swish import swish``.
"""

from __future__ import annotations

import functools
import math
from types import SimpleNamespace
from typing import Any

import numpy as np

import autograd_core as ag
import backends
import nn
import optim
from autograd_core.graph.registry import Primitive


def _sigmoid(ns: Any, x: Any) -> Any:
    # exp(-|x|) never overflows; `where` rather than `abs`, whose derivative at 0 is 0, so that
    # this differentiates to sigmoid's derivative at 0 too (the second derivative of swish)
    e = ns.exp(ns.where(x >= 0, -x, x))
    return ns.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _swish_backward(ns: Any, grad: Any, x: Any) -> Any:
    """`grad` times swish's derivative at `x`: ``s + x s (1 - s)`` with ``s = sigmoid(x)``."""
    s = _sigmoid(ns, x)
    return grad * (s + x * s * (1 - s))


# No VJPs: on tensors (a create_graph=True backward) it runs its default, a formula of
# differentiable ops, so second derivatives come from that.
swish_backward = Primitive("swish_backward", _swish_backward)
swish_primitive = Primitive(
    "swish",
    lambda ns, x: x * _sigmoid(ns, x),
    vjps=(lambda ns, g, out, x: swish_backward(ns, g, x),),
    doc="``x * sigmoid(x)`` elementwise, on raw arrays.",
)


@functools.cache
def numba_kernels() -> SimpleNamespace | None:
    """swish and its backward as numba ufuncs for float32 and float64, compiled on the first
    call (the first swish on numpy); None without numba."""
    try:
        import numba
    except ImportError:
        return None

    @numba.njit(inline="always")
    def sigmoid(x):
        e = math.exp(-abs(x))
        return 1.0 / (1.0 + e) if x >= 0 else e / (1.0 + e)

    @numba.vectorize(["float32(float32)", "float64(float64)"], cache=True)
    def forward(x):
        return x * sigmoid(x)

    @numba.vectorize(["float32(float32, float32)", "float64(float64, float64)"], cache=True)
    def backward(g, x):
        s = sigmoid(x)
        return g * (s + x * s * (1.0 - s))

    return SimpleNamespace(forward=forward, backward=backward)


_NUMBA_DTYPES = (np.float32, np.float64)  # other dtypes would be cast to these loops' types


@swish_primitive.kernel("numpy")
def _swish_numpy(ns: Any, x: np.ndarray) -> Any:
    ufuncs = numba_kernels()
    if ufuncs is None or x.dtype not in _NUMBA_DTYPES:
        return swish_primitive.default(ns, x)
    return ufuncs.forward(x)


@swish_backward.kernel("numpy")
def _swish_backward_numpy(ns: Any, grad: np.ndarray, x: np.ndarray) -> Any:
    ufuncs = numba_kernels()
    if ufuncs is None or x.dtype not in _NUMBA_DTYPES or grad.dtype != x.dtype:
        return swish_backward.default(ns, grad, x)
    return ufuncs.backward(grad, x)


# Only the torch backend calls these, so torch is imported there, never on import.
@swish_primitive.kernel("torch")
def _swish_torch(ns: Any, x: Any) -> Any:
    import torch

    return torch.nn.functional.silu(x)


@swish_backward.kernel("torch")
def _swish_backward_torch(ns: Any, grad: Any, x: Any) -> Any:
    import torch

    return torch.ops.aten.silu_backward(grad, x)


def swish(x: ag.Tensor) -> ag.Tensor:
    """``x * sigmoid(x)`` elementwise, differentiable to any order.

    >>> x = ag.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    >>> swish(x).sum().backward()
    >>> [round(g, 4) for g in x.grad.tolist()]
    [0.0723, 0.5, 1.0908]
    """
    if not isinstance(x, ag.Tensor) or not x.dtype.is_floating_point:
        got = f"a tensor of dtype {x.dtype.name}" if isinstance(x, ag.Tensor) else type(x).__name__
        raise TypeError(f"swish expects a tensor of a real floating dtype, got {got}")
    return swish_primitive.bind(x)


class Swish(nn.Module):
    """`swish` as a layer."""

    def forward(self, x: ag.Tensor) -> ag.Tensor:
        return swish(x)


def main(steps: int = 100) -> list[float]:
    """Fit sin(3x) on [-1, 1] with Linear(1, 32), Swish, Linear(32, 1) and Adam; the losses."""
    ag.manual_seed(0)
    model = nn.Sequential(nn.Linear(1, 32), Swish(), nn.Linear(32, 1))
    opt = optim.Adam(model.parameters(), lr=0.05)
    points = np.linspace(-1, 1, 64, dtype=np.float32)[:, None]
    x, y = ag.tensor(points), ag.tensor(np.sin(3 * points))
    losses = []
    for _ in range(steps):
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    print(repr(swish_primitive))
    print(f"{backends.current().name}: mean squared error {losses[0]:.4f} -> {losses[-1]:.5f} in {steps} Adam steps")
    return losses


if __name__ == "__main__":
    main()
