"""Optimizers with PyTorch's names, defaults and update order."""

from optim import lr_scheduler
from optim.adagrad import Adagrad
from optim.adam import Adam, AdamW
from optim.optimizer import Optimizer
from optim.rmsprop import RMSprop
from optim.sgd import SGD

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
