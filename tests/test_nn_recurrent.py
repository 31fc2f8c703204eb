"""Recurrent layers (nn.RNN, nn.LSTM, nn.GRU and their cells): PyTorch parity of outputs,
final states and every gradient in float64 (torch's state_dict loaded into ours), gradcheck
and gradgradcheck on every backend, a T = 1,000 sequence, 20-step AdamW trajectories, the
initialisation, the parameter names, dropout between layers, and the errors.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from test_torch_parity_nn import assert_same_weights, torch_twin, train

import autograd_core as ag
import nn
import nn.functional as F
import optim
from autograd_core.autodiff.engine import topological_order
from helpers import assert_close

F64 = "float64"


# --- helpers ------------------------------------------------------------------------------------
def flat(out):
    """The tensors of a (possibly nested) tuple of outputs, in order."""
    return [t for o in out for t in flat(o)] if isinstance(out, tuple) else [out]


def call(module, x, states):
    """``module(x)``, or with its initial states: h, or (h, c) for an LSTM (cell)."""
    if not states:
        return module(x)
    return module(x, tuple(states) if len(states) == 2 else states[0])


def random_weights(module, rng, scale=0.5):
    module.load_state_dict({k: scale * rng.standard_normal(v.shape) for k, v in module.state_dict().items()})


def assert_matches_torch(ours, make_twin, x_shape, state_shapes=(), seed=0):
    """Random weights in ours, loaded into the torch twin; equal outputs and final states,
    then equal gradients of a random projection of all of them for the input, the initial
    states and every parameter."""
    rng = np.random.default_rng(seed)
    random_weights(ours, rng)
    ours.zero_grad()
    twin = torch_twin(ours, make_twin)
    hosts = [rng.standard_normal(shape) for shape in (x_shape, *state_shapes)]
    mine = [ag.tensor(h, requires_grad=True) for h in hosts]
    theirs = [torch.tensor(h, requires_grad=True) for h in hosts]
    outs, refs = flat(call(ours, mine[0], mine[1:])), flat(call(twin, theirs[0], theirs[1:]))
    assert [o.shape for o in outs] == [tuple(r.shape) for r in refs]
    for o, r in zip(outs, refs):
        assert_close(o, r)
    weights = [rng.standard_normal(o.shape) for o in outs]
    sum((o * ag.tensor(w)).sum() for o, w in zip(outs, weights)).backward()
    sum((r * torch.tensor(w)).sum() for r, w in zip(refs, weights)).backward()
    for m, t in zip(mine, theirs):
        assert_close(m.grad, t.grad)
    reference = dict(twin.named_parameters())
    assert [name for name, _ in ours.named_parameters()] == list(reference)
    for name, p in ours.named_parameters():
        assert p.grad is not None, name
        assert_close(p.grad, reference[name].grad)


# --- PyTorch parity -------------------------------------------------------------------------------
T, B, N, H = 5, 3, 4, 3  # steps, batch, input features, hidden features


def case(name, ours, theirs, x_shape, *state_shapes):
    return pytest.param(ours, theirs, x_shape, state_shapes, id=name)


def pair(cls, *args, **kwargs):
    """(ours, torch's) factories of the same module."""
    return (lambda: getattr(nn, cls)(*args, **kwargs, dtype=F64)), (lambda: getattr(torch.nn, cls)(*args, **kwargs))


def states(layers, batch=B, count=1):
    return [(layers, batch, H) if batch else (layers, H)] * count


MODULES = [
    case("rnn_tanh", *pair("RNN", N, H), (T, B, N)),
    case("rnn_relu", *pair("RNN", N, H, nonlinearity="relu"), (T, B, N)),
    case("rnn_relu_2_layers_h0", *pair("RNN", N, H, num_layers=2, nonlinearity="relu"), (T, B, N), *states(2)),
    case("rnn_bidirectional_batch_first", *pair("RNN", N, H, bidirectional=True, batch_first=True), (B, T, N)),
    case("rnn_no_bias_unbatched", *pair("RNN", N, H, bias=False), (T, N), *states(1, batch=0)),
    case("lstm", *pair("LSTM", N, H), (T, B, N)),
    case("lstm_h0_c0", *pair("LSTM", N, H), (T, B, N), *states(1, count=2)),
    case("lstm_2_layers", *pair("LSTM", N, H, num_layers=2), (T, B, N)),
    case(
        "lstm_bidirectional_2_layers_batch_first_states",
        *pair("LSTM", N, H, num_layers=2, bidirectional=True, batch_first=True),
        (B, T, N),
        *states(4, count=2),
    ),
    case("lstm_unbatched_states", *pair("LSTM", N, H, bidirectional=True), (T, N), *states(2, batch=0, count=2)),
    case("lstm_no_bias", *pair("LSTM", N, H, num_layers=2, bias=False), (T, B, N)),
    case("gru", *pair("GRU", N, H), (T, B, N)),
    case("gru_2_layers_bidirectional_h0", *pair("GRU", N, H, num_layers=2, bidirectional=True), (T, B, N), *states(4)),
    case("gru_batch_first_no_bias", *pair("GRU", N, H, batch_first=True, bias=False), (B, T, N)),
    case("gru_unbatched", *pair("GRU", N, H, num_layers=2), (T, N)),
    case("rnn_cell", *pair("RNNCell", N, H), (B, N)),
    case("rnn_cell_relu_h", *pair("RNNCell", N, H, nonlinearity="relu"), (B, N), (B, H)),
    case("lstm_cell", *pair("LSTMCell", N, H), (B, N)),
    case("lstm_cell_states", *pair("LSTMCell", N, H), (B, N), (B, H), (B, H)),
    case("lstm_cell_unbatched_no_bias", *pair("LSTMCell", N, H, bias=False), (N,), (H,), (H,)),
    case("gru_cell_h", *pair("GRUCell", N, H), (B, N), (B, H)),
    case("gru_cell_unbatched", *pair("GRUCell", N, H), (N,)),
]


# jax compiles every op once per shape: it runs a representative few (all run elsewhere)
ON_JAX = {
    "rnn_relu_2_layers_h0",
    "lstm_bidirectional_2_layers_batch_first_states",
    "lstm_unbatched_states",
    "gru_2_layers_bidirectional_h0",
    "lstm_cell_states",
    "gru_cell_unbatched",
}


@pytest.mark.parametrize(("make_ours", "make_twin", "x_shape", "state_shapes"), MODULES)
def test_matches_torch(float64_backend, request, make_ours, make_twin, x_shape, state_shapes):
    if float64_backend.name == "jax" and request.node.callspec.id.split("-", 1)[1] not in ON_JAX:
        pytest.skip("jax compiles per shape: this case runs on the other backends, a representative few on jax")
    assert_matches_torch(make_ours(), make_twin, x_shape, state_shapes)


def test_long_sequence_matches_torch(float64_backend):
    """T = 1,000 steps forward and backward: no recursion limit, a graph of a few nodes
    whatever the length (no per-step nodes), the gradients PyTorch gives."""
    ours = nn.LSTM(3, 4, dtype=F64)
    rng = np.random.default_rng(0)
    random_weights(ours, rng)
    x = ag.tensor(rng.standard_normal((1000, 2, 3)), requires_grad=True)
    out, (h, c) = ours(x)
    assert len(topological_order(out.sum() + h.sum() + c.sum())) < 30
    assert_matches_torch(ours, lambda: torch.nn.LSTM(3, 4), (1000, 2, 3), [(1, 2, 4)] * 2)


def test_dropout_between_layers_only_in_training(float64_backend):
    # p = 1 is deterministic: the second layer sees zeros (torch agrees); the last layer's
    # output is not dropped (it would be all zeros)
    lstm = nn.LSTM(N, H, num_layers=2, dropout=1.0, dtype=F64)
    assert_matches_torch(lstm, lambda: torch.nn.LSTM(N, H, num_layers=2, dropout=1.0), (T, B, N))
    out, _ = lstm(ag.ones((T, B, N), dtype=F64))
    assert np.all(np.abs(out.detach().numpy()) > 0)
    lstm.eval()
    assert_matches_torch(lstm, lambda: torch.nn.LSTM(N, H, num_layers=2, dropout=1.0).eval(), (T, B, N), seed=1)
    gru = nn.GRU(N, H, num_layers=2, dropout=0.5, dtype=F64)
    x = ag.ones((T, B, N), dtype=F64)
    ag.manual_seed(0)
    trained = gru(x)[0].detach().numpy()
    assert not np.allclose(trained, gru.eval()(x)[0].detach().numpy())


def test_dropout_with_one_layer_warns():
    with pytest.warns(UserWarning, match="no effect with num_layers=1"):
        nn.GRU(2, 3, dropout=0.2)


# --- gradcheck on every backend -----------------------------------------------------------------
def with_parameters(module, names):
    """`module` as a function of its inputs and then the values of its parameters `names`
    (so that gradcheck can perturb them as inputs)."""

    def forward(x, *rest):
        originals = [getattr(module, n) for n in names]
        for n, v in zip(names, rest[len(rest) - len(names) :]):
            object.__setattr__(module, n, v)
        try:
            return module(x, *rest[: len(rest) - len(names)])
        finally:
            for n, v in zip(names, originals):
                object.__setattr__(module, n, v)

    return forward


def concat_outputs(fn):
    """`fn`'s outputs (output and final states) as one flat tensor."""
    return lambda *args: ag.concat([ag.reshape(t, (-1,)) for t in flat(fn(*args))])


def leaf(rng, *shape):
    return ag.tensor(0.7 * rng.standard_normal(shape), dtype=F64, requires_grad=True)


GRADCHECK = [
    pytest.param(lambda: nn.RNNCell(2, 2, dtype=F64), (3, 2), (3, 2), id="rnn_cell"),
    pytest.param(lambda: nn.RNNCell(2, 2, nonlinearity="relu", dtype=F64), (3, 2), None, id="rnn_cell_relu"),
    pytest.param(lambda: nn.LSTMCell(2, 2, dtype=F64), (2, 2), ((2, 2), (2, 2)), id="lstm_cell"),
    pytest.param(lambda: nn.GRUCell(2, 2, dtype=F64), (2, 2), (2, 2), id="gru_cell"),
    pytest.param(lambda: nn.RNN(2, 2, num_layers=2, dtype=F64), (3, 2, 2), (2, 2, 2), id="rnn_2_layers"),
    pytest.param(
        lambda: nn.LSTM(2, 2, bidirectional=True, dtype=F64), (3, 2, 2), ((2, 2, 2), (2, 2, 2)), id="lstm_bidirectional"
    ),
    pytest.param(lambda: nn.LSTM(2, 2, num_layers=2, batch_first=True, dtype=F64), (2, 3, 2), None, id="lstm_2_layers"),
    pytest.param(
        lambda: nn.GRU(2, 2, num_layers=2, bidirectional=True, dtype=F64),
        (3, 2),
        (4, 2),
        id="gru_2_layers_bidirectional_unbatched",
    ),
]


def gradcheck_inputs(module, x_shape, state_shape, rng):
    """The input, the states (if given) and every parameter as float64 leaves, and the
    function of them that gradcheck differentiates."""
    states = [] if state_shape is None else [state_shape] if isinstance(state_shape[0], int) else list(state_shape)
    names = [n for n, _ in module.named_parameters()]
    shapes = [x_shape, *states, *(p.shape for p in module.parameters())]
    forward = with_parameters(module, names)

    def fn(x, *rest):
        state = rest[: len(states)]
        packed = () if not state else (tuple(state),) if len(state) == 2 else (state[0],)
        return forward(x, *packed, *rest[len(states) :])

    return concat_outputs(fn), [leaf(rng, *shape) for shape in shapes]


@pytest.mark.parametrize(("make", "x_shape", "state_shape"), GRADCHECK)
def test_gradcheck(float64_backend, make, x_shape, state_shape):
    fn, leaves = gradcheck_inputs(make(), x_shape, state_shape, np.random.default_rng(0))
    assert ag.gradcheck(fn, leaves)


@pytest.mark.parametrize(
    "make", [lambda: nn.LSTMCell(2, 2, dtype=F64), lambda: nn.GRU(2, 2, dtype=F64)], ids=["lstm_cell", "gru"]
)
def test_gradgradcheck(float64_backend, make):
    module = make()
    shape, state = ((2, 2), ((2, 2), (2, 2))) if isinstance(module, nn.LSTMCell) else ((2, 1, 2), (1, 1, 2))
    fn, leaves = gradcheck_inputs(module, shape, state, np.random.default_rng(1))
    assert ag.gradgradcheck(fn, leaves)


def test_no_graph_without_grad(backend):
    lstm = nn.LSTM(2, 3)
    with ag.no_grad():
        out, (h, c) = lstm(ag.ones((4, 1, 2)))
    assert not (out.requires_grad or h.requires_grad or c.requires_grad)
    out, _ = lstm(ag.ones((4, 1, 2)))
    assert out.requires_grad and out.dtype == ag.float32


# --- training trajectories ----------------------------------------------------------------------
class Classifier(nn.Module):
    """A 2-layer recurrent network read out at its last step."""

    def __init__(self, cls: str) -> None:
        super().__init__()
        self.rnn = getattr(nn, cls)(4, 5, num_layers=2, batch_first=True, dtype=F64)
        self.head = nn.Linear(5, 3, dtype=F64)

    def forward(self, x):
        return self.head(self.rnn(x)[0][:, -1])


class TorchClassifier(torch.nn.Module):
    def __init__(self, cls: str) -> None:
        super().__init__()
        self.rnn = getattr(torch.nn, cls)(4, 5, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(5, 3)

    def forward(self, x):
        return self.head(self.rnn(x)[0][:, -1])


@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
def test_adamw_trajectory_matches_torch(float64_backend, cls):
    ag.manual_seed(0)
    model = Classifier(cls)
    twin = torch_twin(model, lambda: TorchClassifier(cls))
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((6, 7, 4)), rng.integers(0, 3, 6)
    losses = train(model, optim.AdamW(model.parameters(), lr=0.02), F.cross_entropy, ag.tensor(x), ag.tensor(y), 20)
    expected = train(
        twin,
        torch.optim.AdamW(twin.parameters(), lr=0.02),
        torch.nn.functional.cross_entropy,
        torch.tensor(x),
        torch.tensor(y),
        20,
    )
    assert expected[-1] < expected[0]
    np.testing.assert_allclose(losses, expected, rtol=1e-9, atol=0)
    assert_same_weights(model, twin, rtol=1e-8, atol=1e-12)


# --- parameters: names, shapes, initialisation ----------------------------------------------------
CONFIGS = [
    ("RNN", dict(num_layers=2, nonlinearity="relu")),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("GRU", dict(bias=False, bidirectional=True)),
    ("LSTM", dict(num_layers=3, bias=False)),
    ("RNNCell", {}),
    ("LSTMCell", dict(bias=False)),
    ("GRUCell", {}),
]


@pytest.mark.parametrize(("cls", "options"), CONFIGS, ids=[f"{c}-{o}" for c, o in CONFIGS])
def test_state_dict_names_and_shapes_are_torchs(cls, options):
    ours = getattr(nn, cls)(3, 4, **options)
    theirs = getattr(torch.nn, cls)(3, 4, **options)
    assert [(k, v.shape) for k, v in ours.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in theirs.state_dict().items()
    ]


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU", "LSTMCell"])
def test_initialisation_is_uniform_within_one_over_sqrt_hidden(backend, cls):
    ag.manual_seed(0)
    options = {} if cls.endswith("Cell") else dict(num_layers=2, bidirectional=True)
    module = getattr(nn, cls)(10, 16, **options)
    values = np.concatenate([p.detach().numpy().ravel() for p in module.parameters()])
    bound = 1 / math.sqrt(16)
    assert np.all(np.abs(values) <= bound) and values.max() > 0.98 * bound and values.min() < -0.98 * bound
    assert abs(np.abs(values).mean() - bound / 2) < 0.05 * bound  # uniform: E|u| = bound / 2
    ag.manual_seed(0)
    again = getattr(nn, cls)(10, 16, **options)
    assert all(
        np.array_equal(p.detach().numpy(), q.detach().numpy()) for p, q in zip(module.parameters(), again.parameters())
    )


def test_dtype_and_device_arguments(backend):
    lstm = nn.LSTM(2, 3, dtype=ag.float64 if backend.supports_float64 else ag.float32)
    assert all(p.dtype == lstm.weight_ih_l0.dtype for p in lstm.parameters())
    assert nn.GRUCell(2, 3, device=ag.zeros(1).device).weight_hh.shape == (9, 3)


# --- errors -------------------------------------------------------------------------------------
def test_errors_say_what_was_wrong():
    with pytest.raises(NotImplementedError, match="proj_size"):
        nn.LSTM(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match="dropout"):
        nn.LSTM(3, 4, num_layers=2, dropout=1.5)
    with pytest.raises(ValueError, match=r"expected an input of shape \(T, B, 3\)"):
        nn.LSTM(3, 4)(ag.zeros((5, 2, 2)))
    with pytest.raises(ValueError, match=r"h_0 has shape \(1, 2, 4\), expected \(2, 2, 4\)"):
        nn.GRU(3, 4, num_layers=2)(ag.zeros((5, 2, 3)), ag.zeros((1, 2, 4)))
    with pytest.raises(TypeError, match="h_0 and c_0"):
        nn.LSTM(3, 4)(ag.zeros((5, 2, 3)), ag.zeros((1, 2, 4)))
    with pytest.raises(ValueError, match=r"hx has shape \(4,\), expected \(2, 4\)"):
        nn.GRUCell(3, 4)(ag.zeros((2, 3)), ag.zeros(4))
    with pytest.raises(TypeError, match="one dtype"):
        nn.LSTM(3, 4)(ag.zeros((5, 2, 3), dtype=ag.float64))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.LSTM(3, 4, num_layers=2, dropout=0.3)  # no warning with more than one layer
