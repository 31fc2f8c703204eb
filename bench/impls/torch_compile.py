"""PyTorch's eager model (bench/impls/torch_eager.py) with its training step under ``torch.compile``
in the default mode (inductor: generated C++ on the CPU).

The forward and the loss are one compiled function, whose backward AOTAutograd compiles with it
(``loss.backward()`` runs that compiled backward), and ``AdamW.step`` (the default
implementation, as `torch`'s) is compiled apart, as PyTorch's tutorial "Compiling the optimizer
with torch.compile" does: compiled in one function with the backward, the step breaks its graph
at ``Tensor.backward()`` (dynamo does not trace it) and again around the optimizer's step (which
breaks its graph on purpose, to run it without gradients), so two compiled functions is what
one would become anyway, without the breaks. ``zero_grad`` (setting the gradients to None) is
eager.

The first step compiles both functions (the optimizer's state is made then, with no recompile
on the second): the runner asks the timer for two untimed steps (`Runner.warmup_steps`), and a
test checks that the steps after them compile nothing. Setting up a point resets dynamo's
caches, whose entries are kept per code object: the same compiled function over a new model at
every point would otherwise pile up guards and reach dynamo's recompile limit. Inductor draws
its own dropout masks (its generated code has its own random numbers), so on the CNN and the
GPT its loss is compared with no other implementation's.
"""

from __future__ import annotations

from bench.impls.base import Runner
from bench.impls.torch_eager import TorchEager, TorchModel
from bench.problems import Problem

COMPILE_WARMUP = 2  # untimed steps: the first compiles, the second checks that nothing recompiles


class TorchCompiled(TorchEager):
    masks = "torch-inductor"

    def __init__(self) -> None:
        super().__init__(fused=False)
        self.name = "torch-compile"
        self.workloads = frozenset({"mlp", "char", "cnn", "gpt"})

    def unavailable(self) -> str | None:
        """Why not here: torch missing, or no C++ compiler for inductor (found as torch finds it:
        ``torch._inductor.config.cpp.cxx``, the ``CXX`` environment variable)."""
        reason = super().unavailable()
        if reason is not None:
            return reason
        from torch._inductor import exc
        from torch._inductor.cpp_builder import get_cpp_compiler

        try:
            get_cpp_compiler()
        except exc.InvalidCxxCompiler as e:
            return (
                f"torch.compile's inductor finds no C++ compiler ({e}); install one (g++ or clang++) "
                "or name it in the CXX environment variable"
            ).replace("\n", " ")
        return None

    def setup(self, problem: Problem) -> Runner:
        return CompiledModel(problem)


class CompiledModel(TorchModel):
    """`TorchModel` with the forward (and so its backward) and the optimizer's step compiled."""

    warmup_steps = COMPILE_WARMUP

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem, fused=False)
        torch = self.torch
        torch._dynamo.reset()
        self.loss_of = torch.compile(lambda x, y: self.F.cross_entropy(self.model(x), y))

        @torch.compile(fullgraph=False)
        def optimizer_step() -> None:
            self.opt.step()

        self.optimizer_step = optimizer_step

    def forward(self) -> None:
        self.loss = self.loss_of(self.x, self.y)

    def optimizer(self) -> None:
        self.optimizer_step()
