"""Learning-rate schedules: each sets ``group["lr"]`` from the epoch (or step) count."""

from __future__ import annotations

from collections.abc import Callable

from optim.optimizer import Optimizer


class LambdaLR:
    """``lr = initial_lr * lr_lambda(count)``, the count advanced by every ``step()``.

    >>> import nn, optim
    >>> opt = optim.SGD(nn.Linear(1, 1).parameters(), lr=1.0)
    >>> sched = optim.lr_scheduler.LambdaLR(opt, lambda n: 0.5 ** n)
    >>> sched.step(); opt.param_groups[0]["lr"]
    0.5
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float]) -> None:
        self.optimizer, self.lr_lambda, self.last_epoch = optimizer, lr_lambda, 0
        self.base_lrs = [g["lr"] for g in optimizer.param_groups]
        self._apply()

    def _apply(self) -> None:
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = base * self.lr_lambda(self.last_epoch)

    def step(self) -> None:
        self.last_epoch += 1
        self._apply()

    def get_last_lr(self) -> list[float]:
        return [g["lr"] for g in self.optimizer.param_groups]


class StepLR(LambdaLR):
    """Multiply the learning rate by `gamma` every `step_size` steps."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1) -> None:
        super().__init__(optimizer, lambda n: gamma ** (n // step_size))
