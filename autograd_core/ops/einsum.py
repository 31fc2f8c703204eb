"""`einsum`, differentiable: the gradient of each operand is itself an einsum.

The subscripts are first made explicit by `primitives.einsum_plan` (``...`` as letters, an
implicit output spelled out, a label repeated within one operand renamed and tied to its
twin by an identity matrix passed as an extra, constant operand), so every operand has
distinct labels. The gradient of operand i is then the einsum of the output's gradient with
the other operands into operand i's labels, broadcast over the labels only operand i has
and summed back over the axes it broadcast.
"""

from __future__ import annotations

from autograd_core.graph.dtypes import result_type
from autograd_core.graph.tensor_base import TensorBase
from autograd_core.ops.core import _cast, _tensor, common_backend
from autograd_core.primitives.linear import einsum as einsum_primitive, einsum_plan

__all__ = ["einsum"]


def einsum(subscripts: str, /, *operands: TensorBase) -> TensorBase:
    """The Einstein summation of `operands` over `subscripts`, with NumPy's and PyTorch's
    rules: an explicit ``->`` output or an implicit one (the labels seen once, in ASCII
    order), ``...`` for broadcast axes, repeated labels for diagonals. Ellipsis axes left
    out of an explicit output are summed, as in PyTorch.

    >>> import autograd_core as ag
    >>> a = ag.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> ag.einsum("ij,j->i", a, ag.tensor([1.0, 1.0])).tolist()
    [3.0, 7.0]
    >>> ag.einsum("ii", a).backward()
    >>> a.grad.tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    tensors = [_tensor("einsum", t) for t in operands]
    if not tensors:
        raise ValueError("einsum needs at least one operand")
    backend = common_backend("einsum", *tensors)
    dtype = result_type(*tensors)
    tensors = [_cast(t, dtype) for t in tensors]
    labels, output, identities = einsum_plan(subscripts, [t.shape for t in tensors])
    xp, target = backend.xp, backend.dtype(dtype.name)
    eyes = [TensorBase._wrap(xp.eye(n, dtype=target, device=backend.device), backend) for _, n in identities]
    explicit = ",".join(labels + [pair for pair, _ in identities]) + "->" + output
    arrays = [*tensors, *eyes]
    return einsum_primitive.bind(explicit, *arrays)
