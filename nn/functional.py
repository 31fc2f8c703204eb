"""Functions behind the layers: activations, losses, normalisation, embedding, dropout.

Each is composed of autograd_core primitives (so its gradient is derived, and of any
order) except `cross_entropy`, which is one fused primitive: log-sum-exp, the pick of the
target's logit and the reduction in one pass, stable for logits of any size.
"""

from __future__ import annotations

import math
from typing import Any

import autograd_core as ag
from autograd_core.creation import to_array
from autograd_core.ops import common_backend, sum_to
from autograd_core.tensor import Tensor, record

_REDUCTIONS = ("mean", "sum", "none")


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ weight.T + bias`` with weight of shape (out_features, in_features).

    One primitive rather than matmul of a transpose: its weight gradient ``g^T x`` is
    computed in the weight's own layout, where the transpose of ``x^T g`` would be a
    strided view that slows every optimizer pass over it.
    """
    out_features, in_features = weight.shape
    if x.shape[-1:] != (in_features,):
        raise ValueError(f"linear: input shape {x.shape} does not end with in_features={in_features}")
    backend = common_backend("linear", *(t for t in (x, weight, bias) if t is not None))
    _same_dtype("linear", x, weight)
    data = x.data @ weight.data.mT
    if bias is not None:
        data = data + bias.data

    return record("linear", data, backend, (x, weight, bias), _LINEAR_VJPS, saved=(x, weight))


def _linear_grad_weight(ns: Any, g: Any, out: Any, x: Any, weight: Any, bias: Any) -> Any:
    out_features, in_features = weight.shape
    rows_g, rows_x = ns.reshape(g, (-1, out_features)), ns.reshape(x, (-1, in_features))
    if rows_g.shape[0] == 1:  # one row: an outer product, which matmul computes 4x slower
        return ns.matrix_transpose(rows_g) * rows_x
    return ns.matmul(ns.matrix_transpose(rows_g), rows_x)


_LINEAR_VJPS = (
    lambda ns, g, out, x, weight, bias: ns.matmul(g, weight),
    _linear_grad_weight,
    lambda ns, g, out, x, weight, bias: sum_to(ns, g, bias.shape),
)


def relu(x: Tensor) -> Tensor:
    return ag.relu(x)


def tanh(x: Tensor) -> Tensor:
    return ag.tanh(x)


def sigmoid(x: Tensor) -> Tensor:
    return ag.sigmoid(x)


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """GELU as in PyTorch: exact (x * Phi(x), through erf) or ``approximate="tanh"``."""
    if approximate == "tanh":
        return 0.5 * x * (1 + ag.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)))
    if approximate != "none":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', not {approximate!r}")
    return 0.5 * x * (1 + ag.erf(x * (1 / math.sqrt(2))))


def softmax(x: Tensor, dim: int = -1) -> Tensor:
    return ag.softmax(x, dim)


def log_softmax(x: Tensor, dim: int = -1) -> Tensor:
    return ag.log_softmax(x, dim)


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {_REDUCTIONS}, not {reduction!r}")


def _class_targets(logits: Tensor, target: Any, ignore_index: int, caller: str) -> tuple[Any, Any]:
    """The targets as an int array checked against the logits, with ignored rows set to class
    0; and the mask of rows not ignored (None when no row is ignored)."""
    if logits.ndim != 2:
        raise ValueError(f"{caller}: expected input of shape (batch, classes), got {logits.shape}")
    xp, classes = logits.backend.xp, logits.shape[1]
    if isinstance(target, Tensor):
        common_backend(caller, logits, target)
    if isinstance(target, Tensor) and not target.dtype.kind.endswith("integer"):
        raise TypeError(f"{caller}: class indices must be integers, got {target.dtype.name} targets; convert "
                        "them with target.astype(autograd_core.int64) (float targets of the logits' shape, "
                        "which PyTorch takes as class probabilities, are not supported yet)")
    t = target.data if isinstance(target, Tensor) else to_array(target, logits.backend, "int64")
    if tuple(t.shape) != logits.shape[:1]:
        raise ValueError(f"{caller}: target has shape {tuple(t.shape)}, expected ({logits.shape[0]},) class indices")
    if logits.backend.is_traced(t):  # a trace has no values to check or branch on
        valid = t != ignore_index
        return xp.where(valid, t, 0), valid
    can_ignore = 0 <= ignore_index < classes
    if not t.shape[0] or not can_ignore and int(xp.min(t)) >= 0 and int(xp.max(t)) < classes:
        return t, None  # the common case: every target is a class, none is ignored
    valid = t != ignore_index
    safe = xp.where(valid, t, 0)
    if int(xp.min(safe)) < 0 or int(xp.max(safe)) >= classes:
        raise IndexError(f"{caller}: target values must be in [0, {classes}) or equal ignore_index")
    return safe, valid


def _reduce_rows(losses: Tensor, valid: Any, reduction: str) -> Tensor:
    if reduction == "none":
        return losses
    total = ag.sum(losses)
    if reduction == "sum":
        return total
    return total / _count(losses.backend, valid, losses.shape[0], losses.data.dtype)


def _count(backend: Any, valid: Any, rows: int, dtype: Any) -> Any:
    """How many rows a mean divides by: all of them, or those not ignored (a 0-d array)."""
    return rows if valid is None else backend.xp.sum(backend.xp.astype(valid, dtype))


def cross_entropy(input: Tensor, target: Any, reduction: str = "mean", ignore_index: int = -100) -> Tensor:  # noqa: A002
    """Softmax cross-entropy of logits (batch, classes) against class indices (batch,).

    One primitive: the rows' losses (the backend's fused kernel where it has one), the
    reduction, and a VJP of softmax minus one-hot, stable for logits of any size.

    >>> import autograd_core as ag, nn.functional as F
    >>> round(F.cross_entropy(ag.tensor([[0.0, 0.0]]), ag.tensor([1])).item(), 4)
    0.6931
    """
    _check_reduction(reduction)
    safe, valid = _class_targets(input, target, ignore_index, "cross_entropy")
    backend = input.backend
    xp = backend.xp
    rows = backend.cross_entropy_rows(input.data, safe)
    if valid is not None:
        rows = xp.where(valid, rows, 0.0)
    scale = None
    if reduction != "none":
        scale = _count(backend, valid, input.shape[0], rows.dtype)
        rows = xp.sum(rows) if reduction == "sum" else xp.sum(rows) / scale
        scale = 1 if reduction == "sum" else scale
    classes = xp.arange(input.shape[1], dtype=safe.dtype, device=backend.device)
    constants = [None if a is None else Tensor._wrap(a, backend) for a in (safe, classes, valid)]
    return record("cross_entropy", rows, backend, (input, *constants, scale), _CROSS_ENTROPY_VJPS, saved=(input,))


def _cross_entropy_grad(ns: Any, g: Any, out: Any, logits: Any, target: Any, classes: Any, valid: Any,
                        scale: Any) -> Any:
    """d(loss)/d(logits) = (softmax(logits) - one_hot(target)) times the rows' gradient (g per
    row, or g / scale for every row of a reduced loss), zero for the rows ignored."""
    e = ns.exp(logits - ns.max(logits, axis=1, keepdims=True))
    p = e / ns.sum(e, axis=1, keepdims=True)
    row_grad = ns.expand_dims(g if scale is None else ns.broadcast_to(g / scale, target.shape), axis=1)
    if valid is not None:
        row_grad = ns.where(ns.expand_dims(valid, axis=1), row_grad, 0.0)
    return ns.where(classes == ns.expand_dims(target, axis=1), p - 1, p) * row_grad


_CROSS_ENTROPY_VJPS = (_cross_entropy_grad, None, None, None, None)


def nll_loss(input: Tensor, target: Any, reduction: str = "mean", ignore_index: int = -100) -> Tensor:  # noqa: A002
    """Negative log-likelihood of log-probabilities (batch, classes) at the target classes."""
    _check_reduction(reduction)
    safe, valid = _class_targets(input, target, ignore_index, "nll_loss")
    picked = input[_arange_like(input), Tensor._wrap(safe, input.backend)]
    if valid is None:
        return _reduce_rows(-picked, valid, reduction)
    keep = Tensor._wrap(input.backend.xp.astype(valid, input.data.dtype), input.backend)
    return _reduce_rows(-picked * keep, valid, reduction)


def _arange_like(x: Tensor) -> Tensor:
    xp = x.backend.xp
    return Tensor._wrap(xp.arange(x.shape[0], dtype=xp.int64, device=x.backend.device), x.backend)


def mse_loss(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:  # noqa: A002
    _check_reduction(reduction)
    diff = input - target
    if isinstance(target, Tensor) and target.shape != input.shape:
        raise ValueError(f"mse_loss: input shape {input.shape} and target shape {target.shape} differ")
    squared = diff * diff
    return {"mean": ag.mean, "sum": ag.sum, "none": lambda t: t}[reduction](squared)


def binary_cross_entropy_with_logits(input: Tensor, target: Any, weight: Any = None,  # noqa: A002
                                     reduction: str = "mean", pos_weight: Any = None) -> Tensor:
    """Sigmoid plus binary cross-entropy in the stable form
    ``(1 - t) * x + (1 + (p - 1) * t) * (log1p(exp(-|x|)) + relu(-x))``."""
    _check_reduction(reduction)
    log_weight = 1 if pos_weight is None else 1 + (pos_weight - 1) * target
    losses = (1 - target) * input + log_weight * (ag.log1p(ag.exp(-ag.abs(input))) + ag.relu(-input))
    if weight is not None:
        losses = losses * weight
    return {"mean": ag.mean, "sum": ag.sum, "none": lambda t: t}[reduction](losses)


def layer_norm(x: Tensor, normalized_shape: tuple[int, ...] | int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing `normalized_shape` axes with the biased variance, then scale
    by `weight` and shift by `bias`: one primitive (the backend's fused kernel where it has one)."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if x.shape[x.ndim - len(shape) :] != shape:
        raise ValueError(f"layer_norm: input shape {x.shape} does not end with normalized_shape {shape}")
    backend = common_backend("layer_norm", *(t for t in (x, weight, bias) if t is not None))
    _same_dtype("layer_norm", x, weight)
    data = backend.layer_norm(x.data, shape, *(None if t is None else t.data for t in (weight, bias)), eps)
    return record("layer_norm", data, backend, (x, weight, bias, len(shape), eps), _LAYER_NORM_VJPS,
                  saved=(x, weight))


def _same_dtype(layer: str, x: Tensor, weight: Tensor | None) -> None:
    """A layer refuses an input of another float dtype than its weights (as PyTorch does)."""
    if weight is not None and x.dtype != weight.dtype:
        raise TypeError(f"{layer}: the input is {x.dtype.name} but the weights are {weight.dtype.name}; convert "
                        f"one: x.astype(...) or model.to(dtype=...) (model.double() for float64)")


def _normalized(ns: Any, x: Any, dims: int, eps: float) -> tuple[Any, Any, tuple[int, ...]]:
    """x centred and scaled to unit variance over its last `dims` axes; 1/std; those axes."""
    axes = tuple(range(x.ndim - dims, x.ndim))
    centred = x - ns.mean(x, axis=axes, keepdims=True)
    inverse_std = 1 / ns.sqrt(ns.mean(centred * centred, axis=axes, keepdims=True) + eps)
    return centred * inverse_std, inverse_std, axes


def _layer_norm_grad_x(ns: Any, g: Any, out: Any, x: Any, weight: Any, bias: Any, dims: int, eps: float) -> Any:
    normal, inverse_std, axes = _normalized(ns, x, dims, eps)
    g_normal = g if weight is None else g * weight
    return inverse_std * (g_normal - ns.mean(g_normal, axis=axes, keepdims=True)
                          - normal * ns.mean(g_normal * normal, axis=axes, keepdims=True))


_LAYER_NORM_VJPS = (  # the engine sums the weight's and bias's gradients over the leading axes
    _layer_norm_grad_x,
    lambda ns, g, out, x, weight, bias, dims, eps: g * _normalized(ns, x, dims, eps)[0],
    lambda ns, g, out, x, weight, bias, dims, eps: g,
    None,
    None,
)


def embedding(input: Any, weight: Tensor) -> Tensor:  # noqa: A002
    """Rows of `weight` at the integer `input` (any shape); the gradient scatter-adds. Indices
    must lie in [0, num_embeddings): a negative one is an error, as in PyTorch."""
    index = input if isinstance(input, Tensor) else ag.asarray(input, device=weight.device)
    if not index.dtype.kind.endswith("integer"):
        raise TypeError(f"embedding: indices must be integers, got {index.dtype.name}")
    xp = weight.backend.xp
    if math.prod(index.shape) and not weight.backend.is_traced(index.data) and int(xp.min(index.data)) < 0:
        raise IndexError(f"embedding: index {int(xp.min(index.data))} is negative; indices must lie in "
                         f"[0, {weight.shape[0]})")
    return weight[index]


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability `p` and scale the rest by 1/(1-p) (training only)."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    if not training or p == 0:
        return x
    if p == 1:
        return x * 0.0
    if x.backend.is_traced(x.data):
        raise RuntimeError("dropout draws its mask on the host, which a compiled step would freeze; "
                           "run steps with dropout eagerly")
    keep = x.backend.bernoulli(x.shape, 1 - p)
    return x * Tensor._wrap(x.backend.xp.astype(keep, x.data.dtype), x.backend) * (1 / (1 - p))
