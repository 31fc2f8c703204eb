"""A reverse-mode autograd engine that runs on any array-API library.

>>> import autograd_core as ag
>>> a = ag.tensor(2.0, requires_grad=True)
>>> b = ag.tensor(-3.0, requires_grad=True)
>>> (a * b + a).backward()
>>> a.grad.item(), b.grad.item()
(-2.0, 2.0)
"""

import math
import sys

from autograd_core import primitives
from autograd_core.autodiff.engine import grad
from autograd_core.autodiff.function import Function, FunctionCtx, custom_vjp, once_differentiable
from autograd_core.autodiff.gradcheck import GradcheckError, gradcheck, gradgradcheck
from autograd_core.autodiff.tensor import Tensor
from autograd_core.export import onnx, viz
from autograd_core.graph import namespace as _namespace, registry
from autograd_core.graph.anomaly import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from autograd_core.graph.dtypes import (
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
from autograd_core.graph.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from autograd_core.graph.tensor_base import Device
from autograd_core.ops import fft, linalg, special
from autograd_core.ops.core import (
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
    divide,
    equal,
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
    remainder,
    reshape,
    squeeze,
    stack,
    subtract,
    sum,
    swapaxes,
    take,
    where,
)
from autograd_core.ops.creation import *  # noqa: F403
from autograd_core.ops.einsum import einsum
from autograd_core.ops.elementwise import *  # noqa: F403
from autograd_core.ops.info import __array_namespace_info__
from autograd_core.ops.linalg import tensordot, vecdot
from autograd_core.ops.manipulation import *  # noqa: F403
from autograd_core.ops.searching import *  # noqa: F403
from autograd_core.ops.statistics import *  # noqa: F403
from autograd_core.transforms import func
from autograd_core.transforms.checkpoint import checkpoint
from autograd_core.transforms.compile import CompileFallbackWarning, compile

# the public submodules keep the paths users import them by (`from autograd_core.func import vmap`,
# as `torch.func`), whichever layer's folder holds them
LAYERS = ("graph", "ops", "autodiff", "transforms", "export")  # the folders, not names of the namespace
PUBLIC_SUBMODULES = {"fft": fft, "func": func, "linalg": linalg, "onnx": onnx, "special": special, "viz": viz}
for _name, _module in PUBLIC_SUBMODULES.items():
    sys.modules[f"{__name__}.{_name}"] = _module
_namespace.set_tensor_namespace(sys.modules[__name__])

__array_api_version__ = "2024.12"
e, inf, nan, pi, newaxis = math.e, math.inf, math.nan, math.pi, None

__all__ = [
    name
    for name in dir()
    if not name.startswith("_") and name not in ("math", "sys", "primitives", "registry", "PUBLIC_SUBMODULES", *LAYERS)
]
