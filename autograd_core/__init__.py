"""A reverse-mode autograd engine that runs on any array-API library.

>>> import autograd_core as ag
>>> a = ag.tensor(2.0, requires_grad=True)
>>> b = ag.tensor(-3.0, requires_grad=True)
>>> (a * b + a).backward()
>>> a.grad.item(), b.grad.item()
(-2.0, 2.0)
"""

from autograd_core.anomaly import detect_anomaly, is_anomaly_enabled
from autograd_core.compile import CompileFallbackWarning, compile
from autograd_core.creation import (
    arange,
    full,
    full_like,
    manual_seed,
    ones,
    ones_like,
    rand,
    randn,
    tensor,
    uniform,
    zeros,
    zeros_like,
)
from autograd_core.dtypes import (
    DType,
    as_dtype,
    bool,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from autograd_core.engine import grad
from autograd_core.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from autograd_core.gradcheck import GradcheckError, gradcheck, gradgradcheck
from autograd_core.ops import (
    abs,
    add,
    astype,
    broadcast_to,
    clip,
    clone,
    concat,
    cos,
    divide,
    equal,
    erf,
    exp,
    expand_dims,
    flatten,
    getitem,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    log1p,
    log_softmax,
    logical_and,
    logical_not,
    logical_or,
    logsumexp,
    matmul,
    matrix_transpose,
    max,
    maximum,
    mean,
    min,
    minimum,
    multiply,
    negative,
    not_equal,
    permute_dims,
    pow,
    relu,
    reshape,
    sigmoid,
    sin,
    softmax,
    sqrt,
    squeeze,
    stack,
    subtract,
    sum,
    swapaxes,
    take,
    tanh,
    unbroadcast,
    var,
    where,
)
from autograd_core.tensor import Tensor, install_methods

install_methods()

__all__ = [name for name in dir() if not name.startswith("_") and name != "install_methods"]
