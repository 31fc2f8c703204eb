"""The checker itself: `ag.gradcheck` rejects wrong VJPs (including a permuted one that a
plain ``sum()`` of the output lets through), accepts right ones, names the input and element
that disagree, and refuses float32 inputs, whose rounding central differences cannot see past."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import autograd_core as ag
from autograd_core.graph.tensor_base import record
from tests.test_gradcheck import leaf, normal, table


def primitive(forward, *vjps):
    """A one-op function recorded with hand-written VJPs: ``vjps[i](ns, g, *inputs)`` is the
    gradient of input i, `forward` maps the inputs' backend arrays to the output's."""

    def fn(*inputs):
        data = forward(*(x.array for x in inputs))
        return record(
            "custom",
            data,
            inputs[0].backend,
            inputs,
            [lambda ns, g, out, *xs, vjp=vjp: vjp(ns, g, *xs) for vjp in vjps],
        )

    return fn


def square(vjp):
    return primitive(lambda d: d * d, vjp)


def double(vjp):
    return primitive(lambda d: 2 * d, vjp)


def rotated(ns, g):
    """The 3 elements of `g` in the order 1, 2, 0."""
    return ns.concat([g[1:], g[:1]])


def reversed_(ns, g):
    return ns.stack([g[2], g[1], g[0]])


WRONG = table(
    [
        ("square: g * x, the factor 2 lost", square(lambda ns, g, x: g * x)),
        ("square: off by 0.1 percent", square(lambda ns, g, x: 2.002 * g * x)),
        ("square: no gradient at all", square(lambda ns, g, x: 0 * g)),
        ("square: NaN gradient", square(lambda ns, g, x: g * x * math.nan)),
        ("double: gradient permuted", double(lambda ns, g, x: 2 * rotated(ns, g))),
        ("double: gradient reversed", double(lambda ns, g, x: 2 * reversed_(ns, g))),
    ]
)

RIGHT = table(
    [
        ("square", square(lambda ns, g, x: 2 * g * x)),
        ("double", double(lambda ns, g, x: 2 * g)),
    ]
)


@pytest.mark.parametrize("fn", WRONG)
def test_rejects_a_wrong_vjp(float64_backend, fn):
    with pytest.raises(ag.GradcheckError, match="gradient mismatch at input 0"):
        ag.gradcheck(fn, [leaf(normal((3,)))])


@pytest.mark.parametrize("fn", WRONG)
def test_reports_false_without_raising(float64_backend, fn):
    assert ag.gradcheck(fn, [leaf(normal((3,)))], raise_exception=False) is False


@pytest.mark.parametrize("fn", RIGHT)
def test_accepts_a_right_vjp(float64_backend, fn):
    assert ag.gradcheck(fn, [leaf(normal((3,)))]) is True


def test_permuted_vjp_passes_a_sum_but_not_the_random_projection(float64_backend):
    permuted = double(lambda ns, g, x: 2 * rotated(ns, g))
    x = leaf(normal((3,)))
    permuted(x).sum().backward()  # a ones gradient is invariant under any permutation...
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])  # ...so sum() sees the right answer
    with pytest.raises(ag.GradcheckError):
        ag.gradcheck(permuted, [leaf(normal((3,)))])


def test_error_names_the_input_and_the_element(float64_backend):
    # a * b whose VJP for b is right everywhere except at element (1, 2), where it is zero
    def masked(ns, g, a, b):
        return ns.where(ns.reshape(ns.arange(6), (2, 3)) == 5, 0.0, g * a)

    product = primitive(lambda a, b: a * b, lambda ns, g, a, b: g * b, masked)
    with pytest.raises(ag.GradcheckError, match=re.escape("input 1, element (1, 2): backward gave")) as error:
        ag.gradcheck(product, [leaf(normal((2, 3), seed=1)), leaf(normal((2, 3), seed=2))])
    assert "finite differences" in str(error.value)


def test_refuses_float32_inputs(float64_backend):
    inputs = [leaf(normal((3,))), ag.tensor(normal((3,)), dtype="float32", requires_grad=True)]
    with pytest.raises(TypeError, match=re.escape("gradcheck needs float64 inputs; input 1 is float32")):
        ag.gradcheck(ag.multiply, inputs)


def test_inputs_without_requires_grad_are_constants(float64_backend):
    # Not checked, so their dtype is free; a float32 constant is fine next to a float64 input.
    constant = ag.tensor(normal((3,), seed=1), dtype="float32")
    assert ag.gradcheck(ag.multiply, [leaf(normal((3,))), constant]) is True


def test_leaves_the_callers_inputs_alone(float64_backend):
    x = leaf(normal((2, 3)))
    before = x.detach().numpy().copy()
    ag.gradcheck(ag.tanh, [x])
    assert x.grad is None
    np.testing.assert_array_equal(x.detach().numpy(), before)
