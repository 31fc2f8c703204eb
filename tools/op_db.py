"""PyTorch's own op database as the yardstick of breadth: each OpInfo's float64 sample inputs
run through our counterpart (`autograd_core.torch`, reached by the entry's name) and through
torch, values and vector-Jacobian products compared.

    python tools/op_db.py --backend numpy                     # every entry, a summary
    python tools/op_db.py --backend jax --ops cat,linalg.norm --verbose
    python tools/op_db.py --backend numpy --out results/op-db-numpy.json
    python tools/op_db.py --table results/op-db-*.json          # the committed results as a table

An entry is matched by its name: ``linalg.norm`` is ``autograd_core.torch.linalg.norm``,
``__radd__`` a method of the input, and a name the namespace lacks a Tensor method or
property (``t``, ``mH``, ``double``). Each of its first `samples` sample inputs is copied to
the backend (torch tensors become our tensors of the same dtype, torch dtypes ours), both
calls run, and the results must agree: the same structure, shapes and dtypes, values within
float64 rounding (``rtol = atol = 1e-7``), and, for an entry that supports autograd, the
gradients of every floating output contracted with one random cotangent. An entry passes
when every sample it was given passes. Random and uninitialised results (``randn``,
``empty``) are compared by shape and dtype only. `NOT_APPLICABLE` lists the entries left out
of the denominator, each with its reason. Needs the ``expecttest`` package (torch's op
database imports it).
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
import types
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

import backends

UNCOMPARABLE_VALUES = {  # random draws and uninitialised memory: shape and dtype are compared
    *("bernoulli", "cauchy", "exponential", "geometric", "log_normal", "multinomial", "normal", "uniform"),
    *("rand_like", "randint", "randint_like", "randn", "randn_like", "nn.functional.rrelu"),
    *("nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d", "nn.functional.alpha_dropout"),
    *("nn.functional.feature_alpha_dropout", "empty", "empty_like", "empty_permuted", "empty_strided"),
    *("new_empty", "new_empty_strided", "svd_lowrank", "pca_lowrank"),
    *("nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d"),
}

RANDOM_SAMPLES = {  # samples that draw a dropout mask: shape and dtype are compared
    "nn.functional.scaled_dot_product_attention": lambda s: s.kwargs.get("dropout_p", 0) > 0,
    "nn.functional.multi_head_attention_forward": lambda s: s.kwargs.get("training") and s.args[9] > 0,
}

TORCH_INACCURATE = {"special.bessel_j0": 1e-6, "special.bessel_y1": 1e-6}
"""Entries compared with a looser absolute tolerance because torch's own float64 values are
off: on [4, 6] its bessel_j0 and bessel_y1 differ from mpmath's by up to 3.8e-7 and 8.7e-7,
SciPy's (and ours) by 2e-16 and 1e-15."""

NOT_APPLICABLE = {
    "sparse": "a sparse layout: tensors here are dense",
    "to_sparse": "a sparse layout: tensors here are dense",
    "jiterator": "CUDA-only (runtime-compiled CUDA kernels)",
    "torch._scaled_mm": "CUDA-only (float8 matrix multiply)",
    "torch.ops.aten": "a private aten operator, not public API",
    "bmm.triton_optimized": "CUDA-only (a Triton kernel)",
    "_": "a private name (leading underscore), not public API",
    "native_": "an aten-internal kernel (native_*), not public API",
    "as_strided": "reads memory by raw strides: tensors here share values through views, not memory",
    "resize_": "resizes a storage in place: tensors here share values through views, not memory",
    "hash_tensor": "a hash of the bytes of the storage, not a numeric op",
    "max_pool2d_with_indices_backward": "an aten backward kernel, not public API",
}
"""Entries outside the denominator, by name or name prefix, with the reason."""


@dataclass
class Outcome:
    """The result of one OpInfo entry: `status` is pass, missing, raises, wrong, no_float64
    or not_applicable; `detail` says why for all but pass."""

    entry: str
    status: str
    detail: str = ""
    samples: int = 0


def entry_name(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def not_applicable(op: Any) -> str | None:
    for prefix, reason in NOT_APPLICABLE.items():
        if op.name == prefix or op.name.startswith(prefix):
            return reason
    return None


# --- torch values as ours -----------------------------------------------------------------------
def to_ours(x: Any, ns: Any, grads: list[tuple[Any, Any]]) -> Any:
    """`x` with every torch tensor (through lists, tuples and dicts) copied to our tensors and
    every torch dtype as ours; the pairs (torch leaf, our leaf) that require grad go to `grads`."""
    if isinstance(x, torch.Tensor):
        host = x.detach().resolve_conj().resolve_neg().numpy()
        ours = ns.tensor(host, requires_grad=x.requires_grad)
        if x.requires_grad:
            grads.append((x, ours))
        return ours
    if isinstance(x, torch.dtype):
        return getattr(ns, str(x).removeprefix("torch."))
    if isinstance(x, torch.device):
        return str(x)
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, torch.nn.Module) and not any(True for _ in x.parameters()):
        return _our_module(x, ns)
    if isinstance(x, (list, tuple)):
        items = [to_ours(v, ns, grads) for v in x]
        return type(x)(items) if not hasattr(x, "_fields") else tuple(items)
    if isinstance(x, dict):
        return {k: to_ours(v, ns, grads) for k, v in x.items()}
    return x


def _our_module(module: torch.nn.Module, ns: Any) -> Any:
    """Our layer of the same class and settings as a torch layer without parameters
    (``nn.PairwiseDistance(p=1)`` as a loss's distance function)."""
    ours = getattr(ns.nn, type(module).__name__).__new__(getattr(ns.nn, type(module).__name__))
    ns.nn.Module.__init__(ours)
    for key, value in vars(module).items():
        if not key.startswith("_"):
            setattr(ours, key, value)
    return ours


def leaves(x: Any) -> Iterator[Any]:
    """The values of a result, through tuples and lists (named tuples too)."""
    if isinstance(x, (list, tuple)):
        for v in x:
            yield from leaves(v)
    else:
        yield x


def host(x: Any) -> Any:
    """A result as numpy (tensors) or itself (Python values)."""
    if isinstance(x, torch.Tensor):
        if x._is_zerotensor():
            return np.zeros(tuple(x.shape), dtype=str(x.dtype).removeprefix("torch."))
        return x.detach().resolve_conj().resolve_neg().numpy()
    if hasattr(x, "backend") and hasattr(x, "array"):
        return np.asarray(x.detach().numpy())
    return x


# --- one entry ----------------------------------------------------------------------------------
def written_by_the_database(fn: Any) -> bool:
    return isinstance(fn, types.FunctionType) and (fn.__module__ or "").startswith("torch.testing")


def with_our_namespace(fn: types.FunctionType, ns: Any) -> types.FunctionType:
    """A function of the op database run with our namespace where it names torch (and F)."""
    scope = {**fn.__globals__, "torch": ns, "F": ns.nn.functional}
    return types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)


def counterpart(op: Any, ns: Any) -> Callable[..., Any] | None:
    """Our function for `op`, called as torch's is: ``f(input, *args, **kwargs)``. An entry whose
    function the op database writes itself (a lambda reordering arguments, ``lambda x: x.mH``)
    runs that function with our namespace in the place of torch's."""
    name = op.name
    if written_by_the_database(op.op):
        return with_our_namespace(op.op, ns)
    if name.startswith("__"):
        return lambda x, *a, **k: getattr(x, name)(*a, **k)
    target: Any = ns
    for part in name.split("."):
        target = getattr(target, part, None)
        if target is None:
            break
    if target is not None and callable(target):
        return target
    if "." not in name and name in dir(ns.Tensor):
        if isinstance(getattr(ns.Tensor, name), property):
            return lambda x: getattr(x, name)
        return lambda x, *a, **k: getattr(x, name)(*a, **k)
    return None


def compare(ours: Any, theirs: Any, values: bool, atol: float = 1e-7) -> str:
    """What differs between two results ('' when they agree)."""
    a, b = list(leaves(ours)), list(leaves(theirs))
    if len(a) != len(b):
        return f"{len(a)} results, torch gives {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        x, y = host(x), host(y)
        if isinstance(y, np.ndarray):
            x = np.asarray(x)
            if x.shape != y.shape:
                return f"result {i}: shape {x.shape}, torch {y.shape}"
            if x.dtype != y.dtype:
                return f"result {i}: dtype {x.dtype}, torch {y.dtype}"
            if values and not np.allclose(x, y, rtol=1e-7, atol=atol, equal_nan=True):
                return f"result {i}: values differ by up to {np.nanmax(np.abs(x - y)):.3g}"
        elif values and not (x == y or (x != x and y != y)):
            return f"result {i}: {x!r}, torch {y!r}"
    return ""


def compare_gradients(ours_out: Any, theirs_out: Any, grads: list[tuple[Any, Any]], ns: Any, seed: int) -> str:
    """Gradients of every floating output that torch differentiates, contracted with one random
    cotangent per output, with respect to every input that requires grad."""
    pairs = [
        (o, t)
        for o, t in zip(leaves(ours_out), leaves(theirs_out))
        if isinstance(t, torch.Tensor) and t.requires_grad and t.dtype.is_floating_point
    ]
    if not pairs or not grads:
        return ""
    rng = np.random.default_rng(seed)
    cotangents = [rng.standard_normal(tuple(t.shape)) for _, t in pairs]
    expected = torch.autograd.grad(
        [t for _, t in pairs],
        [t for t, _ in grads],
        [torch.tensor(c, dtype=t.dtype) for (_, t), c in zip(pairs, cotangents)],
        allow_unused=True,
    )
    recorded = [(o, c) for (o, _), c in zip(pairs, cotangents) if getattr(o, "requires_grad", False)]
    got = [None] * len(grads)  # no output recorded here: every gradient is zero
    if recorded:
        got = ns.autograd.grad(
            [o for o, _ in recorded],
            [o for _, o in grads],
            [ns.tensor(c).to(o.dtype) for o, c in recorded],
            allow_unused=True,
        )
    for i, (g, e) in enumerate(zip(got, expected)):
        g = np.zeros(tuple(grads[i][0].shape)) if g is None else host(g)
        e = np.zeros(tuple(grads[i][0].shape)) if e is None else host(e)
        if g.shape != e.shape:
            return f"gradient {i}: shape {g.shape}, torch {e.shape}"
        if not np.allclose(g, e, rtol=1e-7, atol=1e-7, equal_nan=True):
            return f"gradient {i}: differs by up to {np.nanmax(np.abs(g - e)):.3g}"
    return ""


def run_entry(op: Any, ns: Any, samples: int = 8) -> Outcome:
    """Run one OpInfo entry's samples through ours and torch's; see the module docstring."""
    name = entry_name(op)
    if reason := not_applicable(op):
        return Outcome(name, "not_applicable", reason)
    if torch.float64 not in op.supported_dtypes("cpu"):
        return Outcome(name, "no_float64", "torch has no float64 on the CPU for it")
    ours_fn = counterpart(op, ns)
    if ours_fn is None:
        return Outcome(name, "missing", f"no {op.name} here")
    values = op.name not in UNCOMPARABLE_VALUES and name not in UNCOMPARABLE_VALUES
    differentiable = op.supports_autograd and values
    tried = 0
    torch.manual_seed(0)
    for k, sample in enumerate(op.sample_inputs("cpu", torch.float64, requires_grad=differentiable)):
        if k >= samples:
            break
        try:
            theirs = op(sample.input, *sample.args, **sample.kwargs)
        except Exception:  # noqa: BLE001 - a sample torch itself rejects says nothing about ours
            continue
        tried += 1
        random_sample = name in RANDOM_SAMPLES and RANDOM_SAMPLES[name](sample)
        grads: list[tuple[Any, Any]] = []
        inputs = to_ours((sample.input, sample.args, sample.kwargs), ns, grads)
        try:
            ours = ours_fn(inputs[0], *inputs[1], **inputs[2])
            # the sample's view of the results that is unique (eigenvectors up to sign: their absolute values)
            seen = sample.output_process_fn_grad
            theirs = seen(theirs)
            ours = (with_our_namespace(seen, ns) if written_by_the_database(seen) else seen)(ours)
            problem = compare(ours, theirs, values and not random_sample, TORCH_INACCURATE.get(name, 1e-7))
            if not problem and differentiable and not random_sample:
                problem = compare_gradients(ours, theirs, grads, ns, seed=k)
        except AttributeError as error:
            if f"'{ns.__name__}" in str(error) or "'Tensor'" in str(error):
                return Outcome(name, "missing", str(error), tried)
            where = traceback.extract_tb(error.__traceback__)[-1]
            return Outcome(name, "raises", f"{type(error).__name__}: {error} ({where.filename}:{where.lineno})", tried)
        except Exception as error:  # noqa: BLE001 - the outcome records what was raised
            where = traceback.extract_tb(error.__traceback__)[-1]
            return Outcome(name, "raises", f"{type(error).__name__}: {error} ({where.filename}:{where.lineno})", tried)
        if problem:
            return Outcome(name, "wrong", f"sample {k}: {problem}", tried)
    return Outcome(name, "pass", samples=tried)


def op_db_entries(names: set[str] | None = None) -> list[Any]:
    """PyTorch's op database, or the entries named in `names` (by name or name.variant)."""
    from torch.testing._internal.common_methods_invocations import op_db

    return [op for op in op_db if names is None or op.name in names or entry_name(op) in names]


def run(backend: str, names: set[str] | None = None, samples: int = 8) -> list[Outcome]:
    import autograd_core.torch as ns

    torch.set_default_dtype(torch.float32)
    with backends.use(backend):
        return [run_entry(op, ns, samples) for op in op_db_entries(names)]


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    counts = Counter(o.status for o in outcomes)
    applicable = sum(counts[s] for s in ("pass", "missing", "raises", "wrong"))
    return {"counts": dict(counts), "applicable": applicable, "pass_rate": counts["pass"] / max(applicable, 1)}


def table(paths: list[str]) -> str:
    """The committed results (``results/op-db-*.json``) as one markdown table, a row per backend."""
    statuses = ("pass", "missing", "raises", "wrong", "no_float64", "not_applicable")
    rows = ["| backend | " + " | ".join(statuses) + " | pass rate |", "|---" * (len(statuses) + 2) + "|"]
    for path in paths:
        result = json.loads(Path(path).read_text())
        counts = [str(result["counts"].get(s, 0)) for s in statuses]
        rows.append(f"| {result['backend']} | " + " | ".join(counts) + f" | {result['pass_rate']:.1%} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--ops", help="comma-separated entry names (default: all)")
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--out", help="write every outcome and the summary as JSON here")
    parser.add_argument("--verbose", action="store_true", help="print every entry that does not pass")
    parser.add_argument("--table", nargs="+", metavar="JSON", help="print these results files as a table, run nothing")
    args = parser.parse_args(argv)
    if args.table:
        print(table(args.table))
        return 0
    outcomes = run(args.backend, set(args.ops.split(",")) if args.ops else None, args.samples)
    result = summary(outcomes)
    if args.verbose:
        for o in outcomes:
            if o.status != "pass":
                print(f"{o.status:15} {o.entry:45} {o.detail[:200]}")
    print(f"{args.backend}: {result['counts']}; pass {result['pass_rate']:.1%} of {result['applicable']} applicable")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"backend": args.backend, **result, "entries": [asdict(o) for o in outcomes]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
