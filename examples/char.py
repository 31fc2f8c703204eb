"""A character model of Tiny Shakespeare: Embedding(65, 32) over a 16-character context,
flattened to 512, Linear(512, 512), LayerNorm, tanh, Linear(512, 65); AdamW 3e-3 with a
linear decay over the last quarter of the steps, batch 256. It is scored in nats per
character on the validation split against uniform, unigram and bigram baselines, and
writes a temperature-0.8 sample.

    AUTOGRAD_BACKEND=numpy python examples/char.py --steps 6000
    python examples/char.py --quick    # 1,000 steps: below the bigram baseline, a sample with words in it

Each run writes its JSON record and PNG to runs/ under the current folder (see --out).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the `examples` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

import autograd_core as ag
import backends
import nn
import nn.functional as F
import optim
from examples import common
from examples.data import load_shakespeare

NAME = "char"
QUICK = {"steps": 1000, "eval_every": 250, "eval_subset": 4096, "sample_length": 200}
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


def windows(data: np.ndarray, positions: np.ndarray, context: int) -> tuple[np.ndarray, np.ndarray]:
    """Contexts ``data[p : p + context]`` and the next characters ``data[p + context]``."""
    return data[positions[:, None] + np.arange(context)], data[positions + context]


# --- baselines ---------------------------------------------------------------------------------
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
    return {"uniform": math.log(v), "unigram": float(-np.mean(np.log(unigram[targets]))),
            "bigram": float(-np.mean(np.log(bigram[previous, targets])))}


# --- the model -------------------------------------------------------------------------------
class CharModel(nn.Module):
    """Embedding -> flatten -> Linear -> LayerNorm -> tanh -> Linear, over a fixed context."""

    def __init__(self, vocab: int = 65, context: int = 16, embed: int = 32, hidden: int = 512) -> None:
        super().__init__()
        self.context = context
        self.embed = nn.Embedding(vocab, embed)
        self.net = nn.Sequential(nn.Linear(context * embed, hidden), nn.LayerNorm(hidden), nn.Tanh(),
                                 nn.Linear(hidden, vocab))

    def forward(self, codes: ag.Tensor) -> ag.Tensor:
        """Logits (batch, vocab) of the next character after each context row of `codes`."""
        return self.net(ag.flatten(self.embed(codes), 1))


def decay_last_quarter(steps: int) -> Callable[[int], float]:
    """The learning-rate factor: 1, then linear towards 0 over the last quarter of `steps`."""
    start = int(steps * 0.75)
    return lambda step: 1.0 if step < start else max(steps - step, 0) / (steps - start)


def evaluate(model: CharModel, data: np.ndarray, positions: np.ndarray, batch_size: int = 256) -> float:
    """Mean cross-entropy (nats per character) of the predictions at `positions`, in batches
    of the training size (jax compiles each op once per shape: no new shapes, no new compiles)."""
    total = 0.0
    with ag.no_grad():
        for start in range(0, len(positions), batch_size):
            x, y = windows(data, positions[start : start + batch_size], model.context)
            total += F.cross_entropy(model(ag.tensor(x)), ag.tensor(y), reduction="sum").item()
    return total / len(positions)


def sample(model: CharModel, corpus: Corpus, prompt: str, length: int, temperature: float = 0.8) -> str:
    """`length` characters drawn after `prompt` from softmax(logits / temperature), with the
    host generator (seed it with ``ag.manual_seed`` for a repeatable sample)."""
    rng = backends.host_rng()
    codes = list(corpus.encode(prompt))
    with ag.no_grad():
        for _ in range(length):
            context = np.array([codes[-model.context :]], dtype=np.int64)
            probs = F.softmax(model(ag.tensor(context)) / temperature, dim=-1).numpy()[0].astype(np.float64)
            codes.append(int(rng.choice(len(probs), p=probs / probs.sum())))
    return corpus.decode(codes)


def train_char(corpus: Corpus, *, steps: int = 6000, batch_size: int = 256, lr: float = 3e-3,
               weight_decay: float = 0.01, context: int = 16, seed: int = 0, eval_every: int = 500,
               eval_positions: np.ndarray | None = None, quiet: bool = True) -> dict:
    """Train the model; returns it, the mean training loss per `eval_every` steps and the
    validation curve on `eval_positions` (if given) at the same points."""
    ag.manual_seed(seed)
    model = CharModel(len(corpus.chars), context)
    opt = optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    schedule = optim.lr_scheduler.LambdaLR(opt, decay_last_quarter(steps))
    rng = np.random.default_rng(seed)
    record: dict = {"model": model, "train_curve": [], "val_curve": [], "lr_curve": []}
    bar = common.Progress(steps, NAME, enabled=not quiet)
    window: list[float] = []
    for step in range(1, steps + 1):
        x, y = windows(corpus.train, rng.integers(0, len(corpus.train) - context, batch_size), context)
        loss = F.cross_entropy(model(ag.tensor(x)), ag.tensor(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
        record["lr_curve"].append(opt.param_groups[0]["lr"])
        schedule.step()
        window.append(loss.item())
        bar.update(loss=float(np.mean(window[-100:])))
        if step % eval_every == 0 or step == steps:
            record["train_curve"].append((step, float(np.mean(window))))
            window = []
            if eval_positions is not None:
                record["val_curve"].append((step, evaluate(model, corpus.val, eval_positions, batch_size)))
    bar.close()
    return record


def plot(results: dict, json_path: Path) -> Path:
    """Training and validation nats per character against the baselines."""
    fig, (ax,) = common.figure(1, width=9)
    for key, label in (("train_curve", "training batches"), ("val_curve", "validation subset")):
        if results[key]:
            steps, nats = zip(*results[key])
            ax.plot(steps, nats, "o-", ms=3, label=label)
    ax.axhline(results["val_nats"], color="k", lw=1, label=f"final validation {results['val_nats']:.3f}")
    for (name, value), style in zip(results["baselines"].items(), (":", "--", "-.")):
        ax.axhline(value, color="gray", ls=style, lw=1, label=f"{name} {value:.3f}")
    ax.set(title=f"character model ({results['backend']})", xlabel="step", ylabel="nats per character")
    return common.save_curve_figure(fig, ax, json_path)


def build_parser() -> argparse.ArgumentParser:
    """The command line of this example."""
    p = common.parser(NAME, __doc__, QUICK)
    p.add_argument("--steps", type=common.positive_int, default=6000, help="AdamW steps.")
    p.add_argument("--batch-size", type=common.positive_int, default=256,
                   help="Contexts per step (and per batch of the evaluation).")
    p.add_argument("--lr", type=common.positive_float, default=3e-3, help="AdamW peak learning rate.")
    p.add_argument("--weight-decay", type=common.natural_float, default=0.01, help="AdamW (decoupled) weight decay.")
    p.add_argument("--context", type=common.positive_int, default=16,
                   help="Characters of context the model sees before the one it predicts.")
    p.add_argument("--eval-every", type=common.positive_int, default=500, help="Steps between validation checks.")
    p.add_argument("--eval-subset", type=common.positive_int, default=10_000,
                   help="Validation positions scored by the checks during training; the final score uses all.")
    p.add_argument("--eval-limit", type=common.positive_int, default=None,
                   help="Score the final model on the first EVAL_LIMIT validation positions only. Without it, on "
                        "all of them.")
    add_sample_arguments(p)
    return p


def add_sample_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of the text sample the character examples write."""
    p.add_argument("--sample-length", type=common.natural_int, default=500,
                   help="Characters of the sample written after training (0: no sample).")
    p.add_argument("--temperature", type=common.positive_float, default=0.8,
                   help="Sampling temperature: below 1 favours the likelier characters.")


def run(args: argparse.Namespace, argv: Sequence[str] | None = None) -> dict:
    """Run with the parsed `args` (`argv` is recorded as the command); returns what it wrote to the JSON."""
    start = time.perf_counter()
    corpus = load_corpus()
    all_positions = np.arange(len(corpus.val) - args.context)
    subset = np.random.default_rng(12345).permutation(all_positions)[: args.eval_subset]
    outcome = train_char(corpus, steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                         weight_decay=args.weight_decay, context=args.context, seed=args.seed,
                         eval_every=args.eval_every, eval_positions=np.sort(subset), quiet=args.quiet)
    train_time = time.perf_counter() - start
    final_positions = all_positions[: args.eval_limit]
    val_nats = evaluate(outcome["model"], corpus.val, final_positions, args.batch_size)
    prompt = corpus.decode(corpus.val[: args.context])
    ag.manual_seed(args.seed)
    text = sample(outcome["model"], corpus, prompt, args.sample_length, args.temperature)
    results = {
        "backend": backends.current().name, "steps": args.steps, "batch_size": args.batch_size, "lr": args.lr,
        "weight_decay": args.weight_decay, "context": args.context, "vocab": len(corpus.chars),
        "train_chars": len(corpus.train), "val_chars": len(corpus.val), "val_positions": len(final_positions),
        "val_nats": val_nats, "baselines": baselines(corpus, args.context),
        "train_curve": outcome["train_curve"], "val_curve": outcome["val_curve"],
        "temperature": args.temperature, "sample_prompt": prompt, "sample": text,
        "train_time_s": round(train_time, 3),
    }
    out = common.output_path(args, NAME)
    plot(results, out)
    common.write_results(out, results, common.command_line(NAME, argv), time.perf_counter() - start)
    log_summary(results, out, args.quiet)
    return results


def log_summary(results: dict, out: Path, quiet: bool) -> None:
    """The validation score against the baselines, where the record went, and the sample."""
    b = results["baselines"]
    common.log(f"validation {results['val_nats']:.3f} nats/char (uniform {b['uniform']:.3f}, unigram "
               f"{b['unigram']:.3f}, bigram {b['bigram']:.3f}); wrote {out}\n--- sample (T={results['temperature']}) "
               f"---\n{results['sample']}", quiet)


def main(argv: Sequence[str] | None = None) -> dict:
    """Run the character model from the command line `argv`; returns what it wrote to the JSON."""
    return common.main(build_parser(), run, argv)


if __name__ == "__main__":
    main()
