"""The fullbatch workload's problem, shared with ``examples/bigdata.py``: a synthetic two-class
set drawn in seeded blocks (on the host, or lazily where a dask cluster computes), the
student models, and one full-batch AdamW step that passes over the rows once.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

import autograd_core as ag
import backends
import nn
import nn.functional as F
import optim

MODELS = ("logistic", "mlp")
HIDDEN = 128
LAZY_BACKENDS = ("dask",)  # backends whose arrays are task graphs: the rows are drawn by the workers


# --- the data ------------------------------------------------------------------------------
@dataclass(frozen=True)
class SyntheticSet:
    """`rows` standard-normal inputs of `features` float32 values, labelled 0/1 by a random
    linear teacher, a fraction `label_noise` of the labels flipped. Drawn in blocks of
    `chunk_rows` rows, block k from the seed ``(seed, stream, k)``: any block can be made
    alone, anywhere, and is the same everywhere.

    >>> x, y = SyntheticSet(rows=5, features=3, chunk_rows=2).host()
    >>> x.shape, y.shape, x.dtype.name, set(y.tolist()) <= {0.0, 1.0}
    ((5, 3), (5,), 'float32', True)
    """

    rows: int
    features: int = 64
    seed: int = 0
    label_noise: float = 0.1
    chunk_rows: int = 250_000
    stream: int = 0  # 0: the training rows; another value: a held-out set from the same teacher

    @property
    def ceiling(self) -> float:
        """The best expected accuracy: the teacher's own, ``1 - label_noise``."""
        return 1.0 - self.label_noise

    @property
    def nbytes(self) -> int:
        """Bytes of the inputs and labels (float32)."""
        return self.rows * (self.features + 1) * 4

    def chunks(self) -> tuple[int, ...]:
        """Rows per block: `chunk_rows`, the last one shorter."""
        full, rest = divmod(self.rows, self.chunk_rows)
        return (self.chunk_rows,) * full + ((rest,) if rest else ())

    def teacher(self) -> np.ndarray:
        """The teacher's weights (`features` values, from `seed` alone)."""
        return np.random.default_rng([self.seed]).standard_normal(self.features)

    def block(self, k: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """Block `k` of `rows` rows: inputs (rows, features) float32 and labels (rows,) float32."""
        rng = np.random.default_rng([self.seed, 1 + self.stream, k])
        x = rng.standard_normal((rows, self.features), dtype=np.float32)
        flip = rng.random(rows) < self.label_noise
        return x, ((x @ self.teacher() > 0) ^ flip).astype(np.float32)

    def host(self) -> tuple[np.ndarray, np.ndarray]:
        """All the rows as numpy arrays, on this host."""
        blocks = [self.block(k, n) for k, n in enumerate(self.chunks())]
        return np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])

    def lazy(self) -> tuple[Any, Any]:
        """All the rows as dask arrays chunked by blocks: a graph of one task per block, which
        the workers run (nothing is drawn here)."""
        import cloudpickle
        import dask.array as da

        cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers need not import this file
        chunks = self.chunks()
        keys = da.from_array(np.arange(len(chunks)), chunks=1)  # block k's index, one per chunk
        pairs = keys.map_blocks(
            _block_pair,
            self,
            chunks=(chunks, (self.features + 1,)),
            new_axis=1,
            dtype=np.float32,
            meta=np.empty((0, 0), np.float32),
        )
        return pairs[:, : self.features], pairs[:, self.features]


def _block_pair(k: np.ndarray, data: SyntheticSet) -> np.ndarray:
    """Block ``k[0]`` of `data` as one (rows, features + 1) array: the inputs, then the label."""
    index = int(k[0])
    x, y = data.block(index, data.chunks()[index])
    return np.concatenate([x, y[:, None]], axis=1)


def tensors(data: SyntheticSet, persist: bool = False) -> tuple[ag.Tensor, ag.Tensor]:
    """The inputs and labels as tensors of the current backend: on a lazy backend (dask) the
    workers' arrays wrapped as they are, never gathered (`persist`: computed now and kept
    there); elsewhere drawn on the host and converted."""
    backend = backends.current()
    if backend.name not in LAZY_BACKENDS:
        return tuple(ag.asarray(a) for a in data.host())  # type: ignore[return-value]
    x, y = data.lazy()
    if persist:
        x, y = backend.persist([x, y])
    return ag.asarray(x), ag.asarray(y)


# --- the models and the training -------------------------------------------------------------
def student(layers: ModuleType, kind: str, features: int = 64, hidden: int = HIDDEN) -> Any:
    """The model `kind` from a PyTorch-shaped `nn` namespace `layers` (``nn`` or ``torch.nn``):
    ``logistic`` is Linear(features, 1), ``mlp`` features -> `hidden` ReLU -> 1; one output,
    the log-odds of class 1."""
    if kind == "logistic":
        return layers.Sequential(layers.Linear(features, 1))
    if kind == "mlp":
        return layers.Sequential(layers.Linear(features, hidden), layers.ReLU(), layers.Linear(hidden, 1))
    raise ValueError(f"unknown model {kind!r}; choose from {', '.join(MODELS)}")


def build_model(kind: str, features: int = 64, hidden: int = HIDDEN, seed: int = 0) -> nn.Module:
    """Our `student` of `kind`, initialised from `seed` (the same weights on every backend)."""
    ag.manual_seed(seed)
    return student(nn, kind, features, hidden)


def loss_and_accuracy(model: nn.Module, x: ag.Tensor, y: ag.Tensor) -> tuple[ag.Tensor, ag.Tensor]:
    """The mean binary cross-entropy of the model's logits against labels `y` (0/1), and the
    fraction of rows whose logit has the label's side (outside the graph)."""
    logits = ag.reshape(model(x), (-1,))
    loss = F.binary_cross_entropy_with_logits(logits, y)
    accuracy = ag.mean(ag.astype((logits.detach() > 0) == (y > 0.5), logits.dtype))
    return loss, accuracy


def computed(*tensors: ag.Tensor) -> None:
    """Compute `tensors` together, in place (`Backend.persist`): a lazy backend runs their graphs
    in one pass, sharing what they share (the rows); eager backends have nothing left to do."""
    done = tensors[0].backend.persist([t.array for t in tensors])
    for t, data in zip(tensors, done):
        t.array = data


def train_step(model: nn.Module, opt: optim.Optimizer, x: ag.Tensor, y: ag.Tensor) -> tuple[float, float]:
    """One AdamW step on (x, y); returns the loss and accuracy before the update.

    The loss, the accuracy and the gradients are computed together, so a lazy backend passes
    over the rows once per step; the optimizer then updates from the computed gradients.
    """
    loss, accuracy = loss_and_accuracy(model, x, y)
    opt.zero_grad()
    loss.backward()
    computed(loss, accuracy, *(p.grad for p in model.parameters() if p.grad is not None))
    opt.step()
    return loss.item(), accuracy.item()
