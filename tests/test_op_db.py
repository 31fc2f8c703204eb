"""PyTorch's op database through `autograd_core.torch`: each entry's float64 samples give
torch's values and vector-Jacobian products (`tools/op_db.py` runs them).

By default each entry runs on one of the selected backends, in rotation, on its first two
samples; ``--op-db full`` runs every entry on every selected backend on eight samples, as
``tools/op_db.py`` does for the tables under ``results/op-db-*.json``. An entry those tables
record as failing on a backend is an expected failure there, with the recorded reason; every
other entry must pass.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import op_db  # noqa: E402

RESULTS = ROOT / "results"
PARTIAL = ("dask", "cubed", "ndonnx")  # in the full run only


def recorded_failures(backend: str) -> dict[str, str]:
    """The entries `results/op-db-<backend>.json` records as not passing, with the reason."""
    path = RESULTS / f"op-db-{backend}.json"
    if not path.exists():
        return {}
    entries = json.loads(path.read_text())["entries"]
    return {e["entry"]: f"{e['status']}: {e['detail']}" for e in entries if e["status"] != "pass"}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "op_db_case" not in metafunc.fixturenames:
        return
    full = metafunc.config.getoption("--op-db") == "full"
    backends = [b for b in metafunc.config.selected_backends if full or b not in PARTIAL]
    entries = op_db.op_db_entries()
    cases = []
    for i, op in enumerate(entries if backends else ()):
        chosen = backends if full else [backends[i % len(backends)]]
        cases += [pytest.param((op, b, 8 if full else 2), id=f"{op_db.entry_name(op)}-{b}") for b in chosen]
    metafunc.parametrize("op_db_case", cases)


def test_entry_matches_torch(op_db_case: tuple) -> None:
    import autograd_core.torch as ns
    import backends

    op, backend_name, samples = op_db_case
    name = op_db.entry_name(op)
    try:
        backend = backends.get(backend_name)
    except (backends.BackendUnavailableError, RuntimeError) as e:
        pytest.skip(f"backend {backend_name} unavailable: {e}")
    expected_failure = recorded_failures(backend_name).get(name)
    if expected_failure:
        pytest.xfail(f"recorded in results/op-db-{backend_name}.json: {expected_failure}")
    with backends.use(backend):
        outcome = op_db.run_entry(op, ns, samples)
    assert outcome.status in ("pass", "no_float64", "not_applicable"), f"{outcome.status}: {outcome.detail}"
