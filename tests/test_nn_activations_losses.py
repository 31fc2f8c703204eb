"""The activations and losses of `nn.functional` and their modules, proven three ways: against
PyTorch (values and gradients in float64, at random points and at the edges: kinks, large
magnitudes, ignored targets, probabilities of 0 and 1), against central differences on every
backend (`ag.gradcheck`, away from kinks; `ag.gradgradcheck` for a few), and by their errors.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import autograd_core as ag
import nn
import nn.functional as F
from helpers import assert_close, host
from torch_oracle import Arg, compare_with_torch, const, normal, positive

TF = torch.nn.functional
REDUCTIONS = ("mean", "sum", "none")
# the warnings PyTorch gives (and so do we) for kl_div's 'mean' and an implicit softmax dim
pytestmark = [
    pytest.mark.filterwarnings("ignore:reduction. 'mean' divides"),
    pytest.mark.filterwarnings("ignore:Implicit dimension choice"),
]


def points(*values: float) -> Arg:
    """Fixed, differentiated inputs: the kinks and large magnitudes of a function."""
    return Arg(lambda r: np.asarray(values, dtype=np.float64))


def uniform(*shape: int, low: float = 0.0, high: float = 1.0, grad: bool = True) -> Arg:
    return Arg(lambda r: r.uniform(low, high, shape), grad=grad)


def probabilities(*shape: int, axis: int = -1) -> Arg:
    """Rows of class probabilities (summing to 1 along `axis`), differentiated as PyTorch does."""

    def make(r: np.random.Generator) -> np.ndarray:
        p = r.uniform(0.1, 1.0, shape)
        return p / p.sum(axis=axis, keepdims=True)

    return Arg(make)


# --- activations: (name, ours, theirs, edge points) ------------------------------------------
def torch_hardsigmoid(x: torch.Tensor) -> torch.Tensor:
    """PyTorch's hardsigmoid with an exact gradient: its kernel multiplies a float64 gradient by
    the float32 constant 1/6 (a relative error of 3e-8). relu6(x + 3) / 6 is the same function in
    PyTorch, with the same gradient (0) at both kinks."""
    return TF.relu6(x + 3) / 6


LARGE = (-1000.0, 1000.0)
ACTIVATIONS = [
    ("leaky_relu", F.leaky_relu, TF.leaky_relu, (0.0, *LARGE)),
    ("leaky_relu_0.2", lambda x: F.leaky_relu(x, 0.2), lambda x: TF.leaky_relu(x, 0.2), (0.0, -2.0, 2.0)),
    ("elu", F.elu, TF.elu, (0.0, *LARGE)),
    ("elu_1.5", lambda x: F.elu(x, 1.5), lambda x: TF.elu(x, 1.5), (0.0, *LARGE)),
    ("selu", F.selu, TF.selu, (0.0, *LARGE)),
    ("celu_0.5", lambda x: F.celu(x, 0.5), lambda x: TF.celu(x, 0.5), (0.0, *LARGE)),
    ("silu", F.silu, TF.silu, (0.0, *LARGE)),
    ("mish", F.mish, TF.mish, (0.0, *LARGE)),
    ("softplus", F.softplus, TF.softplus, (0.0, 20.0, 19.5, 20.5, *LARGE)),
    (
        "softplus_beta2_threshold5",
        lambda x: F.softplus(x, 2.0, 5.0),
        lambda x: TF.softplus(x, 2.0, 5.0),
        (2.5, 2.4, 2.6, *LARGE),
    ),
    ("softsign", F.softsign, TF.softsign, (0.0, *LARGE)),
    ("hardtanh", F.hardtanh, TF.hardtanh, (-1.0, 1.0, -2.0, 2.0, 0.0)),
    ("hardtanh_-0.5_2", lambda x: F.hardtanh(x, -0.5, 2.0), lambda x: TF.hardtanh(x, -0.5, 2.0), (-0.5, 2.0)),
    ("relu6", F.relu6, TF.relu6, (0.0, 6.0, -1.0, 7.0, 3.0)),
    ("hardsigmoid", F.hardsigmoid, torch_hardsigmoid, (-3.0, 3.0, 0.0, *LARGE)),
    ("hardswish", F.hardswish, TF.hardswish, (-3.0, 3.0, 0.0, *LARGE)),
    ("logsigmoid", F.logsigmoid, TF.logsigmoid, (0.0, *LARGE)),
    ("softmin", lambda x: F.softmin(x, dim=-1), lambda x: TF.softmin(x, dim=-1), (0.0, *LARGE)),
    ("softmin_dim0", lambda x: F.softmin(x, dim=0), lambda x: TF.softmin(x, dim=0), (1.0, 2.0)),
    ("log_softmax", lambda x: F.log_softmax(x, dim=0), lambda x: TF.log_softmax(x, dim=0), (0.0, *LARGE)),
    ("glu", F.glu, TF.glu, (1.0, -2.0, *LARGE)),
    ("glu_dim0", lambda x: F.glu(x, 0), lambda x: TF.glu(x, 0), (1.0, -2.0, *LARGE)),
]
# Random inputs clear of every kink (0, +-1, +-3, 6, softplus's thresholds 20 and 2.5) for the
# central differences; 4 columns, so glu halves them, and 4 rows for glu along axis 0.
SMOOTH = np.array([[-2.5, -1.6, -0.7, -0.2], [0.3, 0.6, 1.4, 2.2], [4.0, -4.5, 5.0, 7.0], [-0.4, 0.9, -5.5, 2.7]])


def activation_params(with_edges: bool = False) -> list:
    return [
        pytest.param(ours, theirs, *([edges] if with_edges else []), id=name)
        for name, ours, theirs, edges in ACTIVATIONS
    ]


@pytest.mark.parametrize(("ours", "theirs"), activation_params())
def test_activation_matches_torch(float64_backend, ours, theirs):
    compare_with_torch(ours, theirs, [normal(4, 6, scale=4.0)])


@pytest.mark.parametrize(("ours", "theirs", "edges"), activation_params(with_edges=True))
def test_activation_matches_torch_at_kinks_and_large_inputs(float64_backend, ours, theirs, edges):
    """The value and gradient at each kink are PyTorch's (the branch it takes there), and large
    inputs give finite values and gradients (no overflow in a branch not taken)."""
    compare_with_torch(ours, theirs, [points(*edges)])


KINK_GRADIENTS = [  # the derivatives PyTorch gives at the kinks, spelled out
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), [0.0], [0.2]),
    ("elu", lambda x: F.elu(x, 1.5), [0.0], [1.5]),
    ("celu", lambda x: F.celu(x, 0.5), [0.0], [1.0]),
    ("hardtanh", F.hardtanh, [-1.0, 1.0], [0.0, 0.0]),
    ("relu6", F.relu6, [0.0, 6.0], [0.0, 0.0]),
    ("hardsigmoid", F.hardsigmoid, [-3.0, 3.0], [0.0, 0.0]),
    ("hardswish", F.hardswish, [-3.0, 3.0], [0.0, 1.0]),
    ("softsign", F.softsign, [0.0], [1.0]),
]


@pytest.mark.parametrize(("fn", "at", "expected"), [pytest.param(*c[1:], id=c[0]) for c in KINK_GRADIENTS])
def test_gradient_at_kinks(float64_backend, fn, at, expected):
    x = ag.tensor(np.asarray(at), requires_grad=True)
    fn(x).sum().backward()
    assert host(x.grad).tolist() == expected


def test_hardsigmoid_is_torchs_to_its_float32_constant(float64_backend):
    x = ag.tensor(SMOOTH, requires_grad=True)
    expected = torch.tensor(SMOOTH, requires_grad=True)
    F.hardsigmoid(x).sum().backward()
    TF.hardsigmoid(expected).sum().backward()
    assert_close(x.grad, expected.grad, rtol=1e-7)


@pytest.mark.parametrize(("ours", "theirs"), activation_params())
def test_activation_gradcheck(float64_backend, ours, theirs):
    x = ag.tensor(SMOOTH, requires_grad=True)
    assert ag.gradcheck(ours, [x])


@pytest.mark.parametrize(("ours", "theirs"), activation_params())
def test_activation_keeps_float32(backend, ours, theirs):
    x = ag.tensor(SMOOTH.astype(np.float32), requires_grad=True)
    out = ours(x)
    out.sum().backward()
    assert out.dtype == ag.float32 and x.grad.dtype == ag.float32
    assert_close(out, theirs(torch.tensor(SMOOTH, dtype=torch.float32)), "float32")


@pytest.mark.parametrize(
    "fn",
    [F.silu, F.softplus, lambda x: F.softplus(x, 2.0, 5.0), F.elu, F.mish, F.hardswish],
    ids=["silu", "softplus", "softplus_beta_threshold", "elu", "mish", "hardswish"],
)
def test_activation_gradgradcheck(float64_backend, fn):
    assert ag.gradgradcheck(fn, [ag.tensor(SMOOTH, requires_grad=True)])


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax, F.softmin], ids=["softmax", "log_softmax", "softmin"])
def test_softmax_family_computes_in_the_dtype_asked(float64_backend, fn):
    x = SMOOTH.astype(np.float32)
    out = fn(ag.tensor(x), 1, dtype="float64")
    assert out.dtype == ag.float64
    assert_close(out, getattr(TF, fn.__name__)(torch.tensor(x), 1, dtype=torch.float64))


def test_inplace_is_accepted_and_out_of_place(backend):
    x = ag.asarray([-1.0, 2.0])
    for fn in (F.leaky_relu, F.elu, F.selu, F.celu, F.silu, F.mish, F.hardtanh, F.relu6, F.hardsigmoid, F.hardswish):
        assert fn(x, inplace=True) is not x
    assert x.tolist() == [-1.0, 2.0]


# --- losses -------------------------------------------------------------------------------------
def loss(name: str, function: str, args: list, keyword_args: tuple = (), **settings) -> object:
    """A case calling ``F.<function>`` and ``TF.<function>`` alike: `args` positionally, then the
    inputs `keyword_args` ((name, Arg) pairs) by name, then the plain `settings`."""
    names = [n for n, _ in keyword_args]

    def call(module):
        return lambda *xs: getattr(module, function)(*xs[: len(args)], **dict(zip(names, xs[len(args) :])), **settings)

    return pytest.param(call(F), call(TF), [*args, *(a for _, a in keyword_args)], id=name)


TARGETS = const([0, 3, 1, 3, 2])
IGNORED = const([0, -100, 1, 3, -100])
WEIGHT = ("weight", const([0.5, 2.0, 1.0, 3.0]))
ND_TARGETS = const([[[0, 2], [1, -100]], [[2, 2], [-100, 0]]])  # (N=2, d1=2, d2=2) for an input (2, 3, 2, 2)
ND_WEIGHT = ("weight", const([0.5, 2.0, 1.5]))

LOSSES = [
    # cross_entropy with class probabilities
    *(loss(f"ce_probs-{r}", "cross_entropy", [normal(4, 3), probabilities(4, 3)], reduction=r) for r in REDUCTIONS),
    *(
        loss(
            f"ce_probs_weight_smoothing-{r}",
            "cross_entropy",
            [normal(5, 4), probabilities(5, 4)],
            (WEIGHT,),
            label_smoothing=0.2,
            reduction=r,
        )
        for r in REDUCTIONS
    ),
    loss("ce_probs_unnormalised", "cross_entropy", [normal(3, 4), uniform(3, 4)]),
    loss("ce_probs_1d", "cross_entropy", [normal(4), probabilities(4)], label_smoothing=0.1),
    *(
        loss(
            f"ce_probs_nd_weight-{r}",
            "cross_entropy",
            [normal(2, 3, 2, 2), probabilities(2, 3, 2, 2, axis=1)],
            (ND_WEIGHT,),
            reduction=r,
        )
        for r in REDUCTIONS
    ),
    # cross_entropy with class indices: N-d (the fused primitive, rows made of positions) and 1-d
    *(loss(f"ce_nd_ignored-{r}", "cross_entropy", [normal(2, 3, 2, 2), ND_TARGETS], reduction=r) for r in REDUCTIONS),
    *(loss(f"ce_1d-{r}", "cross_entropy", [normal(4), const(2)], reduction=r) for r in REDUCTIONS),
    # ... weights (a mean divides by the targets' weights) and label smoothing, with ignored targets
    *(
        loss(f"ce_weight_ignored-{r}", "cross_entropy", [normal(5, 4), IGNORED], (WEIGHT,), reduction=r)
        for r in REDUCTIONS
    ),
    *(
        loss(f"ce_smoothing_ignored-{r}", "cross_entropy", [normal(5, 4), IGNORED], label_smoothing=0.1, reduction=r)
        for r in REDUCTIONS
    ),
    *(
        loss(
            f"ce_smoothing_weight_ignore_index_3-{r}",
            "cross_entropy",
            [normal(5, 4), TARGETS],
            (WEIGHT,),
            label_smoothing=0.3,
            ignore_index=3,
            reduction=r,
        )
        for r in REDUCTIONS
    ),
    loss("ce_smoothing_no_ignores", "cross_entropy", [normal(5, 4), TARGETS], label_smoothing=0.25),
    loss("ce_smoothing_1", "cross_entropy", [normal(5, 4), TARGETS], label_smoothing=1.0),
    *(
        loss(
            f"ce_nd_weight_smoothing-{r}",
            "cross_entropy",
            [normal(2, 3, 2, 2), ND_TARGETS],
            (ND_WEIGHT,),
            label_smoothing=0.2,
            reduction=r,
        )
        for r in REDUCTIONS
    ),
    loss("ce_1d_weight_smoothing", "cross_entropy", [normal(4), const(1)], (WEIGHT,), label_smoothing=0.2),
    loss(
        "ce_huge_logits_weight_smoothing",
        "cross_entropy",
        [normal(5, 4, scale=1e4), TARGETS],
        (WEIGHT,),
        label_smoothing=0.1,
    ),
    # nll_loss: weights, N-d, 1-d
    *(loss(f"nll_weight_ignored-{r}", "nll_loss", [normal(5, 4), IGNORED], (WEIGHT,), reduction=r) for r in REDUCTIONS),
    *(
        loss(f"nll_nd_weight-{r}", "nll_loss", [normal(2, 3, 2, 2), ND_TARGETS], (ND_WEIGHT,), reduction=r)
        for r in REDUCTIONS
    ),
    loss("nll_nd_3d", "nll_loss", [normal(3, 4, 5), const([[0, 1, 2, 3, 3], [1, 1, 0, 2, 0], [3, 3, 3, 0, 1]])]),
    loss("nll_1d", "nll_loss", [normal(4), const(3)]),
    # binary_cross_entropy: probabilities inside (0, 1), weights, and exactly 0 and 1 (the clamped logs)
    *(
        loss(f"bce-{r}", "binary_cross_entropy", [uniform(3, 4, low=0.05, high=0.95), uniform(3, 4)], reduction=r)
        for r in REDUCTIONS
    ),
    *(
        loss(
            f"bce_weight-{r}",
            "binary_cross_entropy",
            [uniform(3, 4, low=0.05, high=0.95), uniform(3, 4)],
            (("weight", const([0.5, 1.0, 2.0, 0.0])),),
            reduction=r,
        )
        for r in REDUCTIONS
    ),
    loss(
        "bce_zero_and_one",
        "binary_cross_entropy",
        [points(0.0, 1.0, 0.0, 1.0, 0.5, 1e-50), const([0.0, 0.0, 1.0, 1.0, 0.3, 1.0])],
        reduction="none",
    ),
    # the pointwise losses, each with a target equal to the input somewhere (the kink of |d|)
    *(
        loss(f"{fn}-{r}", fn, [normal(3, 4), normal(3, 4)], reduction=r, **kw)
        for r in REDUCTIONS
        for fn, kw in (
            ("l1_loss", {}),
            ("mse_loss", {}),
            ("smooth_l1_loss", {}),
            ("smooth_l1_loss", {"beta": 0.5}),
            ("smooth_l1_loss", {"beta": 0.0}),
            ("huber_loss", {}),
            ("huber_loss", {"delta": 0.5}),
        )
    ),
    *(
        loss(f"{fn}_weight-{r}", fn, [normal(3, 4), normal(3, 4)], (("weight", positive(3, 4)),), reduction=r)
        for r in REDUCTIONS
        for fn in ("l1_loss", "mse_loss", "huber_loss")
    ),
    *(
        loss(f"{fn}_kinks", fn, [points(0.0, 0.5, -0.5, 2.0, -2.0), const([0.0] * 5)], reduction="none", **kw)
        for fn, kw in (
            ("l1_loss", {}),
            ("smooth_l1_loss", {"beta": 0.5}),
            ("smooth_l1_loss", {"beta": 0.0}),
            ("huber_loss", {"delta": 0.5}),
        )
    ),
    # kl_div: probabilities or log-probabilities as the target (differentiated too), zeros in it
    *(
        loss(f"kl_div-{r}", "kl_div", [normal(3, 4), probabilities(3, 4)], reduction=r)
        for r in (*REDUCTIONS, "batchmean")
    ),
    *(
        loss(f"kl_div_log_target-{r}", "kl_div", [normal(3, 4), normal(3, 4)], reduction=r, log_target=True)
        for r in (*REDUCTIONS, "batchmean")
    ),
    loss(
        "kl_div_zero_targets",
        "kl_div",
        [normal(2, 3), const([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])],
        reduction="batchmean",
    ),
    loss("kl_div_1d_batchmean", "kl_div", [normal(4), probabilities(4)], reduction="batchmean"),
]


@pytest.mark.parametrize(("ours", "theirs", "args"), LOSSES)
def test_loss_matches_torch(float64_backend, ours, theirs, args):
    compare_with_torch(ours, theirs, args)


def test_cross_entropy_keeps_the_fused_primitive_for_class_indices(float64_backend):
    """Without weight or smoothing, class indices of any rank take the one fused primitive."""
    for shape, target in (((5, 4), [0, 3, 1, 3, 2]), ((2, 4, 3), [[0, 1, 3], [2, 2, 0]]), ((4,), 2)):
        x = ag.randn(*shape, dtype="float64", requires_grad=True)
        assert F.cross_entropy(x, ag.asarray(target))._op.name == "cross_entropy"
    assert str(F.cross_entropy(x, ag.asarray(2), label_smoothing=0.1)._op) != "cross_entropy"


def constant(values):
    return ag.asarray(np.asarray(values))


def leaf(values):
    return ag.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


_rng = np.random.default_rng(7)
LOGITS, ND_LOGITS = _rng.standard_normal((5, 4)), _rng.standard_normal((2, 3, 2, 2))
SOFT = _rng.uniform(0.1, 1.0, (5, 4))
PROBS, OTHER_PROBS = _rng.uniform(0.1, 0.9, (2, 3, 4))
OTHER_LOGITS = _rng.standard_normal((5, 4))
# Differences input - target clear of 0 and of the bends at +-0.5 and +-1.
DIFFS = np.array([[-2.0, -0.8, -0.3, 0.2], [0.4, 0.7, 1.6, -1.3], [0.1, -0.15, 2.5, 0.9]])

GRADCHECKS = [  # (name, fn of the differentiated tensors, their values), clear of kinks
    (
        "ce_probs_weight_smoothing",
        lambda x, p: F.cross_entropy(x, p, constant([0.5, 2.0, 1.0, 3.0]), label_smoothing=0.2),
        (LOGITS, SOFT),
    ),
    (
        "ce_weight_smoothing_ignored",
        lambda x: F.cross_entropy(x, constant([0, -100, 1, 3, 2]), constant([0.5, 2.0, 1.0, 3.0]), label_smoothing=0.1),
        (LOGITS,),
    ),
    ("ce_nd_ignored", lambda x: F.cross_entropy(x, constant([[[0, 2], [1, -100]], [[2, 2], [-100, 0]]])), (ND_LOGITS,)),
    ("ce_none_ignored", lambda x: F.cross_entropy(x, constant([0, -100, 1, 3, 2]), reduction="none"), (LOGITS,)),
    ("ce_sum", lambda x: F.cross_entropy(x, constant([0, 3, 1, 3, 2]), reduction="sum"), (LOGITS,)),
    (
        "nll_nd_weight",
        lambda x: F.nll_loss(
            x, constant([[[0, 2], [1, -100]], [[2, 2], [-100, 0]]]), constant([0.5, 2.0, 1.5]), reduction="sum"
        ),
        (ND_LOGITS,),
    ),
    ("bce_weight", lambda x, t: F.binary_cross_entropy(x, t, constant([0.5, 1.0, 2.0, 0.3])), (PROBS, OTHER_PROBS)),
    ("l1_weight", lambda x: F.l1_loss(x, constant(np.zeros((3, 4))), weight=constant(PROBS)), (DIFFS,)),
    ("mse_weight", lambda x, t: F.mse_loss(x, t, weight=constant(PROBS)), (DIFFS, PROBS)),
    ("smooth_l1_0.5", lambda x: F.smooth_l1_loss(x, constant(np.zeros((3, 4))), beta=0.5, reduction="sum"), (DIFFS,)),
    ("huber_weight", lambda x: F.huber_loss(x, constant(np.zeros((3, 4))), weight=constant(PROBS)), (DIFFS,)),
    ("kl_div", lambda x, t: F.kl_div(x, t, reduction="batchmean"), (LOGITS, SOFT)),
    ("kl_div_log_target", lambda x, t: F.kl_div(x, t, reduction="sum", log_target=True), (LOGITS, OTHER_LOGITS)),
]


@pytest.mark.parametrize(("fn", "values"), [pytest.param(*c[1:], id=c[0]) for c in GRADCHECKS])
def test_loss_gradcheck(float64_backend, fn, values):
    assert ag.gradcheck(fn, [leaf(v) for v in values])


@pytest.mark.parametrize(
    ("fn", "values"),
    [
        pytest.param(*c[1:], id=c[0])
        for c in GRADCHECKS
        if c[0] in ("ce_probs_weight_smoothing", "ce_nd_ignored", "ce_none_ignored", "ce_sum", "bce_weight")
    ],
)
def test_loss_gradgradcheck(float64_backend, fn, values):
    """Second derivatives, through the tensor twins of the backends' kernels (the fused
    cross-entropy's among them) that a create_graph backward runs."""
    assert ag.gradgradcheck(fn, [leaf(v) for v in values])


def test_bce_gradient_at_zero_and_one_is_torchs(float64_backend):
    """PyTorch's rule, not the derivative of the clamped logs (0 * inf, a nan, at x = 0)."""
    x = ag.tensor(np.array([0.0, 0.0, 1.0, 1.0]), requires_grad=True)
    loss = F.binary_cross_entropy(x, constant([0.0, 1.0, 0.0, 1.0]), reduction="sum")
    loss.backward()
    assert loss.item() == 200.0
    assert host(x.grad).tolist() == [0.0, -1 / 9.999999960041972e-13, 1 / 9.999999960041972e-13, 0.0]


@pytest.mark.parametrize(("shape", "num_classes"), [((5,), -1), ((2, 3), 6), ((0,), 3)], ids=["1d", "2d", "empty"])
def test_one_hot_matches_torch(backend, shape, num_classes):
    labels = np.random.default_rng(3).integers(0, 4, shape)
    out = F.one_hot(ag.asarray(labels), num_classes)
    expected = TF.one_hot(torch.tensor(labels), num_classes)
    assert out.dtype == ag.int64 and not out.requires_grad
    assert out.shape == tuple(expected.shape) and (host(out) == expected.numpy()).all()


# --- modules --------------------------------------------------------------------------------
ACTIVATION_MODULES = [  # (class name, constructor arguments) for forward passes on both sides
    ("LeakyReLU", ()),
    ("LeakyReLU", (0.2,)),
    ("ELU", (1.5,)),
    ("SELU", ()),
    ("CELU", (0.5,)),
    ("SiLU", ()),
    ("Mish", ()),
    ("Softplus", (2.0, 5.0)),
    ("Softsign", ()),
    ("Hardtanh", (-0.5, 2.0)),
    ("ReLU6", ()),
    ("Hardsigmoid", ()),
    ("Hardswish", ()),
    ("LogSigmoid", ()),
    ("Softmin", (0,)),
    ("Softmax", (1,)),
    ("LogSoftmax", (1,)),
    ("Softmax", ()),
    ("GLU", ()),
    ("GLU", (0,)),
]
REPRS = ACTIVATION_MODULES + [  # constructor arguments whose repr differs (inplace shows for some)
    ("LeakyReLU", (0.2, True)),
    ("ELU", (2.0, True)),
    ("SELU", (True,)),
    ("CELU", (2.0, True)),
    ("SiLU", (True,)),
    ("Mish", (True,)),
    ("Hardtanh", (-2, 2, True)),
    ("ReLU6", (True,)),
    ("Hardsigmoid", (True,)),
    ("Hardswish", (True,)),
    ("Softmin", ()),
]


@pytest.mark.parametrize(("name", "args"), [pytest.param(n, a, id=f"{n}{a}") for n, a in ACTIVATION_MODULES])
def test_activation_module_matches_torch(float64_backend, name, args):
    ours = getattr(nn, name)(*args)
    theirs = torch_hardsigmoid if name == "Hardsigmoid" else getattr(torch.nn, name)(*args)
    compare_with_torch(ours, theirs, [normal(4, 6, 2, scale=3.0)])  # 3-D: an implicit softmax dim is 0
    assert list(ours.parameters()) == []


@pytest.mark.parametrize(("name", "args"), [pytest.param(n, a, id=f"{n}{a}") for n, a in REPRS])
def test_activation_module_repr_is_torchs(name, args):
    assert repr(getattr(nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


def weights(values, lib):
    return (ag.asarray if lib is nn else torch.tensor)(np.asarray(values, dtype=np.float64))


LOSS_MODULES = [  # (name, the module built from either library, inputs)
    ("CrossEntropyLoss", lambda lib: lib.CrossEntropyLoss(), [normal(5, 4), TARGETS]),
    (
        "CrossEntropyLoss_options",
        lambda lib: lib.CrossEntropyLoss(
            weights([0.5, 2.0, 1.0, 3.0], lib), ignore_index=3, reduction="sum", label_smoothing=0.1
        ),
        [normal(5, 4), TARGETS],
    ),
    (
        "CrossEntropyLoss_probabilities",
        lambda lib: lib.CrossEntropyLoss(label_smoothing=0.2),
        [normal(3, 4), probabilities(3, 4)],
    ),
    ("NLLLoss", lambda lib: lib.NLLLoss(weights([0.5, 2.0, 1.0, 3.0], lib), reduction="none"), [normal(5, 4), IGNORED]),
    ("MSELoss", lambda lib: lib.MSELoss(reduction="sum"), [normal(3, 4), normal(3, 4)]),
    ("L1Loss", lambda lib: lib.L1Loss(), [normal(3, 4), normal(3, 4)]),
    ("SmoothL1Loss", lambda lib: lib.SmoothL1Loss(beta=0.5), [normal(3, 4), normal(3, 4)]),
    ("HuberLoss", lambda lib: lib.HuberLoss(reduction="none", delta=0.5), [normal(3, 4), normal(3, 4)]),
    (
        "BCELoss",
        lambda lib: lib.BCELoss(weights([0.5, 1.0, 2.0, 0.0], lib)),
        [uniform(3, 4, low=0.05, high=0.95), uniform(3, 4)],
    ),
    (
        "BCEWithLogitsLoss",
        lambda lib: lib.BCEWithLogitsLoss(pos_weight=weights([3.0, 1.0, 0.5, 2.0], lib)),
        [normal(3, 4), uniform(3, 4)],
    ),
    ("KLDivLoss", lambda lib: lib.KLDivLoss(reduction="batchmean", log_target=True), [normal(3, 4), normal(3, 4)]),
]


@pytest.mark.parametrize(("make", "args"), [pytest.param(*c[1:], id=c[0]) for c in LOSS_MODULES])
def test_loss_module_matches_torch(float64_backend, make, args):
    ours, theirs = make(nn), make(torch.nn)
    compare_with_torch(ours, theirs, args)
    assert repr(ours) == repr(theirs)


# --- errors -------------------------------------------------------------------------------------
def logits(*shape):
    return ag.zeros(shape)


ERRORS = [  # (name, the call, the error, what its message says)
    (
        "ce_target_out_of_range",
        lambda: F.cross_entropy(logits(2, 3), ag.asarray([0, 3])),
        IndexError,
        r"target values must be in \[0, 3\)",
    ),
    (
        "ce_nd_target_shape",
        lambda: F.cross_entropy(logits(2, 3, 4), ag.asarray([[0, 1, 2]] * 2)),
        ValueError,
        r"target has shape \(2, 3\), expected \(2, 4\)",
    ),
    (
        "ce_integer_probabilities",
        lambda: F.cross_entropy(logits(2, 3), ag.zeros((2, 3), dtype="int64")),
        TypeError,
        "probabilities and must be floating-point",
    ),
    (
        "ce_float_indices",
        lambda: F.cross_entropy(logits(2, 3), ag.zeros(2)),
        TypeError,
        "class indices must be integers.*class probabilities",
    ),
    (
        "ce_probabilities_ignore_index",
        lambda: F.cross_entropy(logits(2, 3), ag.zeros((2, 3)), ignore_index=1),
        ValueError,
        "ignore_index is not supported",
    ),
    (
        "ce_weight_shape",
        lambda: F.cross_entropy(logits(2, 3), ag.asarray([0, 1]), ag.ones(4)),
        ValueError,
        r"one weight per class: \(3,\)",
    ),
    (
        "ce_label_smoothing",
        lambda: F.cross_entropy(logits(2, 3), ag.asarray([0, 1]), label_smoothing=1.5),
        ValueError,
        "label_smoothing",
    ),
    (
        "ce_reduction",
        lambda: F.cross_entropy(logits(2, 3), ag.asarray([0, 1]), reduction="avg"),
        ValueError,
        "reduction must be one of",
    ),
    (
        "ce_size_average",
        lambda: F.cross_entropy(logits(2, 3), ag.asarray([0, 1]), size_average=False),
        ValueError,
        "deprecated",
    ),
    ("ce_0d_input", lambda: F.cross_entropy(ag.asarray(1.0), ag.asarray(0)), ValueError, "0-d"),
    (
        "nll_nd_out_of_range",
        lambda: F.nll_loss(logits(2, 3, 2), ag.asarray([[0, 1], [3, 0]])),
        IndexError,
        "target values",
    ),
    (
        "nll_weight_shape",
        lambda: F.nll_loss(logits(2, 3), ag.asarray([0, 1]), ag.ones((3, 1))),
        ValueError,
        "one weight per class",
    ),
    (
        "bce_not_probabilities",
        lambda: F.binary_cross_entropy(ag.asarray([0.5, 1.5]), ag.asarray([0.0, 1.0])),
        ValueError,
        "probabilities in \\[0, 1\\].*with_logits",
    ),
    (
        "bce_shape",
        lambda: F.binary_cross_entropy(ag.asarray([0.5, 0.5]), ag.asarray([1.0])),
        ValueError,
        "target shape",
    ),
    ("l1_shape", lambda: F.l1_loss(logits(2, 3), ag.zeros(3)), ValueError, "differ"),
    (
        "mse_weight_shape",
        lambda: F.mse_loss(logits(2, 3), logits(2, 3), weight=ag.ones(3)),
        ValueError,
        "weight has shape",
    ),
    ("smooth_l1_negative_beta", lambda: F.smooth_l1_loss(logits(2), logits(2), beta=-1.0), ValueError, "beta"),
    ("huber_zero_delta", lambda: F.huber_loss(logits(2), logits(2), delta=0.0), ValueError, "delta"),
    ("kl_div_reduction", lambda: F.kl_div(logits(2), logits(2), reduction="batch"), ValueError, "batchmean"),
    ("one_hot_float", lambda: F.one_hot(ag.zeros(2)), TypeError, "integers"),
    ("one_hot_negative", lambda: F.one_hot(ag.asarray([0, -1]), 3), IndexError, r"\[0, num_classes=3\)"),
    ("one_hot_too_large", lambda: F.one_hot(ag.asarray([0, 3]), 3), IndexError, r"\[0, num_classes=3\)"),
    ("one_hot_empty_inferred", lambda: F.one_hot(ag.zeros(0, dtype="int64")), ValueError, "num_classes"),
    ("glu_odd", lambda: F.glu(logits(2, 3)), ValueError, "must be even.*size 3"),
    ("hardtanh_bounds", lambda: F.hardtanh(logits(2), 1.0, -1.0), ValueError, "min_val"),
    ("celu_alpha_0", lambda: F.celu(logits(2), 0.0), ValueError, "alpha"),
    ("module_reduce", lambda: nn.MSELoss(reduce=False), ValueError, "deprecated"),
    ("module_reduction", lambda: nn.L1Loss(reduction="avg")(logits(2), logits(2)), ValueError, "reduction"),
]


@pytest.mark.parametrize(("call", "error", "match"), [pytest.param(*c[1:], id=c[0]) for c in ERRORS])
def test_errors_say_what_is_wrong(backend, call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_warnings_are_torchs(backend):
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(logits(2, 3), logits(2, 3))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        F.softmin(logits(2, 3))
