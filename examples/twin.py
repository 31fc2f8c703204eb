"""A PyTorch twin of an autograd_core model: the same layers, a copy of the same initial
weights, ``torch.optim.AdamW`` with the same settings (single-tensor path, foreach=False),
stepped on the same batches; `max_weight_diff` measures how far the two have drifted.

In float64 the two runs do the same arithmetic up to the last bits of each kernel (each
BLAS sums in its own order): after 3 MNIST epochs (1,290 steps) the weights agree to ~1e-13.
In float32 the same last-bit differences grow (Adam scales every coordinate's step to about
lr whatever the gradient's size, so a gradient that is mostly rounding noise still moves its
weight), and the twins end 0.03-0.13 apart after one epoch and 0.3-0.5 after ten, as do two
torch runs whose only difference is the order of the rows in each batch
(`examples/twin_control.py`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import nn

_TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def mirror(module: nn.Module, dtype: str) -> torch.nn.Module:
    """The torch.nn equivalent of `module` (Sequential, Linear, Embedding, LayerNorm, ReLU,
    Tanh, Flatten), with parameters of `dtype` named as ours are."""
    td = _TORCH_DTYPES[dtype]
    if isinstance(module, nn.Sequential):
        return torch.nn.Sequential(*(mirror(m, dtype) for m in module))
    if isinstance(module, nn.Linear):
        return torch.nn.Linear(module.in_features, module.out_features, bias=module.bias is not None, dtype=td)
    if isinstance(module, nn.Embedding):
        return torch.nn.Embedding(module.num_embeddings, module.embedding_dim, dtype=td)
    if isinstance(module, nn.LayerNorm):
        return torch.nn.LayerNorm(module.normalized_shape, eps=module.eps, dtype=td)
    simple = {nn.ReLU: torch.nn.ReLU, nn.Tanh: torch.nn.Tanh}
    if type(module) in simple:
        return simple[type(module)]()
    if isinstance(module, nn.Flatten):
        return torch.nn.Flatten(module.start_dim, module.end_dim)
    raise TypeError(f"no torch twin for {type(module).__name__}")


def host_state(module: nn.Module) -> dict[str, np.ndarray]:
    """name -> a numpy copy of each parameter."""
    return {name: t.numpy() for name, t in module.state_dict().items()}


class TorchTwin:
    """The torch model that follows ours step for step (cross-entropy loss, AdamW)."""

    def __init__(self, model: nn.Module, dtype: str, lr: float, weight_decay: float,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> None:
        self.dtype = dtype
        self.net = mirror(model, dtype)
        state = {k: torch.from_numpy(v.copy()) for k, v in host_state(model).items()}
        self.net.load_state_dict(state, strict=True)
        self.opt = torch.optim.AdamW(self.net.parameters(), lr=lr, betas=betas, eps=eps,
                                     weight_decay=weight_decay, foreach=False)
        if self.max_weight_diff(model) != 0.0:
            raise AssertionError("the twin does not start from the same weights")

    def step(self, x: np.ndarray, y: np.ndarray) -> float:
        """One optimizer step on the batch (x, y); returns the loss."""
        xt = torch.tensor(x, dtype=_TORCH_DTYPES[self.dtype])
        loss = torch.nn.functional.cross_entropy(self.net(xt), torch.tensor(y, dtype=torch.int64))
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
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

    def predict(self, x: np.ndarray) -> Any:
        with torch.no_grad():
            return self.net(torch.tensor(x, dtype=_TORCH_DTYPES[self.dtype])).numpy()
