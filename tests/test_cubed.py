"""The cubed backend (a plugin, backends/cubed.py): each route around a cubed 0.27 defect
against numpy, an MLP's loss and gradients and AdamW's losses equal to numpy's, a plan past
``allowed_mem`` refused before any task runs, and intermediate storage in a temporary folder."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

cubed = pytest.importorskip("cubed")

import autograd_core as ag  # noqa: E402
import backends  # noqa: E402
import nn  # noqa: E402
import nn.functional as F  # noqa: E402
import optim  # noqa: E402
from autograd_core.graph.namespace import raw_namespace  # noqa: E402
from backends import cubed as cubed_backend  # noqa: E402
from helpers import assert_close  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _cubed_selected(request: pytest.FixtureRequest) -> None:
    if "cubed" not in request.config.selected_backends:
        pytest.skip("cubed is not among the selected backends (--backend): these tests are the cubed backend's own")


@pytest.fixture(scope="module")
def b() -> backends.Backend:
    return backends.get("cubed")


@pytest.fixture
def on_cubed(b: backends.Backend) -> backends.Backend:
    with backends.use(b):
        yield b


def on_cubed_and_numpy(run):
    """`run()` on the cubed backend, then on numpy."""
    with backends.use("cubed"):
        on_cubed = run()
    with backends.use("numpy"):
        return on_cubed, run()


def chunked(b: backends.Backend, host: np.ndarray, chunks: tuple[int, ...]) -> cubed.Array:
    """`host` on cubed in `chunks`, so that indexing and reductions cross chunk boundaries."""
    return cubed.from_array(host, chunks=chunks, spec=b.spec)


GRID = np.arange(24.0).reshape(4, 6)


# --- take: an index whose result has the input's shape came back as the input ----------------------
@pytest.mark.parametrize("chunks", [(4, 6), (3, 4)])
@pytest.mark.parametrize(
    ("index", "axis"),
    [
        ([2, 2, 0, 1], 0),  # repeats, as long as the axis: cubed returns x unchanged
        ([3, 2, 1, 0], 0),  # a reversal
        ([5, 5, 0, 1, 2, 2], 1),
        ([0, 1, 2, 3, 4, 5], 1),  # the identity
        ([-1, 0, 0, 1, 2, 3], 1),  # negative indices count from the end
        ([1, 1], 0),
        ([0, 5, 5, 5, 5, 5, 5, 5], 1),
    ],
)
def test_take_equals_numpy(b: backends.Backend, chunks: tuple[int, ...], index: list[int], axis: int) -> None:
    ns = raw_namespace(b)
    taken = ns.take(chunked(b, GRID, chunks), b.asarray(np.array(index)), axis=axis)
    np.testing.assert_array_equal(b.to_numpy(taken), np.take(GRID, index, axis=axis))


def test_take_of_a_flattened_array_equals_numpy(b: backends.Backend) -> None:
    ns, index = raw_namespace(b), np.arange(24)[::-1]
    np.testing.assert_array_equal(b.to_numpy(ns.take(chunked(b, GRID, (2, 6)), index)), np.take(GRID, index))


def test_gather_and_its_gradient_with_repeated_rows_equal_numpy(b: backends.Backend) -> None:
    """Embedding-style rows picked with repeats, and the scatter-add of the gradient."""
    index, weights = np.array([2, 0, 2, 3]), np.arange(4.0 * 6).reshape(4, 6) / 7

    def values_and_gradient() -> tuple[np.ndarray, np.ndarray]:
        x = ag.tensor(GRID, requires_grad=True)
        picked = x[ag.tensor(index)]
        (picked * ag.tensor(weights)).sum().backward()
        return picked.detach().numpy(), x.grad.numpy()

    with backends.use(b):
        on_cubed = values_and_gradient()
    with backends.use("numpy"):
        on_numpy = values_and_gradient()
    for got, want in zip(on_cubed, on_numpy):
        np.testing.assert_array_equal(got, want)


# --- negative slice steps: refused by cubed; item assignment: missing --------------------------------
KEYS = [
    (slice(None, None, -1),),
    (slice(None), slice(None, None, -2)),
    (slice(3, 0, -2), None, 1),
    (Ellipsis, slice(4, None, -3)),
    (slice(0, 3, -1),),  # empty
    (1, slice(None, None, -1)),
    (slice(1, 3), slice(5, 0, -1)),
]


@pytest.mark.parametrize("key", KEYS, ids=str)
def test_negative_steps_values_and_gradients_equal_numpy(key: tuple) -> None:
    weights = np.random.default_rng(0).standard_normal(GRID[key].shape)

    def values_and_gradient() -> tuple[np.ndarray, np.ndarray]:
        x = ag.tensor(GRID, requires_grad=True)
        out = x[key]
        (out * ag.tensor(weights)).sum().backward()
        return out.detach().numpy(), x.grad.numpy()

    for got, want in zip(*on_cubed_and_numpy(values_and_gradient)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("key", [(slice(1, 3), 2), (slice(None, None, 2), slice(1, None, 3)), (0,)], ids=str)
def test_basic_index_gradient_without_item_assignment_equals_numpy(b: backends.Backend, key: tuple) -> None:
    """The scatter of a slice's gradient into zeros, which cubed cannot assign into."""
    with backends.use(b):
        x = ag.tensor(GRID, requires_grad=True)
        x[key].sum().backward()
    expected = np.zeros_like(GRID)
    expected[key] = 1.0
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_convolution_gradients_without_item_assignment_equal_numpy() -> None:
    """The gradient of a strided, dilated convolution's input adds windows back (col2im)."""
    rng = np.random.default_rng(2)
    x_host, w_host = rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((4, 3, 2, 3))

    def gradients() -> list[np.ndarray]:
        x, w = ag.tensor(x_host, requires_grad=True), ag.tensor(w_host, requires_grad=True)
        (F.conv2d(x, w, stride=(2, 1), dilation=(1, 2), padding=1) ** 2).sum().backward()
        return [x.grad.numpy(), w.grad.numpy()]

    for got, want in zip(*on_cubed_and_numpy(gradients)):
        assert_close(got, want)


# --- clip with one bound: fails when computed ---------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize(("low", "high"), [(3, None), (None, 7), (3, 7), (None, None)])
def test_clip_with_one_bound_equals_numpy(b: backends.Backend, dtype: str, low: int | None, high: int | None) -> None:
    host = np.array([-np.inf, 0, 3, 5, 9, np.inf, np.nan]) if dtype != "int64" else np.arange(-2, 11)
    host = host.astype(dtype)
    got = b.to_numpy(raw_namespace(b).clip(b.asarray(host), low, high))
    want = host if low is None and high is None else np.clip(host, low, high)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_clamp_with_one_array_bound_and_its_gradient_equal_numpy() -> None:
    bound = np.array([0.5, 2.0, -1.0, 9.0])

    def values_and_gradient() -> tuple[np.ndarray, np.ndarray]:
        x = ag.tensor(np.array([1.0, 1.0, -3.0, 4.0]), requires_grad=True)
        out = ag.clip(x, min=ag.tensor(bound))
        out.sum().backward()
        return out.detach().numpy(), x.grad.numpy()

    for got, want in zip(*on_cubed_and_numpy(values_and_gradient)):
        np.testing.assert_array_equal(got, want)


# --- take_along_axis: missing -----------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take_along_axis_equals_numpy(b: backends.Backend, axis: int) -> None:
    rng = np.random.default_rng(1)
    n = GRID.shape[axis]
    shape = list(GRID.shape)
    shape[axis] = 5
    index = rng.integers(-n, n, shape)
    got = raw_namespace(b).take_along_axis(chunked(b, GRID, (3, 4)), b.asarray(index), axis=axis)
    np.testing.assert_array_equal(b.to_numpy(got), np.take_along_axis(GRID, index % n, axis=axis))


def test_a_broadcast_takes_automatic_chunks_not_one_row_each(b: backends.Backend) -> None:
    out = b.xp.broadcast_to(b.asarray(np.float32(2.0)), (100_000, 3))
    assert out.numblocks == (1, 1)  # cubed's own: 100,000 chunks of one row
    np.testing.assert_array_equal(b.to_numpy(out), np.full((100_000, 3), 2.0, np.float32))


def test_functions_cubed_lacks_run_on_the_computed_values(b: backends.Backend) -> None:
    host = np.array([3.0, 1.0, 2.0, 1.0])
    x = b.asarray(host)
    np.testing.assert_array_equal(b.to_numpy(b.xp.argsort(x, stable=True)), np.argsort(host, stable=True))
    np.testing.assert_array_equal(b.to_numpy(b.xp.sort(x, descending=True)), np.sort(host)[::-1])
    np.testing.assert_array_equal(b.to_numpy(b.xp.nonzero(x > 1)[0]), np.nonzero(host > 1)[0])
    values, counts = b.xp.unique_counts(x)
    assert (b.to_numpy(values).tolist(), b.to_numpy(counts).tolist()) == ([1.0, 2.0, 3.0], [2, 1, 1])


# --- training: numpy's numbers ----------------------------------------------------------------------------
def mlp_run(steps: int, dtype: str) -> tuple[list[float], list[np.ndarray]]:
    """An MLP's cross-entropy loss per AdamW step, and the gradients of the first step."""
    ag.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)).to(dtype=getattr(ag, dtype))
    opt = optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    rng = np.random.default_rng(0)
    x, y = rng.random((32, 8)).astype(dtype), rng.integers(0, 3, 32)
    losses, gradients = [], []
    for _ in range(steps):
        loss = F.cross_entropy(model(ag.tensor(x)), ag.tensor(y))
        opt.zero_grad()
        loss.backward()
        gradients = gradients or [p.grad.numpy() for p in model.parameters()]
        opt.step()
        losses.append(loss.item())
    return losses, gradients


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mlp_loss_and_gradients_equal_numpy(on_cubed: backends.Backend, dtype: str) -> None:
    (loss,), gradients = mlp_run(1, dtype)
    with backends.use("numpy"):
        (expected,), expected_gradients = mlp_run(1, dtype)
    assert_close(loss, expected, dtype)  # the batch's sums may be added in another order
    for got, want in zip(gradients, expected_gradients):
        assert_close(got, want, dtype)


def test_adamw_steps_give_numpy_losses(on_cubed: backends.Backend) -> None:
    losses, _ = mlp_run(4, "float64")
    with backends.use("numpy"):
        expected, _ = mlp_run(4, "float64")
    assert_close(losses, expected)
    assert losses[-1] < losses[0]


def test_persist_starts_the_next_plan_from_values(b: backends.Backend) -> None:
    """An optimizer step's parameters are arrays of values, not the step's whole plan."""
    (kept,) = b.persist([b.xp.sum(b.asarray(np.ones((5, 4))), axis=0) * 2])
    assert len(kept._plan.dag) == len(b.asarray(np.ones(4))._plan.dag)
    np.testing.assert_array_equal(b.to_numpy(kept), np.full(4, 10.0))


# --- allowed_mem: a plan past it is refused before it runs -------------------------------------------------
class TaskCounter(cubed.Callback):
    def __init__(self) -> None:
        self.tasks = 0

    def on_task_end(self, event: object) -> None:
        self.tasks += 1


def test_a_plan_past_allowed_mem_is_refused_before_any_task_runs() -> None:
    with cubed.config.set({"spec.allowed_mem": "300MB"}):
        small = cubed_backend.create(None)
    try:
        assert small.spec.allowed_mem == 300_000_000
        with backends.use(small):
            x = ag.tensor(np.ones((3000, 3000), np.float32))  # one 36 MB chunk
            product = (x @ x).sum()  # planned, not run
            counter = TaskCounter()
            with counter, pytest.raises(cubed_backend.AllowedMemoryError, match=r"exceeds allowed_mem \(300.0 MB\)"):
                product.item()
        assert counter.tasks == 0
        assert os.listdir(small.spec.work_dir) == []  # nothing was stored
        with backends.use(small):
            assert ag.tensor(np.ones((300, 300), np.float32)).sum().item() == 90_000  # a small plan runs
    finally:
        small.close()


# --- storage, configuration and registration ---------------------------------------------------------------
def test_intermediate_arrays_go_to_a_temporary_folder_deleted_on_close() -> None:
    mine = cubed_backend.create(None)
    work_dir = mine.spec.work_dir
    before = set(os.listdir(os.getcwd()))
    with backends.use(mine):
        x = chunked(mine, np.arange(1000.0).reshape(100, 10), (10, 10))
        assert mine.to_numpy(mine.xp.sum(x @ mine.xp.matrix_transpose(x))) == np.sum(
            (lambda a: a @ a.T)(np.arange(1000.0).reshape(100, 10))
        )
    assert os.listdir(work_dir), "a multi-chunk matmul and sum store intermediate arrays"
    assert set(os.listdir(os.getcwd())) == before
    mine.close()
    assert not os.path.exists(work_dir)


def test_a_configured_work_dir_is_used_and_kept(tmp_path: object) -> None:
    with cubed.config.set({"spec.work_dir": str(tmp_path), "spec.allowed_mem": "1GB"}):
        mine = cubed_backend.create(None)
    assert (mine.spec.work_dir, mine.spec.allowed_mem) == (str(tmp_path), 10**9)
    assert "allowed_mem 1 GB" in mine.describe()
    mine.close()
    assert os.path.isdir(str(tmp_path))


def test_a_device_names_an_executor() -> None:
    single = cubed_backend.create("single-threaded")
    try:
        assert single.spec.executor_name == "single-threaded"
        assert single.to_numpy(single.asarray(np.arange(3.0)) + 1).tolist() == [1.0, 2.0, 3.0]
    finally:
        single.close()
    with pytest.raises(ValueError, match="use one of cubed's executors"):
        cubed_backend.create("cuda")


@pytest.mark.skipif(importlib.util.find_spec("lithops") is not None, reason="lithops is installed here")
def test_an_executor_whose_library_is_missing_is_refused_saying_what_to_install() -> None:
    with pytest.raises(RuntimeError, match=r"pip install 'cubed\[lithops\]'"):
        cubed_backend.create("lithops")


def test_a_bad_memory_setting_is_refused_naming_the_setting() -> None:
    with cubed.config.set({"spec.allowed_mem": "lots"}), pytest.raises(ValueError, match="CUBED_SPEC__ALLOWED_MEM"):
        cubed_backend.create(None)


def test_without_cubed_the_backend_is_unavailable_saying_what_to_install() -> None:
    code = "import sys; sys.modules['cubed'] = None; import backends; print(backends.available()['cubed'])"
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root).stdout
    assert "needs a library that is not installed" in out and "pip install -e '.[cubed]'" in out


def test_registered_as_a_plugin_not_a_builtin() -> None:
    assert "cubed" in backends.known()
    assert "cubed" not in backends.BUILTINS
    assert type(backends.get("cubed")).__module__ == "backends.cubed"
