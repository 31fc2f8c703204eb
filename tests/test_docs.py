"""The examples in the public docstrings run and print what they say (numpy backend)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "autograd_core",
    "autograd_core.graph.anomaly",
    "autograd_core.transforms.checkpoint",
    "autograd_core.transforms.compile",
    "autograd_core.ops.creation",
    "autograd_core.graph.dtypes",
    "autograd_core.ops.einsum",
    "autograd_core.ops.elementwise",
    "autograd_core.autodiff.engine",
    "autograd_core.ops.fft",
    "autograd_core.autodiff.forward",
    "autograd_core.transforms.func",
    "autograd_core.autodiff.function",
    "autograd_core.autodiff.gradcheck",
    "autograd_core.graph.grad_mode",
    "autograd_core.graph.levels",
    "autograd_core.ops.info",
    "autograd_core.ops.linalg",
    "autograd_core.ops.manipulation",
    "autograd_core.graph.namespace",
    "autograd_core.ops.core",
    "autograd_core.ops.searching",
    "autograd_core.ops.statistics",
    "autograd_core.autodiff.tensor",
    "autograd_core.graph.tensor_base",
    "autograd_core.graph.registry",
    "autograd_core.primitives",
    "autograd_core.primitives.constants",
    "autograd_core.graph.pytree",
    "autograd_core.transforms.vmap.api",
    "autograd_core.export.viz",
    "backends",
    "backends.contract.backend",
    "autograd_core.transforms.vmap.batched",
    "nn.activation",
    "nn.attention",
    "nn.containers",
    "nn.conv_layers",
    "nn.convolution",
    "nn.functional",
    "nn.functional_base",
    "nn.layers",
    "nn.loss",
    "nn.module",
    "nn.normalization",
    "nn.norm_layers",
    "nn.recurrent",
    "nn.serialization",
    "nn.spatial",
    "nn.stateless",
    "nn.transformer",
    "nn.utils.checkpoint",
    "nn.utils.clip_grad",
    "nn.utils.convert_parameters",
    "nn.utils.parametrizations",
    "nn.utils.parametrize",
    "nn.utils.rnn",
    "optim.adagrad",
    "optim.adam",
    "optim.lr_scheduler",
    "optim.rmsprop",
    "optim.sgd",
    *("optim.nadam", "optim.radam", "optim.adamax", "optim.adadelta", "optim.rprop", "optim.asgd", "optim.lbfgs"),
    "optim.swa_utils",
    "autograd_core.ops.random",
    *("autograd_core.torch", "autograd_core.torch._adapt", "autograd_core.torch._core", "autograd_core.torch._shapes"),
    *("autograd_core.torch._creation", "autograd_core.torch._linalg", "autograd_core.torch._special"),
    *("autograd_core.torch.autograd", "autograd_core.torch.fft", "autograd_core.torch.linalg"),
    *("autograd_core.torch.special", "autograd_core.torch.masked", "autograd_core.torch.signal.windows"),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the anomaly example makes a nan on purpose
@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    import backends

    with backends.use("numpy"):
        result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
