"""The two fused steps of scaled dot-product attention: the scores ``scale * q @ k^T`` (whose
VJPs are two matmuls) and the masked softmax of the scores (whose VJP reads only its output
P: ``dS = P * (g - sum(g * P))``). Masked entries get P = 0 exactly, so a fully masked row
gives P = 0 and a finite gradient, as PyTorch's safe softmax."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from autograd_core.graph.registry import Primitive, sum_to
from autograd_core.primitives.linear import tangent_sum


def _scores(ns: Any, q: Any, k: Any, scale: float) -> Any:
    return ns.matmul(q * scale, ns.matrix_transpose(k))


def _scores_grad_query(ns: Any, g: Any, out: Any, q: Any, k: Any, scale: float) -> Any:
    return sum_to(ns, ns.matmul(g, k) * scale, q.shape)


def _scores_grad_key(ns: Any, g: Any, out: Any, q: Any, k: Any, scale: float) -> Any:
    # g^T q rather than the transpose of q^T g: the key's gradient comes out in its own layout
    return sum_to(ns, ns.matmul(ns.matrix_transpose(g), q) * scale, k.shape)


attention_scores = Primitive(
    "attention_scores",
    _scores,
    vjps=(_scores_grad_query, _scores_grad_key, None),
    jvp="multilinear",
    doc="``scale * q @ k^T`` for queries (..., L, E) and keys (..., S, E): the scores (..., L, S).",
)


def _masked_softmax(ns: Any, scores: Any, mask: Any) -> Any:
    """softmax(scores + mask) over the last axis for a float `mask`, or over the entries where
    a boolean `mask` is True (None: no mask); a row with nothing left is all zeros."""
    if mask is None:
        z = scores
    elif ns.backend.dtype_name(mask.dtype) == "bool":
        z = ns.where(mask, scores, -math.inf)
    else:
        z = scores + mask
    if 0 in z.shape:  # nothing to weigh (and max over nothing has no identity)
        return z
    peak = ns.max(z, axis=-1, keepdims=True)
    e = ns.exp(z - ns.where(peak == -math.inf, 0.0, peak))
    total = ns.sum(e, axis=-1, keepdims=True)
    return e * (1 / ns.where(total == 0, 1.0, total))


def _softmax_grad(ns: Any, g: Any, out: Any, scores: Any, mask: Any) -> Any:
    return out * (g - ns.sum(g * out, axis=-1, keepdims=True))


def _softmax_grad_mask(ns: Any, g: Any, out: Any, scores: Any, mask: Any) -> Any:
    """An additive mask gets the scores' gradient, summed back to its broadcast shape."""
    return sum_to(ns, _softmax_grad(ns, g, out, scores, mask), mask.shape)


def _softmax_tangent(ns: Any, tangents: Sequence[Any], out: Any, scores: Any, mask: Any) -> Any:
    """The softmax's Jacobian is symmetric, so its VJP maps the tangent of ``scores + mask``."""
    return _softmax_grad(ns, tangent_sum(ns, tangents, out.shape), out, scores, mask)


masked_softmax = Primitive(
    "masked_softmax",
    _masked_softmax,
    vjps=(_softmax_grad, _softmax_grad_mask),
    saves="output",
    jvp=_softmax_tangent,
    doc="softmax(scores + mask) over the last axis (a boolean mask: over the entries it keeps); "
    "a row with nothing left is all zeros.",
)
