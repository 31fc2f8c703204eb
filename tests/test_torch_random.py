"""PyTorch's random functions and `Generator` objects (`autograd_core.torch`): each seed gives
the same numbers on every backend (drawn on the host), a Generator's stream is its own, states
save and restore, and every distribution has the moments and frequencies it should. The
statistics are computed from fixed seeds with tolerances of several standard errors, so they
cannot flake; PyTorch's op database checks the shapes and dtypes of every form."""

from __future__ import annotations

import math

import numpy as np
import pytest

import autograd_core.torch as torch
import backends

N = 20_000


def host(t):
    return np.asarray(t.detach().numpy())


def within(values, expected, standard_error, k=6.0):
    """Whether the statistic `values` is within `k` standard errors of `expected`."""
    return abs(values - expected) <= k * standard_error


SAMPLERS = {
    "rand": lambda g: torch.rand(4, 3, generator=g),
    "randn": lambda g: torch.randn(5, generator=g, dtype=torch.float64),
    "randn_complex": lambda g: torch.randn(3, dtype=torch.complex64, generator=g),
    "randint": lambda g: torch.randint(2, 9, (6,), generator=g),
    "randperm": lambda g: torch.randperm(7, generator=g),
    "normal": lambda g: torch.normal(torch.zeros(3), torch.ones(3), generator=g),
    "normal_numbers": lambda g: torch.normal(1.0, 2.0, (4,), generator=g),
    "bernoulli": lambda g: torch.bernoulli(torch.full((8,), 0.5), generator=g),
    "multinomial": lambda g: torch.multinomial(torch.tensor([1.0, 2.0, 3.0]), 2, generator=g),
    "poisson": lambda g: torch.poisson(torch.full((4,), 3.0), generator=g),
    "rand_like": lambda g: torch.rand_like(torch.zeros(3), generator=g),
    "exponential_": lambda g: torch.zeros(4).exponential_(2.0, generator=g),
    "cauchy_": lambda g: torch.zeros(4).cauchy_(generator=g),
    "geometric_": lambda g: torch.zeros(4).geometric_(0.3, generator=g),
    "log_normal_": lambda g: torch.zeros(4).log_normal_(generator=g),
    "uniform_": lambda g: torch.zeros(4).uniform_(-1, 1, generator=g),
    "normal_": lambda g: torch.zeros(4).normal_(2, 3, generator=g),
    "bernoulli_": lambda g: torch.zeros(4).bernoulli_(0.5, generator=g),
    "random_": lambda g: torch.zeros(4, dtype=torch.int64).random_(10, generator=g),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_a_seed_gives_the_same_numbers_on_every_backend_and_again(backend, name):
    draw = SAMPLERS[name]
    ours = host(draw(torch.Generator().manual_seed(3)))
    assert np.array_equal(ours, host(draw(torch.Generator().manual_seed(3))))
    with backends.use("numpy"):
        on_numpy = host(draw(torch.Generator().manual_seed(3)))
    np.testing.assert_allclose(ours, on_numpy, rtol=1e-6)
    if name not in ("randperm", "multinomial", "bernoulli", "bernoulli_"):  # few values: may repeat by chance
        assert not np.array_equal(ours, host(draw(torch.Generator().manual_seed(4))))


def test_a_generator_is_a_stream_of_its_own(backend):
    torch.manual_seed(0)
    expected = host(torch.randn(5))
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    _ = torch.randn(3, generator=g), torch.zeros(3).uniform_(generator=g), torch.randint(5, (2,), generator=g)
    assert np.array_equal(host(torch.randn(5)), expected)  # the default stream did not move
    # the generator seeded as the default stream gives its numbers
    assert np.array_equal(host(torch.randn(5, generator=torch.Generator().manual_seed(0))), expected)


def test_generator_seeds_and_states(backend):
    g = torch.Generator()
    assert g.initial_seed() == 67280421310721  # PyTorch's default seed
    assert g.manual_seed(-1) is g and g.initial_seed() == 2**64 - 1
    state = g.get_state()
    assert state.dtype == torch.uint8 and state.ndim == 1
    first = host(torch.rand(4, generator=g))
    assert g.set_state(state) is g
    assert np.array_equal(host(torch.rand(4, generator=g)), first)
    seed = g.seed()
    assert isinstance(seed, int) and g.initial_seed() == seed
    with pytest.raises(RuntimeError, match="uint8 tensor"):
        g.set_state(torch.zeros(3))
    with pytest.raises(TypeError, match="Generator"):
        torch.randn(2, generator=np.random.default_rng(0))


def test_the_default_stream_is_a_generator_with_the_masks_in_its_state(backend):
    assert torch.manual_seed(5) is torch.default_generator and torch.initial_seed() == 5
    state = torch.get_rng_state()
    first = host(torch.randn(4)), host(torch.nn.functional.dropout(torch.ones(64), 0.5))
    torch.set_rng_state(state)
    again = host(torch.randn(4)), host(torch.nn.functional.dropout(torch.ones(64), 0.5))
    assert all(np.array_equal(a, b) for a, b in zip(first, again))


# --- distributions -----------------------------------------------------------------------------
def test_continuous_distributions_have_their_moments(backend):
    g = torch.Generator().manual_seed(11)
    x = host(torch.randn(N, generator=g, dtype=torch.float64))
    assert within(x.mean(), 0, 1 / math.sqrt(N)) and within(x.var(), 1, math.sqrt(2 / N))
    u = host(torch.rand(N, generator=g))
    assert u.dtype == np.float32 and u.min() >= 0 and u.max() < 1 and within(u.mean(), 0.5, math.sqrt(1 / 12 / N))
    z = host(torch.randn(N, dtype=torch.complex128, generator=g))
    assert within(z.real.var(), 0.5, math.sqrt(2 / N)) and within(z.imag.var(), 0.5, math.sqrt(2 / N))
    n = host(torch.normal(torch.full((N,), 2.0), torch.full((N,), 3.0), generator=g))
    assert within(n.mean(), 2, 3 / math.sqrt(N)) and within(n.std(), 3, 3 / math.sqrt(2 * N))
    n = host(torch.normal(-1.0, 0.5, (N,), generator=g, dtype=torch.float64))
    assert within(n.mean(), -1, 0.5 / math.sqrt(N))
    e = host(torch.zeros(N, dtype=torch.float64).exponential_(4.0, generator=g))
    assert e.min() >= 0 and within(e.mean(), 0.25, 0.25 / math.sqrt(N))
    c = host(torch.zeros(N, dtype=torch.float64).cauchy_(1.0, 2.0, generator=g))
    q1, median, q3 = np.quantile(c, [0.25, 0.5, 0.75])  # the quartiles of a Cauchy are median -+ sigma
    assert abs(median - 1) < 0.1 and abs(q1 + 1) < 0.15 and abs(q3 - 3) < 0.15
    ln = host(torch.zeros(N, dtype=torch.float64).log_normal_(0.5, 0.25, generator=g))
    assert ln.min() > 0 and within(np.log(ln).mean(), 0.5, 0.25 / math.sqrt(N))
    un = host(torch.zeros(N).uniform_(-2, 4, generator=g))
    assert un.min() >= -2 and un.max() < 4 and within(un.mean(), 1, 6 / math.sqrt(12 * N))
    nn_ = host(torch.zeros(N).normal_(5, 0.1, generator=g))
    assert within(nn_.mean(), 5, 0.1 / math.sqrt(N))


def test_discrete_distributions_have_their_frequencies(backend):
    g = torch.Generator().manual_seed(12)
    r = host(torch.randint(-3, 2, (N,), generator=g))
    assert r.dtype == np.int64 and set(np.unique(r)) == {-3, -2, -1, 0, 1}
    assert all(within((r == v).mean(), 0.2, math.sqrt(0.16 / N)) for v in range(-3, 2))
    assert sorted(host(torch.randperm(50, generator=g)).tolist()) == list(range(50))
    p = torch.tensor([0.0, 0.1, 0.5, 0.9, 1.0], dtype=torch.float64)
    b = host(torch.bernoulli(p.expand(N, 5), generator=g))
    assert set(np.unique(b)) <= {0.0, 1.0}
    assert np.all(np.abs(b.mean(axis=0) - host(p)) <= 6 * np.sqrt(host(p) * (1 - host(p)) / N) + 1e-12)
    assert within(host(torch.zeros(N).bernoulli_(0.3, generator=g)).mean(), 0.3, math.sqrt(0.21 / N))
    geo = host(torch.zeros(N, dtype=torch.int64).geometric_(0.25, generator=g))
    assert geo.min() >= 1 and within(geo.mean(), 4, math.sqrt(0.75 / 0.0625 / N))
    pois = host(torch.poisson(torch.full((N,), 3.0), generator=g))
    assert within(pois.mean(), 3, math.sqrt(3 / N))
    ints = host(torch.zeros(N, dtype=torch.int8).random_(generator=g))
    assert ints.min() >= 0 and ints.max() == 127
    assert set(np.unique(host(torch.zeros(N).random_(2, 5, generator=g)))) == {2.0, 3.0, 4.0}


def test_multinomial_draws_in_proportion_and_without_repeats(backend):
    g = torch.Generator().manual_seed(13)
    weights = torch.tensor([[1.0, 0.0, 3.0, 6.0], [5.0, 5.0, 0.0, 0.0]])
    drawn = host(torch.multinomial(weights, N, replacement=True, generator=g))
    assert drawn.shape == (2, N) and drawn.dtype == np.int64
    for row, w in zip(drawn, host(weights)):
        expected = w / w.sum()
        counts = np.bincount(row, minlength=4) / N
        assert np.all(np.abs(counts - expected) <= 6 * np.sqrt(expected * (1 - expected) / N) + 1e-12)
    rows = host(torch.multinomial(torch.ones(500, 6), 6, generator=g))
    assert all(sorted(r) == list(range(6)) for r in rows.tolist())
    first = host(torch.multinomial(torch.tensor([1.0, 1.0, 8.0]).expand(N, 3), 1, generator=g))
    assert within((first == 2).mean(), 0.8, math.sqrt(0.16 / N))


# --- gradients and errors ---------------------------------------------------------------------------
def test_samples_are_recorded_with_zero_gradients_as_pytorchs(backend):
    mean, std = torch.zeros(3, requires_grad=True), torch.ones(3, requires_grad=True)
    y = torch.normal(mean, std)
    assert y.requires_grad
    y.sum().backward()
    assert host(mean.grad).tolist() == [0.0] * 3 and host(std.grad).tolist() == [0.0] * 3
    p = torch.full((1, 3), 0.5, requires_grad=True)
    torch.bernoulli(p.expand(2, 3)).sum().backward()
    assert p.grad.shape == (1, 3) and not host(p.grad).any()
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        x.normal_()
    y = x * 2
    y.exponential_()
    y.sum().backward()
    assert not host(x.grad).any()


@pytest.mark.parametrize(
    "call",
    [
        lambda: torch.zeros(2).exponential_(0.0),
        lambda: torch.zeros(2).geometric_(1.5),
        lambda: torch.zeros(2).cauchy_(0.0, -1.0),
        lambda: torch.zeros(2).log_normal_(1.0, 0.0),
        lambda: torch.zeros(2).uniform_(1.0, 0.0),
        lambda: torch.zeros(2, dtype=torch.int64).exponential_(),
        lambda: torch.randint(3, 3, (2,)),
        lambda: torch.normal(0.0, -1.0, (2,)),
        lambda: torch.normal(torch.zeros(2), -1.0),
        lambda: torch.bernoulli(torch.tensor([1.5])),
        lambda: torch.multinomial(torch.ones(3), 4),
        lambda: torch.multinomial(torch.tensor([1.0, -1.0]), 1),
        lambda: torch.multinomial(torch.tensor([1.0, 0.0, 0.0]), 2),
        lambda: torch.randn(2, dtype=torch.int64),
    ],
)
def test_bad_parameters_are_refused_as_pytorch_refuses_them(backend, call):
    with pytest.raises(RuntimeError):
        call()


def test_new_tensors_and_casts_take_pytorchs_keywords(backend):
    x = torch.zeros(2, dtype=torch.float64)
    made = x.new_ones((2, 3), dtype=torch.float32, requires_grad=True)
    assert made.dtype == torch.float32 and made.requires_grad and made.is_leaf
    assert x.new_full((2,), 7, device=x.device).dtype == torch.float64
    assert x.new_empty_strided((3, 2), (2, 1)).shape == (3, 2)
    assert x.float(memory_format=torch.contiguous_format).dtype == torch.float32
    assert [x.byte().dtype, x.char().dtype, x.short().dtype, x.cfloat().dtype] == [
        torch.uint8,
        torch.int8,
        torch.int16,
        torch.complex64,
    ]
    copied = x.to(x.device, torch.float64, False, True)  # non_blocking, copy
    assert copied is not x and host(copied).tolist() == [0.0, 0.0]
    assert x.to(torch.float64) is x
    assert torch.randn(size=(2, 3)).shape == torch.rand(2, 3).shape == torch.randn((2, 3)).shape == (2, 3)
