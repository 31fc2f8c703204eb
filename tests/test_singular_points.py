"""Gradients at singular points, against PyTorch: every rule with a removable (or any)
singularity is evaluated where it sits (sqrt and norms at 0, atan2 and hypot at the origin,
pow with zero bases and exponents, ties of max/min/maximum, kinks of the activations, -inf
logits, constant data under std, singular matrices...), to first order, to second order
(``create_graph=True``, then the gradient of a weighted sum of the gradients) and in forward
mode (`func.jvp` against ``torch.func.jvp``), on every backend, in float64.

A case passes when our numbers have PyTorch's pattern exactly: nan where it gives nan, the
same infinity where it gives one, and the same finite values to float64 tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import autograd_core as ag
import nn.functional as F
from autograd_core import func
from helpers import TOLERANCES, host

INF = math.inf


class Case(NamedTuple):
    """`ours` and `theirs` compute the same function of the tensors made from `inputs`;
    `tangent_oracle`, where PyTorch's forward mode is wrong at the point, is a torch twin
    whose forward mode is right there."""

    name: str
    ours: Callable[..., Any]
    theirs: Callable[..., Any]
    inputs: tuple[Any, ...]
    tangent_oracle: Callable[..., Any] | None = None
    second_tolerance: dict[str, float] | None = None
    orders: tuple[str, ...] = ("value", "grad", "second", "jvp")


def both(name: str, fn: Callable[..., Any], *inputs: Any) -> Case:
    """A case whose function is written once, with operators and methods both libraries share."""
    return Case(name, fn, fn, inputs)


POW_BASES = [0.0, 0.0, 0.0, 0.0, 0.0, -2.0, -2.0, -2.0, 2.0, 0.0]
POW_EXPONENTS = [0.0, 2.0, -1.0, 0.5, 1.0, 2.0, 0.5, 0.0, 0.0, -0.5]
ZERO_3 = [[0.0, 0.0, 0.0], [1.0, -2.0, 2.0], [0.0, 3.0, -1.0]]  # a zero row, a regular one, a zero element
TIED = [[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 2.0, 2.0]]
NEG_INF_LOGITS = [[-INF, 0.0, 1.0], [-INF, -INF, 2.0]]
SINGULAR = [[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[0.0, 1.0], [0.0, 0.0]]]

CASES = [
    # --- roots and powers
    Case("sqrt", ag.sqrt, torch.sqrt, ([0.0, -0.0, 1.0, 4.0],)),
    *(
        both(f"pow_scalar_{p}", lambda x, p=p: x**p, [0.0, -2.0, 1.5])
        for p in (0.0, 1.0, 2.0, 3.0, 0.5, -1.0, -1.5, -2.0)
    ),
    both("pow_tensor", lambda x, y: x**y, POW_BASES, POW_EXPONENTS),
    *(both(f"pow_base_{b}", lambda y, b=b: b**y, [0.0, 1.0, -1.0, 0.5, 2.0]) for b in (0.0, -2.0, 2.0, 1.0)),
    both("square", lambda x: x * x, [0.0, -1.0]),
    Case("reciprocal", ag.reciprocal, torch.reciprocal, ([0.0, -0.0, 2.0],)),
    both("divide", lambda x, y: x / y, [0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 2.0, -0.0]),
    # --- special functions at the edges of their domains
    Case(
        "xlogy",
        ag.special.xlogy,
        torch.special.xlogy,
        ([0.0, 0.0, 1.0, 0.0, 2.0, 0.0], [0.0, 1.0, 0.0, -1.0, 3.0, INF]),
    ),
    Case(
        "xlog1py",
        ag.special.xlog1py,
        torch.special.xlog1py,
        ([0.0, 0.0, 1.0, 0.0, 2.0], [-1.0, 0.0, -1.0, -2.0, 3.0]),
    ),
    Case("entr", ag.special.entr, torch.special.entr, ([0.0, 1.0, -1.0, 0.5, INF],)),
    Case("sinc", ag.special.sinc, torch.special.sinc, ([0.0, 1.0, -0.5],)),
    Case("logit", ag.special.logit, torch.special.logit, ([0.0, 1.0, 0.5],)),
    Case("erfinv", ag.special.erfinv, torch.special.erfinv, ([1.0, -1.0, 0.0],)),
    Case("log_ndtr", ag.special.log_ndtr, torch.special.log_ndtr, ([-10.0, 0.0, 40.0],)),
    Case("ndtri", ag.special.ndtri, torch.special.ndtri, ([0.0, 1.0, 0.5],)),
    # --- angles and magnitudes
    Case("atan2", ag.atan2, torch.atan2, ([0.0, 0.0, 1.0, 0.0, -0.0], [0.0, 1.0, 0.0, -1.0, 0.0])),
    Case("hypot", ag.hypot, torch.hypot, ([0.0, 0.0, 3.0, 0.0], [0.0, 1.0, 0.0, -0.0])),
    Case("abs", ag.abs, torch.abs, ([0.0, -0.0, -1.0, 2.0],)),
    Case("sign", ag.sign, torch.sign, ([0.0, -1.0, 2.0],)),
    Case("copysign", ag.copysign, torch.copysign, ([0.0, 1.0, -2.0, 0.0], [1.0, -0.0, 0.0, -1.0])),
    # --- logarithms and exponentials at the edges of their domains
    Case("log", ag.log, torch.log, ([0.0, 1.0, -1.0],)),
    Case("log2", ag.log2, torch.log2, ([0.0, 1.0],)),
    Case("log10", ag.log10, torch.log10, ([0.0, 1.0],)),
    Case("log1p", ag.log1p, torch.log1p, ([-1.0, 0.0, -2.0],)),
    Case("exp", ag.exp, torch.exp, ([-INF, 0.0, 800.0],)),
    Case("expm1", ag.expm1, torch.expm1, ([-INF, 0.0, 800.0],)),
    Case("exp2", ag.exp2, torch.exp2, ([-INF, 0.0],)),
    Case("logaddexp", ag.logaddexp, torch.logaddexp, ([-INF, -INF, 0.0, INF], [-INF, 0.0, 0.0, INF])),
    Case("sigmoid", ag.sigmoid, torch.sigmoid, ([-INF, INF, 0.0, -800.0, 800.0],)),
    Case("tanh", ag.tanh, torch.tanh, ([-INF, INF, 0.0, -800.0],)),
    # --- inverse trigonometric and hyperbolic functions at their branch points
    Case("asin", ag.asin, torch.asin, ([1.0, -1.0, 0.0],)),
    Case("acos", ag.acos, torch.acos, ([1.0, -1.0, 0.0],)),
    Case("acosh", ag.acosh, torch.acosh, ([1.0, 2.0],)),
    Case("atanh", ag.atanh, torch.atanh, ([1.0, -1.0, 0.0],)),
    # --- piecewise functions at their kinks
    Case("relu", ag.relu, torch.relu, ([0.0, -1.0, 1.0],)),
    Case("maximum_ties", ag.maximum, torch.maximum, ([0.0, 1.0, 2.0], [0.0, 1.0, 3.0])),
    Case("minimum_ties", ag.minimum, torch.minimum, ([0.0, 1.0, 2.0], [0.0, 1.0, 3.0])),
    Case(
        "clip_at_bounds",
        lambda x: ag.clip(x, min=-1.0, max=1.0),
        lambda x: torch.clamp(x, min=-1.0, max=1.0),
        ([-1.0, 1.0, 0.0, 2.0, -2.0],),
    ),
    Case(
        "clip_tensor_bounds",
        lambda x, lo, hi: ag.clip(x, min=lo, max=hi),
        lambda x, lo, hi: torch.clamp(x, min=lo, max=hi),
        ([-1.0, 1.0, 0.0, 2.0, 0.5], [-1.0, -1.0, 0.0, -1.0, 1.0], [1.0, 1.0, 0.0, 1.0, 1.0]),
    ),
    Case("clip_min_only", lambda x: ag.clip(x, min=0.0), lambda x: torch.clamp(x, min=0.0), ([0.0, -1.0, 1.0],)),
    Case(
        "where_sqrt",
        lambda x: ag.where(x > 0, ag.sqrt(x), 0.0),
        lambda x: torch.where(x > 0, torch.sqrt(x), 0.0),
        ([0.0, -1.0, 4.0],),
    ),
    Case(
        "where_log",
        lambda x: ag.where(x > 0, ag.log(x), x),
        lambda x: torch.where(x > 0, torch.log(x), x),
        ([0.0, -1.0, 4.0],),
    ),
    Case(
        "remainder",
        ag.remainder,
        torch.remainder,
        ([5.0, -5.0, 4.0, 0.0, 3.0], [3.0, 3.0, 2.0, 2.0, -2.0]),
    ),
    # --- activations at their kinks
    *(
        Case(f"{name}_kinks", getattr(F, name), getattr(TF, name), ([0.0, -1.0, 1.0, -3.0, 3.0, 6.0, -6.0],))
        for name in (
            "leaky_relu",
            "elu",
            "selu",
            "celu",
            "gelu",
            "silu",
            "mish",
            "softplus",
            "softsign",
            "logsigmoid",
            "hardtanh",
            "relu6",
            "hardswish",
        )
    ),
    # PyTorch's hardsigmoid has no second derivative: the oracle is the same function, kinks included
    Case(
        "hardsigmoid_kinks",
        F.hardsigmoid,
        lambda x: torch.where((x > -3) & (x < 3), (x + 3) / 6, (x >= 3).to(x.dtype)),
        ([0.0, -3.0, 3.0, -4.0, 4.0],),
    ),
    Case("softplus_threshold", F.softplus, TF.softplus, ([20.0, 19.999, 20.001],)),
    *(
        Case(f"{name}_extremes", getattr(F, name), getattr(TF, name), ([-800.0, 800.0, 0.0, -40.0, 40.0],))
        for name in ("logsigmoid", "softplus", "silu", "gelu", "elu")
    ),
    # PyTorch's second derivative of mish overflows to nan at x = 800 (it is 0): left out
    Case("mish_extremes", F.mish, TF.mish, ([-800.0, 0.0, -40.0, 40.0],)),
    Case("gelu_tanh", lambda x: F.gelu(x, "tanh"), lambda x: TF.gelu(x, approximate="tanh"), ([0.0, -3.0],)),
    # --- norms at the zero vector
    *(
        Case(
            f"vector_norm_{p}",
            lambda x, p=p: ag.linalg.vector_norm(x, ord=p, axis=-1),
            lambda x, p=p: torch.linalg.vector_norm(x, ord=p, dim=-1),
            (ZERO_3,),
        )
        for p in (2, 1, INF, -INF, 0.5, 1.5, 3, 0, -1, -0.5)
    ),
    Case(
        "vector_norm_all_zero",
        lambda x: ag.linalg.vector_norm(x),
        lambda x: torch.linalg.vector_norm(x),
        ([0.0, 0.0, 0.0],),
    ),
    *(
        Case(
            f"matrix_norm_{p}",
            lambda x, p=p: ag.linalg.matrix_norm(x, ord=p),
            lambda x, p=p: torch.linalg.matrix_norm(x, ord=p),
            ([[[0.0, 0.0], [0.0, 0.0]], [[1.0, -1.0], [1.0, -1.0]]],),
        )
        for p in ("fro", 1, INF, -1, -INF)
    ),
    # --- statistics of constant data
    *(
        Case(
            f"std_constant_{c}",
            lambda x, c=c: ag.std(x, axis=-1, correction=c),
            lambda x, c=c: torch.std(x, dim=-1, correction=c),
            ([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]],),
        )
        for c in (0, 1)
    ),
    Case(
        "std_single_unbiased",
        lambda x: ag.std(x, axis=-1, correction=1),
        lambda x: torch.std(x, dim=-1, correction=1),
        ([[2.0], [3.0]],),
    ),
    Case(
        "layer_norm_constant",
        lambda x: F.layer_norm(x, (3,)),
        lambda x: TF.layer_norm(x, (3,)),
        ([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]],),
    ),
    Case(
        "group_norm_constant",
        lambda x: F.group_norm(x, 2),
        lambda x: TF.group_norm(x, 2),
        ([[[1.0, 1.0], [1.0, 1.0], [0.0, 3.0], [1.0, 2.0]]],),
    ),
    Case(
        "batch_norm_constant",
        lambda x: F.batch_norm(x, None, None, training=True),
        lambda x: TF.batch_norm(x, None, None, training=True),
        ([[2.0, 1.0], [2.0, 3.0], [2.0, -1.0]],),
    ),
    Case(
        "var_constant",
        lambda x: ag.var(x, axis=-1, correction=1),
        lambda x: torch.var(x, dim=-1, correction=1),
        ([[2.0, 2.0], [1.0, 3.0]],),
    ),
    # --- reductions with ties and zeros
    Case("max_ties", lambda x: ag.max(x, axis=-1), lambda x: torch.amax(x, dim=-1), (TIED,)),
    Case("min_ties", lambda x: ag.min(x, axis=-1), lambda x: torch.amin(x, dim=-1), (TIED,)),
    Case("max_all_ties", ag.max, torch.max, (TIED,)),
    *(
        Case(
            f"{name}_dim_ties",
            lambda x, name=name: getattr(x, name)(1)[0],
            lambda x, name=name: getattr(x, name)(1)[0],
            (TIED,),
        )
        for name in ("max", "min", "cummax", "cummin")
    ),
    # PyTorch's second derivative comes from its log-space formula (a logcumsumexp of log|g|),
    # finite in places where that of the running sum is nan: the first order and forward mode
    Case(
        "logcumsumexp_neg_inf",
        lambda x: x.logcumsumexp(-1),
        lambda x: torch.logcumsumexp(x, dim=-1),
        ([[-INF, -INF, 0.0], [-INF, 1.0, -INF]],),
        orders=("value", "grad", "jvp"),
    ),
    Case(
        "sort_ties",
        lambda x: ag.sort(x, axis=-1),
        lambda x: torch.sort(x, dim=-1, stable=True).values,
        (TIED,),
    ),
    Case(
        "prod_zeros",
        lambda x: ag.prod(x, axis=-1),
        lambda x: torch.prod(x, dim=-1),
        ([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 3.0]],),
    ),
    Case(
        "cumprod_zeros",
        lambda x: ag.cumulative_prod(x, axis=-1),
        lambda x: torch.cumprod(x, dim=-1),
        ([[2.0, 0.0, 3.0, 4.0], [0.0, 0.0, 5.0, 1.0]],),
    ),
    # --- -inf logits
    Case(
        "logsumexp_neg_inf",
        lambda x: ag.logsumexp(x, axis=-1),
        lambda x: torch.logsumexp(x, dim=-1),
        ([[-INF, -INF], [-INF, 0.0]],),
    ),
    Case("softmax_neg_inf", lambda x: ag.softmax(x, axis=-1), lambda x: torch.softmax(x, -1), (NEG_INF_LOGITS,)),
    Case(
        "log_softmax_neg_inf",
        lambda x: ag.log_softmax(x, axis=-1),
        lambda x: torch.log_softmax(x, -1),
        (NEG_INF_LOGITS,),
    ),
    Case(
        "log_softmax_all_neg_inf",
        lambda x: ag.log_softmax(x, axis=-1),
        lambda x: torch.log_softmax(x, -1),
        ([[-INF, -INF, -INF], [0.0, 1.0, 2.0]],),
    ),
    *(
        Case(
            f"cross_entropy_neg_inf_target_{target}",
            lambda x, target=target: F.cross_entropy(x, ag.asarray([target, target])),
            lambda x, target=target: TF.cross_entropy(x, torch.tensor([target, target])),
            (NEG_INF_LOGITS,),
        )
        for target in (2, 0)
    ),
    Case(
        "cross_entropy_smoothing_neg_inf",
        lambda x: F.cross_entropy(x, ag.asarray([2, 2]), label_smoothing=0.1),
        lambda x: TF.cross_entropy(x, torch.tensor([2, 2]), label_smoothing=0.1),
        (NEG_INF_LOGITS,),
    ),
    Case(
        "cross_entropy_soft_targets_neg_inf",
        lambda x: F.cross_entropy(x, ag.asarray([[0.0, 0.5, 0.5], [0.0, 0.0, 1.0]], dtype="float64")),
        lambda x: TF.cross_entropy(x, torch.tensor([[0.0, 0.5, 0.5], [0.0, 0.0, 1.0]], dtype=torch.float64)),
        (NEG_INF_LOGITS,),
    ),
    # --- losses at their kinks
    Case("l1_loss_equal", F.l1_loss, TF.l1_loss, ([0.0, 1.0, 2.0], [0.0, 1.0, 3.0])),
    Case(
        "smooth_l1_at_beta",
        lambda x, y: F.smooth_l1_loss(x, y, beta=1.0),
        lambda x, y: TF.smooth_l1_loss(x, y, beta=1.0),
        ([1.0, -1.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.5]),
    ),
    Case(
        "smooth_l1_beta_zero",
        lambda x, y: F.smooth_l1_loss(x, y, beta=0.0),
        lambda x, y: TF.smooth_l1_loss(x, y, beta=0.0),
        ([1.0, 0.0, -1.0], [0.0, 0.0, 0.0]),
    ),
    Case(
        "bce_with_logits_extremes",
        F.binary_cross_entropy_with_logits,
        TF.binary_cross_entropy_with_logits,
        ([800.0, -800.0, 0.0, 800.0], [1.0, 0.0, 0.5, 0.0]),
    ),
    Case(
        "huber_at_delta",
        lambda x, y: F.huber_loss(x, y, delta=1.0),
        lambda x, y: TF.huber_loss(x, y, delta=1.0),
        ([1.0, -1.0, 0.0], [0.0, 0.0, 0.0]),
    ),
    # PyTorch's second derivative of binary cross-entropy has its own formula, which adds its
    # epsilon (1e-12) elsewhere: the two differ by some 1e-9 relative, 1e-11 absolute
    Case(
        "binary_cross_entropy_edges",
        F.binary_cross_entropy,
        TF.binary_cross_entropy,
        ([0.0, 1.0, 0.0, 1.0, 0.5], [0.0, 1.0, 1.0, 0.0, 0.5]),
        second_tolerance=dict(rtol=1e-8, atol=1e-10),
    ),
    Case(
        "kl_div_zero_target",
        lambda x: F.kl_div(x, ag.asarray([0.0, 0.5, 0.0], dtype="float64"), reduction="sum"),
        lambda x: TF.kl_div(x, torch.tensor([0.0, 0.5, 0.0], dtype=torch.float64), reduction="sum"),
        ([-1.0, -2.0, 0.0],),
    ),
    Case(
        "kl_div_zero_target_differentiated",
        lambda x, y: F.kl_div(x, y, reduction="sum"),
        lambda x, y: TF.kl_div(x, y, reduction="sum"),
        ([-1.0, -2.0, 0.0], [0.0, 0.5, 0.0]),
    ),
    # --- linear algebra at singular matrices
    # a rank-deficient matrix: the first order and the tangent (the second order of pinv, smooth
    # only where the rank is fixed, differs between PyTorch's pinv_backward and ours through the SVD)
    Case(
        "pinv_rank_deficient",
        ag.linalg.pinv,
        torch.linalg.pinv,
        ([[1.0, 2.0], [2.0, 4.0]],),
        orders=("value", "grad", "jvp"),
    ),
    # PyTorch's forward mode of det is tr(solve(A, dA)) det(A), 0 at a singular matrix: the
    # 2 x 2 determinant written out is the oracle of the tangent (the cofactors along dA)
    Case(
        "det_singular",
        ag.linalg.det,
        torch.linalg.det,
        (SINGULAR,),
        tangent_oracle=lambda a: a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0],
    ),
]


# --- running a case on both sides ---------------------------------------------------------------
def _cotangent(shape: tuple[int, ...], offset: float) -> np.ndarray:
    """Distinct weights, so that a rule that mixes up elements is caught."""
    n = math.prod(shape)
    return (offset + 0.25 * np.arange(n, dtype=np.float64)).reshape(shape)


def _leaves(values: tuple[Any, ...], make: Callable[[np.ndarray], Any]) -> list[Any]:
    return [make(np.asarray(v, dtype=np.float64)) for v in values]


def _torch_sides(case: Case) -> dict[str, list[np.ndarray]]:
    xs = _leaves(case.inputs, lambda v: torch.tensor(v, requires_grad=True))
    out = case.theirs(*xs)
    weights = torch.tensor(_cotangent(tuple(out.shape), 1.0))
    grads = torch.autograd.grad(out, xs, weights, create_graph=True, allow_unused=True)
    grads = [torch.zeros_like(x) if g is None else g for x, g in zip(xs, grads)]
    second = _torch_second(xs, grads)
    tangents = tuple(torch.tensor(_cotangent(tuple(x.shape), 0.5)) for x in xs)
    _, forward = torch.func.jvp(case.tangent_oracle or case.theirs, tuple(x.detach() for x in xs), tangents)
    return {
        "value": [_numpy(out)],
        "grad": [_numpy(g) for g in grads],
        "second": second,
        "jvp": [_numpy(forward)],
    }


def _torch_second(xs: list[Any], grads: list[Any]) -> list[np.ndarray]:
    weighted = [(g * torch.tensor(_cotangent(tuple(g.shape), 2.0))).sum() for g in grads if g.requires_grad]
    if not weighted:
        return [np.zeros(x.shape) for x in xs]
    second = torch.autograd.grad(sum(weighted), xs, allow_unused=True)
    return [np.zeros(x.shape) if s is None else _numpy(s) for x, s in zip(xs, second)]


def _numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().numpy(force=True)  # force: a zero second derivative may be a ZeroTensor


def _our_sides(case: Case) -> dict[str, list[np.ndarray]]:
    xs = _leaves(case.inputs, lambda v: ag.tensor(v, requires_grad=True))
    out = case.ours(*xs)
    weights = ag.asarray(_cotangent(tuple(out.shape), 1.0))
    grads = ag.grad(out, xs, weights, create_graph=True, allow_unused=True)
    grads = [ag.zeros_like(x) if g is None else g for x, g in zip(xs, grads)]
    weighted = [ag.sum(g * ag.asarray(_cotangent(tuple(g.shape), 2.0))) for g in grads if g.requires_grad]
    if weighted:
        total = weighted[0]
        for w in weighted[1:]:
            total = total + w
        second = ag.grad(total, xs, allow_unused=True)
        second = [np.zeros(x.shape) if s is None else host(s) for x, s in zip(xs, second)]
    else:
        second = [np.zeros(x.shape) for x in xs]
    primals = tuple(ag.asarray(np.asarray(v, dtype=np.float64)) for v in case.inputs)
    tangents = tuple(ag.asarray(_cotangent(tuple(p.shape), 0.5)) for p in primals)
    _, forward = func.jvp(case.ours, primals, tangents)
    return {"value": [host(out)], "grad": [host(g) for g in grads], "second": second, "jvp": [host(forward)]}


def assert_same_pattern(ours: np.ndarray, theirs: np.ndarray, what: str, tolerance: dict | None = None) -> None:
    """nan where PyTorch has nan, its infinities, and its finite values to float64 tolerance."""
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape}, PyTorch's {theirs.shape}"
    same = all(np.array_equal(test(ours), test(theirs)) for test in (np.isnan, np.isposinf, np.isneginf))
    finite = np.isfinite(theirs)
    if not same or not np.allclose(ours[finite], theirs[finite], **(tolerance or TOLERANCES["float64"])):
        raise AssertionError(f"{what}:\n  ours    {ours.tolist()}\n  PyTorch {theirs.tolist()}")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_singular_point_matches_pytorch(float64_backend, case):
    theirs, ours = _torch_sides(case), _our_sides(case)
    failures = []
    for order in case.orders:
        for i, (mine, ref) in enumerate(zip(ours[order], theirs[order])):
            try:
                tolerance = case.second_tolerance if order == "second" else None
                assert_same_pattern(mine, ref, f"{order} of input {i}" if order != "value" else order, tolerance)
            except AssertionError as e:
                failures.append(str(e))
    assert not failures, f"{case.name}:\n" + "\n".join(failures)
