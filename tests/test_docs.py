"""The examples in the public docstrings run and print what they say (numpy backend)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "autograd_core",
    "autograd_core.anomaly",
    "autograd_core.checkpoint",
    "autograd_core.compile",
    "autograd_core.creation",
    "autograd_core.dtypes",
    "autograd_core.einsum",
    "autograd_core.elementwise",
    "autograd_core.engine",
    "autograd_core.fft",
    "autograd_core.forward",
    "autograd_core.func",
    "autograd_core.function",
    "autograd_core.gradcheck",
    "autograd_core.grad_mode",
    "autograd_core.info",
    "autograd_core.linalg",
    "autograd_core.manipulation",
    "autograd_core.namespace",
    "autograd_core.ops",
    "autograd_core.searching",
    "autograd_core.statistics",
    "autograd_core.tensor",
    "autograd_core.tensor_base",
    "autograd_core.registry",
    "autograd_core.primitives",
    "autograd_core.primitives.constants",
    "autograd_core.pytree",
    "autograd_core.vmap",
    "autograd_core.viz",
    "backends",
    "backends.base",
    "backends.batched",
    "nn.activation",
    "nn.attention",
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
    "nn.utils",
    "optim.adagrad",
    "optim.adam",
    "optim.lr_scheduler",
    "optim.rmsprop",
    "optim.sgd",
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the anomaly example makes a nan on purpose
@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    import backends

    with backends.use("numpy"):
        result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
