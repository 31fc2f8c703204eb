"""Every primitive the engine and the layers build on that the array-API standard lacks:
the fused kernels and the ops with their own VJPs, each declared once (`autograd_core.graph.registry`).

A backend adds its own kernel for any of them by name, without subclassing:

>>> from autograd_core import primitives
>>> "numpy" in primitives.relu.kernels
True
"""

from autograd_core.graph.registry import Primitive, primitive, registry
from autograd_core.primitives.activations import erf_kernel, gelu, gelu_backward, relu, relu_backward, tanh_backward
from autograd_core.primitives.attention import attention_scores, masked_softmax
from autograd_core.primitives.chunking import map_batch_chunks
from autograd_core.primitives.constants import constant
from autograd_core.primitives.convolution import (
    ConvGeometry,
    PoolGeometry,
    col2im,
    conv2d,
    conv2d_grad_input,
    conv2d_grad_weight,
    im2col,
    max_pool2d,
    max_pool2d_backward,
    pad2d,
)
from autograd_core.primitives.indexing import basic_index, index_add, scatter, take, take_rows, to_backend
from autograd_core.primitives.linear import einsum, einsum_plan, linear
from autograd_core.primitives.losses import (
    binary_cross_entropy,
    cross_entropy,
    cross_entropy_backward,
    cross_entropy_rows,
    fused_cross_entropy,
)
from autograd_core.primitives.normalization import batch_norm, batch_norm_backward, layer_norm, layer_norm_backward
from autograd_core.primitives.optim import adam_apply, adam_step_scalars, adam_update
from autograd_core.primitives.recurrent import RECURRENCES, Recurrence, recurrent_scan

__all__ = [
    "ConvGeometry",
    "PoolGeometry",
    "Primitive",
    "RECURRENCES",
    "Recurrence",
    "adam_apply",
    "adam_step_scalars",
    "adam_update",
    "attention_scores",
    "basic_index",
    "batch_norm",
    "batch_norm_backward",
    "binary_cross_entropy",
    "col2im",
    "constant",
    "conv2d",
    "conv2d_grad_input",
    "conv2d_grad_weight",
    "cross_entropy",
    "cross_entropy_backward",
    "cross_entropy_rows",
    "einsum",
    "einsum_plan",
    "erf_kernel",
    "fused_cross_entropy",
    "gelu",
    "gelu_backward",
    "im2col",
    "index_add",
    "layer_norm",
    "layer_norm_backward",
    "linear",
    "map_batch_chunks",
    "masked_softmax",
    "max_pool2d",
    "max_pool2d_backward",
    "pad2d",
    "primitive",
    "recurrent_scan",
    "registry",
    "relu",
    "relu_backward",
    "scatter",
    "take",
    "take_rows",
    "tanh_backward",
    "to_backend",
]
