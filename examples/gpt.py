"""A character GPT on Tiny Shakespeare, nanoGPT's CPU recipe by default: block 64, batch 12,
4 layers, 4 heads, 128-wide embeddings, no dropout, no biases, tied input and output
embeddings, AdamW (lr 1e-3, betas 0.9/0.99, weight decay 0.1 on matrices only, gradient
clipping at 1), 100 warm-up steps, then a cosine decay to 1e-4 at step 2,000.

The score is the mean cross-entropy (nats per character) over every position of the whole
validation split (the last 10% of the text, as in examples/char.py) cut into consecutive
64-character blocks: nanoGPT's measure (all positions of random blocks) without its sampling
noise. With --torch-twin (float64) a PyTorch copy of the model starts from the same weights,
sees the same batches and the same schedule, and the largest loss and weight differences are
recorded. The wall time per iteration is compared with a PyTorch eager copy of the same model
timed on the same machine right after training (--torch-timing-steps; where torch is installed).

    AUTOGRAD_BACKEND=numpy python examples/gpt.py --threads 1
    AUTOGRAD_BACKEND=numpy python examples/gpt.py --dtype float64 --iters 50 --torch-twin
    python examples/gpt.py --quick    # 200 iterations of the same model on a shortened schedule

Each run writes its JSON record and PNG to runs/ under the current folder (see --out).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

import autograd_core as ag
import backends
import nn
import nn.functional as F
import optim
from bench.gpt_model import GPTConfig, gpt
from example_support import cli, optional, plots, records
from example_support.characters import Corpus, add_sample_arguments, load_corpus
from example_support.progress import Progress

NAME = "gpt"
QUICK = {
    "iters": 200,
    "warmup": 20,
    "lr_decay_iters": 200,
    "eval_every": 100,
    "eval_blocks": 120,
    "eval_limit": 480,
    "sample_length": 200,
    "torch_timing_steps": 10,
}
NANOGPT_VAL_LOSS = 1.88  # nanoGPT's README, the same configuration on a laptop CPU


def build(config: GPTConfig, dtype: str = "float32", seed: int = 0) -> nn.Module:
    """Our GPT of `config` in `dtype`, initialised from `seed`."""
    ag.manual_seed(seed)
    return gpt(nn, config).to(dtype=dtype)


def param_groups(model: Any, weight_decay: float) -> list[dict]:
    """nanoGPT's AdamW groups: weight decay on the matrices (embeddings and linear weights)
    only; for our model and the PyTorch copy alike."""
    params = list(model.parameters())
    return [
        {"params": [p for p in params if p.ndim >= 2], "weight_decay": weight_decay},
        {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0},
    ]


def cosine_with_warmup(lr: float, min_lr: float, warmup: int, decay_iters: int) -> Callable[[int], float]:
    """nanoGPT's get_lr(it) as a factor of `lr`: linear warm-up over `warmup` iterations,
    cosine decay to `min_lr` at `decay_iters`, then `min_lr`."""

    def factor(it: int) -> float:
        if it < warmup:
            return (it + 1) / (warmup + 1)
        if it > decay_iters:
            return min_lr / lr
        ratio = (it - warmup) / max(decay_iters - warmup, 1)
        return (min_lr + 0.5 * (1 + math.cos(math.pi * ratio)) * (lr - min_lr)) / lr

    return factor


def batch(data: np.ndarray, starts: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """Blocks ``data[s : s + block]`` and their next characters ``data[s + 1 : s + block + 1]``."""
    rows = starts[:, None] + np.arange(block)
    return data[rows], data[rows + 1]


def mean_nats(
    summed_loss: Callable[[np.ndarray, np.ndarray], float],
    data: np.ndarray,
    starts: np.ndarray,
    batch_size: int,
    block: int,
) -> float:
    """Mean nats per character over every position of the blocks at `starts`, from
    ``summed_loss(x, y)``, the summed cross-entropy of a batch (of our model or PyTorch's)."""
    total = sum(summed_loss(*batch(data, starts[i : i + batch_size], block)) for i in range(0, len(starts), batch_size))
    return total / (len(starts) * block)


def evaluate(model: nn.Module, data: np.ndarray, starts: np.ndarray, batch_size: int) -> float:
    """Our model's mean nats per character over every position of the blocks at `starts`."""
    model.eval()
    with ag.no_grad():
        nats = mean_nats(
            lambda x, y: F.cross_entropy(model(ag.tensor(x)), ag.tensor(y.reshape(-1)), reduction="sum").item(),
            data,
            starts,
            batch_size,
            model.config.block_size,
        )
    model.train()
    return nats


def sample(model: nn.Module, corpus: Corpus, prompt: str, length: int, temperature: float = 0.8) -> str:
    """`length` characters drawn after `prompt` from softmax(logits / temperature) over the
    last `block_size` characters, with the seeded host generator. A shorter context is padded
    on the right to a whole block (the model is causal, so the padding after the last character
    changes nothing before it): one input shape, so a compiling backend compiles once."""
    rng, block = backends.host_rng(), model.config.block_size
    codes = list(corpus.encode(prompt))
    model.eval()
    with ag.no_grad():
        for _ in range(length):
            context = codes[-block:]
            padded = np.zeros((1, block), dtype=np.int64)
            padded[0, : len(context)] = context
            logits = model(ag.tensor(padded))[len(context) - 1]
            probs = F.softmax(logits / temperature, dim=-1).numpy().astype(np.float64)
            codes.append(int(rng.choice(len(probs), p=probs / probs.sum())))
    model.train()
    return corpus.decode(codes)


# --- training ---------------------------------------------------------------------------------
def training_step(model: nn.Module, opt: optim.Optimizer, max_norm: float) -> tuple[Callable[..., ag.Tensor], bool]:
    """``step(x, y) -> loss`` (forward, backward, clipping, AdamW) and whether it is compiled
    (on a backend that compiles; dropout draws its masks inside the compiled step)."""

    def step(x: ag.Tensor, y: ag.Tensor) -> ag.Tensor:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        opt.step()
        return loss

    if not backends.current().can_compile:
        return step, False
    return ag.compile(step, modules=[model], optimizers=[opt]), True


def train_gpt(
    corpus: Corpus,
    config: GPTConfig,
    *,
    iters: int = 2000,
    batch_size: int = 12,
    lr: float = 1e-3,
    min_lr: float = 1e-4,
    warmup: int = 100,
    decay_iters: int = 2000,
    weight_decay: float = 0.1,
    betas: tuple[float, float] = (0.9, 0.99),
    max_norm: float = 1.0,
    dtype: str = "float32",
    seed: int = 0,
    eval_every: int = 250,
    eval_starts: np.ndarray | None = None,
    torch_twin: bool = False,
    quiet: bool = True,
) -> dict:
    """Train the GPT; returns the model, the per-step losses and times, the curves and (with
    `torch_twin`) the twin's largest loss and weight differences."""
    model = build(config, dtype, seed)
    opt = optim.AdamW(param_groups(model, weight_decay), lr=lr, betas=betas)
    factor = cosine_with_warmup(lr, min_lr, warmup, decay_iters)
    schedule = optim.lr_scheduler.LambdaLR(opt, factor)
    twin = TorchGPTTwin(model, dtype, lr, weight_decay, betas, max_norm, factor) if torch_twin else None
    step, compiled = training_step(model, opt, max_norm)
    rng = np.random.default_rng(seed)
    record: dict = {
        "model": model,
        "compiled": compiled,
        "step_losses": [],
        "step_times": [],
        "train_curve": [],
        "val_curve": [],
        "twin_loss_diffs": [],
        "twin_max_weight_diff": None,
    }
    bar = Progress(iters, NAME, enabled=not quiet)
    for it in range(1, iters + 1):
        x, y = batch(
            corpus.train, rng.integers(0, len(corpus.train) - config.block_size, batch_size), config.block_size
        )
        start = time.perf_counter()
        loss = step(ag.tensor(x), ag.tensor(y.reshape(-1))).item()
        record["step_times"].append(time.perf_counter() - start)
        schedule.step()
        record["step_losses"].append(loss)
        if twin is not None:
            record["twin_loss_diffs"].append(abs(twin.step(x, y) - loss))
        bar.update(loss=float(np.mean(record["step_losses"][-50:])))
        if it % eval_every == 0 or it == iters:
            record["train_curve"].append((it, float(np.mean(record["step_losses"][-eval_every:]))))
            if eval_starts is not None:
                record["val_curve"].append((it, evaluate(model, corpus.val, eval_starts, batch_size)))
    bar.close()
    if twin is not None:
        record["twin_max_weight_diff"] = twin.max_weight_diff(model)
    record["twin"] = twin
    return record


# --- the PyTorch copy: the twin and the timing baseline -----------------------------------------
def torch_gpt(config: GPTConfig, dtype: str) -> Any:
    """The same GPT in torch.nn, in `dtype`."""
    import torch

    return gpt(torch.nn, config).to({"float32": torch.float32, "float64": torch.float64}[dtype])


class TorchGPTTwin:
    """The PyTorch copy from our model's weights, trained with torch's AdamW (single-tensor
    path), the same groups, clipping and schedule, step for step on the same batches."""

    def __init__(
        self,
        model: nn.Module,
        dtype: str,
        lr: float,
        weight_decay: float,
        betas: tuple[float, float],
        max_norm: float,
        factor: Callable[[int], float],
    ) -> None:
        import torch

        self.torch, self.max_norm = torch, max_norm
        self.net = torch_gpt(model.config, dtype)
        self.net.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in model.state_dict().items()})
        self.opt = torch.optim.AdamW(param_groups(self.net, weight_decay), lr=lr, betas=betas, foreach=False)
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, factor)

    def step(self, x: np.ndarray, y: np.ndarray) -> float:
        loss = self.torch.nn.functional.cross_entropy(
            self.net(self.torch.from_numpy(x)), self.torch.from_numpy(y.reshape(-1))
        )
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.max_norm)
        self.opt.step()
        self.sched.step()
        return loss.item()

    def evaluate(self, data: np.ndarray, starts: np.ndarray, batch_size: int) -> float:
        """The twin's mean nats per character, measured as ours is (`evaluate`)."""
        torch = self.torch
        with torch.no_grad():
            return mean_nats(
                lambda x, y: torch.nn.functional.cross_entropy(
                    self.net(torch.from_numpy(x)), torch.from_numpy(y.reshape(-1)), reduction="sum"
                ).item(),
                data,
                starts,
                batch_size,
                self.net.config.block_size,
            )

    def max_weight_diff(self, model: nn.Module) -> float:
        theirs = {k: v.detach().numpy() for k, v in self.net.state_dict().items()}
        return max(float(np.max(np.abs(v.numpy() - theirs[k]))) for k, v in model.state_dict().items())


def torch_eager_step_times(
    config: GPTConfig,
    corpus: Corpus,
    steps: int,
    batch_size: int,
    lr: float,
    weight_decay: float,
    betas: tuple[float, float],
    max_norm: float,
    seed: int,
) -> list[float]:
    """Seconds per training step of the PyTorch copy in float32 (eager, AdamW's default
    implementation), on batches drawn as ours are: the baseline of the wall-time comparison."""
    import torch

    torch.manual_seed(seed)
    net = torch_gpt(config, "float32")
    opt = torch.optim.AdamW(param_groups(net, weight_decay), lr=lr, betas=betas)
    rng, times = np.random.default_rng(seed), []
    for _ in range(steps):
        x, y = batch(
            corpus.train, rng.integers(0, len(corpus.train) - config.block_size, batch_size), config.block_size
        )
        start = time.perf_counter()
        loss = torch.nn.functional.cross_entropy(net(torch.from_numpy(x)), torch.from_numpy(y.reshape(-1)))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm)
        opt.step()
        loss.item()
        times.append(time.perf_counter() - start)
    return times


# --- the command line ---------------------------------------------------------------------------
def plot(results: dict, json_path: Path) -> Path:
    """Training and validation nats per character against nanoGPT's published 1.88."""
    fig, (ax,) = plots.figure(1, width=9)
    for key, label in (("train_curve", "training batches (mean since last point)"), ("val_curve", "validation subset")):
        if results[key]:
            steps, nats = zip(*results[key])
            ax.plot(steps, nats, "o-", ms=3, label=label)
    ax.axhline(results["val_nats"], color="k", lw=1, label=f"final validation {results['val_nats']:.3f}")
    ax.axhline(NANOGPT_VAL_LOSS, color="gray", ls="--", lw=1, label=f"nanoGPT's CPU result {NANOGPT_VAL_LOSS}")
    ax.set(
        title=f"character GPT ({results['backend']}, {results['dtype']})",
        xlabel="iteration",
        ylabel="nats per character",
        ylim=(1.0, 4.5),
    )
    return plots.save_curve_figure(fig, ax, json_path)


def build_parser() -> argparse.ArgumentParser:
    """The command line of this example (defaults: nanoGPT's CPU recipe)."""
    p = cli.parser(NAME, __doc__, QUICK)
    d = GPTConfig()
    positive, natural, rate = cli.positive_int, cli.natural_int, cli.positive_float
    p.add_argument("--iters", type=positive, default=2000, help="Training iterations (AdamW steps).")
    p.add_argument("--batch-size", type=positive, default=12, help="Blocks per iteration.")
    p.add_argument("--block-size", type=positive, default=d.block_size, help="Characters per block (the context).")
    p.add_argument("--n-layer", type=positive, default=d.n_layer, help="Transformer blocks.")
    p.add_argument("--n-head", type=positive, default=d.n_head, help="Attention heads; they must divide --n-embd.")
    p.add_argument("--n-embd", type=positive, default=d.n_embd, help="Width of the embeddings.")
    p.add_argument(
        "--dropout",
        type=cli.probability,
        default=d.dropout,
        help="Dropout probability (its masks are drawn inside the compiled step, on a backend that compiles).",
    )
    p.add_argument("--bias", action="store_true", help="Give the linear and LayerNorm layers biases.")
    p.add_argument("--lr", type=rate, default=1e-3, help="AdamW peak learning rate.")
    p.add_argument(
        "--min-lr", type=cli.natural_float, default=1e-4, help="Learning rate at the end of the cosine decay."
    )
    p.add_argument("--warmup", type=natural, default=100, help="Iterations of linear warm-up.")
    p.add_argument("--lr-decay-iters", type=positive, default=2000, help="Iteration where the cosine decay ends.")
    p.add_argument(
        "--weight-decay", type=cli.natural_float, default=0.1, help="AdamW (decoupled) weight decay of the matrices."
    )
    p.add_argument(
        "--dtype", choices=("float32", "float64"), default="float32", help="Floating-point type of the weights."
    )
    p.add_argument("--eval-every", type=positive, default=250, help="Iterations between validation checks.")
    p.add_argument(
        "--eval-blocks",
        type=positive,
        default=240,
        help="Validation blocks scored by the checks during training; the final score uses all.",
    )
    p.add_argument(
        "--eval-limit",
        type=positive,
        default=None,
        help="Score the final model on the first EVAL_LIMIT validation blocks only. Without it, on all of them.",
    )
    add_sample_arguments(p)
    p.add_argument(
        "--torch-twin",
        action="store_true",
        help="Train a PyTorch copy from the same weights on the same batches, and record the largest "
        "loss and weight differences.",
    )
    p.add_argument(
        "--torch-timing-steps",
        type=natural,
        default=50,
        help="Steps of a float32 PyTorch eager copy timed after training (0, or torch not installed: no timing).",
    )
    return p


def run(args: argparse.Namespace, argv: Sequence[str] | None = None) -> dict:
    """Run with the parsed `args` (`argv` is recorded as the command); returns what it wrote to the JSON."""
    if args.n_embd % args.n_head:
        raise cli.UsageError(f"--n-embd {args.n_embd} is not a multiple of --n-head {args.n_head}")
    if args.torch_twin:
        optional.require("torch", "--torch-twin")
    timed = args.torch_timing_steps > 0 and not optional.missing("torch", "no PyTorch eager timing")
    start = time.perf_counter()
    corpus = load_corpus()
    config = GPTConfig(
        args.block_size, len(corpus.chars), args.n_layer, args.n_head, args.n_embd, args.dropout, args.bias
    )
    all_starts = np.arange(0, len(corpus.val) - config.block_size, config.block_size)
    subset = np.sort(np.random.default_rng(12345).permutation(all_starts)[: args.eval_blocks])
    betas, max_norm = (0.9, 0.99), 1.0
    outcome = train_gpt(
        corpus,
        config,
        iters=args.iters,
        batch_size=args.batch_size,
        lr=args.lr,
        min_lr=args.min_lr,
        warmup=args.warmup,
        decay_iters=args.lr_decay_iters,
        weight_decay=args.weight_decay,
        betas=betas,
        max_norm=max_norm,
        dtype=args.dtype,
        seed=args.seed,
        eval_every=args.eval_every,
        eval_starts=subset,
        torch_twin=args.torch_twin,
        quiet=args.quiet,
    )
    train_time = time.perf_counter() - start
    model = outcome["model"]
    final_starts = all_starts[: args.eval_limit]
    val_nats = evaluate(model, corpus.val, final_starts, args.batch_size)
    ag.manual_seed(args.seed)
    text = sample(model, corpus, "\n", args.sample_length, args.temperature)
    times = np.array(outcome["step_times"][1:] or outcome["step_times"])  # the first step includes compiling
    results = {
        "backend": backends.current().name,
        "dtype": args.dtype,
        "config": asdict(config),
        "iters": args.iters,
        "batch_size": args.batch_size,
        "lr": args.lr,
        "min_lr": args.min_lr,
        "warmup": args.warmup,
        "lr_decay_iters": args.lr_decay_iters,
        "weight_decay": args.weight_decay,
        "betas": list(betas),
        "max_norm": max_norm,
        "compiled": outcome["compiled"],
        "parameters": sum(math.prod(p.shape) for p in model.parameters()),
        "val_blocks": len(final_starts),
        "val_positions": len(final_starts) * config.block_size,
        "val_nats": val_nats,
        "nanogpt_val_loss": NANOGPT_VAL_LOSS,
        "train_curve": outcome["train_curve"],
        "val_curve": outcome["val_curve"],
        "step_losses": outcome["step_losses"],
        "ms_per_iter": {"min": 1e3 * float(times.min()), "median": 1e3 * float(np.median(times))},
        "temperature": args.temperature,
        "sample": text,
        "train_time_s": round(train_time, 3),
    }
    if args.torch_twin:
        results["twin_max_loss_diff"] = max(outcome["twin_loss_diffs"])
        results["twin_max_weight_diff"] = outcome["twin_max_weight_diff"]
        results["twin_val_nats"] = outcome["twin"].evaluate(corpus.val, final_starts, args.batch_size)
    if timed:
        theirs = np.array(
            torch_eager_step_times(
                config,
                corpus,
                args.torch_timing_steps + 1,
                args.batch_size,
                args.lr,
                args.weight_decay,
                betas,
                max_norm,
                args.seed,
            )[1:]
        )
        results["torch_eager_ms_per_iter"] = {
            "min": 1e3 * float(theirs.min()),
            "median": 1e3 * float(np.median(theirs)),
        }
        results["ratio_to_torch_eager_median"] = float(np.median(times) / np.median(theirs))
    out = records.output_path(args, NAME if args.dtype == "float32" else f"{NAME}-{args.dtype}")
    plots.draw(plot, results, out)
    records.write_results(out, results, records.command_line(NAME, argv), time.perf_counter() - start)
    line = f"validation {val_nats:.4f} nats/char (nanoGPT {NANOGPT_VAL_LOSS})"
    if args.torch_twin:
        line += (
            f"; twin: max |loss - loss_torch| {results['twin_max_loss_diff']:.2e}, max |w - w_torch| "
            f"{results['twin_max_weight_diff']:.2e}, validation {results['twin_val_nats']:.4f}"
        )
    if timed:
        line += (
            f"; {results['ms_per_iter']['median']:.1f} ms/iter, PyTorch eager "
            f"{results['torch_eager_ms_per_iter']['median']:.1f} ms/iter"
        )
    records.log(f"{line}; wrote {out}\n--- sample (T={args.temperature}) ---\n{text}", args.quiet)
    return results


def main(argv: Sequence[str] | None = None) -> dict:
    """Run the character GPT from the command line `argv`; returns what it wrote to the JSON."""
    return cli.main(build_parser(), run, argv)


if __name__ == "__main__":
    main()
