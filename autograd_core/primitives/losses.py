"""The fused losses: softmax cross-entropy against class indices (its kernels, the rows'
losses and their gradient, and the node), and PyTorch's binary cross-entropy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from autograd_core.graph.registry import Primitive, primitive, raw_namespace
from autograd_core.graph.tensor_base import TensorBase


@primitive()
def cross_entropy_rows(ns: Any, logits: Any, target: Any) -> Any:
    """Per-row softmax cross-entropy of `logits` (n, C) against class indices `target` (n,),
    stable for logits of any size: log-sum-exp minus the target's logit."""
    shift = ns.max(logits, axis=1, keepdims=True)
    lse = ns.log(ns.sum(ns.exp(logits - shift), axis=1, keepdims=True)) + shift
    return ns.reshape(lse - ns.take_along_axis(logits, ns.expand_dims(target, axis=1), axis=1), (-1,))


def softmax_minus_one_hot(ns: Any, logits: Any, target: Any, classes: Any) -> Any:
    """``softmax(logits) - one_hot(target)`` over axis 1 of (n, C) `logits`, for class indices
    `target` (n,) and ``classes = arange(C)``."""
    e = ns.exp(logits - ns.max(logits, axis=1, keepdims=True))
    p = e / ns.sum(e, axis=1, keepdims=True)
    return ns.where(classes == ns.expand_dims(target, axis=1), p - 1, p)


@primitive()
def cross_entropy_backward(ns: Any, row_grad: Any, logits: Any, target: Any, classes: Any) -> Any:
    """The gradient of `cross_entropy_rows` for `logits` (n, C), given each row's gradient
    `row_grad` (n,), or one for every row (0-d): ``(softmax(logits) - one_hot(target)) * row_grad``.
    `classes` is ``arange(C)`` on the logits' device, for the one-hot."""
    return softmax_minus_one_hot(ns, logits, target, classes) * row_grad[..., None]


def _row_count(ns: Any, logits: Any, valid: Any) -> Any:
    """How many rows a mean divides by: all of them, or those `valid` keeps."""
    return logits.shape[0] if valid is None else ns.sum(ns.astype(valid, logits.dtype))


def _reduced(ns: Any, rows: Any, logits: Any, valid: Any, reduction: str) -> Any:
    """Per-row values `rows` (n,), 0 where `valid` is False, or their sum or mean over the valid rows."""
    if valid is not None:
        rows = ns.where(valid, rows, 0.0)
    if reduction == "none":
        return rows
    return ns.sum(rows) if reduction == "sum" else ns.sum(rows) / _row_count(ns, logits, valid)


def _cross_entropy(ns: Any, logits: Any, target: Any, classes: Any, valid: Any, reduction: str) -> Any:
    """The rows' losses (0 where `valid` is False), or their sum or mean over the valid rows."""
    return _reduced(ns, cross_entropy_rows(ns, logits, target), logits, valid, reduction)


def _cross_entropy_grad(
    ns: Any, g: Any, out: Any, logits: Any, target: Any, classes: Any, valid: Any, reduction: str
) -> Any:
    """d(loss)/d(logits) = (softmax(logits) - one_hot(target)) times the rows' gradient (g per
    row, or g / count for every row of a mean), zero for the rows ignored."""
    row_grad = g / _row_count(ns, logits, valid) if reduction == "mean" else g
    if valid is not None:
        row_grad = ns.where(valid, row_grad, 0.0)
    return cross_entropy_backward(ns, row_grad, logits, target, classes)


def _cross_entropy_tangent(
    ns: Any, tangents: Sequence[Any], out: Any, logits: Any, target: Any, classes: Any, valid: Any, reduction: str
) -> Any:
    """Each row's loss moves by <softmax(logits) - one_hot(target), d logits>, then is reduced
    as the losses are."""
    slopes = softmax_minus_one_hot(ns, logits, target, classes)
    return _reduced(ns, ns.sum(slopes * tangents[0], axis=1), logits, valid, reduction)


cross_entropy = Primitive(
    "cross_entropy",
    _cross_entropy,
    vjps=(_cross_entropy_grad, None, None, None, None),
    jvp=_cross_entropy_tangent,
    doc="Softmax cross-entropy of logits (n, C) against class indices `target` (n,), the rows "
    "where the mask `valid` (or None) is False left out, reduced by `reduction` ('none', 'sum', "
    "'mean'); `classes` is ``arange(C)`` on the logits' device.",
)


def fused_cross_entropy(logits: TensorBase, target: Any, valid: Any, reduction: str) -> TensorBase:
    """`cross_entropy` of the tensor `logits` (n, C) against the raw class indices `target`
    (n,), already checked to lie in [0, C), with the raw mask `valid` (n,) of the rows that
    count (None: all): one node in the graph."""
    backend = logits.backend
    ns = raw_namespace(backend)
    classes = ns.arange(logits.shape[1], dtype=target.dtype, device=backend.device)
    constants = tuple(None if a is None else TensorBase._wrap(a, backend) for a in (target, classes, valid))
    return cross_entropy.bind(logits, *constants, reduction, saved=(logits,))


_BCE_EPSILON = 9.999999960041972e-13  # PyTorch's 1e-12 (a C float), the least x(1-x) its gradient divides by


def _binary_cross_entropy(ns: Any, x: Any, t: Any) -> Any:
    """PyTorch's elementwise binary cross-entropy: each log clamped at -100, and never taken of 0."""

    def clamped(log: Any, at: Any, defined: Any) -> Any:
        return ns.where(defined, ns.clip(log(ns.where(defined, at, 0.5)), min=-100.0), -100.0)

    return (t - 1) * clamped(ns.log1p, -x, x < 1) - t * clamped(ns.log, x, x > 0)


binary_cross_entropy = Primitive(
    "binary_cross_entropy",
    _binary_cross_entropy,
    vjps=(  # PyTorch's rules: finite where a probability is exactly 0 or 1
        lambda ns, g, out, x, t: g * (x - t) / ns.clip(x * (1 - x), min=_BCE_EPSILON),
        lambda ns, g, out, x, t: g * (ns.log1p(-x) - ns.log(x)),
    ),
    jvp="elementwise",
    doc="The elementwise binary cross-entropy of probabilities `x` against targets `t`, as "
    "PyTorch's: each log clamped at -100, with finite gradients at probabilities of 0 and 1.",
)
