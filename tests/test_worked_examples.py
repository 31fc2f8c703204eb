"""The worked examples of the source material, with the numbers it quotes."""

from __future__ import annotations

import pytest

import autograd_core as ag
import nn
import nn.functional as F
import optim


def test_expression_graph(backend):
    a, b, c, f = (ag.tensor(v, dtype="float64", requires_grad=True) for v in (2.0, -3.0, 10.0, -2.0))
    loss = (a * b + c) * f
    loss.backward()
    assert loss.item() == -8.0
    assert [t.grad.item() for t in (a, b, c, f)] == [6.0, -4.0, -2.0, 4.0]


def test_diamond(backend):
    x = ag.tensor(1.0, dtype="float64", requires_grad=True)
    a = 2 * x
    b, c = 3 * a, a + 1
    (b + c).backward()
    assert x.grad.item() == 8.0


def test_a_times_a_plus_a(backend):
    a = ag.tensor(3.0, dtype="float64", requires_grad=True)
    (a * a + a).backward()
    assert a.grad.item() == 7.0


def test_mlp_parameter_count(backend):
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 2))
    assert sum(p.numel() for p in model.parameters()) == 354


def _linear_fit(zero_grad: bool) -> list[float]:
    model = nn.Linear(2, 1).double()
    model.load_state_dict({"weight": [[0.5, -1.0]], "bias": [0.2]})
    opt = optim.SGD(model.parameters(), lr=0.1)
    x, y = ag.tensor([[1.0, 2.0]], dtype="float64"), ag.tensor([[1.0]], dtype="float64")
    losses = []
    for _ in range(3):
        loss = F.mse_loss(model(x), y)
        losses.append(loss.item())
        if zero_grad:
            opt.zero_grad()
        loss.backward()
        opt.step()
    return losses


def test_linear_fit_by_sgd(backend):
    assert _linear_fit(zero_grad=True) == pytest.approx([5.29, 0.2116, 0.008464], rel=1e-9)


def test_forgetting_zero_grad_accumulates_stale_gradients(backend):
    assert _linear_fit(zero_grad=False)[2] == pytest.approx(7.118224, rel=1e-9)
