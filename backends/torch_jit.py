"""The torch backend's tracing compiler (`TorchBackend.jit`, behind `autograd_core.transforms.compile`).

A pure function of torch tensors (a training step: forward, the engine's backward sweep and
the optimizer update, all running torch ops) is traced once per input signature by
``make_fx`` into one aten graph, on fake tensors, so that anything that reads a value
(``.item()``, ``bool(t)``, a copy to numpy) fails the trace instead of freezing a number into
it. The graph is compiled by inductor (C++ kernels for the CPU) where inductor finds a C++
compiler, and otherwise runs as traced: one graph call instead of the engine's Python loop
(``AUTOGRAD_TORCH_COMPILER=none`` asks for that, and saves the compile time).

Python numbers among the inputs (a learning rate, a step count) become 0-d tensors, so one
trace serves every value; a new shape, dtype or tree structure traces again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch._inductor.compile_fx import compile_fx
from torch.fx.experimental.proxy_tensor import make_fx

from autograd_core.graph import pytree

log = logging.getLogger("autograd_core.transforms.compile")


COMPILERS = ("inductor", "none")


def compiler() -> str:
    """What compiles a traced step: ``AUTOGRAD_TORCH_COMPILER`` (``inductor``, or ``none`` to run
    the traced graph as it is: no compile time), by default inductor where it finds a C++ compiler."""
    chosen = os.environ.get("AUTOGRAD_TORCH_COMPILER", "inductor")
    if chosen not in COMPILERS:
        raise ValueError(f"AUTOGRAD_TORCH_COMPILER={chosen!r}: choose one of {', '.join(COMPILERS)}")
    return "inductor" if chosen == "inductor" and cpp_compiler() is not None else "none"


def cpp_compiler() -> str | None:
    """The C++ compiler inductor would use, or None where it finds none."""
    from torch._inductor import cpp_builder

    try:
        return shutil.which(cpp_builder.get_cpp_compiler())
    except Exception:  # inductor raises its own error types when no compiler is found
        return None


def is_traced(x: Any) -> bool:
    from torch._subclasses.fake_tensor import FakeTensor

    return isinstance(x, FakeTensor)


def _as_tensor(leaf: Any) -> Any:
    """A Python number as a 0-d tensor (int64, or float64: exact, and a 0-d tensor does not
    promote the arrays it meets); anything else as it is. A new tensor each call: the graph may
    update an input in place (``state["step"] += 1``)."""
    if isinstance(leaf, bool) or not isinstance(leaf, int | float):
        return leaf
    return torch.tensor(leaf, dtype=torch.int64 if isinstance(leaf, int) else torch.float64)


def _signature(leaf: Any) -> Any:
    return (leaf.shape, leaf.dtype, leaf.device) if isinstance(leaf, torch.Tensor) else leaf


@contextlib.contextmanager
def _python_number_arithmetic() -> Iterator[None]:
    """torch's default dtype float64 while tracing, compiling and running a graph: a step count
    (a Python int op by op, an int64 tensor in the trace) times a Python float is then float64,
    as the Python numbers give op by op, not float32 (an aten graph promotes when it runs).
    Arrays made by the engine name their dtype."""
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(default)


def _cacheable() -> Any:
    """A tracing context with a shape environment, as torch.compile gives inductor: without
    one, inductor bypasses its cache of compiled graphs, and every process compiles again."""
    from torch._guards import TracingContext, tracing
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    return tracing(TracingContext(FakeTensorMode(shape_env=ShapeEnv())))


@contextlib.contextmanager
def _quiet_compile() -> Iterator[None]:
    """Inductor's own use of an API torch deprecates, silenced while it compiles."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "`torch.jit.script_method` is deprecated", DeprecationWarning)
        yield


class TracedFunction:
    """`fn` traced per input signature into an aten graph, compiled by inductor when `inductor`."""

    def __init__(self, fn: Callable[..., Any], inductor: bool) -> None:
        self.fn, self.inductor = fn, inductor  # inductor: compile each traced graph
        self.graphs: dict[tuple, tuple[Callable[..., list], Any, list, list[int]]] = {}

    def __call__(self, *args: Any) -> Any:
        leaves, spec = pytree.tree_flatten(args)
        leaves = [_as_tensor(leaf) for leaf in leaves]
        key = (spec, *map(_signature, leaves))
        if key not in self.graphs:
            self.graphs[key] = self._trace(leaves, spec)
        graph, out_spec, constants, positions = self.graphs[key]
        with _python_number_arithmetic():
            results = graph(*[leaf for leaf in leaves if isinstance(leaf, torch.Tensor)])
        out = list(constants)
        for position, value in zip(positions, results):
            out[position] = value
        return pytree.tree_unflatten(out_spec, out)

    def _trace(self, leaves: list, spec: Any) -> tuple:
        tensor_at = [k for k, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
        traced: dict[str, Any] = {}

        def flat(*tensors: Any) -> list:
            full = list(leaves)
            for k, t in zip(tensor_at, tensors):
                full[k] = t
            traced["leaves"], traced["spec"] = pytree.tree_flatten(self.fn(*pytree.tree_unflatten(spec, full)))
            return [leaf for leaf in traced["leaves"] if isinstance(leaf, torch.Tensor)]

        inputs = [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)]
        started = time.perf_counter()
        with _python_number_arithmetic():
            graph = make_fx(flat, tracing_mode="fake", _allow_non_fake_inputs=True)(*inputs)
        traced_at, nodes = time.perf_counter(), len(graph.graph.nodes)
        if self.inductor:  # inductor itself: torch.compile would add dynamo's guards to every call
            with _python_number_arithmetic(), _quiet_compile(), _cacheable():
                graph = compile_fx(graph, inputs)
        log.info(
            "compile: a step of %d graph nodes traced in %.2f s, %s",
            nodes,
            traced_at - started,
            f"compiled by inductor in {time.perf_counter() - traced_at:.2f} s"
            if self.inductor
            else "run uncompiled (AUTOGRAD_TORCH_COMPILER=none, or no C++ compiler for inductor)",
        )
        positions = [k for k, leaf in enumerate(traced["leaves"]) if isinstance(leaf, torch.Tensor)]
        constants = [None if k in positions else leaf for k, leaf in enumerate(traced["leaves"])]
        return graph, traced["spec"], constants, positions
