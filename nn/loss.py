"""Loss modules with PyTorch's names and constructor arguments; each calls its function in
`nn.functional` with the settings given at construction. PyTorch's deprecated `size_average`
and `reduce` keep their places in the signatures but must be left None."""

from __future__ import annotations

from typing import Any

import autograd_core as ag
from autograd_core.autodiff.tensor import Tensor
from nn import functional as F
from nn.module import Module


class _Loss(Module):
    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__()
        F._no_legacy(type(self).__name__, size_average, reduce)
        self.reduction = reduction


def _as_tensor(value: Any) -> Tensor | None:
    return value if value is None or isinstance(value, Tensor) else ag.asarray(value)


class _WeightedLoss(_Loss):
    """A loss with an optional per-class (or per-element) `weight`, a buffer as in PyTorch (so
    it is in the state dict and moves with ``.to()``)."""

    def __init__(
        self, weight: Any = None, size_average: Any = None, reduce: Any = None, reduction: str = "mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", _as_tensor(weight))


class CrossEntropyLoss(_WeightedLoss):
    """`F.cross_entropy` of logits against class indices or class probabilities.

    >>> import autograd_core as ag, nn
    >>> round(nn.CrossEntropyLoss(label_smoothing=0.1)(ag.zeros((1, 2)), ag.asarray([0])).item(), 4)
    0.6931
    """

    def __init__(
        self,
        weight: Any = None,
        size_average: Any = None,
        ignore_index: int = -100,
        reduce: Any = None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.cross_entropy(
            input,
            target,
            self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class NLLLoss(_WeightedLoss):
    def __init__(
        self,
        weight: Any = None,
        size_average: Any = None,
        ignore_index: int = -100,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class BCELoss(_WeightedLoss):
    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    def __init__(
        self,
        weight: Any = None,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
        pos_weight: Any = None,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.register_buffer("pos_weight", _as_tensor(pos_weight))

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, reduction=self.reduction, pos_weight=self.pos_weight
        )


class MSELoss(_Loss):
    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(
        self, size_average: Any = None, reduce: Any = None, reduction: str = "mean", beta: float = 1.0
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    def __init__(
        self, size_average: Any = None, reduce: Any = None, reduction: str = "mean", log_target: bool = False
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
