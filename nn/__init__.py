"""Neural-network building blocks with PyTorch's names: Module, Parameter, layers,
`nn.functional`, `nn.init`, and `save`/`load` of state dicts."""

from nn import functional, init
from nn.layers import (
    GELU,
    Dropout,
    Embedding,
    Flatten,
    LayerNorm,
    Linear,
    ModuleList,
    ReLU,
    Sequential,
    Sigmoid,
    Tanh,
)
from nn.module import Module, Parameter
from nn.serialization import load, save

__all__ = [
    "GELU", "Dropout", "Embedding", "Flatten", "LayerNorm", "Linear", "Module", "ModuleList", "Parameter",
    "ReLU", "Sequential", "Sigmoid", "Tanh", "functional", "init", "load", "save",
]
