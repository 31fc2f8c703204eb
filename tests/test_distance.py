"""F.normalize, F.cosine_similarity and F.pairwise_distance against PyTorch, values and
gradients to the second order, where they matter most: zero vectors, vectors shorter than eps,
equal points, and broadcasting."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import autograd_core as ag
import nn
import nn.functional as F
from helpers import assert_close

rng = np.random.default_rng(0)
ROWS = {
    "random": rng.normal(size=(3, 4)),
    "zero": np.zeros((3, 4)),
    "shorter than eps": rng.normal(size=(3, 4)) * 1e-13,
    "one tiny entry": np.tile([[1e-9, 0.0, 0.0, 0.0]], (3, 1)),
}
PAIRS = [(a, b) for a in ROWS for b in ROWS]

CALLS = {
    "cosine_similarity": lambda m, a, b: m.cosine_similarity(a, b),
    "cosine_similarity_dim0_broadcast": lambda m, a, b: m.cosine_similarity(a[:1], b, dim=0),
    "normalize": lambda m, a, b: m.normalize(a) * b,
    "normalize_p1_dim0": lambda m, a, b: m.normalize(a, p=1.0, dim=0) * b,
    "pairwise_distance": lambda m, a, b: m.pairwise_distance(a, b),
    "pairwise_distance_p1_keepdim": lambda m, a, b: m.pairwise_distance(a, b, p=1.0, keepdim=True),
    "pairwise_distance_equal_points": lambda m, a, b: (
        m.pairwise_distance(a, a * 1.0, eps=0.0) * 0 + m.pairwise_distance(a, b)
    ),
}


def run(module, call, a, b, tensor, second_order):
    x1, x2 = tensor(a), tensor(b)
    out = CALLS[call](module, x1, x2)
    weights = tensor(np.linspace(1.0, 2.0, out.numel()).reshape(tuple(out.shape)))
    loss = (out * weights).sum()
    grad = ag.grad if module is F else torch.autograd.grad
    grads = grad(loss, (x1, x2), create_graph=True)
    if not second_order:
        return [out, *grads]
    second = grad(sum((g * g).sum() for g in grads), (x1, x2), allow_unused=True)
    second = [torch.zeros_like(x) if g is None else g for g, x in zip(second, (x1, x2))] if module is not F else second
    return [out, *grads, *second]


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize(("first", "second"), PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_matches_pytorch_to_the_second_order(float64_backend, call, first, second):
    a, b = ROWS[first], ROWS[second]
    # at or below eps the second order is a difference of terms up to 1e24 in either library
    # (noise); tests/test_singular_points.py checks the norm's second order at zero
    second_order = first == second == "random"
    ours = run(F, call, a, b, lambda v: ag.tensor(v, dtype="float64", requires_grad=True), second_order)
    theirs = run(torch.nn.functional, call, a, b, lambda v: torch.tensor(v, requires_grad=True), second_order)
    for got, expected in zip(ours, theirs):
        assert tuple(got.shape) == tuple(expected.shape)
        # terms that cancel to 0 differ by rounding, relative to the array's scale (up to 1/eps)
        expected = expected.detach().numpy(force=True)
        scale = np.abs(expected[np.isfinite(expected)]).max(initial=1.0)
        assert_close(got.detach(), expected, rtol=1e-6, atol=1e-13 * scale)


def test_the_layers_call_the_functions(backend):
    x1, x2 = ag.tensor(ROWS["random"]), ag.tensor(ROWS["one tiny entry"])
    assert_close(nn.CosineSimilarity(dim=0)(x1, x2), F.cosine_similarity(x1, x2, dim=0), "float32")
    assert_close(nn.PairwiseDistance(p=3.0)(x1, x2), F.pairwise_distance(x1, x2, p=3.0), "float32")
