"""The backend registry, selection, errors, and each backend's fast kernels against the
portable defaults written in the standard alone."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

import autograd_core as ag
import backends
from autograd_core import primitives as P
from backends.numpy import NumpyBackend
from helpers import assert_close, kernel, portable


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **env}, timeout=120
    )


def test_unknown_backend_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown backend 'tensorflow'; known backends: numpy, array_api_strict"):
        backends.get("tensorflow")


def test_missing_library_names_the_extra(monkeypatch):
    monkeypatch.setitem(backends.BUILTINS, "fakelib", ("backends.fakelib_is_not_installed", "fakelib"))
    with pytest.raises(backends.BackendUnavailableError, match=r'pip install -e "\.\[fakelib\]"'):
        backends.get("fakelib")
    assert "pip install" in backends.available()["fakelib"]


def test_use_is_scoped_and_nests():
    outer = backends.current()
    with backends.use("numpy") as first:
        assert backends.current() is first
        with backends.use(NumpyBackend(np, np.ndarray, "cpu")) as second:
            assert backends.current() is second and ag.zeros(1).backend is second
        assert backends.current() is first
    assert backends.current() is outer


def test_set_backend_changes_the_default(monkeypatch):
    monkeypatch.setattr(backends, "_default", None)
    chosen = backends.set_backend("numpy")
    assert backends.current() is chosen is backends.get("numpy")


def test_the_numpy_backend_pads_the_heap_only_when_asked():
    """``mallopt(M_TOP_PAD)`` changes the allocator of the whole process: the numpy backend
    calls it only when AUTOGRAD_NUMPY_TOP_PAD (MiB) asks for it."""
    code = (
        "import ctypes; calls = []; real = ctypes.CDLL\n"
        "class Libc:\n"
        "    def mallopt(self, *args): calls.append(args)\n"
        "ctypes.CDLL = lambda name, *a, **k: Libc() if name == 'libc.so.6' else real(name, *a, **k)\n"
        "import autograd_core as ag; (ag.tensor([1.0]) * 2).sum(); print(calls)"
    )
    assert run_python(code, AUTOGRAD_BACKEND="numpy", AUTOGRAD_NUMPY_TOP_PAD="").stdout.strip() == "[]"
    if sys.platform.startswith("linux"):
        asked = run_python(code, AUTOGRAD_BACKEND="numpy", AUTOGRAD_NUMPY_TOP_PAD="64")
        assert asked.stdout.strip() == f"[(-2, {64 << 20})]", asked.stderr
    refused = run_python(code, AUTOGRAD_BACKEND="numpy", AUTOGRAD_NUMPY_TOP_PAD="lots")
    assert refused.returncode != 0 and "AUTOGRAD_NUMPY_TOP_PAD='lots'" in refused.stderr


@pytest.mark.slow  # starts Python subprocesses
def test_environment_variable_selects_and_only_that_library_is_imported():
    code = (
        "import sys, autograd_core as ag, nn, optim; t = ag.tensor([1.0]);"
        "print(t.backend.name, 'torch' in sys.modules, 'jax' in sys.modules)"
    )
    assert run_python(code, AUTOGRAD_BACKEND="numpy").stdout.split() == ["numpy", "False", "False"]


def test_unknown_name_in_the_environment_is_a_clear_error():
    result = run_python("import autograd_core as ag; ag.tensor(1.0)", AUTOGRAD_BACKEND="nope")
    assert result.returncode != 0 and "unknown backend 'nope'" in result.stderr


@pytest.mark.slow  # starts Python subprocesses
def test_python_m_backends_prints_the_table():
    result = subprocess.run([sys.executable, "-m", "backends"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["backend", "status", "version"]
    listed = {line.split()[0]: line.split()[1] for line in lines[1:] if line.strip() and not line.startswith("choose")}
    assert set(backends.BUILTINS) <= set(listed)
    assert listed["numpy"] == "available"


def run_backends_table(backend: str, device: str = "", *args: str) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "AUTOGRAD_BACKEND": backend, "AUTOGRAD_DEVICE": device}
    return subprocess.run(
        [sys.executable, "-m", "backends", *args], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.mark.parametrize(
    ("selection", "status", "message"),
    [
        ("bogus", 1, "AUTOGRAD_BACKEND='bogus' is not a backend; known: numpy, array_api_strict"),
        ("NumPy", 1, "AUTOGRAD_BACKEND='NumPy' is not a backend"),
        ("torch,jax", 1, "AUTOGRAD_BACKEND='torch,jax' is not a backend"),
        ("", 0, ""),  # empty counts as unset: numpy
        ("array-api-strict", 0, ""),
    ],
)
@pytest.mark.slow  # starts Python subprocesses
def test_python_m_backends_prints_the_table_whatever_the_selection(selection, status, message):
    result = run_backends_table(selection)
    assert result.returncode == status
    assert "Traceback" not in result.stderr and message in result.stderr
    assert result.stdout.startswith("backend ") and "numpy" in result.stdout and "choose one with" in result.stdout
    selected = [line.split()[0] for line in result.stdout.splitlines() if line.rstrip().endswith("selected")]
    assert selected == ({"": ["numpy"], "array-api-strict": ["array_api_strict"]}.get(selection, []))


@pytest.mark.slow  # starts Python subprocesses
def test_a_device_the_library_cannot_use_is_reported_with_its_reason():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this torch has a usable CUDA device")
    result = run_backends_table("torch", "cuda")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("torch "))
    assert "unavailable" in row and "selected" in row and "use AUTOGRAD_DEVICE=cpu" in row
    with pytest.raises(RuntimeError, match="device 'cuda'.*use AUTOGRAD_DEVICE=cpu"):
        backends.get("torch", "cuda")


def test_python_m_backends_help():
    result = run_backends_table("", "", "--help")
    assert result.returncode == 0 and "AUTOGRAD_BACKEND" in result.stdout


def test_empty_environment_variables_count_as_unset(monkeypatch):
    monkeypatch.setenv("AUTOGRAD_BACKEND", " ")
    monkeypatch.setenv("AUTOGRAD_DEVICE", "")
    assert backends.from_environment() == ("numpy", None)
    monkeypatch.setenv("AUTOGRAD_BACKEND", "array-api-strict")
    assert backends.from_environment() == ("array_api_strict", None)
    assert backends.get("array-api-strict") is backends.get("array_api_strict")


@pytest.mark.slow  # starts Python subprocesses
def test_pytest_with_only_unavailable_backends_skips_everything_with_the_reason():
    import os

    if backends.available()["cupy"] is None:
        pytest.skip("cupy runs here")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "--backend",
            "cupy",
            "tests/test_backends.py",
            "tests/test_dtypes.py",
        ],
        capture_output=True,
        text=True,
        env={**os.environ},
        timeout=300,
        cwd=os.path.dirname(os.path.dirname(__file__)),
    )
    assert result.returncode == 0, result.stdout[-2000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert "skipped" in summary and "passed" not in summary and "failed" not in summary
    assert "backend cupy unavailable" in result.stdout


@pytest.mark.slow  # starts Python subprocesses
def test_parallel_workers_test_every_selected_backend():
    """pytest-xdist's workers inherit the environment the controller changed; they must still
    run the test matrix on every selected backend, not only the first."""
    import os

    pytest.importorskip("xdist")
    env = {k: v for k, v in os.environ.items() if k not in ("AUTOGRAD_BACKEND", "AUTOGRAD_TEST_BACKENDS")}
    root = os.path.dirname(os.path.dirname(__file__))

    def summary(*args: str) -> str:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                *args,
                "--backend",
                "numpy,array_api_strict",
                "tests/test_nn.py",
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=root,
            timeout=300,
        )
        assert result.returncode == 0, result.stdout[-2000:]
        return result.stdout.strip().splitlines()[-1].split(" in ")[0]

    env_only = {**env, "AUTOGRAD_BACKEND": "numpy,array_api_strict"}
    serial = summary()
    assert serial == summary("-n", "2")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "tests/test_nn.py"],
        capture_output=True,
        text=True,
        env=env_only,
        cwd=root,
        timeout=300,
    )
    assert result.stdout.strip().splitlines()[-1].split(" in ")[0] == serial  # selected by the variable


def test_bench_refuses_an_unknown_backend():
    result = subprocess.run(
        [sys.executable, "-m", "bench", "--backends", "bogus"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2 and "unknown backend(s) ['bogus']" in result.stderr
    assert "Traceback" not in result.stderr


def test_entry_point_backends_are_found(monkeypatch):
    class PluginBackend(NumpyBackend):
        name = "plugin"

    class EntryPoint:
        name = "plugin"

        @staticmethod
        def load():
            return lambda device: PluginBackend(np, np.ndarray, "cpu")

    monkeypatch.setattr(backends, "_entry_points", lambda: {"plugin": EntryPoint})
    monkeypatch.setattr(backends, "_instances", {})
    assert "plugin" in backends.known()
    with backends.use("plugin"):
        assert ag.ones(2).backend.name == "plugin"


def test_mixing_backends_is_an_error_that_says_how_to_move(backend):
    with backends.use("numpy"):
        on_numpy = ag.ones(2)
    here = ag.ones(2)
    if backend.name == "numpy":
        assert (on_numpy + here).tolist() == [2.0, 2.0]
        return
    with pytest.raises(RuntimeError, match=r"different backends .* \.to\("):
        on_numpy + here
    assert (on_numpy.to(backend.name) + here).backend is backend


def test_moving_between_backends_is_differentiable(backend):
    with backends.use("numpy"):
        x = ag.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    y = x.to(backend.name) * 3
    assert y.backend is backend
    y.sum().backward()
    assert x.grad.backend is backends.get("numpy") and x.grad.tolist() == [3.0, 3.0]


# --- fast kernels against the portable defaults -----------------------------------------------
@pytest.mark.parametrize("positions", [[1, 3, 1, 1, 0]])
def test_index_add_sums_repeated_indices(backend, positions):
    rng = np.random.default_rng(0)
    values = backend.asarray(rng.standard_normal((2, 5, 3)), backend.dtype("float64"))
    index = backend.asarray(np.array(positions), backend.dtype("int64"))
    fast = backend.to_numpy(kernel(backend, P.index_add, values, (2, 4, 3), 1, index))
    default = backend.to_numpy(portable(backend, P.index_add, values, (2, 4, 3), 1, index))
    expected = np.zeros((2, 4, 3))
    np.add.at(expected, (slice(None), positions), backend.to_numpy(values))
    assert_close(fast, expected)
    assert_close(default, expected)


def test_scatter_writes_basic_indices(backend):
    values = backend.asarray(np.ones((2, 2)), backend.dtype("float64"))
    key = (slice(1, 3), slice(None, None, 2), Ellipsis)
    out = backend.to_numpy(kernel(backend, P.scatter, values, (4, 4), key))
    expected = np.zeros((4, 4))
    expected[key] = 1
    assert_close(out, expected)


def test_adam_update_matches_the_portable_default(backend):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(6) for _ in range(3)] + [np.abs(rng.standard_normal(6))]
    settings = dict(step=3, lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.1)
    for decoupled in (True, False):
        fast = kernel(
            backend,
            P.adam_update,
            *(backend.asarray(a, backend.dtype("float64")) for a in arrays),
            decoupled=decoupled,
            **settings,
        )
        default = portable(
            backend,
            P.adam_update,
            *(backend.asarray(a, backend.dtype("float64")) for a in arrays),
            decoupled=decoupled,
            **settings,
        )
        for f, p in zip(fast, default):
            assert_close(backend.to_numpy(f), backend.to_numpy(p), rtol=1e-14, atol=1e-16)


def test_adam_update_takes_a_strided_gradient(backend):
    """A transposed gradient (a strided view where the library has views) updates as its
    contiguous copy does: a fused kernel that read it as contiguous would scramble it."""
    rng = np.random.default_rng(2)
    param, exp_avg = rng.standard_normal((2, 3, 4))
    exp_avg_sq, grad_t = np.abs(rng.standard_normal((3, 4))), rng.standard_normal((4, 3))
    settings = dict(step=2, lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.1, decoupled=True)
    f64 = backend.dtype("float64")
    strided = backend.xp.matrix_transpose(backend.asarray(grad_t, f64))
    p, m, v = (backend.asarray(a, f64) for a in (param, exp_avg, exp_avg_sq))
    strided_result = kernel(backend, P.adam_update, p, strided, m, v, **settings)
    p, m, v = (backend.asarray(a, f64) for a in (param, exp_avg, exp_avg_sq))
    contiguous = backend.asarray(np.ascontiguousarray(grad_t.T), f64)
    results = [strided_result, kernel(backend, P.adam_update, p, contiguous, m, v, **settings)]
    for got, expected in zip(*results):
        assert_close(backend.to_numpy(got), backend.to_numpy(expected), rtol=0, atol=0)


def test_erf_matches_the_portable_series(backend):
    x = np.linspace(-7, 7, 281)
    fast = backend.to_numpy(kernel(backend, P.erf_kernel, backend.asarray(x, backend.dtype("float64"))))
    default = backend.to_numpy(portable(backend, P.erf_kernel, backend.asarray(x, backend.dtype("float64"))))
    reference = np.array([math.erf(v) for v in x])
    assert_close(fast, reference, rtol=1e-14, atol=1e-15)
    assert_close(default, reference, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_kernels_match_the_portable_defaults(backend, dtype, approximate):
    if dtype == "float64" and not backend.supports_float64:
        pytest.skip(f"{backend.name} has no float64 here")
    rng = np.random.default_rng(0)
    x, g = (backend.asarray(rng.standard_normal(200) * 4, backend.dtype(dtype)) for _ in range(2))
    # float32: the formulas cancel (1 + erf(x) for x << 0), so values of O(1) agree to ~1e-6 absolute
    tolerance = {"rtol": 1e-5, "atol": 3e-5} if dtype == "float32" else {"rtol": 1e-13, "atol": 1e-13}
    for primitive, args in ((P.gelu, (x, approximate)), (P.gelu_backward, (g, x, approximate))):
        fast = kernel(backend, primitive, *args)
        assert backend.dtype_name(fast.dtype) == dtype
        assert_close(backend.to_numpy(fast), backend.to_numpy(portable(backend, primitive, *args)), **tolerance)


def test_relu_kernels_match_the_portable_defaults(backend):
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    x[0, 0] = 0.0  # relu'(0) = 0, as PyTorch
    data, grad = backend.asarray(x), backend.asarray(np.arange(15.0, dtype=np.float32).reshape(3, 5))
    out = kernel(backend, P.relu, data)
    np.testing.assert_array_equal(backend.to_numpy(out), backend.to_numpy(portable(backend, P.relu, data)))
    g = backend.to_numpy(kernel(backend, P.relu_backward, grad, out))
    np.testing.assert_array_equal(g, backend.to_numpy(portable(backend, P.relu_backward, grad, out)))
    assert g[0, 0] == 0.0


def test_cross_entropy_rows_matches_the_portable_default(float64_backend):
    backend = float64_backend
    logits = backend.asarray(np.random.default_rng(1).standard_normal((4, 6)) * 50, backend.dtype("float64"))
    target = backend.asarray(np.array([0, 5, 2, 2]), backend.dtype("int64"))
    fast = backend.to_numpy(kernel(backend, P.cross_entropy_rows, logits, target))
    default = backend.to_numpy(portable(backend, P.cross_entropy_rows, logits, target))
    np.testing.assert_allclose(fast, default, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_entropy_backward_matches_the_portable_default(backend, dtype):
    """(softmax - one_hot) times each row's gradient, for logits large enough that an
    unshifted softmax would overflow; a row whose gradient is 0 (an ignored target) gets 0."""
    if dtype == "float64" and not backend.supports_float64:
        pytest.skip(f"{backend.name} has no float64 here")
    rng = np.random.default_rng(4)
    logits = backend.asarray(rng.standard_normal((5, 7)) * 60, backend.dtype(dtype))
    row_grad = backend.asarray(np.array([0.5, -2.0, 0.0, 1.0, 3.0]), backend.dtype(dtype))
    target = backend.asarray(np.array([0, 6, 2, 2, 4]), backend.dtype("int64"))
    classes = backend.xp.arange(7, dtype=backend.dtype("int64"), device=backend.device)
    fast = kernel(backend, P.cross_entropy_backward, row_grad, logits, target, classes)
    assert backend.dtype_name(fast.dtype) == dtype
    fast, default = (
        backend.to_numpy(g)
        for g in (fast, portable(backend, P.cross_entropy_backward, row_grad, logits, target, classes))
    )
    tolerance = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-13, "atol": 1e-15}
    assert_close(fast, default, **tolerance)
    assert not fast[2].any() and np.all(np.isfinite(fast))
    assert_close(fast.sum(axis=1), np.zeros(5), atol=1e-5)  # softmax and one-hot each sum to 1
    every_row = backend.asarray(np.array(0.25), backend.dtype(dtype))  # a mean's gradient: one for all rows
    assert_close(
        backend.to_numpy(kernel(backend, P.cross_entropy_backward, every_row, logits, target, classes)),
        backend.to_numpy(
            portable(
                backend, P.cross_entropy_backward, backend.xp.broadcast_to(every_row, (5,)), logits, target, classes
            )
        ),
        **tolerance,
    )


def test_tanh_backward_matches_the_portable_default(backend):
    rng = np.random.default_rng(5)
    grad, out = (
        backend.asarray(a, backend.dtype("float32"))
        for a in (rng.standard_normal((3, 4)), np.tanh(rng.standard_normal((3, 4)) * 2))
    )
    assert_close(
        backend.to_numpy(kernel(backend, P.tanh_backward, grad, out)),
        backend.to_numpy(portable(backend, P.tanh_backward, grad, out)),
        rtol=1e-6,
        atol=1e-7,
    )


@pytest.mark.parametrize("values", [[3, -7, 12, 0], [5], [-2, -2]])
def test_value_range_and_take_rows_match_the_portable_defaults(backend, values):
    index = backend.asarray(np.array(values), backend.dtype("int64"))
    assert backend.value_range(index) == backends.Backend.value_range(backend, index) == (min(values), max(values))
    assert all(type(v) is int for v in backend.value_range(index))
    x = backend.asarray(np.arange(20.0).reshape(4, 5), backend.dtype("float32"))
    rows = backend.asarray(np.array([3, 0, 3]), backend.dtype("int64"))
    for axis in (0, 1):
        np.testing.assert_array_equal(
            backend.to_numpy(kernel(backend, P.take_rows, x, rows, axis)),
            np.take(np.arange(20.0).reshape(4, 5), [3, 0, 3], axis=axis),
        )


def test_layer_norm_kernels_match_the_portable_defaults(float64_backend):
    backend, rng = float64_backend, np.random.default_rng(2)
    x, weight, bias, grad = (
        backend.asarray(rng.standard_normal(shape) * 3 + 1, backend.dtype("float64"))
        for shape in ((2, 3, 4), (3, 4), (3, 4), (2, 3, 4))
    )
    for given in ((weight, bias), (None, None)):
        fast, stats = kernel(backend, P.layer_norm, x, *given, (3, 4), 1e-5)
        default, portable_stats = portable(backend, P.layer_norm, x, *given, (3, 4), 1e-5)
        assert_close(backend.to_numpy(fast), backend.to_numpy(default), rtol=1e-12, atol=1e-12)
        for mine, theirs in zip(stats, portable_stats):  # each of shape (2, 1, 1)
            assert_close(backend.to_numpy(mine), backend.to_numpy(theirs), rtol=1e-12, atol=0)
        for part in ("input", "weight"):
            fast = kernel(backend, P.layer_norm_backward, grad, x, (3, 4), given[0], 1e-5, stats, part)
            default = portable(backend, P.layer_norm_backward, grad, x, (3, 4), given[0], 1e-5, portable_stats, part)
            fast, default = backend.to_numpy(fast), backend.to_numpy(default)
            if part == "weight":  # a library may give it summed over the leading axes
                fast, default = fast.reshape(-1, 3, 4).sum(0), default.reshape(-1, 3, 4).sum(0)
            assert_close(fast, default, rtol=1e-12, atol=1e-12)


def test_capability_flags_are_true(backend):
    array = backend.asarray(np.zeros(2), backend.dtype("float64"))
    if backend.mutable:
        array[0] = 1.0
        assert backend.to_numpy(array)[0] == 1.0
    else:
        with pytest.raises((TypeError, ValueError)):
            array[0] = 1.0
    assert backend.is_native(array) and not backend.is_native([0.0, 0.0])


def test_the_contract_documents_every_attribute():
    """Each public attribute of `Backend` (a class attribute, or one `__init__` sets) is named
    in the Attributes section of its docstring."""
    import re

    from backends.contract.backend import Backend

    documented = set(re.findall(r"^ {8}(\w+):", Backend.__doc__, re.MULTILINE))
    flags = {k for k, v in vars(Backend).items() if not callable(v)}
    attributes = {k for k in flags | set(vars(Backend(np, np.ndarray))) if not k.startswith("_")}
    assert attributes - documented == set()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("decoupled", [True, False], ids=["adamw", "adam"])
def test_numpy_fused_adam_is_bit_identical_to_the_reference(dtype, decoupled):
    import backends.numpy as numpy_backend

    if numpy_backend._fused_adam is None:
        pytest.skip("numba is not installed (pip install -e '.[fast]'): the fused update is off")
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((64, 33)).astype(dtype) for _ in range(3)]
    arrays.append(np.abs(rng.standard_normal((64, 33))).astype(dtype))
    settings = dict(step=7, lr=3e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.05, decoupled=decoupled)
    fused = kernel(backends.get("numpy"), P.adam_update, *(a.copy() for a in arrays), **settings)
    reference = numpy_backend.adam_update_reference(*(a.copy() for a in arrays), **settings)
    for f, r in zip(fused, reference):
        assert f.dtype == np.dtype(dtype) and np.array_equal(f, r)
