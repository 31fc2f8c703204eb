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
import time
from collections.abc import Sequence

import numpy as np

import autograd_core as ag
import backends
import nn
import nn.functional as F
import optim
from example_support import cli, plots, records
from example_support.characters import (
    Corpus,
    add_sample_arguments,
    baselines,
    decay_last_quarter,
    load_corpus,
    log_summary,
    plot,
)
from example_support.progress import Progress

NAME = "char"
QUICK = {"steps": 1000, "eval_every": 250, "eval_subset": 4096, "sample_length": 200}


def windows(data: np.ndarray, positions: np.ndarray, context: int) -> tuple[np.ndarray, np.ndarray]:
    """Contexts ``data[p : p + context]`` and the next characters ``data[p + context]``."""
    return data[positions[:, None] + np.arange(context)], data[positions + context]


# --- the model -------------------------------------------------------------------------------
class CharModel(nn.Module):
    """Embedding -> flatten -> Linear -> LayerNorm -> tanh -> Linear, over a fixed context."""

    def __init__(self, vocab: int = 65, context: int = 16, embed: int = 32, hidden: int = 512) -> None:
        super().__init__()
        self.context = context
        self.embed = nn.Embedding(vocab, embed)
        self.net = nn.Sequential(
            nn.Linear(context * embed, hidden), nn.LayerNorm(hidden), nn.Tanh(), nn.Linear(hidden, vocab)
        )

    def forward(self, codes: ag.Tensor) -> ag.Tensor:
        """Logits (batch, vocab) of the next character after each context row of `codes`."""
        return self.net(ag.flatten(self.embed(codes), 1))


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


def train_char(
    corpus: Corpus,
    *,
    steps: int = 6000,
    batch_size: int = 256,
    lr: float = 3e-3,
    weight_decay: float = 0.01,
    context: int = 16,
    seed: int = 0,
    eval_every: int = 500,
    eval_positions: np.ndarray | None = None,
    quiet: bool = True,
) -> dict:
    """Train the model; returns it, the mean training loss per `eval_every` steps and the
    validation curve on `eval_positions` (if given) at the same points."""
    ag.manual_seed(seed)
    model = CharModel(len(corpus.chars), context)
    opt = optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    schedule = optim.lr_scheduler.LambdaLR(opt, decay_last_quarter(steps))
    rng = np.random.default_rng(seed)
    record: dict = {"model": model, "train_curve": [], "val_curve": [], "lr_curve": []}
    bar = Progress(steps, NAME, enabled=not quiet)
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


def build_parser() -> argparse.ArgumentParser:
    """The command line of this example."""
    p = cli.parser(NAME, __doc__, QUICK)
    p.add_argument("--steps", type=cli.positive_int, default=6000, help="AdamW steps.")
    p.add_argument(
        "--batch-size", type=cli.positive_int, default=256, help="Contexts per step (and per batch of the evaluation)."
    )
    p.add_argument("--lr", type=cli.positive_float, default=3e-3, help="AdamW peak learning rate.")
    p.add_argument("--weight-decay", type=cli.natural_float, default=0.01, help="AdamW (decoupled) weight decay.")
    p.add_argument(
        "--context",
        type=cli.positive_int,
        default=16,
        help="Characters of context the model sees before the one it predicts.",
    )
    p.add_argument("--eval-every", type=cli.positive_int, default=500, help="Steps between validation checks.")
    p.add_argument(
        "--eval-subset",
        type=cli.positive_int,
        default=10_000,
        help="Validation positions scored by the checks during training; the final score uses all.",
    )
    p.add_argument(
        "--eval-limit",
        type=cli.positive_int,
        default=None,
        help="Score the final model on the first EVAL_LIMIT validation positions only. Without it, on all of them.",
    )
    add_sample_arguments(p)
    return p


def run(args: argparse.Namespace, argv: Sequence[str] | None = None) -> dict:
    """Run with the parsed `args` (`argv` is recorded as the command); returns what it wrote to the JSON."""
    start = time.perf_counter()
    corpus = load_corpus()
    all_positions = np.arange(len(corpus.val) - args.context)
    subset = np.random.default_rng(12345).permutation(all_positions)[: args.eval_subset]
    outcome = train_char(
        corpus,
        steps=args.steps,
        batch_size=args.batch_size,
        lr=args.lr,
        weight_decay=args.weight_decay,
        context=args.context,
        seed=args.seed,
        eval_every=args.eval_every,
        eval_positions=np.sort(subset),
        quiet=args.quiet,
    )
    train_time = time.perf_counter() - start
    final_positions = all_positions[: args.eval_limit]
    val_nats = evaluate(outcome["model"], corpus.val, final_positions, args.batch_size)
    prompt = corpus.decode(corpus.val[: args.context])
    ag.manual_seed(args.seed)
    text = sample(outcome["model"], corpus, prompt, args.sample_length, args.temperature)
    results = {
        "backend": backends.current().name,
        "steps": args.steps,
        "batch_size": args.batch_size,
        "lr": args.lr,
        "weight_decay": args.weight_decay,
        "context": args.context,
        "vocab": len(corpus.chars),
        "train_chars": len(corpus.train),
        "val_chars": len(corpus.val),
        "val_positions": len(final_positions),
        "val_nats": val_nats,
        "baselines": baselines(corpus, args.context),
        "train_curve": outcome["train_curve"],
        "val_curve": outcome["val_curve"],
        "temperature": args.temperature,
        "sample_prompt": prompt,
        "sample": text,
        "train_time_s": round(train_time, 3),
    }
    out = records.output_path(args, NAME)
    plots.draw(plot, results, out)
    records.write_results(out, results, records.command_line(NAME, argv), time.perf_counter() - start)
    log_summary(results, out, args.quiet)
    return results


def main(argv: Sequence[str] | None = None) -> dict:
    """Run the character model from the command line `argv`; returns what it wrote to the JSON."""
    return cli.main(build_parser(), run, argv)


if __name__ == "__main__":
    main()
