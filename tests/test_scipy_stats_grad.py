"""SciPy's array-API paths on tensors keep the gradient: scipy.stats and scipy.special
functions, given tensors, run on autograd_core (``xp.special`` included), and their gradients
agree with central finite differences in float64, on every backend.

SciPy reads SCIPY_ARRAY_API once, when it is imported, so each backend's run is a fresh
interpreter with it set (the tests' own process, and xdist's workers, are left as they are);
the run prints each case's value, gradient and finite differences as JSON.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.special
import scipy.stats

ROOT = Path(__file__).resolve().parent.parent

# name: (the call on x, scipy's on numpy, the inputs) - x is positive, as the means and
# the entropies need; the statistics are of a sample of 7
SAMPLE = [0.31, 0.72, 1.4, 0.55, 2.1, 0.93, 1.2]
WEIGHTS = [0.5, 1.5, 0.25, 2.0, 1.0, 0.75, 1.25]
CASES = {
    "stats.entropy": "scipy.stats.entropy(x)",
    "stats.entropy base 2": "scipy.stats.entropy(x, base=2)",
    "stats.entropy qk": "scipy.stats.entropy(x, w)",
    "stats.entropy axis": "scipy.stats.entropy(xp.reshape(x[:6], (2, 3)), axis=1)",
    "stats.gmean": "scipy.stats.gmean(x)",
    "stats.gmean weights": "scipy.stats.gmean(x, weights=w)",
    "stats.hmean": "scipy.stats.hmean(x)",
    "stats.pmean": "scipy.stats.pmean(x, 2.5)",
    "stats.zscore": "scipy.stats.zscore(x)",
    "stats.variation": "scipy.stats.variation(x)",
    "stats.sem": "scipy.stats.sem(x)",
    "stats.skew": "scipy.stats.skew(x)",
    "stats.kurtosis": "scipy.stats.kurtosis(x)",
    "stats.moment 3": "scipy.stats.moment(x, order=3)",
    "stats.tvar": "scipy.stats.tvar(x)",
    # with b, scipy's logsumexp writes into an array its max was taken of (xpx.at, copy=None),
    # which PyTorch refuses at backward; ag.special.logsumexp takes b (tests/test_special.py)
    "special.logsumexp": "scipy.special.logsumexp(x)",
    "special.logsumexp axis": "scipy.special.logsumexp(xp.reshape(x[:6], (2, 3)), axis=1)",
    "special.softmax": "scipy.special.softmax(x)",
    "special.log_softmax": "scipy.special.log_softmax(x)",
    "special.entr": "scipy.special.entr(x)",
    "special.rel_entr": "scipy.special.rel_entr(x, w)",
    "special.xlogy": "scipy.special.xlogy(w, x)",
    "special.gammaln": "scipy.special.gammaln(x)",
    "special.psi": "scipy.special.psi(x)",
    "special.erfinv": "scipy.special.erfinv(x / 3)",
    "special.ndtri": "scipy.special.ndtri(x / 3)",
    "special.log_ndtr": "scipy.special.log_ndtr(-x)",
    "special.i0e": "scipy.special.i0e(x)",
    "special.logit": "scipy.special.logit(x / 3)",
}

RUN = """
import json, sys
import numpy as np
import autograd_core as ag
import backends
import scipy.special, scipy.stats

backend = backends.get(sys.argv[1])
cases = json.loads(sys.argv[2])
sample, weights = np.array(json.loads(sys.argv[3])), np.array(json.loads(sys.argv[4]))
projection = np.random.default_rng(0).standard_normal(len(sample))
xp = ag


def scalar(expression, values):
    x = ag.tensor(values, dtype="float64", requires_grad=True)
    w = ag.tensor(weights, dtype="float64")
    out = ag.asarray(eval(expression))
    flat = ag.reshape(out, (-1,))
    return x, out, ag.sum(flat * ag.asarray(projection[: flat.shape[0]], dtype="float64"))


results = {}
with backends.use(backend):
    for name, expression in cases.items():
        x, out, total = scalar(expression, sample)
        (grad,) = ag.grad(total, [x])
        differences = []
        for i in range(len(sample)):
            step = np.zeros(len(sample))
            step[i] = 1e-6
            up = scalar(expression, sample + step)[2].item()
            down = scalar(expression, sample - step)[2].item()
            differences.append((up - down) / 2e-6)
        results[name] = {
            "value": np.asarray(out.detach().numpy(), dtype=float).tolist(),
            "grad": grad.numpy().tolist(),
            "differences": differences,
        }
print(json.dumps(results))
"""


def run(script: str, *args: str, array_api: bool = True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SCIPY_ARRAY_API"}
    if array_api:
        env["SCIPY_ARRAY_API"] = "1"
    return subprocess.run(
        [sys.executable, "-c", script, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )


def reference(expression: str) -> np.ndarray:
    """scipy's own value, on numpy arrays (the array API plays no part)."""
    namespace = {"scipy": scipy, "np": np, "x": np.array(SAMPLE), "w": np.array(WEIGHTS), "xp": np}
    return np.asarray(eval(expression, namespace), dtype=float)


def test_scipy_functions_keep_the_gradient(float64_backend):
    done = run(RUN, float64_backend.name, json.dumps(CASES), json.dumps(SAMPLE), json.dumps(WEIGHTS))
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(results) == set(CASES)
    for name, result in results.items():
        np.testing.assert_allclose(result["value"], reference(CASES[name]), rtol=1e-10, err_msg=name)
        assert any(g != 0 for g in result["grad"]), name  # the gradient reached x
        np.testing.assert_allclose(result["grad"], result["differences"], rtol=1e-6, atol=1e-7, err_msg=name)


WITHOUT_ARRAY_API = """
import autograd_core as ag
import scipy.stats

x = ag.tensor([0.2, 0.3, 0.5], dtype="float64", requires_grad=True)
print(round(float(scipy.stats.entropy(x.detach())), 12))
try:
    scipy.stats.entropy(x)
except RuntimeError as e:
    print("refused:", e)
"""


def test_without_scipy_array_api_a_tensor_that_requires_grad_is_refused():
    """SciPy then computes on numpy arrays: a detached tensor gives SciPy's value, one that
    requires grad is refused rather than losing its gradient silently."""
    done = run(WITHOUT_ARRAY_API, array_api=False)
    assert done.returncode == 0, done.stderr[-3000:]
    value, refusal = done.stdout.strip().splitlines()
    assert float(value) == pytest.approx(scipy.stats.entropy([0.2, 0.3, 0.5]), rel=1e-12)
    assert refusal.startswith("refused:") and "detach()" in refusal


def test_the_documented_example_prints_what_its_comment_says():
    """docs/special.md's SciPy example (a ```py block: the page's ```python blocks run in this
    process, where SciPy is imported without SCIPY_ARRAY_API)."""
    page = (ROOT / "docs" / "special.md").read_text()
    (script,) = re.findall(r"^```py\n(.*?)^```", page, re.DOTALL | re.MULTILINE)
    done = run(script)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = done.stdout.strip().splitlines()[-1]
    assert printed == script.strip().splitlines()[-1].split("# ")[-1]
