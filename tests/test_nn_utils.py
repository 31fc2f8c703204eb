"""torch.nn.utils and the newer torch.nn.init functions against PyTorch: padded and packed
sequences (and the recurrent layers on packed input), parameters as one vector, and the
initialisers' laws (their draws differ from torch's generator, their distributions must not)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch.nn.utils import rnn as torch_rnn

import autograd_core as ag
import nn
from helpers import assert_close, host
from nn.utils import rnn


def _lengths_cases():
    return [([2, 5, 3], False), ([5, 3, 2], True)]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize(("lengths", "enforce_sorted"), _lengths_cases())
def test_pack_and_pad_match_torch(backend, lengths, enforce_sorted, batch_first) -> None:
    x = np.random.default_rng(0).standard_normal((5, 3, 2))
    if batch_first:
        x = x.transpose(1, 0, 2)
    ours_x, theirs_x = ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours = rnn.pack_padded_sequence(ours_x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    theirs = torch_rnn.pack_padded_sequence(theirs_x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    assert_close(ours.data, theirs.data)
    assert host(ours.batch_sizes).tolist() == theirs.batch_sizes.tolist()
    padded, got_lengths = rnn.pad_packed_sequence(ours, batch_first=batch_first, padding_value=-1.0, total_length=6)
    ref, ref_lengths = torch_rnn.pad_packed_sequence(
        theirs, batch_first=batch_first, padding_value=-1.0, total_length=6
    )
    assert_close(padded, ref)
    assert host(got_lengths).tolist() == ref_lengths.tolist()
    w = np.random.default_rng(1).standard_normal(tuple(ref.shape))
    (padded * ag.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    assert_close(ours_x.grad, theirs_x.grad)


def test_pad_sequence_and_pack_sequence(backend) -> None:
    seqs = [np.arange(3.0), np.arange(1.0), np.arange(2.0)]
    for side in ("right", "left"):
        got = rnn.pad_sequence([ag.tensor(s) for s in seqs], batch_first=True, padding_value=7.0, padding_side=side)
        ref = torch_rnn.pad_sequence([torch.tensor(s) for s in seqs], True, 7.0, side)
        assert_close(got, ref)
    packed = rnn.pack_sequence([ag.tensor(s) for s in seqs], enforce_sorted=False)
    assert [host(s).tolist() for s in rnn.unpack_sequence(packed)] == [s.tolist() for s in seqs]
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        rnn.pack_sequence([ag.tensor(s) for s in seqs])


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_recurrent_layers_take_packed_input(backend, mode) -> None:
    """Bidirectional, two layers, unsorted lengths: outputs, final states and every gradient."""
    torch.manual_seed(0)
    theirs = getattr(torch.nn, mode)(3, 4, num_layers=2, bidirectional=True).double()
    ours = getattr(nn, mode)(3, 4, num_layers=2, bidirectional=True).double()
    ours.load_state_dict({k: ag.tensor(host(v)) for k, v in theirs.state_dict().items()})
    x, lengths = np.random.default_rng(0).standard_normal((5, 3, 3)), [2, 5, 3]
    ours_x, theirs_x = ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, h = ours(rnn.pack_padded_sequence(ours_x, lengths, enforce_sorted=False))
    ref_out, ref_h = theirs(torch_rnn.pack_padded_sequence(theirs_x, lengths, enforce_sorted=False))
    assert isinstance(out, rnn.PackedSequence)
    h, ref_h = (h[0], ref_h[0]) if mode == "LSTM" else (h, ref_h)
    assert_close(out.data, ref_out.data)
    assert_close(h, ref_h)
    w = np.random.default_rng(1).standard_normal(tuple(ref_out.data.shape))
    ((out.data * ag.tensor(w)).sum() + h.sum()).backward()
    ((ref_out.data * torch.tensor(w)).sum() + ref_h.sum()).backward()
    assert_close(ours_x.grad, theirs_x.grad)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        assert_close(p.grad, q.grad)


def test_parameters_to_vector_and_back(backend) -> None:
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = nn.utils.parameters_to_vector(model.parameters())
    assert vec.shape == (sum(p.numel() for p in model.parameters()),)
    nn.utils.vector_to_parameters(ag.arange(float(vec.shape[0])), model.parameters())
    assert host(model[0].weight).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert host(model[1].bias).tolist() == [10.0]
    with pytest.raises(ValueError, match="elements"):
        nn.utils.vector_to_parameters(ag.zeros(20), model.parameters())


def test_dirac_and_eye_match_torch(backend) -> None:
    for shape, groups in [((4, 2, 3), 2), ((2, 3, 3, 3), 1), ((3, 2, 1, 3, 2), 1)]:
        ref = torch.nn.init.dirac_(torch.empty(shape), groups)
        assert_close(nn.init.dirac_(ag.empty(shape), groups), ref, "float32")
    assert_close(nn.init.eye_(ag.empty(3, 5)), torch.nn.init.eye_(torch.empty(3, 5)), "float32")


def test_orthogonal_rows_and_columns(backend) -> None:
    ag.manual_seed(0)
    for shape in [(3, 5), (5, 3), (4, 2, 2)]:
        w = host(nn.init.orthogonal_(ag.empty(shape), gain=2.0)).reshape(shape[0], -1).astype(np.float64)
        small = w @ w.T if shape[0] <= w.shape[1] else w.T @ w
        np.testing.assert_allclose(small, 4.0 * np.eye(len(small)), atol=1e-5)


def test_trunc_normal_has_the_truncated_law(backend) -> None:
    """200,000 draws of N(0.5, 2) truncated to [-1, 3]: the law's mean and deviation to 4 sigma of
    their sampling error, and nothing outside the bounds."""
    ag.manual_seed(0)
    x = host(nn.init.trunc_normal_(ag.empty(200_000), mean=0.5, std=2.0, a=-1.0, b=3.0)).astype(np.float64)
    alpha, beta = (-1.0 - 0.5) / 2.0, (3.0 - 0.5) / 2.0
    pdf = [math.exp(-(v**2) / 2) / math.sqrt(2 * math.pi) for v in (alpha, beta)]
    mass = (math.erf(beta / math.sqrt(2)) - math.erf(alpha / math.sqrt(2))) / 2
    mean = 0.5 + 2.0 * (pdf[0] - pdf[1]) / mass
    var = 4.0 * (1 + (alpha * pdf[0] - beta * pdf[1]) / mass - ((pdf[0] - pdf[1]) / mass) ** 2)
    assert x.min() >= -1.0 and x.max() <= 3.0
    assert abs(x.mean() - mean) < 4 * math.sqrt(var / x.size)
    assert abs(x.var() - var) < 0.02 * var


def test_sparse_zeroes_a_fraction_of_each_column(backend) -> None:
    ag.manual_seed(0)
    w = host(nn.init.sparse_(ag.empty(10, 6), sparsity=0.3, std=0.5))
    assert ((w == 0).sum(axis=0) >= 3).all()
    with pytest.raises(ValueError, match="2-D"):
        nn.init.sparse_(ag.empty(2, 2, 2), 0.1)


def _pair(make_ours, make_theirs):
    torch.manual_seed(0)
    theirs = make_theirs().double()
    ours = make_ours().double()
    ours.load_state_dict({k: ag.tensor(host(v)) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _same_forward_and_gradients(ours, theirs, x: np.ndarray) -> None:
    out, ref = ours(ag.tensor(x)), theirs(torch.tensor(x))
    assert_close(out, ref)
    out.sum().backward()
    ref.sum().backward()
    ref_params = dict(theirs.named_parameters())
    assert sorted(dict(ours.named_parameters())) == sorted(ref_params)
    for name, p in ours.named_parameters():
        assert_close(p.grad, ref_params[name].grad)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(backend, dim) -> None:
    from nn.utils.parametrizations import weight_norm

    ours, theirs = _pair(
        lambda: weight_norm(nn.Conv1d(2, 3, 2), dim=dim),
        lambda: torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 3, 2), dim=dim),
    )
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    _same_forward_and_gradients(ours, theirs, np.random.default_rng(0).standard_normal((2, 2, 5)))


def test_spectral_norm_matches_torch_in_training_and_evaluation(backend) -> None:
    from nn.utils.parametrizations import spectral_norm

    ours, theirs = _pair(
        lambda: spectral_norm(nn.Linear(4, 3), n_power_iterations=2),
        lambda: torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(4, 3), n_power_iterations=2),
    )
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal((5, 4))
    _same_forward_and_gradients(ours, theirs, x)  # a power step per training forward
    _same_forward_and_gradients(ours, theirs, x)
    ours.eval(), theirs.eval()
    assert_close(ours(ag.tensor(x)), theirs(torch.tensor(x)))
    assert_close(ours.parametrizations.weight[0]._u, theirs.parametrizations.weight[0]._u)


def test_register_and_remove_a_parametrization_as_torch(backend) -> None:
    from nn.utils import parametrize

    class Symmetric(nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).mT

    class TorchSymmetric(torch.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).mT

    ours, theirs = _pair(lambda: nn.Linear(3, 3), lambda: torch.nn.Linear(3, 3))
    parametrize.register_parametrization(ours, "weight", Symmetric())
    torch.nn.utils.parametrize.register_parametrization(theirs, "weight", TorchSymmetric())
    assert type(ours).__name__ == type(theirs).__name__ == "ParametrizedLinear"
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    assert parametrize.is_parametrized(ours, "weight") and not parametrize.is_parametrized(ours, "bias")
    _same_forward_and_gradients(ours, theirs, np.random.default_rng(0).standard_normal((2, 3)))
    with parametrize.cached():
        assert ours.weight is ours.weight
    parametrize.remove_parametrizations(ours, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight")
    assert type(ours) is nn.Linear and sorted(ours.state_dict()) == ["bias", "weight"]
    assert_close(ours.weight, theirs.weight)
