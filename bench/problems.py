"""What is measured: the models, their sizes, the data and the initial weights.

Every implementation reads its shapes and hyper-parameters from here and gets the same
`Problem`: the same initial weights (PyTorch's names and layouts) and the same pool of
batches, so their losses after the same number of steps can be compared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np

from bench.gpt_model import GPTConfig, gpt

# The workloads, in the order they run and print. Only when asked for: transforms (a
# different question from a training step's) and fullbatch (minutes, dask clusters).
WORKLOADS = ("mlp", "char", "cnn", "gpt", "ops", "phase", "transforms", "fullbatch")
OPT_IN_WORKLOADS = ("transforms", "fullbatch")
DEFAULT_WORKLOADS = tuple(w for w in WORKLOADS if w not in OPT_IN_WORKLOADS)
# Which model each workload steps.
MODEL_OF = {
    "mlp": "mlp",
    "char": "char",
    "cnn": "cnn",
    "gpt": "gpt",
    "ops": "chain",
    "phase": "mlp",
    "transforms": "mlp",
    "fullbatch": "fullbatch",
}
PHASES = ("forward", "backward", "optimizer")
# transforms: the per-sample gradients (vmap of grad), then a Hessian-vector product, timed apart
TRANSFORMS = ("per_sample", "hvp")
# The workloads whose step is timed in parts, each part a method of the runner; the others time "step".
PHASES_OF = {"phase": PHASES, "transforms": TRANSFORMS}

MLP_SIZES = (784, 512, 256, 10)
MLP_LR = 1e-3
CHAR_VOCAB, CHAR_DIM, CHAR_CONTEXT, CHAR_HIDDEN = 65, 32, 16, 512
CHAR_LR = 3e-3
CNN_IMAGE = (1, 28, 28)
CNN_LR = 3e-3
CNN_DROPOUT = 0.25
GPT_LR = 1e-3
GPT_DROPOUT = 0.2  # nanoGPT's config/train_shakespeare_char.py (the character GPT this one follows) trains with 0.2
# The workloads' models with dropout, and its rate: the CNN's after flattening, the GPT's on the embeddings, the
# attention weights and both residual branches. Timed steps run in training mode, so each library draws masks.
DROPOUT_OF = {"cnn": CNN_DROPOUT, "gpt": GPT_DROPOUT}
WEIGHT_DECAY = 0.01
BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
LAYER_NORM_EPS = 1e-5
CHAIN_LENGTH = 2000
CHAIN_X, CHAIN_W = 1.0, 1.0001  # the chain computes x * w**2000; its gradient in w is ~2442
# fullbatch: bench/synthetic.py's (examples/bigdata.py's) 64-128-1 MLP on its synthetic teacher set, every row in every
# step. Two sizes: one whose rows fit in the workers' memory (kept there), one twice as large as
# all the workers' memory limits together (drawn again from the seeds every step).
FULLBATCH_LR = 0.05
FULLBATCH_CHUNK_ROWS = 65_536  # 17 MB of inputs per chunk: a step's working set stays far below the limit
FULLBATCH_WORKER_MEMORY = 512 * 2**20  # each dask worker's memory limit, bytes
FULLBATCH_ROWS = (262_144, 4_194_304)  # 68 MB: fits in one worker; 1.09 GB: more than 2 workers' 1 GiB
FULLBATCH_HOST_ROWS = 2_000_000  # the largest set the host (numpy) implementations draw


@dataclass(frozen=True)
class Problem:
    """One measured point's inputs, identical for every implementation.

    `weights` maps PyTorch parameter names ("0.weight", shape (out, in)) to float32 arrays;
    `batches` holds (inputs, targets) pairs. For the op chain, `weights` holds the two
    one-element arrays "x" and "w", and `batches` is empty.
    """

    workload: str
    batch: int
    model: str
    weights: dict[str, np.ndarray]
    batches: tuple[tuple[np.ndarray, np.ndarray], ...]
    lr: float = MLP_LR
    weight_decay: float = WEIGHT_DECAY
    chain: int = CHAIN_LENGTH
    data: Any = None  # fullbatch: the examples.bigdata.SyntheticSet each implementation makes itself
    probes: Probes | None = None  # transforms: the HVP's direction and the check values' weights
    dropout: float = 0.0  # the rate of the model's dropout (cnn, gpt); 0: none drawn
    seed: int = 0

    def mask_seed(self, k: int) -> int:
        """The seed of the dropout masks of the k-th step: an implementation that reseeds its
        library's generator with it before each step draws the same masks whatever ran between
        its steps, as every other implementation drawing from that library's generator does.

        >>> make_problem("cnn", 2).mask_seed(3) == make_problem("cnn", 2).mask_seed(3)
        True
        """
        return int(np.random.SeedSequence([self.seed, k]).generate_state(1)[0])


@dataclass(frozen=True)
class Probes:
    """transforms: the fixed random direction of the Hessian-vector product (shaped as the
    parameters, in the problem's order) and what turns a result into one check value.

    A result is too large to compare whole in the timer's cross-check, so each is reduced to
    a random projection in float64: per-sample gradients G (examples by parameters) to
    ``sample_weights @ G @ weights``, a Hessian-vector product h to ``h @ weights``. Two
    results that agree to float32 rounding give values that agree about as well; a wrong
    entry, sign, scale or order of examples moves the value far beyond the tolerance.
    """

    direction: dict[str, np.ndarray]
    weights: dict[str, np.ndarray]
    sample_weights: np.ndarray

    def per_sample_value(self, grads: dict[str, np.ndarray]) -> float:
        """The check value of per-sample gradients: name -> (examples, *parameter shape)."""
        total = 0.0
        for name, w in self.weights.items():
            rows = np.asarray(grads[name], np.float64).reshape(len(self.sample_weights), -1)
            total += float(self.sample_weights @ rows @ w.ravel())
        return total

    def hvp_value(self, hvp: dict[str, np.ndarray]) -> float:
        """The check value of a Hessian-vector product: name -> array shaped as the parameter."""
        return sum(float(np.asarray(hvp[k], np.float64).ravel() @ w.ravel()) for k, w in self.weights.items())


def make_probes(weights: dict[str, np.ndarray], batch: int, seed: int) -> Probes:
    """The direction and check weights of transforms for the parameters `weights` at `batch`."""
    rng = np.random.default_rng(seed + 2)
    draw = lambda: {k: rng.standard_normal(w.shape).astype(np.float32) for k, w in weights.items()}
    return Probes(direction=draw(), weights=draw(), sample_weights=rng.standard_normal(batch))


def build_model(layers: ModuleType, model: str, dropout: float = 0.0) -> Any:
    """The `model` ("mlp", "char", "cnn", "gpt" or "fullbatch") built from a PyTorch-shaped `nn` namespace `layers`.

    The same function builds ours (``import nn``) and PyTorch's (``torch.nn``), so the two
    models have the same layers and the same parameter names. The CNN is that of
    ``examples/mnist_cnn.py``, the GPT nanoGPT's CPU configuration (``bench/gpt_model.py``, as
    in ``examples/gpt.py``), each with `dropout` as its rate (its Dropout layers are there at
    rate 0 too, so the parameter names do not depend on it); fullbatch's model the MLP student
    of ``examples/bigdata.py``.
    """
    if model == "mlp":
        sizes = MLP_SIZES
        modules: list[Any] = []
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            modules.append(layers.Linear(n_in, n_out))
            if i < len(sizes) - 2:
                modules.append(layers.ReLU())
        return layers.Sequential(*modules)
    if model == "char":
        return layers.Sequential(
            layers.Embedding(CHAR_VOCAB, CHAR_DIM),
            layers.Flatten(),
            layers.Linear(CHAR_CONTEXT * CHAR_DIM, CHAR_HIDDEN),
            layers.LayerNorm(CHAR_HIDDEN),
            layers.Tanh(),
            layers.Linear(CHAR_HIDDEN, CHAR_VOCAB),
        )
    if model == "cnn":
        return mnist_cnn(layers, dropout=dropout)
    if model == "gpt":
        return gpt(layers, GPTConfig(dropout=dropout))
    if model == "fullbatch":
        from bench.synthetic import student

        return student(layers, "mlp")
    raise ValueError(f"unknown model {model!r}")


def mnist_cnn(layers: ModuleType, dropout: float | None = CNN_DROPOUT) -> Any:
    """The MNIST CNN of ``examples/mnist_cnn.py``, built from `layers` (``nn`` or ``torch.nn``):
    two blocks of 3x3 convolution (no bias: the batch norm after it subtracts any), batch
    norm, ReLU and 2x2 max pooling, then dropout (left out with ``dropout=None``), a 128-unit
    SiLU layer and 10 outputs."""
    head = [layers.Dropout(dropout)] if dropout is not None else []
    return layers.Sequential(
        layers.Conv2d(1, 32, 3, padding=1, bias=False),
        layers.BatchNorm2d(32),
        layers.ReLU(),
        layers.MaxPool2d(2),
        layers.Conv2d(32, 64, 3, padding=1, bias=False),
        layers.BatchNorm2d(64),
        layers.ReLU(),
        layers.MaxPool2d(2),
        layers.Flatten(),
        *head,
        layers.Linear(64 * 7 * 7, 128),
        layers.SiLU(),
        layers.Linear(128, 10),
    )


@lru_cache(maxsize=4)
def reference_weights(model: str, seed: int) -> dict[str, np.ndarray]:
    """The initial weights and buffers of `model`: our model built on the numpy backend after
    ``manual_seed(seed)`` (the same seed gives the same weights on every backend); floating
    point ones as float32, integer ones (batch norm's count) as they are."""
    import autograd_core as ag
    import backends
    import nn

    with backends.use("numpy"):
        ag.manual_seed(seed)
        built = build_model(nn, model)
        state = {name: t.numpy() for name, t in built.state_dict().items()}
        return {name: a.astype(np.float32) if a.dtype.kind == "f" else a for name, a in state.items()}


def pool_size(batch: int) -> int:
    """Distinct batches per point: about 8,192 samples in all (4 to 256 batches), so that a
    run sees mostly fresh samples and the loss stays informative instead of memorised."""
    return max(4, min(256, 8192 // max(batch, 1)))


def _batches(model: str, batch: int, seed: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """Learnable data: MLP and CNN labels from a fixed random linear teacher of the inputs
    (CNN: 28x28 images), char targets a fixed function of the context; so a step that learns
    wrongly shows in the loss; GPT targets at each position a fixed function of the
    character there and the one two places back, flattened to rows as its logits are)."""
    rng = np.random.default_rng(seed + 1)
    count = pool_size(batch)
    if model in ("mlp", "cnn"):
        shape = (MLP_SIZES[0],) if model == "mlp" else CNN_IMAGE
        teacher = rng.standard_normal((math.prod(shape), MLP_SIZES[-1]))
        inputs = [rng.standard_normal((batch, *shape), dtype=np.float32) for _ in range(count)]
        return tuple((x, np.argmax(x.reshape(batch, -1) @ teacher, axis=1).astype(np.int64)) for x in inputs)
    if model == "gpt":
        c = GPTConfig()
        blocks = [rng.integers(0, c.vocab_size, (batch, c.block_size), dtype=np.int64) for _ in range(count)]
        return tuple((x, ((3 * x + np.pad(x[:, :-2], ((0, 0), (2, 0)))) % c.vocab_size).reshape(-1)) for x in blocks)
    contexts = [rng.integers(0, CHAR_VOCAB, (batch, CHAR_CONTEXT), dtype=np.int64) for _ in range(count)]
    return tuple((c, (3 * c[:, -1] + c[:, -3]) % CHAR_VOCAB) for c in contexts)


def make_problem(workload: str, batch: int, seed: int = 0, dropout: bool = True) -> Problem:
    """The inputs of `workload` at `batch` (ignored by the op chain; fullbatch: the rows); the
    CNN and the GPT with their dropout (`DROPOUT_OF`), or without it (``dropout=False``: every
    implementation then computes the same function, and all their losses can be compared)."""
    model = MODEL_OF[workload]
    if model == "fullbatch":
        from bench.synthetic import SyntheticSet

        data = SyntheticSet(batch, seed=seed, chunk_rows=FULLBATCH_CHUNK_ROWS)
        return Problem(workload, batch, model, dict(reference_weights(model, seed)), (), lr=FULLBATCH_LR, data=data)
    if model == "chain":
        weights = {"x": np.full(1, CHAIN_X, np.float32), "w": np.full(1, CHAIN_W, np.float32)}
        return Problem(workload, 1, model, weights, ())
    lr = {"char": CHAR_LR, "cnn": CNN_LR, "gpt": GPT_LR}.get(model, MLP_LR)
    weights = dict(reference_weights(model, seed))
    probes = make_probes(weights, batch, seed) if workload == "transforms" else None
    rate = DROPOUT_OF.get(model, 0.0) if dropout else 0.0
    batches = _batches(model, batch, seed)
    return Problem(workload, batch, model, weights, batches, lr=lr, probes=probes, dropout=rate, seed=seed)
