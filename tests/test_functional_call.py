"""`nn.functional_call` against `torch.func.functional_call`: a module run with other tensors in
place of its parameters and buffers, outputs and gradients equal in float64; tied weights,
strict names, and the module's own tensors back afterwards, also when the call raises. On
every backend."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
import torch

import autograd_core as ag
import backends
import nn
from autograd_core import func
from helpers import assert_close

F64 = "float64"


def twin_mlp() -> tuple[nn.Module, torch.nn.Module]:
    ours = nn.Sequential(nn.Linear(5, 8, dtype=F64), nn.Tanh(), nn.Linear(8, 3, dtype=F64))
    theirs = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()
    return ours, theirs


def twin_cnn() -> tuple[nn.Module, torch.nn.Module]:
    ours = nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1, dtype=F64),
        nn.BatchNorm2d(4, dtype=F64),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(4 * 3 * 3, 3, dtype=F64),
    )
    theirs = torch.nn.Sequential(
        torch.nn.Conv2d(2, 4, 3, padding=1),
        torch.nn.BatchNorm2d(4),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 3 * 3, 3),
    ).double()
    return ours, theirs


def substitutes(module: nn.Module, seed: int = 0) -> dict[str, np.ndarray]:
    """Host values, other than the module's own, for every parameter and buffer (variances
    positive, counts as they are)."""
    rng = np.random.default_rng(seed)
    values = {}
    for name, t in [*module.named_parameters(), *module.named_buffers()]:
        if t.dtype == ag.int64:
            values[name] = np.asarray(7)
        elif name.endswith("running_var"):
            values[name] = rng.uniform(0.5, 2.0, t.shape)
        else:
            values[name] = rng.standard_normal(t.shape)
    return values


def as_ours(values: dict[str, np.ndarray]) -> dict[str, ag.Tensor]:
    return {k: ag.tensor(v, requires_grad=v.dtype.kind == "f" and "running" not in k) for k, v in values.items()}


def as_torch(values: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    return {k: torch.tensor(v, requires_grad=v.dtype.kind == "f" and "running" not in k) for k, v in values.items()}


def own_tensors(module: nn.Module) -> dict[str, object]:
    """Every parameter and buffer of the module as an object, to check it is the same one later."""
    return {**dict(module.named_parameters()), **dict(module.named_buffers())}


def check_against_torch(ours: nn.Module, theirs: torch.nn.Module, x: np.ndarray) -> None:
    values = substitutes(ours)
    mine, ref = as_ours(values), as_torch(values)
    before = own_tensors(ours)
    out = nn.functional_call(ours, mine, ag.tensor(x))
    ref_out = torch.func.functional_call(theirs, ref, (torch.tensor(x),))
    assert_close(out, ref_out)
    weight = np.random.default_rng(5).standard_normal(out.shape)
    wanted = [k for k, t in mine.items() if t.requires_grad]
    grads = ag.grad((out * ag.tensor(weight)).sum(), [mine[k] for k in wanted])
    ref_grads = torch.autograd.grad((ref_out * torch.tensor(weight)).sum(), [ref[k] for k in wanted])
    for name, g, r in zip(wanted, grads, ref_grads):
        assert g.shape == tuple(r.shape), name
        assert_close(g, r)
    after = own_tensors(ours)
    assert after.keys() == before.keys() and all(after[k] is before[k] for k in before)
    assert all(isinstance(p, nn.Parameter) and p.grad is None for p in ours.parameters())


def test_mlp_outputs_and_gradients_match_torch(float64_backend):
    ours, theirs = twin_mlp()
    check_against_torch(ours, theirs, np.random.default_rng(1).standard_normal((4, 5)))


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_cnn_with_batch_norm_buffers_matches_torch(float64_backend, training):
    ours, theirs = twin_cnn()
    ours.train(training)
    theirs.train(training)
    check_against_torch(ours, theirs, np.random.default_rng(2).standard_normal((2, 2, 6, 6)))


def test_batch_norm_updates_the_running_statistics_given_not_its_own(float64_backend):
    ours, theirs = twin_cnn()
    own = {k: v.numpy().copy() for k, v in ours.named_buffers()}
    values = substitutes(ours)
    mine, ref = as_ours(values), as_torch(values)
    x = np.random.default_rng(3).standard_normal((2, 2, 6, 6))
    nn.functional_call(ours, mine, ag.tensor(x))
    torch.func.functional_call(theirs, ref, (torch.tensor(x),))
    for name in own:
        assert_close(mine[name], ref[name])  # moved towards the batch's statistics, as torch's
        np.testing.assert_array_equal(dict(ours.named_buffers())[name].numpy(), own[name])
    assert mine["1.num_batches_tracked"].item() == 8


def test_gradients_go_to_the_tensors_given_and_to_the_own_ones_not_replaced(backend):
    model = nn.Linear(3, 2)
    weight = ag.ones((2, 3), requires_grad=True)
    nn.functional_call(model, {"weight": weight}, ag.ones((4, 3))).sum().backward()
    assert weight.grad.tolist() == [[4.0] * 3] * 2
    assert model.weight.grad is None  # replaced for the call
    assert model.bias.grad.tolist() == [4.0, 4.0]  # its own, used


class Tied(nn.Module):
    """Embedding and output weights shared, as a language model ties them."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(5, 3)
        self.head = nn.Linear(3, 5, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, tokens):
        return self.head(self.embed(tokens))


class TorchTied(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(5, 3)
        self.head = torch.nn.Linear(3, 5, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, tokens):
        return self.head(self.embed(tokens))


def test_tied_weights_as_torch(float64_backend):
    ours, theirs = Tied().double(), TorchTied().double()
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    tokens = np.array([[0, 3, 4]])
    given = np.random.default_rng(4).standard_normal((5, 3))
    for tie_weights in (True, False):
        out = nn.functional_call(ours, {"embed.weight": ag.tensor(given)}, ag.tensor(tokens), tie_weights=tie_weights)
        ref = torch.func.functional_call(
            theirs, {"embed.weight": torch.tensor(given)}, torch.tensor(tokens), tie_weights=tie_weights
        )
        assert_close(out, ref)
    # tied: the one tensor given serves under both names, so strict is satisfied
    nn.functional_call(ours, {"embed.weight": ag.tensor(given)}, ag.tensor(tokens), strict=True)
    two = {"embed.weight": ag.tensor(given), "head.weight": ag.tensor(given)}
    with pytest.raises(ValueError, match=r"multiple values for keys \['embed.weight', 'head.weight'\], which are tied"):
        nn.functional_call(ours, two, ag.tensor(tokens))
    assert nn.functional_call(ours, two, ag.tensor(tokens), tie_weights=False).shape == (1, 3, 5)
    assert ours.head.weight is ours.embed.weight


def strict_error(call) -> str:
    with pytest.raises(RuntimeError) as info:
        call()
    return str(info.value)


def test_strict_refuses_missing_and_unknown_names_as_torch(backend):
    ours, theirs = twin_mlp()
    x = np.ones((1, 5))
    names = {"0.weight": np.ones((8, 5)), "bogus": np.ones(1), "2.extra": np.ones(1)}
    message = strict_error(lambda: nn.functional_call(ours, as_ours(names), ag.tensor(x), strict=True))
    expected = strict_error(lambda: torch.func.functional_call(theirs, as_torch(names), torch.tensor(x), strict=True))
    assert message == expected
    assert "Unexpected key(s): '2.extra', 'bogus'." in message
    assert "Missing key(s): '0.bias', '2.bias', '2.weight'." in message
    complete = {k: ag.tensor(v) for k, v in substitutes(ours).items()}
    assert nn.functional_call(ours, complete, ag.tensor(x), strict=True).shape == (1, 3)


def test_a_name_that_is_no_parameter_is_an_attribute_for_the_call(backend):
    class Scaled(nn.Module):
        def forward(self, x):
            return x * self.scale

    model = Scaled()
    assert nn.functional_call(model, {"scale": ag.tensor(3.0)}, ag.tensor([1.0, 2.0])).tolist() == [3.0, 6.0]
    assert not hasattr(model, "scale")


class Failing(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 2)
        self.register_buffer("steps", ag.zeros(()))

    def forward(self, x):
        self.linear(x)
        raise RuntimeError("the forward failed")


def test_the_module_gets_its_own_tensors_back_when_the_call_raises(backend):
    model = Failing()
    before = own_tensors(model)
    given = {"linear.weight": ag.ones((2, 2)), "steps": ag.ones(()), "linear.extra": ag.ones(1)}
    with pytest.raises(RuntimeError, match="the forward failed"):
        nn.functional_call(model, given, ag.ones((1, 2)))
    after = own_tensors(model)
    assert after.keys() == before.keys() and all(after[k] is before[k] for k in before)
    assert model.linear.weight is before["linear.weight"] and model.steps is before["steps"]
    assert isinstance(model.linear.weight, nn.Parameter)
    assert not hasattr(model.linear, "extra")
    with pytest.raises(AttributeError, match="no submodule 'nowhere'"):
        nn.functional_call(model, {"linear.weight": ag.ones((2, 2)), "nowhere.weight": ag.ones(1)}, ag.ones((1, 2)))
    assert model.linear.weight is before["linear.weight"]


def test_arguments_as_torch(backend):
    class Affine(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Parameter(ag.ones(()))
            self.b = nn.Parameter(ag.zeros(()))

        def forward(self, x, y, shift=0.0):
            return self.a * x + self.b * y + shift

    model = Affine()
    params = ({"a": ag.tensor(2.0)}, {"b": ag.tensor(10.0)})  # a tuple of dicts
    out = nn.functional_call(model, params, (ag.tensor(1.0), ag.tensor(3.0)), {"shift": 0.5})
    assert out.item() == 32.5
    assert nn.functional_call(model, {"a": ag.tensor(4.0)}, (ag.tensor(1.0), ag.tensor(3.0))).item() == 4.0
    assert model.functional_call({"a": ag.tensor(4.0)}, (ag.tensor(1.0), ag.tensor(3.0))).item() == 4.0
    assert func.functional_call(model, {"a": ag.tensor(4.0)}, (ag.tensor(1.0), ag.tensor(3.0))).item() == 4.0
    with pytest.raises(ValueError, match=r"\['a'\] appeared in multiple dictionaries"):
        nn.functional_call(model, ({"a": ag.tensor(1.0)}, {"a": ag.tensor(2.0)}), (ag.tensor(1.0), ag.tensor(3.0)))
    with pytest.raises(TypeError, match="value for 'a' must be a tensor, got float"):
        nn.functional_call(model, {"a": 3.0}, (ag.tensor(1.0), ag.tensor(3.0)))
    with pytest.raises(TypeError, match="needs an nn.Module"):
        nn.functional_call(lambda x: x, {}, ag.tensor(1.0))


def test_docstring_examples():
    with backends.use("numpy"):
        result = doctest.testmod(importlib.import_module("nn.stateless"))
    assert result.attempted and not result.failed
