"""Optimizers with PyTorch's names, defaults and update order."""

from optim import lr_scheduler, swa_utils
from optim.adadelta import Adadelta
from optim.adagrad import Adagrad
from optim.adam import Adam, AdamW
from optim.adamax import Adamax
from optim.asgd import ASGD
from optim.lbfgs import LBFGS
from optim.nadam import NAdam
from optim.optimizer import Optimizer
from optim.radam import RAdam
from optim.rmsprop import RMSprop
from optim.rprop import Rprop
from optim.sgd import SGD

__all__ = [
    "ASGD",
    "LBFGS",
    "SGD",
    "Adadelta",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "lr_scheduler",
    "swa_utils",
]
