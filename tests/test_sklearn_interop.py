"""scikit-learn's array-API code on tensors: a multiclass `f1_score` with labels numpy's hash
order would scramble, `pairwise_distances` written by 8 threads, and the gradient of
`polynomial_kernel` (which raises its kernel to the degree in place) against finite differences.

Array-API dispatch needs SCIPY_ARRAY_API set before scipy is imported, so each backend's run is
a fresh interpreter with it set; it prints its results as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import f1_score, pairwise_distances

ROOT = Path(__file__).resolve().parent.parent
Y_TRUE = [-100000, 7, 2**40, -100000, 7, 2**40, 3, 3]
Y_PRED = [-100000, 2**40, 7, -100000, -100000, 7, 3, 7]

RUN = """
import json, sys
import numpy as np
import sklearn
import autograd_core as ag
import backends
from sklearn.metrics import f1_score, pairwise_distances
from sklearn.metrics.pairwise import polynomial_kernel

sklearn.set_config(array_api_dispatch=True)
y_true, y_pred = json.loads(sys.argv[2]), json.loads(sys.argv[3])
rng = np.random.default_rng(0)
a, b, x0 = rng.standard_normal((40, 5)), rng.standard_normal((1280, 5)), rng.standard_normal((4, 3))


def kernel_sum(values):
    return polynomial_kernel(ag.asarray(values, dtype="float64"), degree=3, coef0=1.0).sum()


with backends.use(backends.get(sys.argv[1])):
    f1 = f1_score(ag.asarray(y_true), ag.asarray(y_pred), average="macro")
    distances = pairwise_distances(ag.asarray(a), ag.asarray(b), n_jobs=8)
    x = ag.tensor(x0, dtype="float64", requires_grad=True)
    polynomial_kernel(x, degree=3, coef0=1.0).sum().backward()
    steps = np.eye(x0.size).reshape(x0.size, *x0.shape) * 1e-6
    differences = [(kernel_sum(x0 + s) - kernel_sum(x0 - s)).item() / 2e-6 for s in steps]
    print(json.dumps({
        "f1": float(f1),
        "distances": distances.tolist(),
        "grad": x.grad.tolist(),
        "differences": np.reshape(differences, x0.shape).tolist(),
    }))
"""


def test_scikit_learn_on_tensors_matches_numpy(backend):
    env = {**os.environ, "SCIPY_ARRAY_API": "1"}
    run = subprocess.run(
        [sys.executable, "-c", RUN, backend.name, json.dumps(Y_TRUE), json.dumps(Y_PRED)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((40, 5)), rng.standard_normal((1280, 5))
    assert got["f1"] == pytest.approx(f1_score(Y_TRUE, Y_PRED, average="macro"), abs=1e-12)
    np.testing.assert_allclose(got["distances"], pairwise_distances(a, b), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["grad"], got["differences"], rtol=1e-6, atol=1e-7)
