"""ONNX export (autograd_core.export.onnx): models and whole training steps traced through the ndonnx
backend, run by onnxruntime, against the numpy backend (the models live on numpy)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ndonnx", reason="ONNX export needs ndonnx: pip install -e '.[onnx]'")
ort = pytest.importorskip("onnxruntime", reason="the exported models run on onnxruntime: pip install -e '.[onnx]'")
onnx = pytest.importorskip("onnx", reason="ONNX export needs onnx: pip install -e '.[onnx]'")

import autograd_core as ag  # noqa: E402
import backends  # noqa: E402
import nn  # noqa: E402
import nn.functional as F  # noqa: E402
import optim  # noqa: E402
from autograd_core.export.onnx import OnnxExportError  # noqa: E402
from autograd_core.graph.pytree import tree_flatten  # noqa: E402
from bench.gpt_model import GPTConfig, gpt  # noqa: E402
from bench.problems import mnist_cnn  # noqa: E402
from helpers import classification_step  # noqa: E402

pytestmark = pytest.mark.slow  # each export traces the model op by op through ndonnx (seconds)

TOLERANCE = {"float32": 1e-6, "float64": 1e-12}


@pytest.fixture(autouse=True)
def on_numpy():
    with backends.use("numpy"):
        yield


def session(model) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options)


def run(model, *inputs: np.ndarray) -> list[np.ndarray]:
    s = session(model)
    return s.run(None, {i.name: x for i, x in zip(s.get_inputs(), inputs)})


def build(kind: str, dtype: str, rng: np.random.Generator):
    """A model of this project's layers in eval mode and an input batch for it."""
    ag.manual_seed(0)
    if kind == "mlp":
        model, x = nn.Sequential(nn.Linear(3, 8), nn.GELU(), nn.Linear(8, 4)), rng.random((5, 3))
    elif kind == "cnn":
        model, x = mnist_cnn(nn), rng.random((2, 1, 28, 28))
    elif kind == "gpt":
        model = gpt(nn, GPTConfig(block_size=8, vocab_size=11, n_layer=2, n_head=2, n_embd=16))
        x = rng.integers(0, 11, (2, 8))
    else:
        model, x = nn.LSTM(3, 4, num_layers=2, batch_first=True), rng.random((2, 5, 3))
    x = x.astype(dtype) if x.dtype.kind == "f" else x
    return model.to(dtype=getattr(ag, dtype)).eval(), x


def expected(model, *inputs: np.ndarray) -> list[np.ndarray]:
    with ag.no_grad():
        leaves, _ = tree_flatten(model(*[ag.tensor(x) for x in inputs]))
    return [t.detach().numpy() for t in leaves]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["mlp", "cnn", "gpt", "lstm"])
def test_a_model_exported_runs_on_onnxruntime_as_on_numpy(kind, dtype, tmp_path):
    model, x = build(kind, dtype, np.random.default_rng(0))
    path = tmp_path / f"{kind}.onnx"
    exported = ag.onnx.export(model, ag.tensor(x), path)
    onnx.checker.check_model(onnx.load(path))
    names = {n for n, _ in [*model.named_parameters(), *model.named_buffers()]}
    assert {i.name for i in exported.graph.initializer} <= names
    assert [i.name for i in exported.graph.input] == ["input_0"]
    got, want = run(exported, x), expected(model, x)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


def test_the_model_stays_on_its_backend_with_its_values():
    model, x = build("mlp", "float64", np.random.default_rng(0))
    before = {n: t.detach().numpy() for n, t in model.state_dict().items()}
    ag.onnx.export(model, ag.tensor(x))
    assert all(p.backend.name == "numpy" for p in model.parameters())
    assert all(np.array_equal(before[n], t.detach().numpy()) for n, t in model.state_dict().items())


def test_dynamic_batch_axis_takes_other_batch_sizes():
    model, x = build("mlp", "float64", np.random.default_rng(0))
    exported = ag.onnx.export(
        model, ag.tensor(x), dynamic_axes={"x": {0: "batch"}, "y": [0]}, input_names=["x"], output_names=["y"]
    )
    assert exported.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert exported.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "y_dim0"
    for batch in (1, 7):
        other = np.random.default_rng(batch).random((batch, 3))
        np.testing.assert_allclose(run(exported, other)[0], expected(model, other)[0], rtol=1e-12, atol=1e-12)


def test_a_function_of_several_inputs_and_outputs():
    def f(a, b):
        return ag.tanh(a) @ b, a.sum(axis=0)

    a, b = np.random.default_rng(0).random((2, 3)), np.random.default_rng(1).random((3, 4))
    exported = ag.onnx.export(f, (ag.tensor(a), b), output_names=["product", "sums"])
    assert [o.name for o in exported.graph.output] == ["product", "sums"]
    for got, want in zip(run(exported, a, b), [np.tanh(a) @ b, a.sum(axis=0)]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_python_branch_on_a_value_is_refused():
    def branch(t):
        return t * 2 if t.sum() > 0 else t

    def item(t):
        return t * t.sum().item()

    for f in (branch, item):
        with pytest.raises(OnnxExportError, match=r"cannot export .*: .*Python branch on a value"):
            ag.onnx.export(f, ag.ones(2, 3))


def test_an_op_ndonnx_lacks_is_named():
    with pytest.raises(
        OnnxExportError, match=r"autograd_core.ops.linalg.inv needs the op linalg.inv .* ndonnx .* lacks"
    ):
        ag.onnx.export(lambda t: ag.linalg.inv(t), ag.ones(3, 3))
    with pytest.raises(OnnxExportError, match=r"complex64' is not supported by the ndonnx backend"):
        ag.onnx.export(lambda t: ag.fft.fft(t).real, ag.ones(4))  # fft computes in complex, which ndonnx lacks


def test_dropout_in_training_mode_is_refused_and_exports_in_eval_mode():
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    with pytest.raises(OnnxExportError, match="cannot export Sequential: .*dropout in a trace that freezes its mask"):
        ag.onnx.export(model, ag.ones(2, 3))
    x = np.ones((2, 3), dtype=np.float32)
    np.testing.assert_allclose(run(ag.onnx.export(model.eval(), ag.tensor(x)), x)[0], expected(model, x)[0], rtol=1e-6)


def test_dynamic_axes_on_a_model_that_reads_the_batch_size_are_refused():
    model, x = build("lstm", "float64", np.random.default_rng(0))
    with pytest.raises(OnnxExportError, match="cannot export LSTM with dynamic_axes: .*export it without dynamic_axes"):
        ag.onnx.export(model, ag.tensor(x), dynamic_axes={"input_0": [0]})


def test_bad_names_and_axes_are_refused():
    with pytest.raises(ValueError, match="2 input names given for 1 inputs"):
        ag.onnx.export(lambda t: t * 2, ag.ones(2), input_names=["a", "b"])
    with pytest.raises(ValueError, match=r"dynamic_axes\['input_0'\] names axis 3, but input_0 has 1 axes"):
        ag.onnx.export(lambda t: t * 2, ag.ones(2), dynamic_axes={"input_0": [3]})


# --- training steps -----------------------------------------------------------------------------
def mlp_adamw(dtype: str):
    ag.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 4)).to(dtype=getattr(ag, dtype))
    opt = optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)

    step = classification_step(model, opt)

    def batch(rng):
        return rng.random((5, 3)).astype(dtype), rng.integers(0, 4, 5)

    return model, opt, step, batch


def cnn_adamw_clipped(dtype: str):
    """The MNIST CNN (batch norm in training mode: its running statistics are state too),
    AdamW and gradient clipping, as examples/mnist_cnn.py trains it (without dropout)."""
    ag.manual_seed(0)
    model = mnist_cnn(nn, dropout=None).to(dtype=getattr(ag, dtype))
    opt = optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)

    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    def batch(rng):
        return rng.random((2, 1, 28, 28)).astype(dtype), rng.integers(0, 10, 2)

    return model, opt, step, batch


def lstm_sgd_momentum(dtype: str):
    ag.manual_seed(0)
    lstm, head = nn.LSTM(3, 4, batch_first=True), nn.Linear(4, 2)
    model = nn.ModuleList([lstm, head]).to(dtype=getattr(ag, dtype))
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x, y):
        out, _ = lstm(x)
        loss = F.mse_loss(head(out[:, -1]), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def batch(rng):
        return rng.random((2, 5, 3)).astype(dtype), rng.random((2, 2)).astype(dtype)

    return model, opt, step, batch


STEPS = 20


@pytest.mark.parametrize("problem", [mlp_adamw, cnn_adamw_clipped, lstm_sgd_momentum])
def test_training_steps_on_onnxruntime_give_numpys_weights(problem):
    """20 steps of the exported step, its outputs fed back as inputs, against 20 steps on numpy."""
    model, opt, step, batch = problem("float64")
    rng = np.random.default_rng(0)
    batches = [batch(rng) for _ in range(STEPS + 1)]
    step(*[ag.tensor(a) for a in batches[0]])  # the optimizer's state exists from here on
    exported = ag.onnx.export_step(step, tuple(ag.tensor(a) for a in batches[0]), modules=[model], optimizers=[opt])
    s = session(exported.model)
    names, state, losses = [o.name for o in s.get_outputs()], dict(exported.state), []
    for b in batches[1:]:
        out = dict(zip(names, s.run(None, {**state, **dict(zip(exported.input_names, b))})))
        state.update({exported.updates[k]: v for k, v in out.items() if k in exported.updates})
        losses.append(float(out["output_0"]))
    want = [step(*[ag.tensor(a) for a in b]).item() for b in batches[1:]]
    np.testing.assert_allclose(losses, want, rtol=1e-10, atol=1e-10)
    for name, t in [*model.named_parameters(), *model.named_buffers()]:
        np.testing.assert_allclose(state[name], t.detach().numpy(), rtol=1e-10, atol=1e-10, err_msg=name)
    for p in model.parameters():  # the optimizer's state too
        for key, value in opt.state[p].items():
            (name,) = [n for n, q in model.named_parameters() if q is p]
            np.testing.assert_allclose(state[f"optimizer0.{name}.{key}"], np.asarray(value), rtol=1e-10, atol=1e-10)


def test_the_step_s_inputs_and_outputs_follow_compile_s_contract():
    model, opt, step, batch = mlp_adamw("float32")
    x, y = batch(np.random.default_rng(0))
    step(ag.tensor(x), ag.tensor(y))
    exported = ag.onnx.export_step(step, (ag.tensor(x), ag.tensor(y)), modules=[model], optimizers=[opt])
    inputs = {i.name for i in exported.model.graph.input}
    assert inputs == {"input_0", "input_1", *exported.state}
    assert {
        "0.weight",
        "optimizer0.0.weight.exp_avg",
        "optimizer0.0.weight.exp_avg_sq",
        "optimizer0.0.weight.step",
    } < inputs
    assert {"optimizer0.group0.lr", "optimizer0.group0.betas.0", "optimizer0.group0.betas.1"} < inputs
    assert exported.state["optimizer0.0.weight.step"].dtype == np.float32  # counts in the parameters' dtype
    assert set(exported.updates.values()) == {n for n in exported.state if ".group" not in n}
    outputs = [o.name for o in exported.model.graph.output]
    assert outputs[0] == "output_0" and set(outputs[1:]) == set(exported.updates)
    assert all(p.backend.name == "numpy" and p.grad is not None for p in model.parameters())
    assert opt.param_groups[0]["lr"] == 1e-2


def test_a_step_that_would_create_optimizer_state_is_refused():
    model, opt, step, batch = mlp_adamw("float64")
    x, y = batch(np.random.default_rng(0))
    with pytest.raises(OnnxExportError, match="the step creates optimizer state .* run one step first"):
        ag.onnx.export_step(step, (ag.tensor(x), ag.tensor(y)), modules=[model], optimizers=[opt])
    assert opt.state == {} and all(p.backend.name == "numpy" for p in model.parameters())


def test_docstring_examples():
    import doctest

    import autograd_core.export.onnx

    assert doctest.testmod(autograd_core.export.onnx, optionflags=doctest.ELLIPSIS).failed == 0
