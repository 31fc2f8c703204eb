"""Neural-network building blocks with PyTorch's names: Module, Parameter, layers,
`nn.functional`, `nn.init`, and `save`/`load` of state dicts."""

from nn import functional, init, utils
from nn.activation import (
    CELU,
    ELU,
    GLU,
    SELU,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    ReLU6,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softsign,
)
from nn.conv_layers import AvgPool1d, AvgPool2d, Conv1d, Conv2d, ConvTranspose2d, MaxPool1d, MaxPool2d
from nn.layers import (
    GELU,
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    ConstantPad2d,
    Dropout,
    Dropout1d,
    Dropout2d,
    Embedding,
    Flatten,
    Identity,
    LayerNorm,
    Linear,
    ModuleList,
    ReflectionPad2d,
    ReLU,
    ReplicationPad2d,
    Sequential,
    Sigmoid,
    Tanh,
    Unflatten,
    Upsample,
    ZeroPad2d,
)
from nn.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from nn.module import Module, Parameter
from nn.norm_layers import BatchNorm1d, BatchNorm2d, GroupNorm
from nn.recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from nn.serialization import load, save
from nn.transformer import MultiheadAttention, TransformerEncoder, TransformerEncoderLayer

__all__ = [
    "GELU", "Dropout", "Embedding", "Flatten", "LayerNorm", "Linear", "Module", "ModuleList", "Parameter",
    "ReLU", "Sequential", "Sigmoid", "Tanh", "functional", "init", "load", "save", "utils",
    "AvgPool1d", "AvgPool2d", "BatchNorm1d", "BatchNorm2d", "Conv1d", "Conv2d", "ConvTranspose2d", "GroupNorm",
    "MaxPool1d", "MaxPool2d",
    "GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNCell",
    "CELU", "ELU", "GLU", "SELU", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid", "LogSoftmax",
    "Mish", "ReLU6", "SiLU", "Softmax", "Softmin", "Softplus", "Softsign",
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "HuberLoss", "KLDivLoss", "L1Loss", "MSELoss", "NLLLoss",
    "SmoothL1Loss",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "ConstantPad2d", "Dropout1d", "Dropout2d", "Identity", "ReflectionPad2d",
    "ReplicationPad2d", "Unflatten", "Upsample", "ZeroPad2d",
    "MultiheadAttention", "TransformerEncoder", "TransformerEncoderLayer",
]
