"""torch, through array-api-compat's namespace; CPU or CUDA (AUTOGRAD_DEVICE=cuda)."""

from __future__ import annotations

import math

import array_api_compat.torch as xp
import torch

from backends.base import Backend


class TorchBackend(Backend):
    name = "torch"
    device_kinds = ("cpu", "cuda")

    def asarray(self, host, dtype=None):
        return torch.tensor(host, dtype=dtype, device=self.device)

    def to_numpy(self, x):
        return x.detach().cpu().numpy()

    def synchronize(self, *arrays):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def index_add(self, shape, axis, index, values):
        out = torch.zeros(shape, dtype=values.dtype, device=values.device)
        return out.index_add_(axis, index, values)

    def erf(self, x):
        return torch.special.erf(x)

    def adam_update(self, param, grad, exp_avg, exp_avg_sq, *, step, lr, beta1, beta2, eps,
                    weight_decay, decoupled):
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


def create(device: str | None = None) -> Backend:
    return TorchBackend(xp, torch.Tensor, torch.device(device or "cpu"))
