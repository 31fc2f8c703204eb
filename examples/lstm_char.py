"""An LSTM character model of Tiny Shakespeare: Embedding(65, 64) -> LSTM(64, 256, 2 layers)
-> Linear(256, 65), trained by truncated backpropagation through time over windows of 64
characters (the state carried from window to window along 32 parallel streams of the text),
AdamW 3e-3 with a linear decay over the last quarter of the steps and gradient clipping.
It is scored as `examples/char.py` is: nats per character of the validation targets from
the 16th character on, against the same baselines, and writes a temperature-0.8 sample.

    AUTOGRAD_BACKEND=numpy python examples/lstm_char.py --steps 2000
    python examples/lstm_char.py --quick    # 100 steps of a narrower model: below the unigram baseline

Each run writes its JSON record and PNG to runs/ under the current folder (see --out).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Iterator, Sequence

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

NAME = "lstm_char"
QUICK = {
    "steps": 100,
    "hidden": 128,
    "lr": 1e-2,
    "eval_every": 50,
    "eval_chars": 4096,
    "eval_limit": 16384,
    "sample_length": 200,
}
SCORED_FROM = 16  # the first target scored: examples/char.py's context, so both score the same characters
IGNORED = -100  # F.cross_entropy's default ignore_index


class LSTMCharModel(nn.Module):
    """Embedding -> LSTM -> Linear: logits of the next character at every position."""

    def __init__(
        self, vocab: int = 65, embed: int = 64, hidden: int = 256, layers: int = 2, dropout: float = 0.0
    ) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, batch_first=True, dropout=dropout)
        self.head = nn.Linear(hidden, vocab)

    def forward(
        self, codes: ag.Tensor, state: tuple[ag.Tensor, ag.Tensor] | None = None
    ) -> tuple[ag.Tensor, tuple[ag.Tensor, ag.Tensor]]:
        """Logits (batch, time, vocab) after each character of `codes` (batch, time), and
        the state to continue from."""
        out, state = self.lstm(self.embed(codes), state)
        return self.head(out), state


def streams(data: np.ndarray, count: int, length: int, fill: int) -> np.ndarray:
    """`data` cut into `count` contiguous streams of `length` (count, length), the end
    padded with `fill`."""
    padded = np.full(count * length, fill, dtype=np.int64)
    padded[: len(data)] = data[: count * length]
    return padded.reshape(count, length)


def training_windows(
    data: np.ndarray, batch_size: int, block: int, rng: np.random.Generator
) -> Iterator[tuple[bool, np.ndarray, np.ndarray]]:
    """Endless (new_epoch, inputs, targets) windows of `block` characters (batch, block), in
    order along `batch_size` streams of the text, so the state can be carried between
    windows; each epoch starts at a random offset (and the state from zeros)."""
    length = len(data) // batch_size
    while True:
        offset = int(rng.integers(0, block))
        text = streams(data[offset:], batch_size, length, 0)
        for k, start in enumerate(range(0, length - offset - block - 1, block)):
            piece = text[:, start : start + block + 1]
            yield k == 0, piece[:, :-1], piece[:, 1:]


def evaluate(model: LSTMCharModel, data: np.ndarray, batch_streams: int = 64, block: int = 64) -> float:
    """Nats per character of the targets ``data[SCORED_FROM:]``, each predicted from all the
    text before it in its stream: `data` is cut into `batch_streams` contiguous streams run
    in windows of `block` with the state carried over (every window the same shape)."""
    length = math.ceil((len(data) - 1) / batch_streams / block) * block
    targets = data.copy()
    targets[:SCORED_FROM] = IGNORED
    inputs, outputs = streams(data[:-1], batch_streams, length, 0), streams(targets[1:], batch_streams, length, IGNORED)
    total, state = 0.0, None
    with ag.no_grad():
        for start in range(0, length, block):
            logits, state = model(ag.tensor(inputs[:, start : start + block]), state)
            y = outputs[:, start : start + block]
            total += F.cross_entropy(
                ag.reshape(logits, (-1, logits.shape[-1])), ag.tensor(y.reshape(-1)), reduction="sum"
            ).item()
    return total / (len(data) - SCORED_FROM)


def sample(model: LSTMCharModel, corpus: Corpus, prompt: str, length: int, temperature: float = 0.8) -> str:
    """`length` characters drawn after `prompt` from softmax(logits / temperature), one step
    at a time with the state carried, using the host generator (seed with ``ag.manual_seed``)."""
    rng = backends.host_rng()
    codes = list(corpus.encode(prompt))
    with ag.no_grad():
        logits, state = model(ag.tensor(np.array([codes], dtype=np.int64)))
        for _ in range(length):
            probs = F.softmax(logits[0, -1] / temperature, dim=-1).numpy().astype(np.float64)
            codes.append(int(rng.choice(len(probs), p=probs / probs.sum())))
            logits, state = model(ag.tensor(np.array([codes[-1:]], dtype=np.int64)), state)
    return corpus.decode(codes)


def train_lstm(corpus: Corpus, args: argparse.Namespace) -> dict:
    """Train the model with the settings in `args`; returns it, the mean training loss per
    `eval_every` steps and the validation curve on the first `eval_chars` validation characters."""
    ag.manual_seed(args.seed)
    model = LSTMCharModel(len(corpus.chars), args.embed, args.hidden, args.layers, args.dropout)
    opt = optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    schedule = optim.lr_scheduler.LambdaLR(opt, decay_last_quarter(args.steps))
    windows = training_windows(corpus.train, args.batch_size, args.block, np.random.default_rng(args.seed))
    record: dict = {"model": model, "train_curve": [], "val_curve": []}
    bar = Progress(args.steps, NAME, enabled=not args.quiet)
    losses: list[float] = []
    state = None
    for step in range(1, args.steps + 1):
        new_epoch, x, y = next(windows)
        logits, state = model(ag.tensor(x), None if new_epoch else state)
        state = tuple(s.detach() for s in state)  # truncated: no gradient into the previous window
        loss = F.cross_entropy(ag.reshape(logits, (-1, logits.shape[-1])), ag.tensor(y.reshape(-1)))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        opt.step()
        schedule.step()
        losses.append(loss.item())
        bar.update(loss=float(np.mean(losses[-100:])))
        if step % args.eval_every == 0 or step == args.steps:
            record["train_curve"].append((step, float(np.mean(losses))))
            losses = []
            model.eval()
            record["val_curve"].append((step, evaluate(model, corpus.val[: args.eval_chars], block=args.block)))
            model.train()
    bar.close()
    return record


def build_parser() -> argparse.ArgumentParser:
    """The command line of this example."""
    p = cli.parser(NAME, __doc__, QUICK)
    positive = cli.positive_int
    p.add_argument("--steps", type=positive, default=2000, help="AdamW steps, one window each.")
    p.add_argument("--batch-size", type=positive, default=32, help="Parallel streams of the training text.")
    p.add_argument("--block", type=positive, default=64, help="Characters per window of truncated backpropagation.")
    p.add_argument("--embed", type=positive, default=64, help="Width of the character embeddings.")
    p.add_argument("--hidden", type=positive, default=256, help="Width of the LSTM state.")
    p.add_argument("--layers", type=positive, default=2, help="Stacked LSTM layers.")
    p.add_argument("--dropout", type=cli.probability, default=0.0, help="Dropout probability between the LSTM layers.")
    p.add_argument("--lr", type=cli.positive_float, default=3e-3, help="AdamW peak learning rate.")
    p.add_argument("--weight-decay", type=cli.natural_float, default=0.01, help="AdamW (decoupled) weight decay.")
    p.add_argument("--clip", type=cli.positive_float, default=1.0, help="Largest gradient norm; larger is clipped.")
    p.add_argument("--eval-every", type=positive, default=250, help="Steps between validation checks.")
    p.add_argument(
        "--eval-chars",
        type=positive,
        default=20_000,
        help="Validation characters scored by the checks during training; the final score uses all.",
    )
    p.add_argument(
        "--eval-limit",
        type=positive,
        default=None,
        help="Score the final model on the first EVAL_LIMIT validation targets only. Without it, on all of them.",
    )
    add_sample_arguments(p)
    return p


def run(args: argparse.Namespace, argv: Sequence[str] | None = None) -> dict:
    """Run with the parsed `args` (`argv` is recorded as the command); returns what it wrote to the JSON."""
    start = time.perf_counter()
    corpus = load_corpus()
    outcome = train_lstm(corpus, args)
    train_time = time.perf_counter() - start
    model = outcome["model"].eval()
    val = corpus.val if args.eval_limit is None else corpus.val[: SCORED_FROM + args.eval_limit]
    val_nats = evaluate(model, val, block=args.block)
    prompt = corpus.decode(corpus.val[:SCORED_FROM])
    ag.manual_seed(args.seed)
    text = sample(model, corpus, prompt, args.sample_length, args.temperature)
    settings = {
        k: getattr(args, k)
        for k in ("steps", "batch_size", "block", "embed", "hidden", "layers", "dropout", "lr", "weight_decay", "clip")
    }
    results = {
        "backend": backends.current().name,
        **settings,
        "vocab": len(corpus.chars),
        "parameters": sum(p.numel() for p in model.parameters()),
        "train_chars": len(corpus.train),
        "val_chars": len(corpus.val),
        "val_positions": len(val) - SCORED_FROM,
        "val_nats": val_nats,
        "baselines": baselines(corpus, SCORED_FROM),
        "train_curve": outcome["train_curve"],
        "val_curve": outcome["val_curve"],
        "temperature": args.temperature,
        "sample_prompt": prompt,
        "sample": text,
        "train_time_s": round(train_time, 3),
        "seconds_per_step": round(train_time / max(args.steps, 1), 4),
    }
    out = records.output_path(args, NAME)
    plots.draw(plot, results, out)
    records.write_results(out, results, records.command_line(NAME, argv), time.perf_counter() - start)
    log_summary(results, out, args.quiet)
    return results


def main(argv: Sequence[str] | None = None) -> dict:
    """Run the LSTM character model from the command line `argv`; returns what it wrote to the JSON."""
    return cli.main(build_parser(), run, argv)


if __name__ == "__main__":
    main()
