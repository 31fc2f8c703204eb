"""The same step written in jax.numpy and compiled whole with ``jax.jit``: forward,
``jax.value_and_grad`` and AdamW in one XLA program (the floor for the jax backend). The CNN
updates batch norm's running statistics in the same program, as a PyTorch step does.

Dropout (the CNN's and the GPT's) is PyTorch's inverted dropout, its masks drawn inside the
compiled step with ``jax.random``: the key is part of the state, split every step, and the
step's i-th mask comes from ``fold_in`` of its half and i (`_Dropout`).

The op chain is compiled as a ``fori_loop``: XLA fails to compile 2,000 unrolled multiplies
with their gradient, and a compiled loop is what jit would make of such code anyway.

For transforms, ``jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))`` and the HVP as
``jax.jit`` of ``jax.jvp`` of ``jax.grad`` (forward over reverse), each one XLA program.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bench.gpt_model import GPTConfig
from bench.impls.base import BatchPool, Impl, Runner, TransformsRunner
from bench.problems import ADAM_EPS, BETAS, LAYER_NORM_EPS, Problem

# PyTorch's batch norm defaults, and the names of its buffers in a state dict
BATCH_NORM_EPS, BATCH_NORM_MOMENTUM = 1e-5, 0.1
BUFFERS = ("running_mean", "running_var", "num_batches_tracked")
TIED = ("lm_head.weight",)  # the GPT's output layer is its token embedding


class JaxJit(Impl):
    name = "jax-jit"
    masks = "jax"
    requires = ("jax",)
    extra = "jax"
    # One compiled program per step: there is no phase split to time.
    workloads = frozenset({"mlp", "char", "cnn", "gpt", "ops", "transforms"})

    def setup(self, problem: Problem) -> Runner:
        if problem.workload == "transforms":
            return _Transforms(problem)
        return _Chain(problem) if problem.model == "chain" else _Model(problem)


class _Dropout:
    """Inverted dropout as PyTorch's: each element kept with probability 1 - `rate` and scaled by
    1 / (1 - `rate`), the others zeroed; the i-th call's mask drawn from ``fold_in(key, i)``.
    At rate 0 it returns its input and draws nothing."""

    def __init__(self, jax: Any, key: Any, rate: float) -> None:
        self.jax, self.key, self.rate, self.count = jax, key, rate, 0

    def __call__(self, x: Any) -> Any:
        if not self.rate:
            return x
        keep = self.jax.random.bernoulli(self.jax.random.fold_in(self.key, self.count), 1 - self.rate, x.shape)
        self.count += 1
        return self.jax.numpy.where(keep, x / (1 - self.rate), 0)


# Each model maps (params, buffers, inputs, dropout) to (logits, new buffers); only the CNN has buffers.
def _mlp_logits(jax: Any, params: tuple, buffers: tuple, x: Any, drop: _Dropout) -> tuple[Any, tuple]:
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i].T + params[i + 1]
        if i < len(params) - 2:
            h = jax.numpy.maximum(h, 0)
    return h, buffers


def _layer_norm(jnp: Any, x: Any, gamma: Any) -> Any:
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / jnp.sqrt(jnp.mean(centred * centred, axis=-1, keepdims=True) + LAYER_NORM_EPS) * gamma


def _char_logits(jax: Any, params: tuple, buffers: tuple, idx: Any, drop: _Dropout) -> tuple[Any, tuple]:
    jnp = jax.numpy
    table, w1, b1, gamma, beta, w2, b2 = params
    h = table[idx].reshape(idx.shape[0], -1) @ w1.T + b1
    return jnp.tanh(_layer_norm(jnp, h, gamma) + beta) @ w2.T + b2, buffers


def _max_pool_2x2(jnp: Any, h: Any) -> Any:
    """2x2 max pooling as the largest of the four strided taps, taken where the first maximum
    is: XLA's CPU gradient of ``lax.reduce_window`` (select-and-scatter) made the whole step
    about 30% slower (96 against 72 ms at batch 64)."""
    taps = jnp.stack([h[:, :, i::2, j::2] for i in range(2) for j in range(2)], axis=2)
    return jnp.take_along_axis(taps, jnp.argmax(taps, axis=2, keepdims=True), axis=2)[:, :, 0]


def _conv_block(jax: Any, x: Any, kernel: Any, gamma: Any, beta: Any, stats: tuple) -> tuple[Any, tuple]:
    """3x3 convolution (padding 1, no bias), batch norm on the batch's statistics (the
    running ones updated as PyTorch does), ReLU, 2x2 max pooling."""
    jnp = jax.numpy
    h = jax.lax.conv_general_dilated(x, kernel, (1, 1), ((1, 1), (1, 1)), dimension_numbers=("NCHW", "OIHW", "NCHW"))
    axes, channel = (0, 2, 3), (-1, 1, 1)
    mean = h.mean(axis=axes, keepdims=True)
    centred = h - mean
    var = jnp.mean(centred * centred, axis=axes, keepdims=True)
    h = _max_pool_2x2(
        jnp, jnp.maximum(centred / jnp.sqrt(var + BATCH_NORM_EPS) * gamma.reshape(channel) + beta.reshape(channel), 0)
    )
    count = x.shape[0] * x.shape[2] * x.shape[3]
    running_mean, running_var, tracked = stats
    m = BATCH_NORM_MOMENTUM
    stats = (
        running_mean * (1 - m) + mean.ravel() * m,
        running_var * (1 - m) + var.ravel() * (count / (count - 1)) * m,
        tracked + 1,
    )
    return h, stats


def _cnn_logits(jax: Any, params: tuple, buffers: tuple, x: Any, drop: _Dropout) -> tuple[Any, tuple]:
    conv1, gamma1, beta1, conv2, gamma2, beta2, w1, b1, w2, b2 = params
    h, stats1 = _conv_block(jax, x, conv1, gamma1, beta1, buffers[:3])
    h, stats2 = _conv_block(jax, h, conv2, gamma2, beta2, buffers[3:])
    h = jax.nn.silu(drop(h.reshape(h.shape[0], -1)) @ w1.T + b1)
    return h @ w2.T + b2, (*stats1, *stats2)


def _gpt_logits(jax: Any, params: tuple, buffers: tuple, idx: Any, drop: _Dropout) -> tuple[Any, tuple]:
    """nanoGPT's model (no biases) on `params` in our state-dict order, the output layer
    tied to the token embedding (so "lm_head.weight" is not among them); dropout where
    bench/gpt_model.py has it: the embeddings, the attention weights, both residual branches."""
    jnp, c = jax.numpy, GPTConfig()
    wte, wpe, *blocks, ln_f = params
    b, t = idx.shape
    causal = jnp.tril(jnp.ones((t, t), dtype=bool))
    x = drop(wte[idx] + wpe[:t])
    for i in range(c.n_layer):
        ln_1, c_attn, attn_proj, ln_2, c_fc, mlp_proj = blocks[6 * i : 6 * i + 6]
        q, k, v = (_layer_norm(jnp, x, ln_1) @ c_attn.T).reshape(b, t, 3, c.n_head, -1).transpose(2, 0, 3, 1, 4)
        scores = jnp.where(causal, q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1]), -jnp.inf)
        y = drop(jax.nn.softmax(scores, axis=-1)) @ v
        x = x + drop(y.transpose(0, 2, 1, 3).reshape(b, t, -1) @ attn_proj.T)
        x = x + drop(jax.nn.gelu(_layer_norm(jnp, x, ln_2) @ c_fc.T, approximate=False) @ mlp_proj.T)
    return (_layer_norm(jnp, x, ln_f) @ wte.T).reshape(b * t, -1), buffers


def _cross_entropy(jax: Any, logits: Any, y: Any) -> Any:
    logp = jax.nn.log_softmax(logits, axis=1)
    return -jax.numpy.mean(jax.numpy.take_along_axis(logp, y[:, None], axis=1))


def _train_step(problem: Problem) -> Any:
    """The jitted ``(state, x, y, corrections) -> (state, loss)`` for `problem`'s model; the state
    is (parameters, first moments, second moments, buffers, dropout key)."""
    import jax
    import jax.numpy as jnp

    logits_of = {"mlp": _mlp_logits, "char": _char_logits, "cnn": _cnn_logits, "gpt": _gpt_logits}[problem.model]
    lr, decay = problem.lr, problem.weight_decay
    beta1, beta2 = BETAS

    def loss_fn(params: tuple, buffers: tuple, x: Any, y: Any, drop: _Dropout) -> tuple[Any, tuple]:
        logits, buffers = logits_of(jax, params, buffers, x, drop)
        return _cross_entropy(jax, logits, y), buffers

    def step(state: tuple, x: Any, y: Any, corrections: Any) -> tuple[tuple, Any]:
        # The bias corrections come from the host, computed in float64 as PyTorch does.
        params, m, v, buffers, key = state
        key, masks = jax.random.split(key) if problem.dropout else (key, None)
        drop = _Dropout(jax, masks, problem.dropout)
        step_size, root_correction = corrections[0], corrections[1]
        (loss, buffers), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, buffers, x, y, drop)
        m = tuple(mi + (1 - beta1) * (g - mi) for mi, g in zip(m, grads))
        v = tuple(vi * beta2 + (1 - beta2) * g * g for vi, g in zip(v, grads))
        params = tuple(
            p * (1 - lr * decay) - step_size * (mi / (jnp.sqrt(vi) / root_correction + ADAM_EPS))
            for p, mi, vi in zip(params, m, v)
        )
        return (params, m, v, buffers, key), loss

    return jax.jit(step, donate_argnums=0)


class _Model(BatchPool):
    warmup_steps = 1  # the first call compiles

    def __init__(self, problem: Problem) -> None:
        import jax
        import jax.numpy as jnp

        self.jax = jax
        # Inputs and buffers keep their dtype (float32, int32 indices and counts) whether or not x64 is enabled.
        cast = lambda a: jax.device_put(a.astype(np.int32) if a.dtype.kind == "i" else a)
        is_buffer = {name: name.rsplit(".", 1)[-1] in BUFFERS for name in problem.weights}
        params = tuple(cast(w) for name, w in problem.weights.items() if not is_buffer[name] and name not in TIED)
        buffers = tuple(cast(w) for name, w in problem.weights.items() if is_buffer[name])
        zeros = tuple(jnp.zeros_like(p) for p in params)
        key = jax.random.key(problem.seed)
        self.state = (params, zeros, tuple(jnp.zeros_like(p) for p in params), buffers, key)
        self.lr, self.t = problem.lr, 0
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


class _Transforms(TransformsRunner):
    """The parameters are a tuple in the problem's order (jax would sort a dict's names)."""

    def __init__(self, problem: Problem) -> None:
        import jax

        self.jax, self.names = jax, list(problem.weights)
        self.params = tuple(jax.device_put(w) for w in problem.weights.values())
        self.direction = tuple(jax.device_put(problem.probes.direction[k]) for k in self.names)
        super().__init__(problem, [(jax.device_put(x), jax.device_put(y.astype(np.int32))) for x, y in problem.batches])

        def loss(params: tuple, x: Any, y: Any) -> Any:
            return _cross_entropy(jax, _mlp_logits(jax, params, (), x, _Dropout(jax, None, 0.0))[0], y)

        one = lambda params, x, y: loss(params, x[None], y[None])
        self.per_sample_grads_of = jax.jit(jax.vmap(jax.grad(one), in_axes=(None, 0, 0)))
        self.hvp_of = jax.jit(lambda p, v, x, y: jax.jvp(lambda q: jax.grad(loss)(q, x, y), (p,), (v,))[1])

    def per_sample(self) -> None:
        self.per_sample_grads = dict(zip(self.names, self.per_sample_grads_of(self.params, self.x, self.y)))

    def hvp(self) -> None:
        self.hvp_result = dict(zip(self.names, self.hvp_of(self.params, self.direction, self.x, self.y)))

    def sync(self) -> None:
        self.jax.block_until_ready((self.per_sample_grads, self.hvp_result))


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
