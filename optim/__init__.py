"""Optimizers with PyTorch's names, defaults and update order."""

from optim import lr_scheduler
from optim.adam import Adam, AdamW
from optim.optimizer import Optimizer
from optim.sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "lr_scheduler"]
