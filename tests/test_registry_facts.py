"""Everything about an op is on its primitive: the node holds the primitive, the registry
name is the attribute name, complex behaviour is a declared fact; and what a sweep does is
decided from the graph it sweeps, never from what the process did before."""

from __future__ import annotations

import pytest

import autograd_core as ag
from autograd_core import primitives
from autograd_core.autodiff import engine
from autograd_core.graph.registry import COMPLEX, Primitive, registry
from autograd_core.graph.tensor_base import _sweep


def test_a_node_holds_its_primitive():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    assert (x * x)._op is registry["multiply"]
    assert ag.exp(x)._op is registry["exp"]
    assert x[0]._op is primitives.basic_index
    assert repr(x * x).endswith("grad_fn=multiply)")


def test_registry_names_are_attribute_names():
    named = {n: getattr(primitives, n) for n in primitives.__all__}
    assert {n: p.name for n, p in named.items() if isinstance(p, Primitive) and p.name != n} == {}


def test_complex_behaviour_is_a_fact_of_the_primitive():
    assert all(p.complex in COMPLEX for p in registry.values())
    assert registry["multiply"].complex == "holomorphic" and registry["add"].complex == "safe"
    assert registry["maximum"].complex is None  # refused through complex values
    with pytest.raises(ValueError, match="complex must be one of"):
        Primitive("a_fact_unknown", lambda ns, x: x, complex="analytic")


def test_a_new_complex_capable_op_needs_no_engine_edit():
    """Declared holomorphic, an op's real rule gives PyTorch's complex gradient (conjugated)."""
    cube = Primitive("cube_holomorphic", lambda ns, x: x * x * x, vjps=(lambda ns, g, out, x: 3 * g * x * x,))
    cube.complex = "holomorphic"
    x = ag.tensor([0.5, -1.0], dtype="float64", requires_grad=True)
    z = ag.astype(x, "complex128") * (1 + 2j)
    loss = ag.real(cube.bind(z) * ag.conj(cube.bind(z))).sum()  # |z^3|^2 = |z|^6
    loss.backward()
    # d|((1+2i)x)^3|^2 / dx = 6 |1+2i|^6 x^5 = 750 x^5
    assert x.grad.tolist() == pytest.approx([750 * 0.5**5, -750.0])


def chain_loss() -> ag.Tensor:
    y = ag.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        y = y * 1.5
    return y.sum()


@pytest.mark.skipif(_sweep is None, reason="the compiled sweep is not built here")
def test_a_vmap_call_leaves_later_sweeps_compiled():
    """One vmap anywhere used to send every later backward() through the Python loop."""
    ag.func.vmap(lambda r: r * 2)(ag.ones((3, 2)))
    loss = chain_loss()
    sweep = engine.Sweep([loss], [ag.ones_like(loss)], False, False, None)
    assert sweep.compiled and not sweep.batched


def test_the_survey_reads_the_graph_it_sweeps():
    loss = chain_loss()
    assert engine.survey(engine.topological_order(loss), loss.backend) == (False, 0)
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    spectrum = ag.fft.rfft(x)
    complex_loss = ag.real(spectrum).sum()
    assert engine.survey(engine.topological_order(complex_loss), x.backend)[1] & engine.COMPLEX
    assert engine.survey(engine.topological_order(chain_loss()), x.backend) == (False, 0)  # the complex graph aside
    a = ag.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1.0
    c = b * b
    b.add_(1.0)
    assert engine.surveyed_order([c])[2] & engine.REBOUND
