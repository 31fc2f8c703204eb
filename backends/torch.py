"""torch, through array-api-compat's namespace; CPU or CUDA (AUTOGRAD_DEVICE=cuda)."""

from __future__ import annotations

import math

import array_api_compat.torch as xp
import numpy as np
import torch

from autograd_core import primitives as P
from autograd_core.primitives import special
from backends import torch_jit
from backends.contract.backend import Backend
from backends.contract.namespaces import CompletedNamespace


class _Linalg(CompletedNamespace):
    """array-api-compat's torch `linalg`, but for the norm of a 0-d tensor, which it fails on
    (it slices the tensor) and torch's own takes."""

    module = xp.linalg

    @staticmethod
    def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002 - the standard's name
        if x.ndim == 0:
            return torch.linalg.vector_norm(x, ord=ord)
        return xp.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)


class _Namespace(CompletedNamespace):
    """array-api-compat's torch namespace, whose `matmul` goes straight to torch's when both
    operands have one dtype (always, from the engine): array-api-compat's promotion check
    costs 4 µs a call, three times the product of two small matrices."""

    module = xp
    linalg = _Linalg()

    @staticmethod
    def matmul(x1, x2, /):
        return torch.matmul(x1, x2) if x1.dtype == x2.dtype else xp.matmul(x1, x2)


class TorchBackend(Backend):
    name = "torch"
    device_kinds = ("cpu", "cuda")

    @property
    def device_type(self) -> str:
        return self.device.type

    can_compile = True

    def jit(self, fn, donate=()):  # the graph returns new arrays; nothing is written over the donated ones
        return torch_jit.TracedFunction(fn, inductor=torch_jit.compiler() == "inductor")

    def is_traced(self, x):
        return torch_jit.is_traced(x)

    def asarray(self, host, dtype=None):
        # torch.tensor rejects numpy's negative strides (a reversed view); np.require copies those.
        return torch.tensor(np.require(host, requirements="C"), dtype=dtype, device=self.device)

    def to_numpy(self, x):
        return x.detach().cpu().numpy()

    def synchronize(self, *arrays):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def owns_memory(self, x):
        return x._base is None and not x.requires_grad

    def value_range(self, x):
        low, high = torch.aminmax(x)  # one pass, not two
        return int(low), int(high)


# --- kernels ---------------------------------------------------------------------------------
@P.take_rows.kernel("torch")
def _take_rows(ns, x, index, axis):
    return torch.index_select(x, axis, index)  # array-api-compat's take wraps negative indices first


@P.index_add.kernel("torch")
def _index_add(ns, values, shape, axis, index):
    out = torch.zeros(tuple(shape), dtype=values.dtype, device=values.device)
    return out.index_add_(axis, index, values)


@P.basic_index.kernel("torch")
def _getitem(ns, x, key):
    key, flips = _positive_steps(key, x.shape)
    return torch.flip(x[key], flips) if flips else x[key]


@P.scatter.kernel("torch")
def _scatter(ns, values, shape, key):
    key, flips = _positive_steps(key, shape)
    return P.scatter.default(ns, torch.flip(values, flips) if flips else values, shape, key)


@P.linear.kernel("torch")
def _linear(ns, x, weight, bias):
    return torch.nn.functional.linear(x, weight, bias)  # the bias added inside the matrix product


@P.relu.kernel("torch")
def _relu(ns, x):
    return torch.relu(x)


@P.relu_backward.kernel("torch")
def _relu_backward(ns, grad, out):
    return torch.ops.aten.threshold_backward(grad, out, 0)  # several times faster than where()


@P.tanh_backward.kernel("torch")
def _tanh_backward(ns, grad, out):
    if out.is_complex():  # the engine conjugates `out` for complex values; torch's kernel would again
        return P.tanh_backward.default(ns, grad, out)
    return torch.ops.aten.tanh_backward(grad, out)


@P.gelu.kernel("torch")
def _gelu(ns, x, approximate):
    return torch.nn.functional.gelu(x, approximate=approximate)


@P.gelu_backward.kernel("torch")
def _gelu_backward(ns, grad, x, approximate):
    return torch.ops.aten.gelu_backward(grad, x, approximate=approximate)


@P.layer_norm.kernel("torch")
def _layer_norm(ns, x, weight, bias, normalized_shape, eps):
    out, mean, rstd = torch.native_layer_norm(x, normalized_shape, weight, bias, eps)
    return out, (mean, rstd)


@P.layer_norm_backward.kernel("torch")
def _layer_norm_backward(ns, grad, x, normalized_shape, weight, eps, stats, part):
    mean, rstd = stats
    mask = [part == "input", part == "weight", False]
    weight = weight if weight is not None else torch.ones(normalized_shape, dtype=x.dtype, device=x.device)
    grads = torch.ops.aten.native_layer_norm_backward(grad, x, normalized_shape, mean, rstd, weight, None, mask)
    return grads[mask.index(True)]


@P.batch_norm.kernel("torch")
def _batch_norm(ns, x, weight, bias, eps):
    if x.dtype == torch.float64:
        # In float64, torch's training-mode kernel is far less exact than its dtype (a float64
        # PyTorch twin of the MNIST CNN drifts 1e-8 from it in an epoch, 1e-10 from this):
        # statistics from var_mean, normalised by the evaluation-mode kernel, at 3x the cost.
        var, mean = torch.var_mean(x, dim=(0, *range(2, x.ndim)), correction=0)
        return torch.native_batch_norm(x, weight, bias, mean, var, False, 0.0, eps)[0], mean, var
    out, mean, inverse_std = torch.native_batch_norm(x, weight, bias, None, None, True, 0.0, eps)
    return out, mean, inverse_std.pow(-2) - eps


@P.batch_norm_backward.kernel("torch")
def _batch_norm_backward(ns, grad, x, weight, mean, var, eps, part):
    if part == "bias":
        return grad.sum((0, *range(2, x.ndim)))
    mask = tuple(p == part for p in ("input", "weight", "bias"))
    if weight is None and part == "input":
        weight = torch.ones_like(mean)  # the kernel scales by the weight: ones is none
    grads = torch.ops.aten.native_batch_norm_backward(
        grad, x, weight, None, None, mean, (var + eps).rsqrt(), True, eps, mask
    )
    return grads[mask.index(True)]


@P.cross_entropy_rows.kernel("torch")
def _cross_entropy_rows(ns, logits, target):
    return torch.nn.functional.cross_entropy(logits, target, reduction="none")


@P.cross_entropy_backward.kernel("torch")
def _cross_entropy_backward(ns, row_grad, logits, target, classes):
    # torch's cross_entropy backward: nll_loss's, then log_softmax's
    log_p = torch.log_softmax(logits, 1)
    g_log_p = torch.ops.aten.nll_loss_backward(
        row_grad.expand(target.shape), log_p, target, None, 0, -100, row_grad.new_ones(())
    )
    return torch.ops.aten._log_softmax_backward_data(g_log_p, log_p, 1, log_p.dtype)


@P.erf_kernel.kernel("torch")
def _erf(ns, x):
    return torch.special.erf(x)


@P.adam_update.kernel("torch")
def _adam_update(ns, param, grad, exp_avg, exp_avg_sq, *, step, lr, beta1, beta2, eps, weight_decay, decoupled):
    if torch_jit.is_traced(param):  # inside a compiled step: functional, for the trace
        # inductor would inline the step's scalars (two pow) into the loop over the elements,
        # once per vector of them; stacked, they are computed once (2.4x faster, 400k floats)
        scalars = torch.unbind(torch.stack(P.adam_step_scalars(ns, step, lr, beta1, beta2)))
        return P.adam_apply(
            ns, param, grad, exp_avg, exp_avg_sq, *scalars, lr, beta1, beta2, eps, weight_decay, decoupled
        )
    if _fusable(param, grad, exp_avg, exp_avg_sq) and isinstance(step, int):
        # torch.optim's fused=True kernel: one pass instead of seven, ~10x faster on the CPU.
        # It reads every operand as contiguous, so a strided gradient is copied first.
        fused = torch._fused_adamw_ if decoupled else torch._fused_adam_
        fused(
            [param],
            [grad.contiguous()],
            [exp_avg],
            [exp_avg_sq],
            [],
            [torch.tensor(float(step), device=param.device)],
            lr=lr,
            beta1=beta1,
            beta2=beta2,
            weight_decay=weight_decay,
            eps=eps,
            amsgrad=False,
            maximize=False,
        )
        return param, exp_avg, exp_avg_sq
    # torch.optim.Adam's single-tensor path, in place.
    if weight_decay:
        if decoupled:
            param.mul_(1 - lr * weight_decay)
        else:
            grad = grad.add(param, alpha=weight_decay)
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    denom = (exp_avg_sq.sqrt() / math.sqrt(1 - beta2**step)).add_(eps)
    param.addcdiv_(exp_avg, denom, value=-lr / (1 - beta1**step))
    return param, exp_avg, exp_avg_sq


@P.conv2d.kernel("torch")
def _conv2d(ns, x, weight, geometry):
    stride, padding, dilation, groups = geometry
    x, padding = _symmetric(x, padding)
    return torch.nn.functional.conv2d(x, weight, None, stride, padding, dilation, groups)


@P.conv2d_grad_input.kernel("torch")
def _conv2d_grad_input(ns, grad, weight, input_shape, geometry):
    stride, ((top, bottom), (left, right)), dilation, groups = geometry
    n, c, h, w = input_shape
    padded = (n, c, h + top + bottom, w + left + right)
    dummy = grad.new_empty(1).expand(padded)  # only its shape is read
    out = torch.ops.aten.convolution_backward(
        grad, dummy, weight, None, stride, (0, 0), dilation, False, (0, 0), groups, (True, False, False)
    )[0]
    return out[:, :, top : top + h, left : left + w]


@P.conv2d_grad_weight.kernel("torch")
def _conv2d_grad_weight(ns, grad, x, weight_shape, geometry):
    stride, padding, dilation, groups = geometry
    x, padding = _symmetric(x, padding)
    dummy = grad.new_empty(1).expand(tuple(weight_shape))
    return torch.ops.aten.convolution_backward(
        grad, x, dummy, None, stride, padding, dilation, False, (0, 0), groups, (False, True, False)
    )[1]


@P.max_pool2d.kernel("torch")
def _max_pool2d(ns, x, geometry):
    return torch.nn.functional.max_pool2d(x, *geometry, return_indices=True)


@P.max_pool2d_backward.kernel("torch")
def _max_pool2d_backward(ns, grad, indices, input_shape, geometry):
    dummy = grad.new_empty(1).expand(tuple(input_shape))  # only its shape is read
    return torch.ops.aten.max_pool2d_with_indices_backward(grad, dummy, *geometry, indices)


@P.einsum.kernel("torch")
def _einsum(ns, subscripts, *arrays):
    return torch.einsum(subscripts, *arrays)


def _symmetric(x, padding):
    """`x` and the padding torch's convolution takes: (rows, columns) on both sides, so an
    uneven padding is applied to `x` first."""
    (top, bottom), (left, right) = padding
    if top == bottom and left == right:
        return x, (top, left)
    return torch.nn.functional.pad(x, (left, right, top, bottom)), (0, 0)


def _positive_steps(key, shape):
    """torch slices take no negative step: `key` with each such slice replaced by the
    positive-step slice over the same elements, and the result axes to flip afterwards."""
    explicit = sum(k is not None and k is not Ellipsis for k in key)
    out, flips, axis, out_axis = [], [], 0, 0
    for k in key:
        if k is Ellipsis:
            axis, out_axis = axis + len(shape) - explicit, out_axis + len(shape) - explicit
        elif k is None:
            out_axis += 1
        elif isinstance(k, slice):
            if k.step is not None and k.step < 0:
                picked = range(*k.indices(shape[axis]))
                k = slice(picked[-1], picked[0] + 1, -k.step) if picked else slice(0, 0)
                flips.append(out_axis)
            axis, out_axis = axis + 1, out_axis + 1
        else:  # an integer drops its axis
            axis += 1
        out.append(k)
    return tuple(out), flips


def create(device: str | None = None) -> Backend:
    target = torch.device(device or "cpu")
    if target.type == "cuda" and not torch.cuda.is_available():
        build = "has no CUDA (a CPU build)" if torch.version.cuda is None else "sees no CUDA GPU"
        raise RuntimeError(f"device {device!r}: this torch {torch.__version__} {build}; use AUTOGRAD_DEVICE=cpu")
    return TorchBackend(_Namespace(), torch.Tensor, target)


def _fusable(param, grad, exp_avg, exp_avg_sq) -> bool:
    """Whether torch's fused Adam kernel takes these: real floating point of one dtype and
    device, the updated tensors contiguous."""
    return (
        param.is_floating_point()
        and all(t.dtype == param.dtype and t.device == param.device for t in (grad, exp_avg, exp_avg_sq))
        and all(t.is_contiguous() for t in (param, exp_avg, exp_avg_sq))
    )


# --- special functions: torch.special's ------------------------------------------------------
def _register_special_kernels() -> None:
    for name in ("erfc", "erfinv", "ndtri", "log_ndtr", "gammaln", "i0", "i0e", "i1", "i1e"):
        function = getattr(torch.special, name)
        getattr(special, name).kernel("torch")(lambda ns, x, function=function: function(x))
    special.polygamma.kernel("torch")(
        lambda ns, x, n: torch.special.digamma(x) if n == 0 else torch.special.polygamma(n, x)
    )
    primitives = {**{name: getattr(special, name) for name in _TORCH_SPECIAL}, **special.POLYNOMIALS}
    for name, primitive in primitives.items():
        theirs = getattr(torch.special, _TORCH_SPECIAL.get(name, name))
        primitive.kernel("torch")(lambda ns, *args, f=theirs: f(*args))


_TORCH_SPECIAL = {  # scipy's name (ours): torch.special's
    **{name: name for name in ("erfcx", "zeta", "gammainc", "gammaincc", "airy_ai", "spherical_bessel_j0")},
    **{f"{kind}{order}": f"bessel_{kind}{order}" for kind in "jy" for order in "01"},
    **{f"k{order}": f"modified_bessel_k{order}" for order in "01"},
    **{f"k{order}e": f"scaled_modified_bessel_k{order}" for order in "01"},
}


_register_special_kernels()
