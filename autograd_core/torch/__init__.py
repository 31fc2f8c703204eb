"""PyTorch's namespace over our tensors, for a script written against PyTorch:
``import autograd_core.torch as torch`` (with ``import autograd_core.torch.nn as nn`` and
``from autograd_core.torch.nn import functional as F``) and it runs on any backend.

`autograd_core` stays the array API standard's namespace (scikit-learn, SciPy and the
conformance suite use it); this module holds PyTorch's functions with PyTorch's signatures
and results, from one table per family (`FUNCTIONS` below merges them): each row is a name,
a signature adaptor (`_adapt`) and our implementation. A Tensor method that PyTorch also has
as a function is one name in `METHODS`: ``torch.cumsum(x, 0)`` is ``x.cumsum(0)``.

>>> import autograd_core.torch as torch
>>> x = torch.tensor([[1.0, 5.0], [3.0, 2.0]])
>>> values, indices = torch.max(x, 1)
>>> values.tolist(), indices.tolist(), torch.cat([x, x], dim=0).shape
([5.0, 3.0], [1, 0], (4, 2))
"""

from __future__ import annotations

import sys
from typing import Any

import nn
import nn.functional
import nn.init
import nn.utils
import optim
import optim.lr_scheduler
import optim.swa_utils
from autograd_core import (
    Device as device,
    DType as dtype,
    Tensor,
    bool,
    complex64,
    complex128,
    enable_grad,
    float16,
    float32,
    float64,
    inference_mode,
    int8,
    int16,
    int32,
    int64,
    is_grad_enabled,
    is_inference_mode_enabled,
    manual_seed,
    no_grad,
    set_grad_enabled,
    uint8,
    utils,
)
from autograd_core.torch import (
    _core,
    _creation,
    _linalg,
    _shapes,
    _special,
    autograd,
    fft,
    linalg,
    masked,
    signal,
    special,
)
from autograd_core.torch._adapt import method

float, double, half = float32, float64, float16
long, int, short = int64, int32, int16
cfloat, cdouble = complex64, complex128
Size = tuple

METHODS: tuple[str, ...] = (*_core.METHODS, *_shapes.METHODS, *_linalg.METHODS, *_special.METHODS)
"""Functions that are their input's Tensor method of the same name, as in PyTorch."""

FUNCTIONS: dict[str, Any] = {
    **{name: method(name) for name in METHODS},
    **_core.FUNCTIONS,
    **_creation.FUNCTIONS,
    **_shapes.FUNCTIONS,
    **_linalg.FUNCTIONS,
    **_special.FUNCTIONS,
}
"""Every function of the namespace by name: the families' tables merged."""

globals().update(FUNCTIONS)

# `import autograd_core.torch.nn as nn` and `from autograd_core.torch.nn import functional as F`
for _name, _module in {
    "nn": nn,
    "nn.functional": nn.functional,
    "nn.init": nn.init,
    "nn.utils": nn.utils,
    "nn.utils.rnn": nn.utils.rnn,
    "nn.utils.parametrize": nn.utils.parametrize,
    "nn.utils.parametrizations": nn.utils.parametrizations,
    "optim": optim,
    "optim.lr_scheduler": optim.lr_scheduler,
    "optim.swa_utils": optim.swa_utils,
    "utils": utils,
    "utils.data": utils.data,
}.items():
    sys.modules[f"{__name__}.{_name}"] = _module
