"""The models written directly in numpy: hand-derived gradients into preallocated buffers
and an in-place AdamW. No graph, no wrappers: the floor for any numpy autograd engine.

Not the CNN: a hand-written convolution, batch norm and pooling with their gradients would
be a second numpy backend to maintain, and PyTorch eager is its reference instead."""

from __future__ import annotations

import math

import numpy as np

from bench.impls.base import BatchPool, Impl, Runner
from bench.problems import ADAM_EPS, BETAS, LAYER_NORM_EPS, Problem


class NumpyByHand(Impl):
    name = "numpy-by-hand"
    workloads = frozenset({"mlp", "char", "ops", "phase"})

    def setup(self, problem: Problem) -> Runner:
        kinds = {"mlp": _MLP, "char": _Char, "chain": _Chain}
        return kinds[problem.model](problem)


class InPlaceAdamW:
    """AdamW over lists of float32 arrays, updated in place (PyTorch's update order)."""

    def __init__(self, params: list[np.ndarray], grads: list[np.ndarray], problem: Problem) -> None:
        self.params, self.grads = params, grads
        self.lr, self.decay = problem.lr, problem.weight_decay
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.scratch = [np.empty_like(p) for p in params]
        self.t = 0

    def step(self) -> None:
        self.t += 1
        beta1, beta2 = BETAS
        step_size = self.lr / (1 - beta1**self.t)
        root_correction = math.sqrt(1 - beta2**self.t)
        for p, g, m, v, s in zip(self.params, self.grads, self.m, self.v, self.scratch):
            p *= 1 - self.lr * self.decay
            # m += (1 - beta1) * (g - m), the lerp PyTorch uses
            np.subtract(g, m, out=s)
            m += np.multiply(s, 1 - beta1, out=s)
            # v = beta2 * v + (1 - beta2) * g * g
            v *= beta2
            np.square(g, out=s)
            v += np.multiply(s, 1 - beta2, out=s)
            # p -= step_size * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)
            np.sqrt(v, out=s)
            np.divide(s, root_correction, out=s)
            s += ADAM_EPS
            np.divide(m, s, out=s)
            p -= np.multiply(s, step_size, out=s)


def softmax_cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """The mean cross-entropy and the gradient of it with respect to `logits`."""
    rows = np.arange(len(targets))
    shifted = logits - logits.max(axis=1, keepdims=True)
    np.exp(shifted, out=shifted)
    total = shifted.sum(axis=1, keepdims=True)
    probs = np.divide(shifted, total, out=shifted)
    loss = float(-np.mean(np.log(probs[rows, targets])))
    probs[rows, targets] -= 1
    probs /= len(targets)
    return loss, probs


class _HandModel(BatchPool):
    """Parameters in the problem's order, a gradient buffer for each, the optimizer."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.batches)
        self.params = [w.copy() for w in problem.weights.values()]
        self.grads = [np.empty_like(p) for p in self.params]
        self.adam = InPlaceAdamW(self.params, self.grads, problem)
        self.loss = math.nan
        self.dlogits: np.ndarray | None = None

    def optimizer(self) -> None:
        self.adam.step()

    def check_value(self) -> float:
        return self.loss

    def linear_backward(self, g: np.ndarray, inputs: np.ndarray, index: int) -> None:
        """Gradients of weight `index` (out, in) and bias `index + 1` of ``inputs @ W.T + b``."""
        if len(g) == 1:  # one row: an outer product, which numpy's matmul computes 4x slower
            np.multiply(g.T, inputs, out=self.grads[index])
        else:
            np.matmul(g.T, inputs, out=self.grads[index])
        np.sum(g, axis=0, out=self.grads[index + 1])


class _MLP(_HandModel):
    """Linear layers with ReLU between them."""

    def forward(self) -> None:
        h = self.x
        self.inputs = []
        last = len(self.params) - 2
        for i in range(0, len(self.params), 2):
            self.inputs.append(h)
            h = h @ self.params[i].T
            h += self.params[i + 1]
            if i < last:
                np.maximum(h, 0, out=h)
        self.loss, self.dlogits = softmax_cross_entropy(h, self.y)

    def backward(self) -> None:
        g = self.dlogits
        for i in range(len(self.params) - 2, -1, -2):
            inputs = self.inputs[i // 2]
            self.linear_backward(g, inputs, i)
            if i:
                g = g @ self.params[i]
                g *= inputs > 0  # the ReLU that produced `inputs`


class _Char(_HandModel):
    """Embedding, flatten, Linear, LayerNorm, tanh, Linear."""

    def forward(self) -> None:
        table, w1, b1, gamma, beta, w2, b2 = self.params
        self.embedded = table[self.x].reshape(len(self.x), -1)
        h = self.embedded @ w1.T
        h += b1
        h -= h.mean(axis=1, keepdims=True)
        self.rstd = 1 / np.sqrt(np.mean(h * h, axis=1, keepdims=True) + LAYER_NORM_EPS)
        self.normed = h * self.rstd
        self.act = np.tanh(self.normed * gamma + beta)
        logits = self.act @ w2.T
        logits += b2
        self.loss, self.dlogits = softmax_cross_entropy(logits, self.y)

    def backward(self) -> None:
        table, w1, _, gamma, _, w2, _ = self.params
        g = self.dlogits
        self.linear_backward(g, self.act, 5)
        g = g @ w2
        g *= 1 - self.act * self.act
        np.sum(g * self.normed, axis=0, out=self.grads[3])
        np.sum(g, axis=0, out=self.grads[4])
        g *= gamma
        # LayerNorm: dx = rstd * (g - mean(g) - normed * mean(g * normed))
        g = self.rstd * (
            g - g.mean(axis=1, keepdims=True) - self.normed * np.mean(g * self.normed, axis=1, keepdims=True)
        )
        self.linear_backward(g, self.embedded, 1)
        rows = (g @ w1).reshape(-1, table.shape[1])
        self.grads[0][...] = segment_sum(rows, self.x.reshape(-1), table.shape[0])


def segment_sum(rows: np.ndarray, index: np.ndarray, n: int) -> np.ndarray:
    """``out[i] = sum of rows[j] where index[j] == i`` for i < n (sort, then reduce runs)."""
    order = np.argsort(index, kind="stable")
    counts = np.bincount(index, minlength=n)
    present = counts > 0
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))[present]
    out = np.zeros((n, rows.shape[1]), rows.dtype)
    out[present] = np.add.reduceat(rows[order], starts, axis=0)
    return out


class _Chain(Runner):
    """The multiply chain and its reverse sweep over the saved intermediate values."""

    def __init__(self, problem: Problem) -> None:
        self.x, self.w = problem.weights["x"].copy(), problem.weights["w"].copy()
        self.length = problem.chain
        self.grad_w = np.zeros_like(self.w)

    def step(self) -> None:
        w, y = self.w, self.x
        values = []
        for _ in range(self.length):
            values.append(y)
            y = y * w
        g, grad_w = np.ones_like(y), np.zeros_like(w)
        for v in reversed(values):
            grad_w = grad_w + g * v
            g = g * w
        self.grad_w = grad_w

    def check_value(self) -> float:
        return float(self.grad_w[0])
