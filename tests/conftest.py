"""The test matrix: every test that takes the `backend` fixture runs once per backend.

pytest                          # every known backend; unavailable ones skip with the reason
pytest --backend torch,jax      # a subset (AUTOGRAD_BACKEND=torch,jax works too)
"""

from __future__ import annotations

import os
import zlib

import pytest

import backends


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend", default=None, help="comma-separated backends to test (default: $AUTOGRAD_BACKEND, else all known)"
    )
    parser.addoption(
        "--op-db",
        choices=("sample", "full"),
        default="sample",
        help="tests/test_op_db.py: each entry on one backend, two samples (sample), or on every backend, eight (full)",
    )
    parser.addoption(
        "--every-backend",
        action="store_true",
        help="run the ROTATED_MODULES' cases on every backend (by default each case runs on one, in rotation)",
    )
    parser.addoption(
        "--op-matrix",
        action="store_true",
        help="run every test module on the partial backends (dask, cubed, ndonnx; by default each takes its modules)",
    )


# The dask backend builds a task graph per op and lacks parts of the standard (take_along_axis,
# linalg.eigh...): in the default run it takes only these modules; the rest skip on it, saying how
# to run them.
DASK_MODULES = {
    "test_backends.py",
    "test_cross_backend.py",
    "test_dask.py",
    "test_custom_ops.py",
    "test_custom_op_swish.py",
    "test_func.py",
    "test_vmap.py",
    "test_torch_habits.py",
    "test_storage.py",
    "test_module_api.py",
    "test_grad_mode.py",
    "test_torch_numbers.py",
    "test_torch_methods.py",
    "test_empty_inputs.py",
    "test_float16.py",
    "test_odd_arrays.py",
    "test_pickling.py",
    "test_load_errors.py",
    "test_singular_points.py",
    "test_special.py",
    "test_scipy_stats_grad.py",
    "test_dask_faults.py",
    "test_safetensors.py",
    "test_nn_utils.py",
    "test_data_loading.py",
}
DASK_SKIPS = {
    "test_capability_flags_are_true": "dask arrays take item assignment (the Array object gets a new graph) but "
    "views taken before do not see it, so the backend declares mutable=False; "
    "tests/test_dask.py checks that",
    "test_cross_entropy_rows_matches_the_portable_default": "the portable default calls take_along_axis, which "
    "dask lacks; tests/test_dask.py checks dask's kernel "
    "against numpy's",
}
# `-m "not slow"` (the inner loop) leaves out the training runs, subprocess CLIs, clusters and
# the site build, and the backends that compile (jax) or schedule (dask) every op.
SLOW_MODULES = {
    "test_examples.py",
    "test_gpt.py",
    "test_lstm_char.py",
    "test_bench.py",
    "test_mnist_cnn.py",
    "test_bigdata.py",
    "test_dask.py",
    "test_cli.py",
    "test_docs_site.py",
    "test_threads.py",
    "test_dask_faults.py",
}
# cubed plans and runs a task graph per computation; ndonnx builds an ONNX graph per op and runs
# it through onnxruntime at every read. Each takes only its own modules in the default run.
CUBED_MODULES = {
    "test_backends.py",
    "test_cubed.py",
    "test_cross_backend.py",
    "test_custom_ops.py",
    "test_func.py",
    "test_torch_methods.py",
    "test_odd_arrays.py",
    "test_load_errors.py",
}
# keyed by a test's name, or by its name with its parameters for one case of it
_CUBED_PROD = (
    "cubed 0.27 refuses cumulative_prod(include_initial=True) (NotImplementedError), which prod's gradient uses"
)
_CUBED_NORM = "cubed 0.27's linalg has no vector_norm"
_CUBED_DIAGONAL = "cubed 0.27's linalg has no diagonal"
_CUBED_UNIQUE = (
    "cubed 0.27's searchsorted makes its arrays under cubed's default spec, not the arrays' own (ValueError: "
    "Arrays must have same spec), and its take of the inverse fails on irregular chunks"
)
CUBED_SKIPS = {
    "test_method_matches_pytorch[cubed-prod]": _CUBED_PROD,
    "test_reductions_over_random_shapes_and_dims[cubed-prod]": _CUBED_PROD,
    "test_method_matches_pytorch[cubed-norm]": _CUBED_NORM,
    "test_method_matches_pytorch[cubed-norm_p1_dim]": _CUBED_NORM,
    "test_method_matches_pytorch[cubed-norm_p2_dim_keepdim]": _CUBED_NORM,
    "test_method_matches_pytorch[cubed-norm_inf]": _CUBED_NORM,
    "test_reductions_over_random_shapes_and_dims[cubed-norm]": _CUBED_NORM,
    "test_method_matches_pytorch[cubed-unique]": _CUBED_UNIQUE,
    "test_method_matches_pytorch[cubed-unique_inverse_counts]": _CUBED_UNIQUE,
    "test_method_matches_pytorch[cubed-unique_ints]": _CUBED_UNIQUE,
    "test_method_matches_pytorch[cubed-diag_of_matrix]": _CUBED_DIAGONAL,
    "test_method_matches_pytorch[cubed-diagonal]": _CUBED_DIAGONAL,
    "test_method_matches_pytorch[cubed-diagonal_offset]": _CUBED_DIAGONAL,
    "test_method_matches_pytorch[cubed-trace]": _CUBED_DIAGONAL,
    "test_method_matches_pytorch[cubed-cross]": "cubed 0.27's linalg has no cross",
    "test_method_matches_pytorch[cubed-bmm]": "cubed 0.27's automatic chunking fails on a matmul of stacks of "
    "matrices (IndexError in its vendored normalize_chunks)",
}
NDONNX_MODULES = {"test_backends.py"}
NDONNX_SKIPS = {
    "test_capability_flags_are_true": "ndonnx arrays take item assignment (the Array object gets a new graph node) "
    "but views taken before do not see it, so the backend declares mutable=False",
}
# A backend here runs only its modules in the default run; the rest skip, saying how to run them.
# Its skips (by test name, or name with parameters) hold in every run.
PARTIAL_BACKENDS = {
    "dask": (
        DASK_MODULES,
        DASK_SKIPS,
        "the op matrix on dask is run by `python -m pytest --backend dask --op-matrix` (results/dask-op-matrix.md)",
    ),
    "cubed": (
        CUBED_MODULES,
        CUBED_SKIPS,
        "the op matrix on cubed is run by `python -m pytest --backend cubed --op-matrix`",
    ),
    "ndonnx": (
        NDONNX_MODULES,
        NDONNX_SKIPS,
        "the op matrix on ndonnx is run by `python -m pytest --backend ndonnx --op-matrix`",
    ),
}
SLOW_BACKENDS = {"jax", "dask", "cubed", "ndonnx"}


def pytest_configure(config: pytest.Config) -> None:
    # torch's compiled steps run their traced graphs uncompiled: inductor takes seconds a graph,
    # and the graph is the same; the tests that check inductor's numbers ask for it by name.
    os.environ.setdefault("AUTOGRAD_TORCH_COMPILER", "none")
    # xdist's workers inherit the environment, where AUTOGRAD_BACKEND is changed below: they read
    # the selection the controller made from AUTOGRAD_TEST_BACKENDS.
    chosen = (
        config.getoption("--backend")
        or os.environ.get("AUTOGRAD_TEST_BACKENDS")
        or os.environ.get("AUTOGRAD_BACKEND")
        or ""
    ).strip()
    names = [backends.canonical(n) for n in chosen.split(",")] if chosen else backends.known()
    unknown = [n for n in names if n not in backends.known()]
    if unknown:
        raise pytest.UsageError(f"unknown backend(s) {unknown}; known: {backends.known()}")
    config.selected_backends = names
    os.environ["AUTOGRAD_TEST_BACKENDS"] = ",".join(names)
    # Code that asks for the current backend outside the fixture gets the first selected one
    # that runs here; when none does, every test is skipped with the reasons.
    reasons = {}
    for name in names:
        try:
            backends.get(name)
        except (backends.BackendUnavailableError, RuntimeError) as e:
            reasons[name] = str(e)
            continue
        os.environ["AUTOGRAD_BACKEND"] = name
        break
    config.no_backend_reason = (
        None if len(reasons) < len(names) else "; ".join(f"backend {n} unavailable: {r}" for n, r in reasons.items())
    )


# The PyTorch-family sweeps (thousands of cases against torch) and the ported models: by default each case runs on one
# of the run's backends, chosen by the case, so every backend takes a share; --every-backend runs
# them all everywhere.
ROTATED_MODULES = {
    "test_torch_core.py",
    "test_torch_shapes.py",
    "test_torch_random.py",
    "test_torch_functional.py",
    "test_torch_linalg.py",
    "test_torch_special_fft.py",
    "test_optim_torch_family.py",
    "test_ported_models.py",
    "test_data_loading.py",
}


def _rotate(config: pytest.Config, item: pytest.Item) -> None:
    """Skip `item` unless its backend is the one its case falls to (see ROTATED_MODULES)."""
    params = item.callspec.params if hasattr(item, "callspec") else {}
    backends_here = [b for b in config.selected_backends if b not in PARTIAL_BACKENDS]
    if params.get("backend") not in backends_here or len(backends_here) < 2:
        return
    case = f"{item.path.name}::{item.originalname}" + repr(
        sorted((k, repr(v)) for k, v in params.items() if k != "backend")
    )
    chosen = backends_here[zlib.crc32(case.encode()) % len(backends_here)]
    if params["backend"] != chosen:
        item.add_marker(
            pytest.mark.skip(reason=f"this case runs on {chosen} in the default run; --every-backend runs it here")
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--every-backend"):
        for item in items:
            if item.path.name in ROTATED_MODULES:
                _rotate(config, item)
    if config.no_backend_reason:
        skip = pytest.mark.skip(reason=config.no_backend_reason)
        for item in items:
            item.add_marker(skip)
    whole_matrix = config.getoption("--op-matrix")
    for item in items:
        backend = getattr(item, "callspec", None) and item.callspec.params.get("backend")
        if item.path.name in SLOW_MODULES or backend in SLOW_BACKENDS:
            item.add_marker(pytest.mark.slow)
        if backend not in PARTIAL_BACKENDS:
            continue
        modules, skips, reason = PARTIAL_BACKENDS[backend]
        if (name := item.name if item.name in skips else item.originalname) in skips:
            item.add_marker(pytest.mark.skip(reason=skips[name]))
        elif item.path.name not in modules and not whole_matrix:
            item.add_marker(pytest.mark.skip(reason=reason))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames or "float64_backend" in metafunc.fixturenames:
        names = metafunc.config.selected_backends
        metafunc.parametrize("backend", names, ids=names, indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest):
    """The Backend under test, made current for the duration of the test."""
    try:
        chosen = backends.get(request.param)
    except (backends.BackendUnavailableError, RuntimeError) as e:
        pytest.skip(f"backend {request.param} unavailable: {e}")
    with backends.use(chosen):
        yield chosen


@pytest.fixture
def float64_backend(backend):
    """The backend under test, for tests that need float64 (skipped where it has none)."""
    if not backend.supports_float64:
        pytest.skip(f"{backend.name} has no float64")
    return backend


@pytest.fixture(params=["compiled", "python"])
def sweep(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The engine's loops compiled (autograd_core.graph._sweep, where built) or in Python alone."""
    from autograd_core.autodiff import engine

    compiled = engine._sweep if request.param == "compiled" else None
    if request.param == "compiled" and engine._sweep is None:
        pytest.skip("autograd_core.graph._sweep was not built (no C compiler at install); the Python loops run")
    monkeypatch.setattr(engine, "_sweep", compiled)
    return request.param
