"""Optimizer arguments are checked as PyTorch checks them: no parameter twice, no NaN or
out-of-range hyper-parameter; a learning rate may be a 0-d tensor."""

from __future__ import annotations

import math

import pytest

import autograd_core as ag
import nn
import optim

BAD = [
    (optim.SGD, dict(lr=math.nan), "invalid lr"),
    (optim.SGD, dict(lr=-0.1), "invalid lr"),
    (optim.SGD, dict(lr=0.1, momentum=-1.0), "invalid momentum"),
    (optim.SGD, dict(lr=0.1, weight_decay=math.nan), "invalid weight_decay"),
    (optim.Adam, dict(lr=math.nan), "invalid lr"),
    (optim.Adam, dict(eps=math.nan), "invalid eps"),
    (optim.Adam, dict(betas=(1.0, 0.999)), "invalid beta1"),
    (optim.AdamW, dict(betas=(0.9, math.nan)), "invalid beta2"),
    (optim.AdamW, dict(weight_decay=-0.01), "invalid weight_decay"),
]


@pytest.mark.parametrize(("cls", "settings", "message"), BAD, ids=[f"{c.__name__}-{m}" for c, _, m in BAD])
def test_out_of_range_or_nan_settings_are_refused(backend, cls, settings, message):
    with pytest.raises(ValueError, match=message):
        cls(nn.Linear(2, 1).parameters(), **settings)


def test_a_parameter_given_twice_is_refused(backend):
    w = ag.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="updated twice"):
        optim.SGD([w, w], lr=0.1)


@pytest.mark.parametrize("cls", [optim.SGD, optim.Adam, optim.AdamW, optim.RMSprop, optim.Adagrad])
def test_a_zero_dimensional_tensor_learning_rate_is_a_number(backend, cls):
    w = ag.tensor([1.0], requires_grad=True)
    opt = cls([w], lr=ag.tensor(0.5))
    assert opt.param_groups[0]["lr"] == 0.5
    (w * 2).sum().backward()
    opt.step()
    assert w.item() < 1.0
    with pytest.raises(ValueError, match="0-d tensor"):
        cls([w], lr=ag.tensor([0.5, 0.1]))
