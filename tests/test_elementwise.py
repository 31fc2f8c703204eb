"""The standard's elementwise functions of `autograd_core.ops.elementwise`: gradients against central
differences and against PyTorch, zero gradients where PyTorch gives them, second derivatives,
and forward values against numpy on the edge values each function exists for.

One table names every differentiable function with its PyTorch twin and where to draw its
inputs (inside the domain, away from kinks: acosh > 1, atanh in (-1, 1), copysign's x1 away
from 0...). The gradient checks and the PyTorch parity cases are both built from it.
"""

from __future__ import annotations

import doctest
import math
from collections.abc import Callable

import numpy as np
import pytest
import torch

import autograd_core as ag
import backends
from autograd_core.ops import elementwise
from torch_oracle import Arg, compare_with_torch

Draw = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]


# --- where each function's inputs are drawn -------------------------------------------------------
def normal(r: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return r.standard_normal(shape)


def wide(r: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Several units either side of 0: the rounding functions cross many integers."""
    return 3 * r.standard_normal(shape)


def inside_unit(r: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """In (-0.9, 0.9): the domain of asin/acos/atanh, clear of the infinite slope at +-1."""
    return r.uniform(-0.9, 0.9, shape)


def above_one(r: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return r.uniform(1.2, 3.0, shape)


def positive(r: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return r.uniform(0.3, 2.0, shape)


def away_from_zero(r: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Magnitudes in [0.3, 2] with random signs: clear of the pole of 1/x and of copysign's kink."""
    return r.uniform(0.3, 2.0, shape) * r.choice([-1.0, 1.0], shape)


def inside_half_period(r: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """In (-1.3, 1.3): tan is smooth there (its poles are at +-pi/2)."""
    return r.uniform(-1.3, 1.3, shape)


# --- the table: (name, ours, torch's, draw of each operand) ----------------------------------------
UNARY = [
    ("exp", ag.exp, torch.exp, normal),
    ("log", ag.log, torch.log, positive),
    ("log1p", ag.log1p, torch.log1p, positive),
    ("sqrt", ag.sqrt, torch.sqrt, positive),
    ("abs", ag.abs, torch.abs, away_from_zero),
    ("sin", ag.sin, torch.sin, wide),
    ("cos", ag.cos, torch.cos, wide),
    ("tanh", ag.tanh, torch.tanh, normal),
    ("sigmoid", ag.sigmoid, torch.sigmoid, wide),
    ("relu", ag.relu, torch.relu, away_from_zero),
    ("erf", ag.erf, torch.erf, normal),
    ("softmax", ag.softmax, lambda x: torch.softmax(x, -1), normal),
    ("acos", ag.acos, torch.acos, inside_unit),
    ("asin", ag.asin, torch.asin, inside_unit),
    ("atan", ag.atan, torch.atan, wide),
    ("tan", ag.tan, torch.tan, inside_half_period),
    ("sinh", ag.sinh, torch.sinh, normal),
    ("cosh", ag.cosh, torch.cosh, normal),
    ("acosh", ag.acosh, torch.acosh, above_one),
    ("asinh", ag.asinh, torch.asinh, wide),
    ("atanh", ag.atanh, torch.atanh, inside_unit),
    ("expm1", ag.expm1, torch.expm1, normal),
    ("exp2", ag.exp2, torch.exp2, wide),
    ("log2", ag.log2, torch.log2, positive),
    ("log10", ag.log10, torch.log10, positive),
    ("square", ag.square, torch.square, normal),
    ("reciprocal", ag.reciprocal, torch.reciprocal, away_from_zero),
    ("real", ag.real, torch.real, normal),
    ("conj", ag.conj, torch.conj, normal),
]
PIECEWISE_CONSTANT = [
    ("sign", ag.sign, torch.sign, wide),
    ("floor", ag.floor, torch.floor, wide),
    ("ceil", ag.ceil, torch.ceil, wide),
    ("trunc", ag.trunc, torch.trunc, wide),
    ("round", ag.round, torch.round, wide),
]
BINARY = [
    ("atan2", ag.atan2, torch.atan2, normal, normal),
    ("hypot", ag.hypot, torch.hypot, normal, normal),
    ("logaddexp", ag.logaddexp, torch.logaddexp, normal, normal),
    ("copysign", ag.copysign, torch.copysign, away_from_zero, away_from_zero),
    ("nextafter", ag.nextafter, torch.nextafter, normal, normal),
]


def test_the_table_covers_every_function():
    """A function added to the module without a gradient test fails here (signbit and imag are
    tested on their own: a boolean result, a refusal of real input)."""
    tabled = {name for name, *_ in UNARY + PIECEWISE_CONSTANT + BINARY}
    assert tabled | {"signbit", "imag"} == set(elementwise.__all__)


def host(draw: Draw, shape: tuple[int, ...], seed: int) -> np.ndarray:
    return draw(np.random.default_rng(seed), shape)


def leaf(values: np.ndarray) -> ag.Tensor:
    return ag.tensor(values, dtype="float64", requires_grad=True)


def params(cases: list) -> list:
    return [pytest.param(*values, id=name) for name, *values in cases]


# --- gradients against central differences, float64, every backend ---------------------------------
@pytest.mark.parametrize(("fn", "theirs", "draw"), params(UNARY + PIECEWISE_CONSTANT))
def test_unary_gradcheck(float64_backend, fn, theirs, draw):
    assert ag.gradcheck(fn, [leaf(host(draw, (2, 3), seed=1))])


BINARY_SHAPES = [((2, 3), (2, 3)), ((2, 1), (3,)), ((), (2, 3))]


@pytest.mark.parametrize(("shape_a", "shape_b"), BINARY_SHAPES, ids=str)
@pytest.mark.parametrize(("fn", "theirs", "draw_a", "draw_b"), params(BINARY))
def test_binary_gradcheck(float64_backend, fn, theirs, draw_a, draw_b, shape_a, shape_b):
    a, b = host(draw_a, shape_a, seed=1), host(draw_b, shape_b, seed=2)
    assert ag.gradcheck(fn, [leaf(a), leaf(b)])


@pytest.mark.parametrize("side", ["tensor_scalar", "scalar_tensor"])
@pytest.mark.parametrize(("fn", "theirs", "draw_a", "draw_b"), params(BINARY))
def test_binary_gradcheck_with_a_python_scalar(float64_backend, fn, theirs, draw_a, draw_b, side):
    if side == "tensor_scalar":
        a, b = host(draw_a, (2, 3), seed=1), float(host(draw_b, (), seed=2))
        assert ag.gradcheck(lambda x: fn(x, b), [leaf(a)])
    else:
        a, b = float(host(draw_a, (), seed=1)), host(draw_b, (2, 3), seed=2)
        assert ag.gradcheck(lambda x: fn(a, x), [leaf(b)])


@pytest.mark.parametrize(
    ("fn", "draws"),
    [
        pytest.param(ag.tan, [inside_half_period], id="tan"),
        pytest.param(ag.acosh, [above_one], id="acosh"),
        pytest.param(ag.atan2, [normal, normal], id="atan2"),
        pytest.param(ag.logaddexp, [normal, normal], id="logaddexp"),
        pytest.param(ag.hypot, [normal, normal], id="hypot"),
    ],
)
def test_second_derivatives(float64_backend, fn, draws):
    """The VJPs recorded with create_graph=True are themselves right (each rule is written once
    and runs on Tensors there)."""
    inputs = [leaf(host(draw, (3,), seed=i)) for i, draw in enumerate(draws)]
    assert ag.gradgradcheck(fn, inputs)


# --- PyTorch parity: values and gradients ---------------------------------------------------------
def arg(draw: Draw, shape: tuple[int, ...]) -> Arg:
    return Arg(lambda r: draw(r, shape))


def dims(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) or "0d"


def with_constant(f: Callable, value: float, first: bool) -> Callable:
    """`f` with one operand fixed: a Python scalar for ours, a 0-d float64 tensor for torch."""

    def call(x):
        c = value if isinstance(x, ag.Tensor) else torch.tensor(value, dtype=torch.float64)
        return f(c, x) if first else f(x, c)

    return call


PARITY_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3))]
PARITY = (
    [pytest.param(ours, theirs, [arg(draw, (3, 4))], id=name) for name, ours, theirs, draw in UNARY]
    + [
        pytest.param(ours, theirs, [arg(draw_a, sa), arg(draw_b, sb)], id=f"{name}-{dims(sa)}-{dims(sb)}")
        for name, ours, theirs, draw_a, draw_b in BINARY
        for sa, sb in PARITY_SHAPES
    ]
    + [
        pytest.param(
            with_constant(ours, 0.7, first),
            with_constant(theirs, 0.7, first),
            [arg(draw, (3, 4))],
            id=f"{name}-{'scalar_first' if first else 'scalar_second'}",
        )
        for name, ours, theirs, draw, _ in BINARY
        for first in (False, True)
    ]
    + [
        # huge operands: the values and both gradients stay finite (sigmoid of +-2000 is 1 and 0)
        pytest.param(ag.logaddexp, torch.logaddexp, [arg(normal, (3, 4)), arg(normal, (3, 4))], id="logaddexp-small"),
        pytest.param(
            ag.logaddexp,
            torch.logaddexp,
            [Arg(lambda r: 1e3 * r.standard_normal((3, 4))), Arg(lambda r: 1e3 * r.standard_normal((3, 4)))],
            id="logaddexp-large",
        ),
        pytest.param(
            ag.hypot,
            torch.hypot,
            [Arg(lambda r: 1e200 * r.standard_normal((3, 4))), Arg(lambda r: 1e200 * r.standard_normal(4))],
            id="hypot-large",
        ),
        pytest.param(ag.expm1, torch.expm1, [Arg(lambda r: 1e-9 * r.standard_normal((3, 4)))], id="expm1-near-zero"),
        pytest.param(
            lambda x: ag.tan(ag.atan(x)) + ag.sinh(ag.asinh(x)),
            lambda x: torch.tan(torch.atan(x)) + torch.sinh(torch.asinh(x)),
            [arg(wide, (3, 4))],
            id="chain-inverses",
        ),
    ]
)


@pytest.mark.parametrize(("ours", "theirs", "args"), PARITY)
def test_matches_torch(float64_backend, ours, theirs, args):
    compare_with_torch(ours, theirs, args)


@pytest.mark.parametrize(("fn", "theirs", "draw"), params(PIECEWISE_CONSTANT))
def test_piecewise_constant_gradient_is_exactly_zero_as_in_torch(float64_backend, fn, theirs, draw):
    values = host(draw, (3, 4), seed=3)
    x, t = leaf(values), torch.tensor(values, requires_grad=True)
    y, ty = fn(x), theirs(t)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    (y * 2.0).sum().backward()
    (ty * 2.0).sum().backward()
    assert np.all(x.grad.numpy() == 0) and np.all(t.grad.numpy() == 0)


def test_copysign_and_nextafter_gradients_as_in_torch(float64_backend):
    """copysign: x1 gets g * (out / x1) with 0 at x1 == +-0, x2 nothing; nextafter: x1 gets g,
    x2 nothing (PyTorch's derivatives.yaml)."""
    a, b = np.array([1.5, -0.0, 0.0, -2.0, 3.0]), np.array([-1.0, 1.0, -1.0, -0.0, 2.0])
    weight = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    for ours, theirs in ((ag.copysign, torch.copysign), (ag.nextafter, torch.nextafter)):
        x, y = leaf(a), leaf(b)
        tx, ty = (torch.tensor(v, requires_grad=True) for v in (a, b))
        (ours(x, y) * ag.asarray(weight)).sum().backward()
        (theirs(tx, ty) * torch.tensor(weight)).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
        np.testing.assert_array_equal(y.grad.numpy(), ty.grad.numpy())
    np.testing.assert_array_equal(x.grad.numpy(), weight)  # nextafter: x1's gradient passes through


def test_signbit_is_a_boolean_outside_the_graph(backend):
    values = [-0.0, 0.0, -1.5, 2.0, -math.inf]
    x = ag.tensor(values, requires_grad=True)
    out = ag.signbit(x)
    assert out.dtype == ag.bool and not out.requires_grad
    assert out.tolist() == np.signbit(values).tolist()


def test_imag_refuses_a_real_tensor_as_torch_does(backend):
    with pytest.raises(TypeError, match="imag needs a complex tensor"):
        ag.imag(ag.asarray([1.0, 2.0]))
    with pytest.raises(RuntimeError):
        torch.imag(torch.tensor([1.0, 2.0]))


def test_complex_parts_match_numpy(float64_backend):
    values = np.array([1 + 2j, -3 - 0.5j, 0j])
    z = ag.asarray(values, dtype="complex128")
    for fn, expected in ((ag.real, values.real), (ag.imag, values.imag), (ag.conj, values.conj())):
        out = fn(z)
        assert out.dtype == ("complex128" if fn is ag.conj else "float64")
        np.testing.assert_array_equal(out.numpy(), expected)
    assert ag.real(ag.asarray([1 + 2j], dtype="complex64")).dtype == ag.float32
    assert ag.imag(ag.asarray([1 + 2j], dtype="complex64")).dtype == ag.float32


# --- forward values against numpy on edge values ----------------------------------------------------
INF, NAN = math.inf, math.nan
EDGES = [
    (
        "logaddexp",
        ag.logaddexp,
        np.logaddexp,
        [[1e3, -1e3, 1e308, -INF, INF, 0.0, 700.0], [1e3, -999.0, 1e308, -INF, 1.0, -INF, -700.0]],
    ),
    ("expm1", ag.expm1, np.expm1, [[1e-10, -1e-12, 1e-300, 0.0, -0.0, 1e-5, 710.0, -INF]]),
    ("hypot", ag.hypot, np.hypot, [[3e300, 1e-300, INF, 0.0, -5.0], [4e300, 1e-300, NAN, -0.0, 12.0]]),
    ("atan2", ag.atan2, np.arctan2, [[0.0, -0.0, -0.0, 0.0, 1.0, -1.0, INF], [-0.0, -0.0, 0.0, 0.0, -INF, -1.0, INF]]),
    ("copysign", ag.copysign, np.copysign, [[1.5, 1.5, -2.0, INF, 0.0], [-0.0, 0.0, 3.0, -1.0, -INF]]),
    ("nextafter", ag.nextafter, np.nextafter, [[1.0, 0.0, -0.0, 1.0, 1e308], [2.0, 1.0, -1.0, 1.0, INF]]),
    ("round", ag.round, np.round, [[0.5, 1.5, 2.5, -0.5, -2.5, 2.4999999999999996, -0.0]]),
    ("trunc", ag.trunc, np.trunc, [[-0.5, 0.5, -1.7, 1.7]]),
    ("floor", ag.floor, np.floor, [[-0.5, 0.5, -1.0, -0.0]]),
    ("ceil", ag.ceil, np.ceil, [[-0.5, 0.5, 1.0, -0.0]]),
    ("reciprocal", ag.reciprocal, np.reciprocal, [[0.0, -0.0, 4.0, INF]]),
    ("exp2", ag.exp2, np.exp2, [[10.0, -1022.0, 1024.0, 0.5, -INF]]),
    ("log2", ag.log2, np.log2, [[1024.0, 0.0, 3.0, INF]]),
    ("log10", ag.log10, np.log10, [[1e-300, 1000.0, 0.0]]),
    ("atanh", ag.atanh, np.arctanh, [[1.0, -1.0, 1e-20, 0.5]]),
    ("acosh", ag.acosh, np.arccosh, [[1.0, 1e300, 2.0]]),
    ("asinh", ag.asinh, np.arcsinh, [[1e300, -1e-300, -0.0]]),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's divide-by-zero notes on the reference
@pytest.mark.parametrize(("fn", "reference", "inputs"), params(EDGES))
def test_edge_values_match_numpy(float64_backend, fn, reference, inputs):
    ours = fn(*(ag.asarray(v, dtype="float64") for v in inputs)).numpy()
    expected = reference(*(np.asarray(v) for v in inputs))
    np.testing.assert_allclose(ours, expected, rtol=np.finfo(np.float64).eps, atol=0)  # within one ulp
    np.testing.assert_array_equal(np.signbit(ours), np.signbit(expected))  # signed zeros and infinities


def test_exp2_subnormal_results(float64_backend):
    smallest_normal = ag.asarray([np.finfo(np.float64).tiny], dtype="float64")
    if (smallest_normal / 4).item() == 0.0:
        pytest.skip(f"{float64_backend.name} flushes subnormal results to zero (XLA on CPU does)")
    values = np.array([-1074.0, -1030.5])
    np.testing.assert_allclose(ag.exp2(ag.asarray(values)).numpy(), np.exp2(values), rtol=1e-10, atol=0)


# --- dtypes and operands -----------------------------------------------------------------------------
@pytest.mark.parametrize(("fn", "theirs", "draw_a", "draw_b"), params(BINARY))
def test_binary_dtype_with_python_scalars(backend, fn, theirs, draw_a, draw_b):
    """A Python float keeps float32 (a weak scalar) on either side; an int tensor with a float
    promotes to the default float, as PyTorch does; float32 with float64 gives float64."""
    x = ag.asarray([0.5, 1.5], dtype="float32")
    assert fn(x, 2.0).dtype == ag.float32 and fn(2, x).dtype == ag.float32
    assert fn(ag.asarray([1, 2]), 0.5).dtype == ag.float32
    if backend.supports_float64:  # mixed dtypes are promoted first (array_api_strict would refuse them)
        assert fn(x, ag.asarray([1.0, 2.0], dtype="float64")).dtype == ag.float64


@pytest.mark.parametrize(("fn", "theirs", "draw"), params(UNARY + PIECEWISE_CONSTANT))
def test_float32_stays_float32(backend, fn, theirs, draw):
    x = ag.asarray(host(draw, (3,), seed=0), dtype="float32")
    assert fn(x).dtype == ag.float32


def test_binary_functions_take_operands_positionally_only(backend):
    with pytest.raises(TypeError):
        ag.atan2(x1=ag.asarray([1.0]), x2=ag.asarray([1.0]))


def test_docstring_examples():
    """The examples in the docstrings run (the unary functions are made in ops' namespace, so
    a module-level doctest run would not find them)."""
    finder, runner = doctest.DocTestFinder(recurse=False), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    with backends.use("numpy"):
        for name in ["__module__", *elementwise.__all__]:
            target = elementwise if name == "__module__" else getattr(elementwise, name)
            for test in finder.find(target, name, module=False, globs={}):
                runner.run(test)
    assert runner.failures == 0
    assert runner.tries >= 7


def test_an_input_changed_in_place_after_the_forward_is_refused(backend):
    """Every elementwise function whose rule reads its input checks the input's version."""
    if not backend.mutable:
        pytest.skip(f"{backend.name} arrays cannot be changed in place")
    for fn in (ag.sinh, ag.atan, ag.log2, ag.square):
        y = ag.tensor([0.5, 0.25], requires_grad=True) * 1.0
        z = fn(y)
        with ag.no_grad():
            y += 1
        with pytest.raises(RuntimeError, match="modified by an in-place operation"):
            z.sum().backward()


def test_a_primitive_names_what_it_saves_from_a_fixed_list():
    from autograd_core.graph.registry import Primitive

    with pytest.raises(ValueError, match="saves must be"):
        Primitive("saves_typo_example", lambda ns, x: x, vjps=(None,), saves="input")
