"""Module bookkeeping, layers, init and state dicts, on every backend."""

from __future__ import annotations

import math

import numpy as np
import pytest

import autograd_core as ag
import nn
import nn.functional as F


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.heads = nn.ModuleList([nn.Linear(4, 2), nn.Linear(4, 1)])
        self.shared = self.body  # the same module twice: its parameters count once
        self.scale = nn.Parameter(ag.ones(1))

    def forward(self, x):
        h = ag.tanh(self.body(x))
        return self.heads[0](h) * self.scale, self.heads[1](h)


def test_parameters_are_registered_once_and_named(backend):
    model = TwoHeads()
    names = [n for n, _ in model.named_parameters()]
    assert names == [
        "scale",
        "body.weight",
        "body.bias",
        "heads.0.weight",
        "heads.0.bias",
        "heads.1.weight",
        "heads.1.bias",
    ]
    assert len(list(model.parameters())) == 7
    assert [type(m).__name__ for m in model.children()] == ["Linear", "ModuleList"]
    assert len(list(model.modules())) == 5


def test_state_dict_names_shared_tensors_under_every_name_as_pytorch():
    import torch

    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Linear(3, 4)
            self.heads = torch.nn.ModuleList([torch.nn.Linear(4, 2), torch.nn.Linear(4, 1)])
            self.shared = self.body
            self.scale = torch.nn.Parameter(torch.ones(1))
            self.embed, self.out = torch.nn.Embedding(5, 4), torch.nn.Linear(4, 5, bias=False)
            self.out.weight = self.embed.weight

    ours = TwoHeads()
    ours.embed, ours.out = nn.Embedding(5, 4), nn.Linear(4, 5, bias=False)
    ours.out.weight = ours.embed.weight
    assert list(ours.state_dict()) == list(Tied().state_dict())
    assert len(list(ours.parameters())) == 8
    ours.load_state_dict({k: v.detach().numpy() for k, v in Tied().state_dict().items()})


def test_zero_grad_and_train_eval(backend):
    model = TwoHeads()
    a, b = model(ag.randn(2, 3))
    (a.sum() + b.sum()).backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    model.eval()
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())


def test_linear_init_matches_pytorchs_bounds(backend):
    ag.manual_seed(0)
    layer = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    for p in (layer.weight, layer.bias):
        values = p.detach().numpy()
        assert np.abs(values).max() <= bound and np.abs(values).max() > 0.95 * bound
    assert layer.weight.shape == (300, 400) and layer.weight.dtype == ag.float32
    assert abs(layer.weight.detach().numpy().std() - bound / math.sqrt(3)) < 0.01 * bound


def test_init_functions(backend):
    ag.manual_seed(1)
    w = ag.zeros(200, 100)
    nn.init.xavier_uniform_(w)
    assert np.abs(w.numpy()).max() <= math.sqrt(6 / 300)
    nn.init.kaiming_normal_(w, nonlinearity="relu")
    assert abs(w.numpy().std() - math.sqrt(2 / 100)) < 0.01
    nn.init.constant_(w, 3.0)
    assert np.all(w.numpy() == 3.0)
    assert nn.init.calculate_gain("tanh") == 5 / 3
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.init.calculate_gain("swish")


def test_embedding_layernorm_dropout_shapes(backend):
    emb = nn.Embedding(10, 4)
    idx = ag.tensor([[1, 2, 2], [0, 9, 1]])
    out = emb(idx)
    assert out.shape == (2, 3, 4)
    np.testing.assert_array_equal(out.detach().numpy()[0, 1], emb.weight.detach().numpy()[2])
    normed = nn.LayerNorm(4)(out)
    np.testing.assert_allclose(normed.detach().numpy().mean(-1), 0, atol=1e-6)
    drop = nn.Dropout(0.5)
    x = ag.ones(1000)
    kept = drop(x).numpy()
    assert set(np.unique(kept)) <= {0.0, 2.0} and 300 < (kept > 0).sum() < 700
    drop.eval()
    assert np.all(drop(x).numpy() == 1.0)


def test_activation_modules(backend):
    x = ag.tensor([-1.0, 0.5])
    assert nn.ReLU()(x).tolist() == [0.0, 0.5]
    np.testing.assert_allclose(nn.Tanh()(x).numpy(), np.tanh([-1.0, 0.5]), rtol=1e-6)
    np.testing.assert_allclose(nn.Sigmoid()(x).numpy(), 1 / (1 + np.exp([1.0, -0.5])), rtol=1e-6)
    assert nn.GELU()(x).shape == (2,) and nn.Flatten()(ag.zeros(2, 3, 4)).shape == (2, 12)


def test_state_dict_round_trip_and_errors(backend):
    ag.manual_seed(0)
    source, target = nn.Linear(3, 2), nn.Linear(3, 2)
    target.load_state_dict(source.state_dict())
    x = ag.randn(4, 3)
    np.testing.assert_array_equal(source(x).detach().numpy(), target(x).detach().numpy())
    target.load_state_dict({"weight": np.zeros((2, 3)), "bias": [1.0, 2.0]})
    assert target.bias.tolist() == [1.0, 2.0] and target.weight.dtype == ag.float32
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        target.load_state_dict({"weight": np.zeros((3, 3)), "bias": np.zeros(2)})
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        target.load_state_dict({"weight": np.zeros((2, 3))})
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "extra"'):
        target.load_state_dict({**source.state_dict(), "extra": np.zeros(1)})


def test_loaded_parameters_do_not_alias_the_source(backend):
    source, target = nn.Linear(2, 2), nn.Linear(2, 2)
    target.load_state_dict(source.state_dict())
    assert target.weight.array is not source.weight.array


def test_save_and_load_npz(backend, tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    nn.save(model.state_dict(), tmp_path / "m.npz")
    loaded = nn.load(tmp_path / "m.npz")
    assert sorted(loaded) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    fresh = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    fresh.load_state_dict(loaded)
    x = ag.randn(2, 3)
    np.testing.assert_array_equal(model(x).detach().numpy(), fresh(x).detach().numpy())


def test_dtype_moves(backend):
    model = nn.Linear(2, 2)
    weight = model.weight
    model.double()
    assert model.weight is weight and weight.dtype == ag.float64
    assert model(ag.ones(1, 2, dtype="float64")).dtype == ag.float64
    model.to(dtype=ag.float32)
    assert weight.dtype == ag.float32
    model.float()
    assert weight.dtype == ag.float32


def test_forward_hook(backend):
    layer = nn.Linear(2, 2)
    seen = []
    handle = layer.register_forward_hook(lambda m, args, out: seen.append(out.shape))
    layer(ag.ones(3, 2))
    replace = layer.register_forward_hook(lambda m, args, out: out * 0)
    assert layer(ag.ones(1, 2)).tolist() == [[0.0, 0.0]]
    handle.remove()
    replace.remove()
    layer(ag.ones(1, 2))
    assert seen == [(3, 2), (1, 2)]


def test_repr_is_readable(backend):
    text = repr(nn.Sequential(nn.Linear(2, 3), nn.ReLU()))
    assert text == "Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n  (1): ReLU()\n)"


def test_module_needs_super_init():
    class Broken(nn.Module):
        def __init__(self):
            self.layer = nn.Linear(1, 1)

    with pytest.raises(AttributeError, match="super"):
        Broken()


def test_loss_errors_are_clear(backend):
    logits = ag.randn(3, 4)
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(logits, ag.tensor([0, 1, 2]), reduction="avg")
    with pytest.raises(IndexError, match="target values"):
        F.cross_entropy(logits, ag.tensor([0, 1, 4]))
    with pytest.raises(ValueError, match="target has shape"):
        F.cross_entropy(logits, ag.tensor([0, 1]))
    with pytest.raises(ValueError, match="normalized_shape"):
        F.layer_norm(logits, (3,))


def test_cross_entropy_is_stable_for_huge_logits(backend):
    logits = ag.tensor([[1e4, 0.0, -1e4], [0.0, 3e4, 0.0]], requires_grad=True)
    loss = F.cross_entropy(logits, ag.tensor([0, 0]))
    loss.backward()
    assert math.isfinite(loss.item()) and loss.item() == pytest.approx(1.5e4)
    assert np.all(np.isfinite(logits.grad.numpy()))


def test_cross_entropy_ignore_index(backend):
    logits = ag.randn(4, 3, dtype="float64", requires_grad=True)
    target = ag.tensor([0, -100, 2, -100])
    loss = F.cross_entropy(logits, target)
    kept = F.cross_entropy(logits[[0, 2]], ag.tensor([0, 2]))
    assert loss.item() == pytest.approx(kept.item(), rel=1e-12)
    loss.backward()
    assert np.all(logits.grad.numpy()[[1, 3]] == 0)


def test_deepcopy_of_a_model_is_independent_as_in_pytorch(backend):
    import copy

    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    model(ag.randn(5, 3)).sum().backward()
    twin = copy.deepcopy(model)
    assert type(twin[0].weight) is nn.Parameter and twin[0].weight.requires_grad
    assert list(twin.state_dict()) == list(model.state_dict())
    for (name, a), b in zip(model.state_dict().items(), twin.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
    assert model[0].weight.grad is not None and twin[0].weight.grad is None  # PyTorch's Parameter drops it
    with ag.no_grad():
        twin[0].weight.zero_()
        twin[1].running_mean.fill_(7.0)
    assert np.any(model[0].weight.detach().numpy() != 0) and np.all(model[1].running_mean.detach().numpy() != 7.0)
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(model[0].weight * 2)
