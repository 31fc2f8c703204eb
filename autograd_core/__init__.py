"""A reverse-mode autograd engine that runs on any array-API library.

>>> import autograd_core as ag
>>> a = ag.tensor(2.0, requires_grad=True)
>>> b = ag.tensor(-3.0, requires_grad=True)
>>> (a * b + a).backward()
>>> a.grad.item(), b.grad.item()
(-2.0, 2.0)
"""

import math

from autograd_core import fft, linalg, onnx, primitives, registry, special
from autograd_core.anomaly import detect_anomaly, is_anomaly_enabled
from autograd_core.compile import CompileFallbackWarning, compile

# before creation's names: importing the module `autograd_core.tensor` binds the package's
# attribute `tensor`, which must end as the function `tensor`
from autograd_core.tensor import Tensor  # isort: skip
from autograd_core import func  # noqa: E402 - after the ops it transforms
from autograd_core.checkpoint import checkpoint
from autograd_core.creation import *  # noqa: F403
from autograd_core.dtypes import (
    DType,
    as_dtype,
    bool,
    can_cast,
    complex64,
    complex128,
    finfo,
    float16,
    float32,
    float64,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    isdtype,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from autograd_core.einsum import einsum
from autograd_core.elementwise import *  # noqa: F403
from autograd_core.engine import grad
from autograd_core.function import Function, FunctionCtx, custom_vjp, once_differentiable
from autograd_core.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from autograd_core.gradcheck import GradcheckError, gradcheck, gradgradcheck
from autograd_core.info import __array_namespace_info__
from autograd_core.linalg import tensordot, vecdot
from autograd_core.manipulation import *  # noqa: F403
from autograd_core.ops import (
    abs,
    add,
    astype,
    bitwise_and,
    bitwise_invert,
    bitwise_left_shift,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
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
    floor_divide,
    getitem,
    greater,
    greater_equal,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    log_softmax,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
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
    positive,
    pow,
    relu,
    remainder,
    reshape,
    sigmoid,
    sign,
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
    var,
    where,
)
from autograd_core.searching import *  # noqa: F403
from autograd_core.statistics import *  # noqa: F403
from autograd_core.tensor_base import Device

__array_api_version__ = "2024.12"
e, inf, nan, pi, newaxis = math.e, math.inf, math.nan, math.pi, None

__all__ = [
    name for name in dir() if not name.startswith("_") and name not in ("math", "primitives", "registry", "tensor_base")
]
