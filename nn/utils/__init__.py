"""``torch.nn.utils`` with PyTorch's names: gradient clipping, parameters as one vector,
`checkpoint_sequential`, padded and packed sequences (`rnn`), and parametrizations
(`parametrize`, `parametrizations`, `weight_norm`, `spectral_norm`)."""

from nn.utils import parametrizations, parametrize, rnn
from nn.utils.checkpoint import checkpoint_sequential
from nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "checkpoint_sequential",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "parametrizations",
    "parametrize",
    "rnn",
    "vector_to_parameters",
]
