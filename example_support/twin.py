"""A PyTorch twin of an autograd_core model: the same layers, a copy of the same initial
weights, ``torch.optim.AdamW`` with the same settings (single-tensor path, foreach=False),
stepped on the same batches; `max_weight_diff` measures how far the two have drifted.

In float64 the two runs do the same arithmetic up to the last bits of each kernel (each
BLAS sums in its own order): after 3 MNIST epochs (1,290 steps) the weights agree to ~1e-13.
In float32 the same last-bit differences grow (Adam scales every coordinate's step to about
lr whatever the gradient's size, so a gradient that is mostly rounding noise still moves its
weight), and the twins end 0.03-0.13 apart after one epoch and 0.3-0.5 after ten, as do two
torch runs whose only difference is the order of the rows in each batch
(`tools/twin_control.py`). It needs torch, which the examples import only for ``--torch-twin``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import nn
from example_support.mnist import forward_with_mask

_TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def mirror(module: nn.Module, dtype: str) -> torch.nn.Module:
    """The torch.nn equivalent of `module` (Sequential, Linear, Embedding, LayerNorm, Conv2d,
    BatchNorm2d (as `TwoPassBatchNorm2d`), MaxPool2d, Dropout, ReLU, SiLU, Tanh, Flatten),
    with parameters and buffers of `dtype` named as ours are."""
    td = _TORCH_DTYPES[dtype]
    if isinstance(module, nn.Sequential):
        return torch.nn.Sequential(*(mirror(m, dtype) for m in module))
    if isinstance(module, nn.Linear):
        return torch.nn.Linear(module.in_features, module.out_features, bias=module.bias is not None, dtype=td)
    if isinstance(module, nn.Embedding):
        return torch.nn.Embedding(module.num_embeddings, module.embedding_dim, dtype=td)
    if isinstance(module, nn.LayerNorm):
        return torch.nn.LayerNorm(module.normalized_shape, eps=module.eps, dtype=td)
    if isinstance(module, nn.Conv2d):
        return torch.nn.Conv2d(
            module.in_channels,
            module.out_channels,
            module.kernel_size,
            module.stride,
            module.padding,
            module.dilation,
            module.groups,
            module.bias is not None,
            module.padding_mode,
            dtype=td,
        )
    if isinstance(module, nn.BatchNorm2d):
        return TwoPassBatchNorm2d(
            module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats, dtype=td
        )
    if isinstance(module, nn.MaxPool2d):
        return torch.nn.MaxPool2d(**module.settings)
    if isinstance(module, nn.Dropout):
        return torch.nn.Dropout(module.p)
    simple = {nn.ReLU: torch.nn.ReLU, nn.SiLU: torch.nn.SiLU, nn.Tanh: torch.nn.Tanh}
    if type(module) in simple:
        return simple[type(module)]()
    if isinstance(module, nn.Flatten):
        return torch.nn.Flatten(module.start_dim, module.end_dim)
    raise TypeError(f"no torch twin for {type(module).__name__}")


class TwoPassBatchNorm2d(torch.nn.BatchNorm2d):
    """`torch.nn.BatchNorm2d` whose training-mode statistics come from torch's reductions in
    two passes (the mean, then the mean of squared deviations), as ours do.

    torch's fused CPU kernel gets float64 batch statistics only to about 1e-12 relative (on
    the first layer's MNIST features: 1/std off by 4e-13, against 2e-15 for the two passes,
    both measured against long double), and AdamW turns such an error in a gradient that is
    smaller than its eps into a weight difference of lr/eps times it every step: a twin on
    the fused kernel ends ~1e-10 from ours after 100 steps, one on this ~3e-14. Evaluation,
    and ``momentum=None``, use torch's kernel."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not (self.training and self.track_running_stats and self.momentum is not None):
            return super().forward(x)
        axes, channel = (0, 2, 3), (-1, 1, 1)
        mean = x.mean(dim=axes, keepdim=True)
        centred = x - mean
        var = (centred * centred).mean(dim=axes, keepdim=True)
        count = x.numel() // x.shape[1]
        with torch.no_grad():
            self.num_batches_tracked += 1
            self.running_mean.copy_(self.running_mean * (1 - self.momentum) + mean.flatten() * self.momentum)
            unbiased = var.flatten() * (count / (count - 1))
            self.running_var.copy_(self.running_var * (1 - self.momentum) + unbiased * self.momentum)
        out = centred / torch.sqrt(var + self.eps)
        return out if not self.affine else out * self.weight.view(channel) + self.bias.view(channel)


def host_state(module: nn.Module) -> dict[str, np.ndarray]:
    """name -> a numpy copy of each parameter."""
    return {name: t.numpy() for name, t in module.state_dict().items()}


class TorchTwin:
    """The torch model that follows ours step for step (cross-entropy loss, AdamW)."""

    def __init__(
        self,
        model: nn.Module,
        dtype: str,
        lr: float,
        weight_decay: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        *,
        label_smoothing: float = 0.0,
        max_norm: float | None = None,
        schedule: Callable[[torch.optim.Optimizer], Any] | None = None,
    ) -> None:
        """`label_smoothing` goes to the loss; `max_norm` clips the gradients' total norm
        before each step; `schedule(optimizer)` makes a learning-rate scheduler, stepped after
        each optimizer step."""
        self.dtype = dtype
        self.net = mirror(model, dtype)
        state = {k: torch.from_numpy(v.copy()) for k, v in host_state(model).items()}
        self.net.load_state_dict(state, strict=True)
        self.opt = torch.optim.AdamW(
            self.net.parameters(), lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=False
        )
        self.label_smoothing, self.max_norm = label_smoothing, max_norm
        self.sched = schedule(self.opt) if schedule is not None else None
        if self.max_weight_diff(model) != 0.0:
            raise AssertionError("the twin does not start from the same weights")

    def step(self, x: np.ndarray, y: np.ndarray, keep: np.ndarray | None = None) -> float:
        """One optimizer step on the batch (x, y); returns the loss. With `keep` (the dropout
        mask ours drew), the Dropout layer is replaced by a multiplication with it."""
        xt = torch.tensor(x, dtype=_TORCH_DTYPES[self.dtype])
        out = (
            self.net(xt) if keep is None else forward_with_mask(self.net, xt, torch.from_numpy(keep), torch.nn.Dropout)
        )
        loss = torch.nn.functional.cross_entropy(
            out, torch.tensor(y, dtype=torch.int64), label_smoothing=self.label_smoothing
        )
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        if self.max_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.max_norm)
        self.opt.step()
        if self.sched is not None:
            self.sched.step()
        return loss.item()

    def set_lr(self, lr: float) -> None:
        for group in self.opt.param_groups:
            group["lr"] = lr

    def weight_diffs(self, model: nn.Module) -> dict[str, float]:
        """Parameter name -> the largest absolute difference between ours and the twin's."""
        theirs = {k: v.detach().numpy() for k, v in self.net.state_dict().items()}
        ours = host_state(model)
        if theirs.keys() != ours.keys():
            raise KeyError(f"parameter names differ: {sorted(ours)} vs {sorted(theirs)}")
        return {k: float(np.max(np.abs(ours[k].astype(np.float64) - theirs[k].astype(np.float64)))) for k in ours}

    def max_weight_diff(self, model: nn.Module) -> float:
        """The largest absolute difference between any weight of ours and the twin's."""
        return max(self.weight_diffs(model).values())

    def predict(self, x: np.ndarray, batch_size: int | None = None) -> Any:
        """The twin's outputs for the rows of `x` in evaluation mode (batch norm on its running
        statistics), `batch_size` rows at a time (default: all at once)."""
        chunks = [x] if batch_size is None else [x[i : i + batch_size] for i in range(0, len(x), batch_size)]
        self.net.eval()
        try:
            with torch.no_grad():
                return np.concatenate(
                    [self.net(torch.tensor(c, dtype=_TORCH_DTYPES[self.dtype])).numpy() for c in chunks]
                )
        finally:
            self.net.train()
