"""scikit-learn's own array-API tests with `autograd_core` as the namespace, on every backend: a
fast part (metrics, estimator checks, helpers, mixed inputs) against array_api_strict, test by
test. The whole set per backend is `python tools/sklearn_array_api.py` (results/sklearn-array-api.md).

Each run is a fresh interpreter (SCIPY_ARRAY_API must be set before scipy is imported) with
`tools/sklearn_array_api.py` as a pytest plugin naming the two namespaces to scikit-learn.
"""

from __future__ import annotations

import pytest

from tools.sklearn_array_api import OURS, QUICK, QUICK_MODULES, REFERENCE, Comparison, family, run_tests, split


@pytest.fixture(scope="module")
def reference() -> dict[str, list[str]]:
    """array_api_strict's outcomes (they do not depend on the backend under test): run once."""
    _, found = split(run_tests("numpy", [REFERENCE], QUICK, QUICK_MODULES))
    return found


def test_scikit_learn_checks_pass_as_on_array_api_strict(backend, reference):
    ours, _ = split(run_tests(backend.name, [OURS], QUICK, QUICK_MODULES))
    comparison = Comparison(backend.name, ours, reference)
    assert set(ours) == set(reference), "the same tests run for both namespaces"
    assert {family(key) for key in ours} >= {
        "metrics/tests/test_common.py::test_array_api_compliance",
        "tests/test_common.py::test_estimators[check_array_api_input]",
        "utils/tests/test_array_api.py::test_move_to_array_api_conversions",
    }
    assert not comparison.defects(), "\n".join(f"{k}: {v}" for k, v in comparison.defects().items())
