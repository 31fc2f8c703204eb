"""The character GPT (examples/gpt.py, bench/gpt_model.py): one model definition for ours and
PyTorch with the same names and the same function, nanoGPT's schedule, a shortened training
run on every backend, the float64 PyTorch twin step for step, and the bench's gpt workload."""

from __future__ import annotations

import io
import math
import warnings

import numpy as np
import pytest
import torch

import autograd_core as ag
import nn
import nn.functional as F
import optim
from bench.gpt_model import GPTConfig, gpt
from example_support.threads import limited_threads
from examples import gpt as example
from helpers import assert_close

SMALL = GPTConfig(block_size=16, vocab_size=11, n_layer=2, n_head=2, n_embd=8)


@pytest.fixture(autouse=True)
def one_thread():
    with limited_threads(1):
        yield


def test_ours_and_pytorchs_gpt_compute_the_same_function(float64_backend):
    """The same weights (moved through state_dict, the tied output layer under both names, as
    PyTorch saves it) give the same logits and the same gradient of every parameter."""
    ag.manual_seed(0)
    ours = gpt(nn, SMALL).to(dtype="float64")
    theirs = gpt(torch.nn, SMALL).double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert "lm_head.weight" in ours.state_dict() and len(list(ours.parameters())) == len(list(theirs.parameters()))
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()})
    idx = np.random.default_rng(1).integers(0, SMALL.vocab_size, (3, 10))
    target = np.random.default_rng(2).integers(0, SMALL.vocab_size, 30)
    loss = F.cross_entropy(ours(ag.tensor(idx)), ag.tensor(target))
    loss.backward()
    their_loss = torch.nn.functional.cross_entropy(theirs(torch.from_numpy(idx)), torch.from_numpy(target))
    their_loss.backward()
    assert_close(loss.detach().numpy(), their_loss.detach().numpy())
    grads = {name: p.grad for name, p in theirs.named_parameters()}
    for name, p in ours.named_parameters():
        assert_close(p.grad.numpy(), grads[name].numpy())


def test_the_gpt_with_dropout_trains_compiled_as_op_by_op(backend):
    """Dropout in the embeddings, the attention weights and the residual branches: the example's
    step compiles where the backend does (no fallback), and its losses are the op-by-op step's,
    masks included."""
    config = GPTConfig(block_size=16, vocab_size=11, n_layer=2, n_head=2, n_embd=8, dropout=0.2)
    idx = ag.tensor(np.random.default_rng(1).integers(0, config.vocab_size, (3, 16)))
    target = ag.tensor(np.random.default_rng(2).integers(0, config.vocab_size, 48))

    def losses(compile_it: bool) -> list[float]:
        ag.manual_seed(0)
        model = gpt(nn, config)
        opt = optim.AdamW(model.parameters(), lr=1e-2)
        step, compiled = example.training_step(model, opt, max_norm=1.0)
        assert compiled == backend.can_compile
        run = step if compile_it else getattr(step, "__wrapped__", step)  # ag.compile keeps the step it wraps
        return [float(run(idx, target)) for _ in range(5)]

    with warnings.catch_warnings():
        warnings.simplefilter("error", ag.CompileFallbackWarning)
        compiled = losses(True)
    np.testing.assert_allclose(compiled, losses(False), rtol=1e-5)
    assert compiled[-1] < compiled[0]


def test_gpt_init_follows_nanogpt():
    ag.manual_seed(0)
    model = gpt(nn, GPTConfig())
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    assert sum(math.prod(p.shape) for p in model.parameters()) == 804_096  # nanoGPT prints 0.80M
    assert state["lm_head.weight"] is not None and model.lm_head.weight is model.wte.weight
    assert abs(state["wte.weight"].std() - 0.02) < 1e-3
    assert abs(state["h.0.mlp.c_proj.weight"].std() - 0.02 / math.sqrt(8)) < 1e-3
    assert np.all(state["h.3.ln_2.weight"] == 1.0) and "h.0.ln_1.bias" not in state


def test_schedule_is_nanogpts():
    f = example.cosine_with_warmup(1e-3, 1e-4, warmup=100, decay_iters=2000)
    assert f(0) * 1e-3 == pytest.approx(1e-3 / 101)
    assert f(99) * 1e-3 == pytest.approx(1e-3 * 100 / 101)
    assert f(100) * 1e-3 == pytest.approx(1e-3)
    assert f(1050) * 1e-3 == pytest.approx(5.5e-4)
    assert f(2000) * 1e-3 == pytest.approx(1e-4) and f(2500) * 1e-3 == pytest.approx(1e-4)


def test_gpt_example_learns_and_writes_its_record(backend, tmp_path):
    out = example.main(
        [
            "--quiet",
            "--iters",
            "80",
            "--warmup",
            "4",
            "--lr",
            "1e-2",
            "--lr-decay-iters",
            "80",
            "--n-layer",
            "1",
            "--n-embd",
            "32",
            "--block-size",
            "16",
            "--eval-every",
            "40",
            "--eval-blocks",
            "24",
            "--eval-limit",
            "48",
            "--sample-length",
            "20",
            "--torch-timing-steps",
            "2",
            "--out",
            str(tmp_path / "gpt.json"),
        ]
    )
    assert out["val_curve"][-1][1] < out["val_curve"][0][1] < math.log(65) + 0.2
    assert out["val_nats"] < 3.3  # under the unigram baseline
    assert len(out["sample"]) == 21 and len(out["step_losses"]) == 80
    assert out["compiled"] == backend.can_compile
    assert out["ms_per_iter"]["median"] > 0 and out["torch_eager_ms_per_iter"]["median"] > 0
    assert (tmp_path / "gpt.png").stat().st_size > 1000


def test_gpt_float64_twin_follows_pytorch(float64_backend, tmp_path):
    """Ours and the PyTorch copy from the same weights, batches and schedule: the losses of
    every step agree to 1e-9 (the committed 50-step run of the default model: results/)."""
    out = example.main(
        [
            "--quiet",
            "--dtype",
            "float64",
            "--iters",
            "8",
            "--n-layer",
            "2",
            "--n-embd",
            "32",
            "--eval-every",
            "8",
            "--eval-blocks",
            "12",
            "--eval-limit",
            "12",
            "--sample-length",
            "5",
            "--torch-twin",
            "--torch-timing-steps",
            "0",
            "--out",
            str(tmp_path / "twin.json"),
        ]
    )
    assert 0 <= out["twin_max_loss_diff"] < 1e-9 and 0 <= out["twin_max_weight_diff"] < 1e-9
    assert abs(out["twin_val_nats"] - out["val_nats"]) < 1e-9
    assert out["step_losses"][-1] < out["step_losses"][0]


def test_gpt_bench_workload_agrees_across_implementations():
    from bench import report
    from bench.impls import JaxJit, NumpyByHand, Ours, OursCompiled, TorchEager
    from bench.progress import Progress
    from bench.runner import Settings, run
    from bench.timing import Plan

    impls = [Ours("numpy"), TorchEager(), TorchEager(fused=True)]
    if JaxJit().unavailable() is None:
        impls += [OursCompiled("jax"), JaxJit()]
    plan = Plan(warmup=1, min_steps=2, min_time=0.0, max_steps=2)
    settings = Settings(workloads=("gpt",), gpt_batch=2, plan=plan, dropout=False)  # one set of masks: comparable
    result = run(settings, [*impls, NumpyByHand()], Progress(1, stream=io.StringIO(), live=False), limit_threads=False)
    assert not result.skipped and not result.warnings
    assert {r["impl"]: r["check_ok"] for r in result.records} == {impl.name: True for impl in impls}
    assert "== gpt: one training step of nanoGPT's CPU character GPT" in report.workload_report(result.records, "gpt")
