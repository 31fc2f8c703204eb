"""PyTorch as a differential oracle for the primitive ops: float64 values and gradients.

Every case feeds the same random host inputs to one of our functions and to its torch
counterpart, compares the outputs, then runs backward of ``(out * w).sum()`` with a random
weight `w` (so a VJP that permutes or mis-scales its output cannot pass) and compares every
input gradient. Inputs are continuous random draws, so maximum/minimum/max/min/clip/relu/abs
never see ties or kinks: there torch and we may legitimately choose differently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import autograd_core as ag
import nn.functional as F
from torch_oracle import Arg, compare_with_torch, const, mask, normal, positive


# --- the table: (id, ours, theirs, inputs); theirs=None means the same callable serves both ---
def case(name: str, ours: Callable, theirs: Callable | None, *args: Arg) -> Any:
    return pytest.param(ours, theirs or ours, args, id=name)


def dims(shape: tuple[int, ...]) -> str:
    """A shape for a test id: (2, 3) -> "2x3", () -> "0d"."""
    return "x".join(map(str, shape)) or "0d"


UNARY = [
    ("exp", ag.exp, torch.exp, normal(3, 4)),
    ("log", ag.log, torch.log, positive(3, 4)),
    ("log1p", ag.log1p, torch.log1p, positive(3, 4)),
    ("sqrt", ag.sqrt, torch.sqrt, positive(3, 4)),
    ("tanh", ag.tanh, torch.tanh, normal(3, 4, scale=2)),
    ("sigmoid", ag.sigmoid, torch.sigmoid, normal(3, 4, scale=3)),
    ("sigmoid_large", ag.sigmoid, torch.sigmoid, normal(3, 4, scale=30)),
    ("relu", ag.relu, torch.relu, normal(3, 4)),
    ("abs", ag.abs, torch.abs, normal(3, 4)),
    ("erf", ag.erf, torch.erf, normal(3, 4)),
    ("erf_tails", ag.erf, torch.erf, normal(3, 4, scale=3)),
    ("sin", ag.sin, torch.sin, normal(3, 4, scale=3)),
    ("cos", ag.cos, torch.cos, normal(3, 4, scale=3)),
    ("negative", ag.negative, torch.neg, normal(3, 4)),
    ("clone", ag.clone, torch.clone, normal(3, 4)),
    ("gelu", F.gelu, torch.nn.functional.gelu, normal(3, 4, scale=2)),
    (
        "gelu_tanh",
        lambda x: F.gelu(x, approximate="tanh"),
        lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
        normal(3, 4, scale=2),
    ),
]

# Binary ops on equal and broadcast shapes; the second operand is drawn where the op is smooth.
BINARY = [
    ("add", ag.add, torch.add, normal),
    ("subtract", ag.subtract, torch.sub, normal),
    ("multiply", ag.multiply, torch.mul, normal),
    ("divide", ag.divide, torch.div, positive),
    ("maximum", ag.maximum, torch.maximum, normal),
    ("minimum", ag.minimum, torch.minimum, normal),
]
SHAPE_PAIRS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3))]

SCALARS = [
    case("radd", lambda x: 1.5 + x, None, normal(3, 4)),
    case("rsub", lambda x: 1.5 - x, None, normal(3, 4)),
    case("rtruediv", lambda x: 2.0 / x, None, positive(3, 4)),
    case("pow", ag.pow, torch.pow, positive(3, 4), normal(3, 4)),
    case("pow_broadcast", ag.pow, torch.pow, positive(3, 1), normal(4)),
    case("pow_scalar_exponent", lambda x: x**3, None, normal(3, 4)),
    case("rpow", lambda x: 2.0**x, None, normal(3, 4)),
    case("maximum_scalar", lambda x: ag.maximum(x, 0.25), lambda x: torch.clamp(x, min=0.25), normal(3, 4)),
    case("minimum_scalar", lambda x: ag.minimum(x, 0.25), lambda x: torch.clamp(x, max=0.25), normal(3, 4)),
    case("where", ag.where, torch.where, mask(3, 4), normal(3, 4), normal(4)),
    case(
        "where_scalar", lambda c, x: ag.where(c, x, 0.5), lambda c, x: torch.where(c, x, 0.5), mask(3, 4), normal(3, 4)
    ),
    case("clip", lambda x: ag.clip(x, -0.5, 0.7), lambda x: torch.clamp(x, -0.5, 0.7), normal(3, 4)),
    case("clip_min", lambda x: ag.clip(x, min=-0.5), lambda x: torch.clamp(x, min=-0.5), normal(3, 4)),
    case("clip_max", lambda x: ag.clip(x, max=0.3), lambda x: torch.clamp(x, max=0.3), normal(3, 4)),
    case("chain_shared_input", lambda x: ((x.exp() * x).tanh() + x.sin() / (1 + x * x)).sum(1), None, normal(3, 4)),
]

MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (3, 4, 5)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((4,), (4,)),
    ((4,), (2, 4, 5)),
]

# Reductions over (2, 3, 4); torch takes the full tuple of axes where we take None.
REDUCTIONS = [
    ("sum", ag.sum, torch.sum),
    ("mean", ag.mean, torch.mean),
    ("max", ag.max, torch.amax),
    ("min", ag.min, torch.amin),
    ("logsumexp", ag.logsumexp, torch.logsumexp),
]
AXES = [None, 1, -1, (0, 2)]


def torch_dims(axis: Any) -> Any:
    """torch reduces over all axes when given all of them (its dim=None is not universal)."""
    return (0, 1, 2) if axis is None else axis


REDUCTION_CASES = (
    [
        case(
            f"{name}-axis{axis}-keep{keep}",
            lambda x, f=ours, a=axis, k=keep: f(x, a, keepdims=k),
            lambda x, f=theirs, a=axis, k=keep: f(x, torch_dims(a), keepdim=k),
            normal(2, 3, 4),
        )
        for name, ours, theirs in REDUCTIONS
        for axis in AXES
        for keep in (False, True)
    ]
    + [
        case(
            f"var-corr{c}-axis{axis}-keep{keep}",
            lambda x, a=axis, c=c, k=keep: ag.var(x, a, correction=c, keepdims=k),
            lambda x, a=axis, c=c, k=keep: torch.var(x, torch_dims(a), correction=c, keepdim=k),
            normal(2, 3, 4),
        )
        for c in (0, 1)
        for axis in (None, 1, (0, 2))
        for keep in (False, True)
    ]
    + [
        # PyTorch-style methods with PyTorch's keywords and defaults (var: correction=1).
        case("method_sum_dim", lambda x: x.sum(dim=1, keepdim=True), None, normal(2, 3, 4)),
        case("method_mean_dim", lambda x: x.mean(dim=(0, 2)), None, normal(2, 3, 4)),
        case("method_var_default", lambda x: x.var(), None, normal(2, 3, 4)),
        case("method_var_dim", lambda x: x.var(dim=-1, keepdim=True), None, normal(2, 3, 4)),
        case("method_logsumexp", lambda x: x.logsumexp(dim=0), None, normal(2, 3, 4)),
        case("max_1d", ag.max, torch.amax, normal(5)),
        case(
            "logsumexp_large", lambda x: ag.logsumexp(x, -1), lambda x: torch.logsumexp(x, -1), normal(3, 4, scale=1e3)
        ),
    ]
)

SOFTMAXES = [("softmax", ag.softmax, torch.softmax), ("log_softmax", ag.log_softmax, torch.log_softmax)]
SOFTMAX_CASES = [
    case(
        f"{name}-axis{axis}-{dims(shape)}-scale{scale}",
        lambda x, f=ours, a=axis: f(x, a),
        lambda x, f=theirs, a=axis: f(x, a),
        normal(*shape, scale=scale),
    )
    for name, ours, theirs in SOFTMAXES
    for shape, axis, scale in (((3, 4), -1, 1), ((3, 4), 0, 1), ((2, 3, 4), 1, 1), ((3, 4), -1, 300))
]

SHAPE_CASES = [
    case("reshape", lambda x: ag.reshape(x, (4, 6)), lambda x: torch.reshape(x, (4, 6)), normal(2, 3, 4)),
    case("reshape_method_infer", lambda x: x.reshape(-1, 2), None, normal(2, 3, 4)),
    case("view", lambda x: x.view(6, 4), None, normal(2, 3, 4)),
    case(
        "permute_dims", lambda x: ag.permute_dims(x, (2, 0, 1)), lambda x: torch.permute(x, (2, 0, 1)), normal(2, 3, 4)
    ),
    case("permute_method", lambda x: x.permute(1, 2, 0), None, normal(2, 3, 4)),
    case("matrix_transpose", ag.matrix_transpose, lambda x: x.mT, normal(2, 3, 4)),
    case("T", lambda x: x.T, None, normal(3, 4)),
    case("swapaxes", lambda x: ag.swapaxes(x, 0, 2), lambda x: torch.swapaxes(x, 0, 2), normal(2, 3, 4)),
    case("expand_dims", lambda x: ag.expand_dims(x, 1), lambda x: torch.unsqueeze(x, 1), normal(3, 4)),
    case("squeeze", lambda x: ag.squeeze(x, 1), lambda x: torch.squeeze(x, 1), normal(3, 1, 4)),
    case("squeeze_all", lambda x: x.squeeze(), None, normal(1, 3, 1)),
    case("flatten", lambda x: ag.flatten(x, 1), lambda x: torch.flatten(x, 1), normal(2, 3, 4)),
    case(
        "broadcast_to",
        lambda x: ag.broadcast_to(x, (2, 3, 4)),
        lambda x: torch.broadcast_to(x, (2, 3, 4)),
        normal(3, 1),
    ),
    case("expand", lambda x: x.expand(2, 3, 4), None, normal(1, 4)),
    case(
        "concat",
        lambda a, b: ag.concat([a, b, a], axis=1),
        lambda a, b: torch.cat([a, b, a], dim=1),
        normal(2, 3),
        normal(2, 2),
    ),
    case(
        "stack",
        lambda a, b: ag.stack([a, b], axis=-1),
        lambda a, b: torch.stack([a, b], dim=-1),
        normal(2, 3),
        normal(2, 3),
    ),
]

# Indexing: repeated indices must accumulate, negative ones wrap.
INDEX_CASES = [
    case(
        "take_repeated",
        lambda x, i: ag.take(x, i, axis=0),
        lambda x, i: torch.index_select(x, 0, i),
        normal(4, 3),
        const([2, 0, 2, 2, 3]),
    ),
    case(
        "take_axis1",
        lambda x, i: ag.take(x, i, axis=1),
        lambda x, i: torch.index_select(x, 1, i),
        normal(2, 4, 3),
        const([1, 1, 3]),
    ),
    case("getitem_rows_repeated", lambda x, i: x[i], None, normal(4, 3), const([3, 1, 3, 3, 0])),
    case("getitem_list_negative", lambda x: x[[-1, 0, -1]], None, normal(4, 3)),
    case("getitem_columns", lambda x, i: x[:, i], None, normal(2, 4, 3), const([2, 2, 0])),
    case("getitem_pairs", lambda x, i, j: x[i, j], None, normal(4, 3), const([0, 2, 0, 3]), const([1, 1, 1, 2])),
    case("getitem_2d_index", lambda x, i: x[i], None, normal(4, 3), const([[0, 1], [1, 1], [3, 0]])),
    case("getitem_array_then_slice", lambda x, i: x[i, 1:], None, normal(4, 3), const([1, 1, 2])),
    case("getitem_int", lambda x: x[-1], None, normal(4, 3)),
    case("getitem_slices", lambda x: x[1:, ::2], None, normal(4, 5)),
    case("getitem_ellipsis", lambda x: x[..., 1], None, normal(2, 3, 4)),
    case("getitem_none", lambda x: x[None, 1:3], None, normal(4, 3)),
]

CASES = (
    [case(name, ours, theirs, arg) for name, ours, theirs, arg in UNARY]
    + [
        case(f"{name}-{dims(sa)}-{dims(sb)}", ours, theirs, normal(*sa), draw(*sb))
        for name, ours, theirs, draw in BINARY
        for sa, sb in SHAPE_PAIRS
    ]
    + SCALARS
    + [
        case(f"matmul-{dims(sa)}-{dims(sb)}", ag.matmul, torch.matmul, normal(*sa), normal(*sb))
        for sa, sb in MATMUL_SHAPES
    ]
    + [case("matmul_operator", lambda a, b: a @ b, None, normal(2, 3, 4), normal(4, 2))]
    + REDUCTION_CASES
    + SOFTMAX_CASES
    + SHAPE_CASES
    + INDEX_CASES
)


@pytest.mark.parametrize(("ours", "theirs", "args"), CASES)
def test_op_matches_torch(float64_backend, ours, theirs, args):
    compare_with_torch(ours, theirs, args)


def test_oracle_rejects_a_wrong_gradient(float64_backend):
    """The comparison itself can fail: x * x.detach() has the right values, half the gradient."""
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        compare_with_torch(lambda x: x * x.detach(), lambda x: x * x, [normal(3)])
