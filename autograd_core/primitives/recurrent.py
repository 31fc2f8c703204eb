"""The recurrent layers' primitive: the "scan" of one layer in one direction over a sequence,
for the Elman (tanh, relu), LSTM and GRU recurrences, with PyTorch's gate order.

The scan's forward computes the input projection of every time step in one matmul, then loops
over time with only ``h @ W_hh^T`` and the gate arithmetic per step, and returns the states
of every step stacked once, (T, B, H) (LSTM: h and c side by side, (T, B, 2H)). Its backward
recomputes the gates of every step with two batched matmuls (the inputs and the previous
hidden states are all known from the output), runs the reverse recurrence with one
``D_t @ W_hh`` per step, and forms every weight gradient in one matmul over all steps.

Why one primitive per layer rather than one per step: a primitive has one output, so the
per-step slices ``x_proj[t]`` of the input projection would be T slicing ops, each of whose
VJPs scatters into a zero array of the full (T, B, 4H): O(T^2) memory traffic in the backward.
The scan keeps the graph at O(1) nodes per layer and its memory at the stacked states,
O(T B H), and no Python recursion: the loops are plain `for` loops.

The layer's seven pieces (input, weight_ih, bias_ih, weight_hh, bias_hh, h0, c0) that require
a gradient are joined into one flat vector, so that the reverse recurrence, which every one
of their gradients needs, runs once: the scan has one VJP, whose result `concat` slices back
into the pieces. The other pieces are inputs of their own, as constants (None where packed
or absent), and the recurrence and the packed pieces' shapes (`layout`) are inputs that are
not tensors. The VJP is written once against ``ns``, so second derivatives work.

The rows of a batch are independent, so the forward and the first-order backward run through
`map_batch_chunks`: one call on eager libraries, one task per chunk of the batch on dask
(whose graph would otherwise hold a few hundred tasks per time step).
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from autograd_core.graph import grad_mode
from autograd_core.graph.namespace import tensor_namespace
from autograd_core.graph.registry import Primitive, common_backend, raw_namespace
from autograd_core.graph.tensor_base import TensorBase
from autograd_core.primitives.activations import logistic
from autograd_core.primitives.chunking import map_batch_chunks
from autograd_core.primitives.linear import tangent_sum

PIECES = ("input", "weight_ih", "bias_ih", "weight_hh", "bias_hh", "h0", "c0")
# Each piece's batch axis (None: a weight, whole in every chunk of the batch; its gradient sums over the batch).
_BATCH_AXIS = {"input": 1, "weight_ih": None, "bias_ih": None, "weight_hh": None, "bias_hh": None, "h0": 0, "c0": 0}
_BATCH_AXES = tuple(_BATCH_AXIS.values())
Layout = tuple  # per piece: its shape where it is packed, else None


# --- the cell math: one step forward, and the per-step rule of the backward --------------------
def _chunks(x: Any, n: int) -> list[Any]:
    """`x` cut into `n` equal pieces along its last axis (views)."""
    size = x.shape[-1] // n
    return [x[..., k * size : (k + 1) * size] for k in range(n)]


def _affine(ns: Any, x: Any, weight: Any, bias: Any) -> Any:
    """``x @ weight^T + bias`` over any leading axes (`bias` may be None)."""
    y = ns.matmul(x, ns.matrix_transpose(weight))
    return y if bias is None else y + bias


class Recurrence:
    """A recurrence's cell: `gates` blocks of H in its projections, whether it carries a cell
    state (`has_cell`), whether its input and hidden projections get one gradient (`tied`),
    and `scan`, the primitive of a layer of it."""

    name: str
    gates: int
    has_cell: bool
    tied: bool

    def __init__(self) -> None:
        # one VJP, the packed vector's: the other inputs are constants, or not tensors
        self.scan = Primitive(
            self.name, _scan_packed, vjps=(_scan_grad, *(None,) * 9), saves="output", jvp=_scan_tangent
        )

    def __repr__(self) -> str:
        return f"<recurrence {self.name}>"

    def step(self, ns: Any, xp: Any, hp: Any, h: Any, c: Any) -> tuple[Any, Any]:
        """(h', c') from the step's input projection `xp`, hidden projection `hp` and (h, c)."""
        raise NotImplementedError

    def saved(self, ns: Any, xproj: Any, hproj: Any, hprev: Any, out: Any, c0: Any) -> tuple[Any, ...]:
        """What `back` reads at every step, for all steps at once."""
        raise NotImplementedError

    def back(self, ns: Any, s: tuple, gh: Any, gc: Any, dh: Any, dc: Any) -> tuple[Any, Any, Any, Any]:
        """(d x-projection, d h-projection, the gradient of h_{t-1} past W_hh, of c_{t-1})."""
        raise NotImplementedError

    def tangent(self, ns: Any, s: tuple, dxp: Any, dhp: Any, dh: Any, dc: Any) -> tuple[Any, Any]:
        """(dh', dc'): the step's tangents from those of its input and hidden projections and
        of (h, c), with the same per-step factors `s` as `back` (its transpose)."""
        raise NotImplementedError


class ElmanRecurrence(Recurrence):
    """h' = act(W_ih x + b_ih + W_hh h + b_hh): the slope of act, read off h', is all the
    backward needs."""

    gates, has_cell, tied = 1, False, True

    def __init__(self, activation: str) -> None:
        self.name, self.activation = f"rnn_{activation}", activation
        super().__init__()

    def step(self, ns: Any, xp: Any, hp: Any, h: Any, c: Any) -> tuple[Any, Any]:
        z = xp + hp
        return (ns.tanh(z) if self.activation == "tanh" else ns.where(z > 0, z, 0.0)), None

    def saved(self, ns: Any, xproj: Any, hproj: Any, hprev: Any, out: Any, c0: Any) -> tuple[Any, ...]:
        slope = 1 - out * out if self.activation == "tanh" else ns.astype(out > 0, out.dtype)
        return (slope,)

    def back(self, ns: Any, s: tuple, gh: Any, gc: Any, dh: Any, dc: Any) -> tuple[Any, Any, Any, Any]:
        d = (gh + dh) * s[0]
        return d, d, None, None

    def tangent(self, ns: Any, s: tuple, dxp: Any, dhp: Any, dh: Any, dc: Any) -> tuple[Any, Any]:
        return (dxp + dhp) * s[0], None


class LSTMRecurrence(Recurrence):
    """Gates i, f, g, o (PyTorch's order): c' = f c + i g, h' = o tanh(c')."""

    name, gates, has_cell, tied = "lstm", 4, True, True

    def step(self, ns: Any, xp: Any, hp: Any, h: Any, c: Any) -> tuple[Any, Any]:
        i, f, g, o = _chunks(xp + hp, 4)
        c = logistic(ns, f) * c + logistic(ns, i) * ns.tanh(g)
        return logistic(ns, o) * ns.tanh(c), c

    def saved(self, ns: Any, xproj: Any, hproj: Any, hprev: Any, out: Any, c0: Any) -> tuple[Any, ...]:
        i, f, g, o = _chunks(xproj + hproj, 4)
        i, f, g, o = logistic(ns, i), logistic(ns, f), ns.tanh(g), logistic(ns, o)
        c = _chunks(out, 2)[1]
        cprev = ns.concat([ns.expand_dims(c0, axis=0), c[:-1, ...]], axis=0)
        tc = ns.tanh(c)
        # dh'/dc', then d(c')/d(pre-activation) of i, f, g stacked on an axis of 3, then of o
        return (
            o * (1 - tc * tc),
            ns.stack([g * i * (1 - i), cprev * f * (1 - f), i * (1 - g * g)], axis=-2),
            tc * o * (1 - o),
            f,
        )

    def back(self, ns: Any, s: tuple, gh: Any, gc: Any, dh: Any, dc: Any) -> tuple[Any, Any, Any, Any]:
        through, k_ifg, k_o, f = s
        dh = gh + dh
        dc = gc + dc + dh * through
        ifg = ns.reshape(ns.expand_dims(dc, axis=-2) * k_ifg, (*dc.shape[:-1], 3 * dc.shape[-1]))
        d = ns.concat([ifg, dh * k_o], axis=-1)
        return d, d, None, dc * f

    def tangent(self, ns: Any, s: tuple, dxp: Any, dhp: Any, dh: Any, dc: Any) -> tuple[Any, Any]:
        through, k_ifg, k_o, f = s
        d = dxp + dhp
        hidden = d.shape[-1] // 4
        ifg = ns.reshape(d[..., : 3 * hidden], (*d.shape[:-1], 3, hidden))
        dc = ns.sum(ifg * k_ifg, axis=-2) + dc * f
        return dc * through + d[..., 3 * hidden :] * k_o, dc


class GRURecurrence(Recurrence):
    """Gates r, z, n (PyTorch's order): n = tanh(W_in x + b_in + r (W_hn h + b_hn)),
    h' = (1 - z) n + z h."""

    name, gates, has_cell, tied = "gru", 3, False, False

    def step(self, ns: Any, xp: Any, hp: Any, h: Any, c: Any) -> tuple[Any, Any]:
        r, z, n = self._gates(ns, xp, hp)
        return n + z * (h - n), None

    @staticmethod
    def _gates(ns: Any, xp: Any, hp: Any) -> tuple[Any, Any, Any]:
        (xr, xz, xn), (hr, hz, hn) = _chunks(xp, 3), _chunks(hp, 3)
        r, z = logistic(ns, xr + hr), logistic(ns, xz + hz)
        return r, z, ns.tanh(xn + r * hn)

    def saved(self, ns: Any, xproj: Any, hproj: Any, hprev: Any, out: Any, c0: Any) -> tuple[Any, ...]:
        r, z, n = self._gates(ns, xproj, hproj)
        hn = _chunks(hproj, 3)[2]
        return (1 - z) * (1 - n * n), hn * r * (1 - r), (hprev - n) * z * (1 - z), r, z

    def back(self, ns: Any, s: tuple, gh: Any, gc: Any, dh: Any, dc: Any) -> tuple[Any, Any, Any, Any]:
        k_n, k_r, k_z, r, z = s
        dh = gh + dh
        dn = dh * k_n
        dr, dz = dn * k_r, dh * k_z
        return ns.concat([dr, dz, dn], axis=-1), ns.concat([dr, dz, dn * r], axis=-1), dh * z, None

    def tangent(self, ns: Any, s: tuple, dxp: Any, dhp: Any, dh: Any, dc: Any) -> tuple[Any, Any]:
        k_n, k_r, k_z, r, z = s
        (xr, xz, xn), (hr, hz, hn) = _chunks(dxp, 3), _chunks(dhp, 3)
        return (xn + r * hn + (xr + hr) * k_r) * k_n + (xz + hz) * k_z + dh * z, None


# --- the scan: forward, and its VJP --------------------------------------------------------------
def _run(kind: Recurrence, ns: Any, x: Any, w_ih: Any, b_ih: Any, w_hh: Any, b_hh: Any, h: Any, c: Any) -> tuple[Any]:
    """The states of every step, (T, B, H) (LSTM: [h, c], (T, B, 2H)), on raw arrays."""
    xproj = _affine(ns, x, w_ih, b_ih)  # every step's input projection in one matmul
    states = []
    for t in range(x.shape[0]):
        h, c = kind.step(ns, xproj[t, ...], _affine(ns, h, w_hh, b_hh), h, c)
        states.append(h if c is None else ns.concat([h, c], axis=-1))
    return (ns.stack(states),)


def _states(ns: Any, kind: Recurrence, pieces: tuple) -> Any:
    """Every step's state from the seven pieces, chunk by chunk of the batch."""
    (data,) = map_batch_chunks(ns, partial(_run, kind), pieces, _BATCH_AXES, (1,))
    return data


def _unpack(ns: Any, pack: Any, pieces: tuple, layout: Layout) -> tuple:
    """The seven pieces: each packed one (its shape in `layout`) sliced from the flat `pack`,
    the others as given."""
    unpacked, offset = [], 0
    for piece, shape in zip(pieces, layout):
        if shape is None:
            unpacked.append(piece)
        else:
            size = math.prod(shape)
            unpacked.append(ns.reshape(pack[offset : offset + size], shape))
            offset += size
    return tuple(unpacked)


def _scan_packed(
    ns: Any,
    pack: Any,
    x: Any,
    w_ih: Any,
    b_ih: Any,
    w_hh: Any,
    b_hh: Any,
    h0: Any,
    c0: Any,
    kind: Recurrence,
    layout: Layout,
) -> Any:
    """The scan as declared: the states from the packed vector and the other pieces."""
    return _states(ns, kind, _unpack(ns, pack, (x, w_ih, b_ih, w_hh, b_hh, h0, c0), layout))


def _scan_grad(
    ns: Any,
    g: Any,
    out: Any,
    pack: Any,
    x: Any,
    w_ih: Any,
    b_ih: Any,
    w_hh: Any,
    b_hh: Any,
    h0: Any,
    c0: Any,
    kind: Recurrence,
    layout: Layout,
) -> Any:
    """The gradient of the packed vector, computed per chunk of the batch (`_piece_grads`)."""
    packed = tuple(name for name, shape in zip(PIECES, layout) if shape is not None)
    grads = map_batch_chunks(
        ns,
        partial(_piece_grads, kind, packed),
        (g, out, *_unpack(ns, pack, (x, w_ih, b_ih, w_hh, b_hh, h0, c0), layout)),
        (1, 1, *_BATCH_AXES),
        tuple(_BATCH_AXIS[name] for name in packed),
    )
    return ns.concat([ns.reshape(grad, (-1,)) for grad in grads], axis=0)


def _piece_grads(
    kind: Recurrence,
    names: tuple[str, ...],
    ns: Any,
    g: Any,
    out: Any,
    x: Any,
    w_ih: Any,
    b_ih: Any,
    w_hh: Any,
    b_hh: Any,
    h0: Any,
    c0: Any,
) -> tuple:
    """The gradients of the pieces `names`: the reverse recurrence once, then every weight
    gradient as one matmul over all steps."""
    hidden, steps = h0.shape[-1], out.shape[0]
    (hs, _), (gh, gc) = (_chunks(out, 2), _chunks(g, 2)) if kind.has_cell else ((out, None), (g, None))
    hprev = ns.concat([ns.expand_dims(h0, axis=0), hs[:-1, ...]], axis=0)
    saved = kind.saved(ns, _affine(ns, x, w_ih, b_ih), _affine(ns, hprev, w_hh, b_hh), hprev, out, c0)
    dh, dc = ns.zeros_like(h0), (ns.zeros_like(c0) if kind.has_cell else None)
    dxs, dhs = [], []
    for t in reversed(range(steps)):
        step = tuple(s[t, ...] for s in saved)
        dx, dhp, direct, dc = kind.back(ns, step, gh[t, ...], None if gc is None else gc[t, ...], dh, dc)
        dh = ns.matmul(dhp, w_hh) if direct is None else direct + ns.matmul(dhp, w_hh)
        dxs.append(dx)
        dhs.append(dhp)
    dxproj = ns.stack(dxs[::-1])
    dhproj = dxproj if kind.tied else ns.stack(dhs[::-1])
    rows = ns.reshape(dxproj, (-1, kind.gates * hidden)), ns.reshape(dhproj, (-1, kind.gates * hidden))
    grads = {
        "input": lambda: ns.matmul(dxproj, w_ih),
        "weight_ih": lambda: ns.matmul(ns.matrix_transpose(rows[0]), ns.reshape(x, (-1, x.shape[-1]))),
        "bias_ih": lambda: ns.sum(rows[0], axis=0),
        "weight_hh": lambda: ns.matmul(ns.matrix_transpose(rows[1]), ns.reshape(hprev, (-1, hidden))),
        "bias_hh": lambda: ns.sum(rows[1], axis=0),
        "h0": lambda: dh,
        "c0": lambda: dc,
    }
    return tuple(grads[name]() for name in names)


# --- the scan's tangent: the recurrence run forward on the tangents ------------------------------
def _scan_tangent(
    ns: Any,
    tangents: tuple,
    out: Any,
    pack: Any,
    x: Any,
    w_ih: Any,
    b_ih: Any,
    w_hh: Any,
    b_hh: Any,
    h0: Any,
    c0: Any,
    kind: Recurrence,
    layout: Layout,
) -> Any:
    """The tangent of every step's state, from the packed vector's tangent (the constants have
    none), computed per chunk of the batch (`_states_tangent`)."""
    pieces = _unpack(ns, pack, (x, w_ih, b_ih, w_hh, b_hh, h0, c0), layout)
    d_pieces = _unpack(ns, tangents[0], (None,) * len(PIECES), layout)
    (tangent,) = map_batch_chunks(
        ns, partial(_states_tangent, kind), (out, *pieces, *d_pieces), (1, *_BATCH_AXES, *_BATCH_AXES), (1,)
    )
    return tangent


def _affine_tangent(ns: Any, projection: Any, x: Any, weight: Any, dx: Any, d_weight: Any, d_bias: Any) -> Any:
    """The tangent of the `projection` ``x @ weight^T + bias``: zeros where no part has one."""
    tangent = tangent_sum(
        ns,
        (
            None if dx is None else ns.matmul(dx, ns.matrix_transpose(weight)),
            None if d_weight is None else ns.matmul(x, ns.matrix_transpose(d_weight)),
            d_bias,
        ),
        tuple(projection.shape),
    )
    return ns.zeros_like(projection) if tangent is None else tangent


def _states_tangent(
    kind: Recurrence,
    ns: Any,
    out: Any,
    x: Any,
    w_ih: Any,
    b_ih: Any,
    w_hh: Any,
    b_hh: Any,
    h0: Any,
    c0: Any,
    dx: Any,
    dw_ih: Any,
    db_ih: Any,
    dw_hh: Any,
    db_hh: Any,
    dh0: Any,
    dc0: Any,
) -> tuple[Any]:
    """The tangent recurrence: the states are known from `out`, so every step's factors and the
    projections' tangents through the weights come in a few matmuls over all steps, and only
    ``dh_{t-1} @ W_hh^T`` and the cell's tangent run per step."""
    hs = _chunks(out, 2)[0] if kind.has_cell else out
    hprev = ns.concat([ns.expand_dims(h0, axis=0), hs[:-1, ...]], axis=0)
    xproj, hproj = _affine(ns, x, w_ih, b_ih), _affine(ns, hprev, w_hh, b_hh)
    saved = kind.saved(ns, xproj, hproj, hprev, out, c0)
    d_xproj = _affine_tangent(ns, xproj, x, w_ih, dx, dw_ih, db_ih)
    d_hproj = _affine_tangent(ns, hproj, hprev, w_hh, None, dw_hh, db_hh)  # the part not through dh
    dh = ns.zeros_like(h0) if dh0 is None else dh0
    dc = (ns.zeros_like(c0) if dc0 is None else dc0) if kind.has_cell else None
    states = []
    for t in range(out.shape[0]):
        dhp = d_hproj[t, ...] + ns.matmul(dh, ns.matrix_transpose(w_hh))
        dh, dc = kind.tangent(ns, tuple(s[t, ...] for s in saved), d_xproj[t, ...], dhp, dh, dc)
        states.append(dh if dc is None else ns.concat([dh, dc], axis=-1))
    return (ns.stack(states),)


RECURRENCES: dict[str, Recurrence] = {
    "RNN_TANH": ElmanRecurrence("tanh"),
    "RNN_RELU": ElmanRecurrence("relu"),
    "LSTM": LSTMRecurrence(),
    "GRU": GRURecurrence(),
}
"""Each recurrence by its mode, as PyTorch's RNNBase names it."""


def recurrent_scan(
    kind: Recurrence,
    x: TensorBase,
    w_ih: TensorBase,
    b_ih: TensorBase | None,
    w_hh: TensorBase,
    b_hh: TensorBase | None,
    h0: TensorBase,
    c0: TensorBase | None,
) -> TensorBase:
    """One layer of the recurrence `kind` in one direction over the whole sequence `x`
    (T, B, I) from the states `h0` (and `c0`), (B, H): every step's state, stacked (T, B, H)
    (LSTM: h and c side by side, (T, B, 2H)); one node of `kind.scan` in the graph."""
    pieces = (x, w_ih, b_ih, w_hh, b_hh, h0, c0)
    given = [(name, t) for name, t in zip(PIECES, pieces) if t is not None]
    backend = common_backend(kind.name, *(t for _, t in given))
    if len({t.dtype for _, t in given}) > 1:
        raise TypeError(
            f"{kind.name}: the input, the states and the weights must have one dtype, got "
            + ", ".join(f"{name} {t.dtype}" for name, t in given)
            + "; convert the input with .to(dtype) or the module with .to(dtype)"
        )
    data = _states(raw_namespace(backend), kind, tuple(None if t is None else t.array for t in pieces))
    if not grad_mode.state.enabled or not any(t.requires_grad for _, t in given):
        return TensorBase._wrap(data, backend)
    layout = tuple(t.shape if t is not None and t.requires_grad else None for t in pieces)
    ag = tensor_namespace()
    pack = ag.concat([ag.reshape(t, (-1,)) for _, t in given if t.requires_grad])
    constants = tuple(None if t is None or t.requires_grad else t for t in pieces)
    return kind.scan.record(data, backend, (pack, *constants, kind, layout), saved=constants)
