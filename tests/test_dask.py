"""The dask backend: devices, chunking, laziness with bounded graphs, its kernels against numpy,
training equal to numpy's on threads and on a local cluster, and workers killed mid-step or between steps."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

pytest.importorskip("distributed")

import dask.array as da  # noqa: E402
import psutil  # noqa: E402

import autograd_core as ag  # noqa: E402
import backends  # noqa: E402
import nn  # noqa: E402
import nn.functional as F  # noqa: E402
import optim  # noqa: E402
from autograd_core import primitives as P  # noqa: E402
from backends import dask as dask_backend  # noqa: E402
from backends.__main__ import table  # noqa: E402
from helpers import assert_close, kernel, kill_every_worker  # noqa: E402

CHUNK_ROWS = 16  # small, so the test data is several chunks and reductions cross chunks


@pytest.fixture(scope="module", autouse=True)
def _dask_selected(request: pytest.FixtureRequest) -> None:
    if "dask" not in request.config.selected_backends:
        pytest.skip("dask is not among the selected backends (--backend)")


@pytest.fixture(scope="module")
def threads() -> backends.Backend:
    """The threaded scheduler, with CHUNK_ROWS-row chunks (made apart from the registry)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AUTOGRAD_DASK_CHUNK_ROWS", str(CHUNK_ROWS))
        return dask_backend.create(None)


def cluster_processes(client: psutil.Process) -> list[psutil.Process]:
    """The processes `client` started for its local cluster: its children but multiprocessing's
    resource tracker (which lives until exit)."""
    return [p for p in client.children(recursive=True) if "resource_tracker" not in " ".join(p.cmdline())]


@pytest.fixture(scope="module")
def cluster() -> backends.Backend:
    """A three-worker local cluster owned by the backend, 1 GiB per worker, closed after the
    module; no worker or scheduler process may outlive it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AUTOGRAD_DASK_CHUNK_ROWS", str(CHUNK_ROWS))
        mp.setenv("AUTOGRAD_DASK_WORKER_MEMORY", "1GiB")
        backend = backends.get("dask", "local:3")
    yield backend
    workers = cluster_processes(psutil.Process())
    assert len(workers) >= 3
    backend.close()
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, f"processes left after the cluster closed: {alive}"
    assert ("dask", "local:3") not in backends._instances


@pytest.fixture(params=["threads", "cluster"])
def on_dask(request: pytest.FixtureRequest) -> backends.Backend:
    with backends.use(request.getfixturevalue(request.param)) as b:
        yield b


# --- devices ----------------------------------------------------------------------------------------
def test_no_device_is_the_threaded_scheduler():
    b = backends.get("dask")
    assert b is backends.get("dask", None) and b.client is None and not b.mutable and b.supports_float64
    assert "threaded" in b.describe()


@pytest.mark.parametrize("device", ["local:0", "local:two"])
def test_a_bad_local_device_says_what_to_write(device):
    with pytest.raises(ValueError, match="local:N"):
        dask_backend.create(device)


def test_local_workers_take_the_memory_limit(cluster):
    limits = {w["memory_limit"] for w in cluster.client.scheduler_info()["workers"].values()}
    assert limits == {2**30}


def test_a_local_cluster_runs_its_scheduler_in_a_process_of_its_own(cluster):
    """dask's scheduler keeps a record of every computation; in this process it would grow the
    client's memory step by step."""
    assert cluster.client.run_on_scheduler(os.getpid) != os.getpid()


CLIENT_WITH_A_CLUSTER = """
import time, backends
backends.get("dask", "local:1")
print("ready", flush=True)
time.sleep(600)
"""


def test_a_local_cluster_closes_when_its_client_is_killed():
    """A client killed by SIGKILL runs no exit code; its scheduler and worker must not outlive it."""
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT_WITH_A_CLUSTER],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "AUTOGRAD_DASK_WORKER_MEMORY": "1GiB"},
    )
    try:
        assert client.stdout.readline() == "ready\n"
        cluster = cluster_processes(psutil.Process(client.pid))
    finally:
        client.kill()
        client.wait()
    assert len(cluster) >= 2  # the scheduler, the worker's nanny and the worker
    _, alive = psutil.wait_procs(cluster, timeout=30)
    for p in alive:
        p.kill()
    assert not alive, f"processes of the killed client's cluster still running: {alive}"


def test_a_bad_worker_memory_limit_says_what_to_write(monkeypatch):
    monkeypatch.setenv("AUTOGRAD_DASK_WORKER_MEMORY", "lots")
    with pytest.raises(ValueError, match="AUTOGRAD_DASK_WORKER_MEMORY='lots' is not accepted: use a size such as 2GiB"):
        dask_backend.create("local:1")


def test_an_unreachable_scheduler_is_a_clear_error_within_the_timeout(monkeypatch):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    monkeypatch.setenv("AUTOGRAD_DASK_TIMEOUT", "1")
    start = time.monotonic()
    with pytest.raises(backends.BackendUnavailableError, match=f"{address}.*within 1 s"):
        backends.get("dask", address)
    assert time.monotonic() - start < 10


def test_python_m_backends_shows_the_cluster(cluster):
    rows, problem = table("dask", "local:3")
    (row,) = [r for r in rows if r[0] == "dask"]
    assert problem is None and row[1] == "available" and row[3] == "local:3"
    assert "scheduler tcp://127.0.0.1:" in row[-1] and "3 workers" in row[-1] and "dashboard" in row[-1]


# --- chunks, laziness, graphs -----------------------------------------------------------------------------
def test_host_data_is_chunked_along_rows_and_parameters_are_one_chunk(threads):
    with backends.use(threads):
        x = ag.tensor(np.zeros((50, 3)))
        weight = nn.Linear(3, 4).weight
    assert x.array.chunks == ((16, 16, 16, 2), (3,))
    assert weight.array.numblocks == (1, 1)


def test_values_are_computed_only_when_python_needs_them(threads):
    with backends.use(threads):
        x = ag.tensor([1.0, -2.0, 3.0], dtype="float64")
        y = (x * 2).sum()
        assert isinstance(y.array, da.Array)
        assert y.item() == 4.0 and bool(y > 3) and float(y) == 4.0
        assert "4." in repr(y) and y.numpy().shape == () and (x > 0).tolist() == [True, False, True]


def test_values_a_shape_depends_on_are_computed_without_warnings(threads):
    """nonzero, unique_* and repeat compute when called, on the backend's quiet threads."""
    with backends.use(threads), warnings.catch_warnings():
        warnings.simplefilter("error")
        x = ag.tensor([0.0, 1.0, -1.0], dtype="float64")
        positive = 1 / x > 0  # 1 / 0 warns in numpy's default state
        assert ag.nonzero(positive)[0].tolist() == [0, 1]
        assert ag.unique_values(1 / x).tolist() == [-1.0, 1.0, float("inf")]
        counts = threads.xp.astype(1 / x.array > 0, threads.xp.int64)
        assert threads.to_numpy(threads.xp.repeat(x.array, counts)).tolist() == [0.0, 1.0]


def test_dlpack_hands_over_the_computed_values(threads):
    import torch
    from dask.callbacks import Callback

    computes = []
    with backends.use(threads), Callback(start=computes.append):
        y = ag.tensor([1.0, -2.0, 3.0], dtype="float64") * 2
        assert y.__dlpack_device__() == (1, 0) and not computes  # the host, known without computing
        np.testing.assert_array_equal(np.from_dlpack(y), [2.0, -4.0, 6.0])
        np.testing.assert_array_equal(torch.from_dlpack(y).numpy(), [2.0, -4.0, 6.0])
    assert len(computes) == 2  # once per consumer: torch asks for the device, then the values


def test_setitem_does_not_reach_earlier_views_hence_immutable(threads):
    array = threads.asarray(np.zeros(4))
    view = array[1:]
    array[1] = 1.0
    assert threads.to_numpy(array)[1] == 1.0 and threads.to_numpy(view)[0] == 0.0


def test_optimizer_steps_keep_the_graph_bounded(on_dask):
    model = mlp()
    opt = optim.AdamW(model.parameters(), lr=1e-2)
    x, y = data()
    sizes = []
    for _ in range(6):
        loss = F.cross_entropy(model(ag.tensor(x)), ag.tensor(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
        arrays = [p.array for p in model.parameters()] + [s["exp_avg_sq"] for s in opt.state.values()]
        sizes.append(sum(len(a.__dask_graph__()) for a in arrays))
    # one chunk per array (a key holding it, and on a cluster a second naming the scattered value): no history
    assert sizes[-1] == sizes[0] <= 2 * len(arrays), sizes


# --- kernels against numpy -------------------------------------------------------------------------------
RNG = np.random.default_rng(3)
VALUES, INDEX = RNG.standard_normal((40, 3)), RNG.integers(0, 5, 40)
LOGITS, TARGET = RNG.standard_normal((40, 6)) * 30, RNG.integers(0, 6, 40)
ADAM = [RNG.standard_normal((20, 2)) for _ in range(3)] + [np.abs(RNG.standard_normal((20, 2)))]
ADAM_SETTINGS = dict(step=3, lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.1)
KERNELS = {  # name: call(backend, host -> array), from host arrays to one array or a tuple of them
    "index_add_rows": lambda b, a: kernel(b, P.index_add, a(VALUES), (5, 3), 0, a(INDEX)),
    "index_add_columns": lambda b, a: kernel(b, P.index_add, a(VALUES.T), (3, 5), 1, a(INDEX)),
    "index_add_empty": lambda b, a: kernel(b, P.index_add, a(VALUES[:0]), (5, 3), 0, a(INDEX[:0])),
    "scatter": lambda b, a: kernel(
        b, P.scatter, a(VALUES[:3, None, :2]), (6, 4), (slice(5, 0, -2), None, slice(None, None, 3))
    ),
    "basic_index": lambda b, a: kernel(b, P.basic_index, a(VALUES), (slice(None, None, -3), 1)),
    "erf": lambda b, a: kernel(b, P.erf_kernel, a(np.linspace(-7, 7, 57))),
    "gelu_backward": lambda b, a: kernel(b, P.gelu_backward, a(VALUES), a(VALUES * 3), "none"),
    "cross_entropy_rows": lambda b, a: kernel(b, P.cross_entropy_rows, a(LOGITS), a(TARGET)),
    "cross_entropy_backward": lambda b, a: kernel(
        b, P.cross_entropy_backward, a(INDEX / 4.0), a(LOGITS), a(TARGET), a(np.arange(6))
    ),
    "value_range": lambda b, a: a(np.array(b.value_range(a(INDEX - 2)))),
    **{
        name: lambda b, a, decoupled=decoupled: kernel(
            b, P.adam_update, *map(a, ADAM), **ADAM_SETTINGS, decoupled=decoupled
        )
        for name, decoupled in (("adamw_update", True), ("adam_update", False))
    },
}


# Several chunks of the batch (CHUNK_ROWS rows each) for the per-chunk kernels.
IMAGES, WEIGHT = RNG.standard_normal((40, 4, 7, 6)), RNG.standard_normal((6, 2, 3, 2))
CONV = P.ConvGeometry(stride=(2, 1), padding=((1, 2), (0, 1)), dilation=(1, 2), groups=2)
POOL = P.PoolGeometry(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 2), ceil_mode=True)
OUT_GRAD = RNG.standard_normal(kernel(backends.get("numpy"), P.conv2d, IMAGES, WEIGHT, CONV).shape)
POOL_GRAD = RNG.standard_normal(kernel(backends.get("numpy"), P.max_pool2d, IMAGES, POOL)[0].shape)
COLS = RNG.standard_normal((40, 4, 6, 3, 2))
MATRICES = RNG.standard_normal((40, 3, 3))
SPD = MATRICES @ np.swapaxes(MATRICES, -1, -2) + 3 * np.eye(3)
WIDE = RNG.standard_normal((40, 2, 3))
SIGNAL = RNG.standard_normal((40, 5, 7))


def max_pool_backward(b, a):
    _, indices = kernel(b, P.max_pool2d, a(IMAGES), POOL)
    return kernel(b, P.max_pool2d_backward, a(POOL_GRAD), indices, IMAGES.shape, POOL)


KERNELS |= {  # dask's own kernels: numpy's per chunk of the batch, and the namespace's additions
    "im2col": lambda b, a: kernel(b, P.im2col, a(IMAGES), (2, 3), (1, 2), (2, 1), (3, 2)),
    "col2im": lambda b, a: kernel(b, P.col2im, a(COLS), (40, 4, 7, 6), (2, 3), (1, 2), (2, 1)),
    "conv2d": lambda b, a: kernel(b, P.conv2d, a(IMAGES), a(WEIGHT), CONV),
    "conv2d_grad_input": lambda b, a: kernel(b, P.conv2d_grad_input, a(OUT_GRAD), a(WEIGHT), IMAGES.shape, CONV),
    "conv2d_grad_weight": lambda b, a: kernel(b, P.conv2d_grad_weight, a(OUT_GRAD), a(IMAGES), WEIGHT.shape, CONV),
    "max_pool2d": lambda b, a: kernel(b, P.max_pool2d, a(IMAGES), POOL),
    "max_pool2d_backward": max_pool_backward,
    "det": lambda b, a: b.xp.linalg.det(a(MATRICES)),
    "slogdet": lambda b, a: b.xp.linalg.slogdet(a(MATRICES)),
    "eigh": lambda b, a: b.xp.linalg.eigh(a(SPD)),
    "eigvalsh": lambda b, a: b.xp.linalg.eigvalsh(a(SPD)),
    "inv": lambda b, a: b.xp.linalg.inv(a(MATRICES)),
    "cholesky_upper": lambda b, a: b.xp.linalg.cholesky(a(SPD), upper=True),
    "pinv": lambda b, a: b.xp.linalg.pinv(a(WIDE)),
    "matrix_power": lambda b, a: b.xp.linalg.matrix_power(a(MATRICES), 3),
    "matrix_rank": lambda b, a: b.xp.linalg.matrix_rank(a(WIDE), rtol=0.5),
    "matrix_norm_2": lambda b, a: b.xp.linalg.matrix_norm(a(WIDE), ord=2, keepdims=True),
    "qr_complete": lambda b, a: b.xp.linalg.qr(a(WIDE.mT), mode="complete"),
    "svd_full": lambda b, a: b.xp.linalg.svd(a(WIDE), full_matrices=True),
    "svdvals": lambda b, a: b.xp.linalg.svdvals(a(WIDE)),
    "solve_stack": lambda b, a: b.xp.linalg.solve(a(MATRICES), a(WIDE.mT)),
    "solve_one_matrix": lambda b, a: b.xp.linalg.solve(a(MATRICES[0]), a(MATRICES[1])),
    "cross": lambda b, a: b.xp.linalg.cross(a(MATRICES), a(SPD)),
    "cross_axis0": lambda b, a: b.xp.linalg.cross(a(MATRICES.T), a(SPD.T), axis=0),
    "fftn_batch_axis": lambda b, a: b.xp.fft.fftn(a(SIGNAL), s=(9,), axes=(0,), norm="ortho"),
    "ifftn": lambda b, a: b.xp.fft.ifftn(a(SIGNAL), s=(4, 6), axes=(1, 2)),
    "rfftn_odd": lambda b, a: b.xp.fft.rfftn(a(SIGNAL), s=(7,), axes=(2,), norm="forward"),
    "irfftn_odd": lambda b, a: b.xp.fft.irfftn(a(SIGNAL + 1j), s=(5, 9), axes=(1, 2)),
    "repeat_counts": lambda b, a: b.xp.repeat(a(VALUES), a(INDEX), axis=0),
    "repeat_flattened": lambda b, a: b.xp.repeat(a(VALUES[:4]), a(INDEX[:12])),
    "searchsorted_sorter": lambda b, a: b.xp.searchsorted(
        a(VALUES[:, 0]), a(VALUES[:9, 1]), side="right", sorter=a(np.argsort(VALUES[:, 0]))
    ),
    "eye_wide_offset": lambda b, a: b.xp.eye(2, 5, k=1),
    "linspace_complex": lambda b, a: b.xp.linspace(1 - 2j, 3j, 7, dtype=b.xp.complex128, endpoint=False),
    "nonzero": lambda b, a: b.xp.nonzero(a(VALUES > 0.5)),
    "unique_all": lambda b, a: b.xp.unique_all(a(np.round(VALUES))),
    "reshape_empty_slice": lambda b, a: b.xp.reshape(b.xp.concat([a(VALUES[:0, 0])] * 3)[0:0], (0, 3)),
    "scatter_integer_and_negative_step": lambda b, a: kernel(
        b, P.scatter, a(VALUES[:3, :2]), (4, 3, 2), (1, slice(None), slice(None, None, -1))
    ),
    "scatter_empty": lambda b, a: kernel(b, P.scatter, a(VALUES[:2, :0]), (2, 3), (slice(None), slice(3, 3))),
}


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_matches_numpy(threads, kernel):
    results = []
    for b in (threads, backends.get("numpy")):
        out = KERNELS[kernel](b, lambda host, b=b: b.asarray(np.array(host)))  # numpy's kernels may write in place
        results.append([b.to_numpy(o) for o in (out if isinstance(out, tuple) else (out,))])
    for mine, expected in zip(*results):
        assert mine.shape == expected.shape and mine.dtype == expected.dtype
        assert_close(mine, expected, rtol=1e-13, atol=1e-13)


def test_batch_kernels_keep_the_batch_chunked_and_are_lazy(threads):
    images, matrices = threads.asarray(IMAGES), threads.asarray(MATRICES)
    outputs = [
        kernel(threads, P.conv2d, images, threads.asarray(WEIGHT), CONV),
        *kernel(threads, P.max_pool2d, images, POOL),
        *threads.xp.linalg.svd(matrices),
        threads.xp.linalg.det(matrices),
    ]
    assert images.chunks[0] == matrices.chunks[0] == (16, 16, 8)
    assert all(isinstance(o, da.Array) and o.chunks[0] == images.chunks[0] for o in outputs)
    weight_grad = kernel(threads, P.conv2d_grad_weight, threads.asarray(OUT_GRAD), images, WEIGHT.shape, CONV)
    assert isinstance(weight_grad, da.Array) and weight_grad.shape == WEIGHT.shape


def test_index_add_takes_negative_indices(threads):
    index = INDEX - 5  # the same rows, counted from the end
    expected = np.zeros((5, 3))
    np.add.at(expected, index, VALUES)
    assert_close(
        threads.to_numpy(kernel(threads, P.index_add, threads.asarray(VALUES), (5, 3), 0, threads.asarray(index))),
        expected,
        rtol=1e-14,
        atol=1e-14,
    )


def test_integer_array_indexing_and_its_gradient_match_numpy(threads):
    def gather(backend):
        with backends.use(backend):
            x = ag.tensor(VALUES, requires_grad=True)
            picked = x[ag.tensor(INDEX[:7]), 1:]
            (picked * picked).sum().backward()
            return picked.detach().numpy(), x.grad.numpy()

    for mine, expected in zip(gather(threads), gather(backends.get("numpy"))):
        assert_close(mine, expected, rtol=1e-14, atol=0)


def test_map_batch_chunks_matches_one_chunk(threads):
    """Per-row outputs joined along their batch axis, batch sums added over the chunks, a
    whole array given to every chunk, None passed as None; numpy runs it as one chunk."""

    def rows_and_sums(ns, x, weight, absent, h):
        assert absent is None
        y = x @ weight  # rows of x along axis 1
        return y, ns.sum(y, axis=1), h * 2

    x, weight, h = RNG.standard_normal((3, 40, 2)), RNG.standard_normal((2, 5)), RNG.standard_normal((40, 5))
    results = []
    for b in (threads, backends.get("numpy")):
        arrays = (b.asarray(np.ascontiguousarray(np.swapaxes(x, 0, 1))), b.asarray(weight), None, b.asarray(h))
        arrays = (b.xp.permute_dims(arrays[0], (1, 0, 2)), *arrays[1:])  # the batch chunked along axis 1
        results.append(
            [
                b.to_numpy(o)
                for o in kernel(b, P.map_batch_chunks, rows_and_sums, arrays, (1, None, None, 0), (1, None, 0))
            ]
        )
    for mine, expected in zip(*results):
        assert_close(mine, expected, rtol=1e-13, atol=1e-13)


def test_a_recurrence_is_one_task_per_batch_chunk_whatever_its_length(threads):
    """An LSTM's forward and backward make as many dask tasks over 200 steps as over 10 (it was
    a few hundred tasks per step), and give numpy's gradients."""

    def run(backend, steps):
        with backends.use(backend):
            ag.manual_seed(0)
            lstm = nn.LSTM(3, 4, batch_first=True).to(dtype="float64")
            x = ag.tensor(np.random.default_rng(steps).standard_normal((40, steps, 3)), requires_grad=True)
            out, (h, c) = lstm(x)
            (out * out).sum().backward()
            grads = (x.grad.array, lstm.weight_hh_l0.grad.array)
            sizes = [len(a.__dask_graph__()) for a in (out.array, *grads)] if backend is threads else None
            return sizes, [backend.to_numpy(g) for g in grads]

    short, _ = run(threads, 10)
    long, grads = run(threads, 200)
    assert short == long and max(long) < 300
    for mine, expected in zip(grads, run(backends.get("numpy"), 200)[1]):
        assert_close(mine, expected, rtol=1e-12, atol=1e-13)


# --- training equals numpy's ----------------------------------------------------------------------------
def mlp() -> nn.Module:
    ag.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3)).to(dtype="float64")


def logistic() -> nn.Module:
    ag.manual_seed(1)
    return nn.Linear(5, 1).to(dtype="float64")


def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    return rng.standard_normal((50, 5)), rng.integers(0, 3, 50)


def cnn() -> nn.Module:
    """A convolution, max pooling and their gradients (of the input too: a layer precedes them)."""
    ag.manual_seed(2)
    return nn.Sequential(
        nn.Linear(5, 2 * 6 * 6),
        nn.Unflatten(1, (2, 6, 6)),
        nn.Conv2d(2, 3, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(27, 3),
    ).to(dtype="float64")


class LastState(nn.Module):
    """Each row's 5 features as 5 time steps of an LSTM, classified from the last output."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm, self.head = nn.LSTM(1, 6, batch_first=True), nn.Linear(6, 3)

    def forward(self, x: ag.Tensor) -> ag.Tensor:
        out, _ = self.lstm(ag.expand_dims(x, axis=-1))
        return self.head(out[:, -1])


def lstm() -> nn.Module:
    """The recurrence's kernel, one task per chunk of the batch (on a cluster: run by the workers)."""
    ag.manual_seed(3)
    return LastState().to(dtype="float64")


LOSSES = {
    "mlp": (mlp, lambda out, y: F.cross_entropy(out, ag.tensor(y))),
    "cnn": (cnn, lambda out, y: F.cross_entropy(out, ag.tensor(y))),
    "lstm": (lstm, lambda out, y: F.cross_entropy(out, ag.tensor(y))),
    "logistic": (
        logistic,
        lambda out, y: F.binary_cross_entropy_with_logits(
            ag.reshape(out, (-1,)), ag.tensor((y == 1).astype(np.float64))
        ),
    ),
}


def train(name: str, steps: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """Every step's loss and gradients, and the final weights, of 20 AdamW steps (float64):
    one computation per step besides the step's own."""
    make, loss_fn = LOSSES[name]
    model = make()
    opt = optim.AdamW(model.parameters(), lr=5e-2, weight_decay=0.01)
    x, y = data()
    seen = []
    for _ in range(steps):
        loss = loss_fn(model(ag.tensor(x)), y)
        opt.zero_grad()
        loss.backward()
        seen.append(
            ag.concat([ag.reshape(t, (-1,)) for t in (loss.detach(), *(p.grad for p in model.parameters()))]).numpy()
        )
        opt.step()
    return np.stack(seen), ag.concat([ag.reshape(p.detach(), (-1,)) for p in model.parameters()]).numpy()


@pytest.mark.parametrize("model", LOSSES)
def test_training_equals_numpy(on_dask, model):
    steps, weights = train(model)
    with backends.use("numpy"):
        expected_steps, expected_weights = train(model)
    assert steps[-1, 0] < steps[0, 0]  # column 0: the loss; then the gradients
    np.testing.assert_allclose(steps[:, 0], expected_steps[:, 0], rtol=1e-10, atol=0)
    np.testing.assert_allclose(steps[:, 1:], expected_steps[:, 1:], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-10, atol=1e-12)


# --- faults ---------------------------------------------------------------------------------------------
def _slowly(block: np.ndarray) -> np.ndarray:
    time.sleep(0.15)  # each chunk takes a while, so the step lasts long enough to be interrupted
    return block


def step_on_slow_data(backend: backends.Backend) -> tuple[float, list[np.ndarray]]:
    """One AdamW step of the MLP on 24 slow chunks generated on the workers; its loss and weights."""
    model = mlp()
    opt = optim.AdamW(model.parameters(), lr=1e-2)
    x = ag.asarray(
        da.random.default_rng(0).standard_normal((24 * CHUNK_ROWS, 5), chunks=(CHUNK_ROWS, 5)).map_blocks(_slowly)
    )
    y = ag.asarray(da.arange(24 * CHUNK_ROWS, chunks=CHUNK_ROWS) % 3)
    loss = F.cross_entropy(model(x), y)
    value = loss.item()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return value, [p.detach().numpy() for p in model.parameters()]


def test_a_worker_killed_mid_step_changes_nothing(cluster):
    with backends.use(cluster):
        expected = step_on_slow_data(cluster)
        victim = next(iter(cluster.client.run(os.getpid).values()))
        killed_at = []

        def kill_when_busy() -> None:
            deadline = time.monotonic() + 30
            while not any(cluster.client.processing().values()) and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(0.3)
            os.kill(victim, signal.SIGKILL)
            killed_at.append(time.monotonic())

        killer = threading.Thread(target=kill_when_busy)
        killer.start()
        loss, weights = step_on_slow_data(cluster)
        finished_at = time.monotonic()
        killer.join()
    assert killed_at and killed_at[0] < finished_at, "the worker was not killed during the step"
    assert_same_step((loss, weights), expected)


def test_every_worker_restarted_between_steps_loses_nothing(cluster):
    """The persisted parameters and optimizer state survive the restart of every worker that
    holds them (as when each nanny restarts a worker over its memory limit)."""
    with backends.use(cluster):
        expected = two_steps(cluster, restart_between=False)
        got = two_steps(cluster, restart_between=True)
    assert_same_step(got, expected)


def two_steps(backend: backends.Backend, restart_between: bool) -> tuple[float, list[np.ndarray]]:
    model = mlp()
    opt = optim.AdamW(model.parameters(), lr=1e-2)
    x, y = data()
    for step in range(2):
        if step == 1 and restart_between:
            kill_every_worker(backend)
        loss = F.cross_entropy(model(ag.tensor(x)), ag.tensor(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item(), [p.detach().numpy() for p in model.parameters()]


def assert_same_step(got: tuple[float, list[np.ndarray]], expected: tuple[float, list[np.ndarray]]) -> None:
    assert got[0] == expected[0]
    for mine, theirs in zip(got[1], expected[1]):
        np.testing.assert_array_equal(mine, theirs)
