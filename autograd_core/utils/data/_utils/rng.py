"""Where the data tools' random draws come from: one function, `numpy_generator`.

The samplers, `random_split` and the DataLoader's worker seeds take PyTorch's ``generator=``:
any object with ``manual_seed`` and ``initial_seed`` (``ag.Generator``, a ``torch.Generator``).
They draw from a numpy ``Generator``:

- ``ag.Generator`` (or any generator whose ``rng`` is a numpy Generator): that stream itself,
  so the draws advance the generator, ``g.manual_seed(s)`` restarts them and
  ``get_state``/``set_state`` replay them, as with PyTorch's generators.
- another generator (a ``torch.Generator``): one numpy stream per generator object, seeded with
  ``generator.initial_seed()`` when first used, and made again whenever that seed has changed
  (``g.manual_seed(s)`` with a new `s`). Every sampler, split and loader given the same
  generator draws from that one stream in turn, as PyTorch's draw from the one generator, so
  epochs differ and two generators seeded alike give the same orders. Seeding a generator
  again with the seed it already has does not restart its stream: make a new one instead.
- no generator: a new numpy stream per use, seeded by a draw from the global stream that
  ``ag.manual_seed`` seeds (as PyTorch draws a seed from its global generator), so
  ``ag.manual_seed(0)`` makes the whole run reproducible.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

import backends

_SEED_BOUND = 2**63
_streams: weakref.WeakKeyDictionary[Any, tuple[int, np.random.Generator]] = weakref.WeakKeyDictionary()


def numpy_generator(generator: Any = None) -> np.random.Generator:
    """The numpy stream the draws for `generator` come from (see the module's text).

    >>> class Seeded:  # any object with PyTorch's generator methods
    ...     def manual_seed(self, seed): self.seed = seed; return self
    ...     def initial_seed(self): return self.seed
    >>> g = Seeded().manual_seed(0)
    >>> numpy_generator(g) is numpy_generator(g), numpy_generator(g) is numpy_generator(None)
    (True, False)
    """
    if generator is None:
        return np.random.default_rng(int(backends.host_rng().integers(_SEED_BOUND)))
    own = getattr(generator, "rng", None)
    if isinstance(own, np.random.Generator):
        return own
    seed = int(generator.initial_seed())
    known = _streams.get(generator)
    if known is None or known[0] != seed:
        known = _streams[generator] = (seed, np.random.default_rng(seed))
    return known[1]


def draw_seed(generator: Any = None) -> int:
    """A fresh 63-bit seed drawn for `generator` (PyTorch's ``random_()`` of an int64)."""
    return int(numpy_generator(generator).integers(_SEED_BOUND))
