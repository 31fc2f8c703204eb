"""Recurrent layers with PyTorch's names, signatures, parameter layout and gate order: `RNN`,
`LSTM`, `GRU` (stacked, bidirectional, batch_first, dropout between layers) and their cells.

One primitive runs a whole layer in one direction: `_scan` (the "scan" of the recurrence).
Its forward computes the input projection of every time step in one matmul, then loops
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

The layer's differentiable inputs (input, weights, biases, initial states; those that
require a gradient) are joined into one flat vector, so that the reverse recurrence, which
every one of their gradients needs, runs once: the scan has one VJP, whose result `concat`
slices back into the pieces. The VJP is written once against ``ns`` (raw arrays, or
autograd_core's Tensors under ``create_graph=True``), so second derivatives work.
Inputs that need no gradient are passed beside the vector as constants.

The rows of a batch are independent, so the forward and the first-order backward run through
`Backend.map_batch_chunks`: one call on eager libraries, one task per chunk of the batch on
dask (whose graph would otherwise hold a few hundred tasks per time step).
"""

from __future__ import annotations

import math
import warnings
from functools import partial
from typing import Any

import autograd_core as ag
from autograd_core import grad_mode, primitives as P
from autograd_core.namespace import raw_namespace
from autograd_core.ops import _sigmoid, common_backend
from autograd_core.tensor import Tensor, Vjp, record
from nn import functional as F, init
from nn.module import Module, Parameter

State = Tensor | tuple[Tensor, Tensor]


# --- the recurrences: one step forward, and the per-step rule of the backward -----------------
def _chunks(x: Any, n: int) -> list[Any]:
    """`x` cut into `n` equal pieces along its last axis (views)."""
    size = x.shape[-1] // n
    return [x[..., k * size : (k + 1) * size] for k in range(n)]


def _affine(ns: Any, x: Any, weight: Any, bias: Any) -> Any:
    """``x @ weight^T + bias`` over any leading axes (`bias` may be None)."""
    y = ns.matmul(x, ns.matrix_transpose(weight))
    return y if bias is None else y + bias


class _Elman:
    """h' = act(W_ih x + b_ih + W_hh h + b_hh): the slope of act, read off h', is all the
    backward needs."""

    gates, has_cell, tied = 1, False, True  # tied: the input and hidden projections get one gradient

    def __init__(self, name: str, activation: str) -> None:
        self.name, self.activation = name, activation

    def step(self, ns: Any, xp: Any, hp: Any, h: Any, c: Any) -> tuple[Any, Any]:
        z = xp + hp
        return (ns.tanh(z) if self.activation == "tanh" else ns.where(z > 0, z, 0.0)), None

    def saved(self, ns: Any, xproj: Any, hproj: Any, hprev: Any, out: Any, c0: Any) -> tuple[Any, ...]:
        slope = 1 - out * out if self.activation == "tanh" else ns.astype(out > 0, out.dtype)
        return (slope,)

    def back(self, ns: Any, s: tuple, gh: Any, gc: Any, dh: Any, dc: Any) -> tuple[Any, Any, Any, Any]:
        """(d x-projection, d h-projection, the gradient of h_{t-1} past W_hh, of c_{t-1})."""
        d = (gh + dh) * s[0]
        return d, d, None, None


class _LSTM:
    """Gates i, f, g, o (PyTorch's order): c' = f c + i g, h' = o tanh(c')."""

    name, gates, has_cell, tied = "lstm", 4, True, True

    def step(self, ns: Any, xp: Any, hp: Any, h: Any, c: Any) -> tuple[Any, Any]:
        i, f, g, o = _chunks(xp + hp, 4)
        c = _sigmoid(ns, f) * c + _sigmoid(ns, i) * ns.tanh(g)
        return _sigmoid(ns, o) * ns.tanh(c), c

    def saved(self, ns: Any, xproj: Any, hproj: Any, hprev: Any, out: Any, c0: Any) -> tuple[Any, ...]:
        i, f, g, o = _chunks(xproj + hproj, 4)
        i, f, g, o = _sigmoid(ns, i), _sigmoid(ns, f), ns.tanh(g), _sigmoid(ns, o)
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


class _GRU:
    """Gates r, z, n (PyTorch's order): n = tanh(W_in x + b_in + r (W_hn h + b_hn)),
    h' = (1 - z) n + z h."""

    name, gates, has_cell, tied = "gru", 3, False, False

    def step(self, ns: Any, xp: Any, hp: Any, h: Any, c: Any) -> tuple[Any, Any]:
        r, z, n = self._gates(ns, xp, hp)
        return n + z * (h - n), None

    @staticmethod
    def _gates(ns: Any, xp: Any, hp: Any) -> tuple[Any, Any, Any]:
        (xr, xz, xn), (hr, hz, hn) = _chunks(xp, 3), _chunks(hp, 3)
        r, z = _sigmoid(ns, xr + hr), _sigmoid(ns, xz + hz)
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


_KINDS: dict[str, Any] = {
    "RNN_TANH": _Elman("rnn_tanh", "tanh"),
    "RNN_RELU": _Elman("rnn_relu", "relu"),
    "LSTM": _LSTM(),
    "GRU": _GRU(),
}
_PIECES = ("input", "weight_ih", "bias_ih", "weight_hh", "bias_hh", "h0", "c0")
# Each piece's batch axis (None: a weight, whole in every chunk of the batch; its gradient sums over the batch).
_BATCH_AXIS = {"input": 1, "weight_ih": None, "bias_ih": None, "weight_hh": None, "bias_hh": None, "h0": 0, "c0": 0}


# --- the primitive -----------------------------------------------------------------------------
def _run(kind: Any, ns: Any, x: Any, w_ih: Any, b_ih: Any, w_hh: Any, b_hh: Any, h: Any, c: Any) -> tuple[Any]:
    """The states of every step, (T, B, H) (LSTM: [h, c], (T, B, 2H)), on raw arrays."""
    xproj = _affine(ns, x, w_ih, b_ih)  # every step's input projection in one matmul
    states = []
    for t in range(x.shape[0]):
        h, c = kind.step(ns, xproj[t, ...], _affine(ns, h, w_hh, b_hh), h, c)
        states.append(h if c is None else ns.concat([h, c], axis=-1))
    return (ns.stack(states),)


def _unpack(ns: Any, pack: Any, constants: tuple, layout: tuple) -> dict[str, Any]:
    """The pieces by name: each packed one sliced from the flat `pack`, the others in order
    from `constants`."""
    pieces, offset, rest = {}, 0, iter(constants)
    for name, shape, packed in layout:
        if packed:
            size = math.prod(shape)
            pieces[name] = ns.reshape(pack[offset : offset + size], shape)
            offset += size
        else:
            pieces[name] = next(rest)
    return pieces


def _scan_vjp(kind: Any, layout: tuple) -> Vjp:
    """The gradient of the packed pieces, computed per chunk of the batch (`_scan_grads`)."""
    packed = tuple(name for name, _, is_packed in layout if is_packed)

    def vjp(ns: Any, g: Any, out: Any, pack: Any, *constants: Any) -> Any:
        p = _unpack(ns, pack, constants, layout)
        grads = P.map_batch_chunks(
            ns,
            partial(_scan_grads, kind, packed),
            (g, out, *(p.get(n) for n in _PIECES)),
            (1, 1, *_BATCH_AXIS.values()),
            tuple(_BATCH_AXIS[n] for n in packed),
        )
        return ns.concat([ns.reshape(grad, (-1,)) for grad in grads], axis=0)

    return vjp


def _scan_grads(
    kind: Any,
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


def _scan(
    kind: Any,
    x: Tensor,
    w_ih: Tensor,
    b_ih: Tensor | None,
    w_hh: Tensor,
    b_hh: Tensor | None,
    h0: Tensor,
    c0: Tensor | None,
) -> Tensor:
    """One layer in one direction over the whole sequence `x` (T, B, I) from the states
    `h0` (and `c0`), (B, H): every step's state, stacked (see the module's docstring)."""
    given = [(name, t) for name, t in zip(_PIECES, (x, w_ih, b_ih, w_hh, b_hh, h0, c0)) if t is not None]
    backend = common_backend(kind.name, *(t for _, t in given))
    dtypes = {t.dtype for _, t in given}
    if len(dtypes) > 1:
        raise TypeError(
            f"{kind.name}: the input, the states and the weights must have one dtype, got "
            + ", ".join(f"{name} {t.dtype}" for name, t in given)
            + "; convert the input with .to(dtype) or the module with .to(dtype)"
        )
    (data,) = P.map_batch_chunks(
        raw_namespace(backend),
        partial(_run, kind),
        tuple(None if t is None else t.data for t in (x, w_ih, b_ih, w_hh, b_hh, h0, c0)),
        tuple(_BATCH_AXIS.values()),
        (1,),
    )
    if not grad_mode.state.enabled or not any(t.requires_grad for _, t in given):
        return Tensor._wrap(data, backend)
    layout = tuple((name, t.shape, t.requires_grad) for name, t in given)
    pack = ag.concat([ag.reshape(t, (-1,)) for _, t in given if t.requires_grad])
    constants = tuple(t for _, t in given if not t.requires_grad)
    return record(
        kind.name,
        data,
        backend,
        (pack, *constants),
        (_scan_vjp(kind, layout), *(None,) * len(constants)),
        saves_output=True,
    )


# --- the modules -------------------------------------------------------------------------------
def _register_weights(
    module: Module, suffix: str, gates: int, input_size: int, hidden_size: int, bias: bool, device: Any, dtype: Any
) -> None:
    """weight_ih (gates*H, I), weight_hh (gates*H, H) and, with `bias`, bias_ih and bias_hh
    (gates*H,), registered in PyTorch's order under PyTorch's names (with `suffix`)."""
    shapes = {"weight_ih": (gates * hidden_size, input_size), "weight_hh": (gates * hidden_size, hidden_size)}
    if bias:
        shapes.update(bias_ih=(gates * hidden_size,), bias_hh=(gates * hidden_size,))
    for name, shape in shapes.items():
        setattr(module, name + suffix, Parameter(ag.zeros(shape, dtype=dtype, device=device)))


def _reset_uniform(module: Module, hidden_size: int) -> None:
    """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch."""
    bound = 1 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    for p in module.parameters():
        init.uniform_(p, -bound, bound)


def _check_sizes(input_size: int, hidden_size: int) -> None:
    if not isinstance(hidden_size, int) or hidden_size <= 0:
        raise ValueError(f"hidden_size must be a positive integer, got {hidden_size!r}")
    if not isinstance(input_size, int) or input_size < 0:
        raise ValueError(f"input_size must be a non-negative integer, got {input_size!r}")


def _state_shape_error(name: str, what: str, got: tuple, expected: tuple) -> ValueError:
    return ValueError(f"{name}: {what} has shape {got}, expected {expected}")


class RNNBase(Module):
    """The stacked, optionally bidirectional recurrence behind `RNN`, `LSTM` and `GRU`."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        _check_sizes(input_size, hidden_size)
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError(f"num_layers must be a positive integer, got {num_layers!r}")
        if isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError(
                f"dropout must be a number in [0, 1] (the probability of zeroing an element), got {dropout!r}"
            )
        if proj_size:
            raise NotImplementedError(
                "LSTM with proj_size > 0 is not implemented; use proj_size=0 and a Linear layer on the output"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                f"dropout={dropout} has no effect with num_layers=1: dropout is applied between layers "
                "(after every layer but the last)",
                stacklevel=3,
            )
        self.mode, self._kind = mode, _KINDS[mode]
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        directions = 2 if bidirectional else 1
        for layer in range(num_layers):
            for direction in range(directions):
                size = input_size if layer == 0 else hidden_size * directions
                _register_weights(
                    self, self._suffix(layer, direction), self._kind.gates, size, hidden_size, bias, device, dtype
                )
        self.reset_parameters()

    @staticmethod
    def _suffix(layer: int, direction: int) -> str:
        return f"_l{layer}" + ("_reverse" if direction else "")

    def reset_parameters(self) -> None:
        _reset_uniform(self, self.hidden_size)

    def _weights(self, layer: int, direction: int) -> list[Tensor | None]:
        suffix = self._suffix(layer, direction)
        return [getattr(self, name + suffix, None) for name in ("weight_ih", "bias_ih", "weight_hh", "bias_hh")]

    def _initial_states(self, hx: Any, like: Tensor, batched: bool) -> list[Tensor | None]:
        """h_0 (and c_0) as one (layers * directions, B, H) tensor each; zeros when not given."""
        layers = self.num_layers * (2 if self.bidirectional else 1)
        shape = (layers, like.shape[1], self.hidden_size)
        names = ("h_0", "c_0") if self._kind.has_cell else ("h_0",)
        if hx is None:
            return [ag.zeros(shape, dtype=like.dtype, device=like.device) for _ in names]
        given = tuple(hx) if self._kind.has_cell else (hx,)
        if len(given) != len(names) or not all(isinstance(t, Tensor) for t in given):
            raise TypeError(
                f"{type(self).__name__}: hx must be {' and '.join(names)} as "
                f"{'a tuple of tensors' if len(names) > 1 else 'a tensor'}"
            )
        expected = shape if batched else (layers, self.hidden_size)
        for name, t in zip(names, given):
            if t.shape != expected:
                raise _state_shape_error(type(self).__name__, name, t.shape, expected)
        return [t if batched else ag.expand_dims(t, axis=1) for t in given]

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, State]:
        """`input` (T, B, input_size), (B, T, input_size) with batch_first, or (T, input_size)
        unbatched; `hx` the initial state(s), (layers * directions, B, H), zeros if None.
        Returns (output, h_n), LSTM (output, (h_n, c_n)), shaped as in PyTorch."""
        name, kind, hidden = type(self).__name__, self._kind, self.hidden_size
        if input.ndim not in (2, 3) or input.shape[-1] != self.input_size:
            raise ValueError(
                f"{name}: expected an input of shape (T, B, {self.input_size}), (B, T, {self.input_size}) "
                f"with batch_first, or (T, {self.input_size}) unbatched; got {input.shape}"
            )
        batched = input.ndim == 3
        x = input if batched else ag.expand_dims(input, axis=1)
        if self.batch_first and batched:
            x = ag.permute_dims(x, (1, 0, 2))
        states = self._initial_states(hx, x, batched)
        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                h0, c0 = states[0][index], (states[1][index] if kind.has_cell else None)
                run = _scan(kind, x if direction == 0 else ag.flip(x, axis=0), *self._weights(layer, direction), h0, c0)
                finals.append(run[-1])
                hs = run[..., :hidden] if kind.has_cell else run
                outputs.append(hs if direction == 0 else ag.flip(hs, axis=0))
            x = outputs[0] if directions == 1 else ag.concat(outputs, axis=-1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        if self.batch_first and batched:
            x = ag.permute_dims(x, (1, 0, 2))
        last = ag.stack(finals)
        final = [last[..., :hidden], last[..., hidden:]] if kind.has_cell else [last]
        if not batched:
            x, final = x[:, 0], [t[:, 0] for t in final]
        return x, (tuple(final) if kind.has_cell else final[0])

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        defaults = dict(num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False)
        for key, default in defaults.items():
            if getattr(self, key) != default:
                text += f", {key}={getattr(self, key)}"
        return text


class RNN(RNNBase):
    """An Elman network: h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh) (or relu),
    stacked `num_layers` deep, optionally bidirectional, as ``torch.nn.RNN``.

    >>> import autograd_core as ag, nn
    >>> out, h_n = nn.RNN(3, 5, num_layers=2)(ag.zeros((7, 4, 3)))
    >>> out.shape, h_n.shape
    ((7, 4, 5), (2, 4, 5))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: unknown nonlinearity {nonlinearity!r}; use 'tanh' or 'relu'")
        super().__init__(
            f"RNN_{nonlinearity.upper()}",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            0,
            device,
            dtype,
        )
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory, as ``torch.nn.LSTM`` (gates i, f, g, o; ``proj_size`` must be 0).

    >>> import autograd_core as ag, nn
    >>> out, (h, c) = nn.LSTM(3, 5, batch_first=True, bidirectional=True)(ag.zeros((4, 7, 3)))
    >>> out.shape, h.shape, c.shape
    ((4, 7, 10), (2, 4, 5), (2, 4, 5))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            "LSTM",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            proj_size,
            device,
            dtype,
        )


class GRU(RNNBase):
    """Gated recurrent units, as ``torch.nn.GRU`` (gates r, z, n; the reset gate multiplies
    ``W_hn h + b_hn``).

    >>> import autograd_core as ag, nn
    >>> out, h_n = nn.GRU(3, 5)(ag.zeros((7, 3)))  # unbatched
    >>> out.shape, h_n.shape
    ((7, 5), (1, 5))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            "GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0, device, dtype
        )


class RNNCellBase(Module):
    """One step of a recurrence: parameters weight_ih, weight_hh, bias_ih, bias_hh."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, bias: bool, device: Any, dtype: Any) -> None:
        super().__init__()
        _check_sizes(input_size, hidden_size)
        self._kind = _KINDS[mode]
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        _register_weights(self, "", self._kind.gates, input_size, hidden_size, bias, device, dtype)
        if not bias:
            self.bias_ih = self.bias_hh = None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_uniform(self, self.hidden_size)

    def forward(self, input: Tensor, hx: Any = None) -> State:
        """`input` (B, input_size) or (input_size,); `hx` the state(s) (B, H) or (H,), zeros
        if None. Returns the next h (LSTMCell: (h, c))."""
        name, kind, hidden = type(self).__name__, self._kind, self.hidden_size
        if input.ndim not in (1, 2) or input.shape[-1] != self.input_size:
            raise ValueError(
                f"{name}: expected an input of shape (B, {self.input_size}) or ({self.input_size},), got {input.shape}"
            )
        batched = input.ndim == 2
        x = input if batched else ag.expand_dims(input, axis=0)
        shape = (x.shape[0], hidden)
        if hx is None:
            given = [ag.zeros(shape, dtype=x.dtype, device=x.device) for _ in range(2 if kind.has_cell else 1)]
        else:
            given = list(hx) if kind.has_cell else [hx]
            for t in given:
                if t.shape != (shape if batched else (hidden,)):
                    raise _state_shape_error(name, "hx", t.shape, shape if batched else (hidden,))
            given = given if batched else [ag.expand_dims(t, axis=0) for t in given]
        c = given[1] if kind.has_cell else None
        run = _scan(
            kind, ag.expand_dims(x, axis=0), self.weight_ih, self.bias_ih, self.weight_hh, self.bias_hh, given[0], c
        )[0]
        out = [run[..., :hidden], run[..., hidden:]] if kind.has_cell else [run]
        out = out if batched else [t[0] for t in out]
        return tuple(out) if kind.has_cell else out[0]

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(RNNCellBase):
    """h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu), as ``torch.nn.RNNCell``.

    >>> import autograd_core as ag, nn
    >>> nn.RNNCell(3, 5)(ag.zeros((4, 3))).shape
    (4, 5)
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: unknown nonlinearity {nonlinearity!r}; use 'tanh' or 'relu'")
        super().__init__(f"RNN_{nonlinearity.upper()}", input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity


class LSTMCell(RNNCellBase):
    """One LSTM step, as ``torch.nn.LSTMCell``: returns (h', c').

    >>> import autograd_core as ag, nn
    >>> h, c = nn.LSTMCell(3, 5)(ag.zeros((4, 3)))
    >>> h.shape, c.shape
    ((4, 5), (4, 5))
    """

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__("LSTM", input_size, hidden_size, bias, device, dtype)


class GRUCell(RNNCellBase):
    """One GRU step, as ``torch.nn.GRUCell``.

    >>> import autograd_core as ag, nn
    >>> nn.GRUCell(3, 5)(ag.zeros(3)).shape
    (5,)
    """

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__("GRU", input_size, hidden_size, bias, device, dtype)


__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]
