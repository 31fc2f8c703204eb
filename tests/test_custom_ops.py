"""Ops defined by the user: `ag.Function` (PyTorch's form) and `ag.custom_vjp` (JAX's), on every
backend: gradients by finite differences and against PyTorch, second derivatives, several
outputs, hooks, anomaly mode, in-place checks, clear errors, and the compiled step on jax."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import autograd_core as ag
import nn
import optim
from helpers import assert_close


class Swish(ag.Function):
    """x * sigmoid(x), its backward written with differentiable ops from the saved input (what
    forward computes is outside the graph, so a backward to be differentiated again reads
    only inputs and outputs, as in PyTorch)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * ag.sigmoid(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = ag.sigmoid(x)
        return grad * (s + x * s * (1 - s))


@ag.custom_vjp
def swish(x):
    return x * ag.sigmoid(x)


def _swish_fwd(x):
    return x * ag.sigmoid(x), x


def _swish_bwd(x, grad):
    s = ag.sigmoid(x)
    return (grad * (s + x * s * (1 - s)),)


swish.defvjp(_swish_fwd, _swish_bwd)
FORMS = {"Function": Swish.apply, "custom_vjp": swish}


def _x(shape=(3, 4), seed=0, dtype="float64"):
    return ag.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=dtype, requires_grad=True)


@pytest.mark.parametrize("op", FORMS.values(), ids=FORMS.keys())
def test_gradcheck_and_second_derivatives(float64_backend, op):
    x = _x()
    assert ag.gradcheck(op, [x])
    assert ag.gradgradcheck(op, [x])


@pytest.mark.parametrize("op", FORMS.values(), ids=FORMS.keys())
def test_values_and_gradients_match_pytorch(backend, op):
    host = np.random.default_rng(1).standard_normal((5, 3))
    x = ag.tensor(host, dtype="float32", requires_grad=True)
    weights = np.random.default_rng(2).standard_normal((5, 3))
    (op(x) * ag.tensor(weights, dtype="float32")).sum().backward()
    xt = torch.tensor(host, dtype=torch.float32, requires_grad=True)
    out = torch.nn.functional.silu(xt)
    (out * torch.tensor(weights, dtype=torch.float32)).sum().backward()
    assert_close(op(x).detach(), out.detach(), "float32")
    assert_close(x.grad, xt.grad, "float32")


def test_a_model_trains_through_the_op(backend):
    class SwishLayer(nn.Module):
        def forward(self, x):
            return Swish.apply(x)

    ag.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), SwishLayer(), nn.Linear(8, 1))
    opt = optim.SGD(model.parameters(), lr=0.1)
    x, y = ag.tensor(np.random.default_rng(0).standard_normal((16, 4)), dtype="float32"), ag.ones((16, 1))
    losses = []
    for _ in range(20):
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


class SinCos(ag.Function):
    """Two outputs, and a scale that is not a tensor."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return ag.sin(x) * scale, ag.cos(x) * scale

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        (x,) = ctx.saved_tensors
        return (grad_sin * ag.cos(x) - grad_cos * ag.sin(x)) * ctx.scale, None


def test_several_outputs(float64_backend):
    x = _x()
    assert ag.gradcheck(lambda x: ag.stack(SinCos.apply(x, 2.0)), [x])
    s, c = SinCos.apply(x, 2.0)
    s.sum().backward()  # one output used: the other's gradient is zeros
    assert_close(x.grad, 2.0 * ag.cos(x.detach()))


def test_needs_input_grad_and_the_gradient_of_an_argument_without_one(backend):
    seen = []

    class Product(ag.Function):
        @staticmethod
        def forward(ctx, a, b):
            seen.append(ctx.needs_input_grad)
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad * b if ctx.needs_input_grad[0] else None, grad * a if ctx.needs_input_grad[1] else None

    a, b = ag.tensor([1.0, 2.0], requires_grad=True), ag.tensor([3.0, 4.0])
    Product.apply(a, b).sum().backward()
    assert seen == [(True, False)]
    assert a.grad.tolist() == [3.0, 4.0] and b.grad is None
    with ag.no_grad():
        assert not Product.apply(a, b).requires_grad


def test_a_non_differentiable_output(backend):
    class SortValues(ag.Function):
        @staticmethod
        def forward(ctx, x):
            order = ag.argsort(x)
            ctx.save_for_backward(order)
            ctx.mark_non_differentiable(order)
            return ag.take(x, order), order

        @staticmethod
        def backward(ctx, grad, grad_order):
            (order,) = ctx.saved_tensors
            assert not ag.any(grad_order != 0)
            inverse = ag.argsort(order)
            return ag.take(grad, inverse)

    x = ag.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, order = SortValues.apply(x)
    assert values.requires_grad and not order.requires_grad
    (values * ag.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [100.0, 1.0, 10.0]


def test_grads_not_materialized(backend):
    received = []

    class Pair(ag.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g2, g3):
            received.append((g2 is None, g3 is None))
            return (g2 if g2 is not None else 0) * 2 + (g3 if g3 is not None else 0) * 3

    x = ag.tensor([1.0], requires_grad=True)
    Pair.apply(x)[1].sum().backward()
    assert received == [(True, False)] and x.grad.tolist() == [3.0]


def test_a_saved_output_is_the_tensor_returned(float64_backend):
    class Exp(ag.Function):
        @staticmethod
        def forward(ctx, x):
            out = ag.exp(x)
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, grad):
            (out,) = ctx.saved_tensors
            return grad * out

    x = _x()
    y = Exp.apply(x)
    assert y.requires_grad
    assert ag.gradgradcheck(Exp.apply, [x])  # the saved output carries its graph
    y.sum().backward()
    assert_close(x.grad, ag.exp(x.detach()))


def test_hooks_and_retain_grad(backend):
    x = ag.tensor([1.0, -2.0], requires_grad=True)
    y = Swish.apply(x)
    y.retain_grad()
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    slope = ag.sigmoid(x.detach()) * (1 + x.detach() * (1 - ag.sigmoid(x.detach())))
    assert_close(x.grad, 10 * slope, "float32")
    assert y.grad.tolist() == [10.0, 10.0]


def test_an_in_place_change_to_a_saved_tensor_is_refused(backend):
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = Swish.apply(h)
    h += 1
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()


def test_anomaly_mode_names_the_op(backend):
    class NanGrad(ag.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad * float("nan")

    x = ag.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with ag.detect_anomaly(), pytest.raises(RuntimeError, match="NanGrad"):
            NanGrad.apply(x).sum().backward()


def _bad(returned):
    class Bad(ag.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, grad):
            return returned(grad)

    return Bad


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (lambda g: g, r"Bad.backward returned 1 gradient\(s\), but forward took 2 argument\(s\)"),
        (lambda g: (g[:1], None), r"Bad.backward returned a gradient of shape \(1,\) for argument 0, whose shape is"),
        (
            lambda g: (ag.astype(g, ag.float64), None),
            "Bad.backward returned a gradient of dtype float64 for argument 0",
        ),
        (lambda g: ([1.0, 1.0], None), "Bad.backward returned a list as the gradient of argument 0: expected a tensor"),
    ],
    ids=["count", "shape", "dtype", "type"],
)
def test_a_wrong_backward_is_named(backend, returned, message):
    x = ag.tensor([1.0, 2.0], dtype="float32", requires_grad=True)
    y = ag.tensor([3.0, 4.0], dtype="float32")
    with pytest.raises((RuntimeError, TypeError), match=message):
        _bad(returned).apply(x, y).sum().backward()


def test_a_wrong_forward_and_a_missing_vjp_are_named(backend):
    class Listy(ag.Function):
        @staticmethod
        def forward(ctx, x):
            return [1.0, 2.0]

    with pytest.raises(TypeError, match="Listy.forward must return a tensor or a tuple of tensors"):
        Listy.apply(ag.tensor([1.0], requires_grad=True))

    @ag.custom_vjp
    def f(x):
        return x

    with pytest.raises(RuntimeError, match=r"f has no VJP: call f.defvjp\(fwd, bwd\) first"):
        f(ag.tensor([1.0]))
    f.defvjp(lambda x: x, lambda r, g: (g,))
    with pytest.raises(TypeError, match=r"f's fwd must return \(output, residuals\)"):
        f(ag.tensor([1.0], requires_grad=True))


def test_once_differentiable(backend):
    class ViaHost(ag.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**2

        @staticmethod
        @ag.once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return ag.asarray(2 * x.detach().numpy() * grad.detach().numpy(), device=x.device)

    x = ag.tensor([1.0, 3.0], dtype="float64", requires_grad=True)
    (g,) = ag.grad(ViaHost.apply(x).sum(), [x], create_graph=True)
    assert g.tolist() == [2.0, 6.0]
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


def test_the_compiled_step_takes_the_op(float64_backend):
    def setup():
        ag.manual_seed(0)
        lin = nn.Linear(3, 1).double()
        opt = optim.SGD(lin.parameters(), lr=0.1)

        def step(x, y):
            loss = ((lin(swish(x)) - y) ** 2).mean() + Swish.apply(lin.weight).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

        return lin, opt, step

    eager_model, _, eager = setup()
    model, opt, step = setup()
    compiled = ag.compile(step, modules=[model], optimizers=[opt])
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ag.CompileFallbackWarning)  # traced whole where the backend compiles
        for _ in range(4):
            x, y = ag.tensor(rng.standard_normal((8, 3))), ag.tensor(rng.standard_normal((8, 1)))
            assert compiled(x, y).item() == pytest.approx(eager(x, y).item(), rel=1e-12)
    assert_close(model.weight, eager_model.weight)
