"""The compiled sweep (autograd_core/graph/_sweep.c) against the Python loops it replaces: the same
order, the same gradients bit for bit, the same errors, hooks and ownership of ``.grad``, on
every backend. Each test runs once per path."""

from __future__ import annotations

import functools
import gc
import inspect
import shutil
import sys
import sysconfig
from contextlib import nullcontext

import numpy as np
import pytest

import autograd_core as ag
import nn
from autograd_core.autodiff import engine

tensor_module = sys.modules["autograd_core.graph.tensor_base"]

COMPILED = engine._sweep


def test_the_compiled_sweep_is_built_where_a_compiler_is():
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}) here, so the Python loops are the sweep")
    assert COMPILED is not None, "a C compiler is here but the C sweep did not build: pip install -e . again"


def random_graph(seed, backend):
    """Leaves of broadcastable shapes and a random DAG over them: shared nodes, broadcasting,
    ops with and without kept raw inputs (einsum keeps none), a scalar at the end."""
    rng = np.random.default_rng(seed)
    shapes = [(3, 4), (4,), (1, 4), (3, 1), ()]
    leaves = [ag.tensor(rng.standard_normal(s) * 0.5, dtype="float64", requires_grad=True) for s in shapes]
    nodes = list(leaves)
    for _ in range(40):
        a, b = (nodes[i] for i in rng.integers(len(nodes), size=2))
        kind = rng.integers(6)
        if kind == 0:
            nodes.append(a * b)
        elif kind == 1:
            nodes.append(a + b)
        elif kind == 2:
            nodes.append(a - 0.5 * b)
        elif kind == 3:
            nodes.append(ag.tanh(a))
        elif kind == 4 and a.ndim == 2 and a.shape == b.shape:
            nodes.append(ag.einsum("ij,ij->ij", a, b))
        else:
            nodes.append(ag.sum(a, axis=0) if a.ndim else ag.exp(a * 0.1))
    return leaves, sum(ag.sum(n) for n in nodes[len(leaves) :])


def gradients(seed, backend, sweep, monkeypatch):
    monkeypatch.setattr(engine, "_sweep", sweep)
    leaves, loss = random_graph(seed, backend)
    loss.backward()
    return [np.asarray(t.grad) for t in leaves]


@pytest.mark.parametrize("seed", range(5))
def test_gradients_equal_the_python_loops_bit_for_bit(backend, seed, monkeypatch):
    if COMPILED is None:
        pytest.skip("autograd_core.graph._sweep was not built")
    python = gradients(seed, backend, None, monkeypatch)
    compiled = gradients(seed, backend, COMPILED, monkeypatch)
    for p, c in zip(python, compiled):
        assert p.shape == c.shape and np.array_equal(p, c)


def test_topological_order_is_the_python_order(backend, monkeypatch):
    if COMPILED is None:
        pytest.skip("autograd_core.graph._sweep was not built")
    _, loss = random_graph(7, backend)
    compiled = [id(t) for t in engine.topological_order(loss)]
    monkeypatch.setattr(engine, "_sweep", None)
    assert [id(t) for t in engine.topological_order(loss)] == compiled


def test_a_chain_longer_than_the_recursion_limit(backend, sweep):
    x = ag.tensor(1.0, dtype="float64", requires_grad=True)
    y = x
    for _ in range(5_000):
        y = y * 1.0001
    y.backward()
    assert x.grad.item() == pytest.approx(1.0001**5_000, rel=1e-9)


def test_hooks_and_retained_gradients(backend, sweep):
    x = ag.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    h = x * 3
    h.retain_grad()
    h.register_hook(lambda g: g * 10)
    x.register_hook(lambda g: g + 1)
    (h * h).sum().backward()
    assert h.grad.tolist() == [60.0, 120.0]  # retained after the hook, as PyTorch does
    assert x.grad.tolist() == [181.0, 361.0]


def test_a_tensor_changed_in_place_is_refused(backend, sweep):
    if not backend.mutable:
        pytest.skip(f"{backend.name} arrays are immutable")
    x = ag.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    a = x * 1
    y = a * a
    a[0] = 5.0
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()


def test_an_in_place_change_elsewhere_needs_no_version_error(backend, sweep):
    if not backend.mutable:
        pytest.skip(f"{backend.name} arrays are immutable")
    x = ag.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    y = (x * x).sum()
    other = ag.tensor([0.0], dtype="float64")
    other[0] = 1.0  # moves the version epoch on: the sweep must check, and find nothing changed
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_backward_twice_needs_retain_graph(backend, sweep):
    x = ag.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]
    with pytest.raises(RuntimeError, match="a second time"):
        y.backward()


def test_an_error_in_a_vjp_reaches_the_caller(backend, sweep, monkeypatch):
    x = ag.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    y = ag.exp(x)
    y._vjps = [lambda ns, g, out, a: 1 / 0]
    with pytest.raises(ZeroDivisionError):
        y.sum().backward()


def test_only_a_gradient_the_sweep_made_becomes_grad_without_a_copy(backend, sweep, monkeypatch):
    """`_accumulate` asks `owns_memory` only of a gradient the sweep made itself (a VJP's
    fresh result, or a sum): one a VJP handed on is copied. Add's VJP hands the incoming
    gradient to both leaves, which must not share it."""
    asked = []
    owns_memory = type(backend).owns_memory
    monkeypatch.setattr(type(backend), "owns_memory", lambda self, a: asked.append(1) or owns_memory(self, a))
    x, w = (ag.tensor([1.0, 2.0], dtype="float64", requires_grad=True) for _ in range(2))
    (x * w).sum().backward()  # g * w and g * x: made by multiply's VJPs
    assert len(asked) == 2
    (x * x).sum().backward()  # into existing .grad: an addition, never an alias
    assert len(asked) == 2
    a, b = (ag.tensor([1.0, 2.0], dtype="float64", requires_grad=True) for _ in range(2))
    (a + b).sum().backward()  # add hands on its incoming gradient: no ownership asked for
    assert len(asked) == 2
    assert a.grad.array is not b.grad.array
    if backend.mutable:
        a.grad.array[0] = 7.0
        assert b.grad.tolist() == [1.0, 1.0]


def test_the_sweep_runs_on_each_backend_s_own_arrays(backend, sweep):
    x = ag.tensor(np.arange(6.0).reshape(2, 3), dtype="float64", requires_grad=True)
    b = ag.tensor([1.0, 2.0, 3.0], dtype="float64", requires_grad=True)
    ((x * b + b) ** 2).sum().backward()
    assert isinstance(x.grad.array, type(backend.xp.asarray([1.0])))
    xn, bn = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(np.asarray(x.grad), 2 * (xn * bn + bn) * bn, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(b.grad), (2 * (xn * bn + bn) * (xn + 1)).sum(0), rtol=1e-12)


RECORD_CASES = {  # (inputs, vjps) from a tensor `x` that requires grad, a constant `c` and two VJPs `f`, `g`
    "tensors that require grad": lambda x, c, f, g: ((x, x * 2), (f, g)),
    "a Python scalar": lambda x, c, f, g: ((x, 2.0), (f, g)),
    "a constant tensor": lambda x, c, f, g: ((x, c), (f, g)),
    "only constants": lambda x, c, f, g: ((c, c), (f, g)),
    "a list": lambda x, c, f, g: ([c, x], [f, g]),
    "fewer VJPs than inputs": lambda x, c, f, g: ((x, 2.0, x * 2), (f, g)),
    "no inputs": lambda x, c, f, g: ((), ()),
}
RECORD_CALLS = {  # how an op passes record's optional arguments
    "positional": lambda record, data, backend, inputs, vjps, raw: record(
        "add", data, backend, inputs, vjps, None, False, raw
    ),
    "keywords": lambda record, data, backend, inputs, vjps, raw: record(
        "add", data, backend, inputs, vjps, saves_output=True, raw_inputs=raw
    ),
    "defaults": lambda record, data, backend, inputs, vjps, raw: record("add", data, backend, inputs, vjps),
}


@pytest.mark.parametrize("case", RECORD_CASES)
@pytest.mark.parametrize("call", RECORD_CALLS)
@pytest.mark.parametrize("grad_enabled", [True, False])
@pytest.mark.parametrize("anomaly", [False, True])
def test_the_compiled_record_makes_what_record_makes(backend, case, call, grad_enabled, anomaly):
    if tensor_module.record is tensor_module.python_record:
        pytest.skip("autograd_core.graph._sweep was not built")
    x = ag.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    c = ag.tensor([3.0, 4.0], dtype="float64")
    inputs, vjps = RECORD_CASES[case](x, c, lambda ns, g, out, *a: g, lambda ns, g, out, *a: 2 * g)
    raw = tuple(t.array if isinstance(t, ag.Tensor) else t for t in inputs)
    data, made = x.array + 1.0, []
    with ag.enable_grad() if grad_enabled else ag.no_grad(), ag.detect_anomaly() if anomaly else nullcontext():
        for record in (tensor_module.python_record, tensor_module.record):
            made.append(RECORD_CALLS[call](record, data, backend, inputs, vjps, raw))
    python, compiled = made
    for name in ("grad", "requires_grad", "_parents", "_vjps", "_op", "_inputs", "_raw", "_saved", "_hooks"):
        slot = getattr(tensor_module.GraphFields.__dict__.get(name), "__get__", None)
        read = slot or (lambda t, name=name: getattr(t, name))
        assert read(compiled) == read(python), name  # the fields themselves: a non-leaf's .grad warns
        assert type(read(compiled)) is type(read(python)), name
    assert (compiled._trace is None) == (python._trace is None)
    assert compiled.array is python.array and compiled.backend is backend and type(compiled) is ag.Tensor


def test_the_compiled_record_refuses_what_record_refuses():
    for record in (tensor_module.python_record, tensor_module.record):
        with pytest.raises(TypeError, match="unexpected keyword argument 'saved_output'"):
            record("add", ag.tensor(1.0).array, ag.tensor(1.0).backend, (), (), saved_output=True)
        with pytest.raises(TypeError):
            record("add", ag.tensor(1.0).array)


def test_a_new_tensor_starts_with_graph_fields_defaults():
    """`GraphFields` (slots where the module is built) starts every tensor with the defaults
    of `GRAPH_FIELDS`, the one table of them; `data` and `backend` are unset until the maker
    sets them. The compiled module refuses a table that names other fields than its slots."""
    fresh = ag.Tensor.__new__(ag.Tensor)
    for name, default in tensor_module.GRAPH_FIELDS.items():
        assert getattr(fresh, name) is default, name
    with pytest.raises(AttributeError):
        fresh.array  # noqa: B018 - the read is the test
    assert ag.Tensor.__mro__[2] is tensor_module.GraphFields  # Tensor, TensorBase, GraphFields
    if COMPILED is not None:
        assert tensor_module.GraphFields is COMPILED.graph_fields(tensor_module.GRAPH_FIELDS)
        for wrong in ({**tensor_module.GRAPH_FIELDS, "_extra": None}, {"grad": None}):
            with pytest.raises(TypeError, match="graph_fields"):
                COMPILED.graph_fields(wrong)
        assert not hasattr(fresh, "__dict__") or "_parents" not in fresh.__dict__


def test_nothing_is_leaked_step_after_step(backend, sweep):
    """Every op's record and every visit hold references to the leaf's array; after each
    backward (and after an error in one) they must all be gone."""
    x = ag.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    w = ag.tensor([0.5, 0.25], dtype="float64", requires_grad=True)

    def step():
        x.grad = w.grad = None
        y = x
        for _ in range(50):
            y = ag.tanh(y * w + 0.1)
        y.sum().backward()
        failing = ag.exp(x * w)
        failing._vjps = [lambda ns, g, out, a: 1 / 0]
        try:
            failing.sum().backward()
        except ZeroDivisionError:
            return
        raise AssertionError("the VJP's error did not reach backward's caller")

    step()
    gc.collect()
    references, objects = sys.getrefcount(w.array), len(gc.get_objects())
    for _ in range(20):
        step()
    gc.collect()
    after = sys.getrefcount(w.array)  # outside the assert, whose rewriting holds its operands
    assert after == references
    assert len(gc.get_objects()) - objects < 50


COMPILED_OPERATORS = [  # binary_op's ops with a Python forward (divide's is a string): compiled where built
    ("__add__", "add"),
    ("__sub__", "subtract"),
    ("__mul__", "multiply"),
    ("__floordiv__", "floor_divide"),
    ("__mod__", "remainder"),
    ("__pow__", "pow"),
]
OPERANDS = {  # (x, y) from a float64 tensor that requires grad `x`, a constant `c` and a float32 `f`
    "tensors": lambda x, c, f: (x, x * 0.5 + 1.5),
    "broadcast": lambda x, c, f: (x, x[:1] + 1.0),
    "one requires grad": lambda x, c, f: (x, c),
    "constants": lambda x, c, f: (c, c + 1.0),
    "two dtypes": lambda x, c, f: (f, x),
    "a scalar": lambda x, c, f: (x, 1.5),
    "a parameter": lambda x, c, f: (x, nn.Parameter(c + 1.0)),
}


@pytest.mark.parametrize("dunder, name", COMPILED_OPERATORS)
@pytest.mark.parametrize("operands", OPERANDS)
@pytest.mark.parametrize("grad_enabled", [True, False])
@pytest.mark.parametrize("anomaly", [False, True])
def test_a_compiled_operator_makes_what_its_python_op_makes(backend, dunder, name, operands, grad_enabled, anomaly):
    """Tensor's operator (the compiled form, where built) against the namespace's Python op:
    the same values, dtype, graph record and gradients, in the common case and every other."""
    x = ag.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    c = ag.tensor([3.0, 4.0], dtype="float64")
    f = ag.tensor([0.5, 0.25], dtype="float32", requires_grad=True)
    a, b = OPERANDS[operands](x, c, f)
    made = []
    with ag.enable_grad() if grad_enabled else ag.no_grad(), ag.detect_anomaly() if anomaly else nullcontext():
        for op in (getattr(ag, name), getattr(ag.Tensor, dunder)):
            out = op(a, b)
            grads = None
            if out.requires_grad:
                x.grad = f.grad = None
                out.sum().backward(retain_graph=True)  # the operands' graph serves both ops
                grads = [None if t.grad is None else np.asarray(t.grad) for t in (x, f)]
            made.append((out, grads))
    (python, python_grads), (compiled, compiled_grads) = made
    np.testing.assert_array_equal(np.asarray(compiled.detach()), np.asarray(python.detach()))
    assert compiled.dtype == python.dtype and compiled.backend is python.backend
    assert compiled.requires_grad == python.requires_grad and compiled._op == python._op
    assert (compiled._trace is None) == (python._trace is None)
    assert str(compiled_grads) == str(python_grads)


def test_a_compiled_operator_is_a_method_with_its_python_op_s_signature_and_doc():
    if COMPILED is None:
        pytest.skip("autograd_core.graph._sweep was not built")
    for dunder, name in COMPILED_OPERATORS:
        assert getattr(ag.Tensor, dunder) is getattr(ag, name).method, dunder
    x, y = ag.tensor([2.0]), ag.tensor([3.0])
    assert x.__mul__(y).item() == ag.Tensor.__mul__(x, y).item() == 6.0
    assert inspect.signature(x.__mul__) == inspect.signature(functools.partial(ag.multiply, x))
    assert ag.Tensor.__mul__.__doc__ == ag.multiply.__doc__ and ag.Tensor.__mul__.__name__ == "multiply"
    assert ag.Tensor.__mul__.__wrapped__ is ag.multiply


@pytest.mark.skipif(COMPILED is None, reason="the C sweep is not built here")
def test_a_sweep_s_loop_is_chosen_from_its_own_graph_not_from_what_ran_before():
    """A vmap call, a complex graph and anomaly mode elsewhere in the process leave a later
    plain sweep on the compiled loop; the graphs that need the Python loop still get it."""

    def plain_sweep(loss):
        return engine.Sweep([loss], [ag.ones_like(loss)], False, False, None)

    x = ag.tensor([1.0, 2.0], requires_grad=True)
    assert plain_sweep((x * x).sum()).compiled
    ag.func.vmap(lambda v: ag.sum(v * v))(ag.ones((3, 2)))
    signal = ag.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    ag.fft.irfft(ag.fft.rfft(signal)).sum().backward()  # complex values inside the graph
    with ag.detect_anomaly():
        (x * 2.0).sum().backward()
    assert plain_sweep((x * x).sum()).compiled
    with ag.detect_anomaly():
        assert not plain_sweep((x * x).sum()).compiled
    assert not plain_sweep(ag.fft.irfft(ag.fft.rfft(signal)).sum()).compiled
