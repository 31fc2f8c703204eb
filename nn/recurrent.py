"""Recurrent layers with PyTorch's names, signatures, parameter layout and gate order: `RNN`,
`LSTM`, `GRU` (stacked, bidirectional, batch_first, dropout between layers) and their cells.

A layer in one direction is one primitive, the scan of its recurrence over the whole sequence
(`autograd_core.primitives.recurrent`, where its forward, its VJP and the cell math live): the
states of every step stacked once, (T, B, H) (LSTM: h and c side by side, (T, B, 2H)), and
one node in the graph. A cell is the scan over a sequence of one step.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

import autograd_core as ag
from autograd_core import primitives as P
from autograd_core.autodiff.tensor import Tensor
from nn import functional as F, init
from nn.module import Module, Parameter
from nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

State = Tensor | tuple[Tensor, Tensor]


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


class _Lengths:
    """The lengths of the sequences of a padded (T, B, ...) batch: each sequence reversed within
    its own length (so a reverse scan starts at its last step), and each one's last step."""

    def __init__(self, lengths: np.ndarray, like: Tensor) -> None:
        steps = np.arange(like.shape[0])[:, None]
        self._reversed = ag.asarray(np.where(steps < lengths, lengths - 1 - steps, steps), device=like.device)
        self._last = ag.asarray((lengths - 1)[None, :], device=like.device)

    def reverse(self, x: Tensor, axis: int = 0) -> Tensor:
        index = ag.broadcast_to(self._reversed[(..., *(None,) * (x.ndim - 2))], x.shape)
        return ag.take_along_axis(x, index, axis=axis)

    def last(self, run: Tensor) -> Tensor:
        index = ag.broadcast_to(self._last[..., None], (1, *run.shape[1:]))
        return ag.take_along_axis(run, index, axis=0)[0]


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
        self.mode, self._kind = mode, P.RECURRENCES[mode]
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

    def forward(self, input: Tensor | PackedSequence, hx: Any = None) -> tuple[Any, State]:
        """`input` (T, B, input_size), (B, T, input_size) with batch_first, (T, input_size)
        unbatched, or a `PackedSequence` of sequences of different lengths; `hx` the initial
        state(s), (layers * directions, B, H), zeros if None. Returns (output, h_n), LSTM
        (output, (h_n, c_n)), shaped as in PyTorch; a packed input gives a packed output, and
        each sequence's final state is the one after its own last step."""
        if isinstance(input, PackedSequence):
            padded, lengths = pad_packed_sequence(input)
            output, final = self._run(padded, hx, _Lengths(lengths.numpy(), padded))
            return pack_padded_sequence(output, lengths, enforce_sorted=input.sorted_indices is None), final
        return self._run(input, hx, None)

    def _run(self, input: Tensor, hx: Any, lengths: _Lengths | None) -> tuple[Tensor, State]:
        name, kind, hidden = type(self).__name__, self._kind, self.hidden_size
        if input.ndim not in (2, 3) or input.shape[-1] != self.input_size:
            raise ValueError(
                f"{name}: expected an input of shape (T, B, {self.input_size}), (B, T, {self.input_size}) "
                f"with batch_first, or (T, {self.input_size}) unbatched; got {input.shape}"
            )
        batched = input.ndim == 3
        x = input if batched else ag.expand_dims(input, axis=1)
        if self.batch_first and batched and lengths is None:
            x = ag.permute_dims(x, (1, 0, 2))
        if x.shape[0] == 0:  # as in PyTorch: a scan over no steps has no final state
            raise ValueError(
                f"{name}: expected sequence length to be larger than 0, got an input of shape {input.shape}"
            )
        states = self._initial_states(hx, x, batched)
        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                h0, c0 = states[0][index], (states[1][index] if kind.has_cell else None)
                reverse = ag.flip if lengths is None else lengths.reverse
                run = P.recurrent_scan(
                    kind, reverse(x, axis=0) if direction else x, *self._weights(layer, direction), h0, c0
                )
                finals.append(run[-1] if lengths is None else lengths.last(run))
                hs = run[..., :hidden] if kind.has_cell else run
                outputs.append(reverse(hs, axis=0) if direction else hs)
            x = outputs[0] if directions == 1 else ag.concat(outputs, axis=-1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        if self.batch_first and batched and lengths is None:
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
        self._kind = P.RECURRENCES[mode]
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
        run = P.recurrent_scan(
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
