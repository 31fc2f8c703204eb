"""The dask backend under faults and bad settings: settings and devices refused with errors that
say what to write, a local cluster that listens on loopback only, a scheduler lost mid-training
(a clear error within AUTOGRAD_DASK_TIMEOUT, then an exit that does not wait for it), workers
restarted again and again between steps, and a backend used after it was closed."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

pytest.importorskip("distributed")

import psutil  # noqa: E402

import autograd_core as ag  # noqa: E402
import backends  # noqa: E402
import nn  # noqa: E402
import nn.functional as F  # noqa: E402
import optim  # noqa: E402
from backends import dask as dask_backend  # noqa: E402
from helpers import dask_workers, kill_every_worker  # noqa: E402

TIMEOUT_S = 3  # AUTOGRAD_DASK_TIMEOUT in the tests that lose a scheduler
EXIT_BOUND_S = TIMEOUT_S + 60  # generous: the machine may be busy; a hang lasts far longer
LOOPBACK = {"127.0.0.1", "::1"}


@pytest.fixture(scope="module", autouse=True)
def _dask_selected(request: pytest.FixtureRequest) -> None:
    if "dask" not in request.config.selected_backends:
        pytest.skip("dask is not among the selected backends (--backend)")


# --- settings and devices, refused before anything starts ----------------------------------------
SETTINGS = {  # variable: (bad values, what the error says is accepted, the devices that read it)
    "AUTOGRAD_DASK_CHUNK_ROWS": (
        ("0", "-5", "1.5", "many", "nan", "1e3"),
        "a whole number of rows >= 1",
        (None, "local:1", "tcp://127.0.0.1:1"),
    ),
    "AUTOGRAD_DASK_TIMEOUT": (
        ("-1", "0", "nan", "inf", "-inf", "1e400", "soon", "10s"),
        "a finite number of seconds > 0",
        ("local:1", "tcp://127.0.0.1:1"),
    ),
    "AUTOGRAD_DASK_WORKER_MEMORY": (("lots", "0", "-1GiB", "1e400", "nan"), "a size such as 2GiB", ("local:1",)),
}
BAD_SETTINGS = [
    (variable, value, accepted, device)
    for variable, (values, accepted, devices) in SETTINGS.items()
    for value in values
    for device in devices
]


def cluster_children() -> set[int]:
    """The pids of this process's descendants that are a dask scheduler, nanny or worker."""
    return {p.pid for p in psutil.Process().children(recursive=True) if "--spec" in p.cmdline()}


@pytest.mark.parametrize(("variable", "value", "accepted", "device"), BAD_SETTINGS)
def test_a_bad_setting_names_the_variable_the_value_and_what_is_accepted(
    monkeypatch, variable, value, accepted, device
):
    """Refused when read, before a cluster starts or a connection is tried."""
    monkeypatch.setenv(variable, value)
    before, start = cluster_children(), time.monotonic()
    with pytest.raises(ValueError) as refused:
        dask_backend.create(device)
    assert time.monotonic() - start < 5 and cluster_children() <= before, "a cluster or connection was tried first"
    message = str(refused.value)
    assert f"{variable}={value!r} is not accepted: use {accepted}" in message and "leave it unset" in message


def test_the_worker_memory_is_read_for_a_local_cluster_only(monkeypatch):
    """The worker memory is read (and checked) for local:N only: elsewhere it means nothing."""
    monkeypatch.setenv("AUTOGRAD_DASK_WORKER_MEMORY", "lots")
    assert dask_backend.create(None).chunk_rows == dask_backend.DEFAULT_CHUNK_ROWS


@pytest.mark.parametrize(
    ("variable", "value", "read"),
    [
        ("AUTOGRAD_DASK_CHUNK_ROWS", " 32 ", lambda: dask_backend.create(None).chunk_rows),
        ("AUTOGRAD_DASK_CHUNK_ROWS", "65_536", lambda: dask_backend.create(None).chunk_rows),
        ("AUTOGRAD_DASK_CHUNK_ROWS", "", lambda: dask_backend.create(None).chunk_rows),
        ("AUTOGRAD_DASK_TIMEOUT", "0.5", dask_backend._timeout_s),
        ("AUTOGRAD_DASK_TIMEOUT", "", dask_backend._timeout_s),
        ("AUTOGRAD_DASK_WORKER_MEMORY", "512MiB", dask_backend._worker_memory),
        ("AUTOGRAD_DASK_WORKER_MEMORY", "", dask_backend._worker_memory),
    ],
)
def test_good_settings_are_taken(monkeypatch, variable, value, read):
    monkeypatch.setenv(variable, value)
    expected = {" 32 ": 32, "65_536": 65_536, "0.5": 0.5, "512MiB": "512MiB"}
    defaults = {
        "AUTOGRAD_DASK_CHUNK_ROWS": dask_backend.DEFAULT_CHUNK_ROWS,
        "AUTOGRAD_DASK_TIMEOUT": dask_backend.DEFAULT_TIMEOUT_S,
        "AUTOGRAD_DASK_WORKER_MEMORY": None,
    }
    assert read() == expected.get(value, defaults[variable])


@pytest.mark.parametrize("device", ["local:0", "local:-1", "local:x", "local:", "local:1.5", "local: 2"])
def test_a_bad_local_device_says_to_write_local_n(device):
    with pytest.raises(ValueError, match=f"dask device '{device}': use local:N with N >= 1"):
        dask_backend.create(device)


@pytest.mark.parametrize(
    ("device", "problem"),
    [
        ("tcp://", "missing port"),
        ("tcp://:8786", "needs a host and a port"),
        ("tcp://127.0.0.1:0", "needs a host and a port"),
        ("tcp://127.0.0.1:99999", "needs a host and a port"),
        ("tcp://127.0.0.1:port", "invalid literal"),
        ("cuda", "missing port"),  # another library's device name
        ("http://127.0.0.1:8786", "http:// is not a scheme a scheduler listens on"),
        ("inproc://127.0.0.1/1/2", "inproc:// is not a scheme a scheduler listens on"),
        ("tcp://[::1", "ipv6 needs brackets"),
    ],
)
def test_a_device_that_is_no_address_is_refused_at_once(device, problem):
    start = time.monotonic()
    with pytest.raises(ValueError) as refused:
        dask_backend.create(device)
    assert time.monotonic() - start < 5
    message = str(refused.value)
    assert message.startswith(f"dask device {device!r}: ") and problem in message
    assert "local:N" in message and "tcp://" in message and "AUTOGRAD_DEVICE empty" in message


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:{port}", "127.0.0.1:{port}", "tcp://no-such-host.invalid:8786"])
def test_an_unreachable_scheduler_is_a_clear_error_within_the_timeout(monkeypatch, address):
    address = address.format(port=free_port())
    monkeypatch.setenv("AUTOGRAD_DASK_TIMEOUT", "1")
    start = time.monotonic()
    with pytest.raises(backends.BackendUnavailableError) as unreachable:
        backends.get("dask", address)
    assert time.monotonic() - start < 30
    message = str(unreachable.value)
    assert f"{address!r} within 1 s (AUTOGRAD_DASK_TIMEOUT" in message and "dask scheduler" in message


def test_the_threaded_backend_closed_twice_still_computes():
    """Without a cluster there is nothing to lose: close() only drops the registry's entry."""
    b = dask_backend.create(None)
    b.close()
    b.close()
    assert b.to_numpy(b.asarray(np.arange(3.0))).tolist() == [0.0, 1.0, 2.0]


# --- a local cluster ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cluster() -> backends.Backend:
    """A two-worker local cluster, made apart from the registry, closed after the module; none of
    its processes may outlive it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AUTOGRAD_DASK_WORKER_MEMORY", "1GiB")
        backend = dask_backend.create("local:2")
    yield backend
    processes = cluster_processes(backend)  # the workers now: the tests restart them
    backend.close()
    _, alive = psutil.wait_procs(processes, timeout=30)
    assert not alive, f"processes left after the cluster closed: {alive}"


def cluster_processes(backend: backends.Backend) -> list[psutil.Process]:
    """The scheduler, the workers and their nannies (the workers' parents)."""
    scheduler = psutil.Process(backend.client.run_on_scheduler(os.getpid))
    workers = [psutil.Process(pid) for pid in backend.client.run(os.getpid).values()]
    return [scheduler, *workers, *(w.parent() for w in workers)]


def test_a_local_cluster_listens_on_loopback_only(cluster):
    """The scheduler, workers, nannies and the dashboard's HTTP server (which dask serves even
    without bokeh, for its health and metrics routes) bind 127.0.0.1, never every interface."""
    listening = {
        (p.pid, c.laddr.ip, c.laddr.port)
        for p in cluster_processes(cluster)
        for c in p.net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN
    }
    dashboard = cluster.client.scheduler_info()["services"]["dashboard"]
    scheduler_pid = cluster.client.run_on_scheduler(os.getpid)
    assert {(pid, port) for pid, _, port in listening} >= {(scheduler_pid, dashboard)}
    assert len(listening) >= 2 + 2 * 2  # the scheduler's two, each worker's and each nanny's
    assert {ip for _, ip, _ in listening} <= LOOPBACK, sorted(listening)


def mlp() -> nn.Module:
    ag.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3)).to(dtype="float64")


def train(backend: backends.Backend, steps: int, between=lambda step: None) -> tuple[list[float], list[np.ndarray]]:
    """`steps` AdamW steps of the MLP, `between(step)` called before each; the losses and weights."""
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((50, 5)), rng.integers(0, 3, 50)
    with backends.use(backend):
        model = mlp()
        opt = optim.AdamW(model.parameters(), lr=1e-2)
        losses = []
        for step in range(steps):
            between(step)
            loss = F.cross_entropy(model(ag.tensor(x)), ag.tensor(y))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, [p.detach().numpy() for p in model.parameters()]


def assert_same_training(got: tuple, expected: tuple) -> None:
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12, atol=0)
    for mine, theirs in zip(got[1], expected[1]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-14)


RESTARTS = {  # before step k: how every worker is restarted
    1: kill_every_worker,  # as a nanny restarts a worker over its memory limit
    2: lambda b: b.client.restart_workers(list(dask_workers(b))),
    3: kill_every_worker,
}


def test_parameters_survive_repeated_worker_restarts(cluster):
    """Three restarts of every worker, one before each step but the first: the losses and
    weights of the same steps on dask's threads (the persisted parameters and optimizer state
    are made again from their values)."""
    expected = train(dask_backend.create(None), 4)
    seen = []

    def restart(step: int) -> None:
        if step in RESTARTS:
            before = dask_workers(cluster)
            RESTARTS[step](cluster)
            seen.append(not dask_workers(cluster) & before)

    got = train(cluster, 4, between=restart)
    assert seen == [True] * 3, "the workers were not all restarted"
    assert_same_training(got, expected)


def test_parameters_whose_futures_are_cancelled_are_sent_again_from_their_values(cluster):
    """What ``client.restart()`` does to every future (cancelled, forgotten by the scheduler),
    done to the persisted parameters and optimizer state before each step but the first: the
    computations that need them send the tasks that make them from their values instead."""
    from distributed import Future

    expected = train(dask_backend.create(None), 3)
    client = cluster.client

    def cancel_every_future(step: int) -> None:
        if step:
            futures = [Future(key, client) for key in list(client.futures)]
            assert futures
            client.cancel(futures)
            assert all(f.cancelled() for f in futures)

    assert_same_training(train(cluster, 3, between=cancel_every_future), expected)


# --- a scheduler lost mid-training, in a process of its own ------------------------------------
TRAIN_UNTIL_LOST = textwrap.dedent(
    """
    import os, sys, numpy as np
    import autograd_core as ag, backends, nn, optim
    import nn.functional as F
    from backends.dask import SchedulerLostError

    backend = backends.get("dask", sys.argv[1])
    with backends.use(backend):
        print("scheduler", backend.client.run_on_scheduler(os.getpid), backend.scheduler_address, flush=True)
        ag.manual_seed(0)
        model = nn.Linear(5, 3)
        opt = optim.AdamW(model.parameters(), lr=1e-2)
        x = ag.tensor(np.random.default_rng(0).standard_normal((64, 5)).astype("float32"))
        y = ag.tensor(np.arange(64) % 3)
        try:
            for step in range(100_000):
                loss = F.cross_entropy(model(x), y)  # computes: the targets' range is checked
                opt.zero_grad()
                loss.backward()
                opt.step()
                if step == 1:
                    print("training", flush=True)
        except SchedulerLostError as e:
            print("lost:", e, flush=True)
            raise SystemExit(3)
    """
)


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start(*command: str, **options) -> subprocess.Popen:
    """`command` in a session of its own, importing this project, with AUTOGRAD_DASK_TIMEOUT=TIMEOUT_S."""
    path = os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "AUTOGRAD_DASK_TIMEOUT": str(TIMEOUT_S), "PYTHONPATH": path}
    return subprocess.Popen(command, env=env, cwd=ROOT, start_new_session=True, **options)


def stop(process: subprocess.Popen) -> None:
    """Kill `process` and every process it started, even those it left behind when it ended
    (its process group, `start` made it lead one)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def train_until_lost(device: str) -> tuple[subprocess.Popen, int, str]:
    """The training subprocess on `device`, once it has done two steps; its scheduler's pid and address."""
    trainer = start(sys.executable, "-c", TRAIN_UNTIL_LOST, device, stdout=subprocess.PIPE, text=True)
    try:
        _, pid, address = trainer.stdout.readline().split()
        assert trainer.stdout.readline() == "training\n"
    except BaseException:
        stop(trainer)
        raise
    return trainer, int(pid), address


def assert_lost_and_exited(trainer: subprocess.Popen, address: str) -> None:
    """The training subprocess raised SchedulerLostError naming `address` and the timeout, and
    exited (close at exit included) without hanging."""
    try:
        out, _ = trainer.communicate(timeout=EXIT_BOUND_S)
    except subprocess.TimeoutExpired:
        stop(trainer)
        pytest.fail(f"the training process still ran {EXIT_BOUND_S} s after its scheduler was killed")
    assert trainer.returncode == 3, out
    (lost,) = [line for line in out.splitlines() if line.startswith("lost:")]
    assert f"lost the dask scheduler at {address}" in lost
    assert f"AUTOGRAD_DASK_TIMEOUT={TIMEOUT_S} s" in lost and "checkpoint" in lost


def test_an_external_scheduler_killed_mid_training_is_a_clear_error_and_the_program_exits():
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    processes = [
        start(
            sys.executable,
            "-m",
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--dashboard-address",
            "127.0.0.1:0",
        ),
    ]
    try:
        processes.append(
            start(
                sys.executable,
                "-m",
                "distributed.cli.dask_worker",
                address,
                "--nthreads",
                "1",
                "--no-nanny",
                "--host",
                "127.0.0.1",
                "--dashboard-address",
                "127.0.0.1:0",
            )
        )
        trainer, _, reported = train_until_lost(address)
        processes.append(trainer)
        assert reported == address
        processes[0].kill()
        assert_lost_and_exited(trainer, address)
    finally:
        for p in processes:
            stop(p)


@pytest.mark.parametrize(
    "fault",
    [signal.SIGKILL, signal.SIGSTOP],  # stopped: its connections stay open, as when the network cuts it off
    ids=["killed", "stopped"],
)
def test_a_local_clusters_scheduler_lost_mid_training_is_a_clear_error_and_nothing_is_left(fault):
    trainer, scheduler, address = train_until_lost("local:1")
    try:
        cluster = [
            p
            for p in psutil.Process(trainer.pid).children(recursive=True)
            if "resource_tracker" not in str(p.cmdline())
        ]
        assert scheduler in {p.pid for p in cluster} and len(cluster) == 3  # the scheduler, a nanny, its worker
        os.kill(scheduler, fault)
        assert_lost_and_exited(trainer, address)
        _, alive = psutil.wait_procs(cluster, timeout=30)
        assert not alive, f"processes of the cluster left behind: {alive}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(scheduler, signal.SIGCONT)
        stop(trainer)


# --- closing ------------------------------------------------------------------------------------
def test_closing_a_cluster_twice_does_nothing_more_and_its_tensors_say_it_is_closed():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AUTOGRAD_DASK_WORKER_MEMORY", "1GiB")
        backend = backends.get("dask", "local:1")
    processes = cluster_processes(backend)
    with backends.use(backend):
        made_before = ag.tensor([1.0, 2.0]) * 2
        assert made_before.tolist() == [2.0, 4.0]
    backend.close()
    backend.close()
    _, alive = psutil.wait_procs(processes, timeout=30)
    assert not alive and backend.describe() == "closed: local:1"
    assert ("dask", "local:1") not in backends._instances
    with pytest.raises(RuntimeError, match=r"was closed \(backend.close\(\)\).*before closing"):
        made_before.numpy()
