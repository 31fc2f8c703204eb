"""autograd_core.transforms.vmap.batched, vmap's array layer: every batching rule against its oracle, the loop: the
inner function called on each example alone and the results stacked. Run over the namespaces
the project uses (numpy, array-api-strict, torch, jax), batches of 1 and 3 examples, and a
batched namespace nested in another."""

from __future__ import annotations

import doctest
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import backends
from autograd_core.transforms.vmap import batched
from autograd_core.transforms.vmap.batched import (
    FALLBACKS_USED,
    BatchedArray,
    BatchedNamespace,
    BatchedValueError,
    BatchingFallbackWarning,
)

LIBRARIES = ("numpy", "array_api_strict", "torch", "jax")
LINALG_TOLERANCE = 1e-12  # summation order may differ between one call on the batch and one per example
ULPS = 1e-15  # float64's last bits


@pytest.fixture(params=LIBRARIES, scope="module")
def library(request: pytest.FixtureRequest) -> backends.Backend:
    if request.param not in request.config.selected_backends:
        pytest.skip(f"{request.param} is not among the selected backends")
    try:
        return backends.get(request.param)
    except (backends.BackendUnavailableError, ImportError, RuntimeError) as e:
        pytest.skip(f"{request.param} is not installed here: {e}")


# jax compiles every op for each new shape (a tenth of a second or more each): it runs a sample, a
# test or a case of each kind of rule, on a batch of 3
JAX_SAMPLE = {
    *("test_unbatched_arguments_call_the_inner_function_unchanged", "test_unary_elementwise[exp]"),
    *("test_binary_elementwise[atan2]", "test_where_clip_and_broadcast_arrays", "test_reductions[sum]"),
    *("test_argmax_argmin[argmax]", "test_cumulative[cumulative_sum]", "test_sorting", "test_joining"),
    *("test_take_and_take_along_axis", "test_matmul[matmul]", "test_linalg_functions_of_stacks_of_matrices[inv]"),
    *("test_dtype_functions", "test_attributes", "test_constants_and_namespace_info_pass_through"),
    *("test_binary_operators[add]", "test_in_place_operators_update_the_value[add]", "test_helpers"),
    *("test_matmul_and_unary_operators", "test_arrays_of_numpy_torch_and_jax_defer_to_batched_arrays"),
    *("test_reading_a_python_value_raises[bool]", "test_a_function_without_a_rule_loops_warns_once_and_is_recorded"),
}


@pytest.fixture(params=[1, 3], ids=["batch1", "batch3"])
def t(library: backends.Backend, request: pytest.FixtureRequest) -> Bench:
    if library.name == "jax":
        case = "-".join(request.node.callspec.id.split("-")[2:])
        if request.param != 3 or request.node.originalname + (f"[{case}]" if case else "") not in JAX_SAMPLE:
            pytest.skip("jax compiles every op for each new shape: it runs the sample JAX_SAMPLE on a batch of 3")
    return Bench(library, request.param)


def lookup(namespace: Any, name: str) -> Callable[..., Any]:
    """`namespace.name`, through ``linalg.`` and ``fft.``."""
    for part in name.split("."):
        namespace = getattr(namespace, part)
    return namespace


class Bench:
    """One inner namespace and batch size: random operands and the loop oracle."""

    def __init__(self, library: backends.Backend, size: int) -> None:
        self.library, self.xp, self.size = library, library.xp, size
        self.ns = BatchedNamespace(library.xp, size)
        self.rng = np.random.default_rng(size)

    def host(self, shape: tuple[int, ...], kind: str) -> np.ndarray:
        if kind == "int":
            return self.rng.integers(0, 8, shape)
        if kind == "bool":
            return self.rng.random(shape) < 0.5
        if kind == "complex":
            return self.rng.uniform(0.1, 0.9, shape) + 1j * self.rng.uniform(0.1, 0.9, shape)
        return self.rng.uniform(0.1, 0.9, shape)

    def plain(self, *shape: int, kind: str = "float") -> Any:
        """An inner array (unbatched: the same for every example)."""
        return self.xp.asarray(self.host(shape, kind))

    def b(self, *shape: int, kind: str = "float") -> BatchedArray:
        """A batched array of logical `shape`."""
        return BatchedArray(self.plain(self.size, *shape, kind=kind), self.ns)

    def numpy(self, x: Any) -> np.ndarray:
        if hasattr(x, "resolve_conj"):  # torch's FFTs give lazily conjugated tensors
            x = x.resolve_conj()
        return self.library.to_numpy(x) if hasattr(x, "shape") else np.asarray(x)

    def example(self, x: Any, i: int) -> Any:
        """Example `i` of a value, made from the host copy (the oracle uses none of the module's
        helpers, and jax would compile a slice for every `i`)."""
        if isinstance(x, BatchedArray):
            return self.xp.asarray(self.numpy(x.value)[i])
        if isinstance(x, (tuple, list)):
            return type(x)(self.example(v, i) for v in x)
        if isinstance(x, dict):
            return {k: self.example(v, i) for k, v in x.items()}
        return x

    def check(self, name: str, *args: Any, tol: float = 0.0, **kwargs: Any) -> Any:
        """``ns.name(*args, **kwargs)`` equals the inner function's results per example, stacked."""
        got = lookup(self.ns, name)(*args, **kwargs)
        inner = lookup(self.xp, name)
        want = [inner(*self.example(args, i), **self.example(kwargs, i)) for i in range(self.size)]
        self.compare(got, want, tol)
        return got

    def compare(self, got: Any, want: list, tol: float = 0.0) -> None:
        if isinstance(want[0], (tuple, list)):
            assert len(got) == len(want[0])
            for k, part in enumerate(got):
                self.compare(part, [w[k] for w in want], tol)
            return
        assert isinstance(got, BatchedArray) and got.namespace is self.ns, got
        actual, expected = self.numpy(got.value), np.stack([self.numpy(w) for w in want])
        assert actual.dtype == expected.dtype
        if not tol and self.library.name in ("torch", "jax") and actual.dtype.kind in "fc":
            tol = ULPS  # their kernels' last bit depends on the length of the array (vector units)
        if tol:
            np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(actual, expected)


# --- elementwise ---------------------------------------------------------------------------------
UNARY = {
    *("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log", "log1p"),
    *("log2", "log10", "sin", "sinh", "sqrt", "square", "tan", "tanh", "reciprocal", "negative", "positive"),
    *("ceil", "floor", "round", "trunc", "sign", "signbit", "conj", "real", "imag", "isfinite", "isinf", "isnan"),
    *("logical_not", "bitwise_invert"),
}
BINARY = set(batched.ELEMENTWISE) - UNARY - {"where", "clip", "broadcast_arrays"}
KIND = {
    **dict.fromkeys(("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert"), "int"),
    **dict.fromkeys(("bitwise_left_shift", "bitwise_right_shift"), "int"),
    **dict.fromkeys(("logical_and", "logical_or", "logical_xor", "logical_not"), "bool"),
    **dict.fromkeys(("conj", "real", "imag"), "complex"),
}
SCALAR = {"float": 0.5, "int": 2, "bool": True}
# operand layouts: "b" batched, "u" unbatched (an inner array), "s" a Python scalar; with logical shapes
LAYOUTS = [
    (("b", (2, 3)), ("b", (3,))),
    (("b", (3,)), ("u", (2, 3))),
    (("u", (4, 1, 3)), ("b", (2, 1))),
    (("b", ()), ("s", None)),
    (("s", None), ("b", (2,))),
    (("b", ()), ("u", (3,))),
]


def operand(t: Bench, layout: tuple[str, Any], kind: str) -> Any:
    where, shape = layout
    return SCALAR[kind] if where == "s" else (t.b if where == "b" else t.plain)(*shape, kind=kind)


def test_the_tables_name_every_elementwise_function_of_the_standard():
    assert UNARY | BINARY | {"where", "clip", "broadcast_arrays"} == set(batched.ELEMENTWISE)
    assert len(BINARY) == 28


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_elementwise(t, name):
    kind = KIND.get(name, "float")
    for shape in [(2, 3), ()]:
        x = t.b(*shape, kind=kind)
        t.check(name, x + 1 if name == "acosh" else x)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_elementwise(t, name):
    kind = KIND.get(name, "float")
    for layout in LAYOUTS:
        if kind == "bool" and "s" in (layout[0][0], layout[1][0]):
            continue  # the standard's logical functions take no Python scalars
        t.check(name, *(operand(t, side, kind) for side in layout))


def test_where_clip_and_broadcast_arrays(t):
    t.check("where", t.b(3, kind="bool"), t.plain(2, 3), 0.5)
    t.check("where", t.plain(2, 1, kind="bool"), t.b(), t.b(3))
    t.check("clip", t.b(2, 3), min=0.3, max=t.plain(3) + 1)
    t.check("clip", t.plain(3), min=t.b(2, 1), max=1.0)
    t.check("broadcast_arrays", t.b(3), t.plain(2, 1), t.b())


def test_unbatched_arguments_call_the_inner_function_unchanged(t):
    x, y = t.plain(2, 3), t.plain(3)
    out = t.ns.add(x, y)
    assert not isinstance(out, BatchedArray)
    np.testing.assert_array_equal(t.numpy(out), t.numpy(t.xp.add(x, y)))


# --- reductions, statistics, searching -------------------------------------------------------------
@pytest.mark.parametrize("name", [n for n in batched.REDUCTIONS if n != "logsumexp"])
def test_reductions(t, name):
    kind = "bool" if name in ("all", "any") else "int" if name == "count_nonzero" else "float"
    tol = LINALG_TOLERANCE if kind == "float" else 0.0
    for axis in [None, 0, -1, (0, 1)]:
        for keepdims in [False, True]:
            t.check(name, t.b(2, 3, kind=kind), axis=axis, keepdims=keepdims, tol=tol)
    t.check(name, t.b(kind=kind), tol=tol)
    if name in ("var", "std"):
        t.check(name, t.b(4, 3), axis=0, correction=1, tol=tol)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin(t, name):
    for axis in [None, 0, -1]:
        for keepdims in [False, True]:
            t.check(name, t.b(2, 3), axis=axis, keepdims=keepdims)
    t.check(name, t.b())


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_cumulative(t, name):
    t.check(name, t.b(2, 3), axis=0, tol=LINALG_TOLERANCE)
    t.check(name, t.b(2, 3), axis=-1, include_initial=True, tol=LINALG_TOLERANCE)
    t.check(name, t.b(4), tol=LINALG_TOLERANCE)


def test_sorting(t):
    for axis in [-1, 0]:
        t.check("sort", t.b(3, 4), axis=axis)
        t.check("argsort", t.b(3, 4, kind="int"), axis=axis)


def test_searchsorted(t):
    x1 = t.xp.sort(t.b(5).value, axis=-1)
    batched_sorted = BatchedArray(x1, t.ns)
    for side in ["left", "right"]:
        t.check("searchsorted", t.xp.asarray([0.2, 0.4, 0.6]), t.b(2, 3), side=side)
        t.check("searchsorted", batched_sorted, t.plain(2, 3), side=side)
        t.check("searchsorted", batched_sorted, t.b(4), side=side)
        t.check("searchsorted", batched_sorted, t.b(), side=side)
    unsorted = t.b(5)
    t.check("searchsorted", unsorted, t.plain(3), sorter=t.ns.argsort(unsorted))
    t.check("searchsorted", t.plain(5), t.b(3), sorter=t.xp.argsort(t.plain(5)))


def test_take_and_take_along_axis(t):
    index = t.xp.asarray([2, 0, 2])
    t.check("take", t.b(3, 4), index, axis=0)
    t.check("take", t.b(4, 3), index, axis=-1)
    t.check("take", t.b(3), index)
    t.check("take", t.plain(3, 4), t.b(2, kind="int") % 3, axis=0)
    t.check("take", t.b(4, 3), t.b(5, kind="int") % 3, axis=1)
    t.check("take_along_axis", t.b(3, 4), t.b(3, 2, kind="int") % 4, axis=1)
    t.check("take_along_axis", t.plain(3, 4), t.b(2, 4, kind="int") % 3, axis=0)
    t.check("take_along_axis", t.b(3, 4), t.plain(3, 1, kind="int") % 4, axis=-1)


def test_data_dependent_shapes_stack_when_they_agree_and_raise_otherwise(t):
    same = BatchedArray(t.xp.asarray(np.tile([0.0, 1.0, 0.0, 2.0], (t.size, 1))), t.ns)
    t.check("nonzero", same)
    t.check("unique_values", same)
    if t.size > 1:
        varying = BatchedArray(t.xp.asarray(np.tril(np.ones((t.size, t.size)))), t.ns)
        with pytest.raises(BatchedValueError, match="different shapes"):
            t.ns.nonzero(varying)


# --- creation -------------------------------------------------------------------------------------
def test_creation(t):
    for name in ["zeros_like", "ones_like"]:
        t.check(name, t.b(2, 3))
        t.check(name, t.b(2), dtype=t.xp.int32)
    empty = t.ns.empty_like(t.b(2, 3))
    assert empty.shape == (2, 3) and empty.value.shape == (t.size, 2, 3)
    t.check("full_like", t.b(2, 3), 7.0)
    t.check("asarray", t.b(2, 3), dtype=t.xp.float32)
    for name in ["tril", "triu"]:
        for k in [0, 1, -1]:
            t.check(name, t.b(3, 4), k=k)
            t.check(name, t.b(2, 3, 3), k=k)


def test_full_with_a_batched_fill(t):
    fill, like = t.b(), t.b(2, 3, kind="int")
    got = t.ns.full_like(like, fill)
    want = [t.xp.full_like(t.example(like, i), float(t.numpy(fill.value)[i])) for i in range(t.size)]
    t.compare(got, want)
    got = t.ns.full((2, 2), fill, dtype=t.xp.float32)
    t.compare(got, [t.xp.full((2, 2), float(t.numpy(fill.value)[i]), dtype=t.xp.float32) for i in range(t.size)])


def test_meshgrid(t):
    for indexing in ["xy", "ij"]:
        t.check("meshgrid", t.b(3), t.plain(2), indexing=indexing)
        t.check("meshgrid", t.plain(4), t.b(3), t.b(2), indexing=indexing)


# --- manipulation ---------------------------------------------------------------------------------
def test_manipulation(t):
    x = t.b(2, 3, 4)
    t.check("reshape", x, (4, 6))
    t.check("reshape", x, (-1,))
    t.check("reshape", t.b(), (1, 1))
    t.check("permute_dims", x, (2, 0, 1))
    for axis in [0, -1, 2, (0, 2)]:
        t.check("expand_dims", x, axis=axis)
    t.check("squeeze", t.b(1, 3, 1), axis=0)
    t.check("squeeze", t.b(1, 3, 1), (0, -1))
    for axis in [None, 0, (0, 2), -1]:
        t.check("flip", x, axis=axis)
    t.check("roll", x, 2)
    t.check("roll", x, 1, axis=0)
    t.check("roll", x, (1, -2), axis=(0, -1))
    t.check("broadcast_to", t.b(3, 1), (2, 3, 4))
    t.check("broadcast_to", t.b(), (2,))
    t.check("moveaxis", x, 0, -1)
    t.check("moveaxis", x, (0, 1), (1, 0))
    t.check("tile", t.b(2, 3), (2,))
    t.check("tile", t.b(2, 3), (2, 1, 3))
    t.check("repeat", x, 2, axis=0)
    t.check("repeat", x, t.xp.asarray([1, 0, 2, 1]), axis=-1)
    t.check("repeat", t.b(2, 3), 2)
    t.check("diff", x)
    t.check("diff", x, axis=0, n=1, prepend=t.plain(1, 3, 4))
    t.check("diff", x, axis=-1, append=t.b(2, 3, 1))


def test_joining(t):
    for axis in [0, -1, None]:
        t.check("concat", [t.b(2, 3), t.plain(2, 3), t.b(2, 3)], axis=axis)
    t.check("concat", (t.plain(1, 3), t.b(2, 3)))
    for axis in [0, -1, 2]:
        t.check("stack", [t.b(2, 3), t.plain(2, 3)], axis=axis)
    t.check("stack", [t.b(), t.b()])
    for axis in [0, -1]:
        t.check("unstack", t.b(2, 3), axis=axis)


# --- linear algebra, FFT ------------------------------------------------------------------------------
MATMUL_SHAPES = [
    (("b", (3,)), ("u", (3,))),
    (("b", (3,)), ("b", (3,))),
    (("u", (3,)), ("b", (3,))),
    (("b", (2, 3)), ("u", (3,))),
    (("u", (2, 3)), ("b", (3,))),
    (("b", (3,)), ("u", (3, 4))),
    (("u", (3,)), ("b", (3, 4))),
    (("b", (2, 2, 3)), ("b", (3, 4))),
    (("u", (2, 3)), ("b", (5, 3, 4))),
    (("b", (5, 2, 3)), ("u", (3, 1))),
    (("b", (3,)), ("b", (5, 3, 2))),
]


@pytest.mark.parametrize("name", ["matmul", "linalg.matmul"])
def test_matmul(t, name):
    for layout in MATMUL_SHAPES:
        t.check(name, *(operand(t, side, "float") for side in layout), tol=LINALG_TOLERANCE)


@pytest.mark.parametrize("name", ["tensordot", "linalg.tensordot"])
def test_tensordot(t, name):
    for x1, x2 in [(t.b(2, 3), t.plain(3, 4)), (t.plain(2, 3), t.b(3, 4)), (t.b(2, 3), t.b(3, 4))]:
        t.check(name, x1, x2, axes=1, tol=LINALG_TOLERANCE)
    for x1, x2 in [(t.b(2, 3, 4), t.plain(4, 3, 5)), (t.plain(2, 3, 4), t.b(4, 3, 5)), (t.b(2, 3, 4), t.b(4, 3, 5))]:
        t.check(name, x1, x2, axes=([1, -1], [1, 0]), tol=LINALG_TOLERANCE)
        t.check(name, x1, x2, axes=0, tol=LINALG_TOLERANCE)
    t.check(name, t.b(2, 3), t.b(2, 3), axes=2, tol=LINALG_TOLERANCE)


@pytest.mark.parametrize("name", ["vecdot", "linalg.vecdot", "linalg.cross"])
def test_functions_along_an_axis_of_two_broadcast_operands(t, name):
    n = 3
    for x1, x2 in [(t.b(2, n), t.plain(n)), (t.plain(n), t.b(2, n)), (t.b(n), t.b(4, 1, n))]:
        t.check(name, x1, x2, tol=LINALG_TOLERANCE)
    if t.library.name != "array_api_strict":  # it takes negative axes only
        t.check(name, t.b(n, 2), t.plain(n, 2), axis=0, tol=LINALG_TOLERANCE)
    t.check(name, t.b(n, 2), t.b(n, 2), axis=-2, tol=LINALG_TOLERANCE)


def spd(t: Bench, *stack: int) -> BatchedArray:
    """Batched symmetric positive definite 3x3 matrices."""
    m = t.rng.uniform(-1, 1, (t.size, *stack, 3, 3))
    return BatchedArray(t.xp.asarray(m @ np.swapaxes(m, -1, -2) + 3 * np.eye(3)), t.ns)


LINALG_ON_MATRICES = ["cholesky", "det", "slogdet", "inv", "eigvalsh", "svdvals", "pinv", "matrix_rank", "trace"]


@pytest.mark.parametrize("name", LINALG_ON_MATRICES)
def test_linalg_functions_of_stacks_of_matrices(t, name):
    t.check(f"linalg.{name}", spd(t), tol=LINALG_TOLERANCE)
    t.check(f"linalg.{name}", spd(t, 2), tol=LINALG_TOLERANCE)


def test_linalg_factorizations_and_the_others(t):
    for name in ["qr", "svd", "eigh"]:
        t.check(f"linalg.{name}", spd(t), tol=1e-10)
    t.check("linalg.matrix_power", spd(t, 2), 3, tol=LINALG_TOLERANCE)
    t.check("linalg.matrix_norm", spd(t), ord="fro", keepdims=True, tol=LINALG_TOLERANCE)
    t.check("linalg.diagonal", t.b(2, 3, 4), offset=1)
    t.check("linalg.matrix_transpose", t.b(2, 3, 4))
    t.check("matrix_transpose", t.b(3, 4))
    t.check("linalg.outer", t.b(3), t.plain(4), tol=LINALG_TOLERANCE)
    t.check("linalg.outer", t.plain(3), t.b(2), tol=LINALG_TOLERANCE)
    for axis in [None, -1, (0, 1)]:
        t.check("linalg.vector_norm", t.b(2, 3), axis=axis, keepdims=True, tol=LINALG_TOLERANCE)
    t.check("linalg.vector_norm", t.b(2, 3), ord=1, tol=LINALG_TOLERANCE)


def test_solve(t):
    a = spd(t)
    unbatched = t.xp.asarray(t.numpy(a.value)[0])
    for x1, x2 in [(a, t.b(3)), (a, t.plain(3)), (unbatched, t.b(3)), (a, t.b(3, 2)), (unbatched, t.b(3, 2))]:
        t.check("linalg.solve", x1, x2, tol=LINALG_TOLERANCE)
    t.check("linalg.solve", spd(t, 2), t.b(3), tol=LINALG_TOLERANCE)


def test_fft(t):
    z = t.b(4, 6, kind="complex")
    for name in ["fft", "ifft", "hfft"]:
        for axis in [-1, 0]:
            t.check(f"fft.{name}", z, axis=axis, tol=LINALG_TOLERANCE)
    for name in ["rfft", "ihfft"]:
        t.check(f"fft.{name}", t.b(4, 6), axis=0, tol=LINALG_TOLERANCE)
    t.check("fft.irfft", z, n=8, tol=LINALG_TOLERANCE)
    for name in ["fftn", "ifftn"]:
        t.check(f"fft.{name}", z, tol=LINALG_TOLERANCE)
        t.check(f"fft.{name}", z, s=(3,), axes=(-1,), tol=LINALG_TOLERANCE)
        t.check(f"fft.{name}", z, axes=(0,), tol=LINALG_TOLERANCE)
    t.check("fft.rfftn", t.b(4, 6), tol=LINALG_TOLERANCE)
    t.check("fft.irfftn", z, s=(4, 6), axes=(0, 1), tol=LINALG_TOLERANCE)
    for name in ["fftshift", "ifftshift"]:
        t.check(f"fft.{name}", t.b(4, 5))
        t.check(f"fft.{name}", t.b(4, 5), axes=0)


def test_dtype_functions(t):
    xp, ns, x = t.xp, t.ns, t.b(2)
    assert ns.result_type(x, xp.float32) == xp.result_type(xp.float64, xp.float32)
    assert ns.result_type(t.b(kind="int"), xp.int32) == xp.result_type(xp.int64, xp.int32)
    assert ns.can_cast(x, xp.float32) == xp.can_cast(xp.float64, xp.float32)
    assert ns.finfo(x).eps == xp.finfo(xp.float64).eps
    assert ns.iinfo(t.b(kind="int")).max == xp.iinfo(xp.int64).max
    assert ns.isdtype(x.dtype, "real floating")
    t.check("astype", x, xp.int32)


def test_constants_and_namespace_info_pass_through(t):
    for name in ["float64", "int32", "bool", "complex128", "e", "pi", "inf", "newaxis", "__array_api_version__"]:
        assert getattr(t.ns, name) is getattr(t.xp, name)
    assert np.isnan(t.ns.nan)
    assert t.ns.__array_namespace_info__ is t.xp.__array_namespace_info__


# --- the array object ---------------------------------------------------------------------------------
def test_attributes(t):
    x = t.b(2, 3)
    assert (x.shape, x.ndim, x.size, x.batch_size, x.dtype) == ((2, 3), 2, 6, t.size, t.xp.float64)
    assert x.device == x.value.device and x.physical is x.value
    assert x.__array_namespace__() is t.ns
    t.compare(x.T, [t.example(x, i).T for i in range(t.size)])
    t.compare(x.mT, [t.xp.matrix_transpose(t.example(x, i)) for i in range(t.size)])
    assert t.b().shape == () and t.b().size == 1


BINARY_OPERATORS = [
    *(operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod, operator.pow),
    *(operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge),
]
BITWISE_OPERATORS = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]


def check_operator(t: Bench, f: Callable[[Any, Any], Any], x: Any, y: Any) -> None:
    t.compare(f(x, y), [f(t.example(x, i), t.example(y, i)) for i in range(t.size)])


@pytest.mark.parametrize("f", BINARY_OPERATORS + BITWISE_OPERATORS, ids=lambda f: f.__name__)
def test_binary_operators(t, f):
    kind = "int" if f in BITWISE_OPERATORS else "float"
    scalar = SCALAR[kind]
    x, y = t.b(2, 3, kind=kind), t.b(3, kind=kind)
    check_operator(t, f, x, y)
    check_operator(t, f, x, scalar)
    check_operator(t, f, scalar, x)
    check_operator(t, f, x, t.plain(3, kind=kind))
    if t.library.name != "array_api_strict":  # its arrays refuse other types rather than defer (see below)
        check_operator(t, f, t.plain(4, 1, 3, kind=kind), y)


@pytest.mark.parametrize("f", BINARY_OPERATORS[:7] + BITWISE_OPERATORS, ids=lambda f: f.__name__)
def test_in_place_operators_update_the_value(t, f):
    kind = "int" if f in BITWISE_OPERATORS else "float"
    in_place = getattr(operator, "i" + f.__name__.rstrip("_"))
    for y in [t.b(3, kind=kind), t.plain(3, kind=kind), SCALAR[kind]]:
        x = t.b(2, 3, kind=kind)
        want = [f(t.example(x, i), t.example(y, i)) for i in range(t.size)]
        assert in_place(x, y) is x
        t.compare(x, want)


def test_matmul_and_unary_operators(t):
    x, m = t.b(2, 3), t.b(3, 3)
    check_operator(t, operator.matmul, x, m)
    check_operator(t, operator.matmul, x, t.plain(3, 2))
    check_operator(t, operator.matmul, t.b(3), m)
    if t.library.name != "array_api_strict":
        check_operator(t, operator.matmul, t.plain(2, 3), m)
    want = [t.example(m, i) @ t.example(m, i) for i in range(t.size)]
    m @= m
    t.compare(m, want)
    for f, kind in [(operator.neg, "float"), (operator.pos, "float"), (abs, "float"), (operator.invert, "int")]:
        x = t.b(2, 3, kind=kind)
        t.compare(f(x), [f(t.example(x, i)) for i in range(t.size)])


def test_arrays_of_numpy_torch_and_jax_defer_to_batched_arrays(t):
    x, plain = t.b(3), t.plain(3)
    if t.library.name == "array_api_strict":
        with pytest.raises(TypeError):  # array-api-strict refuses what is not its own array
            plain + x
        return
    for f in [operator.add, operator.mul, operator.lt, operator.eq, operator.pow, operator.matmul]:
        out = f(plain, x)
        assert isinstance(out, BatchedArray) and out.namespace is t.ns, f


@pytest.mark.parametrize(
    "read",
    [bool, float, int, complex, operator.index, np.asarray, lambda x: x.tolist(), lambda x: x.item()],
    ids=["bool", "float", "int", "complex", "index", "asarray", "tolist", "item"],
)
def test_reading_a_python_value_raises(t, read):
    with pytest.raises(BatchedValueError, match="differs from example to example"):
        read(t.b())
    with pytest.raises(BatchedValueError):
        t.b().__dlpack__()


# --- indexing ----------------------------------------------------------------------------------------
def keys(t: Bench) -> list[tuple[Any, bool]]:
    """(key, whether array-api-strict takes it) for arrays of logical shape (3, 4, 5)."""
    xp, b = t.xp, lambda *shape: BatchedArray(t.xp.asarray(t.rng.integers(0, 3, (t.size, *shape))), t.ns)
    i, j = xp.asarray([0, 2, 1]), xp.asarray([[1], [2]])
    return [
        ((0, ...), True),
        ((slice(1, 3), ...), True),
        ((..., 1), True),
        ((None, 0, slice(None), slice(0, 5, 2)), True),
        ((i, 1, i), True),
        ((j, i, 0), True),
        ((b(3), 0, b(2, 1)), True),
        ((b(), b(), b()), True),
        ((i, j, b(2, 3)), True),
        ((slice(None), i), False),
        ((slice(None), i, j), False),
        ((i, slice(None), i), False),
        ((..., b(2)), False),
        ((None, slice(None), b(2)), False),
        ((slice(1, None), None, b(4), slice(None)), False),
        ((0, slice(None), i), False),
        ((xp.asarray(t.rng.random((3, 4)) < 0.5),), False),
        ((slice(None), xp.asarray(t.rng.random((4, 5)) < 0.5)), False),
        (xp.asarray(t.rng.random((3, 4, 5)) < 0.5), True),
    ]


def test_getitem(t):
    for key, strict in keys(t):
        if strict or t.library.name != "array_api_strict":
            x = t.b(3, 4, 5)
            t.compare(x[key], [t.example(x, i)[t.example(key, i)] for i in range(t.size)])


def test_getitem_with_a_batched_boolean_mask(t):
    x = t.b(3, 4)
    mask = BatchedArray(t.xp.asarray(np.stack([np.eye(3, 4, k=i % 2, dtype=bool) for i in range(t.size)])), t.ns)
    t.compare(x[mask], [t.example(x, i)[t.example(mask, i)] for i in range(t.size)])
    if t.size > 1:
        uneven = BatchedArray(t.xp.asarray(np.tril(np.ones((t.size, t.size), dtype=bool))), t.ns)
        with pytest.raises(BatchedValueError, match="different shapes"):
            t.b(t.size)[uneven]


def test_setitem(t):
    if not t.library.mutable:
        pytest.skip(f"{t.library.name} arrays are immutable")
    for key, strict in keys(t):
        if t.library.name == "array_api_strict" and not (strict and _basic(key)):
            continue  # array-api-strict writes through basic indices without None only
        shape = t.example(t.b(3, 4, 5), 0)[t.example(key, 0)].shape
        for value in [0.25, t.plain(), t.b(), t.plain(*shape[-1:]), t.b(*shape)]:
            x = t.b(3, 4, 5)
            want = []
            for i in range(t.size):
                copy = t.xp.asarray(t.example(x, i), copy=True)
                copy[t.example(key, i)] = t.example(value, i)
                want.append(copy)
            x[key] = value
            t.compare(x, want)


def _basic(key: Any) -> bool:
    return not any(hasattr(k, "shape") or k is None for k in (key if isinstance(key, tuple) else (key,)))


def test_setitem_through_a_batched_boolean_mask(t):
    if not t.library.mutable:
        pytest.skip(f"{t.library.name} arrays are immutable")
    for value in [0.5, t.b()]:
        x = t.b(3, 4)
        mask = t.b(3, 4) < 0.5
        want = []
        for i in range(t.size):
            copy = t.xp.asarray(t.example(x, i), copy=True)
            copy[t.example(mask, i)] = t.example(value, i)
            want.append(copy)
        x[mask] = value
        t.compare(x, want)


# --- the loop fallback ----------------------------------------------------------------------------------
def test_a_function_without_a_rule_loops_warns_once_and_is_recorded(t):
    FALLBACKS_USED.discard("isin")
    x, elements = t.b(2, 3, kind="int"), t.plain(4, kind="int")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t.check("isin", x, elements)
        t.check("isin", x, elements, invert=True)
    assert [w.category for w in caught] == [BatchingFallbackWarning]
    assert "vmap: no batching rule for isin" in str(caught[0].message)
    assert "isin" in FALLBACKS_USED


def test_loop_and_stack_results(t):
    x = t.b(3)
    both = t.ns.loop_and_stack(lambda a: (t.xp.sum(a), a * 2), (x,))
    t.compare(both, [(t.xp.sum(t.example(x, i)), t.example(x, i) * 2) for i in range(t.size)])
    assert t.ns.loop_and_stack(lambda a: a.shape[0], (x,)) == 3
    if t.size > 1:
        with pytest.raises(BatchedValueError, match="different Python value"):
            t.ns.loop_and_stack(lambda a: float(a[0]), (x,))


def test_helpers(t):
    ns, plain = t.ns, t.plain(2, 3)
    lifted = ns.lift(plain)
    assert ns.is_batched(lifted) and not ns.is_batched(plain) and ns.lift(lifted) is lifted
    t.compare(lifted, [plain] * t.size)
    moved = ns.move_batch_axis(lifted, -1)
    assert tuple(moved.shape) == (2, 3, t.size)
    t.compare(ns.batch(moved, axis=-1), [plain] * t.size)
    assert ns.example((lifted, 4), 0)[1] == 4


# --- nested vmap --------------------------------------------------------------------------------------------
OUTER, INNER = 3, 2


@pytest.fixture
def nest():
    outer = BatchedNamespace(np, OUTER)
    return outer, BatchedNamespace(outer, INNER)


def full(x: Any, outer: BatchedNamespace, inner: BatchedNamespace) -> np.ndarray:
    """Every (outer, inner) example of `x`, as a numpy array with both batch axes in front."""
    if inner.is_batched(x):
        v = x.value
        v = v.value if outer.is_batched(v) else np.broadcast_to(v, (OUTER, *v.shape))
        return np.asarray(v)
    v = x.value if outer.is_batched(x) else np.broadcast_to(x, (OUTER, *np.shape(x)))
    return np.broadcast_to(v[:, None], (OUTER, INNER, *v.shape[1:]))


def nested_check(nest: tuple, fn: Callable[..., Any], *args: Any, tol: float = 0.0) -> None:
    """`fn` of the batched namespace (or operators) equals the double loop of numpy's."""
    got = full(fn(nest[1], *args), *nest)
    outer, inner = range(OUTER), range(INNER)
    want = np.stack(
        [
            np.stack([np.asarray(fn(np, *(full(a, *nest)[i, j] if _arrayish(a) else a for a in args))) for j in inner])
            for i in outer
        ]
    )
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _arrayish(a: Any) -> bool:
    return isinstance(a, (BatchedArray, np.ndarray))


def test_nested_vmap(nest):
    outer, inner = nest
    rng = np.random.default_rng(0)
    both = BatchedArray(BatchedArray(rng.random((OUTER, INNER, 3, 4)), outer), inner)  # batched at both levels
    level2 = BatchedArray(rng.random((INNER, 4)), inner)  # the inner vmap's alone
    level1 = BatchedArray(rng.random((OUTER, 4)), outer)  # the outer vmap's alone: the inner one sees it unbatched
    plain = rng.random((3, 4))
    index = BatchedArray(BatchedArray(rng.integers(0, 3, (OUTER, INNER, 2)), outer), inner)
    nested_check(nest, lambda xp, a, b: xp.add(a, b), both, level1)
    nested_check(nest, lambda xp, a, b, c: a * b - c, both, level2, level1)
    nested_check(nest, lambda xp, a, b: b + a, level2, level1)
    nested_check(nest, lambda xp, a, b: a + b, level1, level2)
    nested_check(nest, lambda xp, a: xp.sum(a, axis=0), both, tol=1e-12)
    nested_check(nest, lambda xp, a, b: xp.matmul(a, b), both, level1, tol=1e-12)
    nested_check(nest, lambda xp, a, b: a @ b, level2, plain.T, tol=1e-12)
    nested_check(nest, lambda xp, a, b: xp.concat([a, b], axis=0), both, plain)
    nested_check(nest, lambda xp, a: xp.sort(a, axis=-1), both)
    nested_check(nest, lambda xp, a, b: xp.take(a, b, axis=0), both, index)
    nested_check(nest, lambda xp, a, b: a[b, 1:3], both, index)
    nested_check(nest, lambda xp, a: xp.reshape(a, (2, 6)), both)
    nested_check(nest, lambda xp, a: xp.linalg.vector_norm(a, axis=-1), level2, tol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BatchingFallbackWarning)
        nested_check(nest, lambda xp, a, b: xp.isin(a, b), index, np.asarray([0, 2]))


def test_nested_levels_are_told_apart(nest):
    outer, inner = nest
    assert (outer.depth, inner.depth) == (1, 2)
    level1 = outer.lift(np.ones(2))
    level2 = inner.lift(np.ones(2))
    assert inner.is_batched(level2) and not inner.is_batched(level1) and not outer.is_batched(level2)
    assert (level1 + level2).namespace is inner and (level2 + level1).namespace is inner


def test_docstring_examples():
    assert doctest.testmod(batched, optionflags=doctest.ELLIPSIS).failed == 0
