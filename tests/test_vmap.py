"""`func.vmap` on every backend: against JAX's `jax.vmap` (in_dims, out_dims, nesting) and the
loop it replaces, its composition with grad/jvp/jacobians against `torch.func`, randomness,
chunking, gradients of tensors the function closes over, and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import func
from tests.helpers import assert_close

rng = np.random.default_rng(3)
A = rng.standard_normal((5, 3, 4))
B = rng.standard_normal((4, 5))


def ours(a: np.ndarray) -> ag.Tensor:
    return ag.tensor(a, dtype="float64")


# (name, our function of one example, jax's, in_dims, out_dims): jax.numpy and ag share the names
CASES = [
    ("elementwise", lambda ns, x, y: ns.sin(x) * y[:3, None] + x**2, (0, 1), 0),
    (
        "reductions",
        lambda ns, x, y: ns.sum(x, axis=-1) * ns.max(y) + ns.mean(x, axis=0, keepdims=True).sum(),
        (0, 1),
        0,
    ),
    ("matmul", lambda ns, x, y: x @ y[:, :2], (0, None), 0),
    ("indexing", lambda ns, x, y: x[1:, ::2][:, 0] + x[..., -1].sum(), (0, None), 1),
    ("shapes", lambda ns, x, y: ns.reshape(ns.permute_dims(x, (1, 0)), (-1,))[:6], (0, None), -1),
    ("softmax_like", lambda ns, x, y: ns.exp(x - ns.max(x, axis=-1, keepdims=True)), (2, None), 0),
    ("where_clip", lambda ns, x, y: ns.where(x > 0, x, 0.1 * x) + ns.clip(x, -0.5, 0.5), (1, None), 0),
    ("concat_stack", lambda ns, x, y: ns.concat([x, 2 * x], axis=0) + ns.stack([x, x]).sum(axis=0)[0], (0, None), 0),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_vmap_matches_jax(float64_backend, case):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    _, fn, in_dims, out_dims = case
    x, y = np.moveaxis(A, 0, in_dims[0]), B  # B's axis 1 holds 5 examples where in_dims[1] is 1
    got = func.vmap(lambda a, b: fn(ag, a, b), in_dims=in_dims, out_dims=out_dims)(ours(x), ours(y))
    want = jax.vmap(lambda a, b: fn(jnp, a, b), in_axes=in_dims, out_axes=out_dims)(x, y)
    assert_close(got, np.asarray(want))


def test_nested_vmap_matches_jax_and_the_double_loop(float64_backend):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)

    def f(ns, row, col):
        return ns.tanh(row * col).sum() + row[0]

    got = func.vmap(func.vmap(lambda r, c: f(ag, r, c), in_dims=(None, 1)), in_dims=(0, None))(ours(A[0]), ours(B))
    want = jax.vmap(jax.vmap(lambda r, c: f(jnp, r, c), in_axes=(None, 1)), in_axes=(0, None))(A[0], B)
    loop = [[f(np, A[0][i], B[:, j]) for j in range(5)] for i in range(3)]
    assert_close(got, np.asarray(want))
    assert_close(got, np.array(loop))


def test_closed_over_tensors_get_the_gradient_summed_over_the_batch(float64_backend):
    w = ag.tensor(B, dtype="float64", requires_grad=True)
    out = func.vmap(lambda x: ag.tanh(x @ w).sum())(ours(A))
    out.sum().backward()
    expected = sum(ours(A[i]).T @ (1 - ag.tanh(ours(A[i]) @ ours(B)) ** 2) for i in range(5))
    assert_close(w.grad, expected)


def test_vmap_of_grad_is_the_per_example_gradient(float64_backend):
    w = ours(B)
    per_example = func.vmap(func.grad(lambda x: ag.sin(x @ w).sum()))(ours(A))
    for i in range(5):
        assert_close(per_example[i], func.grad(lambda x: ag.sin(x @ w).sum())(ours(A[i])))


def test_chunked_equals_whole(float64_backend):
    f = func.vmap(lambda x: ag.exp(x).sum(axis=0), chunk_size=2)
    assert_close(f(ours(A)), func.vmap(lambda x: ag.exp(x).sum(axis=0))(ours(A)))


def test_randomness(float64_backend):
    x = ag.ones((4, 1000))
    with pytest.raises(RuntimeError, match="randomness='different'"):
        func.vmap(lambda r: r * ag.randn(1000))(x)
    different = func.vmap(lambda r: r * ag.randn(1000, dtype=r.dtype), randomness="different")(x)
    same = func.vmap(lambda r: r * ag.randn(1000, dtype=r.dtype), randomness="same")(x)
    assert not np.allclose(different.numpy()[0], different.numpy()[1])
    assert np.array_equal(same.numpy()[0], same.numpy()[1])


def test_data_dependent_python_branch_is_refused(float64_backend):
    with pytest.raises(RuntimeError, match="ag.where"):
        func.vmap(lambda x: x if x.sum() > 0 else -x)(ours(A))


def test_bad_dims_are_refused(float64_backend):
    with pytest.raises(ValueError, match="different sizes"):
        func.vmap(lambda a, b: a + b)(ours(A), ours(B))
    with pytest.raises(ValueError, match="no input is mapped"):
        func.vmap(lambda a: a, in_dims=None)(ours(A))
    with pytest.raises(ValueError, match="out of range"):
        func.vmap(lambda a: a, in_dims=3)(ours(A))


def test_transforms_compile_on_jax():
    """A compiled step that takes per-sample gradients and a Hessian traces whole on jax (no
    fallback) and gives what the step gives op by op."""
    backends = pytest.importorskip("backends")
    try:
        jax_backend = backends.get("jax")
    except (backends.BackendUnavailableError, RuntimeError) as e:
        pytest.skip(f"jax unavailable: {e}")
    import warnings

    import nn
    import nn.functional as F

    with backends.use(jax_backend), warnings.catch_warnings():
        warnings.simplefilter("error", ag.CompileFallbackWarning)
        ag.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))

        def loss_of_one(params, x, y):
            return F.cross_entropy(func.functional_call(model, params, (x[None],)), y[None])

        def step(x, y):
            params = {k: p.detach() for k, p in model.named_parameters()}
            per_sample = func.vmap(func.grad(loss_of_one), in_dims=(None, 0, 0))(params, x, y)
            curvature = func.hessian(lambda v: (ag.sin(v) ** 2).sum())(x[0])
            return per_sample["0.weight"].sum() + curvature.sum()

        x, y = ag.randn(16, 4), ag.arange(16) % 3
        assert_close(ag.compile(step, modules=[model])(x, y), step(x, y), "float32")


def test_per_example_indices_gather_from_a_shared_table(float64_backend):
    """Indices that differ per example pick rows of a table every example shares (an
    embedding): as the loop does, and the table's gradient is summed over the batch."""
    import nn.functional as F

    table = ag.tensor(B, dtype="float64", requires_grad=True)  # 4 rows
    ids = ag.tensor([[3, 0], [1, 1], [2, 3]])
    got = func.vmap(lambda i: table[i] * 2 + ag.take(table, i, axis=0) + F.embedding(i, table))(ids)
    for k in range(3):
        assert_close(got[k], 4 * table.detach()[ids[k]])
    got.sum().backward()
    counts = np.bincount(ids.numpy().ravel(), minlength=4)[:, None]
    assert_close(table.grad, 4 * np.broadcast_to(counts, B.shape))
    per_example = func.vmap(func.grad(lambda w, i: (F.embedding(i, w) ** 2).sum()), in_dims=(None, 0))(
        table.detach(), ids
    )
    for k in range(3):
        assert_close(per_example[k], func.grad(lambda w, i: (F.embedding(i, w) ** 2).sum())(table.detach(), ids[k]))


def test_a_batch_backend_is_not_kept_once_its_call_returns(float64_backend):
    """Each call makes a batch backend; neither it nor its raw namespace outlives the call."""
    import gc
    import weakref

    from autograd_core.graph import namespace

    batches = []
    f = func.vmap(lambda x: batches.append(weakref.ref(x.backend)) or ag.exp(x).sum())
    f(ours(A))
    gc.collect()
    cached = len(namespace._cache)
    for _ in range(200):
        f(ours(A))
    gc.collect()
    assert len(namespace._cache) == cached
    assert all(ref() is None for ref in batches)


def test_a_named_result_keeps_its_fields(float64_backend):
    """slogdet's (sign, logabsdet) comes back as its own named tuple, each field per example."""
    matrices = rng.standard_normal((4, 3, 3))
    got = func.vmap(ag.linalg.slogdet)(ours(matrices))
    assert type(got) is type(ag.linalg.slogdet(ours(matrices[0])))
    for i in range(4):
        want = ag.linalg.slogdet(ours(matrices[i]))
        assert_close(got.sign[i], want.sign)
        assert_close(got.logabsdet[i], want.logabsdet)
