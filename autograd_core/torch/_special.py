"""`autograd_core.torch`'s special functions at the top of the namespace (``torch.lgamma``,
``torch.polygamma(n, x)``, ``torch.igamma``...): Tensor methods, and the functions whose
argument order differs from their method's.

>>> import autograd_core as ag
>>> x = ag.tensor([1.0, 2.0], dtype="float64")
>>> [round(v, 6) for v in x.lgamma().tolist()], [round(v, 6) for v in polygamma(1, x).tolist()]
([0.0, 0.0], [1.644934, 0.644934])
"""

from __future__ import annotations

from typing import Any

from autograd_core.torch._adapt import as_tensor

METHODS = ("digamma", "erfc", "erfinv", "i0", "igamma", "igammac", "lgamma", "logit", "mvlgamma", "sinc", "xlogy")


def polygamma(n: int, input: Any) -> Any:
    """The n-th derivative of digamma at `input` (``torch.polygamma(n, input)``: the order first)."""
    return as_tensor(input).polygamma(n)


FUNCTIONS: dict[str, Any] = {
    "polygamma": polygamma,
}
