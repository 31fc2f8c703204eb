"""examples/hypergradients.py (the hypergradients docs page): gradients through scikit-learn's
Ridge against finite differences, the corrupted label found by its gradient, and alpha tuned
by gradient descent to the grid search's optimum, on each backend.

Array-API dispatch needs SCIPY_ARRAY_API set before SciPy is imported, so each run is a fresh
interpreter; it prints the example's figures as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUN = "import json, examples.hypergradients as h; print(json.dumps(h.main()))"


@pytest.mark.parametrize("name", ["numpy", "torch", "jax"])
def test_hypergradients_through_scikit_learn(name):
    pytest.importorskip(name, reason=f"the {name} backend needs {name}")
    env = {**os.environ, "SCIPY_ARRAY_API": "1", "AUTOGRAD_BACKEND": name, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", RUN], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["hypergradient"] == pytest.approx(got["central_difference"], rel=1e-7)
    assert got["largest_label_gradient_at"] == 7
    # gradient descent reaches the grid's optimum: within one grid step (0.05 in log alpha)
    assert abs(got["alpha_by_gradient"] / got["alpha_by_grid"] - 1) < 0.06
    assert got["loss_by_gradient"] <= got["loss_by_grid"] + 1e-3
