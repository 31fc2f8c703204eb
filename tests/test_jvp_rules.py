"""Forward mode's native rules: the ``jvp=`` of every primitive in ops, elementwise, creation,
manipulation, statistics, fft and linalg.

Each case runs `func.jvp` with the rules and again inside `forward.double_vjp_only()`, whose
tangents come from the VJPs alone (the oracle), on every backend, in float64: the two agree to
1e-10 (relative, with a floor of 1e-10 for elements near zero). A representative subset is also
checked against ``torch.func.jvp`` of the torch twin (on numpy), including the ops whose
tangents are complex (the real ends of the FFTs, real/imag/conj), which the fallback cannot
give; a few are differentiated again (``grad`` of ``jvp``) against the fallback's second
derivative. `test_fallback_list` names the primitives of these modules still without a rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import pytest
import torch

import autograd_core as ag
import backends
from autograd_core import func
from autograd_core.autodiff import forward
from autograd_core.graph.pytree import tree_flatten
from autograd_core.graph.registry import registry
from helpers import host

RULE_MODULES = {
    "autograd_core.ops.core",
    "autograd_core.ops.elementwise",
    "autograd_core.ops.creation",
    "autograd_core.ops.manipulation",
    "autograd_core.ops.statistics",
    "autograd_core.ops.fft",
    "autograd_core.ops.linalg",
}
OWN = {name for name, p in registry.items() if p.records and p.default.__module__ in RULE_MODULES}
# the primitives of these modules left on the double-VJP fallback, and why
FALLBACK: dict[str, str] = {}


# --- inputs ---------------------------------------------------------------------------------
def normal(*shape: int) -> np.ndarray:
    return _R.standard_normal(shape)


def positive(*shape: int) -> np.ndarray:
    return _R.uniform(0.5, 2.0, shape)


def away(*shape: int) -> np.ndarray:
    """Magnitudes in [0.3, 2] with random signs: clear of the kinks and poles at 0."""
    return _R.uniform(0.3, 2.0, shape) * _R.choice([-1.0, 1.0], shape)


def inside_unit(*shape: int) -> np.ndarray:
    return _R.uniform(-0.9, 0.9, shape)


def above_one(*shape: int) -> np.ndarray:
    return _R.uniform(1.2, 3.0, shape)


def spd(*shape: int) -> np.ndarray:
    """Symmetric positive-definite matrices, well conditioned."""
    b = normal(*shape)
    return b @ np.swapaxes(b, -1, -2) + shape[-1] * np.eye(shape[-1])


def symmetric(*shape: int) -> np.ndarray:
    b = normal(*shape)
    return b + np.swapaxes(b, -1, -2)


_R = np.random.default_rng(0)
TIES = np.array([[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 2.0, 0.5], [0.0, -4.0, 5.0, 5.0]])
ZEROS = np.array([[2.0, 0.0, 3.0, 1.5], [0.0, 4.0, 0.0, -1.0], [1.0, -2.0, 0.5, 3.0]])  # one zero, two zeros


class Case(NamedTuple):
    fn: Callable[..., Any]  # on autograd_core tensors
    inputs: tuple[np.ndarray, ...]  # the primals, on the host
    torch_fn: Callable[..., Any] | None = None  # the torch twin, where compared


def cases(table: dict[str, tuple]) -> list:
    return [pytest.param(Case(*spec), id=name) for name, spec in table.items()]


# --- the families ---------------------------------------------------------------------------
# name: (draw, torch's name); the op is ag.<name>
UNARY = {
    "negative": (normal, "neg"),
    "positive": (normal, "positive"),
    "exp": (normal, "exp"),
    "log": (positive, "log"),
    "log1p": (positive, "log1p"),
    "sqrt": (positive, "sqrt"),
    "tanh": (normal, "tanh"),
    "sigmoid": (normal, "sigmoid"),
    "abs": (away, "abs"),
    "sign": (away, "sign"),
    "sin": (normal, "sin"),
    "cos": (normal, "cos"),
    "acos": (inside_unit, "acos"),
    "asin": (inside_unit, "asin"),
    "atan": (normal, "atan"),
    "tan": (inside_unit, "tan"),
    "sinh": (normal, "sinh"),
    "cosh": (normal, "cosh"),
    "acosh": (above_one, "acosh"),
    "asinh": (normal, "asinh"),
    "atanh": (inside_unit, "atanh"),
    "expm1": (normal, "expm1"),
    "exp2": (normal, "exp2"),
    "log2": (positive, "log2"),
    "log10": (positive, "log10"),
    "square": (normal, "square"),
    "reciprocal": (away, "reciprocal"),
    "floor": (away, "floor"),
    "ceil": (away, "ceil"),
    "trunc": (away, "trunc"),
    "round": (away, "round"),
    "real": (normal, "real"),
    "conj": (normal, "conj"),
}
ELEMENTWISE = {
    **{
        name: (getattr(ag, name), (draw(3, 4),), lambda x, n=twin: getattr(torch, n)(x).resolve_conj())
        for name, (draw, twin) in UNARY.items()
    },
    "exp-0d": (ag.exp, (normal(),), torch.exp),
    "sqrt-of-square": (lambda x: ag.sqrt(x * x + 1.0), (normal(5),), lambda x: torch.sqrt(x * x + 1.0)),
}

# name: (op, draw of x1, draw of x2, torch's op)
BINARY = {
    "add": (ag.add, normal, normal, torch.add),
    "subtract": (ag.subtract, normal, normal, torch.sub),
    "multiply": (ag.multiply, normal, normal, torch.mul),
    "divide": (ag.divide, normal, away, torch.div),
    "pow": (ag.pow, positive, normal, torch.pow),
    "remainder": (ag.remainder, normal, away, torch.remainder),
    "floor_divide": (ag.floor_divide, normal, away, None),  # torch has no forward AD for it
    "maximum": (ag.maximum, normal, normal, torch.maximum),
    "minimum": (ag.minimum, normal, normal, torch.minimum),
    "atan2": (ag.atan2, normal, normal, torch.atan2),
    "logaddexp": (ag.logaddexp, normal, normal, torch.logaddexp),
    "hypot": (ag.hypot, away, away, torch.hypot),
    "copysign": (ag.copysign, away, away, torch.copysign),
    "nextafter": (ag.nextafter, normal, normal, None),
}
for name, (op, draw1, draw2, twin) in BINARY.items():
    # broadcast against each other, and a Python scalar (a constant) on either side
    ELEMENTWISE[f"{name}-broadcast"] = (op, (draw1(3, 1), draw2(4)), twin)
    ELEMENTWISE[f"{name}-scalar-right"] = (lambda x, op=op: op(x, 1.3), (draw1(2, 3),))
    ELEMENTWISE[f"{name}-scalar-left"] = (lambda x, op=op: op(1.3, x), (draw2(2, 3),))
for name in ("multiply", "pow", "maximum"):
    op, draw1, draw2, twin = BINARY[name]
    ELEMENTWISE[f"{name}-0d"] = (op, (draw1(), draw2()), twin)
ELEMENTWISE.update(
    {
        "maximum-ties": (ag.maximum, (TIES, TIES[::-1].copy()), torch.maximum),
        "minimum-ties-broadcast": (ag.minimum, (TIES, TIES[:1]), torch.minimum),
        "operators": (lambda x, y: (x * 2 - y) / (1.5 + y * y) ** 2, (normal(3), normal(2, 3)), None),
        "integer-operand": (lambda x: x * ag.arange(4) + ag.ones(4, dtype="int64"), (normal(4),), None),
        "where-scalar": (lambda x: ag.where(x > 0, x, 0.5), (away(3, 4),), None),
        "where-broadcast": (lambda x, y: ag.where(x > y, x * y, y), (normal(3, 1), normal(4)), None),
        "where-constant-branch": (lambda x: ag.where(x > 0, ag.ones(4, dtype="float64"), x), (away(4),), None),
        "clip-scalars": (lambda x: ag.clip(x, -0.5, 0.7), (away(3, 4),), lambda x: torch.clamp(x, -0.5, 0.7)),
        "clip-tensors": (
            lambda x, lo, hi: ag.clip(x, lo, hi),
            (normal(3, 4), -0.5 * positive(4), 0.5 * positive(3, 1)),
            lambda x, lo, hi: torch.clamp(x, lo, hi),
        ),
        "clip-upper-only": (lambda x: ag.clip(x, max=0.2), (away(5),), None),
        "std-root": (lambda x: ag.std(x, axis=1, correction=1), (normal(3, 4),), lambda x: torch.std(x, dim=1)),
    }
)

REDUCTIONS = {
    "sum-all": (ag.sum, (normal(3, 4),), torch.sum),
    "sum-negative-axis": (lambda x: ag.sum(x, axis=-1), (normal(3, 4),), lambda x: torch.sum(x, dim=-1)),
    "sum-axes-keepdims": (
        lambda x: ag.sum(x, axis=(0, 2), keepdims=True),
        (normal(2, 3, 4),),
        lambda x: torch.sum(x, dim=(0, 2), keepdim=True),
    ),
    "sum-0d": (ag.sum, (normal(),), torch.sum),
    "mean": (lambda x: ag.mean(x, axis=1), (normal(3, 4),), lambda x: torch.mean(x, dim=1)),
    "max-ties": (lambda x: ag.max(x, axis=1), (TIES,), lambda x: torch.amax(x, dim=1)),
    "max-all-ties": (ag.max, (TIES,), torch.amax),
    "max-negative-axis-keepdims": (
        lambda x: ag.max(x, axis=-2, keepdims=True),
        (TIES,),
        lambda x: torch.amax(x, dim=-2, keepdim=True),
    ),
    "max-0d": (ag.max, (normal(),), torch.amax),
    "max-nan": (lambda x: ag.max(x, axis=1), (np.array([[1.0, np.nan, 2.0], [3.0, 3.0, 0.0]]),), None),
    "min-ties": (lambda x: ag.min(x, axis=0), (TIES,), lambda x: torch.amin(x, dim=0)),
    "min-axes": (lambda x: ag.min(x, axis=(0, 2)), (normal(2, 3, 4),), lambda x: torch.amin(x, dim=(0, 2))),
    "logsumexp-axis": (lambda x: ag.logsumexp(x, axis=-1), (normal(3, 4),), lambda x: torch.logsumexp(x, dim=-1)),
    "logsumexp-all": (ag.logsumexp, (normal(3, 4),), lambda x: torch.logsumexp(x, dim=(0, 1))),
    "logsumexp-keepdims": (
        lambda x: ag.logsumexp(x, axis=(0, 1), keepdims=True),
        (normal(2, 3, 4),),
        lambda x: torch.logsumexp(x, dim=(0, 1), keepdim=True),
    ),
    "log_softmax": (lambda x: ag.log_softmax(x, axis=0), (normal(3, 4),), lambda x: torch.log_softmax(x, dim=0)),
    "prod-zeros-axis": (lambda x: ag.prod(x, axis=1), (ZEROS,), lambda x: torch.prod(x, dim=1)),
    "prod-zeros-all": (ag.prod, (ZEROS[2:],), torch.prod),
    "prod-zeros-keepdims": (
        lambda x: ag.prod(x, axis=-2, keepdims=True),
        (ZEROS,),
        lambda x: torch.prod(x, dim=-2, keepdim=True),
    ),
    "prod-axes": (lambda x: ag.prod(x, axis=(0, 2)), (normal(2, 3, 2),), None),
    "prod-0d": (ag.prod, (normal(),), torch.prod),
    "std-correction": (
        lambda x: ag.std(x, axis=0, correction=1),
        (normal(4, 3),),
        lambda x: torch.std(x, dim=0, correction=1),
    ),
    "std-all-keepdims": (
        lambda x: ag.std(x, keepdims=True),
        (normal(3, 4),),
        lambda x: torch.std(x, correction=0, keepdim=True),
    ),
    "std-equal-elements": (lambda x: ag.std(x * 0.0 + 1.0, axis=1), (normal(2, 3),), None),
    "var": (lambda x: ag.var(x, axis=1, correction=1), (normal(3, 4),), lambda x: torch.var(x, dim=1)),
    "cumulative_sum": (
        lambda x: ag.cumulative_sum(x, axis=1),
        (normal(3, 4),),
        lambda x: torch.cumsum(x, dim=1),
    ),
    "cumulative_sum-initial": (lambda x: ag.cumulative_sum(x, include_initial=True), (normal(5),), None),
    "cumulative_sum-0d": (ag.cumulative_sum, (normal(),), lambda x: torch.cumsum(x, dim=0)),
    "cumulative_prod-zeros": (
        lambda x: ag.cumulative_prod(x, axis=-1),
        (ZEROS,),
        lambda x: torch.cumprod(x, dim=-1),
    ),
    "cumulative_prod-axis0": (lambda x: ag.cumulative_prod(x, axis=0), (normal(5, 2),), None),
    "cumulative_prod-initial": (lambda x: ag.cumulative_prod(x, include_initial=True), (normal(7),), None),
    "cumulative_prod-0d": (ag.cumulative_prod, (normal(),), None),
    "logcumsumexp": (lambda x: x.logcumsumexp(1), (normal(3, 5),), lambda x: torch.logcumsumexp(x, dim=1)),
    "vector_norm-2": (ag.linalg.vector_norm, (normal(3, 4),), torch.linalg.vector_norm),
    "vector_norm-1-axis": (
        lambda x: ag.linalg.vector_norm(x, axis=1, ord=1),
        (away(3, 4),),
        lambda x: torch.linalg.vector_norm(x, dim=1, ord=1),
    ),
    "vector_norm-inf-ties": (
        lambda x: ag.linalg.vector_norm(x, axis=-1, ord=math.inf),
        (TIES,),
        lambda x: torch.linalg.vector_norm(x, dim=-1, ord=math.inf),
    ),
    "vector_norm-minus-inf": (lambda x: ag.linalg.vector_norm(x, axis=0, ord=-math.inf), (away(3, 4),), None),
    "vector_norm-3-keepdims": (
        lambda x: ag.linalg.vector_norm(x, axis=(0, 1), keepdims=True, ord=3),
        (away(2, 3, 2),),
        lambda x: torch.linalg.vector_norm(x, dim=(0, 1), keepdim=True, ord=3),
    ),
    "vector_norm-half-zero-row": (
        lambda x: ag.linalg.vector_norm(x * ag.asarray([[0.0], [1.0]]), axis=1, ord=0.5),
        (away(2, 3),),
        None,
    ),
    "vector_norm-0": (lambda x: ag.linalg.vector_norm(x, ord=0) + ag.sum(x), (normal(4),), None),
}

SHAPES = {
    "reshape": (lambda x: ag.reshape(x, (4, -1)), (normal(2, 3, 2),), lambda x: torch.reshape(x, (4, -1))),
    "permute_dims": (lambda x: ag.permute_dims(x, (2, 0, 1)), (normal(2, 3, 4),), lambda x: x.permute(2, 0, 1)),
    "matrix_transpose": (ag.matrix_transpose, (normal(2, 3, 4),), lambda x: x.mT),
    "broadcast_to": (lambda x: ag.broadcast_to(x, (2, 3, 4)), (normal(3, 1),), lambda x: x.expand(2, 3, 4)),
    "expand_squeeze": (lambda x: ag.squeeze(ag.expand_dims(x, axis=1), axis=1) * 2, (normal(3),), None),
    "concat-with-constant": (
        lambda x, y: ag.concat([x, ag.ones((1, 4), dtype="float64"), y], axis=0),
        (normal(2, 4), normal(3, 4)),
        None,
    ),
    "concat-negative-axis": (
        lambda x, y: ag.concat([x, y], axis=-1),
        (normal(2, 1), normal(2, 3)),
        lambda x, y: torch.cat([x, y], dim=-1),
    ),
    "stack": (lambda x, y: ag.stack([x, y], axis=1), (normal(3), normal(3)), lambda x, y: torch.stack([x, y], 1)),
    "astype-float32": (lambda x: ag.astype(ag.astype(x, "float32"), "float64"), (normal(4),), None),
    "clone": (ag.clone, (normal(3, 2),), torch.clone),
    "flip": (lambda x: ag.flip(x, axis=(0, -1)), (normal(2, 3, 4),), lambda x: torch.flip(x, (0, -1))),
    "flip-all": (ag.flip, (normal(2, 3),), None),
    "roll": (lambda x: ag.roll(x, (1, -2), axis=(0, 1)), (normal(3, 4),), lambda x: torch.roll(x, (1, -2), (0, 1))),
    "roll-flat": (lambda x: ag.roll(x, 5), (normal(3, 4),), lambda x: torch.roll(x, 5)),
    "tril": (lambda x: ag.tril(x, k=-1), (normal(2, 4, 4),), lambda x: torch.tril(x, -1)),
    "triu": (lambda x: ag.triu(x, k=1), (normal(3, 5),), lambda x: torch.triu(x, 1)),
    "matmul": (ag.matmul, (normal(3, 4), normal(4, 2)), torch.matmul),
    "matmul-batched-broadcast": (ag.matmul, (normal(2, 1, 3, 4), normal(5, 4, 2)), torch.matmul),
    "matmul-vector-left": (ag.matmul, (normal(4), normal(2, 4, 3)), torch.matmul),
    "matmul-vector-right": (ag.matmul, (normal(2, 3, 4), normal(4)), torch.matmul),
    "matmul-constant": (lambda x: x @ ag.ones((3, 2), dtype="float64"), (normal(4, 3),), None),
    "diagonal": (
        lambda x: ag.linalg.diagonal(x, offset=1),
        (normal(2, 3, 4),),
        lambda x: torch.diagonal(x, offset=1, dim1=-2, dim2=-1),
    ),
    "trace": (ag.linalg.trace, (normal(4, 4),), torch.trace),
    "outer": (ag.linalg.outer, (normal(3), normal(4)), torch.outer),
    "cross-broadcast": (
        lambda a, b: ag.linalg.cross(a, b),
        (normal(2, 3), normal(3)),
        lambda a, b: torch.linalg.cross(a, b[None]),
    ),
    "tensordot": (lambda a, b: ag.linalg.tensordot(a, b, axes=1), (normal(2, 3), normal(3, 4)), None),
}


def _eigh_fixed(pair: Sequence[Any], xp: Any) -> Any:
    """Eigenvalues above eigenvectors, the sign of each vector (arbitrary: two libraries may
    disagree) fixed by its first element, as one tensor."""
    values, vectors = pair
    return xp.concat([values[None, :], vectors * xp.sign(vectors[:1, :])], axis=0)


def _svd_fixed(usv: Sequence[Any], xp: Any) -> Any:
    """U, S and Vh with each singular pair's sign fixed by U's first row, as one tensor."""
    u, s, vh = usv
    signs = xp.sign(u[:1, :])
    return xp.concat([u * signs, s[None, :], vh * signs.mT], axis=0)


_SPD = spd(3, 3)
LINALG = {
    "inv": (ag.linalg.inv, (spd(2, 3, 3),), torch.linalg.inv),
    "det": (ag.linalg.det, (normal(2, 3, 3),), torch.linalg.det),
    "slogdet": (lambda x: ag.linalg.slogdet(x)[1], (normal(3, 3),), lambda x: torch.linalg.slogdet(x)[1]),
    "solve": (ag.linalg.solve, (spd(3, 3), normal(3, 2)), torch.linalg.solve),
    "solve-vector": (ag.linalg.solve, (spd(3, 3), normal(3)), torch.linalg.solve),
    "solve-broadcast": (ag.linalg.solve, (spd(2, 3, 3), normal(3, 2)), torch.linalg.solve),
    "solve-constant-matrix": (lambda b: ag.linalg.solve(ag.asarray(_SPD), b), (normal(3, 2),), None),
    "cholesky": (ag.linalg.cholesky, (spd(2, 4, 4),), None),
    "cholesky-symmetric-tangent": (
        lambda x: ag.linalg.cholesky(x + ag.matrix_transpose(x)),
        (spd(4, 4),),
        lambda x: torch.linalg.cholesky(x + x.mT),
    ),
    "cholesky-upper": (lambda x: ag.linalg.cholesky(x, upper=True), (spd(3, 3),), None),
    "eigh": (lambda x: tuple(ag.linalg.eigh(x)), (symmetric(2, 4, 4),), None),
    "eigh-symmetric-tangent": (
        lambda x: _eigh_fixed(ag.linalg.eigh(x + x.mT), ag),
        (symmetric(4, 4),),
        lambda x: _eigh_fixed(torch.linalg.eigh(x + x.mT), torch),
    ),
    "eigvalsh": (ag.linalg.eigvalsh, (symmetric(2, 3, 3),), None),
    "eigvalsh-symmetric-tangent": (
        lambda x: ag.linalg.eigvalsh(x + x.mT),
        (symmetric(4, 4),),
        lambda x: torch.linalg.eigvalsh(x + x.mT),
    ),
    "qr-tall": (lambda x: tuple(ag.linalg.qr(x)), (normal(2, 5, 3),), lambda x: tuple(torch.linalg.qr(x))),
    "qr-square": (lambda x: tuple(ag.linalg.qr(x)), (normal(4, 4),), lambda x: tuple(torch.linalg.qr(x))),
    "qr-wide": (lambda x: tuple(ag.linalg.qr(x)), (normal(3, 5),), lambda x: tuple(torch.linalg.qr(x))),
    "qr-wide-complete": (lambda x: tuple(ag.linalg.qr(x, mode="complete")), (normal(2, 4),), None),
    "svd-tall": (lambda x: tuple(ag.linalg.svd(x, full_matrices=False)), (normal(2, 5, 3),), None),
    "svd-wide": (lambda x: tuple(ag.linalg.svd(x, full_matrices=False)), (normal(3, 5),), None),
    "svd-square-full": (lambda x: tuple(ag.linalg.svd(x)), (normal(4, 4),), None),
    "svd-tall-full": (lambda x: tuple(ag.linalg.svd(x)), (normal(5, 3),), None),
    "svd-wide-full": (lambda x: tuple(ag.linalg.svd(x)), (normal(2, 4),), None),
    "svd-signs-fixed": (
        lambda x: _svd_fixed(ag.linalg.svd(x, full_matrices=False), ag),
        (normal(5, 3),),
        lambda x: _svd_fixed(torch.linalg.svd(x, full_matrices=False), torch),
    ),
    "svdvals": (ag.linalg.svdvals, (normal(2, 3, 5),), torch.linalg.svdvals),
    "matrix_norm-nuc": (lambda x: ag.linalg.matrix_norm(x, ord="nuc"), (normal(4, 3),), None),
    "matrix_norm-2": (lambda x: ag.linalg.matrix_norm(x, ord=2), (normal(3, 3),), None),
    "pinv": (ag.linalg.pinv, (normal(4, 3),), torch.linalg.pinv),
    "matrix_power-negative": (lambda x: ag.linalg.matrix_power(x, -2), (spd(3, 3),), None),
}


_C = normal(5) + 1j * normal(5)
# functions linear in x through complex values, which the fallback cannot carry (its cotangent
# is real): the oracle is the exact difference f(x + t) - f(x), on every backend
LINEAR_THROUGH_COMPLEX = {
    "rfft": (ag.fft.rfft, (normal(2, 6),), torch.fft.rfft),
    "rfft-padded": (
        lambda x: ag.fft.rfft(x, n=8, norm="ortho"),
        (normal(5),),
        lambda x: torch.fft.rfft(x, 8, norm="ortho"),
    ),
    "rfft-cut-axis0": (
        lambda x: ag.fft.rfft(x, n=3, axis=0, norm="forward"),
        (normal(5, 2),),
        lambda x: torch.fft.rfft(x, 3, dim=0, norm="forward"),
    ),
    "rfftn-one-axis": (
        lambda x: ag.fft.rfftn(x, axes=(1,)),
        (normal(2, 6),),
        lambda x: torch.fft.rfftn(x, dim=(1,)),
    ),
    "ihfft": (ag.fft.ihfft, (normal(7),), torch.fft.ihfft),
    "fft": (lambda x: ag.fft.fft(x, n=7), (normal(2, 5),), lambda x: torch.fft.fft(x, n=7)),
    "ifft": (lambda x: ag.fft.ifft(x, axis=0), (normal(4, 3),), lambda x: torch.fft.ifft(x, dim=0)),
    "fftn": (lambda x: ag.fft.fftn(x, s=(3, 4)), (normal(2, 5),), lambda x: torch.fft.fftn(x, s=(3, 4))),
    "ifftn": (lambda x: ag.fft.ifftn(x, norm="ortho"), (normal(2, 5),), lambda x: torch.fft.ifftn(x, norm="ortho")),
    "irfft": (
        lambda x: ag.fft.irfft(ag.fft.rfft(x) * ag.asarray(_C[:4])),
        (normal(6),),
        lambda x: torch.fft.irfft(torch.fft.rfft(x) * torch.tensor(_C[:4])),
    ),
    "irfftn-odd": (
        lambda x: ag.fft.irfftn(ag.astype(x, "complex128") * ag.asarray(_C), s=(9,), axes=(0,), norm="forward"),
        (normal(5),),
        lambda x: torch.fft.irfftn(x.to(torch.complex128) * torch.tensor(_C), s=(9,), dim=(0,), norm="forward"),
    ),
    "hfft": (
        lambda x: ag.fft.hfft(ag.astype(x, "complex128") * ag.asarray(_C)),
        (normal(5),),
        lambda x: torch.fft.hfft(x.to(torch.complex128) * torch.tensor(_C)),
    ),
    "real-imag-conj": (
        lambda x: ag.real(ag.conj(ag.astype(x, "complex128") * ag.asarray(_C))) + ag.imag(ag.asarray(_C) * x),
        (normal(5),),
        lambda x: torch.real(torch.conj(x.to(torch.complex128) * torch.tensor(_C))) + torch.imag(torch.tensor(_C) * x),
    ),
}
COMPLEX = {
    "exp-imag": (
        lambda x: ag.imag(ag.exp(x * ag.asarray(_C))),
        (normal(5),),
        lambda x: torch.imag(torch.exp(x * torch.tensor(_C))),
    ),
}


# --- the checks -----------------------------------------------------------------------------
def assert_relative(actual: Any, expected: Any) -> None:
    """Agreement to 1e-10 relative, with a floor of 1e-10 times the largest magnitude (at
    least 1) for elements near zero."""
    a, e = host(actual), host(expected)
    assert a.shape == e.shape
    finite = np.abs(e[np.isfinite(e)])
    scale = max(1.0, float(finite.max()) if finite.size else 1.0)
    np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-10 * scale)


def _tensors(arrays: Sequence[np.ndarray]) -> tuple:
    return tuple(ag.asarray(a, dtype="float64") for a in arrays)


def _leaves(tree: Any) -> list:
    return tree_flatten(tree)[0]


def _tangents(case: Case) -> tuple:
    rng = np.random.default_rng(len(case.inputs) + sum(a.size for a in case.inputs))
    return tuple(rng.standard_normal(a.shape) for a in case.inputs)


def check_against_fallback(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules' tangents equal the fallback's, and no primitive with a rule fell back."""
    primals, tangents = _tensors(case.inputs), _tensors(_tangents(case))
    monkeypatch.setattr(forward, "FALLBACK_JVPS", set())
    out, ours = func.jvp(case.fn, primals, tangents)
    fell_back = forward.FALLBACK_JVPS & OWN
    assert not fell_back - set(FALLBACK), f"primitives with a rule fell back: {fell_back}"
    with forward.double_vjp_only():
        out_again, oracle = func.jvp(case.fn, primals, tangents)
    for o, o_again, t, t_oracle in zip(_leaves(out), _leaves(out_again), _leaves(ours), _leaves(oracle)):
        assert tuple(t.shape) == tuple(o.shape) and t.dtype == o.dtype
        assert_relative(o, o_again)
        assert_relative(t, t_oracle)


def check_against_torch(case: Case) -> None:
    primals, tangents = case.inputs, _tangents(case)
    out, ours = func.jvp(case.fn, _tensors(primals), _tensors(tangents))
    theirs = torch.func.jvp(
        case.torch_fn, tuple(torch.tensor(p) for p in primals), tuple(torch.tensor(t) for t in tangents)
    )
    for o, t, (o_ref, t_ref) in zip(_leaves(out), _leaves(ours), zip(*(_leaves(r) for r in theirs))):
        assert_relative(o, o_ref.resolve_conj())
        assert_relative(t, t_ref.resolve_conj())


def _torch_cases(*tables: dict) -> list:
    return [
        pytest.param(Case(*spec), id=name)
        for table in tables
        for name, spec in table.items()
        if len(spec) > 2 and spec[2]
    ]


@pytest.fixture
def eager_backend(float64_backend):
    """The backend under test, unless it is jax: jax compiles each op for each shape it
    meets, so only the elementwise and reduction families run on it (the file stays within
    a minute)."""
    if float64_backend.name == "jax":
        pytest.skip("jax runs the elementwise and reduction families only")
    return float64_backend


@pytest.mark.parametrize("case", cases(ELEMENTWISE))
def test_elementwise_rules_match_the_fallback(float64_backend, case, monkeypatch):
    check_against_fallback(case, monkeypatch)


@pytest.mark.parametrize("case", cases(REDUCTIONS))
def test_reduction_rules_match_the_fallback(float64_backend, case, monkeypatch):
    check_against_fallback(case, monkeypatch)


@pytest.mark.parametrize("case", cases(SHAPES))
def test_shape_rules_match_the_fallback(eager_backend, case, monkeypatch):
    check_against_fallback(case, monkeypatch)


@pytest.mark.parametrize("case", cases(LINALG))
def test_linalg_rules_match_the_fallback(eager_backend, case, monkeypatch):
    check_against_fallback(case, monkeypatch)


@pytest.mark.parametrize("case", cases(LINEAR_THROUGH_COMPLEX))
def test_rules_through_complex_values_give_the_difference(eager_backend, case):
    (x,), (t,) = _tensors(case.inputs), _tensors(_tangents(case))
    out, ours = func.jvp(case.fn, (x,), (t,))
    assert ours.dtype == out.dtype
    assert_relative(ours, case.fn(x + t) - out)


@pytest.mark.parametrize("case", _torch_cases(ELEMENTWISE, REDUCTIONS, SHAPES, LINALG, LINEAR_THROUGH_COMPLEX, COMPLEX))
def test_rules_match_torch(case):
    with backends.use("numpy"):
        check_against_torch(case)


# --- forward over reverse: the rules differentiated again -----------------------------------
SECOND_ORDER = {
    "sin-times-exp": (lambda x: ag.sin(x) * ag.exp(x), (normal(5),)),
    "pow-maximum": (lambda x: ag.maximum(x, 0.1) ** 3, (normal(2, 3),)),
    "max-ties": (lambda x: ag.max(x * x, axis=1), (TIES,)),
    "logcumsumexp": (lambda x: (x * x).logcumsumexp(-1), (normal(2, 5),)),
    "logsumexp": (lambda x: ag.logsumexp(x * x, axis=0), (normal(3, 4),)),
    "prod-zeros": (lambda x: ag.prod(x, axis=1), (ZEROS,)),
    "cumulative_prod-zeros": (lambda x: ag.cumulative_prod(x * x, axis=1), (ZEROS,)),
    "std": (lambda x: ag.std(x, axis=0, correction=1), (normal(4, 3),)),
    "vector_norm": (lambda x: ag.linalg.vector_norm(x, axis=1, ord=3), (away(2, 3),)),
    "matmul": (lambda x: ag.tanh(x @ x), (normal(3, 3),)),
    "det-inv": (lambda x: ag.linalg.det(x) * ag.linalg.inv(x), (spd(3, 3),)),
    "cholesky": (ag.linalg.cholesky, (spd(3, 3),)),
    "eigh": (lambda x: ag.linalg.eigh(x)[1] ** 2, (symmetric(3, 3),)),
    "svd": (lambda x: ag.linalg.svd(x, full_matrices=False)[0] ** 2, (normal(4, 3),)),
}


@pytest.mark.parametrize("case", cases(SECOND_ORDER))
def test_grad_of_jvp_matches_the_fallback(eager_backend, case):
    (x,), (t,) = _tensors(case.inputs), _tensors(_tangents(case))

    def grad_of_jvp() -> Any:
        return func.grad(lambda x: func.jvp(case.fn, (x,), (t,))[1].sum())(x)

    ours = grad_of_jvp()
    with forward.double_vjp_only():
        assert_relative(ours, grad_of_jvp())


# --- the ops still on the fallback ------------------------------------------------------------
def test_fallback_list():
    without_rule = {name for name in OWN if registry[name].jvp is None}
    assert without_rule == set(FALLBACK)


def test_the_families_cover_every_rule():
    """Every primitive of these modules is reached by a case with its rule on."""
    reached: set[str] = set()
    for table in (ELEMENTWISE, REDUCTIONS, SHAPES, LINALG, LINEAR_THROUGH_COMPLEX):
        for spec in table.values():
            case = Case(*spec)
            reached |= _recorded_ops(case.fn(*(ag.asarray(a).requires_grad_() for a in case.inputs)))
    assert OWN - set(FALLBACK) <= reached, sorted(OWN - set(FALLBACK) - reached)


def _recorded_ops(out: Any) -> set[str]:
    seen, stack, ops = set(), [leaf for leaf in _leaves(out) if isinstance(leaf, ag.Tensor)], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node._op:
            ops.add(node._op.name)
        stack.extend(node._parents or ())
    return ops
