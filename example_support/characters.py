"""What the character models of Tiny Shakespeare (examples/char.py, lstm_char.py, gpt.py)
share: the corpus as integer codes split into training and validation, the baselines a model
is scored against, the learning-rate decay, the flags of the text sample, and the figure and
summary line of a run."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from example_support import cli, plots, records
from example_support.data import load_shakespeare

VAL_FRACTION = 0.1  # the last 10% of the text


@dataclass(frozen=True)
class Corpus:
    """The text as integer codes, split into a training head and a validation tail."""

    chars: str  # the vocabulary, sorted; code i is chars[i]
    train: np.ndarray
    val: np.ndarray

    def decode(self, codes: Sequence[int]) -> str:
        return "".join(self.chars[int(c)] for c in codes)

    def encode(self, text: str) -> np.ndarray:
        index = {c: i for i, c in enumerate(self.chars)}
        return np.array([index[c] for c in text], dtype=np.int64)


def load_corpus(val_fraction: float = VAL_FRACTION) -> Corpus:
    """Tiny Shakespeare encoded over its 65 characters; the last `val_fraction` is validation."""
    text = load_shakespeare()
    chars = "".join(sorted(set(text)))
    codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    lookup = np.zeros(256, dtype=np.int64)
    lookup[np.frombuffer(chars.encode("ascii"), dtype=np.uint8)] = np.arange(len(chars))
    data = lookup[codes]
    cut = int(len(data) * (1 - val_fraction))
    return Corpus(chars, data[:cut], data[cut:])


def baselines(corpus: Corpus, context: int) -> dict[str, float]:
    """Nats per character on the validation targets (the characters from `context` on, the
    ones the model predicts) of: a uniform guess, the training unigram frequencies and the
    training bigram model, both with add-one smoothing."""
    v = len(corpus.chars)
    targets, previous = corpus.val[context:], corpus.val[context - 1 : -1]
    unigram = np.bincount(corpus.train, minlength=v) + 1.0
    unigram /= unigram.sum()
    bigram = np.ones((v, v))
    np.add.at(bigram, (corpus.train[:-1], corpus.train[1:]), 1.0)
    bigram /= bigram.sum(axis=1, keepdims=True)
    return {
        "uniform": math.log(v),
        "unigram": float(-np.mean(np.log(unigram[targets]))),
        "bigram": float(-np.mean(np.log(bigram[previous, targets]))),
    }


def decay_last_quarter(steps: int) -> Callable[[int], float]:
    """The learning-rate factor: 1, then linear towards 0 over the last quarter of `steps`."""
    start = int(steps * 0.75)
    return lambda step: 1.0 if step < start else max(steps - step, 0) / (steps - start)


def add_sample_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of the text sample the character examples write."""
    p.add_argument(
        "--sample-length",
        type=cli.natural_int,
        default=500,
        help="Characters of the sample written after training (0: no sample).",
    )
    p.add_argument(
        "--temperature",
        type=cli.positive_float,
        default=0.8,
        help="Sampling temperature: below 1 favours the likelier characters.",
    )


def plot(results: dict, json_path: Path) -> Path:
    """Training and validation nats per character against the baselines."""
    fig, (ax,) = plots.figure(1, width=9)
    for key, label in (("train_curve", "training batches"), ("val_curve", "validation subset")):
        if results[key]:
            steps, nats = zip(*results[key])
            ax.plot(steps, nats, "o-", ms=3, label=label)
    ax.axhline(results["val_nats"], color="k", lw=1, label=f"final validation {results['val_nats']:.3f}")
    for (name, value), style in zip(results["baselines"].items(), (":", "--", "-.")):
        ax.axhline(value, color="gray", ls=style, lw=1, label=f"{name} {value:.3f}")
    ax.set(title=f"character model ({results['backend']})", xlabel="step", ylabel="nats per character")
    return plots.save_curve_figure(fig, ax, json_path)


def log_summary(results: dict, out: Path, quiet: bool) -> None:
    """The validation score against the baselines, where the record went, and the sample."""
    b = results["baselines"]
    records.log(
        f"validation {results['val_nats']:.3f} nats/char (uniform {b['uniform']:.3f}, unigram "
        f"{b['unigram']:.3f}, bigram {b['bigram']:.3f}); wrote {out}\n--- sample (T={results['temperature']}) "
        f"---\n{results['sample']}",
        quiet,
    )
