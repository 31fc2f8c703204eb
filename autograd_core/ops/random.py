"""Random numbers: PyTorch's `Generator` objects and the samplers that take one.

Every draw is made on the host by a numpy generator (PCG64), in float64 or int64, then cast
and moved to the backend, so one seed gives the same numbers on every backend. Without a
`generator`, a draw comes from the process's default stream, which ``manual_seed`` seeds and
``autograd_core.randn`` and the initializers share; a `Generator` is a stream of its own, which
no other draw advances.

>>> g = Generator().manual_seed(0)
>>> first = standard_normal(backends.get("numpy"), (3,), "float64", g)
>>> _ = g.manual_seed(0)
>>> bool((standard_normal(backends.get("numpy"), (3,), "float64", g) == first).all())
True
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

import backends
from autograd_core.graph.dtypes import DType, as_dtype, result_type
from autograd_core.graph.registry import Primitive
from autograd_core.graph.tensor_base import TensorBase
from autograd_core.ops import core as ops
from backends.contract import mask_stream

__all__ = [
    "Generator",
    "bernoulli",
    "cauchy",
    "default_generator",
    "draw",
    "exponential",
    "geometric",
    "log_normal",
    "multinomial",
    "normal",
    "normal_like",
    "poisson",
    "random_integers",
    "random_like",
    "standard_normal",
    "standard_uniform",
    "uniform_like",
    "with_zero_gradient",
]

DEFAULT_SEED = 67280421310721  # a new Generator's seed, PyTorch's
_WORD = 2**64 - 1
Sample = Callable[[np.random.Generator, tuple[int, ...]], Any]


def _seed(seed: Any) -> int:
    """`seed` as the unsigned 64-bit seed it stands for: PyTorch takes any int in
    [-2**63, 2**64) and reads a negative one as its two's complement."""
    seed = operator.index(seed)
    if not -(2**63) <= seed <= _WORD:
        raise RuntimeError(f"manual_seed: the seed must be an int in [-2**63, 2**64), not {seed}")
    return seed & _WORD


def _pcg_words(bit_generator: np.random.BitGenerator) -> list[int]:
    """A PCG64 bit generator's state as 64-bit words."""
    state = bit_generator.state
    value, inc = state["state"]["state"], state["state"]["inc"]
    return [value & _WORD, value >> 64, inc & _WORD, inc >> 64, state["has_uint32"], state["uinteger"]]


def _set_pcg_words(bit_generator: np.random.BitGenerator, words: list[int]) -> None:
    bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": words[0] | words[1] << 64, "inc": words[2] | words[3] << 64},
        "has_uint32": words[4],
        "uinteger": words[5],
    }


class Generator:
    """A stream of random numbers of its own, as PyTorch's ``torch.Generator``: every random
    function takes one as ``generator=``, and draws from it alone, the same numbers on every
    backend for the same seed.

    >>> g = Generator().manual_seed(7)
    >>> state = g.get_state()
    >>> a = g.rng.random()
    >>> _ = g.set_state(state)
    >>> g.rng.random() == a, g.initial_seed()
    (True, 7)
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.device = device
        self.manual_seed(DEFAULT_SEED)

    def __repr__(self) -> str:
        return f"Generator(initial_seed={self.initial_seed()})"

    @property
    def rng(self) -> np.random.Generator:
        """The numpy generator the draws come from."""
        return self._rng

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream at `seed` (any int in [-2**63, 2**64)); returns the generator."""
        self._seed = _seed(seed)
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        """Restart the stream at a seed drawn from the operating system's entropy; returns it."""
        seed = int(np.random.SeedSequence().entropy) & _WORD
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed the stream started from."""
        return self._seed

    def _words(self) -> list[int]:
        return [*_pcg_words(self.rng.bit_generator), self._seed]

    def _set_words(self, words: list[int]) -> None:
        _set_pcg_words(self.rng.bit_generator, words[:6])
        self._seed = words[6]

    def get_state(self) -> TensorBase:
        """Where the stream stands, as a uint8 tensor that `set_state` takes back."""
        backend = backends.current()
        host = np.asarray(self._words(), dtype=np.uint64).view(np.uint8)
        return TensorBase._wrap(backend.asarray(host, backend.dtype("uint8")), backend)

    def set_state(self, new_state: Any) -> Generator:
        """Put the stream back where `get_state` found it; returns the generator."""
        if isinstance(new_state, TensorBase):
            new_state = new_state.backend.to_numpy(new_state.array)
        host = np.asarray(new_state)
        size = 8 * len(self._words())
        if host.dtype != np.uint8 or host.shape != (size,):
            raise RuntimeError(
                f"set_state: expected a uint8 tensor of {size} elements, as get_state gives, not one of dtype "
                f"{host.dtype} and shape {host.shape}"
            )
        self._set_words([int(w) for w in np.ascontiguousarray(host).view(np.uint64)])
        return self


class _DefaultGenerator(Generator):
    """The process's stream (`backends.host_rng`), the one draws without a `generator` take; its
    state holds the stream of dropout's masks too, which its seed restarts."""

    def __init__(self) -> None:
        self.device, self._seed = "cpu", 0  # the host stream starts at seed 0

    @property
    def rng(self) -> np.random.Generator:
        return backends.host_rng()

    def manual_seed(self, seed: int) -> Generator:
        self._seed = _seed(seed)
        backends.manual_seed(self._seed)
        return self

    def _words(self) -> list[int]:
        key, counter = mask_stream.get_state()
        return [*super()._words(), int(key), int(counter)]

    def _set_words(self, words: list[int]) -> None:
        super()._set_words(words)
        mask_stream.set_state((words[7], words[8]))


default_generator: Generator = _DefaultGenerator()


def _rng(generator: Generator | None) -> np.random.Generator:
    if generator is None:
        return default_generator.rng
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be an autograd_core.torch.Generator, not {type(generator).__name__}")
    return generator.rng


# --- drawing on the host -------------------------------------------------------------------------
def draw(backend: backends.Backend, shape: tuple[int, ...], dtype: Any, sample: Sample, generator: Any) -> Any:
    """``sample(rng, shape)``, numpy values drawn from `generator`'s stream (the default one
    when None), as an array of `dtype` on `backend`; a complex `dtype` takes its real and
    imaginary parts from two draws."""
    dtype = as_dtype(dtype)
    target = backend.dtype(dtype.name)
    rng = _rng(generator)
    host = np.asarray(sample(rng, shape))
    if dtype.is_complex:
        host = host + 1j * np.asarray(sample(rng, shape))
    return backend.asarray(host.astype(backend.to_host_dtype(target)), target)


def _floating(dtype: Any, name: str) -> DType:
    dtype = as_dtype(dtype)
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name}: draws a floating-point tensor, not one of dtype {dtype}")
    return dtype


def standard_normal(backend: backends.Backend, shape: tuple[int, ...], dtype: Any, generator: Any = None) -> Any:
    """Standard normal draws (complex: each part of variance 1/2, as PyTorch's), an array of
    `backend`. Without a generator, the backend draws (a vmap batch draws per its randomness)."""
    dtype = _floating(dtype, "randn")
    if generator is None and not dtype.is_complex:
        return backend.randn(shape, backend.dtype(dtype.name))
    scale = math.sqrt(0.5) if dtype.is_complex else 1.0
    return draw(backend, shape, dtype, lambda rng, s: scale * rng.standard_normal(s), generator)


def standard_uniform(
    backend: backends.Backend, shape: tuple[int, ...], low: float, high: float, dtype: Any, generator: Any = None
) -> Any:
    """Uniform draws in [low, high) (complex: each part), an array of `backend`."""
    dtype = _floating(dtype, "rand")
    if generator is None and not dtype.is_complex:
        return backend.uniform(shape, low, high, backend.dtype(dtype.name))
    return draw(backend, shape, dtype, lambda rng, s: rng.uniform(low, high, s), generator)


def random_integers(
    backend: backends.Backend, shape: tuple[int, ...], low: int, high: int, dtype: Any, generator: Any = None
) -> Any:
    """Integers uniform in [low, high), an array of `dtype` on `backend`."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    host = np.uint64 if high > 2**63 else np.int64
    return draw(backend, shape, dtype, lambda rng, s: rng.integers(low, high, s, dtype=host), generator)


# --- samples recorded as PyTorch records them: with a zero gradient for their parameters -------
def _zero_gradient(position: int, count: int) -> Any:
    if position < 2:  # the transform's name and the draw itself
        return None
    return lambda ns, g, out, *inputs: ns.zeros_like(inputs[position])


_TRANSFORMS: dict[str, Callable[..., Any]] = {
    "normal": lambda ns, z, mean, std: mean + std * z,
    "bernoulli": lambda ns, u, p: ns.astype(u < p, u.dtype),
    "given": lambda ns, values, *parameters: values,
}

_SAMPLE = Primitive(
    "random_sample",
    lambda ns, transform, drawn, *parameters: _TRANSFORMS[transform](ns, drawn, *parameters),
    vjps=_zero_gradient,
    jvp=lambda ns, tangents, out, *inputs: ns.zeros_like(out),
    doc="A draw turned into a sample of a distribution by its parameters, with a zero gradient "
    "for each (PyTorch's: a sample is not differentiated through its parameters).",
)


def _sample(transform: str, backend: backends.Backend, drawn: Any, *parameters: Any) -> TensorBase:
    return _SAMPLE.bind(transform, TensorBase._wrap(drawn, backend), *parameters)


def with_zero_gradient(values: TensorBase, *parameters: TensorBase) -> TensorBase:
    """`values`, recorded as a sample of `parameters` with a zero gradient for each: what an
    in-place sampler gives the tensor it overwrites (PyTorch's ``exponential_`` and the like)."""
    return _SAMPLE.bind("given", values, *parameters)


def _tensor(x: Any, name: str) -> TensorBase:
    if not isinstance(x, TensorBase):
        raise TypeError(f"{name}: expected a tensor, not {type(x).__name__}")
    return x


def _check(ok: Any, message: str) -> None:
    if not ok:
        raise RuntimeError(message)


def _host(x: TensorBase) -> np.ndarray:
    """`x`'s values on the host, in float64 (the parameters of a draw, checked there)."""
    return np.asarray(x.backend.to_numpy(x.array), dtype=np.float64)


def normal(mean: Any, std: Any = 1.0, *, generator: Generator | None = None) -> TensorBase:
    """Normal draws of mean `mean` and standard deviation `std`, at least one of them a tensor:
    of their broadcast shape and promoted dtype. The gradient for both is zero, as PyTorch's.

    >>> import autograd_core as ag
    >>> normal(ag.zeros(2, 3), 0.0).tolist()
    [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    tensors = [t for t in (mean, std) if isinstance(t, TensorBase)]
    if not tensors:
        raise TypeError("normal: mean or std must be a tensor here; with two numbers, pass a size")
    dtype = _floating(result_type(*(mean, std)), "normal")
    if isinstance(std, TensorBase):
        _check(np.all(_host(std) >= 0), "normal expects all elements of std >= 0.0")
    else:
        _check(std >= 0, f"normal expects std >= 0.0, but found std {std}")
    backend = ops.common_backend("normal", *tensors)
    shape = np.broadcast_shapes(*(t.shape for t in tensors))
    mean, std = (ops._cast(t, dtype) if isinstance(t, TensorBase) else t for t in (mean, std))
    return _sample("normal", backend, standard_normal(backend, shape, dtype, generator), mean, std)


def bernoulli(x: TensorBase, p: Any = None, *, generator: Generator | None = None) -> TensorBase:
    """Draws of 1 with probability `p` (a float), else 0, in `x`'s shape and dtype; without `p`,
    with probability `x` (each element in [0, 1]). The gradient for `x` is zero, as PyTorch's.

    >>> import autograd_core as ag
    >>> bernoulli(ag.tensor([0.0, 1.0, 1.0])).tolist()
    [0.0, 1.0, 1.0]
    """
    x = _tensor(x, "bernoulli")
    if p is not None and not isinstance(p, TensorBase):
        _check(0 <= p <= 1, f"bernoulli expects p to be in [0, 1], but got p={p}")
        drawn = draw(x.backend, x.shape, x.dtype, lambda rng, s: rng.random(s) < p, generator)
        return _sample("given", x.backend, drawn, x)
    p = x if p is None else ops.broadcast_to(ops._cast(p, x.dtype), x.shape)
    probabilities = _host(p)
    _check(np.all((probabilities >= 0) & (probabilities <= 1)), "bernoulli expects all elements of p in [0, 1]")
    u = draw(x.backend, p.shape, _floating(p.dtype, "bernoulli"), lambda rng, s: rng.random(s), generator)
    return _sample("bernoulli", x.backend, u, p)


def poisson(x: TensorBase, generator: Generator | None = None) -> TensorBase:
    """Poisson draws of rate `x` (each element >= 0), in `x`'s shape and dtype.

    >>> import autograd_core as ag
    >>> poisson(ag.zeros(2)).tolist()
    [0.0, 0.0]
    """
    x = _tensor(x, "poisson")
    rates = _host(x)
    _check(np.all(rates >= 0), "poisson: every rate must be >= 0 (and not nan)")
    drawn = draw(x.backend, x.shape, x.dtype, lambda rng, s: rng.poisson(rates), generator)
    return _sample("given", x.backend, drawn, x)


def _with_replacement(rng: np.random.Generator, weights: np.ndarray, count: int) -> np.ndarray:
    """`count` categories of each row of `weights`, independently: each row's cumulative
    distribution inverted at uniform draws, all rows in one search (row r's lies in [r, r + 1])."""
    cdf = np.cumsum(weights, axis=1) / weights.sum(axis=1, keepdims=True)
    cdf[:, -1] = 1.0
    rows = np.arange(len(weights))[:, None]
    found = np.searchsorted((cdf + rows).ravel(), (rng.random((len(weights), count)) + rows).ravel(), side="right")
    return np.minimum(found.reshape(-1, count) - rows * weights.shape[1], weights.shape[1] - 1)


def _without_replacement(rng: np.random.Generator, weights: np.ndarray, count: int) -> np.ndarray:
    """`count` distinct categories of each row of `weights`, as successive draws each in
    proportion to the weights left: the first `count` to arrive when category i arrives after
    an exponential time of rate ``weights[i]`` (zero weights never do)."""
    with np.errstate(divide="ignore"):
        arrivals = rng.standard_exponential(weights.shape) / weights
    return np.argsort(arrivals, axis=1, kind="stable")[:, :count]


def multinomial(
    x: TensorBase, num_samples: int, replacement: bool = False, *, generator: Generator | None = None
) -> TensorBase:
    """`num_samples` category indices (int64) drawn from each row of `x`, weights that need
    not sum to one, with or without `replacement`: of shape ``(num_samples,)`` for a vector,
    ``(rows, num_samples)`` for a matrix.

    >>> import autograd_core as ag
    >>> multinomial(ag.tensor([0.0, 1.0, 0.0]), 2, replacement=True).tolist()
    [1, 1]
    """
    x = _tensor(x, "multinomial")
    _check(x.ndim in (1, 2), f"multinomial: prob_dist must be 1 or 2 dim, not {x.ndim}")
    _check(x.dtype.is_floating_point, f"multinomial only supports floating-point dtypes for input, not {x.dtype}")
    _check(num_samples > 0, "multinomial: cannot sample n_sample <= 0 samples")
    weights = _host(x).reshape(-1, x.shape[-1])
    _check(
        replacement or num_samples <= weights.shape[1],
        "multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement",
    )
    _check(
        np.all(np.isfinite(weights)) and np.all(weights >= 0),
        "multinomial: probability tensor contains either `inf`, `nan` or element < 0",
    )
    _check(np.all(weights.sum(axis=1) > 0), "multinomial: invalid multinomial distribution (sum of probabilities <= 0)")
    _check(
        replacement or np.all((weights > 0).sum(axis=1) >= num_samples),
        "multinomial: invalid multinomial distribution (with replacement=False, not enough non-negative category "
        "to sample)",
    )

    def sample(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        picks = (_with_replacement if replacement else _without_replacement)(rng, weights, num_samples)
        return picks.reshape(shape)

    shape = (*x.shape[:-1], num_samples)
    return TensorBase._wrap(draw(x.backend, shape, "int64", sample, generator), x.backend)


# --- the distributions of the in-place samplers: a tensor of `x`'s shape, dtype and backend ------
def _like(x: TensorBase, name: str, sample: Sample, generator: Any, floating: bool = True) -> TensorBase:
    x = _tensor(x, name)
    dtype = _floating(x.dtype, name) if floating else x.dtype
    return TensorBase._wrap(draw(x.backend, x.shape, dtype, sample, generator), x.backend)


def exponential(x: TensorBase, lambd: float = 1.0, *, generator: Generator | None = None) -> TensorBase:
    """Exponential draws of rate `lambd` (mean ``1 / lambd``) in `x`'s shape and dtype."""
    _check(lambd > 0, f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _like(x, "exponential_", lambda rng, s: rng.exponential(1 / lambd, s), generator)


def cauchy(x: TensorBase, median: float = 0.0, sigma: float = 1.0, *, generator: Generator | None = None) -> TensorBase:
    """Cauchy draws of location `median` and scale `sigma` in `x`'s shape and dtype."""
    _check(sigma > 0, f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    return _like(x, "cauchy_", lambda rng, s: median + sigma * rng.standard_cauchy(s), generator)


def geometric(x: TensorBase, p: float, *, generator: Generator | None = None) -> TensorBase:
    """Geometric draws (the number of trials up to the first success, each of probability
    `p`: 1, 2, ...) in `x`'s shape and dtype."""
    _check(0 < p < 1, f"geometric_ expects p to be in (0, 1), but got p={p}")
    return _like(x, "geometric_", lambda rng, s: rng.geometric(p, s), generator, floating=False)


def log_normal(x: TensorBase, mean: float = 1.0, std: float = 2.0, *, generator: Generator | None = None) -> TensorBase:
    """Draws whose logarithm is normal of mean `mean` and standard deviation `std`, in `x`'s
    shape and dtype."""
    _check(std > 0, f"log_normal_ expects std > 0.0, but found std={std}")
    return _like(x, "log_normal_", lambda rng, s: rng.lognormal(mean, std, s), generator)


def uniform_like(
    x: TensorBase, low: float = 0.0, high: float = 1.0, *, generator: Generator | None = None
) -> TensorBase:
    """Uniform draws in [low, high) in `x`'s shape and dtype."""
    _check(low <= high, f"uniform_ expects to return a [from, to) range, but found from={low} > to={high}")
    x = _tensor(x, "uniform_")
    return TensorBase._wrap(standard_uniform(x.backend, x.shape, low, high, x.dtype, generator), x.backend)


def normal_like(
    x: TensorBase, mean: float = 0.0, std: float = 1.0, *, generator: Generator | None = None
) -> TensorBase:
    """Normal draws of mean `mean` and standard deviation `std` in `x`'s shape and dtype."""
    _check(std >= 0, f"normal_ expects std >= 0.0, but found std={std}")
    x = _tensor(x, "normal_")
    return mean + std * TensorBase._wrap(standard_normal(x.backend, x.shape, x.dtype, generator), x.backend)


def _top(dtype: DType) -> int:
    """Past the last value ``random_()`` draws without bounds: every integer the dtype holds
    exactly from 0 (up to 2**mantissa for floats), as PyTorch's."""
    if dtype.is_floating_point:
        return 2 ** (np.finfo(dtype.name).nmant + 1) + 1
    return (1 if dtype.name == "bool" else int(np.iinfo(dtype.name).max)) + 1


def random_like(x: TensorBase, *bounds: int | None, generator: Generator | None = None) -> TensorBase:
    """Integers uniform in [from, to) in `x`'s shape and dtype, PyTorch's ``random_`` forms:
    ``random_like(x)`` over every value the dtype holds from 0, ``random_like(x, to)`` in
    [0, to), ``random_like(x, from, to)``, where a `to` of None is the dtype's top."""
    x = _tensor(x, "random_")
    if len(bounds) > 2:
        raise TypeError(f"random_ takes at most 2 bounds (from, to), not {len(bounds)}")
    low, high = {0: (0, None), 1: (0, *bounds), 2: bounds}[len(bounds)]
    high = _top(x.dtype) if high is None else high
    return TensorBase._wrap(random_integers(x.backend, x.shape, low, high, x.dtype, generator), x.backend)
