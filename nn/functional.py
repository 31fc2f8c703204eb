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
from autograd_core.primitives import activations, losses as loss_kernels
from nn.attention import (
    multi_head_attention_forward as multi_head_attention_forward,
    scaled_dot_product_attention as scaled_dot_product_attention,
)
from nn.convolution import (
    avg_pool1d as avg_pool1d,
    avg_pool2d as avg_pool2d,
    conv1d as conv1d,
    conv2d as conv2d,
    conv3d as conv3d,
    conv_transpose1d as conv_transpose1d,
    conv_transpose2d as conv_transpose2d,
    conv_transpose3d as conv_transpose3d,
    max_pool1d as max_pool1d,
    max_pool2d as max_pool2d,
    unfold as unfold,
)
from nn.distance import (
    cosine_similarity as cosine_similarity,
    normalize as normalize,
    pairwise_distance as pairwise_distance,
    pdist as pdist,
)
from nn.functional_base import (
    check_mask_is_drawn_per_call,
    dropout as dropout,
    layer_norm as layer_norm,
    linear as linear,
)
from nn.normalization import (
    batch_norm as batch_norm,
    group_norm as group_norm,
    instance_norm as instance_norm,
    local_response_norm as local_response_norm,
    rms_norm as rms_norm,
)
from nn.spatial import (
    adaptive_avg_pool1d as adaptive_avg_pool1d,
    adaptive_avg_pool2d as adaptive_avg_pool2d,
    adaptive_avg_pool3d as adaptive_avg_pool3d,
    adaptive_max_pool1d as adaptive_max_pool1d,
    adaptive_max_pool2d as adaptive_max_pool2d,
    adaptive_max_pool3d as adaptive_max_pool3d,
    avg_pool3d as avg_pool3d,
    dropout1d as dropout1d,
    dropout2d as dropout2d,
    fractional_max_pool2d as fractional_max_pool2d,
    fractional_max_pool3d as fractional_max_pool3d,
    grid_sample as grid_sample,
    interpolate as interpolate,
    max_pool3d as max_pool3d,
    max_unpool1d as max_unpool1d,
    max_unpool2d as max_unpool2d,
    max_unpool3d as max_unpool3d,
    pad as pad,
    upsample as upsample,
    upsample_bilinear as upsample_bilinear,
    upsample_nearest as upsample_nearest,
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


def embedding(
    input: Any,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of `weight` at the integer `input` (any shape); the gradient scatter-adds. Indices
    must lie in [0, num_embeddings): a negative one is an error, as in PyTorch. As PyTorch's:
    the row `padding_idx` gets no gradient; with `max_norm`, each row looked up whose
    `norm_type`-norm exceeds it is first scaled in place to that norm; with
    `scale_grad_by_freq`, each row's gradient is divided by how often the batch names it.

    >>> import autograd_core as ag
    >>> w = ag.tensor([[3.0, 4.0], [1.0, 0.0]], requires_grad=True)
    >>> embedding(ag.asarray([0, 1, 1]), w, padding_idx=1).sum().backward()
    >>> w.grad.tolist()
    [[1.0, 1.0], [0.0, 0.0]]
    """
    if sparse:
        raise ValueError("embedding: sparse gradients are not supported (tensors here are dense); use sparse=False")
    index = input if isinstance(input, Tensor) else ag.asarray(input, device=weight.device)
    backend = _checked_backend(index, weight)
    if max_norm is not None:
        _renorm_rows(weight, index, max_norm, norm_type)
    picked = _looked_up(index, weight, backend)
    if scale_grad_by_freq:
        counts = ag.take(_row_counts(index, weight.shape[0]), ag.reshape(index, (-1,)), axis=0)
        scale = ag.reshape(1.0 / ag.astype(counts, weight.dtype), (*index.shape, *(1,) * (weight.ndim - 1)))
        picked = picked * scale + (picked * (1 - scale)).detach()  # the value as it is, the gradient divided
    if padding_idx is not None:
        keep = ag.reshape(index != padding_idx % weight.shape[0], (*index.shape, *(1,) * (weight.ndim - 1)))
        picked = ag.where(keep, picked, picked.detach())
    return picked


def _row_counts(index: Tensor, rows: int) -> Tensor:
    """How many times each of `rows` rows is named by `index`."""
    flat = ag.reshape(index, (-1,))
    return P.index_add.bind(ag.ones(flat.shape, dtype="int64", device=index.device), (rows,), 0, flat.array)


@ag.no_grad()
def _renorm_rows(weight: Tensor, index: Tensor, max_norm: float, norm_type: float) -> None:
    """Scale in place each row of `weight` that `index` names whose norm exceeds `max_norm`
    (to max_norm / (norm + 1e-7) of itself, PyTorch's ``embedding_renorm_``)."""
    named = _row_counts(index, weight.shape[0]) > 0
    norms = ag.linalg.vector_norm(weight, ord=norm_type, axis=tuple(range(1, weight.ndim)), keepdims=True)
    shape = (weight.shape[0], *(1,) * (weight.ndim - 1))
    scale = ag.where(ag.reshape(named, shape) & (norms > max_norm), max_norm / (norms + 1e-7), 1.0)
    weight._take_array((weight * scale).array, counted=True)


def _checked_backend(index: Tensor, weight: Tensor) -> Any:
    """The backend the lookup runs on (the weight's, or a vmap's batching the indices), once
    the indices are known to be integers in [0, rows) on it."""
    if not index.dtype.kind.endswith("integer"):
        raise TypeError(f"embedding: indices must be integers, got {index.dtype.name}")
    rows = weight.shape[0]
    if index.backend is not weight.backend and not encloses(index.backend, weight.backend):
        raise RuntimeError(
            f"embedding: the indices are on {index.backend}, the weight on {weight.backend}; move the "
            f"indices with .to({weight.backend.name!r})"
        )
    backend = index.backend
    if math.prod(index.shape) and not backend.is_traced(index.array):
        low, high = backend.value_range(index.array)
        if low < 0 or high >= rows:
            wrong = f"{low} is negative" if low < 0 else f"{high} is past the end"
            raise IndexError(f"embedding: index {wrong}; indices must lie in [0, {rows})")
    return backend


def _looked_up(index: Tensor, weight: Tensor, backend: Any) -> Tensor:
    if backend is weight.backend:  # the bounds are checked
        picked = P.take.bind(weight, backend.xp.reshape(index.array, (-1,)), 0)
    else:
        picked = ag.take(weight, ag.reshape(index, (-1,)), axis=0)
    return ag.reshape(picked, (*index.shape, *weight.shape[1:]))


# --- shrinkage, thresholds and parametric activations -------------------------------------------
def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.tanhshrink(ag.asarray([0.0])).tolist()
    [0.0]
    """
    return input - ag.tanh(input)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where ``x > threshold``, else `value` (the gradient is 0 there, as in PyTorch).

    >>> import autograd_core as ag, nn.functional as F
    >>> F.threshold(ag.asarray([0.5, 2.0]), 1.0, -1.0).tolist()
    [-1.0, 2.0]
    """
    return ag.where(input > threshold, input, ag.astype(ag.full_like(input, value), input.dtype))


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above `lambd`, ``x + lambd`` below ``-lambd``, else 0.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.softshrink(ag.asarray([-2.0, 0.25, 2.0])).tolist()
    [-1.5, 0.0, 1.5]
    """
    if lambd < 0:
        raise ValueError(f"softshrink: lambd must be non-negative, got {lambd}")
    return ag.where(input > lambd, input - lambd, ag.where(input < -lambd, input + lambd, ag.zeros_like(input)))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where ``|x| > lambd``, else 0.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.hardshrink(ag.asarray([-2.0, 0.25, 2.0])).tolist()
    [-2.0, 0.0, 2.0]
    """
    return ag.where((input > lambd) | (input < -lambd), input, ag.zeros_like(input))


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, else ``weight * x``: `weight` holds one slope, or one per channel (axis 1).

    >>> import autograd_core as ag, nn.functional as F
    >>> F.prelu(ag.asarray([[-2.0, 3.0]]), ag.asarray([0.25])).tolist()
    [[-0.5, 3.0]]
    """
    slopes = weight.numel()
    channels = input.shape[1] if input.ndim >= 2 else 1
    if slopes != 1 and slopes != channels:
        raise ValueError(
            f"prelu: the weight has {slopes} slopes; give one, or one per channel ({channels}) of an input "
            f"of shape {input.shape}"
        )
    if weight.ndim > 1 and slopes > 1:
        raise ValueError(f"prelu: the weight must be 0-D or 1-D, got shape {weight.shape}")
    slope = ag.reshape(weight, (-1,) + (1,) * (input.ndim - 2) if input.ndim >= 2 else ())
    return ag.where(input > 0, input, slope * input)


def rrelu(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, inplace: bool = False
) -> Tensor:
    """The randomised leaky ReLU: in training, each negative x times a slope drawn from
    U(lower, upper); in evaluation, the leaky ReLU of the mean slope ``(lower + upper) / 2``.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.rrelu(ag.asarray([-3.0, 2.0]), 0.25, 0.75).tolist()
    [-1.5, 2.0]
    """
    if lower > upper:
        raise ValueError(f"rrelu: lower ({lower}) must not exceed upper ({upper})")
    if not training:
        return leaky_relu(input, (lower + upper) / 2)
    check_mask_is_drawn_per_call(input)
    slopes = P.constant(input.backend.uniform(input.shape, lower, upper, input.array.dtype), input.backend)
    return ag.where(input >= 0, input, input * slopes)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x1^T W_o x2 + b_o`` for each output feature o: inputs (*, in1) and (*, in2), `weight`
    (out, in1, in2), `bias` (out,).

    >>> import autograd_core as ag, nn.functional as F
    >>> F.bilinear(ag.ones(2, 3), ag.ones(2, 4), ag.ones(5, 3, 4)).shape
    (2, 5)
    """
    if weight.ndim != 3 or input1.shape[-1:] != weight.shape[1:2] or input2.shape[-1:] != weight.shape[2:]:
        raise ValueError(
            f"bilinear: expected inputs (*, in1), (*, in2) and a weight (out, in1, in2), got {input1.shape}, "
            f"{input2.shape} and {weight.shape}"
        )
    if input1.shape[:-1] != input2.shape[:-1]:
        raise ValueError(f"bilinear: the inputs' batch shapes differ: {input1.shape} and {input2.shape}")
    out = ag.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


# --- rearranging channels -----------------------------------------------------------------------
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) to (*, C, H r, W r): each group of r^2 channels becomes r x r blocks.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.pixel_shuffle(ag.ones(1, 8, 2, 3), 2).shape
    (1, 2, 4, 6)
    """
    r = upscale_factor
    if input.ndim < 3 or r <= 0 or input.shape[-3] % (r * r):
        raise ValueError(
            f"pixel_shuffle: expected an input (*, C * {r}**2, H, W) and a positive factor, got shape {input.shape}"
        )
    *lead, c, h, w = input.shape
    x = ag.reshape(input, (*lead, c // (r * r), r, r, h, w))
    n = len(lead)
    x = ag.permute_dims(x, (*range(n), n, n + 3, n + 1, n + 4, n + 2))
    return ag.reshape(x, (*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) to (*, C r^2, H, W), the inverse of `pixel_shuffle`.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.pixel_unshuffle(ag.ones(1, 2, 4, 6), 2).shape
    (1, 8, 2, 3)
    """
    r = downscale_factor
    if input.ndim < 3 or r <= 0 or input.shape[-2] % r or input.shape[-1] % r:
        raise ValueError(
            f"pixel_unshuffle: expected an input (*, C, H * {r}, W * {r}) and a positive factor, "
            f"got shape {input.shape}"
        )
    *lead, c, h, w = input.shape
    x = ag.reshape(input, (*lead, c, h // r, r, w // r, r))
    n = len(lead)
    x = ag.permute_dims(x, (*range(n), n, n + 2, n + 4, n + 1, n + 3))
    return ag.reshape(x, (*lead, c * r * r, h // r, w // r))


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """The channels (axis 1) of (N, C, *) dealt out from `groups` groups in turn (ShuffleNet's).

    >>> import autograd_core as ag, nn.functional as F
    >>> F.channel_shuffle(ag.reshape(ag.arange(4.0), (1, 4, 1)), 2)[0, :, 0].tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    if input.ndim < 3 or groups <= 0 or input.shape[1] % groups:
        raise ValueError(
            f"channel_shuffle: expected an input (N, C, *) with C divisible by groups={groups}, got shape {input.shape}"
        )
    n, c, *rest = input.shape
    x = ag.reshape(input, (n, groups, c // groups, *rest))
    return ag.reshape(ag.swapaxes(x, 1, 2), input.shape)


# --- more dropout ---------------------------------------------------------------------------------
_SELU_NEGATIVE = _SELU_ALPHA * _SELU_SCALE  # the value SELU saturates to at -inf, negated


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability `p`, scaling the
    others by 1/(1-p), in training only.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.dropout3d(ag.ones(2, 3, 1, 1, 1), training=False).shape
    (2, 3, 1, 1, 1)
    """
    if input.ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: received a {input.ndim}-D input; dropout3d is for 4-D (C, D, H, W) or 5-D "
            "(N, C, D, H, W) inputs (PyTorch deprecates the others); use dropout instead",
            stacklevel=2,
        )
    x = input if input.ndim == 5 else ag.expand_dims(input, axis=0)
    out = _feature_dropout(x, p, training)
    return out if input.ndim == 5 else out[0]


def _feature_dropout(x: Tensor, p: float, training: bool) -> Tensor:
    """`x` (N, C, *) with its (N, C) slices dropped as `F.dropout` drops elements."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    if not training or p == 0:
        return x
    check_mask_is_drawn_per_call(x)
    return x * dropout(ag.ones(x.shape[:2] + (1,) * (x.ndim - 2), dtype=x.dtype, device=x.device), p)


def _alpha_dropout(x: Tensor, p: float, training: bool, shape: tuple[int, ...]) -> Tensor:
    """SELU-preserving dropout: dropped values (a mask of `shape`, broadcast) become SELU's
    saturation value, and the result is scaled and shifted back to zero mean, unit variance."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    if not training or p == 0 or not x.numel():
        return x
    if p == 1:
        return x * 0.0
    check_mask_is_drawn_per_call(x)
    alpha = _SELU_NEGATIVE
    a = 1 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    keep = P.constant(x.backend.xp.astype(x.backend.bernoulli(shape, 1 - p), x.array.dtype), x.backend)
    return x * (keep * a) + ((keep - 1) * (alpha * a) + alpha * a * p)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: each element is replaced, with probability `p`, by SELU's
    saturation value, and the result scaled and shifted to keep zero mean and unit variance.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.alpha_dropout(ag.ones(3), training=False).tolist()
    [1.0, 1.0, 1.0]
    """
    return _alpha_dropout(input, p, training, input.shape)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """`alpha_dropout` of whole channels: one draw per (N, C) slice of an (N, C, *) input."""
    if training and p and input.ndim < 2:
        raise ValueError(f"feature_alpha_dropout: expected an input (N, C, *) of 2 or more dims, got {input.shape}")
    return _alpha_dropout(input, p, training, input.shape[:2] + (1,) * (input.ndim - 2))


# --- margin, ranking and likelihood losses --------------------------------------------------------
def _clamp_min0(x: Tensor) -> Tensor:
    """``max(x, 0)`` with PyTorch's clamp_min gradient: 1 at 0."""
    return ag.where(x >= 0, x, ag.zeros_like(x))


def _loss_reduction(caller: str, reduction: str, size_average: Any = None, reduce: Any = None) -> None:
    _check_reduction(reduction)
    _no_legacy(caller, size_average, reduce)


def soft_margin_loss(
    input: Tensor, target: Any, size_average: Any = None, reduce: Any = None, reduction: str = "mean"
) -> Tensor:
    """``log(1 + exp(-y x))`` for targets y of +-1.

    >>> import autograd_core as ag, nn.functional as F
    >>> round(F.soft_margin_loss(ag.asarray([0.0]), ag.asarray([1.0])).item(), 4)
    0.6931
    """
    _loss_reduction("soft_margin_loss", reduction, size_average, reduce)
    return _reduce(_log1p_exp(-input * _operand(target, input)), reduction)


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Any,
    margin: float = 0.0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, -y (x1 - x2) + margin)``: y = 1 asks x1 to rank above x2, y = -1 below.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.margin_ranking_loss(ag.asarray([1.0]), ag.asarray([2.0]), ag.asarray([1.0])).item()
    1.0
    """
    _loss_reduction("margin_ranking_loss", reduction, size_average, reduce)
    target = _operand(target, input1)
    if not input1.ndim == input2.ndim == target.ndim:
        raise ValueError(
            f"margin_ranking_loss: input1 {input1.shape}, input2 {input2.shape} and target {target.shape} "
            "must have the same number of dimensions"
        )
    return _reduce(_clamp_min0(-target * (input1 - input2) + margin), reduction)


def hinge_embedding_loss(
    input: Tensor,
    target: Any,
    margin: float = 1.0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """x where y = 1 and ``max(0, margin - x)`` where y = -1 (PyTorch's sum of both terms for
    targets other than +-1).

    >>> import autograd_core as ag, nn.functional as F
    >>> F.hinge_embedding_loss(ag.asarray([0.25, 0.25]), ag.asarray([1.0, -1.0]), reduction="none").tolist()
    [0.25, 0.75]
    """
    _loss_reduction("hinge_embedding_loss", reduction, size_average, reduce)
    target = _operand(target, input)
    zeros = ag.zeros_like(input)
    margin_term = ag.where(target != 1, _clamp_min0(margin - input), zeros)
    return _reduce(margin_term + ag.where(target != -1, input, zeros), reduction)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Any,
    weight: Any = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """The binary cross-entropy of logits (N, C) against 0/1 targets, averaged over the classes.

    >>> import autograd_core as ag, nn.functional as F
    >>> round(F.multilabel_soft_margin_loss(ag.asarray([[0.0, 0.0]]), ag.asarray([[1.0, 0.0]])).item(), 4)
    0.6931
    """
    _loss_reduction("multilabel_soft_margin_loss", reduction, size_average, reduce)
    target = _operand(target, input)
    losses = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        losses = losses * weight
    return _reduce(ag.sum(losses, axis=-1) / input.shape[-1], reduction)


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Any,
    margin: float = 0.0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``1 - cos(x1, x2)`` where y = 1 and ``max(0, cos(x1, x2) - margin)`` where y = -1, for
    rows (N, D) with targets (N,) or vectors (D,) with a 0-D target.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.cosine_embedding_loss(ag.asarray([[1.0, 0.0]]), ag.asarray([[0.0, 1.0]]), ag.asarray([1.0])).item()
    1.0
    """
    _loss_reduction("cosine_embedding_loss", reduction, size_average, reduce)
    target = _operand(target, input1)
    if target.ndim not in (0, 1) or not input1.ndim == input2.ndim == target.ndim + 1:
        raise ValueError(
            "cosine_embedding_loss: expected inputs (N, D) with a target (N,), or (D,) with a 0-D target; got "
            f"{input1.shape}, {input2.shape} and {target.shape}"
        )
    axis = target.ndim
    squares = [ag.sum(x * x, axis=axis) + 1e-12 for x in (input1, input2)]
    cos = ag.sum(input1 * input2, axis=axis) / ag.sqrt(squares[0] * squares[1])
    zeros = ag.zeros_like(cos)
    losses = ag.where(target == 1, 1 - cos, zeros) + ag.where(target == -1, _clamp_min0(cos - margin), zeros)
    return _reduce(losses, reduction)


def _class_rows(input: Tensor, caller: str) -> Tensor:
    """`input` (C,) or (N, C) as rows (N, C) (a 0-D input is one class, as PyTorch takes it)."""
    if input.ndim > 2 or not input.numel():
        raise ValueError(f"{caller}: expected an input (C,) or (N, C) with C > 0, got shape {input.shape}")
    return input if input.ndim == 2 else ag.reshape(input, (1, -1))


def multi_margin_loss(
    input: Tensor,
    target: Any,
    p: int = 1,
    margin: float = 1.0,
    weight: Any = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-class hinge loss: ``sum over i != y of max(0, margin - x[y] + x[i])**p / C``
    (times ``weight[y]``), for logits (N, C) or (C,) and class indices y.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.multi_margin_loss(ag.asarray([[0.0, 1.0]]), ag.asarray([0])).item()
    1.0
    """
    _loss_reduction("multi_margin_loss", reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError(f"multi_margin_loss: p must be 1 or 2, got {p}")
    rows = _class_rows(input, "multi_margin_loss")
    xp, classes = input.backend.xp, rows.shape[1]
    t, _ = _class_targets(rows, _flat_targets(target, input), -100, "multi_margin_loss")
    picked = ag.take_along_axis(rows, P.constant(xp.expand_dims(t, axis=1), input.backend), axis=1)
    z = margin - picked + rows
    hinge = z if p == 1 else z * z
    is_target = xp.arange(classes, device=input.backend.device)[None, :] == t[:, None]
    hinge = ag.where(P.constant(is_target, input.backend) | (z <= 0), ag.zeros_like(z), hinge)
    if weight is not None:
        hinge = hinge * ag.take(_operand(weight, input), P.constant(t, input.backend), axis=0)[:, None]
    losses = ag.sum(hinge, axis=1) / classes
    return _reduce(losses if input.ndim == 2 else losses[0], reduction)


def _flat_targets(target: Any, input: Tensor) -> Any:
    """Class-index targets of a (C,) input (a 0-D or 1-element target) as the one row's (1,)."""
    if input.ndim < 2:
        return ag.reshape(target if isinstance(target, Tensor) else ag.asarray(target), (1,))
    return target


def multilabel_margin_loss(
    input: Tensor, target: Any, size_average: Any = None, reduce: Any = None, reduction: str = "mean"
) -> Tensor:
    """The multi-label hinge loss of logits (N, C) or (C,): the targets are class indices
    padded with -1 (the first -1 ends them), and each pair of a target class j and a
    non-target class i costs ``max(0, 1 - (x[j] - x[i])) / C``.

    >>> import autograd_core as ag, nn.functional as F
    >>> round(F.multilabel_margin_loss(ag.asarray([[0.0, 0.5, 1.0]]), ag.asarray([[2, -1, 0]])).item(), 4)
    0.1667
    """
    _loss_reduction("multilabel_margin_loss", reduction, size_average, reduce)
    rows = _class_rows(input, "multilabel_margin_loss")
    backend, xp, classes = input.backend, input.backend.xp, rows.shape[1]
    t = target.array if isinstance(target, Tensor) else to_array(target, backend, "int64")
    t = xp.reshape(xp.astype(t, backend.dtype("int64")), rows.shape)
    counted = xp.cumulative_prod(xp.astype(t >= 0, backend.dtype("int64")), axis=1) > 0  # up to the first -1
    safe = xp.where(counted, t, 0)
    if math.prod(safe.shape) and not backend.is_traced(safe) and not _in_range(backend, safe, classes):
        raise IndexError(f"multilabel_margin_loss: target classes must lie in [0, {classes}) or be -1")
    one_hot_targets = (safe[:, :, None] == xp.arange(classes, device=backend.device)[None, None, :]) & counted[
        ..., None
    ]
    is_target = xp.any(one_hot_targets, axis=1)  # (N, C)
    picked = ag.take_along_axis(rows, P.constant(safe, backend), axis=1)  # (N, targets)
    z = 1 - ag.expand_dims(picked, axis=2) + ag.expand_dims(rows, axis=1)  # (N, targets, C)
    counts = P.constant(counted[:, :, None] & ~is_target[:, None, :], backend)
    hinge = ag.where(counts & (z > 0), z, ag.zeros_like(z))
    losses = ag.sum(hinge, axis=(1, 2)) / classes
    return _reduce(losses if input.ndim == 2 else losses[0], reduction)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` for a distance `d`
    (default `pairwise_distance`); with `swap`, the negative's distance is the smaller of its
    distances to the anchor and to the positive.

    >>> import autograd_core as ag, nn.functional as F
    >>> a, p, n = ag.asarray([[0.0]]), ag.asarray([[1.0]]), ag.asarray([[3.0]])
    >>> F.triplet_margin_with_distance_loss(a, p, n, distance_function=lambda x, y: ag.abs(x - y)[:, 0]).item()
    0.0
    """
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ValueError(
            "triplet_margin_with_distance_loss: anchor, positive and negative must have the same number of "
            f"dimensions, got {anchor.shape}, {positive.shape} and {negative.shape}"
        )
    distance = pairwise_distance if distance_function is None else distance_function
    to_positive, to_negative = distance(anchor, positive), distance(anchor, negative)
    if swap:
        to_negative = ag.minimum(to_negative, distance(positive, negative))
    return _reduce(_clamp_min0(margin + to_positive - to_negative), reduction)


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """`triplet_margin_with_distance_loss` with the `p`-norm distance ``|x - y + eps|_p``.

    >>> import autograd_core as ag, nn.functional as F
    >>> a, p, n = ag.asarray([[0.0]]), ag.asarray([[1.0]]), ag.asarray([[1.0]])
    >>> round(F.triplet_margin_loss(a, p, n, eps=0.0).item(), 4)
    1.0
    """
    _no_legacy("triplet_margin_loss", size_average, reduce)
    if anchor.ndim not in (1, 2):
        raise ValueError(f"triplet_margin_loss: expected 1-D or 2-D inputs, got {anchor.ndim}-D")
    return triplet_margin_with_distance_loss(
        anchor,
        positive,
        negative,
        distance_function=lambda x, y: pairwise_distance(x, y, p, eps),
        margin=margin,
        swap=swap,
        reduction=reduction,
    )


def gaussian_nll_loss(
    input: Tensor,
    target: Any,
    var: Any,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """The negative log-likelihood ``0.5 * (log(var) + (input - target)**2 / var)`` of a Gaussian
    (plus ``0.5 log(2 pi)`` when `full`); `var` has the input's shape, one axis fewer, one axis
    of size 1, or is a number; its values are clamped below at `eps` (the gradient passing
    through unchanged, as PyTorch's).

    >>> import autograd_core as ag, nn.functional as F
    >>> F.gaussian_nll_loss(ag.asarray([1.0]), ag.asarray([1.0]), 1.0).item()
    0.0
    """
    _check_reduction(reduction)
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("gaussian_nll_loss: var has negative entry/entries")
        var = ag.full_like(input, float(var))
    var = _operand(var, input)
    if var.numel() and not var.backend.is_traced(var.array) and bool(ag.any(var < 0)):
        raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = ag.expand_dims(var, axis=-1)
        elif not (var.ndim == input.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError(f"gaussian_nll_loss: var of shape {var.shape} does not fit the input's {input.shape}")
    var = var + (ag.clip(var, min=eps) - var).detach()
    losses = 0.5 * (ag.log(var) + (input - _operand(target, input)) ** 2 / var)
    return _reduce(losses + 0.5 * math.log(2 * math.pi) if full else losses, reduction)


def poisson_nll_loss(
    input: Tensor,
    target: Any,
    log_input: bool = True,
    full: bool = False,
    size_average: Any = None,
    eps: float = 1e-8,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """The Poisson negative log-likelihood: ``exp(x) - t x`` of log-rates x (`log_input`), else
    ``x - t log(x + eps)`` of rates; `full` adds Stirling's term ``t log t - t + 0.5 log(2 pi t)``
    where t > 1.

    >>> import autograd_core as ag, nn.functional as F
    >>> F.poisson_nll_loss(ag.asarray([0.0]), ag.asarray([1.0])).item()
    1.0
    """
    _loss_reduction("poisson_nll_loss", reduction, size_average, reduce)
    target = _operand(target, input)
    losses = ag.exp(input) - target * input if log_input else input - target * ag.log(input + eps)
    if full:
        safe = ag.where(target > 1, target, ag.ones_like(target))
        stirling = safe * ag.log(safe) - safe + 0.5 * ag.log(2 * math.pi * safe)
        losses = losses + ag.where(target > 1, stirling, ag.zeros_like(stirling))
    return _reduce(losses, reduction)


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Any,
    *,
    linear_bias: Tensor | None = None,
    weight: Any = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options: Any = None,
) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``: `input` (N, in)
    or (in,), `linear_weight` (C, d1, ..., in) for C classes (and K-dimensional logits
    (N, C, d1, ...)). PyTorch's chunking `options` save memory only; the result is the same,
    and here it is computed in one piece.

    >>> import autograd_core as ag, nn.functional as F
    >>> round(F.linear_cross_entropy(ag.ones(1, 2), ag.zeros(3, 2), ag.asarray([0])).item(), 4)
    1.0986
    """
    if input.ndim not in (1, 2) or linear_weight.ndim < 2:
        raise ValueError(
            f"linear_cross_entropy: expected an input (N, in) or (in,) and a linear_weight (C, ..., in), got "
            f"{input.shape} and {linear_weight.shape}"
        )
    if input.shape[-1] != linear_weight.shape[-1]:
        raise ValueError(
            f"linear_cross_entropy: input {input.shape} and linear_weight {linear_weight.shape} differ in in_features"
        )
    classes, out_features = linear_weight.shape[0], linear_weight.shape[1:-1]
    if linear_bias is not None and linear_bias.shape != (classes, *out_features):
        raise ValueError(
            f"linear_cross_entropy: linear_bias has shape {linear_bias.shape}, expected {(classes, *out_features)}"
        )
    if out_features and input.ndim == 1:
        raise ValueError("linear_cross_entropy: K-dimensional logits need a batched input (N, in)")
    logits_shape = (*input.shape[:-1], classes, *out_features)
    if ignore_index is not None and isinstance(target, Tensor) and target.shape == logits_shape:
        raise ValueError("linear_cross_entropy: ignore_index cannot be given with class-probability targets")
    rows = math.prod(logits_shape[input.ndim - 1 :])
    flat_weight = ag.reshape(linear_weight, (rows, input.shape[-1]))
    flat_bias = None if linear_bias is None else ag.reshape(linear_bias, (rows,))
    logits = ag.reshape(linear(input, flat_weight, flat_bias), logits_shape)
    return cross_entropy(
        logits,
        target,
        weight=weight,
        reduction=reduction,
        ignore_index=-100 if ignore_index is None else ignore_index,
        label_smoothing=label_smoothing,
    )


def embedding_bag(
    input: Any,
    weight: Tensor,
    offsets: Any = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sum, mean or max of the rows of `weight` in each bag of indices: the rows of a 2-D
    `input` (B, L), or the runs of a 1-D `input` that start at `offsets` (B,) (with
    `include_last_offset`, B + 1 of them, the last the end). `per_sample_weights` scale the
    rows (mode "sum"); indices equal to `padding_idx` are left out; an empty bag gives zeros.

    >>> import autograd_core as ag, nn.functional as F
    >>> w = ag.reshape(ag.arange(6.0), (3, 2))
    >>> F.embedding_bag(ag.asarray([0, 2, 1]), w, ag.asarray([0, 2]), mode="sum").tolist()
    [[4.0, 6.0], [2.0, 3.0]]
    """
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode must be 'sum', 'mean' or 'max', not {mode!r}")
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding_bag: max_norm, scale_grad_by_freq and sparse are not supported")
    if per_sample_weights is not None and mode != "sum":
        raise ValueError(f"embedding_bag: per_sample_weights are only supported with mode='sum', not {mode!r}")
    index = input if isinstance(input, Tensor) else ag.asarray(input, device=weight.device)
    backend, xp = weight.backend, weight.backend.xp
    int64 = backend.dtype("int64")
    if index.ndim == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: offsets must be None for a 2-D input (each row is a bag)")
        bags, length = index.shape
        grid = xp.arange(bags * length, dtype=int64, device=backend.device)
        bag, within = grid // max(length, 1), grid % max(length, 1)
    elif index.ndim == 1:
        if offsets is None:
            raise ValueError("embedding_bag: a 1-D input needs offsets (the start of each bag)")
        starts = xp.astype(offsets.array if isinstance(offsets, Tensor) else to_array(offsets, backend, "int64"), int64)
        bags = starts.shape[0] - 1 if include_last_offset else starts.shape[0]
        positions = xp.arange(index.shape[0], dtype=int64, device=backend.device)
        bag = xp.searchsorted(starts, positions, side="right") - 1
        within = positions - xp.take(starts, xp.clip(bag, 0, None)) if starts.shape[0] else positions
        if include_last_offset:
            bag = xp.where(positions < starts[-1], bag, -1)
    else:
        raise ValueError(f"embedding_bag: expected a 1-D or 2-D input of indices, got shape {index.shape}")
    flat = ag.reshape(index, (-1,))
    rows = weight.shape[0]
    counted = (bag >= 0) & (bag < bags)
    if padding_idx is not None:
        counted = counted & (flat.array != (padding_idx + rows if padding_idx < 0 else padding_idx))
    bag = xp.where(counted, bag, 0)
    picked = embedding(flat, weight)
    keep = P.constant(xp.astype(counted, weight.array.dtype), backend)[:, None]
    if per_sample_weights is not None:
        picked = picked * ag.reshape(per_sample_weights, (-1, 1))
    shape = (bags, weight.shape[1])
    if mode != "max":
        total = P.index_add.bind(picked * keep, shape, 0, bag)
        if mode == "sum":
            return total
        counts = P.index_add.bind(keep, (bags, 1), 0, bag)
        return total / ag.clip(counts, min=1.0)
    return _bag_max(picked, counted, bag, within, bags, backend)


def _bag_max(picked: Tensor, counted: Any, bag: Any, within: Any, bags: int, backend: Any) -> Tensor:
    """The largest of the `picked` rows (entries, D) counted in each of `bags` bags (0 for an
    empty bag), elementwise, each entry at position `within` of its `bag`; the gradient goes
    to the first largest."""
    xp = backend.xp
    width = max(int(backend.value_range(within)[1]) + 1, 1) if picked.shape[0] else 1
    slot = xp.where(counted, bag * width + within, bags * width)  # the entries not counted go past the end
    dense = P.index_add.bind(picked, (bags * width + 1, picked.shape[1]), 0, slot)[: bags * width]
    filled = P.index_add.bind(
        P.constant(xp.astype(counted, picked.array.dtype)[:, None], backend), (bags * width + 1, 1), 0, slot
    )[: bags * width]
    dense = ag.reshape(ag.where(filled > 0, dense, -math.inf), (bags, width, picked.shape[1]))
    best = ag.argmax(dense, axis=1, keepdims=True)
    largest = ag.squeeze(ag.take_along_axis(dense, best, axis=1), axis=1)
    return ag.where(ag.isinf(largest) & (largest < 0), ag.zeros_like(largest), largest)


def ctc_loss(
    log_probs: Tensor,
    targets: Any,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The connectionist temporal classification loss: -log of the total probability of every
    alignment of `targets` to the steps of `log_probs` (T, N, C) (or (T, C)), blanks allowed
    between and around the labels and repeats merged. `targets` are padded rows (N, S) or
    one concatenated sequence (sum of `target_lengths`); a mean divides each sample's loss by
    its target length, then averages; `zero_infinity` makes impossible alignments cost 0.
    One primitive with PyTorch's gradient.

    >>> import autograd_core as ag, nn.functional as F
    >>> lp = ag.log(ag.full((2, 1, 2), 0.5))
    >>> round(F.ctc_loss(lp, ag.asarray([[1]]), [2], [1], reduction="sum").item(), 4)
    0.2877
    """
    _check_reduction(reduction)
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = ag.expand_dims(log_probs, axis=1)
    if log_probs.ndim != 3:
        raise ValueError(f"ctc_loss: expected log_probs (T, N, C) or (T, C), got shape {log_probs.shape}")
    backend = log_probs.backend
    xp, int64 = backend.xp, backend.dtype("int64")
    steps, batch, classes = log_probs.shape

    def lengths(value: Any, name: str) -> Any:
        array = value.array if isinstance(value, Tensor) else to_array(value, backend, "int64")
        array = xp.reshape(xp.astype(array, int64), (-1,))
        if array.shape[0] != batch:
            raise ValueError(f"ctc_loss: {name} has {array.shape[0]} entries for a batch of {batch}")
        return array

    inputs, label_counts = lengths(input_lengths, "input_lengths"), lengths(target_lengths, "target_lengths")
    t = targets.array if isinstance(targets, Tensor) else to_array(targets, backend, "int64")
    t = xp.astype(t, int64)
    if unbatched:
        t = xp.reshape(t, (1, -1))
    elif t.ndim == 1:  # one concatenated sequence: padded rows, the blank past each sample's end
        width = max(int(xp.max(label_counts)), 1) if batch else 1
        starts = xp.cumulative_sum(label_counts) - label_counts
        column = xp.arange(width, dtype=int64, device=backend.device)[None, :]
        index = xp.clip(starts[:, None] + column, 0, max(t.shape[0] - 1, 0))
        t = xp.where(
            column < label_counts[:, None], xp.reshape(xp.take(t, xp.reshape(index, (-1,))), (batch, width)), blank
        )
    if not backend.is_traced(inputs) and (int(xp.max(inputs)) > steps or int(xp.max(label_counts)) > t.shape[1]):
        raise ValueError(f"ctc_loss: input_lengths past T={steps}, or target_lengths past the targets' {t.shape[1]}")
    blanks = xp.full(t.shape, blank, dtype=int64, device=backend.device)
    labels = xp.reshape(xp.stack([blanks, t], axis=2), (batch, -1))
    labels = xp.concat([labels, xp.full((batch, 1), blank, dtype=int64, device=backend.device)], axis=1)
    losses = loss_kernels.ctc_loss.bind(log_probs, labels, inputs, label_counts, blank)
    if zero_infinity:
        losses = ag.where(ag.isinf(losses), ag.zeros_like(losses), losses)
    if reduction == "mean":
        count = ag.clip(ag.astype(P.constant(label_counts, backend), losses.dtype), min=1.0)
        return ag.mean(losses / count)
    result = _reduce(losses, reduction)
    return result[0] if unbatched and reduction == "none" else result
