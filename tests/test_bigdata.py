"""examples/bigdata.py and the fullbatch bench workload, at tiny sizes: the data set is the
same wherever it is drawn, the example reaches the accuracy ceiling and writes its record on
numpy, on dask's threads and on a LocalCluster, and the bench's implementations agree."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import backends
from bench.impls import Ours, OursCluster
from bench.impls.ours import close_clusters
from bench.problems import FULLBATCH_HOST_ROWS, make_problem
from bench.progress import Progress
from bench.report import rate_summary, workload_report
from bench.runner import Settings, run
from bench.timing import Plan
from examples import bigdata

ROWS, CHUNK, STEPS = 24_000, 5_000, 40
ARGS = [
    "--rows",
    str(ROWS),
    "--chunk-rows",
    str(CHUNK),
    "--steps",
    str(STEPS),
    "--test-rows",
    "20000",
    "--lr",
    "0.1",
    "--quiet",
]
NEAR_CEILING = 0.03  # 40 full-batch steps of a 65-parameter model get within 3 points of the ceiling


def _dask() -> None:
    pytest.importorskip("dask.array", reason="dask is not installed (pip install -e '.[dask]')")


def _run_example(tmp_path: Path, *extra: str) -> dict:
    out = tmp_path / "bigdata.json"
    bigdata.main([*ARGS, *extra, "--out", str(out)])
    record = json.loads(out.read_text())
    assert out.with_suffix(".png").stat().st_size > 0
    assert len(record["losses"]) == STEPS and record["rows"] == ROWS and record["client_peak_rss_bytes"] > 0
    assert len(record["client_rss_bytes"]) == STEPS
    return record


def test_memory_growth_is_the_slope_over_the_second_half_of_the_steps() -> None:
    start_up = [100, 900, 950]  # imports and caches: the first half, ignored
    assert bigdata.growth_per_step([*start_up, 990, 1000, 1010, 1020, 1030, 1040]) == pytest.approx(10.0)
    assert bigdata.growth_per_step([5, None, 7, 7]) == pytest.approx(0.0)
    assert bigdata.growth_per_step([5]) is None


@pytest.fixture(scope="module")
def numpy_record(tmp_path_factory: pytest.TempPathFactory) -> dict:
    with backends.use("numpy"):
        return _run_example(tmp_path_factory.mktemp("numpy"))


def test_rows_are_the_same_on_the_host_and_on_dask() -> None:
    _dask()
    import dask

    data = bigdata.SyntheticSet(rows=1_050, features=5, seed=3, chunk_rows=200)
    x, y = data.lazy()
    assert x.chunks == ((200,) * 5 + (50,), (5,))
    host_x, host_y = data.host()
    lazy_x, lazy_y = dask.compute(x, y, scheduler="threads")
    np.testing.assert_array_equal(lazy_x, host_x)
    np.testing.assert_array_equal(lazy_y, host_y)
    flipped = np.mean((host_x @ data.teacher() > 0) != host_y)
    assert abs(flipped - data.label_noise) < 0.04  # the labels are the teacher's, a tenth flipped


def test_other_seeds_and_streams_give_other_rows() -> None:
    base = bigdata.SyntheticSet(rows=100, features=4)
    for other in (
        bigdata.SyntheticSet(rows=100, features=4, seed=1),
        bigdata.SyntheticSet(rows=100, features=4, stream=1),
    ):
        assert not np.array_equal(base.host()[0], other.host()[0])


def test_example_reaches_the_ceiling_on_numpy(numpy_record: dict) -> None:
    r = numpy_record
    assert r["backend"] == "numpy" and r["workers"] == 0 and r["accuracy_ceiling"] == pytest.approx(0.9)
    assert r["losses"][-1] < 0.5 * r["losses"][0] + 0.2
    assert r["test_accuracy"] > r["accuracy_ceiling"] - NEAR_CEILING
    assert r["final_train_accuracy"] > r["accuracy_ceiling"] - NEAR_CEILING


def test_example_on_dask_threads_follows_numpy(tmp_path: Path, numpy_record: dict) -> None:
    _dask()
    with backends.use("dask"):
        r = _run_example(tmp_path)
    assert r["backend"] == "dask" and r["blocks"] == 5 and r["dashboard"] is None
    np.testing.assert_allclose(r["losses"], numpy_record["losses"], rtol=1e-5)
    assert r["test_accuracy"] == pytest.approx(numpy_record["test_accuracy"], abs=1e-4)


def test_example_on_cubed_follows_numpy(tmp_path: Path, numpy_record: dict) -> None:
    """The rows drawn on the host, then read chunk by chunk by cubed's tasks on its threads."""
    pytest.importorskip("cubed", reason="cubed is not installed (pip install -e '.[cubed]')")
    with backends.use("cubed"):
        r = _run_example(tmp_path)
    assert r["backend"] == "cubed" and r["workers"] == 0
    np.testing.assert_allclose(r["losses"], numpy_record["losses"], rtol=1e-5)
    assert r["test_accuracy"] == pytest.approx(numpy_record["test_accuracy"], abs=1e-4)


def test_example_on_a_local_cluster_follows_numpy(tmp_path: Path, numpy_record: dict) -> None:
    _dask()
    pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install -e '.[dask]')")
    backend = backends.get("dask", "local:2")
    try:
        with backends.use(backend):
            r = _run_example(tmp_path, "--persist", "--batch-rows", "20000")
    finally:
        backend.close()
    assert r["workers"] == 2 and r["scheduler"].startswith("tcp://")
    assert r["dashboard"].startswith("http://127.0.0.1:")  # the LocalCluster serves one on a free port
    assert r["persisted"] and r["batch_rows"] == 20_000
    assert r["test_accuracy"] > r["accuracy_ceiling"] - NEAR_CEILING
    with backends.use("numpy"):
        host = bigdata.main([*ARGS, "--batch-rows", "20000", "--out", str(tmp_path / "host.json")])
    np.testing.assert_allclose(r["losses"], host["losses"], rtol=1e-5)


def test_large_batches_take_the_rows_in_order() -> None:
    assert [bigdata.rows_of(s, 10, 4) for s in range(4)] == [slice(0, 4), slice(4, 8), slice(8, 10), slice(0, 4)]
    assert bigdata.rows_of(7, 10, 0) == bigdata.rows_of(7, 10, 10) == slice(0, 10)


def test_fullbatch_workload_agrees_across_implementations() -> None:
    _dask()
    pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install -e '.[dask]')")
    settings = Settings(
        workloads=("fullbatch",),
        fullbatch_rows=(3_000,),
        plan=Plan(warmup=1, min_steps=3, min_time=0.0, max_steps=3, check_after=2),
    )
    try:
        result = run(
            settings, [Ours("numpy"), OursCluster(1), OursCluster(2)], Progress(1, live=False), limit_threads=False
        )
    finally:
        close_clusters()
    assert not result.skipped and not result.warnings
    records = {r["impl"]: r for r in result.records}
    assert set(records) == {"ours:numpy", "ours:dask@local:1", "ours:dask@local:2"}
    values = [r["final_value"] for r in records.values()]
    np.testing.assert_allclose(values, values[0], rtol=1e-5)
    assert all(r["check_ok"] for r in records.values())
    table = workload_report(result.records, "fullbatch")
    assert "rows per second" in table and "3,000 rows" in table
    assert "(" in rate_summary(result.records)[0] and "x 1 worker" in rate_summary(result.records)[0]


def test_host_implementations_leave_the_largest_set_to_dask() -> None:
    problem = make_problem("fullbatch", FULLBATCH_HOST_ROWS + 1)
    with pytest.raises(ValueError, match="dask workers only"):
        Ours("numpy").setup(problem)


def test_trace_memory_finds_a_planted_leak(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tools/trace_memory.py names the line that keeps 100 kB per step, and counts it."""
    from tools import trace_memory

    kept = []
    train_step = bigdata.train_step

    def leaky_step(*args: object) -> tuple[float, float]:
        kept.append(bytearray(100_000))
        return train_step(*args)

    monkeypatch.setattr(bigdata, "train_step", leaky_step)
    with backends.use("numpy"):
        result = trace_memory.trace(2, 6, [*ARGS, "--out", str(tmp_path / "bigdata.json")], bigdata=bigdata)
    assert result["steps"] == (2, 6) and len(kept) == 6
    assert 100_000 <= result["python_growth_bytes_per_step"] < 150_000
    (leak, *_) = result["grown"]
    assert 400_000 <= leak["bytes"] < 401_000  # the 4 bytearrays kept between the steps, and their headers
    assert any("kept.append(bytearray(100_000))" in line for line in leak["traceback"])
    assert result["rss_bytes"][1] > 0
