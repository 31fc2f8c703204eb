"""The same step written in jax.numpy and compiled whole with ``jax.jit``: forward,
``jax.value_and_grad`` and AdamW in one XLA program (the floor for the jax backend).

The op chain is compiled as a ``fori_loop``: XLA fails to compile 2,000 unrolled multiplies
with their gradient, and a compiled loop is what jit would make of such code anyway.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bench.impls.base import BatchPool, Impl, Runner
from bench.problems import ADAM_EPS, BETAS, LAYER_NORM_EPS, Problem


class JaxJit(Impl):
    name = "jax-jit"
    requires = ("jax",)
    # One compiled program per step: there is no phase split to time.
    workloads = frozenset({"mlp", "char", "ops"})

    def setup(self, problem: Problem) -> Runner:
        return _Chain(problem) if problem.model == "chain" else _Model(problem)


def _mlp_logits(jnp: Any, params: tuple, x: Any) -> Any:
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i].T + params[i + 1]
        if i < len(params) - 2:
            h = jnp.maximum(h, 0)
    return h


def _char_logits(jnp: Any, params: tuple, idx: Any) -> Any:
    table, w1, b1, gamma, beta, w2, b2 = params
    h = table[idx].reshape(idx.shape[0], -1) @ w1.T + b1
    centred = h - h.mean(axis=1, keepdims=True)
    normed = centred / jnp.sqrt(jnp.mean(centred * centred, axis=1, keepdims=True) + LAYER_NORM_EPS)
    return jnp.tanh(normed * gamma + beta) @ w2.T + b2


def _train_step(problem: Problem) -> Any:
    """The jitted ``(state, x, y, corrections) -> (state, loss)`` for `problem`'s model."""
    import jax
    import jax.numpy as jnp

    logits_of = {"mlp": _mlp_logits, "char": _char_logits}[problem.model]
    lr, decay = problem.lr, problem.weight_decay
    beta1, beta2 = BETAS

    def loss_fn(params: tuple, x: Any, y: Any) -> Any:
        logp = jax.nn.log_softmax(logits_of(jnp, params, x), axis=1)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    def step(state: tuple, x: Any, y: Any, corrections: Any) -> tuple[tuple, Any]:
        # The bias corrections come from the host, computed in float64 as PyTorch does.
        params, m, v = state
        step_size, root_correction = corrections[0], corrections[1]
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        m = tuple(mi + (1 - beta1) * (g - mi) for mi, g in zip(m, grads))
        v = tuple(vi * beta2 + (1 - beta2) * g * g for vi, g in zip(v, grads))
        params = tuple(p * (1 - lr * decay) - step_size * (mi / (jnp.sqrt(vi) / root_correction + ADAM_EPS))
                       for p, mi, vi in zip(params, m, v))
        return (params, m, v), loss

    return jax.jit(step, donate_argnums=0)


class _Model(BatchPool):
    def __init__(self, problem: Problem) -> None:
        import jax
        import jax.numpy as jnp

        self.jax = jax
        params = tuple(jax.device_put(w) for w in problem.weights.values())
        zeros = tuple(jnp.zeros_like(p) for p in params)
        self.state = (params, zeros, tuple(jnp.zeros_like(p) for p in params))
        self.lr, self.t = problem.lr, 0
        # Inputs keep their dtype (float32 or int32 indices) whether or not x64 is enabled.
        cast = lambda a: jax.device_put(a.astype(np.int32) if a.dtype.kind == "i" else a)
        super().__init__([(cast(x), cast(y)) for x, y in problem.batches])
        self.train_step = _train_step(problem)
        self.loss = None

    def step(self) -> None:
        self.t += 1
        beta1, beta2 = BETAS
        corrections = np.array([self.lr / (1 - beta1**self.t), math.sqrt(1 - beta2**self.t)], np.float32)
        self.state, self.loss = self.train_step(self.state, self.x, self.y, corrections)

    def sync(self) -> None:
        self.jax.block_until_ready((self.state, self.loss))

    def check_value(self) -> float:
        return float(self.loss)


class _Chain(Runner):
    def __init__(self, problem: Problem) -> None:
        import jax

        length = problem.chain

        def chain(x: Any, w: Any) -> Any:
            return jax.lax.fori_loop(0, length, lambda _, y: y * w, x).sum()

        self.jax = jax
        self.grad = jax.jit(jax.grad(chain, argnums=(0, 1)))
        self.x, self.w = (jax.device_put(problem.weights[k]) for k in ("x", "w"))
        self.grads = None

    def step(self) -> None:
        self.grads = self.grad(self.x, self.w)

    def sync(self) -> None:
        self.jax.block_until_ready(self.grads)

    def check_value(self) -> float:
        return float(self.grads[1][0])
