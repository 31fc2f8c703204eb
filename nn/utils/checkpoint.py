"""`checkpoint_sequential`, as ``torch.utils.checkpoint``'s."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from autograd_core.transforms.checkpoint import checkpoint

__all__ = ["checkpoint_sequential"]


def checkpoint_sequential(
    functions: Sequence[Callable[[Any], Any]],
    segments: int,
    input: Any,
    use_reentrant: bool = False,
    *,
    preserve_rng_state: bool = True,
) -> Any:
    """Run `functions` (an `nn.Sequential` or a list of modules or functions) one after another
    on `input`, in `segments` chunks of ``len(functions) // segments``, each checkpointed (see
    `autograd_core.transforms.checkpoint`) except the last, which takes the rest and keeps its graph
    since the backward starts there, as ``torch.utils.checkpoint.checkpoint_sequential``.

    >>> import autograd_core as ag, nn
    >>> model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
    >>> x = ag.ones((2, 3))
    >>> y = nn.utils.checkpoint_sequential(model, 2, x)
    >>> bool(ag.all(y == model(x)))
    True
    """
    functions = list(functions)
    if not 1 <= segments <= len(functions):
        raise ValueError(
            f"checkpoint_sequential: segments must be from 1 to the {len(functions)} functions, got {segments}"
        )
    size = len(functions) // segments

    def run(start: int, stop: int) -> Callable[[Any], Any]:
        def forward(value: Any) -> Any:
            for f in functions[start:stop]:
                value = f(value)
            return value

        return forward

    x, stop = input, 0
    for start in range(0, size * (segments - 1), size):
        stop = start + size
        x = checkpoint(run(start, stop), x, use_reentrant=use_reentrant, preserve_rng_state=preserve_rng_state)
    return run(stop, len(functions))(x)
