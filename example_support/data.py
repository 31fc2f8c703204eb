"""The data sets the examples carry in ``data/``: MNIST and Tiny Shakespeare, each checked
against its sha256 before use; and the order of an epoch's minibatches.

    >>> from example_support.data import load_mnist
    >>> mnist = load_mnist()
    >>> mnist.train.x.shape, mnist.val.x.shape, mnist.test.x.shape
    ((55000, 784), (5000, 784), (10000, 784))
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DATA_DIR = Path(__file__).resolve().parents[1] / "data"

# file name -> sha256 (from the data set's README; the files must match byte for byte)
CHECKSUMS = {
    "mnist.npz": "06af5dfe73b70e3bc1c36439982b18a8d76803db9b544f6fdf838a37fbb01b64",
    "tinyshakespeare.txt": "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
}

MNIST_VALIDATION = 5_000  # the last 5,000 training images


class DataError(RuntimeError):
    """A data file is missing or does not match its checksum."""


def sha256(path: Path) -> str:
    """The hex sha256 of the file at `path`."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified_path(name: str, root: Path | str | None = None) -> Path:
    """The path of data file `name` under `root` (default ``data/``), after checking that it
    exists and that its sha256 is the expected one; otherwise a `DataError` naming the file."""
    path = Path(root or DATA_DIR) / name
    if name not in CHECKSUMS:
        raise DataError(f"{name!r} is not a known data file; known: {', '.join(CHECKSUMS)}")
    if not path.is_file():
        raise DataError(f"data file {path} is missing; copy {name} into {path.parent} (see data/README.md)")
    actual = sha256(path)
    if actual != CHECKSUMS[name]:
        raise DataError(
            f"data file {path} is corrupt: sha256 {actual}, expected {CHECKSUMS[name]}; restore the original {name}"
        )
    return path


@dataclass(frozen=True)
class Split:
    """Images flattened to 784 float32 pixels in [0, 1], and their int64 labels."""

    x: np.ndarray
    y: np.ndarray

    def __len__(self) -> int:
        return len(self.y)


@dataclass(frozen=True)
class MNIST:
    train: Split  # the first 55,000 training images
    val: Split  # the last 5,000 training images
    test: Split  # the 10,000 test images: for the final figure only


def _split(images: np.ndarray, labels: np.ndarray) -> Split:
    x = images.reshape(len(images), -1).astype(np.float32) / np.float32(255)
    return Split(x, labels.astype(np.int64))


def load_mnist(root: Path | str | None = None) -> MNIST:
    """MNIST split 55,000 train / 5,000 validation / 10,000 test (pixels in [0, 1])."""
    return _load_mnist(str(Path(root or DATA_DIR).resolve()))


@functools.lru_cache(maxsize=2)
def _load_mnist(root: str) -> MNIST:
    with np.load(verified_path("mnist.npz", root)) as f:
        train, test = _split(f["x_train"], f["y_train"]), _split(f["x_test"], f["y_test"])
    cut = len(train) - MNIST_VALIDATION
    for a in (train.x, train.y, test.x, test.y):
        a.setflags(write=False)  # cached: shared between callers
    return MNIST(Split(train.x[:cut], train.y[:cut]), Split(train.x[cut:], train.y[cut:]), test)


def load_shakespeare(root: Path | str | None = None) -> str:
    """The Tiny Shakespeare corpus as one string (1,115,394 characters, 65 distinct)."""
    return verified_path("tinyshakespeare.txt", root).read_text(encoding="utf-8")


def shuffled_batches(n: int, batch_size: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Indices of one epoch over `n` examples, shuffled by `rng`, in batches of `batch_size`
    (the last one shorter, as a PyTorch DataLoader without drop_last)."""
    order = rng.permutation(n)
    for start in range(0, n, batch_size):
        yield order[start : start + batch_size]


def num_batches(n: int, batch_size: int) -> int:
    """How many batches `shuffled_batches` makes of `n` examples."""
    return math.ceil(n / batch_size)
