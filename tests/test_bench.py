"""`python -m bench` keeps working: a tiny run end to end, and the loss cross-check catches
a wrong implementation. (Not parametrized over backends: the bench picks its own.)"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench import report
from bench.check import cross_check
from bench.impls import Impl, JaxJit, NumpyByHand, Ours, OursCompiled, TorchEager
from bench.impls.base import Runner
from bench.impls.by_hand import _MLP
from bench.progress import Progress
from bench.runner import Settings, run
from bench.timing import Plan, time_lockstep

ROOT = Path(__file__).resolve().parent.parent
TINY = Plan(warmup=1, min_steps=3, min_time=0.0, max_steps=3)


def quiet() -> Progress:
    return Progress(1, stream=io.StringIO(), live=False)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    """The CLI on one batch, three steps: ours on numpy against the hand-written numpy and torch."""
    out = tmp_path_factory.mktemp("bench") / "tiny.json"
    command = [
        sys.executable,
        "-m",
        "bench",
        "--backends",
        "numpy",
        "--baselines",
        "numpy-by-hand,torch",
        "--workloads",
        "mlp,ops,phase",
        "--batches",
        "8",
        "--warmup",
        "1",
        "--steps",
        "3",
        "--min-time",
        "0",
        "--max-steps",
        "3",
        "--json",
        str(out),
        "--no-progress",
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out, done


def test_cli_writes_json_csv_png_and_prints_verdicts(tiny_run):
    out, done = tiny_run
    result = json.loads(out.read_text())
    machine = result["machine"]
    for key in ("versions", "blas", "cpu", "load_start", "load_end", "threads"):
        assert key in machine
    assert machine["threads"]["threads"] == 1
    records = result["records"]
    impls = {r["impl"] for r in records}
    assert {"ours:numpy", "numpy-by-hand"} <= impls
    for r in records:
        assert r["workload"] in ("mlp", "ops", "phase")
        assert r["n"] == 3 and 0 < r["min_ms"] <= r["median_ms"]
        assert r["check_ok"] is True, r
    assert {r["phase"] for r in records if r["workload"] == "phase"} == {"forward", "backward", "optimizer"}
    ops = [r for r in records if r["workload"] == "ops"]
    assert ops and all(r["unit"] == "ms/op" and r["ops_per_step"] == 2000 for r in ops)
    with out.with_suffix(".csv").open() as f:
        assert len(list(csv.DictReader(f))) == len(records)
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"
    assert "== verdicts" in done.stdout and "mlp:" in done.stdout


def test_compare_two_runs(tiny_run):
    out, _ = tiny_run
    result = report.load(out)
    slower = {**result, "records": [{**r, "min_ms": 2 * r["min_ms"]} for r in result["records"]]}
    text = report.compare(result, slower)
    assert "2.00" in text and "ours:numpy" in text


def test_numpy_top_pad_is_the_run_s_and_compare_names_it(tiny_run, tmp_path):
    """``--numpy-top-pad`` runs the numpy backend with that heap padding (AUTOGRAD_NUMPY_TOP_PAD,
    the whole process's allocator): the run records it, and comparing it with a run without
    says so."""
    out = tmp_path / "padded.json"
    command = [sys.executable, "-m", "bench", "--backends", "numpy", "--baselines", "none", "--workloads", "mlp"]
    command += ["--batches", "8", "--warmup", "0", "--steps", "1", "--min-time", "0", "--max-steps", "1"]
    command += ["--numpy-top-pad", "64", "--json", str(out), "--no-progress", "--no-plot"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    plain, padded = report.load(tiny_run[0]), report.load(out)
    assert (plain["machine"]["numpy_top_pad_mib"], padded["machine"]["numpy_top_pad_mib"]) == (None, "64")
    text = report.compare(plain, padded)
    assert "differs: numpy_top_pad_mib: None vs '64'" in text and "ours:numpy" in text


class _ForgetsReluMask(_MLP):
    """A plausible bug: the backward pass lets gradients through dead ReLUs."""

    def backward(self) -> None:
        g = self.dlogits
        for i in range(len(self.params) - 2, -1, -2):
            self.linear_backward(g, self.inputs[i // 2], i)
            if i:
                g = g @ self.params[i]


class WrongByHand(NumpyByHand):
    name = "wrong-by-hand"
    workloads = frozenset({"mlp"})

    def setup(self, problem):
        return _ForgetsReluMask(problem)


def test_cross_check_marks_a_wrong_implementation():
    settings = Settings(workloads=("mlp",), batches=(16,), plan=TINY)
    result = run(settings, [Ours("numpy"), NumpyByHand(), WrongByHand()], quiet(), limit_threads=False)
    verdict = {r["impl"]: r["check_ok"] for r in result.records}
    assert verdict == {"ours:numpy": True, "numpy-by-hand": True, "wrong-by-hand": False}
    assert len(result.warnings) == 1 and "wrong-by-hand" in result.warnings[0]
    # and a marked implementation cannot win
    assert not any(line.startswith("mlp: wrong-by-hand") for line in report.verdicts(result.records))


def test_cross_check_consensus():
    verdicts = cross_check({"a": 1.0, "b": 1.0000001, "c": 1.5})
    assert [v.ok for v in verdicts.values()] == [True, True, False]
    two = cross_check({"a": 1.0, "b": 2.0})
    assert not two["a"].ok and not two["b"].ok
    assert cross_check({"alone": 1.0})["alone"].ok is None
    assert cross_check({"a": 1.0, "b": 1.0, "nan": float("nan")})["nan"].ok is False


class _Missing(Impl):
    name = "needs-a-missing-library"
    requires = ("a_library_that_is_not_installed_anywhere",)


class _Counter(Runner):
    def __init__(self, fail_at: int | None = None) -> None:
        self.steps, self.fail_at = 0, fail_at

    def step(self) -> None:
        self.steps += 1
        if self.steps == self.fail_at:
            raise FloatingPointError("boom")

    def check_value(self) -> float:
        return float(self.steps)


def test_missing_library_is_skipped_with_its_reason():
    result = run(Settings(workloads=("ops",), plan=TINY), [_Missing(), NumpyByHand()], quiet(), limit_threads=False)
    [skip] = result.skipped
    assert skip["impl"] == "needs-a-missing-library" and "cannot be imported" in skip["reason"]
    assert {r["impl"] for r in result.records} == {"numpy-by-hand"}


def test_lockstep_gives_every_runner_the_same_steps_and_drops_a_failing_one():
    runners = {"a": _Counter(), "b": _Counter(), "bad": _Counter(fail_at=3)}
    plan = Plan(warmup=2, min_steps=5, min_time=0.0, max_steps=5, check_after=3)
    outcome = time_lockstep(runners, ("step",), plan)
    assert outcome.rounds == 5 and set(outcome.timings) == {"a", "b"}
    assert "FloatingPointError" in outcome.failures["bad"]
    assert all(len(t.phases["step"]) == 5 for t in outcome.timings.values())
    # checked after warm-up + 3 timed steps; the final value after one more step past the timed ones
    assert outcome.check_round == 3 and outcome.check_values == {"a": 5.0, "b": 5.0}
    assert outcome.final_values == {"a": 8.0, "b": 8.0}
    assert set(outcome.warmup_s) == {"a", "b", "bad"} and all(s >= 0 for s in outcome.warmup_s.values())


def test_a_runner_that_compiles_gets_its_warm_up_steps_whatever_the_plan_says():
    """Asked for no warm-up, the timer still warms every runner up for as many steps as the one
    that needs the most (`Runner.warmup_steps`), in lockstep: the timed steps and values agree."""
    compiling = _Counter()
    compiling.warmup_steps = 3
    outcome = time_lockstep({"a": _Counter(), "compiling": compiling}, ("step",), Plan(0, 2, 0.0, 2, check_after=2))
    assert outcome.check_values == {"a": 5.0, "compiling": 5.0}
    assert all(len(t.phases["step"]) == 2 for t in outcome.timings.values())


def test_hand_written_gradients_match_ours():
    """The numpy floor computes the same first step as the engine on the character model."""
    settings = Settings(workloads=("char",), char_batch=8, plan=Plan(warmup=0, min_steps=1, min_time=0.0, max_steps=1))
    result = run(settings, [Ours("numpy"), NumpyByHand()], quiet(), limit_threads=False)
    values = [r["check_value"] for r in result.records]
    assert len(values) == 2 and np.isclose(values[0], values[1], rtol=1e-5)


def test_cnn_workload_agrees_across_implementations():
    """One CNN training step per implementation without dropout (batch 8, three timed steps): ours
    on numpy (and compiled on jax), PyTorch eager and fused, jax.jit; all agree on the loss. The
    hand-written numpy has no CNN."""
    pytest.importorskip("torch")
    impls: list[Impl] = [Ours("numpy"), TorchEager(), TorchEager(fused=True)]
    if JaxJit().unavailable() is None:
        impls += [OursCompiled("jax"), JaxJit()]
    assert "cnn" not in NumpyByHand().workloads
    settings = Settings(workloads=("cnn",), cnn_batch=8, plan=TINY, dropout=False)
    result = run(settings, [*impls, NumpyByHand()], quiet(), limit_threads=False)
    assert not result.skipped and not result.warnings
    assert {r["impl"]: r["check_ok"] for r in result.records} == {impl.name: True for impl in impls}
    assert all(r["workload"] == "cnn" and r["batch"] == 8 and r["n"] == 3 for r in result.records)
    assert "== cnn: one training step of the MNIST CNN" in report.workload_report(result.records, "cnn")


def test_cnn_problem_matches_the_example_network():
    """The bench's CNN is the example's, with its dropout: the same parameter and buffer names and
    shapes (with or without dropout), and labels that a linear teacher of the pixels gives."""
    import nn
    from bench.problems import CNN_DROPOUT, make_problem, mnist_cnn

    problem = make_problem("cnn", 4)
    assert problem.dropout == CNN_DROPOUT and make_problem("cnn", 4, dropout=False).dropout == 0
    example = mnist_cnn(nn).state_dict()
    assert {k: v.shape for k, v in problem.weights.items()} == {k: tuple(v.shape) for k, v in example.items()}
    assert problem.weights["1.num_batches_tracked"].dtype == np.int64
    x, y = problem.batches[0]
    assert x.shape == (4, 1, 28, 28) and x.dtype == np.float32 and y.dtype == np.int64 and len(problem.batches) > 4


UNPIN_CHECK = """
import os, threading
from bench.impls.ours import unpin_every_thread
every_core = set(range(os.cpu_count()))
os.sched_setaffinity(0, {max(every_core)})
started, stop = threading.Event(), threading.Event()
thread = threading.Thread(target=lambda: (started.set(), stop.wait()))
thread.start()
started.wait()
assert os.sched_getaffinity(thread.native_id) == {max(every_core)}  # it inherited the pin
unpin_every_thread()
print(sorted(os.sched_getaffinity(0)), sorted(os.sched_getaffinity(thread.native_id)))
stop.set()
"""


@pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or (os.cpu_count() or 1) < 2, reason="needs sched_setaffinity and 2 cores"
)
def test_a_cluster_s_processes_are_unpinned_in_every_thread():
    """A pinned bench starts its dask workers pinned; unpinning only the calling thread would
    leave the threads they had already started (checked in a child, to leave this one's pin)."""
    done = subprocess.run([sys.executable, "-c", UNPIN_CHECK], capture_output=True, text=True, check=True)
    every_core = sorted(range(os.cpu_count()))
    assert done.stdout.split("\n")[0] == f"{every_core} {every_core}"


PEERS = {"hips-autograd": ("autograd", ("mlp", "char", "ops")), "mygrad": ("mygrad", ("mlp", "char", "ops", "phase"))}


def _peer_points() -> list[tuple[str, str]]:
    return [(name, workload) for name, (_, workloads) in PEERS.items() for workload in workloads]


@pytest.mark.parametrize(("name", "workload"), _peer_points())
def test_peer_engines_agree_with_the_hand_written_gradients(name, workload):
    """HIPS autograd and mygrad (the `peers` extra) compute numpy-by-hand's gradients on the
    first step and its losses on the next ones (the op chain: the gradient of its weight)."""
    from bench.impls import baseline
    from bench.problems import make_problem

    pytest.importorskip(PEERS[name][0])
    peer = baseline(name)
    assert peer.unavailable() is None and peer.workloads == frozenset(PEERS[name][1])
    problem = make_problem(workload, 8)
    mine, reference = peer.setup(problem), NumpyByHand().setup(problem)
    for k in range(3):
        for runner in (mine, reference):
            runner.select(k)
            runner.step()
        assert np.isclose(mine.check_value(), reference.check_value(), rtol=1e-5, atol=0)
        if k == 0 and workload != "ops":
            for g, expected in zip(mine.grads, reference.grads, strict=True):
                assert g.dtype == np.float32 and g.shape == expected.shape
                np.testing.assert_allclose(g, expected, rtol=1e-4, atol=1e-6)
    if workload == "ops":
        assert np.isclose(mine.check_value(), 2000 * 1.0001**1999, rtol=1e-4)


@pytest.mark.parametrize("name", list(PEERS))
def test_a_peer_without_its_library_is_skipped_with_the_install_hint(name, monkeypatch):
    from bench.__main__ import parse_args
    from bench.impls import BASELINES, baseline

    assert name in BASELINES and name in parse_args(["--baselines", name]).baselines
    monkeypatch.setitem(sys.modules, PEERS[name][0], None)  # `import` of it now fails
    reason = baseline(name).unavailable()
    assert reason is not None and f"{PEERS[name][0]} cannot be imported" in reason
    assert 'pip install -e ".[peers]"' in reason
    result = run(Settings(workloads=("ops",), plan=TINY), [baseline(name), NumpyByHand()], quiet(), limit_threads=False)
    assert [s["impl"] for s in result.skipped] == [name] and "[peers]" in result.skipped[0]["reason"]


# --- transforms -------------------------------------------------------------------------------
# Not ours:jax op by op, whose first step compiles every op for every shape (half a minute): it
# runs ours:numpy's code on jax, which ours:jax+compile traces; the bench cross-checks it every run.
TRANSFORMS_IMPLS = {
    "ours:numpy": lambda: Ours("numpy"),
    "ours:torch": lambda: Ours("torch"),
    "ours:jax+compile": lambda: OursCompiled("jax"),
    "jax-jit": JaxJit,
}


def _first_transforms(impl: Impl) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The per-sample gradients and the HVP of `impl` on the first batch of transforms at batch 4."""
    from bench.problems import make_problem

    reason = impl.unavailable()
    if reason:
        pytest.skip(reason)
    runner = impl.setup(make_problem("transforms", 4))
    runner.select(0)
    runner.step()
    runner.sync()
    return runner.results()


@pytest.fixture(scope="module")
def torch_func_transforms() -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    return _first_transforms(TorchEager())


@pytest.mark.parametrize("name", list(TRANSFORMS_IMPLS))
def test_transforms_agree_with_torch_func(name, torch_func_transforms):
    """Each implementation's per-sample gradients and HVP are torch.func's, entry by entry, to
    float32 rounding: the same parameter names, shapes (examples first) and values."""
    per_sample, hvp = torch_func_transforms
    assert per_sample["0.weight"].shape == (4, 512, 784) and hvp["0.weight"].shape == (512, 784)
    mine, my_hvp = _first_transforms(TRANSFORMS_IMPLS[name]())
    for expected, got in ((per_sample, mine), (hvp, my_hvp)):
        assert list(got) == list(expected)
        for k, want in expected.items():
            scale = float(np.abs(want).max())
            np.testing.assert_allclose(got[k], want, rtol=1e-4, atol=1e-5 * scale, err_msg=f"{name} {k}")


class _WrongHvp(TorchEager):
    """torch.func's transforms with a plausible slip: the HVP 1% too large."""

    def __init__(self) -> None:
        super().__init__()
        self.name = "wrong-hvp"

    def setup(self, problem):
        runner = super().setup(problem)
        exact = runner.hvp_of
        runner.hvp_of = lambda *args: {k: 1.01 * v for k, v in exact(*args).items()}
        return runner


def test_transforms_workload_checks_each_transform_apart():
    """Through the runner at batch 4: a record per transform, each implementation checked per
    transform (the wrong HVP is marked there only), ratios to torch.func; opt-in on the CLI."""
    from bench.__main__ import DEFAULT_WORKLOADS, WORKLOAD_NAMES, parse_args
    from bench.problems import OPT_IN_WORKLOADS, WORKLOADS

    pytest.importorskip("torch")
    assert WORKLOAD_NAMES == WORKLOADS and "transforms" in OPT_IN_WORKLOADS
    assert "transforms" not in DEFAULT_WORKLOADS and parse_args(["--workloads", "transforms"]).workloads
    settings = Settings(workloads=("transforms",), transforms_batch=4, plan=TINY)
    result = run(settings, [Ours("numpy"), TorchEager(), _WrongHvp()], quiet(), limit_threads=False)
    assert not result.skipped
    verdict = {(r["impl"], r["phase"]): r["check_ok"] for r in result.records}
    assert verdict == {
        **{(impl, phase): True for impl in ("ours:numpy", "torch") for phase in ("per_sample", "hvp")},
        ("wrong-hvp", "per_sample"): True,
        ("wrong-hvp", "hvp"): False,
    }
    assert len(result.warnings) == 1 and "wrong-hvp (hvp)" in result.warnings[0]
    text = report.workload_report(result.records, "transforms")
    assert "time relative to torch" in text and "per_sample" in text


# --- dropout: each library draws its own masks --------------------------------------------------
def test_cross_check_compares_only_implementations_that_draw_the_same_masks():
    from bench.check import cross_check_within

    groups = {"a": "torch", "b": "torch", "c": "torch", "d": "jax", "e": "autograd_core", "f": "autograd_core"}
    values = {"a": 1.0, "b": 1.0, "c": 1.5, "d": 7.0, "e": 3.0, "f": 3.0000001}
    verdicts = cross_check_within(values, groups)
    assert {k: v.ok for k, v in verdicts.items()} == {"a": True, "b": True, "c": False, "d": None, "e": True, "f": True}
    assert verdicts["d"].note == "alone in drawing jax dropout masks: nothing to compare with"
    assert verdicts["c"].reference == 1.0 and not verdicts["a"].note and list(verdicts) == list(values)


def test_dropout_workload_checks_each_generator_s_group_apart():
    """The CNN with its dropout (batch 8): ours on numpy and on torch draw the same masks (from
    autograd-core's generator, reseeded per step while they run interleaved) and agree; torch and
    torch-fused draw torch's and agree; jax-jit, alone with jax's masks, is checked against none
    and the report says why. Across the groups the losses differ: the masks are drawn."""
    pytest.importorskip("torch")
    impls: list[Impl] = [Ours("numpy"), Ours("torch"), TorchEager(), TorchEager(fused=True)]
    impls += [JaxJit()] if JaxJit().unavailable() is None else []
    settings = Settings(workloads=("cnn",), cnn_batch=8, plan=TINY)
    result = run(settings, impls, quiet(), limit_threads=False)
    assert not result.skipped and not result.warnings
    verdict = {r["impl"]: r["check_ok"] for r in result.records}
    assert verdict == {"ours:numpy": True, "ours:torch": True, "torch": True, "torch-fused": True} | (
        {"jax-jit": None} if len(impls) == 5 else {}
    )
    value = {r["impl"]: r["check_value"] for r in result.records}
    assert not np.isclose(value["ours:numpy"], value["torch"], rtol=1e-3)
    summary = report.check_summary(result.records)
    assert ("jax-jit at cnn b=8 (alone in drawing jax dropout masks" in summary) == (len(impls) == 5)


@pytest.mark.parametrize("model", ["cnn", "gpt"])
def test_jax_jit_drops_where_ours_does(model):
    """jax-jit's model given the masks ours draws (autograd-core's mask stream, in the same order)
    computes our training-mode logits: its dropout is in the same places, inverted, at the same
    rate; its own masks (jax.random, in the jitted step) keep about 1 - rate of the elements."""
    import autograd_core as ag
    import backends
    import nn
    from bench.impls import jax_jit
    from bench.problems import build_model, make_problem

    if JaxJit().unavailable():
        pytest.skip(JaxJit().unavailable())
    import jax
    import jax.numpy as jnp

    problem = make_problem(model, 2)
    runner = jax_jit._Model(problem)
    params, _, _, buffers, _ = runner.state
    x, _ = problem.batches[0]
    rate = problem.dropout

    def our_masks(h):
        keep = np.asarray(backends.get("numpy").bernoulli(h.shape, 1 - rate))  # as nn.functional.dropout draws
        return jnp.where(keep, h / (1 - rate), 0)

    logits_of = {"cnn": jax_jit._cnn_logits, "gpt": jax_jit._gpt_logits}[model]
    with backends.use("numpy"):
        ours = build_model(nn, model, rate)
        ours.load_state_dict(problem.weights)
        ag.manual_seed(problem.mask_seed(0))
        expected = ours(ag.tensor(x)).detach().numpy()
        ag.manual_seed(problem.mask_seed(0))
        got, _ = logits_of(jax, params, buffers, jnp.asarray(x.astype(np.int32) if model == "gpt" else x), our_masks)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-4, atol=1e-5)
    drop = jax_jit._Dropout(jax, jax.random.key(0), rate)
    first, second = (np.asarray(drop(jnp.ones((200, 500), jnp.float32))) for _ in range(2))
    assert first.dtype == np.float32 and set(np.unique(first)) == {0.0, np.float32(1 / (1 - rate))}
    assert abs((first > 0).mean() - (1 - rate)) < 0.01
    assert (first != second).any()


# --- torch-compile ------------------------------------------------------------------------------
def test_torch_compile_agrees_with_eager_and_compiles_only_in_warm_up():
    """torch.compile of the MLP step (batch 8) gives torch eager's and our losses; asked for no
    warm-up, the timer still gives it its compiling steps untimed, and no timed step compiles."""
    pytest.importorskip("torch")
    from bench.impls import TorchCompiled

    if TorchCompiled().unavailable():
        pytest.skip(TorchCompiled().unavailable())
    from torch._dynamo.utils import counters

    compiled_in_timed_steps = []

    class Watched(TorchCompiled):
        def setup(self, problem):
            runner = super().setup(problem)
            step, taken = runner.step, [0]

            def watched() -> None:
                before = sum(counters["frames"].values())
                step()
                taken[0] += 1
                if taken[0] > runner.warmup_steps and sum(counters["frames"].values()) != before:
                    compiled_in_timed_steps.append(taken[0])

            runner.step = watched
            return runner

    settings = Settings(workloads=("mlp",), batches=(8,), plan=Plan(warmup=0, min_steps=3, min_time=0.0, max_steps=3))
    result = run(settings, [Ours("numpy"), TorchEager(), Watched()], quiet(), limit_threads=False)
    assert not result.skipped and not result.warnings
    assert {r["impl"]: r["check_ok"] for r in result.records} == {
        "ours:numpy": True,
        "torch": True,
        "torch-compile": True,
    }
    assert compiled_in_timed_steps == []
    assert "torch-compile" in report.warmup_summary(result.records, at_least=0.0)
    assert Watched().workloads == frozenset({"mlp", "char", "cnn", "gpt"}) and Watched().masks == "torch-inductor"


def test_torch_compile_without_a_cxx_compiler_says_why(monkeypatch):
    pytest.importorskip("torch")
    from torch._inductor import cpp_builder, exc

    from bench.impls import TorchCompiled

    def no_compiler() -> str:
        raise exc.InvalidCxxCompiler

    monkeypatch.setattr(cpp_builder, "get_cpp_compiler", no_compiler)
    reason = TorchCompiled().unavailable()
    assert reason is not None and "finds no C++ compiler" in reason and "CXX" in reason


def test_goals_say_met_missed_and_not_in_this_run():
    from bench import figures

    records = [
        {"workload": "mlp", "batch": b, "impl": impl, "phase": "step", "min_ms": ms, "median_ms": ms}
        for b in (1, 32)
        for impl, ms in (("ours:torch+compile", 0.6), ("torch", 1.0), ("ours:jax+compile", 1.1), ("jax-jit", 1.0))
    ]
    result = {"records": records, "command": ["python", "-m", "bench"]}
    result["machine"] = {"git": "abc1234", "started": "2026-12-02", "cpu": "x", "cpu_count": 2}
    result["machine"] |= {"threads": {"threads": 1}, "load_start": [1.0], "load_end": [1.0]}
    rows = {
        tuple(cell.strip() for cell in line.split("|")[1:4]): line.split("|")[4].strip()
        for line in figures.goals_of(result, "run.json").splitlines()
        if line.startswith("| ours")
    }
    assert rows[("ours:torch+compile ÷ torch (eager) ≤ 0.7", "MLP b=32", "0.600")] == "met"
    assert rows[("ours:jax+compile ÷ jax-jit ≤ 1.05", "MLP b=1", "1.100")] == "missed"
    assert rows[("ours:torch+compile ÷ torch-compile ≤ 1.1", "MLP b=1", "-")] == "not in this run (torch-compile)"
    assert rows[("ours:numpy ÷ torch (eager) ≤ 1.0", "GPT b=12", "-")] == "not in this run (ours:numpy, torch)"
