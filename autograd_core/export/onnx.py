"""ONNX export through the ndonnx backend: a model's forward pass (`export`), or a whole
training step, forward, backward and optimizer update, as one graph (`export_step`).

The function is run once on the ndonnx backend with placeholders (arrays that have a shape and
a dtype but no values) in the places of its inputs and of the model's parameters and buffers;
each op adds nodes to an ONNX graph, which ndonnx builds into a model. The model may live on
any backend: its tensors are swapped for placeholders during the trace and restored after.
onnxruntime (or any ONNX runtime) then runs the model without this project.

What cannot be traced is refused with an `OnnxExportError` that names it: a Python branch on a
value (``bool(t)``, ``t.item()``, ``float(t)``: the values are unknown while tracing), an op
that ndonnx lacks, and dropout in training mode (the export would freeze one mask; export in
``eval()`` mode, or pass the mask as an input).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import backends
from autograd_core.graph.grad_mode import no_grad
from autograd_core.graph.pytree import tree_flatten
from autograd_core.graph.tensor_base import TensorBase
from autograd_core.transforms.compile import StepState

DynamicAxes = dict[str, dict[int, str] | Sequence[int]]


class OnnxExportError(RuntimeError):
    """A function or model that cannot be traced into an ONNX graph; the message says why."""


def _ndonnx() -> tuple[Any, Any]:
    """The ndonnx backend and module, or a clear error where they are not installed."""
    try:
        backend = backends.get("ndonnx")
    except (backends.BackendUnavailableError, ValueError) as e:
        raise OnnxExportError(f"ONNX export needs the ndonnx backend: {e}") from e
    return backend, backend.xp


def _host(value: Any) -> np.ndarray:
    """The values of a tensor (of any backend) or of an array, on the host."""
    if isinstance(value, TensorBase):
        return value.backend.to_numpy(value.array)
    return backends.Backend.host_array(value)


def _named_state(model: Any) -> list[tuple[str, TensorBase]]:
    """A module's parameters and buffers by name (each tensor once); none for a function."""
    if not (hasattr(model, "named_parameters") and hasattr(model, "named_buffers")):
        return []
    return [*model.named_parameters(), *model.named_buffers()]


@contextlib.contextmanager
def _placeholders(named: list[tuple[str, TensorBase]], ndonnx_backend: Any) -> Iterator[dict[str, Any]]:
    """The tensors of `named` holding ndonnx placeholders (by name) inside the block, their
    own arrays and backends again after it, whatever happens."""
    ndx = ndonnx_backend.xp
    saved = [(t, t.array, t.backend) for _, t in named]
    arguments = {}
    try:
        for name, t in named:
            arguments[name] = ndx.argument(shape=t.shape, dtype=getattr(ndx, t.dtype.name))
            t.array, t.backend = arguments[name], ndonnx_backend
        yield arguments
    finally:
        for t, data, backend in saved:
            t.array, t.backend = data, backend


def _trace(what: str, fn: Callable[[], Any], dynamic: bool = False) -> Any:
    """`fn()`, with what makes a trace fail said in the terms of an export (`dynamic`: some
    input has axes of unknown size)."""
    ndx = backends.get("ndonnx").xp
    try:
        return fn()
    except OnnxExportError:
        raise
    except TypeError as e:
        if dynamic and "NoneType" in str(e):
            raise OnnxExportError(
                f"cannot export {what} with dynamic_axes: it computes with the size of a dynamic axis as a number "
                f"({e}), which is unknown while tracing; export it without dynamic_axes (a model per input shape)"
            ) from e
        raise OnnxExportError(f"cannot export {what}: {type(e).__name__}: {e}") from e
    except AttributeError as e:
        if getattr(e, "obj", None) is getattr(ndx, "module", ndx):
            raise OnnxExportError(
                f"cannot export {what}: {_caller(e)} needs the op {e.name} (xp.{e.name}), which ndonnx "
                f"{ndx.__version__} lacks"
            ) from e
        raise OnnxExportError(f"cannot export {what}: {type(e).__name__}: {e}") from e
    except Exception as e:  # the trace met something ONNX cannot express
        reason = str(e)
        if reason == "no propagated value available":
            reason = "a Python branch on a value (bool(), item(), float() of a traced array) cannot be exported"
        raise OnnxExportError(f"cannot export {what}: {type(e).__name__}: {reason}") from e


def _caller(error: BaseException) -> str:
    """The innermost public function of this project in `error`'s traceback, as ``module.function``,
    passing over the graph layer (`Primitive.bind` calls every op's kernel; the op is the news)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # above autograd_core/
    name, tb = "the function", error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        path = os.path.abspath(code.co_filename)
        if path.startswith(root + os.sep) and code.co_name.isidentifier() and not code.co_name.startswith("_"):
            module = os.path.splitext(os.path.relpath(path, root))[0].replace(os.sep, ".")
            if not module.startswith("autograd_core.graph."):
                name = f"{module}.{code.co_name}"
        tb = tb.tb_next
    return name


def _tree_placeholders(name: str, value: Any, dtype: str, placeholder: Callable[..., Any]) -> Any:
    """`value` (a number, or a tuple of numbers such as Adam's betas) with a placeholder of
    `dtype` for each number, named `name` (and ``.0``, ``.1``... in a tuple)."""
    if isinstance(value, tuple | list):
        return type(value)(placeholder(f"{name}.{i}", v, dtype) for i, v in enumerate(value))
    return placeholder(name, value, dtype)


def _axes(dynamic_axes: DynamicAxes | None, name: str, ndim: int) -> dict[int, str]:
    """The dynamic axes of the input or output `name`: axis -> the dimension's name."""
    given = (dynamic_axes or {}).get(name, {})
    axes = dict(given) if isinstance(given, dict) else {a: f"{name}_dim{a}" for a in given}
    for axis in axes:
        if not -ndim <= axis < ndim:
            raise ValueError(f"dynamic_axes[{name!r}] names axis {axis}, but {name} has {ndim} axes")
    return {a % ndim: n for a, n in axes.items()}


def _names(given: Sequence[str] | None, count: int, prefix: str) -> list[str]:
    names = list(given) if given is not None else [f"{prefix}_{i}" for i in range(count)]
    if len(names) != count:
        raise ValueError(f"{len(names)} {prefix} names given for {count} {prefix}s")
    return names


def _model_proto(ndx: Any, inputs: dict[str, Any], outputs: dict[str, Any], constants: dict[str, np.ndarray]) -> Any:
    """The ONNX model of the graph from `inputs` to `outputs`, where the inputs named in
    `constants` are initializers holding those values."""
    from onnx import numpy_helper

    model = ndx.build(inputs, outputs)
    graph = model.graph
    kept = [i for i in graph.input if i.name not in constants]
    del graph.input[:]
    graph.input.extend(kept)
    used = _used_names(graph)
    graph.initializer.extend(
        numpy_helper.from_array(np.ascontiguousarray(v), n) for n, v in constants.items() if n in used
    )
    return model


def _used_names(graph: Any) -> set[str]:
    """The names the nodes of `graph` (and of their subgraphs) read, and its outputs."""
    used = {o.name for o in graph.output}
    for node in graph.node:
        used.update(node.input)
        for attribute in node.attribute:
            for sub in [attribute.g, *attribute.graphs] if attribute.HasField("g") else attribute.graphs:
                used |= _used_names(sub)
    return used


def _save(model: Any, path: str | os.PathLike | None) -> Any:
    if path is not None:
        import onnx

        onnx.save(model, os.fspath(path))
    return model


def _name_output_axes(model: Any, dynamic_axes: DynamicAxes | None) -> None:
    for output in model.graph.output:
        dims = output.type.tensor_type.shape.dim
        for axis, name in _axes(dynamic_axes, output.name, len(dims)).items():
            dims[axis].ClearField("dim_value")
            dims[axis].dim_param = name


def export(
    model: Callable[..., Any],
    example_inputs: Any,
    path: str | os.PathLike | None = None,
    *,
    dynamic_axes: DynamicAxes | None = None,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
) -> Any:
    """Export the forward pass ``model(*example_inputs)`` as an ONNX model, written to `path`
    (when given) and returned (an ``onnx.ModelProto``).

    `model` is a module (anything with ``named_parameters()`` and ``named_buffers()``: its
    parameters and buffers become initializers named as in its state dict) or a function of
    tensors. `example_inputs` (a tensor or array, or a tuple of them) give the inputs' shapes
    and dtypes; each becomes a graph input (``input_0``... unless `input_names`), and each
    tensor of the result a graph output (``output_0``... unless `output_names`).
    `dynamic_axes` maps an input or output name to the axes whose size may change (a list, or
    ``{axis: "batch"}`` to name them), as in ``torch.onnx.export``.

    >>> import autograd_core as ag, nn
    >>> model = nn.Linear(3, 2)
    >>> onnx_model = ag.onnx.export(model, ag.ones(4, 3), dynamic_axes={"input_0": {0: "batch"}})
    >>> [i.name for i in onnx_model.graph.input], [i.name for i in onnx_model.graph.initializer]
    (['input_0'], ['weight', 'bias'])
    """
    ndonnx_backend, ndx = _ndonnx()
    examples = list(example_inputs) if isinstance(example_inputs, tuple | list) else [example_inputs]
    hosts = [_host(x) for x in examples]
    in_names = _names(input_names, len(hosts), "input")
    arguments = {}
    for name, host in zip(in_names, hosts):
        axes = _axes(dynamic_axes, name, host.ndim)
        shape = tuple(axes.get(a, size) for a, size in enumerate(host.shape))
        arguments[name] = ndx.argument(shape=shape, dtype=getattr(ndx, host.dtype.name))
    named = _named_state(model)
    constants = {name: _host(t) for name, t in named}
    what = type(model).__name__ if named else getattr(model, "__name__", "the function")

    def forward() -> list[Any]:
        args = [TensorBase._wrap(arguments[n], ndonnx_backend) for n in in_names]
        with backends.use(ndonnx_backend), no_grad():
            leaves, _ = tree_flatten(model(*args))
        return [t.array for t in leaves]

    with _placeholders(named, ndonnx_backend) as params:
        results = _trace(what, forward, dynamic=bool(dynamic_axes))
        out_names = _names(output_names, len(results), "output")
        onnx_model = _model_proto(ndx, {**arguments, **params}, dict(zip(out_names, results)), constants)
    _name_output_axes(onnx_model, dynamic_axes)
    return _save(onnx_model, path)


@dataclass
class ExportedStep:
    """A training step exported by `export_step`.

    Attributes:
        model: the ONNX model (``onnx.ModelProto``).
        state: the values to feed its state inputs now, by input name: parameters, buffers,
            optimizer state and hyper-parameters.
        updates: which output is the next value of which input (output name -> input name).
        input_names: the step's own inputs (``input_0``...), which `state` does not hold.
        output_names: the step's own results (``output_0``...).

    One training step per run: feed `state` and the step's inputs, then put each output named
    in `updates` in its input's place for the next run.
    """

    model: Any
    state: dict[str, np.ndarray]
    updates: dict[str, str]
    input_names: list[str]
    output_names: list[str]


def export_step(
    step: Callable[..., Any],
    example_inputs: Any,
    path: str | os.PathLike | None = None,
    *,
    modules: Iterable[Any] = (),
    optimizers: Iterable[Any] = (),
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
) -> ExportedStep:
    """Export a whole training step, ``step(*example_inputs)`` (forward, ``backward()``,
    ``opt.step()``), as one ONNX model over the state of `modules` and `optimizers`, with the
    contract of `autograd_core.transforms.compile`: the parameters and buffers (named as in the modules'
    state dicts), the optimizers' state (``optimizer0.<parameter>.exp_avg``...) and their
    traced hyper-parameters (``optimizer0.group0.lr``, ``optimizer0.group0.betas.0``...) are
    inputs; the step's results (``output_0``...) and the new parameters, buffers and optimizer
    state (the input's name and ``.next``) are outputs. Step counts travel as floats of their
    parameter's dtype (an integer count would promote a float32 update to float64). Written to
    `path` when given; the modules and optimizers are left as they were.

    The optimizers' state must exist (run one step, or load a state dict, first): it fixes the
    model's inputs.

    >>> import autograd_core as ag, nn, optim, nn.functional as F
    >>> model = nn.Linear(3, 2); opt = optim.SGD(model.parameters(), lr=0.1)
    >>> def train_step(x, y):
    ...     loss = F.cross_entropy(model(x), y)
    ...     opt.zero_grad(); loss.backward(); opt.step()
    ...     return loss
    >>> x, y = ag.ones(4, 3), ag.tensor([0, 1, 0, 1])
    >>> exported = ag.onnx.export_step(train_step, (x, y), modules=[model], optimizers=[opt])
    >>> exported.updates
    {'weight.next': 'weight', 'bias.next': 'bias'}
    """
    ndonnx_backend, ndx = _ndonnx()
    state = StepState(modules, optimizers)
    names = {id(t): n for m in modules for n, t in reversed(_named_state(m))}
    tensor_names = [names.get(id(t), f"tensor{i}") for i, t in enumerate(state.tensors)]
    dtypes = [t.dtype.name for t in state.params]
    feeds: dict[str, np.ndarray] = {}  # every state input: its value now
    arguments: dict[str, Any] = {}  # and its placeholder

    def placeholder(name: str, value: Any, dtype: str | None = None) -> Any:
        feeds[name] = np.asarray(_host(value), dtype=dtype)
        arguments[name] = ndx.argument(shape=feeds[name].shape, dtype=getattr(ndx, feeds[name].dtype.name))
        return arguments[name]

    tensor_data, opt_states = state.state_of()
    traced, _ = state.hyperparameters()
    opt_names = [f"optimizer{k}" for k in range(len(state.optimizers))]
    group_names = [f"{o}.group{g}" for o, opt in zip(opt_names, state.optimizers) for g in range(len(opt.param_groups))]
    group_dtypes = [next((p.dtype.name for p in g["params"]), "float64") for g in state.groups]
    t_args = [placeholder(n, t) for n, t in zip(tensor_names, state.tensors)]
    s_args = [
        [
            {key: placeholder(f"{o}.{n}.{key}", v, d if isinstance(v, int) else None) for key, v in s.items()}
            for n, s, d in zip(tensor_names, states, dtypes)
        ]
        for o, states in zip(opt_names, opt_states)
    ]
    h_args = [
        {key: _tree_placeholders(f"{g}.{key}", value, d, placeholder) for key, value in group.items()}
        for g, group, d in zip(group_names, traced, group_dtypes)
    ]
    examples = list(example_inputs) if isinstance(example_inputs, tuple | list) else [example_inputs]
    hosts = [_host(x) for x in examples]
    in_names = _names(input_names, len(hosts), "input")
    x_args = [ndx.argument(shape=h.shape, dtype=getattr(ndx, h.dtype.name)) for h in hosts]
    saved = [(t, t.array, t.backend, t.grad) for t in state.tensors]
    what = getattr(step, "__name__", "the step")
    try:
        with backends.use(ndonnx_backend):
            new_tensors, new_states, _, out, _ = _trace(
                what, lambda: state.traceable(step, ndonnx_backend)(t_args, s_args, h_args, x_args)
            )
    finally:
        for t, data, backend, grad in saved:
            t.array, t.backend, t.grad = data, backend, grad
        state.install(tensor_data, opt_states, None)
        state.set_hyperparameters(traced)
    changed = [
        f"{o}.{n}"
        for o, states, new in zip(opt_names, opt_states, new_states)
        for n, s, ns in zip(tensor_names, states, new)
        if set(s) != set(ns)
    ]
    if changed:
        raise OnnxExportError(
            f"cannot export {what}: the step creates optimizer state ({', '.join(changed)}), which the exported step "
            "must take as inputs; run one step first (or load the optimizers' state dicts), then export"
        )
    results, _ = tree_flatten(out)
    out_names = _names(output_names, len(results), "output")
    outputs = dict(zip(out_names, results))
    updates = {}
    for n, data in zip(tensor_names, new_tensors):
        outputs[f"{n}.next"], updates[f"{n}.next"] = data, n
    for o, states in zip(opt_names, new_states):
        for n, s in zip(tensor_names, states):
            for key, value in s.items():
                name = f"{o}.{n}.{key}"
                outputs[f"{name}.next"], updates[f"{name}.next"] = value, name
    inputs = dict(zip(in_names, x_args))
    model = _model_proto(ndx, {**inputs, **arguments}, outputs, {})
    _save(model, path)
    return ExportedStep(model, feeds, updates, in_names, out_names)
