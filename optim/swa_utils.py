"""Stochastic weight averaging and exponential moving averages of a model, as
``torch.optim.swa_utils``: `AveragedModel`, `SWALR`, `update_bn` and the averaging functions."""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor
from nn.module import Module
from nn.norm_layers import _BatchNorm
from optim.lr_scheduler import LRScheduler, _per_group
from optim.optimizer import Optimizer, float32, lerp

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]

AvgFn = Callable[[Tensor, Tensor, Any], Tensor]
MultiAvgFn = Callable[[Sequence[Tensor], Sequence[Tensor], Any], None]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """An in-place exponential moving average of lists of tensors: ``ema = lerp(ema, p, 1 - decay)``."""
    _check_decay(decay)

    @ag.no_grad()
    def ema_update(ema_params: Sequence[Tensor], current_params: Sequence[Tensor], _: Any) -> None:
        for ema, current in zip(ema_params, current_params):
            ema.copy_(_lerp_or_sum(ema, current, 1 - decay, decay))

    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """An in-place running mean of lists of tensors: ``avg = lerp(avg, p, 1 / (n + 1))``, the
    weight rounded to float32 as PyTorch's is (``1 / (n + 1)`` of an integer tensor `n`)."""

    @ag.no_grad()
    def swa_update(averaged_params: Sequence[Tensor], current_params: Sequence[Tensor], num_averaged: Any) -> None:
        weight = float32(1 / (int(num_averaged) + 1))
        for averaged, current in zip(averaged_params, current_params):
            averaged.copy_(_lerp_or_sum(averaged, current, weight, None))

    return swa_update


def _lerp_or_sum(start: Tensor, end: Tensor, weight: float, decay: float | None) -> Tensor:
    """PyTorch's update of one averaged tensor: a lerp for floating tensors; otherwise (integer
    buffers) ``start * decay + end * weight`` (EMA) or ``start + (end - start) * weight`` (SWA)."""
    if ag.isdtype(start.dtype, "real floating") or ag.isdtype(start.dtype, "complex floating"):
        return lerp(start, end, weight)
    if decay is not None:
        return start * decay + end * weight
    return start + (end - start) * weight


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """The exponential moving average of one tensor: ``decay * ema + (1 - decay) * p``."""
    _check_decay(decay)

    @ag.no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """The running mean of one tensor: ``avg + (p - avg) / (n + 1)``."""

    @ag.no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of `model` whose parameters (and, with `use_buffers`, buffers) are an average
    of the weights `update_parameters` is given: the running mean by default (SWA), or what
    `avg_fn` (one tensor at a time, returning the new average) or `multi_avg_fn` (lists, in
    place) computes, such as `get_ema_multi_avg_fn`'s moving average. Without `use_buffers`
    the buffers are copied from the model. Calling it calls the copy.

    >>> import nn, optim
    >>> model = nn.Linear(2, 1)
    >>> swa = optim.swa_utils.AveragedModel(model)
    >>> swa.update_parameters(model); int(swa.n_averaged)
    1
    """

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: AvgFn | None = None,
        multi_avg_fn: MultiAvgFn | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise ValueError("AveragedModel takes one of avg_fn and multi_avg_fn, not both")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", ag.zeros((), dtype=ag.int64))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    @ag.no_grad()
    def update_parameters(self, model: Module) -> None:
        """Average `model`'s current weights in (the first call copies them)."""
        mine = self._averaged(self.module) if self.use_buffers else list(self.parameters())
        theirs = self._averaged(model) if self.use_buffers else list(model.parameters())
        theirs = [t.detach() for t in theirs][: len(mine)]
        mine = mine[: len(theirs)]
        n = self.n_averaged
        if int(n) == 0:
            for averaged, current in zip(mine, theirs):
                averaged.copy_(current)
        elif self.multi_avg_fn is not None:  # called once per dtype, as PyTorch groups the tensors
            for dtype in dict.fromkeys(t.dtype for t in mine):
                same = [i for i, t in enumerate(mine) if t.dtype == dtype]
                self.multi_avg_fn([mine[i] for i in same], [theirs[i] for i in same], n)
        else:
            avg_fn = self.avg_fn or get_swa_avg_fn()
            for averaged, current in zip(mine, theirs):
                averaged.copy_(avg_fn(averaged.detach(), current, n))
        if not self.use_buffers:
            for mine_buffer, their_buffer in zip(self.module.buffers(), model.buffers()):
                mine_buffer.copy_(their_buffer.detach())
        self.n_averaged.copy_(n + 1)

    @staticmethod
    def _averaged(module: Module) -> list[Tensor]:
        return list(itertools.chain(module.parameters(), module.buffers()))


@ag.no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of `model`'s batch norms over one pass of `loader`
    (batches: tensors, or lists/tuples whose first item is the input): each is reset and
    becomes the cumulative average over the batches (``momentum=None``); the model's
    training flag and the momenta are restored after. Nothing happens without batch norms.

    >>> import autograd_core as ag, nn, optim
    >>> model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    >>> optim.swa_utils.update_bn([ag.ones(4, 2)], model)
    >>> int(model[1].num_batches_tracked)
    1
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's rate to `swa_lr` (a number, or one per group) over `anneal_epochs`
    epochs, by a cosine or linearly (`anneal_strategy`), then hold it; PyTorch's recursive
    form, step for step.

    >>> import nn, optim
    >>> opt = optim.SGD(nn.Linear(1, 1).parameters(), lr=1.0)
    >>> sched = optim.swa_utils.SWALR(opt, swa_lr=0.5, anneal_epochs=2, anneal_strategy="linear")
    >>> rates = []
    >>> for _ in range(3):
    ...     sched.step(); rates.append(round(sched.get_last_lr()[0], 6))
    >>> rates
    [0.75, 0.5, 0.5]
    """

    _not_state = ("optimizer", "anneal_func")

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | list[float],
        anneal_epochs: int = 10,
        anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs)]

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        super().load_state_dict(state_dict)
        self._set_anneal_func(self._anneal_strategy)
