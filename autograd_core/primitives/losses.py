"""The fused softmax cross-entropy's kernels: the rows' losses and their gradient."""

from __future__ import annotations

from typing import Any

from autograd_core.registry import primitive


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
