"""Functions behind the layers: activations, losses, normalisation, embedding, dropout, and
(defined in their own modules, imported here) attention, convolution, pooling, batch and
group norm, padding and resampling.

Each is composed of autograd_core's public functions and primitives, so its gradient is
derived (and of any order); a few are fused primitives of `autograd_core.primitives` with
VJPs of their own (written once against the namespace, so differentiable again): `linear` and
`layer_norm` (from `nn.functional_base`), `binary_cross_entropy` (PyTorch's finite gradient at
probabilities of 0 and 1) and the common case of `cross_entropy` (log-sum-exp, the pick of the
target's logit and the reduction in one pass, stable for logits of any size).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import autograd_core as ag
from autograd_core import primitives as P
from autograd_core.autodiff.tensor import Tensor
from autograd_core.graph.levels import encloses
from autograd_core.graph.registry import common_backend
from autograd_core.ops.creation import to_array
from autograd_core.primitives import activations
from nn.attention import (
    multi_head_attention_forward as multi_head_attention_forward,
    scaled_dot_product_attention as scaled_dot_product_attention,
)
from nn.convolution import (
    avg_pool1d as avg_pool1d,
    avg_pool2d as avg_pool2d,
    conv1d as conv1d,
    conv2d as conv2d,
    conv_transpose2d as conv_transpose2d,
    max_pool1d as max_pool1d,
    max_pool2d as max_pool2d,
    unfold as unfold,
)
from nn.distance import (
    cosine_similarity as cosine_similarity,
    normalize as normalize,
    pairwise_distance as pairwise_distance,
)
from nn.functional_base import dropout as dropout, layer_norm as layer_norm, linear as linear
from nn.normalization import (
    batch_norm as batch_norm,
    group_norm as group_norm,
)
from nn.spatial import (
    adaptive_avg_pool1d as adaptive_avg_pool1d,
    adaptive_avg_pool2d as adaptive_avg_pool2d,
    dropout1d as dropout1d,
    dropout2d as dropout2d,
    interpolate as interpolate,
    pad as pad,
)

_REDUCTIONS = ("mean", "sum", "none")


def relu(x: Tensor) -> Tensor:
    return ag.relu(x)


def tanh(x: Tensor) -> Tensor:
    return ag.tanh(x)


def sigmoid(x: Tensor) -> Tensor:
    return ag.sigmoid(x)


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """GELU as in PyTorch: exact (``x * Phi(x)``, through erf) or ``approximate="tanh"``; one
    primitive (the backend's fused kernel where it has one).

    >>> import autograd_core as ag, nn.functional as F
    >>> round(F.gelu(ag.asarray([1.0])).item(), 4)
    0.8413
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', not {approximate!r}")
    x = _tensor_argument("gelu", x)
    if x.dtype.kind != "real floating":
        raise TypeError(f"gelu: expected a real floating-point tensor, got {x.dtype.name}")
    return P.gelu.bind(x, approximate)


def softmax(input: Tensor, dim: int | None = -1, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim` (computed in `dtype` when given). The default is the last
    axis; ``dim=None`` takes PyTorch's deprecated implicit choice (with its warning)."""
    x = input if dtype is None else ag.astype(input, dtype)
    return ag.softmax(x, _softmax_dim("softmax", dim, x.ndim, _stacklevel))


def log_softmax(input: Tensor, dim: int | None = -1, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """log(softmax(x)) along `dim`, without overflow; `dim` and `dtype` as in `softmax`."""
    x = input if dtype is None else ag.astype(input, dtype)
    return ag.log_softmax(x, _softmax_dim("log_softmax", dim, x.ndim, _stacklevel))


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """softmax(-x) along `dim` (PyTorch's signature: ``dim=None`` is its deprecated implicit choice).

    >>> import autograd_core as ag, nn.functional as F
    >>> F.softmin(ag.asarray([0.0, 0.0]), dim=0).tolist()
    [0.5, 0.5]
    """
    x = input if dtype is None else ag.astype(input, dtype)
    return ag.softmax(-x, _softmax_dim("softmin", dim, x.ndim, _stacklevel))


def _tensor_argument(op: str, x: Any) -> Tensor:
    """`x`, which must be a tensor."""
    if isinstance(x, Tensor):
        return x
    raise TypeError(f"{op} expects a tensor, got {type(x).__name__}; make one with autograd_core.asarray(...)")


def _softmax_dim(name: str, dim: int | None, ndim: int, stacklevel: int) -> int:
    """`dim`, or PyTorch's legacy choice when it is None: axis 0 of a 0-, 1- or 3-D input, else axis 1."""
    if dim is not None:
        return dim
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


# --- activations ----------------------------------------------------------------------------
# Each is composed of primitives, so its gradient is derived (and of any order). At a kink the
# branch chosen is PyTorch's, so the gradient there is PyTorch's too. `inplace` is accepted for
# PyTorch's signatures; the result is always a new tensor.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else ``negative_slope * x``; the gradient at 0 is the slope, as in PyTorch.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.leaky_relu(ag.asarray([-2.0, 3.0]), 0.25).tolist()
    [-0.5, 3.0]
    """
    return ag.where(input > 0, input, input * negative_slope)


def _elu(x: Tensor, alpha: float, scale: float = 1.0, input_scale: float = 1.0) -> Tensor:
    """PyTorch's ELU family: ``scale * x`` for x > 0, else ``scale * alpha * (exp(input_scale * x) - 1)``,
    with finite gradients for inputs of any size and PyTorch's derivatives at 0."""
    return activations.elu.bind(x, alpha, scale, input_scale)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, else ``alpha * (exp(x) - 1)``; finite gradients for inputs of any size."""
    return _elu(input, alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants of Klambauer et al. (PyTorch's)."""
    return _elu(input, _SELU_ALPHA, _SELU_SCALE)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, else ``alpha * (exp(x / alpha) - 1)``."""
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0 (the input is divided by it)")
    return _elu(input, alpha, input_scale=1 / alpha)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (also called swish)."""
    return input * ag.sigmoid(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``, stable for inputs of any size."""
    return input * ag.tanh(_log1p_exp(input))


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and x itself where ``beta * x > threshold`` (as in PyTorch).

    >>> import autograd_core as ag, nn.functional as F
    >>> F.softplus(ag.asarray([0.0, 1000.0], dtype="float64")).tolist()
    [0.6931471805599453, 1000.0]
    """
    return activations.softplus.bind(input, beta, threshold)


def _log1p_exp(x: Tensor) -> Tensor:
    """``log(1 + exp(x))`` at every x (softplus without its threshold), with first and second
    derivatives that neither overflow nor give nan for logits of any size."""
    return activations.softplus.bind(x, 1.0, math.inf)


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    return input / (ag.abs(input) + 1)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)) = ``-log(1 + exp(-x))``, stable for inputs of any size."""
    return -_log1p_exp(-input)


def _ramp(x: Tensor, low: float, at_low: Any, high: float, at_high: Any, between: Tensor) -> Tensor:
    """`at_low` where x <= low, `at_high` where x >= high, `between` strictly between: PyTorch's
    hard functions, whose gradient at both bounds is that of the outer pieces."""
    return ag.where(x <= low, at_low, ag.where(x >= high, at_high, between))


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """x clamped to [min_val, max_val]; the gradient is 0 at the bounds, as in PyTorch.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.hardtanh(ag.asarray([-3.0, 0.5, 3.0])).tolist()
    [-1.0, 0.5, 1.0]
    """
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) must not be greater than max_val ({max_val})")
    return _ramp(input, min_val, float(min_val), max_val, float(max_val), input)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """x clamped to [0, 6]: ``hardtanh(x, 0, 6)``."""
    return hardtanh(input, 0.0, 6.0)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``: 0 up to -3, 1 from 3, linear between."""
    return _ramp(input, -3.0, 0.0, 3.0, 1.0, (input + 3) / 6)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * hardsigmoid(x)``: 0 up to -3, x from 3 (the gradient at -3 is 0 and at 3 is 1, as in PyTorch)."""
    return input * hardsigmoid(input)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The gated linear unit: ``a * sigmoid(b)`` for the halves a, b of `input` along `dim`.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.glu(ag.asarray([3.0, 0.0])).tolist()
    [1.5]
    """
    if input.ndim == 0:
        raise ValueError("glu: the input must have at least one dimension to split in halves")
    axis = dim % input.ndim
    size = input.shape[axis]
    if size % 2:
        raise ValueError(f"glu: the halved dimension must be even, but dimension {axis} has size {size}")
    first, second = (input[(slice(None),) * axis + (slice(start, start + size // 2),)] for start in (0, size // 2))
    return first * ag.sigmoid(second)


# --- losses ---------------------------------------------------------------------------------
# Each takes PyTorch's arguments in PyTorch's order. The deprecated `size_average` and `reduce`
# keep their places, so that positional calls bind as in PyTorch, but must be left None.
def _check_reduction(reduction: str, allowed: tuple[str, ...] = _REDUCTIONS) -> None:
    if reduction not in allowed:
        raise ValueError(f"reduction must be one of {allowed}, not {reduction!r}")


def _no_legacy(caller: str, size_average: Any, reduce: Any) -> None:
    if size_average is not None or reduce is not None:
        raise ValueError(
            f"{caller}: size_average and reduce are deprecated (in PyTorch too) and not supported; "
            "use reduction='mean', 'sum' or 'none' instead"
        )


def _reduce(losses: Tensor, reduction: str, denominator: Tensor | None = None) -> Tensor:
    """The losses as they are ('none'), summed, or averaged: over `denominator` (the sum of the
    weights) when given, else over their number. A denominator of 0 (every target ignored, or
    weighted 0) gives PyTorch's numbers: a nan loss whose gradient is 0, not nan."""
    if reduction == "none":
        return losses
    if reduction == "sum":
        return ag.sum(losses)
    if denominator is None:
        return ag.mean(losses)
    empty = denominator == 0
    return ag.where(empty, math.nan, ag.sum(losses) / ag.where(empty, 1.0, denominator))


def _operand(value: Any, like: Tensor) -> Tensor:
    """A target or weight as a tensor: a tensor as it is, anything else in `like`'s dtype."""
    return value if isinstance(value, Tensor) else P.constant(to_array(value, like.backend, like.dtype), like.backend)


def _target_of_input_shape(caller: str, input: Tensor, target: Any) -> Tensor:
    """`target` as a tensor (`_operand`) of the input's shape, or a ValueError naming both shapes.
    PyTorch refuses another shape in its binary cross-entropies and, in its pointwise losses,
    broadcasts it with a warning that the result is likely wrong ((N, 1) outputs against (N,)
    targets give an (N, N) loss); every loss here with that rule refuses it through this check."""
    target = _operand(target, input)
    if target.shape != input.shape:
        raise ValueError(
            f"{caller}: target shape {target.shape} differs from input shape {input.shape}; give both the same "
            "shape (for an (N, 1) output and (N,) targets, squeeze the output or reshape the targets)"
        )
    return target


def _class_axis(input: Tensor, caller: str) -> int:
    """Where the classes are: axis 1 of (N, C, d1, ...) inputs, axis 0 of a (C,) one."""
    if input.ndim == 0:
        raise ValueError(f"{caller}: expected input of shape (C,), (N, C) or (N, C, d1, ...), got a 0-d tensor")
    return 1 if input.ndim > 1 else 0


def _class_targets(input: Tensor, target: Any, ignore_index: int, caller: str) -> tuple[Any, Any]:
    """The class-index targets as an int64 array checked against the input (shape (N, d1, ...)
    for an (N, C, d1, ...) input, () for a (C,) one), ignored ones set to class 0; and the mask
    of the targets not ignored (None when none is)."""
    axis = _class_axis(input, caller)
    xp, classes = input.backend.xp, input.shape[axis]
    if isinstance(target, Tensor):
        common_backend(caller, input, target)
    if isinstance(target, Tensor) and not target.dtype.kind.endswith("integer"):
        hint = ", or class probabilities as a float target of the input's shape" if caller == "cross_entropy" else ""
        raise TypeError(
            f"{caller}: class indices must be integers, got {target.dtype.name} targets of shape "
            f"{target.shape}; convert them with target.astype(autograd_core.int64){hint}"
        )
    t = target.array if isinstance(target, Tensor) else to_array(target, input.backend, "int64")
    t = xp.astype(t, input.backend.dtype("int64"), copy=False)
    expected = input.shape[:axis] + input.shape[axis + 1 :]
    if tuple(t.shape) != expected:
        raise ValueError(
            f"{caller}: target has shape {tuple(t.shape)}, expected {expected} class indices for an "
            f"input of shape {input.shape}"
        )
    if input.backend.is_traced(t):  # a trace has no values to check or branch on
        valid = t != ignore_index
        return xp.where(valid, t, 0), valid
    can_ignore = 0 <= ignore_index < classes
    if not math.prod(t.shape) or not can_ignore and _in_range(input.backend, t, classes):
        return t, None  # the common case: every target is a class, none is ignored
    valid = t != ignore_index
    safe = xp.where(valid, t, 0)
    if not _in_range(input.backend, safe, classes):
        raise IndexError(f"{caller}: target values must be in [0, {classes}) or equal ignore_index ({ignore_index})")
    return safe, valid


def _in_range(backend: Any, index: Any, n: int) -> bool:
    """Whether every value of the non-empty integer array `index` lies in [0, n)."""
    low, high = backend.value_range(index)
    return low >= 0 and high < n


def _class_weight(input: Tensor, weight: Any, caller: str) -> Tensor:
    """`weight` (one per class) as a tensor shaped to broadcast along the input's class axis."""
    axis = _class_axis(input, caller)
    classes = input.shape[axis]
    weight = _operand(weight, input)
    if weight.shape != (classes,):
        raise ValueError(f"{caller}: weight has shape {weight.shape}, expected one weight per class: ({classes},)")
    return ag.reshape(weight, (classes,) + (1,) * (input.ndim - 2)) if input.ndim > 2 else weight


def _nll(
    log_probs: Tensor, target: Any, weight: Any, ignore_index: int, caller: str
) -> tuple[Tensor, Tensor | None, Tensor | None]:
    """-log_probs at the target classes, times the targets' class weights and 0 where ignored;
    the mask of the targets not ignored, and the sum of the targets' weights (the denominator of
    a mean; None, with the mask, when every target counts once)."""
    safe, valid = _class_targets(log_probs, target, ignore_index, caller)
    backend, xp, axis = log_probs.backend, log_probs.backend.xp, _class_axis(log_probs, caller)
    index = P.constant(xp.expand_dims(safe, axis=axis), backend)
    losses = -ag.squeeze(ag.take_along_axis(log_probs, index, axis=axis), axis=axis)
    if weight is None and valid is None:
        return losses, None, None
    if weight is None:
        per_target = xp.astype(valid, log_probs.array.dtype)
    else:
        classes = ag.reshape(_class_weight(log_probs, weight, caller), (-1,)).array
        per_target = xp.reshape(xp.take(classes, xp.reshape(safe, (-1,)), axis=0), safe.shape)
        per_target = per_target if valid is None else xp.where(valid, per_target, 0.0)
    weights = P.constant(per_target, backend)
    return losses * weights, None if valid is None else P.constant(valid, backend), ag.sum(weights)


def cross_entropy(
    input: Tensor,
    target: Any,
    weight: Any = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Softmax cross-entropy of logits (C,), (N, C) or (N, C, d1, ...) (classes on axis 1) against
    class indices (the input's shape without the class axis) or class probabilities (a float
    target of the input's shape), as PyTorch computes it: per-class `weight` (a mean divides by
    the targets' summed weights), `ignore_index` and `label_smoothing`.

    Class indices without weight or smoothing take one fused primitive (the backend's kernel
    where it has one): log-sum-exp, the pick of the target's logit and the reduction in one
    pass, with a VJP of softmax minus one-hot, stable for logits of any size.

    >>> import autograd_core as ag, nn.functional as F
    >>> round(F.cross_entropy(ag.tensor([[0.0, 0.0]]), ag.tensor([1])).item(), 4)
    0.6931
    >>> round(F.cross_entropy(ag.tensor([[0.0, 0.0]]), ag.tensor([[0.5, 0.5]])).item(), 4)
    0.6931
    """
    _check_reduction(reduction)
    _no_legacy("cross_entropy", size_average, reduce)
    if not 0 <= label_smoothing <= 1:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    axis = _class_axis(input, "cross_entropy")
    if not isinstance(target, Tensor):
        target = P.constant(to_array(target, input.backend), input.backend)
    if target.shape == input.shape:
        return _cross_entropy_probabilities(input, target, weight, ignore_index, reduction, label_smoothing)
    if weight is None and not label_smoothing:
        return _cross_entropy_fused(input, target, ignore_index, reduction)
    log_probs = ag.log_softmax(input, axis=axis)
    losses, valid, weight_sum = _nll(log_probs, target, weight, ignore_index, "cross_entropy")
    loss = _reduce(losses, reduction, weight_sum)
    if not label_smoothing:
        return loss
    # PyTorch's smoothing term: -log p summed over the classes (weighted), 0 where ignored
    smooth = -ag.sum(
        log_probs if weight is None else log_probs * _class_weight(input, weight, "cross_entropy"), axis=axis
    )
    if valid is not None:
        smooth = ag.where(valid, smooth, 0.0)
    return (1 - label_smoothing) * loss + label_smoothing / input.shape[axis] * _reduce(smooth, reduction, weight_sum)


def _cross_entropy_probabilities(
    input: Tensor,
    target: Tensor,
    weight: Any,
    ignore_index: int,
    reduction: str,
    label_smoothing: float,
) -> Tensor:
    """-sum over the classes of weight * target * log_softmax(input); a mean divides by the
    number of positions (the input's size over the classes), as PyTorch's does."""
    if not ag.isdtype(target.dtype, "real floating"):
        raise TypeError(
            f"cross_entropy: a target of the input's shape {input.shape} holds class probabilities "
            f"and must be floating-point, got {target.dtype.name}; class indices have the input's "
            "shape without the class axis"
        )
    if ignore_index >= 0:
        raise ValueError("cross_entropy: ignore_index is not supported with class-probability targets")
    axis = _class_axis(input, "cross_entropy")
    if label_smoothing:
        target = target * (1 - label_smoothing) + label_smoothing / input.shape[axis]
    terms = ag.log_softmax(input, axis=axis) * target
    if weight is not None:
        terms = terms * _class_weight(input, weight, "cross_entropy")
    return _reduce(-ag.sum(terms, axis=axis), reduction)


def _cross_entropy_fused(input: Tensor, target: Tensor, ignore_index: int, reduction: str) -> Tensor:
    """Class-index cross-entropy through the fused primitive on (rows, classes): an input of
    another rank has its classes moved last and every other position made a row. float16
    logits are computed in float32, as PyTorch's."""
    if input.dtype == "float16":
        loss = _cross_entropy_fused(ag.astype(input, "float32"), target, ignore_index, reduction)
        return ag.astype(loss, "float16")
    safe, valid = _class_targets(input, target, ignore_index, "cross_entropy")
    rows, targets, keep = input, safe, valid
    if input.ndim != 2:
        xp, axis = input.backend.xp, _class_axis(input, "cross_entropy")
        rows = ag.reshape(ag.moveaxis(input, axis, -1), (math.prod(safe.shape), input.shape[axis]))
        targets, keep = xp.reshape(safe, (-1,)), None if valid is None else xp.reshape(valid, (-1,))
    if rows.shape[0] == 0:  # no rows (the kernels' max would have nothing to take): 0 or nan, as PyTorch
        loss = _reduce(ag.sum(rows, axis=1), reduction)
    else:
        loss = P.fused_cross_entropy(rows, targets, keep, reduction)
    return ag.reshape(loss, tuple(safe.shape)) if reduction == "none" else loss


def nll_loss(
    input: Tensor,
    target: Any,
    weight: Any = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood of log-probabilities (C,), (N, C) or (N, C, d1, ...) at the target
    classes, with PyTorch's per-class `weight` (a mean divides by the targets' summed weights)."""
    _check_reduction(reduction)
    _no_legacy("nll_loss", size_average, reduce)
    losses, _, weight_sum = _nll(input, target, weight, ignore_index, "nll_loss")
    return _reduce(losses, reduction, weight_sum)


def _pointwise_loss(
    caller: str,
    input: Tensor,
    target: Any,
    reduction: str,
    pointwise: Callable[[Tensor], Tensor],
    weight: Any = None,
    mean_by_weight: bool = True,
) -> Tensor:
    """``pointwise(input - target)``, times `weight` (of the input's shape) if given, reduced; a
    weighted mean divides by the weights' sum (`mean_by_weight`, as PyTorch's l1 and mse) or by
    the count (as its huber)."""
    _check_reduction(reduction)
    losses = pointwise(input - _target_of_input_shape(caller, input, target))
    if weight is None:
        return _reduce(losses, reduction)
    weight = _operand(weight, input)
    if weight.shape != input.shape:
        raise ValueError(f"{caller}: weight has shape {weight.shape}, expected the input's shape {input.shape}")
    return _reduce(losses * weight, reduction, ag.sum(weight) if mean_by_weight else None)


def mse_loss(
    input: Tensor,
    target: Any,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    weight: Any = None,
) -> Tensor:
    """The squared error ``(input - target)**2``, weighted elementwise if `weight` is given."""
    _no_legacy("mse_loss", size_average, reduce)
    return _pointwise_loss("mse_loss", input, target, reduction, lambda d: d * d, weight)


def l1_loss(
    input: Tensor,
    target: Any,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    weight: Any = None,
) -> Tensor:
    """The absolute error ``|input - target|`` (gradient 0 where they are equal, as in PyTorch)."""
    _no_legacy("l1_loss", size_average, reduce)
    return _pointwise_loss("l1_loss", input, target, reduction, ag.abs, weight)


def smooth_l1_loss(
    input: Tensor,
    target: Any,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta``, for d = input - target
    (the l1 loss when beta is 0).

    >>> import autograd_core as ag, nn.functional as F
    >>> F.smooth_l1_loss(ag.asarray([0.5, 3.0]), ag.asarray([0.0, 0.0]), reduction="none").tolist()
    [0.125, 2.5]
    """
    _no_legacy("smooth_l1_loss", size_average, reduce)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must not be negative, got {beta}")
    if beta == 0:
        return _pointwise_loss("smooth_l1_loss", input, target, reduction, ag.abs)
    return _pointwise_loss(
        "smooth_l1_loss",
        input,
        target,
        reduction,
        lambda d: ag.where(ag.abs(d) < beta, 0.5 * d * d / beta, ag.abs(d) - 0.5 * beta),
    )


def huber_loss(
    input: Tensor,
    target: Any,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Any = None,
) -> Tensor:
    """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``, for d = input - target;
    a weighted mean divides by the count, as PyTorch's does."""
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    return _pointwise_loss(
        "huber_loss",
        input,
        target,
        reduction,
        lambda d: ag.where(ag.abs(d) < delta, 0.5 * d * d, delta * (ag.abs(d) - 0.5 * delta)),
        weight,
        mean_by_weight=False,
    )


def binary_cross_entropy(
    input: Tensor,
    target: Any,
    weight: Any = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``-(t * log(x) + (1 - t) * log(1 - x))`` for probabilities x in [0, 1], as PyTorch: the logs
    clamped at -100, so x of exactly 0 or 1 gives a finite loss and gradient.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.binary_cross_entropy(ag.asarray([0.0, 0.5]), ag.asarray([1.0, 1.0]), reduction="none").tolist()
    [100.0, 0.6931...]
    """
    _check_reduction(reduction)
    _no_legacy("binary_cross_entropy", size_average, reduce)
    target = _target_of_input_shape("binary_cross_entropy", input, target)
    backend = common_backend("binary_cross_entropy", input, target)
    x, t = input, target
    if x.dtype != t.dtype:
        dtype = ag.result_type(x.dtype, t.dtype)
        x, t = ag.astype(x, dtype, copy=False), ag.astype(t, dtype, copy=False)
    xp = backend.xp
    if math.prod(x.shape) and not backend.is_traced(x.array) and not bool(xp.all((x.array >= 0) & (x.array <= 1))):
        raise ValueError(
            "binary_cross_entropy: input values must be probabilities in [0, 1]; for logits use "
            "binary_cross_entropy_with_logits"
        )
    losses = P.binary_cross_entropy.bind(x, t)
    return _reduce(losses if weight is None else losses * weight, reduction)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Any,
    weight: Any = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    pos_weight: Any = None,
) -> Tensor:
    """Sigmoid plus binary cross-entropy in the stable form
    ``(1 - t) * x + (1 + (p - 1) * t) * log(1 + exp(-x))``; the gradient is PyTorch's
    ``sigmoid(x) - t`` (with pos_weight, weighted) at every x, 0 included."""
    _check_reduction(reduction)
    _no_legacy("binary_cross_entropy_with_logits", size_average, reduce)
    target = _target_of_input_shape("binary_cross_entropy_with_logits", input, target)
    log_weight = 1 if pos_weight is None else 1 + (pos_weight - 1) * target
    losses = (1 - target) * input + log_weight * _log1p_exp(-input)
    return _reduce(losses if weight is None else losses * weight, reduction)


def kl_div(
    input: Tensor,
    target: Any,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """The pointwise KL divergence ``target * (log(target) - input)`` of log-probabilities `input`
    (0 where target is 0; ``exp(target) * (target - input)`` when `log_target`). 'mean' averages
    over every element (with PyTorch's warning); 'batchmean' divides the sum by the batch size.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.kl_div(ag.asarray([[0.0, 0.0]]), ag.asarray([[0.5, 0.5]]), reduction="batchmean").item()
    -0.6931...
    """
    _check_reduction(reduction, (*_REDUCTIONS, "batchmean"))
    _no_legacy("kl_div", size_average, reduce)
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
            stacklevel=2,
        )
    target = _operand(target, input)
    try:  # another shape broadcasts, as PyTorch's does
        np.broadcast_shapes(input.shape, target.shape)
    except ValueError:
        raise ValueError(
            f"kl_div: target shape {target.shape} does not broadcast with input shape {input.shape}"
        ) from None
    # without log_target PyTorch's formula, so its gradients too: 0 * log(0) is 0
    losses = ag.exp(target) * (target - input) if log_target else ag.special.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return ag.sum(losses) / input.shape[0] if input.ndim else ag.sum(losses)
    return _reduce(losses, reduction)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot rows of shape ``(*tensor.shape, num_classes)`` for the integer class indices
    `tensor` (num_classes=-1: one more than the largest index); outside the graph.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.one_hot(ag.asarray([0, 2]), 3).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    tensor = _tensor_argument("one_hot", tensor)
    if not tensor.dtype.kind.endswith("integer"):
        raise TypeError(f"one_hot: class indices must be integers, got {tensor.dtype.name}")
    backend, xp = tensor.backend, tensor.backend.xp
    int64 = backend.dtype("int64")
    data = xp.astype(tensor.array, int64)
    checkable = math.prod(tensor.shape) and not backend.is_traced(data)
    if num_classes == -1:
        if not checkable:
            raise ValueError(
                "one_hot: cannot infer the number of classes from an empty (or traced) tensor; pass num_classes"
            )
        num_classes = backend.value_range(data)[1] + 1
    if checkable and not _in_range(backend, data, num_classes):
        raise IndexError(f"one_hot: class values must lie in [0, num_classes={num_classes})")
    classes = xp.arange(num_classes, dtype=int64, device=backend.device)
    return P.constant(xp.astype(xp.expand_dims(data, axis=-1) == classes, int64), backend)


def embedding(input: Any, weight: Tensor) -> Tensor:
    """Rows of `weight` at the integer `input` (any shape); the gradient scatter-adds. Indices
    must lie in [0, num_embeddings): a negative one is an error, as in PyTorch."""
    index = input if isinstance(input, Tensor) else ag.asarray(input, device=weight.device)
    if not index.dtype.kind.endswith("integer"):
        raise TypeError(f"embedding: indices must be integers, got {index.dtype.name}")
    rows = weight.shape[0]
    if index.backend is not weight.backend and not encloses(index.backend, weight.backend):
        raise RuntimeError(
            f"embedding: the indices are on {index.backend}, the weight on {weight.backend}; move the "
            f"indices with .to({weight.backend.name!r})"
        )
    backend = index.backend  # the weight's, or that of a vmap batching the indices
    if math.prod(index.shape) and not backend.is_traced(index.array):
        low, high = backend.value_range(index.array)
        if low < 0 or high >= rows:
            wrong = f"{low} is negative" if low < 0 else f"{high} is past the end"
            raise IndexError(f"embedding: index {wrong}; indices must lie in [0, {rows})")
    if backend is weight.backend:  # the bounds are checked above
        picked = P.take.bind(weight, backend.xp.reshape(index.array, (-1,)), 0)
    else:
        picked = ag.take(weight, ag.reshape(index, (-1,)), axis=0)
    return ag.reshape(picked, (*index.shape, *weight.shape[1:]))
