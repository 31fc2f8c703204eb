"""Learning-rate schedules with PyTorch's names, arguments and step-by-step arithmetic.

Each scheduler sets ``group["lr"]`` of its optimizer's groups. As in PyTorch, constructing
one performs the first step (``last_epoch`` goes from -1 to 0) and records each group's
starting rate as ``group["initial_lr"]``; every ``step()`` then computes the next rates from
the current ones by the same recursive formulas PyTorch uses, so the floats agree exactly.
"""

from __future__ import annotations

import copy
import math
import types
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from optim.optimizer import Optimizer

__all__ = [
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]


def _check_optimizer(optimizer: Any) -> Optimizer:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
    return optimizer


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list[Any]:
    """`value` for each parameter group: a list of one per group, or one value for all."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. {name} has {len(value)} "
                f"values, param_groups has {len(optimizer.param_groups)}."
            )
        return list(value)
    return [value] * len(optimizer.param_groups)


class LRScheduler:
    """Base class: subclasses implement `get_lr` (the next rates, from ``last_epoch`` and the
    current ``group["lr"]``) and may implement `_get_closed_form_lr` (the rates at
    ``last_epoch`` from ``base_lrs`` alone, used when a `SequentialLR` restarts them).

    `last_epoch` other than -1 resumes a schedule whose optimizer already holds
    ``initial_lr`` in every group.
    """

    _is_initial = False  # true during the step the constructor performs
    _not_state: tuple[str, ...] = ("optimizer",)  # attributes state_dict leaves out

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        self.optimizer = _check_optimizer(optimizer)
        groups = optimizer.param_groups
        if last_epoch == -1:
            for group in groups:
                group.setdefault("initial_lr", group["lr"])
        missing = [i for i, group in enumerate(groups) if "initial_lr" not in group]
        if missing:
            raise KeyError(
                f"param 'initial_lr' is not specified in param_groups{missing} when resuming a scheduler "
                "with last_epoch >= 0: load the optimizer's state dict first, or pass last_epoch=-1"
            )
        self.base_lrs: list[float] = [group["initial_lr"] for group in groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0  # steps taken, the constructor's included (SWALR reads it)
        self._is_initial = True
        try:
            self.step()
        finally:
            del self._is_initial  # back to the class's False

    def get_lr(self) -> list[float]:
        """The rate of each group at the (already advanced) ``last_epoch``."""
        raise NotImplementedError

    def _get_closed_form_lr(self) -> list[float]:
        return self.get_lr()

    def step(self) -> None:
        """Advance the schedule by one epoch (or batch) and set the groups' rates."""
        self._step_count += 1
        self.last_epoch += 1
        self._set_lrs(self.get_lr())

    def _restart(self) -> None:
        """Go back to epoch 0, with the closed form's rates (a `SequentialLR` milestone)."""
        self.last_epoch = 0
        self._set_lrs(self._get_closed_form_lr())

    def _set_lrs(self, values: list[float]) -> None:
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = self._current_lrs()

    def _current_lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        """The rates the last step set, one per parameter group."""
        return list(self._last_lr)

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer (a copy): load it into a scheduler built the same way."""
        return copy.deepcopy({k: v for k, v in self.__dict__.items() if k not in self._not_state})

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Continue from `state_dict` (from `state_dict()` of a scheduler built the same way)."""
        self.__dict__.update(copy.deepcopy(state_dict))


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)`` (one function, or a list of one per group).

    Functions are not saved in `state_dict`; callable objects save their ``__dict__``.

    >>> import nn, optim
    >>> opt = optim.SGD(nn.Linear(1, 1).parameters(), lr=1.0)
    >>> sched = optim.lr_scheduler.LambdaLR(opt, lambda n: 0.5 ** n)
    >>> sched.step(); opt.param_groups[0]["lr"]
    0.5
    """

    _not_state = ("optimizer", "lr_lambdas")

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.lr_lambdas = _per_group("lr_lambda", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict[str, Any]:
        saved = [None if isinstance(fn, types.FunctionType) else dict(vars(fn)) for fn in self.lr_lambdas]
        return {**super().state_dict(), "lr_lambdas": copy.deepcopy(saved)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        for fn, saved in zip(self.lr_lambdas, state_dict.pop("lr_lambdas")):
            if saved is not None:
                vars(fn).update(saved)
        super().load_state_dict(state_dict)


class MultiplicativeLR(LambdaLR):
    """Multiply the rate by ``lr_lambda(epoch)`` at every epoch (one function, or one per group).

    >>> import nn, optim
    >>> opt = optim.SGD(nn.Linear(1, 1).parameters(), lr=1.0)
    >>> sched = optim.lr_scheduler.MultiplicativeLR(opt, lambda n: 0.5)
    >>> sched.step(); sched.step(); opt.param_groups[0]["lr"]
    0.25
    """

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current_lrs()
        return [lr * fn(self.last_epoch) for fn, lr in zip(self.lr_lambdas, self._current_lrs())]


class StepLR(LRScheduler):
    """Multiply the rate by `gamma` every `step_size` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the rate by `gamma` at each epoch of `milestones` (once per occurrence).

    >>> import nn, optim
    >>> opt = optim.SGD(nn.Linear(1, 1).parameters(), lr=1.0)
    >>> sched = optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> rates = []
    >>> for _ in range(4):
    ...     sched.step(); rates.append(sched.get_last_lr()[0])
    >>> rates
    [0.5, 0.5, 0.25, 0.25]
    """

    def __init__(
        self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.milestones, self.gamma = Counter(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return self._current_lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma**passed for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """Scale the rate by `factor` for the first `total_iters` epochs, then restore it.

    >>> import nn, optim
    >>> opt = optim.SGD(nn.Linear(1, 1).parameters(), lr=1.0)
    >>> sched = optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> rates = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     sched.step(); rates.append(sched.get_last_lr()[0])
    >>> rates
    [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(
        self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError(f"Constant multiplicative factor expected to be between 0 and 1, got {factor}")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._current_lrs()]
        if self.last_epoch != self.total_iters:
            return self._current_lrs()
        return [lr * (1.0 / self.factor) for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        done = self.last_epoch >= self.total_iters
        return [base * (self.factor + done * (1 - self.factor)) for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the rate to zero over `total_iters` epochs as ``(1 - epoch / total_iters) ** power``.

    >>> import nn, optim
    >>> opt = optim.SGD(nn.Linear(1, 1).parameters(), lr=1.0)
    >>> sched = optim.lr_scheduler.PolynomialLR(opt, total_iters=4)
    >>> sched.step(); sched.get_last_lr()
    [0.75]
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        decay_factor = (
            (1.0 - self.last_epoch / self.total_iters) / (1.0 - (self.last_epoch - 1) / self.total_iters)
        ) ** self.power
        return [lr * decay_factor for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        left = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * left**self.power for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the rate by `gamma` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the rate by a factor going linearly from `start_factor` to `end_factor` over
    `total_iters` epochs, then constant."""

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor}")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._current_lrs()]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        change = self.end_factor - self.start_factor
        factor = 1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change)
        return [lr * factor for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (self.start_factor + (self.end_factor - self.start_factor) * done) for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Anneal the rate from its initial value to `eta_min` along a half cosine over `T_max`
    epochs (then back up, periodically), by PyTorch's recursive form:
    ``lr_t = eta_min + (lr_{t-1} - eta_min) * (1 + cos(pi t / T_max)) / (1 + cos(pi (t-1) / T_max))``."""

    def __init__(
        self,
        optimizer: Optimizer,
        T_max: int,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current_lrs()
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:  # the bottom: 1 + cos(pi) = 0
            return [
                lr + (base - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                for lr, base in zip(self._current_lrs(), self.base_lrs)
            ]
        ratio = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / (
            1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max)
        )
        return [ratio * (lr - self.eta_min) + self.eta_min for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [
            self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
            for base in self.base_lrs
        ]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the initial rate to `eta_min` over `T_0` epochs, then restart,
    each period `T_mult` times the last (SGDR). ``step(epoch)`` accepts a fractional epoch
    (``epoch + i / iters`` within an epoch), as in PyTorch.

    >>> import nn, optim
    >>> opt = optim.SGD(nn.Linear(1, 1).parameters(), lr=1.0)
    >>> sched = optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> rates = []
    >>> for _ in range(4):
    ...     sched.step(); rates.append(round(sched.get_last_lr()[0], 6))
    >>> rates
    [0.5, 1.0, 0.5, 1.0]
    """

    def __init__(
        self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min).__name__}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        cosine = 1 + math.cos(math.pi * self.T_cur / self.T_i)
        return [self.eta_min + (base - self.eta_min) * cosine / 2 for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:  # type: ignore[override]
        """Advance one epoch, or go to `epoch` (a number of epochs, fractional or not)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur, self.T_i = self.T_cur % self.T_i, self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0 and self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        elif epoch >= self.T_0:
            n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult ** (n)
        else:
            self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        self._set_lrs(self.get_lr())


class CyclicLR(LRScheduler):
    """Cycle the rate between `base_lr` and `max_lr` (numbers, or one per group), up over
    `step_size_up` steps and down over `step_size_down` (default: the same), stepped once per
    batch. The amplitude is scaled per cycle: constant (``"triangular"``), halved each cycle
    (``"triangular2"``), or ``gamma ** iterations`` (``"exp_range"``); or by `scale_fn` of
    the cycle or the iteration (`scale_mode`). With `cycle_momentum` the momentum (or
    ``betas[0]``) moves the opposite way between `max_momentum` and `base_momentum`.

    >>> import nn, optim
    >>> opt = optim.SGD(nn.Linear(1, 1).parameters(), lr=1.0, momentum=0.9)
    >>> sched = optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> rates = [sched.get_last_lr()[0]]
    >>> for _ in range(4):
    ...     sched.step(); rates.append(round(sched.get_last_lr()[0], 6))
    >>> rates
    [0.1, 0.3, 0.5, 0.3, 0.1]
    """

    _not_state = ("optimizer", "_scale_fn_ref", "_scale_fn_custom")

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.8,
        max_momentum: float | list[float] = 0.9,
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer(optimizer)
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(
                f"mode is invalid and scale_fn is None: mode {mode!r} is none of 'triangular', "
                "'triangular2', 'exp_range'; pass one of them or a scale_fn"
            )
        self.mode, self.gamma, self.scale_mode = mode, gamma, scale_mode
        self._scale_fn_custom = scale_fn
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for high, low, group in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                    _set_momentum(group, high, self.use_beta1)
                    group.update(max_momentum=high, base_momentum=low)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        self._scale_fn_ref, self.scale_mode = {
            "triangular": (_triangular_scale, "cycle"),
            "triangular2": (_triangular2_scale, "cycle"),
            "exp_range": (_ExpRangeScale(self.gamma), "iterations"),
        }[self.mode]

    def scale_fn(self, x: float) -> float:
        return (self._scale_fn_custom or self._scale_fn_ref)(x)

    def get_lr(self) -> list[float]:
        """The rates at this step; also sets the groups' momentum when cycling it."""
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        scale_factor = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (high - base) * scale_factor * scale for base, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _set_momentum(group, high - (high - low) * scale_factor * scale, self.use_beta1)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        fn = self._scale_fn_custom
        saved = None if fn is None or isinstance(fn, types.FunctionType) else copy.deepcopy(dict(vars(fn)))
        return {**super().state_dict(), "_scale_fn_custom": saved}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        saved = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if saved is not None:
            vars(self._scale_fn_custom).update(saved)
        self._init_scale_fn()


def _triangular_scale(x: float) -> float:
    return 1.0


def _triangular2_scale(x: float) -> float:
    return 1 / (2.0 ** (x - 1))


class _ExpRangeScale:
    """``gamma ** x`` (a class, not a closure: a scheduler's state is deep-copied)."""

    def __init__(self, gamma: float) -> None:
        self.gamma = gamma

    def __call__(self, x: float) -> float:
        return self.gamma**x


def _set_momentum(group: dict[str, Any], momentum: float, use_beta1: bool) -> None:
    """Set a group's momentum: ``betas[0]`` for the Adam family, ``momentum`` otherwise."""
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _anneal_cos(start: float, end: float, pct: float) -> float:
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _anneal_linear(start: float, end: float, pct: float) -> float:
    return (end - start) * pct + start


class OneCycleLR(LRScheduler):
    """The 1cycle policy, stepped once per batch: the rate rises from ``max_lr / div_factor``
    to `max_lr` over the first `pct_start` of `total_steps` (or ``epochs * steps_per_epoch``),
    then falls to ``initial_lr / final_div_factor``; with `cycle_momentum` the momentum (SGD,
    RMSprop) or ``betas[0]`` (Adam, AdamW) moves the opposite way between `max_momentum` and
    `base_momentum`. `three_phase` rises and falls symmetrically, then anneals to the minimum.
    Stepping more than `total_steps` times raises ValueError.
    """

    _ANNEAL = {"cos": _anneal_cos, "linear": _anneal_linear}

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer(optimizer)
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in self._ANNEAL:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.anneal_strategy = anneal_strategy
        # (end step, start lr, end lr, start momentum, end momentum): keys of each group
        rise = (float(pct_start * self.total_steps) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum")
        last = self.total_steps - 1
        if three_phase:
            self._schedule_phases = [
                rise,
                (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                (last, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [rise, (last, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        if last_epoch == -1:
            for group, lr in zip(optimizer.param_groups, _per_group("max_lr", optimizer, max_lr)):
                group.update(initial_lr=lr / div_factor, max_lr=lr)
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            if last_epoch == -1:
                for group, high, low in zip(
                    optimizer.param_groups,
                    _per_group("max_momentum", optimizer, max_momentum),
                    _per_group("base_momentum", optimizer, base_momentum),
                ):
                    _set_momentum(group, high, self.use_beta1)
                    group.update(max_momentum=high, base_momentum=low)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The rates at this step; also sets the groups' momentum when cycling it."""
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is {self.total_steps}")
        anneal = self._ANNEAL[self.anneal_strategy]
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr0, lr1, m0, m1) in enumerate(self._schedule_phases):
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(anneal(group[lr0], group[lr1], pct))
                    if self.cycle_momentum:
                        _set_momentum(group, anneal(group[m0], group[m1], pct), self.use_beta1)
                    break
                start = end
        return lrs


def _total_steps(total_steps: int | None, epochs: int | None, steps_per_epoch: int | None) -> int:
    """OneCycleLR's cycle length: `total_steps`, else ``epochs * steps_per_epoch``."""
    if total_steps is not None:
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is None or steps_per_epoch is None:
        raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
    for name, value in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
        if not isinstance(value, int) or value <= 0:
            raise ValueError(f"Expected positive integer {name}, but got {value}")
    return epochs * steps_per_epoch


class _OfSchedulers(LRScheduler):
    """A schedule that drives others (`_schedulers`): its state dict holds theirs."""

    _not_state = ("optimizer", "_schedulers")
    _schedulers: list[LRScheduler]

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "_schedulers": [s.state_dict() for s in self._schedulers]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        for scheduler, saved in zip(self._schedulers, state_dict.pop("_schedulers")):
            scheduler.load_state_dict(saved)
        super().load_state_dict(state_dict)


class SequentialLR(_OfSchedulers):
    """Run `schedulers` one after another, switching at the epochs in `milestones`; each
    scheduler restarts (from its closed form at epoch 0) when its turn comes.

    >>> import nn, optim
    >>> opt = optim.SGD(nn.Linear(1, 1).parameters(), lr=1.0)
    >>> warmup = optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> decay = optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> sched = optim.lr_scheduler.SequentialLR(opt, [warmup, decay], milestones=[2])
    >>> rates = [sched.get_last_lr()[0]]
    >>> for _ in range(4):
    ...     sched.step(); rates.append(sched.get_last_lr()[0])
    >>> rates
    [0.5, 0.75, 1.0, 0.5, 0.25]
    """

    def __init__(
        self, optimizer: Optimizer, schedulers: Sequence[LRScheduler], milestones: Sequence[int], last_epoch: int = -1
    ) -> None:
        if not schedulers:
            raise ValueError("SequentialLR expects at least one scheduler, but got no scheduler.")
        for i, scheduler in enumerate(schedulers):
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(
                    f"SequentialLR does not support ReduceLROnPlateau (scheduler {i}): its step takes a metric"
                )
            if scheduler.optimizer is not optimizer:
                raise ValueError(
                    f"SequentialLR expects all schedulers to belong to the same optimizer, but "
                    f"scheduler {i} ({type(scheduler).__name__}) has another one"
                )
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                f"SequentialLR expects one milestone fewer than schedulers, got {len(schedulers)} "
                f"schedulers and {len(milestones)} milestones"
            )
        self.optimizer, self._schedulers, self._milestones = optimizer, list(schedulers), list(milestones)
        self.last_epoch = last_epoch + 1
        for group in optimizer.param_groups:  # undo the schedulers' initial steps...
            group["lr"] = group["initial_lr"]
        self._undo_initial_steps(self)
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()  # ...and redo the first one's only
        self._last_lr = first.get_last_lr()

    @staticmethod
    def _undo_initial_steps(scheduler: LRScheduler) -> None:
        for inner in getattr(scheduler, "_schedulers", ()):
            if hasattr(inner, "_schedulers"):
                SequentialLR._undo_initial_steps(inner)
            else:
                inner.last_epoch -= 1

    def step(self) -> None:
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            scheduler._restart()
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_OfSchedulers):
    """Step every one of `schedulers` (of one optimizer) at each step, in order: their
    factors compose (a warmup times a decay, say).

    >>> import nn, optim
    >>> opt = optim.SGD(nn.Linear(1, 1).parameters(), lr=1.0)
    >>> m = optim.lr_scheduler
    >>> sched = m.ChainedScheduler([m.ConstantLR(opt, factor=0.5, total_iters=2), m.ExponentialLR(opt, gamma=0.9)])
    >>> rates = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     sched.step(); rates.append(round(sched.get_last_lr()[0], 6))
    >>> rates
    [0.5, 0.45, 0.81, 0.729]
    """

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None) -> None:
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"ChainedScheduler at index {i} should have `optimizer` as its attribute.")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(
                    "ChainedScheduler does not support `ReduceLROnPlateau` scheduler as it requires additional "
                    f"kwargs to be specified when calling `step`, but got one at index {i} in the given schedulers "
                    "sequence."
                )
            if scheduler.optimizer is not optimizer:
                raise ValueError(
                    "ChainedScheduler expects all schedulers to belong to the same optimizer, but got scheduler "
                    f"{type(scheduler).__name__} at index {i} with another one"
                )
        self._schedulers, self.optimizer = list(schedulers), optimizer
        self._last_lr = self._current_lrs()

    def step(self) -> None:
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = self._current_lrs()


class ReduceLROnPlateau(LRScheduler):
    """Multiply the rate by `factor` (not below `min_lr`) once the metric given to
    ``step(metrics)`` has not improved for more than `patience` epochs, then wait `cooldown`
    epochs. Improving means beating the best value by `threshold` (relative or absolute, per
    `threshold_mode`) in direction `mode`; a reduction smaller than `eps` is skipped.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: float | list[float] = 0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be < 1.0, got {factor}")
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}")
        self.optimizer = _check_optimizer(optimizer)
        self.default_min_lr = None if isinstance(min_lr, (list, tuple)) else min_lr
        self.min_lrs = _per_group("min_lr", optimizer, min_lr)
        self.factor, self.patience, self.cooldown, self.eps = factor, patience, cooldown, eps
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.last_epoch = 0
        self._last_lr = self._current_lrs()
        self.best, self.cooldown_counter, self.num_bad_epochs = self.mode_worse, 0, 0

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        """Whether metric `a` improves on `best` by more than the threshold."""
        if self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold) if self.mode == "min" else a > best * (self.threshold + 1.0)
        return a < best - self.threshold if self.mode == "min" else a > best + self.threshold

    def step(self, metrics: float) -> None:  # type: ignore[override]
        """Record this epoch's metric (a number or 0-d tensor); reduce the rates if it has stalled."""
        current = float(metrics)
        self.last_epoch += 1
        if self._is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = self._current_lrs()

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The optimizer has {len(groups)} parameter groups, min_lr was given for "
                    f"{len(self.min_lrs)} (a group was added): set `min_lrs` to one per group"
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                group["lr"] = new
