"""This framework on one of its backends: the `nn` model, `optim.AdamW`, `F.cross_entropy`;
for fullbatch, bench/synthetic.py's (examples/bigdata.py's) step, on the host or on a dask cluster;
for transforms, `autograd_core.transforms.func` (torch.func's names) on the `nn` model."""

from __future__ import annotations

import atexit
import os
from typing import Any

import numpy as np

import autograd_core as ag
import backends
import nn
import nn.functional as F
import optim
from autograd_core import func
from bench.impls.base import BatchPool, Impl, Runner, TransformsRunner
from bench.problems import ADAM_EPS, BETAS, FULLBATCH_HOST_ROWS, FULLBATCH_WORKER_MEMORY, Problem, build_model

FULLBATCH_HOSTS = ("numpy",)  # the backends whose ours:<backend> also times fullbatch, on the host's rows


class Ours(Impl):
    """``ours:<backend>``: the engine as a user would run it on that backend. Every backend, op
    by op or compiled, draws dropout masks from autograd-core's one seeded mask stream."""

    requires = ()
    masks = "autograd_core"

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.name = f"ours:{backend}"
        if backend in FULLBATCH_HOSTS:
            self.workloads = Impl.workloads | {"fullbatch"}
        self.workloads = self.workloads | {"transforms"}

    def unavailable(self) -> str | None:
        try:
            backends.get(self.backend)
        except Exception as e:  # noqa: BLE001 - an unknown, missing or broken backend is skipped
            return str(e).splitlines()[0] if str(e) else type(e).__name__
        return None

    def setup(self, problem: Problem) -> Runner:
        backend = backends.get(self.backend)
        with backends.use(backend):
            if problem.model == "fullbatch":
                return _FullBatch(backend, problem, persist=False)
            if problem.workload == "transforms":
                return _Transforms(backend, problem)
            return _Chain(backend, problem) if problem.model == "chain" else _Model(backend, problem)


class OursCompiled(Ours):
    """``ours:<backend>+compile``: the same step through `autograd_core.transforms.compile`, for
    backends that can trace a whole step (jax); for transforms, each transform traced whole."""

    workloads = frozenset({"mlp", "char", "cnn", "gpt", "transforms"})

    def __init__(self, backend: str) -> None:
        super().__init__(backend)
        self.name = f"ours:{backend}+compile"

    def unavailable(self) -> str | None:
        reason = super().unavailable()
        if reason is None and not backends.get(self.backend).can_compile:
            reason = f"the {self.backend} backend has no tracing compiler"
        return reason

    def setup(self, problem: Problem) -> Runner:
        backend = backends.get(self.backend)
        with backends.use(backend):
            if problem.workload == "transforms":
                return _CompiledTransforms(backend, problem)
            return _CompiledModel(backend, problem)


class OursCluster(Ours):
    """``ours:dask@local:N``, fullbatch only: the dask backend on a local cluster of N
    single-threaded worker processes (free to use every core), each limited to
    `FULLBATCH_WORKER_MEMORY`. Rows that fit in half the workers' memory are computed once
    and kept there; larger sets are drawn again from their seeds by the workers every step."""

    workloads = frozenset({"fullbatch"})

    def __init__(self, workers: int) -> None:
        super().__init__("dask")
        self.workers = workers
        self.name = f"ours:dask@local:{workers}"

    def unavailable(self) -> str | None:
        reason = super().unavailable()
        if reason is None:
            try:
                import distributed  # noqa: F401
            except ImportError as e:
                reason = f"distributed cannot be imported ({e})"
        return reason

    def setup(self, problem: Problem) -> Runner:
        backend = cluster_backend(self.workers)
        fits = problem.data.nbytes <= self.workers * FULLBATCH_WORKER_MEMORY / 2
        with backends.use(backend):
            return _FullBatch(backend, problem, persist=fits)


_clusters: dict[int, tuple[backends.Backend, Any]] = {}  # workers -> (backend, its cluster)


def cluster_backend(workers: int) -> backends.Backend:
    """The dask backend on a local cluster of `workers` single-threaded worker processes of
    `FULLBATCH_WORKER_MEMORY` each, started on first use and stopped at exit. The workers and
    the scheduler are unpinned, every thread of them (a ``--threads 1`` bench pins this process
    to one core, and children inherit it)."""
    if workers not in _clusters:
        from backends.dask import local_cluster

        cluster = local_cluster(workers, FULLBATCH_WORKER_MEMORY)
        atexit.register(cluster.close)
        backend = backends.get("dask", cluster.scheduler_address)
        if hasattr(os, "sched_setaffinity"):
            backend.client.run(unpin_every_thread)
            backend.client.run_on_scheduler(unpin_every_thread)
        _clusters[workers] = backend, cluster
    return _clusters[workers][0]


def unpin_every_thread() -> None:
    """Let every thread of this process run on every core. ``sched_setaffinity(0, ...)`` moves
    only the calling thread: a dask worker's threads started before it keep the pin."""
    every_core = set(range(os.cpu_count() or 1))
    threads = os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else ["0"]
    for thread in threads:
        os.sched_setaffinity(int(thread), every_core)


def close_clusters() -> None:
    """Stop the clusters `cluster_backend` started (otherwise they stop at exit)."""
    while _clusters:
        _, (backend, cluster) = _clusters.popitem()
        backend.close()
        cluster.close()


class _Model(BatchPool):
    """The model in training mode. With dropout, autograd-core's random numbers (the mask stream
    with them) are reseeded before each step with the problem's seed of that step."""

    def __init__(self, backend: backends.Backend, problem: Problem) -> None:
        self.backend, self.problem = backend, problem
        self.model = build_model(nn, problem.model, problem.dropout)
        self.model.load_state_dict(problem.weights)
        self.params = list(self.model.parameters())
        self.opt = optim.AdamW(self.params, lr=problem.lr, betas=BETAS, eps=ADAM_EPS, weight_decay=problem.weight_decay)
        super().__init__([(ag.tensor(x), ag.tensor(y)) for x, y in problem.batches])
        self.loss: ag.Tensor | None = None

    def select(self, k: int) -> None:
        super().select(k)
        if self.problem.dropout:
            ag.manual_seed(self.problem.mask_seed(k))

    def forward(self) -> None:
        with backends.use(self.backend):
            self.loss = F.cross_entropy(self.model(self.x), self.y)

    def backward(self) -> None:
        with backends.use(self.backend):
            self.opt.zero_grad()
            self.loss.backward()

    def optimizer(self) -> None:
        with backends.use(self.backend):
            self.opt.step()

    def sync(self) -> None:
        arrays: list[Any] = [p.array for p in self.params]
        arrays.extend(p.grad.array for p in self.params if p.grad is not None)
        if self.loss is not None:
            arrays.append(self.loss.array)
        self.backend.synchronize(*arrays)

    def check_value(self) -> float:
        return float(self.loss.item())


class _FullBatch(Runner):
    """One full-batch AdamW step of bench/synthetic.py's (examples/bigdata.py's) MLP on every row of `problem.data`:
    on a dask backend the workers' rows (kept there with `persist`), elsewhere the host's."""

    def __init__(self, backend: backends.Backend, problem: Problem, persist: bool) -> None:
        from bench import synthetic as bigdata

        if backend.name not in bigdata.LAZY_BACKENDS and problem.data.rows > FULLBATCH_HOST_ROWS:
            raise ValueError(
                f"{problem.data.rows:,} rows is the set larger than the workers' memory, drawn by "
                f"dask workers only (the host implementations stop at {FULLBATCH_HOST_ROWS:,})"
            )
        self.backend, self.step_of = backend, bigdata.train_step
        self.model = build_model(nn, problem.model)
        self.model.load_state_dict(problem.weights)
        self.opt = optim.AdamW(
            self.model.parameters(), lr=problem.lr, betas=BETAS, eps=ADAM_EPS, weight_decay=problem.weight_decay
        )
        self.x, self.y = bigdata.tensors(problem.data, persist=persist)
        self.loss = float("nan")

    def step(self) -> None:
        with backends.use(self.backend):
            self.loss, _ = self.step_of(self.model, self.opt, self.x, self.y)

    def check_value(self) -> float:
        return self.loss


class _Chain(Runner):
    """``y = x * w * w * ... * w`` (2,000 multiplies of one-element tensors), then backward."""

    def __init__(self, backend: backends.Backend, problem: Problem) -> None:
        self.backend, self.length = backend, problem.chain
        self.x = ag.tensor(problem.weights["x"], requires_grad=True)
        self.w = ag.tensor(problem.weights["w"], requires_grad=True)

    def step(self) -> None:
        with backends.use(self.backend):
            self.x.grad = self.w.grad = None
            y, w = self.x, self.w
            for _ in range(self.length):
                y = y * w
            y.backward()

    def sync(self) -> None:
        self.backend.synchronize(*(t.grad.array for t in (self.x, self.w) if t.grad is not None))

    def check_value(self) -> float:
        return float(self.w.grad.item())


class _Transforms(TransformsRunner):
    """``func.vmap(func.grad(loss of one example), in_dims=(None, 0, 0))`` through
    ``func.functional_call``, and ``func.hvp`` of the batch's mean loss."""

    def __init__(self, backend: backends.Backend, problem: Problem) -> None:
        self.backend = backend
        self.model = build_model(nn, problem.model)
        as_tensors = lambda arrays: {k: ag.tensor(v) for k, v in arrays.items()}
        self.params, self.direction = as_tensors(problem.weights), as_tensors(problem.probes.direction)
        super().__init__(problem, [(ag.tensor(x), ag.tensor(y)) for x, y in problem.batches])
        one = lambda params, x, y: self.loss(params, x[None], y[None])
        self.per_sample_grads_of = func.vmap(func.grad(one), in_dims=(None, 0, 0))

    def loss(self, params: dict[str, ag.Tensor], x: ag.Tensor, y: ag.Tensor) -> ag.Tensor:
        return F.cross_entropy(func.functional_call(self.model, params, (x,)), y)

    def hvp_of(
        self, params: dict[str, ag.Tensor], direction: dict[str, ag.Tensor], x: ag.Tensor, y: ag.Tensor
    ) -> dict[str, ag.Tensor]:
        _, (hv,) = func.hvp(lambda p: self.loss(p, x, y), (params,), (direction,))
        return hv

    def per_sample(self) -> None:
        with backends.use(self.backend):
            self.per_sample_grads = self.per_sample_grads_of(self.params, self.x, self.y)

    def hvp(self) -> None:
        with backends.use(self.backend):
            self.hvp_result = self.hvp_of(self.params, self.direction, self.x, self.y)

    def sync(self) -> None:
        results = [*self.per_sample_grads.values(), *self.hvp_result.values()]
        self.backend.synchronize(*(t.array for t in results))

    def to_numpy(self, array: ag.Tensor) -> np.ndarray:
        return array.detach().numpy()


class _Kept(nn.Module):
    """Where a compiled transform leaves its results, one buffer each (the parameter's name with
    its dots made underscores): a call through `ag.compile` returns one tensor, and gives back
    the new values of its modules' buffers, as it does batch norm's running statistics."""

    def __init__(self, shapes: dict[str, tuple[int, ...]]) -> None:
        super().__init__()
        self.names = list(shapes)
        for name, shape in shapes.items():
            self.register_buffer(name.replace(".", "_"), ag.zeros(shape))

    def keep(self, results: dict[str, ag.Tensor]) -> ag.Tensor:
        """Make `results` the buffers; returns the last of them, for the call to return."""
        for buffer, result in zip(self.buffers(), results.values(), strict=True):
            buffer.array = result.array
        return result

    def results(self) -> dict[str, ag.Tensor]:
        return dict(zip(self.names, self.buffers()))


class _CompiledTransforms(_Transforms):
    """Each transform as one call through `ag.compile`, over the model's parameters, its
    results kept in a `_Kept` module of buffers."""

    def __init__(self, backend: backends.Backend, problem: Problem) -> None:
        super().__init__(backend, problem)
        self.model.load_state_dict(problem.weights)
        shapes = {k: w.shape for k, w in problem.weights.items()}
        self.kept_per_sample = _Kept({k: (problem.batch, *shape) for k, shape in shapes.items()})
        self.kept_hvp = _Kept(shapes)
        traced = lambda: {k: p.detach() for k, p in self.model.named_parameters()}  # the values a trace reads

        def per_sample(x: ag.Tensor, y: ag.Tensor) -> ag.Tensor:
            return self.kept_per_sample.keep(self.per_sample_grads_of(traced(), x, y))

        def hvp(x: ag.Tensor, y: ag.Tensor, *direction: ag.Tensor) -> ag.Tensor:
            return self.kept_hvp.keep(self.hvp_of(traced(), dict(zip(shapes, direction)), x, y))

        self.compiled_per_sample = ag.compile(per_sample, modules=[self.model, self.kept_per_sample])
        self.compiled_hvp = ag.compile(hvp, modules=[self.model, self.kept_hvp])

    def per_sample(self) -> None:
        with backends.use(self.backend):
            self.compiled_per_sample(self.x, self.y)
        self.per_sample_grads = self.kept_per_sample.results()

    def hvp(self) -> None:
        with backends.use(self.backend):
            self.compiled_hvp(self.x, self.y, *self.direction.values())
        self.hvp_result = self.kept_hvp.results()


class _CompiledModel(_Model):
    """The whole step (forward, backward, AdamW) as one compiled call; no phase split. The first
    call traces and compiles it."""

    warmup_steps = 1

    def __init__(self, backend: backends.Backend, problem: Problem) -> None:
        super().__init__(backend, problem)

        def train_step(x: ag.Tensor, y: ag.Tensor) -> ag.Tensor:
            loss = F.cross_entropy(self.model(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            return loss

        self.compiled = ag.compile(train_step, modules=[self.model], optimizers=[self.opt])

    def step(self) -> None:
        with backends.use(self.backend):
            self.loss = self.compiled(self.x, self.y)
