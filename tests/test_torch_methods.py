"""A sweep of the `torch.Tensor` methods a model or training script commonly uses: each called
the same way on our tensor and on PyTorch's, in float64, compared on values, shapes, dtypes
and (where the result is differentiable) gradients, on every backend."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

import autograd_core as ag
from helpers import assert_close, host

RNG = np.random.default_rng(5)
# values clear of 0 and of each other (no ties, no kinks): every method is differentiable here
X = np.round(RNG.uniform(0.2, 2.0, (3, 4)) * RNG.choice([-1.0, 1.0], (3, 4)), 3) + np.arange(12).reshape(3, 4) * 1e-4
Y = RNG.uniform(0.5, 1.5, (3, 4))
SQUARE = RNG.standard_normal((4, 4))
BATCH = RNG.standard_normal((2, 3, 4))
MASK = X > 0
SPECIAL = np.array([[1.0, np.nan, np.inf], [-np.inf, -2.5, 0.0]])
NAN_ROW = np.array(
    [[1.0, np.nan, 1.0, 1.0], [1.0] * 4, [np.nan, 1.0, 1.0, np.nan]]
)  # X divided by it: NaNs in rows 0, 2


def other(m, values=Y):
    return m.tensor(values, dtype=m.float64)


# name: the method call, written once for both libraries (`t` the tensor, `m` the module)
METHODS = {
    # elementwise
    "abs": lambda t, m: t.abs(),
    "neg": lambda t, m: t.neg(),
    "exp": lambda t, m: t.exp(),
    "expm1": lambda t, m: t.expm1(),
    "log": lambda t, m: t.abs().log(),
    "log1p": lambda t, m: t.abs().log1p(),
    "log2": lambda t, m: t.abs().log2(),
    "sqrt": lambda t, m: t.abs().sqrt(),
    "rsqrt": lambda t, m: t.abs().rsqrt(),
    "square": lambda t, m: t.square(),
    "reciprocal": lambda t, m: t.reciprocal(),
    "sigmoid": lambda t, m: t.sigmoid(),
    "tanh": lambda t, m: t.tanh(),
    "relu": lambda t, m: t.relu(),
    "sin": lambda t, m: t.sin(),
    "cos": lambda t, m: t.cos(),
    "erf": lambda t, m: t.erf(),
    "sign": lambda t, m: t.sign(),
    "sgn": lambda t, m: t.sgn(),
    "floor": lambda t, m: (t * 3).floor(),
    "ceil": lambda t, m: (t * 3).ceil(),
    "round": lambda t, m: (t * 3).round(),
    "round_decimals": lambda t, m: t.round(decimals=1),
    "trunc": lambda t, m: (t * 3).trunc(),
    "frac": lambda t, m: (t * 3).frac(),
    "pow_scalar": lambda t, m: t.pow(2),
    "pow_tensor": lambda t, m: t.abs().pow(other(m)),
    "clamp_min_only": lambda t, m: t.clamp(min=-0.5),
    "clamp_max_only": lambda t, m: t.clamp(max=0.5),
    "clamp_both": lambda t, m: t.clamp(-0.5, 0.5),
    "clip": lambda t, m: t.clip(min=-0.5, max=0.5),
    "clamp_tensor": lambda t, m: t.clamp(min=other(m) - 1.0),
    "remainder": lambda t, m: t.remainder(0.7),
    "fmod": lambda t, m: t.fmod(0.7),
    "maximum": lambda t, m: t.maximum(other(m) - 1.0),
    "minimum": lambda t, m: t.minimum(other(m) - 1.0),
    "max_other": lambda t, m: t.max(other(m) - 1.0),
    "min_other": lambda t, m: t.min(other(m) - 1.0),
    "lerp_scalar": lambda t, m: t.lerp(other(m), 0.3),
    "lerp_tensor": lambda t, m: t.lerp(other(m), other(m) * 0.5),
    "addcmul": lambda t, m: t.addcmul(other(m), other(m, Y * 2), value=0.5),
    "addcdiv": lambda t, m: t.addcdiv(other(m), other(m, Y * 2), value=0.5),
    "add_alpha": lambda t, m: t.add(other(m), alpha=2.0),
    "sub_alpha": lambda t, m: t.sub(other(m), alpha=2.0),
    "mul": lambda t, m: t.mul(other(m)),
    "div": lambda t, m: t.div(other(m)),
    "true_divide": lambda t, m: t.true_divide(other(m)),
    "where": lambda t, m: t.where(m.tensor(MASK), other(m)),
    "where_scalar": lambda t, m: t.where(m.tensor(MASK), 0.0),
    "masked_fill": lambda t, m: t.masked_fill(m.tensor(MASK), 1.5),
    "nan_to_num": lambda t, m: t.log().nan_to_num(),
    "nan_to_num_values": lambda t, m: m.tensor(SPECIAL).nan_to_num(nan=0.5, posinf=9.0, neginf=-9.0),
    "softmax": lambda t, m: t.softmax(1),
    "log_softmax": lambda t, m: t.log_softmax(dim=0),
    # reductions
    "sum_dims": lambda t, m: t.sum((0, 1)),
    "sum_keepdim": lambda t, m: t.sum(dim=1, keepdim=True),
    "mean_dims": lambda t, m: t.mean((0, 1), keepdim=True),
    "mean_dim": lambda t, m: t.mean(-1),
    "mean_dtype": lambda t, m: t.mean(1, dtype=m.float32),
    "nansum": lambda t, m: t.nansum(1),
    "nanmean": lambda t, m: t.nanmean(0),
    "prod": lambda t, m: t.prod(),
    "std": lambda t, m: t.std(),
    "std_dim": lambda t, m: t.std(1),
    "std_unbiased_false": lambda t, m: t.std(1, unbiased=False),
    "std_correction": lambda t, m: t.std(dim=0, correction=0, keepdim=True),
    "var": lambda t, m: t.var(),
    "var_dim": lambda t, m: t.var(0, keepdim=True),
    "var_unbiased_false": lambda t, m: t.var(unbiased=False),
    "var_correction": lambda t, m: t.var(1, correction=2),
    "norm": lambda t, m: t.norm(),
    "norm_p1_dim": lambda t, m: t.norm(1, dim=1),
    "norm_p2_dim_keepdim": lambda t, m: t.norm(p=2, dim=0, keepdim=True),
    "norm_inf": lambda t, m: t.norm(float("inf"), dim=1),
    "amax": lambda t, m: t.amax(1),
    "amin_dims": lambda t, m: t.amin((0, 1)),
    "amax_keepdim": lambda t, m: t.amax(dim=0, keepdim=True),
    "logsumexp": lambda t, m: t.logsumexp(1),
    "logsumexp_keepdim": lambda t, m: t.logsumexp(dim=0, keepdim=True),
    "max": lambda t, m: t.max(),
    "median": lambda t, m: t.median(),
    "median_dim": lambda t, m: t.median(1),
    "median_dim_keepdim": lambda t, m: t.median(0, keepdim=True),
    "median_with_nan": lambda t, m: (t / m.tensor(NAN_ROW)).median(1),
    "median_all_with_nan": lambda t, m: (t / m.tensor(NAN_ROW)).median(),
    "kthvalue": lambda t, m: t.kthvalue(2, 1),
    "kthvalue_keepdim": lambda t, m: t.kthvalue(3, dim=0, keepdim=True),
    "cumsum": lambda t, m: t.cumsum(dim=1),
    "diff": lambda t, m: t.diff(dim=0),
    "diff_n": lambda t, m: t.diff(n=2),
    "argmax": lambda t, m: t.argmax(),
    "argmax_dim": lambda t, m: t.argmax(1),
    "argmin_keepdim": lambda t, m: t.argmin(dim=0, keepdim=True),
    "argsort": lambda t, m: t.argsort(1, descending=True),
    "unique": lambda t, m: (t * 2).round().detach().unique(),
    "unique_inverse_counts": lambda t, m: (t * 2).round().detach().unique(return_inverse=True, return_counts=True),
    "unique_ints": lambda t, m: m.tensor([[3, 1], [3, -2]]).unique(return_counts=True),
    "all_dim": lambda t, m: (t > 0).all(1),
    "any_dim_keepdim": lambda t, m: (t > 0).any(dim=0, keepdim=True),
    "all": lambda t, m: (t > -5).all(),
    "count_nonzero": lambda t, m: (t > 0).count_nonzero(),
    "count_nonzero_dim": lambda t, m: (t > 0).count_nonzero(dim=1),
    "nonzero": lambda t, m: (t > 0).nonzero(),
    # comparisons
    "eq": lambda t, m: t.eq(other(m) - 1.0),
    "ne": lambda t, m: t.ne(t),
    "lt": lambda t, m: t.lt(0.5),
    "le": lambda t, m: t.le(other(m) - 1.0),
    "gt": lambda t, m: t.gt(0.5),
    "ge": lambda t, m: t.ge(other(m) - 1.0),
    "isclose": lambda t, m: t.isclose(t + 1e-9),
    "isnan": lambda t, m: m.tensor(SPECIAL).isnan(),
    "isinf": lambda t, m: m.tensor(SPECIAL).isinf(),
    "isfinite": lambda t, m: m.tensor(SPECIAL).isfinite(),
    "logical_and": lambda t, m: (t > 0).logical_and(t < 1),
    "logical_not": lambda t, m: (t > 0).logical_not(),
    # shapes
    "view": lambda t, m: t.view(4, 3),
    "view_minus_one": lambda t, m: t.view(-1, 6),
    "view_as": lambda t, m: t.view_as(m.tensor(SQUARE[:3].T)),
    "reshape_as": lambda t, m: t.reshape_as(m.tensor(SQUARE[:3].T)),
    "flatten": lambda t, m: t.flatten(),
    "flatten_range": lambda t, m: t.reshape(3, 2, 2).flatten(1, 2),
    "flatten_start": lambda t, m: t.reshape(3, 2, 2).flatten(start_dim=1),
    "unflatten": lambda t, m: t.unflatten(1, (2, 2)),
    "unflatten_minus_one": lambda t, m: t.unflatten(-1, (-1, 2)),
    "squeeze_dim": lambda t, m: t.reshape(3, 1, 4).squeeze(1),
    "squeeze_dims": lambda t, m: t.reshape(1, 3, 1, 4).squeeze((0, 2)),
    "squeeze_not_one": lambda t, m: t.squeeze(0),
    "unsqueeze": lambda t, m: t.unsqueeze(-1),
    "permute": lambda t, m: t.reshape(3, 2, 2).permute(2, 0, 1),
    "permute_tuple": lambda t, m: t.reshape(3, 2, 2).permute((1, 2, 0)),
    "transpose": lambda t, m: t.transpose(0, 1),
    "t": lambda t, m: t.t(),
    "T": lambda t, m: t.T,
    "mT": lambda t, m: t.reshape(3, 2, 2).mT,
    "movedim": lambda t, m: t.reshape(3, 2, 2).movedim(0, -1),
    "swapdims": lambda t, m: t.reshape(3, 2, 2).swapdims(0, 2),
    "chunk": lambda t, m: t.chunk(2, dim=1),
    "chunk_uneven": lambda t, m: t.chunk(2),
    "split_int": lambda t, m: t.split(3, dim=1),
    "split_list": lambda t, m: t.split([1, 3], dim=1),
    "tensor_split": lambda t, m: t.tensor_split(3, dim=1),
    "unbind": lambda t, m: t.unbind(1),
    "narrow": lambda t, m: t.narrow(1, 1, 2),
    "select": lambda t, m: t.select(1, -1),
    "repeat": lambda t, m: t.repeat(2, 1, 3),
    "repeat_interleave": lambda t, m: t.repeat_interleave(2, dim=0),
    "repeat_interleave_flat": lambda t, m: t.repeat_interleave(2),
    "tile": lambda t, m: t.tile((2,)),
    "flip": lambda t, m: t.flip(0, 1),
    "flip_list": lambda t, m: t.flip([1]),
    "fliplr": lambda t, m: t.fliplr(),
    "roll": lambda t, m: t.roll(-1),
    "expand_as": lambda t, m: t[:1].expand_as(t),
    "expand": lambda t, m: t[:, :1].expand(3, 5),
    "diag": lambda t, m: t[0].diag(),
    "diag_of_matrix": lambda t, m: t.diag(1),
    "diagonal": lambda t, m: t.diagonal(),
    "diagonal_offset": lambda t, m: t.diagonal(offset=-1),
    "diag_embed": lambda t, m: t.diag_embed(),
    "tril": lambda t, m: t.tril(),
    "triu": lambda t, m: t.triu(1),
    "contiguous": lambda t, m: t.contiguous(),
    "clone": lambda t, m: t.clone(),
    "detach": lambda t, m: t.detach(),
    # linear algebra
    "matmul": lambda t, m: t.matmul(other(m).T),
    "mm": lambda t, m: t.mm(other(m).T),
    "bmm": lambda t, m: m.tensor(BATCH).bmm(t.T.expand(2, 4, 3)),
    "mv": lambda t, m: t.mv(other(m)[0]),
    "dot": lambda t, m: t[0].dot(other(m)[1]),
    "inner": lambda t, m: t.inner(other(m)),
    "outer": lambda t, m: t[0].outer(other(m)[1]),
    "cross": lambda t, m: t[:, :3].cross(other(m)[:, :3], dim=1),
    "trace": lambda t, m: t.trace(),
    "addmm": lambda t, m: t.addmm(other(m)[:, :2], other(m, SQUARE)[:2], beta=0.5, alpha=2.0),
    "einsum_free": lambda t, m: m.einsum("ij,kj->ik", t, other(m)),
    # dtypes
    "float": lambda t, m: (t * 3).long().float(),
    "double": lambda t, m: t.float().double(),
    "half": lambda t, m: t.half(),
    "float_to_float32": lambda t, m: t.float().to(m.float32),
    "long": lambda t, m: (t * 3).long(),
    "int": lambda t, m: (t * 3).int(),
    "bool": lambda t, m: (t * 0.5).round().bool(),
    "to_dtype": lambda t, m: t.to(m.float32),
    "to_dtype_keyword": lambda t, m: t.to(dtype=m.float32),
    "to_other": lambda t, m: t.to(m.tensor([1], dtype=m.int32)),
    "type_as": lambda t, m: t.type_as(m.tensor([1], dtype=m.int32)),
    "type_as_float": lambda t, m: t.float().type_as(t),
    # new tensors
    "new_zeros": lambda t, m: t.new_zeros((2, 3)),
    "new_ones": lambda t, m: t.new_ones(2, 3),
    "new_full": lambda t, m: t.new_full((2,), 7.0),
    "new_tensor": lambda t, m: t.new_tensor([1.0, 2.0]),
    "zeros_like": lambda t, m: m.zeros_like(t),
    "ones_like": lambda t, m: m.ones_like(t),
    "full_like": lambda t, m: m.full_like(t, 2.0),
}

# what the result is, on each side, as a comparable value
ATTRIBUTES = {
    "numel": lambda t: t.numel(),
    "dim": lambda t: t.dim(),
    "ndimension": lambda t: t.ndimension(),
    "ndim": lambda t: t.ndim,
    "size": lambda t: tuple(t.size()),
    "size_dim": lambda t: t.size(1),
    "size_negative_dim": lambda t: t.size(-1),
    "shape": lambda t: tuple(t.shape),
    "element_size": lambda t: t.element_size(),
    "float_element_size": lambda t: t.float().element_size(),
    "is_floating_point": lambda t: t.is_floating_point(),
    "long_is_floating_point": lambda t: t.long().is_floating_point(),
    "is_complex": lambda t: t.is_complex(),
    "requires_grad": lambda t: t.requires_grad,
    "is_leaf": lambda t: t.is_leaf,
    "result_is_leaf": lambda t: (t * 2).is_leaf,
    "item": lambda t: t[1, 2].item(),
    "tolist": lambda t: t[0].tolist(),
    "equal": lambda t: t.equal(t.clone()),
    "not_equal": lambda t: t.equal(t + 1),
    "allclose": lambda t: t.allclose(t + 1e-9),
    "len": lambda t: len(t),
    "float_of_one": lambda t: float(t[0, 0]),
    "dtype_name": lambda t: dtype_name(t),
    "long_dtype_name": lambda t: dtype_name(t.long()),
    "new_empty": lambda t: (tuple(t.new_empty((2, 3)).shape), dtype_name(t.new_empty(2))),
}


def dtype_name(x) -> str:
    return str(x.dtype).rsplit(".", 1)[-1]


def leaves(out) -> list:
    """A method's results: one tensor, a tuple of them (chunk, median along a dim...), or a shape."""
    return list(out) if isinstance(out, (tuple, list)) and not isinstance(out, torch.Size) else [out]


def has_float16() -> bool:
    try:
        ag.zeros(1, dtype="float16")
    except TypeError:
        return False
    return True


def both(values=X):
    return (
        ag.tensor(values, dtype="float64", requires_grad=True),
        torch.tensor(values, dtype=torch.float64, requires_grad=True),
    )


@pytest.mark.parametrize("name", METHODS)
def test_method_matches_pytorch(float64_backend, name):
    ours, theirs = both()
    if name == "half" and not has_float16():
        with pytest.raises(TypeError, match="float16.* not supported"):
            ours.half()
        return
    got, expected = leaves(METHODS[name](ours, ag)), leaves(METHODS[name](theirs, torch))
    assert len(got) == len(expected)
    weights = np.random.default_rng(1)
    our_loss, their_loss = 0.0, 0.0
    for mine, ref in zip(got, expected):
        if not isinstance(ref, torch.Tensor):
            assert tuple(mine) == tuple(ref)
            continue
        assert tuple(mine.shape) == tuple(ref.shape)
        assert mine.dtype.name == dtype_name(ref), (mine.dtype, ref.dtype)
        assert_close(mine, ref.detach().to(torch.float64) if ref.dtype == torch.float16 else ref.detach())
        if ref.requires_grad:
            w = weights.standard_normal(tuple(ref.shape))
            our_loss = our_loss + (mine * ag.tensor(w, dtype="float64")).sum()
            their_loss = their_loss + (ref.double() * torch.tensor(w)).sum()
    assert isinstance(their_loss, float) == isinstance(our_loss, float)
    if not isinstance(their_loss, float):
        our_loss.backward()
        their_loss.backward()
        assert_close(ours.grad, theirs.grad + torch.zeros_like(theirs))  # sgn's gradient is a ZeroTensor


@pytest.mark.parametrize("name", ATTRIBUTES)
def test_attribute_matches_pytorch(float64_backend, name):
    ours, theirs = both()
    assert ATTRIBUTES[name](ours) == ATTRIBUTES[name](theirs)


# name: the in-place call (on a tensor that does not require grad) and what it returns
IN_PLACE = {
    "add_": lambda t, m: t.add_(other(m)),
    "add_alpha_": lambda t, m: t.add_(other(m), alpha=-2.0),
    "sub_": lambda t, m: t.sub_(1.5),
    "mul_": lambda t, m: t.mul_(other(m)),
    "div_": lambda t, m: t.div_(2.0),
    "pow_": lambda t, m: t.pow_(2),
    "clamp_": lambda t, m: t.clamp_(min=-0.5),
    "clamp_max_": lambda t, m: t.clamp_(max=0.5),
    "clip_": lambda t, m: t.clip_(-0.5, 0.5),
    "fill_": lambda t, m: t.fill_(3.0),
    "zero_": lambda t, m: t.zero_(),
    "copy_": lambda t, m: t.copy_(other(m)),
    "masked_fill_": lambda t, m: t.masked_fill_(m.tensor(MASK), 0.0),
    "exp_": lambda t, m: t.exp_(),
    "abs_": lambda t, m: t.abs_(),
    "neg_": lambda t, m: t.neg_(),
    "sqrt_": lambda t, m: t.abs_().sqrt_(),
    "lerp_": lambda t, m: t.lerp_(other(m), 0.25),
    "addcmul_": lambda t, m: t.addcmul_(other(m), other(m), value=2.0),
    "addcdiv_": lambda t, m: t.addcdiv_(other(m), other(m, Y * 3), value=2.0),
    "sigmoid_": lambda t, m: t.sigmoid_(),
    "tanh_": lambda t, m: t.tanh_(),
    "relu_": lambda t, m: t.relu_(),
    "uniform_shape": lambda t, m: tuple(t.uniform_(-1.0, 1.0).shape),
    "normal_shape": lambda t, m: tuple(t.normal_(0.0, 2.0).shape),
    "requires_grad_": lambda t, m: t.requires_grad_().requires_grad,
}


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_method_matches_pytorch(float64_backend, name):
    ours, theirs = ag.tensor(X, dtype="float64"), torch.tensor(X, dtype=torch.float64)
    got, expected = IN_PLACE[name](ours, ag), IN_PLACE[name](theirs, torch)
    if isinstance(expected, torch.Tensor):
        assert got is ours and expected is theirs  # the same object, changed
        assert_close(ours, theirs)
    elif name.endswith("_shape"):
        assert got == expected and np.all(np.abs(host(ours)) < 100)
    else:
        assert got == expected


def test_in_place_method_on_a_leaf_that_requires_grad_is_refused(float64_backend):
    ours = ag.tensor(X, dtype="float64", requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        ours.add_(1.0)
    with ag.no_grad():
        ours.mul_(2.0)
    assert_close(ours, X * 2)


# --- random shapes and dims, for the reductions ------------------------------------------------
REDUCTIONS = {
    "sum": lambda t, dim, keepdim: t.sum(dim, keepdim=keepdim),
    "mean": lambda t, dim, keepdim: t.mean(dim, keepdim=keepdim),
    "amax": lambda t, dim, keepdim: t.amax(dim, keepdim=keepdim),
    "logsumexp": lambda t, dim, keepdim: t.logsumexp(dim, keepdim=keepdim),
    "std": lambda t, dim, keepdim: t.std(dim, keepdim=keepdim),
    "var_biased": lambda t, dim, keepdim: t.var(dim, unbiased=False, keepdim=keepdim),
    "norm": lambda t, dim, keepdim: t.norm(2, dim, keepdim=keepdim),
    "prod": lambda t, dim, keepdim: t.prod(dim[0], keepdim=keepdim),
    "max_values": lambda t, dim, keepdim: t.max(dim[0], keepdim=keepdim).values,
    "median_values": lambda t, dim, keepdim: t.median(dim[0], keepdim=keepdim).values,
    "argmin": lambda t, dim, keepdim: t.argmin(dim[0], keepdim=keepdim),
    "cumsum": lambda t, dim, keepdim: t.cumsum(dim[0]),
    "softmax": lambda t, dim, keepdim: t.softmax(dim[0]),
}


@st.composite
def shapes_and_dims(draw):
    shape = tuple(draw(st.lists(st.integers(2, 4), min_size=1, max_size=3)))
    dims = draw(
        st.lists(
            st.integers(-len(shape), len(shape) - 1),
            min_size=1,
            max_size=len(shape),
            unique_by=lambda d: d % len(shape),
        )
    )
    return shape, tuple(dims), draw(st.booleans()), draw(st.integers(0, 2**16))


@pytest.mark.parametrize("name", REDUCTIONS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=shapes_and_dims())
def test_reductions_over_random_shapes_and_dims(float64_backend, name, case):
    shape, dims, keepdim, seed = case
    values = np.random.default_rng(seed).permutation(np.arange(np.prod(shape)) * 0.1 - 1.0).reshape(shape)
    ours, theirs = both(values)
    got, expected = REDUCTIONS[name](ours, dims, keepdim), REDUCTIONS[name](theirs, dims, keepdim)
    assert tuple(got.shape) == tuple(expected.shape) and got.dtype.name == dtype_name(expected)
    assert_close(got, expected.detach())
    if expected.requires_grad:
        w = np.random.default_rng(seed + 1).standard_normal(tuple(expected.shape))
        (got * ag.tensor(w, dtype="float64")).sum().backward()
        (expected * torch.tensor(w)).sum().backward()
        assert_close(ours.grad, theirs.grad)
