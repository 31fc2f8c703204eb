"""Sequences of different lengths as PyTorch batches them (``torch.nn.utils.rnn``): padded
into one tensor, or packed step by step into a `PackedSequence` that the recurrent layers take.

A packed sequence holds, for each time step, the rows of the sequences still running then,
longest sequence first: ``data`` is those rows one step after another and ``batch_sizes[t]``
how many there are at step t. Packing and unpacking are each one gather, so gradients flow
through both.

>>> import autograd_core as ag
>>> a, b = ag.tensor([1.0, 2.0, 3.0]), ag.tensor([4.0])
>>> packed = pack_sequence([a, b])
>>> packed.data.tolist(), packed.batch_sizes.tolist()
([1.0, 4.0, 2.0, 3.0], [2, 1, 1])
>>> padded, lengths = pad_packed_sequence(packed, batch_first=True)
>>> padded.tolist(), lengths.tolist()
([[1.0, 2.0, 3.0], [4.0, 0.0, 0.0]], [3, 1])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor

__all__ = [
    "PackedSequence",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]


class PackedSequence(NamedTuple):
    """Sequences packed step by step (see the module docstring). `sorted_indices` is the batch
    order of the packing (longest first) and `unsorted_indices` its inverse; None when the
    sequences were given sorted."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def lengths(self) -> np.ndarray:
        """The length of each sequence, in the original batch order."""
        sizes = _host_ints(self.batch_sizes)
        lengths = np.array([(sizes > b).sum() for b in range(sizes[0])]) if len(sizes) else np.zeros(0, np.int64)
        return lengths if self.unsorted_indices is None else lengths[_host_ints(self.unsorted_indices)]

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """The data moved or cast as `Tensor.to`; the sizes and orders stay."""
        return self._replace(data=self.data.to(*args, **kwargs))


def _host_ints(x: Any) -> np.ndarray:
    return np.asarray(x.numpy() if isinstance(x, Tensor) else x, dtype=np.int64).reshape(-1)


def _index(values: Sequence[int] | np.ndarray, like: Tensor) -> Tensor:
    return ag.asarray(np.asarray(values, dtype=np.int64), device=like.device)


def pad_sequence(
    sequences: Sequence[Tensor], batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"
) -> Tensor:
    """Sequences of shape (L_i, *) stacked into (T, B, *) (``batch_first``: (B, T, *)), each
    padded with `padding_value` on `padding_side` up to the longest length T.

    >>> import autograd_core as ag
    >>> pad_sequence([ag.ones(2), ag.ones(1)], batch_first=True, padding_value=-1.0).tolist()
    [[1.0, 1.0], [1.0, -1.0]]
    """
    if padding_side not in ("left", "right"):
        raise ValueError(f"padding_side must be 'left' or 'right', got {padding_side!r}")
    if not sequences:
        raise ValueError("pad_sequence: received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        fill = ag.full((longest - s.shape[0], *s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
        padded.append(ag.concat([s, fill] if padding_side == "right" else [fill, s]))
    return ag.stack(padded, axis=0 if batch_first else 1)


def pack_padded_sequence(
    input: Tensor, lengths: Any, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """Pack a padded batch (T, B, *) (``batch_first``: (B, T, *)) whose sequence b has
    `lengths[b]` steps. With `enforce_sorted` the lengths must be in decreasing order;
    otherwise the batch is sorted here and the order kept in the result."""
    lengths = _host_ints(lengths)
    batch_axis = 0 if batch_first else 1
    if len(lengths) != input.shape[batch_axis]:
        raise ValueError(f"pack_padded_sequence: {len(lengths)} lengths for a batch of {input.shape[batch_axis]}")
    if len(lengths) and (lengths.min() <= 0 or lengths.max() > input.shape[1 - batch_axis]):
        raise RuntimeError(
            f"pack_padded_sequence: every length must be in [1, {input.shape[1 - batch_axis]}], got {lengths.tolist()}"
        )
    sorted_indices = unsorted_indices = None
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
                "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
                "if you do not need ONNX exportability."
            )
        order = np.arange(len(lengths))
    else:
        order = np.argsort(-lengths, kind="stable")
        sorted_indices, unsorted_indices = _index(order, input), _index(np.argsort(order), input)
    steps = ag.permute_dims(input, (1, 0, *range(2, input.ndim))) if batch_first else input
    batch_sizes = np.array([(lengths > t).sum() for t in range(lengths.max(initial=0))], dtype=np.int64)
    batch = steps.shape[1]
    rows = [t * batch + order[b] for t, size in enumerate(batch_sizes) for b in range(size)]
    flat = ag.reshape(steps, (-1, *steps.shape[2:]))
    data = ag.take(flat, _index(rows, input), axis=0)
    return PackedSequence(data, ag.asarray(batch_sizes), sorted_indices, unsorted_indices)


def pad_packed_sequence(
    sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0, total_length: int | None = None
) -> tuple[Tensor, Tensor]:
    """The padded batch of a packed one, (T, B, *) (``batch_first``: (B, T, *)), in the
    original batch order, with each sequence's length (an int64 tensor)."""
    data, sizes = sequence.data, _host_ints(sequence.batch_sizes)
    steps, batch = len(sizes), int(sizes[0]) if len(sizes) else 0
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                f"pad_packed_sequence: total_length={total_length} is less than the longest sequence ({steps})"
            )
        steps = total_length
    pad_row = data.shape[0]  # the row of `padding_value` appended below
    where = np.full((steps, batch), pad_row, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    for t, size in enumerate(sizes):
        where[t, :size] = np.arange(offsets[t], offsets[t] + size)
    if sequence.unsorted_indices is not None:
        where = where[:, _host_ints(sequence.unsorted_indices)]
    fill = ag.full((1, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    padded = ag.take(ag.concat([data, fill]), _index(where.reshape(-1), data), axis=0)
    padded = ag.reshape(padded, (steps, batch, *data.shape[1:]))
    if batch_first:
        padded = ag.permute_dims(padded, (1, 0, *range(2, padded.ndim)))
    return padded, ag.asarray(sequence.lengths())


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack sequences of shape (L_i, *) (see `pack_padded_sequence` for `enforce_sorted`)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length."""
    steps = (
        padded_sequences if batch_first else ag.permute_dims(padded_sequences, (1, 0, *range(2, padded_sequences.ndim)))
    )
    return [steps[b, :n] for b, n in enumerate(_host_ints(lengths))]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The sequences of a packed batch, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
