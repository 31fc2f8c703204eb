"""Code written against the array API standard, run on our tensors and differentiated.

`autograd_core` is the namespace ``array_namespace(x)`` finds for a Tensor on every backend,
so functions written once for "any conforming library" (a user's own, SciPy's array-API
paths, array-api-extra's) take Tensors, return Tensors and have gradients. Each gradient is
checked against central differences (`ag.gradcheck`), against the analytic one where SciPy
has it, and against PyTorch running the same function natively. The creation functions such
code relies on (asarray of tensors, tril/triu, meshgrid, the default dtypes) are checked here
too: the conformance suite (tests/array_api/run.sh) covers their forward values only.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch

# SciPy reads SCIPY_ARRAY_API once, when first imported; pytest imports every test module in
# one process, so set it before any import of scipy and skip if scipy came first without it.
if "scipy" not in sys.modules:
    os.environ["SCIPY_ARRAY_API"] = "1"
SCIPY_DISPATCHES = os.environ.get("SCIPY_ARRAY_API") == "1"

import array_api_compat  # noqa: E402
import array_api_extra as xpx  # noqa: E402
import scipy.optimize  # noqa: E402
import scipy.special  # noqa: E402

import autograd_core as ag  # noqa: E402
import backends  # noqa: E402
from tests.helpers import assert_close  # noqa: E402
from tests.test_gradcheck import leaf, normal, positive  # noqa: E402
from torch_oracle import (  # noqa: E402
    Arg,
    compare_with_torch,
    normal as torch_normal,  # noqa: E402
)

needs_scipy_dispatch = pytest.mark.skipif(
    not SCIPY_DISPATCHES, reason="scipy was imported before SCIPY_ARRAY_API=1 was set, so it only takes numpy arrays"
)


def test_array_namespace_is_autograd_core(backend):
    x = ag.asarray([1.0, 2.0])
    assert array_api_compat.array_namespace(x) is ag
    assert array_api_compat.array_namespace(x, ag.asarray(3)) is ag
    assert x.__array_namespace__(api_version="2024.12") is ag


# --- a user's function, written once for any namespace ----------------------------------------
def rosen(x):
    """The Rosenbrock function as a user writes it for any array-API library (the issue's example)."""
    xp = array_api_compat.array_namespace(x)
    return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def test_user_rosen_gradient(float64_backend):
    x = leaf(normal((5,)))
    rosen(x).backward()
    assert_close(x.grad, scipy.optimize.rosen_der(x.detach().numpy()))
    assert ag.gradcheck(rosen, [leaf(normal((5,), seed=1))])
    assert ag.gradgradcheck(rosen, [leaf(normal((4,), seed=2))])


# --- SciPy's array-API paths ----------------------------------------------------------------
@needs_scipy_dispatch
def test_scipy_rosen_returns_tensor_with_gradient(float64_backend):
    x = leaf(normal((6,)))
    out = scipy.optimize.rosen(x)
    assert isinstance(out, ag.Tensor) and out.backend is float64_backend and out.shape == ()
    assert_close(out, scipy.optimize.rosen(x.detach().numpy()))
    out.backward()
    assert_close(x.grad, scipy.optimize.rosen_der(x.detach().numpy()))
    assert ag.gradgradcheck(scipy.optimize.rosen, [leaf(normal((4,), seed=1))])


@needs_scipy_dispatch
@pytest.mark.parametrize("axis", [None, 0, -1], ids=["all", "axis0", "axis-1"])
def test_scipy_logsumexp_gradient_is_softmax(float64_backend, axis):
    x = leaf(normal((3, 4)) * 3)
    out = scipy.special.logsumexp(x, axis=axis)
    assert isinstance(out, ag.Tensor) and out.backend is float64_backend
    host = x.detach().numpy()
    assert_close(out, scipy.special.logsumexp(host, axis=axis))
    out.sum().backward()
    softmax = np.exp(host - scipy.special.logsumexp(host, axis=axis, keepdims=True))
    assert_close(x.grad, softmax)
    assert ag.gradcheck(lambda t: scipy.special.logsumexp(t, axis=axis), [leaf(normal((3, 4), seed=1))])


@needs_scipy_dispatch
def test_scipy_logsumexp_against_torch(float64_backend):
    compare_with_torch(
        lambda t: scipy.special.logsumexp(t, axis=1),
        lambda t: torch.logsumexp(t, dim=1),
        [torch_normal(3, 4, scale=3.0)],
    )


# --- array-api-extra: pure array-API functions, given our namespace ----------------------------
def with_nans(*shape: int) -> Arg:
    """Normal draws with every third element NaN (for the NaN-ignoring reductions)."""

    def make(rng):
        values = rng.standard_normal(shape)
        values.flat[::3] = np.nan
        return values

    return Arg(make)


XPX = [  # (id, ours, torch's, input)
    ("cov", lambda m: xpx.cov(m, xp=ag), torch.cov, torch_normal(3, 5)),
    ("sinc", lambda x: xpx.sinc(x, xp=ag), torch.sinc, torch_normal(2, 3)),
    ("kron", lambda x: xpx.kron(x, x[:1, ::-1], xp=ag), lambda x: torch.kron(x, x[:1].flip(-1)), torch_normal(2, 3)),
    ("atleast_nd", lambda x: xpx.atleast_nd(x, ndim=3, xp=ag), lambda x: x.reshape(1, 1, -1) * 1, torch_normal(4)),
    (
        "pad",
        lambda x: xpx.pad(x, ((1, 0), (0, 2)), constant_values=1.5, xp=ag),
        lambda x: torch.nn.functional.pad(x, (0, 2, 1, 0), value=1.5),
        torch_normal(2, 3),
    ),
    (
        "create_diagonal",
        lambda x: xpx.create_diagonal(x, offset=1, xp=ag),
        lambda x: torch.diag_embed(x, offset=1),
        torch_normal(2, 3),
    ),
    (
        "apply_where",
        lambda x: xpx.apply_where(x > 0, x, ag.log, lambda t: t * t, xp=ag),
        lambda x: torch.where(x > 0, torch.log(x.abs()), x * x),
        torch_normal(3, 4),
    ),
    ("nanmean", lambda x: xpx.nanmean(x, axis=1, xp=ag), lambda x: torch.nanmean(x, dim=1), with_nans(3, 4)),
    ("nansum", lambda x: xpx.nansum(x, axis=0, xp=ag), lambda x: torch.nansum(x, dim=0), with_nans(3, 4)),
]


@pytest.mark.parametrize(("ours", "arg"), [pytest.param(o, a, id=n) for n, o, _, a in XPX])
def test_array_api_extra_gradcheck(float64_backend, ours, arg):
    assert ag.gradcheck(ours, [leaf(arg.make(np.random.default_rng(0)))])


@pytest.mark.parametrize(("ours", "theirs", "arg"), [pytest.param(o, t, a, id=n) for n, o, t, a in XPX])
def test_array_api_extra_against_torch(float64_backend, ours, theirs, arg):
    compare_with_torch(ours, theirs, [arg])


def test_array_api_extra_second_derivative(float64_backend):
    assert ag.gradgradcheck(lambda m: xpx.cov(m, xp=ag), [leaf(normal((2, 4)))])


# --- the creation functions such code calls ------------------------------------------------------
def test_default_dtypes(backend):
    defaults = ag.__array_namespace_info__().default_dtypes()
    cases = {
        "full int": (ag.full((2,), 1), defaults["integral"]),
        "full float": (ag.full((2,), 1.0), defaults["real floating"]),
        "full bool": (ag.full((2,), True), ag.bool),
        "full complex": (ag.full((2,), 1j), defaults["complex floating"]),
        "arange int": (ag.arange(3), defaults["integral"]),
        "arange float": (ag.arange(0, 1, 0.5), defaults["real floating"]),
        "linspace": (ag.linspace(0, 1, 3), defaults["real floating"]),
        "linspace complex": (ag.linspace(0, 1j, 3), defaults["complex floating"]),
        "eye": (ag.eye(2), defaults["real floating"]),
        "zeros": (ag.zeros((2, 3)), defaults["real floating"]),
        "empty": (ag.empty(2), defaults["real floating"]),
        "asarray int": (ag.asarray([1, 2]), defaults["integral"]),
        "asarray float": (ag.asarray([1, 2.5]), defaults["real floating"]),
    }
    for name, (t, dtype) in cases.items():
        assert t.dtype == dtype, name
        assert t.backend is backend, name


def test_pytorch_forms_and_standard_forms_agree(backend):
    assert ag.zeros(2, 3).shape == ag.zeros((2, 3)).shape == ag.zeros(shape=[2, 3]).shape == (2, 3)
    assert ag.ones(4, dtype=ag.int32).tolist() == [1, 1, 1, 1]
    assert ag.arange(1, 7, 2).tolist() == [1, 3, 5] and ag.arange(5, stop=2, step=-1).tolist() == [5, 4, 3]
    assert ag.eye(2, 3, k=1).tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    assert ag.linspace(0.0, 1.0, 4, endpoint=False).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert ag.zeros(2, requires_grad=True).requires_grad
    assert ag.full((2,), 3, device=backend.device).backend is backend


def test_like_functions_keep_backend_and_dtype(backend):
    x = ag.asarray([[1, 2, 3]], dtype=ag.int16)
    other = "torch" if backend.name == "numpy" else "numpy"
    with backends.use(other):
        made = [ag.zeros_like(x), ag.ones_like(x), ag.empty_like(x), ag.full_like(x, 7)]
        floats = ag.zeros_like(x, dtype=ag.float32)
    for t in made:
        assert (t.backend, t.dtype, t.shape) == (backend, ag.int16, (1, 3))
    assert made[1].tolist() == [[1, 1, 1]] and made[3].tolist() == [[7, 7, 7]]
    assert floats.dtype == ag.float32 and floats.backend is backend


def test_asarray_copy_semantics(float64_backend):
    x = leaf(normal((3,)))
    assert ag.asarray(x) is x and ag.asarray(x, copy=False) is x and ag.asarray(x, dtype=ag.float64) is x
    with pytest.raises(ValueError, match="copy"):
        ag.asarray(x, dtype=ag.float32, copy=False)
    copied = ag.asarray(x, copy=True)
    assert copied is not x and copied.requires_grad
    (copied * 2.0).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(ValueError, match="copy"):
        ag.asarray([1.0, 2.0], copy=False)


def test_asarray_shares_a_native_array_unless_copy(float64_backend):
    if not float64_backend.mutable:
        pytest.skip(f"{float64_backend.name} arrays are immutable: shared and copied memory cannot be told apart")
    native = float64_backend.asarray(np.zeros(3), float64_backend.dtype("float64"))
    shared, copied = ag.asarray(native), ag.asarray(native, copy=True)
    native[0] = 5.0
    assert shared.tolist() == [5.0, 0.0, 0.0] and copied.tolist() == [0.0, 0.0, 0.0]


def test_asarray_of_tensors_is_differentiable(float64_backend):
    def nested(a):
        return ag.asarray([[a[0], 1.0], [a[1] * 2, a[2]]])

    a = leaf(normal((3,)))
    assert nested(a).shape == (2, 2) and nested(a).dtype == ag.float64
    assert ag.gradcheck(nested, [a])
    assert ag.asarray([ag.asarray(1), 2.5]).dtype == ag.float32  # scalars promote as in arithmetic
    with pytest.raises(ValueError, match="copy"):
        ag.asarray([a, a], copy=False)


def test_device_by_the_librarys_name(backend):
    if backend.name not in ("numpy", "torch", "jax"):
        pytest.skip(f"{backend.name} has no device called 'cpu'")
    made = ag.zeros(2, device="cpu")
    assert made.backend is backend and (made + ag.ones(2)).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("k", [-1, 0, 2])
@pytest.mark.parametrize("name", ["tril", "triu"])
def test_triangles(float64_backend, name, k):
    ours = getattr(ag, name)
    compare_with_torch(lambda x: ours(x, k=k), lambda x: getattr(torch, name)(x, diagonal=k), [torch_normal(2, 3, 4)])
    assert ag.gradcheck(lambda x: ours(x, k=k), [leaf(normal((3, 4)))])
    assert ag.gradgradcheck(lambda x: ours(x * x, k=k), [leaf(normal((3, 3)))])


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid(float64_backend, indexing):
    compare_with_torch(
        lambda a, b, c: ag.stack(ag.meshgrid(a, b, c, indexing=indexing)),
        lambda a, b, c: torch.stack(torch.meshgrid(a, b, c, indexing=indexing)),
        [torch_normal(2), torch_normal(3), torch_normal(4)],
    )
    assert ag.gradcheck(
        lambda a, b: ag.stack(ag.meshgrid(a, b, indexing=indexing)), [leaf(normal((2,))), leaf(positive((3,)))]
    )
    with pytest.raises(ValueError, match="indexing"):
        ag.meshgrid(ag.arange(2), indexing="ji")


def test_from_dlpack(backend):
    source = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = ag.from_dlpack(source)
    assert (out.backend, out.dtype, out.tolist()) == (backend, ag.int32, source.tolist())
    again = ag.from_dlpack(out)
    assert again.backend is backend and again.tolist() == source.tolist()
