"""The matrix kernels: the linear layer's product and Einstein summation; and `tangent_sum`,
which the forward-mode rules of the fused primitives share."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from autograd_core.graph.registry import Primitive, sum_to
from autograd_core.graph.tensor_base import Vjp


def tangent_sum(ns: Any, terms: Sequence[Any], shape: tuple[int, ...]) -> Any:
    """The sum of the tangent `terms` that are present (None: the term of an input without a
    tangent), broadcast to the output's `shape`; None when none is."""
    present = [term for term in terms if term is not None]
    if not present:
        return None
    total = present[0]
    for term in present[1:]:
        total = total + term
    return total if tuple(total.shape) == tuple(shape) else ns.broadcast_to(total, tuple(shape))


def rows_times(ns: Any, x: Any, matrix: Any) -> Any:
    """``x @ matrix`` with the leading axes of `x` folded into rows: one matrix product where
    a stacked matmul would run one per leading index (about 15% slower at GPT sizes)."""
    if x.ndim <= 2:
        return ns.matmul(x, matrix)
    return ns.reshape(ns.matmul(_rows(ns, x), matrix), (*x.shape[:-1], matrix.shape[-1]))


def _rows(ns: Any, x: Any) -> Any:
    """`x` as a matrix of its last axis, the leading axes folded into rows (counted, not -1,
    which is ambiguous when the last axis is empty)."""
    return ns.reshape(x, (math.prod(x.shape[:-1]), x.shape[-1]))


def _linear(ns: Any, x: Any, weight: Any, bias: Any) -> Any:
    """``x @ weight.T + bias`` (`bias` may be None), the leading axes of `x` folded into the
    rows of one matrix product (a stacked matmul would run one per leading index)."""
    out = rows_times(ns, x, ns.matrix_transpose(weight))
    return out if bias is None else out + bias


def _linear_grad_weight(ns: Any, g: Any, out: Any, x: Any, weight: Any, bias: Any) -> Any:
    rows_g, rows_x = _rows(ns, g), _rows(ns, x)
    if rows_g.shape[0] == 1:  # one row: an outer product, which matmul computes 4x slower
        return ns.matrix_transpose(rows_g) * rows_x
    return ns.matmul(ns.matrix_transpose(rows_g), rows_x)


def _linear_tangent(ns: Any, tangents: Sequence[Any], out: Any, x: Any, weight: Any, bias: Any) -> Any:
    """``dx @ weight^T + x @ dweight^T + dbias``."""
    dx, d_weight, d_bias = tangents
    return tangent_sum(
        ns,
        (
            None if dx is None else linear(ns, dx, weight, None),
            None if d_weight is None else linear(ns, x, d_weight, None),
            d_bias,
        ),
        out.shape,
    )


# One primitive rather than matmul of a transpose: its weight gradient ``g^T x`` is computed
# in the weight's own layout, where the transpose of ``x^T g`` would be a strided view that
# slows every optimizer pass over it.
linear = Primitive(
    "linear",
    _linear,
    vjps=(
        lambda ns, g, out, x, weight, bias: rows_times(ns, g, weight),
        _linear_grad_weight,
        lambda ns, g, out, x, weight, bias: sum_to(ns, g, bias.shape),
    ),
    jvp=_linear_tangent,
)


def einsum_plan(subscripts: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str, list[tuple[str, int]]]:
    """`einsum`'s subscripts made explicit: (each operand's labels, the output's labels,
    identities).

    ``...`` becomes letters unused elsewhere, aligned from the right as broadcasting
    aligns; an implicit output is the ellipsis then the labels seen once, in ASCII order
    (NumPy's rule); ellipsis axes missing from an explicit output are summed (PyTorch's
    rule). A label repeated within one operand (a diagonal) is renamed, and the
    identity matrix ``(label + new label, size)`` is to be added as an extra operand,
    so no operand repeats a label.

    >>> einsum_plan("ii,...i", [(3, 3), (2, 3)])
    (['ib', 'ai'], 'a', [('ib', 3)])
    """
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    inputs, arrow, output = subscripts.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: {len(terms)} operand subscripts for {len(shapes)} operands")
    for term in [*terms, output]:
        if any(c not in letters for c in term.replace("...", "", 1)):
            raise ValueError(f"einsum: invalid subscripts {term!r}: use letters and at most one '...'")
    fresh = iter(c for c in letters if c not in subscripts)
    widths = [len(shape) - len(term.replace("...", "")) for term, shape in zip(terms, shapes)]
    for term, shape, width in zip(terms, shapes, widths):
        if width < 0 or (width and "..." not in term):
            raise ValueError(f"einsum: subscripts {term!r} do not match an operand of shape {shape}")
    ellipsis = "".join(next(fresh) for _ in range(max(widths, default=0)))
    labels = [term.replace("...", ellipsis[len(ellipsis) - w :]) for term, w in zip(terms, widths)]
    if arrow:
        output = output.replace("...", ellipsis)
    else:
        explicit = "".join(terms).replace("...", "")
        output = ellipsis + "".join(sorted(c for c in set(explicit) if explicit.count(c) == 1))
    if len(set(output)) != len(output) or not set(output) <= set("".join(labels)):
        raise ValueError(f"einsum: output subscripts {output!r} repeat a label or name one no operand has")
    identities = []
    for k, (term, shape) in enumerate(zip(labels, shapes)):
        renamed = ""
        for label, size in zip(term, shape):
            if label in renamed:
                identities.append((label + (label := next(fresh)), size))
            renamed += label
        labels[k] = renamed
    return labels, output, identities


def _einsum(ns: Any, subscripts: str, *arrays: Any) -> Any:
    """The Einstein summation of `arrays` (NumPy's `einsum`, as planned by `einsum_plan`).

    The portable default aligns every operand to one axis order (the output's labels,
    then the summed ones), multiplies them with broadcasting one at a time and sums each
    label as soon as no later operand has it. Libraries with an einsum register a kernel.
    """
    labels, output, identities = einsum_plan(subscripts, [tuple(a.shape) for a in arrays])
    dtype = ns.result_type(*arrays)
    arrays = (*arrays, *(ns.eye(n, dtype=dtype, device=ns.backend.device) for _, n in identities))
    labels += [pair for pair, _ in identities]
    order = output + "".join(sorted(set("".join(labels)) - set(output)))
    result, pending = None, set()
    for k, (term, a) in enumerate(zip(labels, arrays)):
        positions = sorted(range(len(term)), key=lambda i: order.index(term[i]))
        a = ns.permute_dims(a, tuple(positions))
        shape = [1] * len(order)
        for i, n in zip(positions, a.shape):
            shape[order.index(term[i])] = n
        a = ns.reshape(a, tuple(shape))
        result = a if result is None else result * a
        pending |= set(term) - set(output)
        finished = pending - set("".join(labels[k + 1 :]))
        if finished:
            result = ns.sum(result, axis=tuple(order.index(c) for c in finished), keepdims=True)
            pending -= finished
    return ns.reshape(result, tuple(result.shape[: len(output)]))


def _einsum_operand(position: int, count: int) -> Vjp | None:
    """The VJP of the input at `position` of einsum's node (0 is the explicit subscripts,
    with distinct labels in each operand, as `einsum_plan` makes them):
    the einsum of the output's gradient with every other operand. The identity matrices
    that come last are constants, so their VJPs never run."""
    if position == 0:
        return None
    i = position - 1

    def vjp(ns: Any, g: Any, out: Any, subscripts: str, *operands: Any) -> Any:
        joined, output = subscripts.split("->")
        terms = joined.split(",")
        others = [j for j in range(len(terms)) if j != i]
        elsewhere = set(output).union(*(terms[j] for j in others))
        present = "".join(c for c in terms[i] if c in elsewhere)
        into_operand = ",".join([output, *(terms[j] for j in others)]) + "->" + present
        x = operands[i]
        grad = einsum(ns, into_operand, g, *(operands[j] for j in others))
        if len(present) < len(terms[i]):  # labels only x has: the gradient is constant along them
            sizes = iter(grad.shape)
            kept = tuple(next(sizes) if c in elsewhere else 1 for c in terms[i])
            grad = ns.broadcast_to(ns.reshape(grad, kept), tuple(max(k, n) for k, n in zip(kept, x.shape)))
        return sum_to(ns, grad, x.shape)

    return vjp


# The node of `autograd_core.ops.einsum`, on subscripts made explicit by `einsum_plan`; the VJP of
# each operand is an einsum again, so gradients of any order stay einsums.
einsum = Primitive("einsum", _einsum, vjps=_einsum_operand, jvp="multilinear")
