"""The implementations the bench can time, by their stable names:

    ours:<backend>   this framework on that backend (numpy, torch, jax, array_api_strict, cupy...)
    ours:<backend>+compile   the same step through autograd_core.transforms.compile (backends that can compile)
    ours:dask@local:N   fullbatch only: dask on a local cluster of N memory-limited workers (N = 1, 2)
    torch            PyTorch eager, torch.optim.AdamW (default implementation); transforms: torch.func
    torch-fused      the same with AdamW(fused=True)
    torch-compile    torch's model, its forward+backward and AdamW step each under torch.compile (inductor)
    numpy-by-hand    the models in plain numpy with hand-written gradients and in-place AdamW
    jax-jit          the whole step in jax.numpy under jax.jit; transforms: jax's, under jax.jit
    hips-autograd    HIPS autograd's value_and_grad on numpy, numpy-by-hand's AdamW (mlp, char, ops)
    mygrad           mygrad's tensors and backward(), numpy-by-hand's AdamW (mlp, char, ops, phase)

hips-autograd and mygrad are the `peers` extra: pip install -e ".[peers]".

Each module imports its library only when the implementation is checked or set up.
"""

from __future__ import annotations

from bench.impls.base import BatchPool, Impl, Runner
from bench.impls.by_hand import NumpyByHand
from bench.impls.hips_autograd import HipsAutograd
from bench.impls.jax_jit import JaxJit
from bench.impls.mygrad_impl import MyGrad
from bench.impls.ours import Ours, OursCluster, OursCompiled
from bench.impls.torch_compile import TorchCompiled
from bench.impls.torch_eager import TorchEager

BASELINES = ("torch", "torch-fused", "torch-compile", "numpy-by-hand", "jax-jit", "hips-autograd", "mygrad")
CLUSTER_WORKERS = (1, 2)  # the local clusters fullbatch is timed on, when dask is among the backends


def baseline(name: str) -> Impl:
    """The baseline implementation called `name` (one of `BASELINES`)."""
    factories = {
        "torch": lambda: TorchEager(fused=False),
        "torch-fused": lambda: TorchEager(fused=True),
        "torch-compile": TorchCompiled,
        "numpy-by-hand": NumpyByHand,
        "jax-jit": JaxJit,
        "hips-autograd": HipsAutograd,
        "mygrad": MyGrad,
    }
    if name not in factories:
        raise ValueError(f"unknown baseline {name!r}; choose from {', '.join(BASELINES)}")
    return factories[name]()


def select(backend_names: list[str], baseline_names: list[str]) -> list[Impl]:
    """``ours:<backend>`` for each backend (and ``+compile`` where the backend can compile; and
    ``ours:dask@local:N`` for dask), then the chosen baselines, in that order."""
    compiled = [OursCompiled(b) for b in backend_names if OursCompiled(b).unavailable() is None]
    clusters = [OursCluster(n) for n in CLUSTER_WORKERS] if "dask" in backend_names else []
    return [*(Ours(b) for b in backend_names), *compiled, *clusters, *(baseline(n) for n in baseline_names)]


__all__ = [
    "BASELINES",
    "CLUSTER_WORKERS",
    "BatchPool",
    "HipsAutograd",
    "Impl",
    "NumpyByHand",
    "JaxJit",
    "MyGrad",
    "Ours",
    "OursCluster",
    "OursCompiled",
    "Runner",
    "TorchCompiled",
    "TorchEager",
    "baseline",
    "select",
]
