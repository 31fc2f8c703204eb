"""Hypergradients through scikit-learn: the gradient of a validation loss with respect to
Ridge's `alpha` and to the training labels, taken through scikit-learn's own fitting code.

scikit-learn runs on any array-API namespace when array-API dispatch is on, and a tensor's
namespace is `autograd_core`: `Ridge(solver="svd").fit` then runs on tensors, and the
validation loss keeps its graph back to `alpha` and to the training data. SciPy reads
SCIPY_ARRAY_API when it is first imported, so set it before anything imports SciPy:

    SCIPY_ARRAY_API=1 python examples/hypergradients.py
    SCIPY_ARRAY_API=1 AUTOGRAD_BACKEND=torch python examples/hypergradients.py
"""

from __future__ import annotations

import os

import numpy as np

if os.environ.get("SCIPY_ARRAY_API") != "1":
    raise SystemExit("set SCIPY_ARRAY_API=1 first: SciPy reads it once, when it is imported")

import sklearn  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402

import autograd_core as ag  # noqa: E402
import optim  # noqa: E402

sklearn.set_config(array_api_dispatch=True)

# 80 samples, 20 features of which about a third matter, noisy targets; one training label is
# corrupted by +30.
rng = np.random.default_rng(0)
X = rng.standard_normal((80, 20))
y = X @ (rng.standard_normal(20) * (rng.random(20) < 0.3)) + 0.8 * rng.standard_normal(80)
CORRUPTED = 7
y[CORRUPTED] += 30.0
X_train, X_val, y_val = ag.asarray(X[:50]), ag.asarray(X[50:]), ag.asarray(y[50:])


def validation_loss(log_alpha: ag.Tensor, y_train: ag.Tensor) -> ag.Tensor:
    """Mean squared error on the validation rows of Ridge fitted on the training rows."""
    model = Ridge(alpha=ag.exp(log_alpha), solver="svd").fit(X_train, y_train)
    return ((model.predict(X_val) - y_val) ** 2).mean()


def main() -> dict[str, float]:
    # 1. The hypergradient d loss / d log(alpha), against a central finite difference.
    log_alpha = ag.tensor(0.0, dtype="float64", requires_grad=True)
    y_train = ag.tensor(y[:50], dtype="float64", requires_grad=True)
    validation_loss(log_alpha, y_train).backward()
    h = 1e-6
    shifted = [validation_loss(ag.asarray(s, dtype="float64"), y_train).item() for s in (h, -h)]
    hypergradient = log_alpha.grad.item()
    print(f"d loss / d log(alpha) at alpha = 1: {hypergradient:.9f}")
    print(f"central difference:                 {(shifted[0] - shifted[1]) / (2 * h):.9f}")

    # 2. The gradient of the validation loss with respect to each training label: the corrupted
    # one pulls the fit hardest, so its gradient is the largest.
    label_grad = np.abs(y_train.grad.detach().numpy())
    print(f"largest |d loss / d y_i| at i = {int(np.argmax(label_grad))} (the corrupted label is {CORRUPTED});")
    print(f"  its size {label_grad.max():.3f}, the median {np.median(label_grad):.3f}")

    # 3. Tune alpha by gradient descent on log(alpha), then compare with a grid search.
    optimizer = optim.Adam([log_alpha], lr=0.1)
    for _ in range(150):
        optimizer.zero_grad()
        loss = validation_loss(log_alpha, y_train.detach())
        loss.backward()
        optimizer.step()
    grid = np.linspace(-3.0, 6.0, 181)
    grid_losses = [validation_loss(ag.asarray(g, dtype="float64"), y_train.detach()).item() for g in grid]
    best = int(np.argmin(grid_losses))
    alpha = ag.exp(log_alpha).item()
    print(f"gradient descent: alpha = {alpha:.2f}, validation loss {loss.item():.4f}")
    print(f"grid search:      alpha = {np.exp(grid[best]):.2f}, validation loss {grid_losses[best]:.4f}")
    return {
        "hypergradient": hypergradient,
        "central_difference": (shifted[0] - shifted[1]) / (2 * h),
        "largest_label_gradient_at": int(np.argmax(label_grad)),
        "alpha_by_gradient": alpha,
        "loss_by_gradient": loss.item(),
        "alpha_by_grid": float(np.exp(grid[best])),
        "loss_by_grid": grid_losses[best],
    }


if __name__ == "__main__":
    main()
