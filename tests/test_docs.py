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
