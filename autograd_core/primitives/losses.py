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


# --- connectionist temporal classification ----------------------------------------------------
def _log_add(ns: Any, *terms: Any) -> Any:
    """log(sum(exp(terms))), elementwise, -inf where every term is -inf (never nan)."""
    top = terms[0]
    for t in terms[1:]:
        top = ns.maximum(top, t)
    shift = ns.where(ns.isinf(top), 0.0, top)
    return _log_of_sum(ns, sum(ns.exp(t - shift) for t in terms)) + shift


def _log_of_sum(ns: Any, total: Any) -> Any:
    """log(total) of a non-negative sum, -inf where it is 0 (without taking the log of 0)."""
    positive = total > 0
    return ns.where(positive, ns.log(ns.where(positive, total, 1.0)), -float("inf"))


def _log_sum(ns: Any, x: Any, axis: int) -> Any:
    """log(sum(exp(x))) along `axis`, -inf where every term is -inf (never nan)."""
    top = ns.max(x, axis=axis, keepdims=True)
    shift = ns.where(ns.isinf(top), 0.0, top)
    return ns.squeeze(_log_of_sum(ns, ns.sum(ns.exp(x - shift), axis=axis, keepdims=True)) + shift, axis=axis)


def _shifted(ns: Any, x: Any, by: int, fill: float) -> Any:
    """`x` (N, S) moved `by` positions along S (right for positive), `fill` coming in."""
    pad = ns.full((x.shape[0], abs(by)), fill, dtype=x.dtype, device=ns.backend.device)
    return ns.concat([pad, x[:, :-by]], axis=1) if by > 0 else ns.concat([x[:, -by:], pad], axis=1)


def _ctc_emissions(ns: Any, log_probs: Any, labels: Any) -> Any:
    """The log-probability of each extended label at each step: (T, N, S')."""
    steps, batch, classes = log_probs.shape
    rows = ns.arange(batch, dtype=labels.dtype, device=ns.backend.device)[:, None] * classes
    flat = ns.take(ns.reshape(log_probs, (steps, batch * classes)), ns.reshape(labels + rows, (-1,)), axis=1)
    return ns.reshape(flat, (steps, *labels.shape))


def _ctc_skips(ns: Any, labels: Any, blank: int) -> Any:
    """Where a path may skip from position s - 2 to s: a label (not a blank) unlike the one two back."""
    back = _shifted(ns, labels, 2, blank)
    return (labels != blank) & (labels != back)


def _ctc_alpha(ns: Any, emit: Any, skips: Any, input_lengths: Any) -> list[Any]:
    """The forward variables log alpha_t (N, S') for every step, each sample's frozen from its
    last step on."""
    neg = -float("inf")
    s = ns.arange(emit.shape[2], device=ns.backend.device)
    alpha = ns.where(s[None, :] < 2, emit[0, ...], neg)
    alphas = [alpha]
    for t in range(1, emit.shape[0]):
        skipped = ns.where(skips, _shifted(ns, alpha, 2, neg), neg)
        step = _log_add(ns, alpha, _shifted(ns, alpha, 1, neg), skipped) + emit[t, ...]
        alpha = ns.where((t < input_lengths)[:, None], step, alpha)
        alphas.append(alpha)
    return alphas


def _ctc_ends(ns: Any, target_lengths: Any, width: int) -> Any:
    """The mask (N, S') of the two positions a path may end at: the last label and the blank after it."""
    s = ns.arange(width, device=ns.backend.device)[None, :]
    last = 2 * target_lengths[:, None]
    return (s == last) | (s == last - 1)


def _ctc_nll(ns: Any, log_probs: Any, labels: Any, input_lengths: Any, target_lengths: Any, blank: int) -> Any:
    """-log p(target | log_probs) per sample (N,): inf where no alignment exists."""
    emit = _ctc_emissions(ns, log_probs, labels)
    final = _ctc_alpha(ns, emit, _ctc_skips(ns, labels, blank), input_lengths)[-1]
    ends = ns.where(_ctc_ends(ns, target_lengths, labels.shape[1]), final, -float("inf"))
    return -_log_sum(ns, ends, 1)


def _ctc_slopes(
    ns: Any,
    nll: Any,
    log_probs: Any,
    labels: Any,
    input_lengths: Any,
    target_lengths: Any,
    blank: int,
    softmax_term: bool,
) -> Any:
    """The derivative of each sample's loss with respect to `log_probs` (T, N, C):
    ``-exp(lcab + nll - lp)`` up to the sample's length and 0 after, lcab the log of the summed
    alpha * beta over the positions of each class; with `softmax_term`, plus exp(lp), as
    PyTorch's gradient has it (exact for logits through log_softmax, whose backward cancels it)."""
    neg = -float("inf")
    emit = _ctc_emissions(ns, log_probs, labels)
    skips = _ctc_skips(ns, labels, blank)
    alphas = _ctc_alpha(ns, emit, skips, input_lengths)
    ends = _ctc_ends(ns, target_lengths, labels.shape[1])
    skip_ahead = _shifted(ns, skips, -2, False)
    beta = ns.full(labels.shape, neg, dtype=log_probs.dtype, device=ns.backend.device)
    steps, classes = log_probs.shape[0], log_probs.shape[2]
    one_hot = labels[:, :, None] == ns.arange(classes, dtype=labels.dtype, device=ns.backend.device)[None, None, :]
    slopes = []
    for t in range(steps - 1, -1, -1):
        step = _log_add(ns, beta, _shifted(ns, beta, -1, neg), ns.where(skip_ahead, _shifted(ns, beta, -2, neg), neg))
        inside = ns.where((t < input_lengths - 1)[:, None], step + emit[t, ...], neg)
        beta = ns.where((t == input_lengths - 1)[:, None], ns.where(ends, emit[t, ...], neg), inside)
        lcab = _log_sum(ns, ns.where(one_hot, (alphas[t] + beta)[:, :, None], neg), 1)
        lp = log_probs[t, ...]
        slope = -ns.exp(lcab + nll[:, None] - lp)
        slopes.append(ns.where((t < input_lengths)[:, None], slope + ns.exp(lp) if softmax_term else slope, 0.0))
    return ns.stack(slopes[::-1], axis=0)


def _ctc_grad(
    ns: Any, g: Any, nll: Any, log_probs: Any, labels: Any, input_lengths: Any, target_lengths: Any, blank: int
) -> Any:
    """PyTorch's gradient of the per-sample losses (`_ctc_slopes` with its softmax term) times
    `g`; none for an infinite loss whose gradient `g` is 0 (zero_infinity's)."""
    slopes = _ctc_slopes(ns, nll, log_probs, labels, input_lengths, target_lengths, blank, True)
    zeroed = ns.isinf(nll) & (g == 0)
    return ns.where(zeroed[None, :, None], 0.0, slopes * g[None, :, None])


def _ctc_tangent(
    ns: Any,
    tangents: Sequence[Any],
    nll: Any,
    log_probs: Any,
    labels: Any,
    input_lengths: Any,
    target_lengths: Any,
    blank: int,
) -> Any:
    """Each sample's loss moves by <d nll / d log_probs, d log_probs> (the true derivative)."""
    slopes = _ctc_slopes(ns, nll, log_probs, labels, input_lengths, target_lengths, blank, False)
    return ns.sum(slopes * tangents[0], axis=(0, 2))


ctc_loss = Primitive(
    "ctc_loss",
    _ctc_nll,
    vjps=(_ctc_grad, None, None, None, None),
    jvp=_ctc_tangent,
    doc="The CTC negative log-likelihood per sample (N,) of `log_probs` (T, N, C) against the "
    "extended labels (N, 2 S + 1: blanks between and around the targets), with each sample's "
    "input and target lengths (N,); the gradient is PyTorch's.",
)
