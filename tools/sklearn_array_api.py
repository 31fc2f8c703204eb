"""scikit-learn's own array-API tests run with `autograd_core` as a namespace, beside array_api_strict.

scikit-learn parametrizes its array-API tests by the namespaces that
`sklearn.utils._array_api.yield_namespaces` names (numpy, array_api_strict, cupy, torch, dpnp) and
imports each by name in `sklearn.utils._testing._array_api_for_tests`. Loaded as a pytest plugin
(``-p tools.sklearn_array_api``), this module makes those generators name `autograd_core` and
array_api_strict instead, before any test module is collected (with scikit-learn's two
device/dtype cases of array_api_strict, float64 and float32 for ours; mixed inputs from and to
numpy for both), runs the estimator check scikit-learn gives array_api_strict alone for both, adds
`autograd_core` to a fixed list of library names that holds array_api_strict, and writes each
test's outcome to a JSON file. Run as a script, it runs the tests once per backend in a fresh interpreter
(``AUTOGRAD_BACKEND``, ``SCIPY_ARRAY_API=1``) and compares every test of `autograd_core` with the
same test of array_api_strict::

    python tools/sklearn_array_api.py                       # the whole set on numpy, torch and jax
    python tools/sklearn_array_api.py --backend torch --quick
    python tools/sklearn_array_api.py --write results/sklearn-array-api.md

It exits non-zero when a test that array_api_strict passes fails for `autograd_core`.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

OURS, REFERENCE = "autograd_core", "array_api_strict"
NAMESPACES_VARIABLE = "SKLEARN_ARRAY_API_NAMESPACES"  # which of the two the generators name
REPORT_VARIABLE = "SKLEARN_ARRAY_API_REPORT"  # where the plugin writes the outcomes
# the devices and dtypes each namespace is tested with: array_api_strict's are scikit-learn's own
COMBINATIONS = {
    OURS: [(None, "float64"), (None, "float32")],
    REFERENCE: [("CPU_DEVICE", "float64"), ("device1", "float32")],
}
# scikit-learn's test modules that hold array-API tests (those that take a namespace by name)
MODULES = [
    "sklearn._loss.tests.test_link",
    "sklearn._loss.tests.test_loss",
    "sklearn.decomposition.tests.test_pca",
    "sklearn.linear_model._glm.tests.test_glm",
    "sklearn.linear_model.tests.test_base",
    "sklearn.linear_model.tests.test_logistic",
    "sklearn.linear_model.tests.test_ridge",
    "sklearn.metrics.cluster.tests.test_common",
    "sklearn.metrics.cluster.tests.test_supervised",
    "sklearn.metrics.tests.test_classification",
    "sklearn.metrics.tests.test_common",
    "sklearn.metrics.tests.test_pairwise",
    "sklearn.mixture.tests.test_gaussian_mixture",
    "sklearn.model_selection.tests.test_search",
    "sklearn.model_selection.tests.test_split",
    "sklearn.model_selection.tests.test_validation",
    "sklearn.preprocessing.tests.test_data",
    "sklearn.preprocessing.tests.test_label",
    "sklearn.preprocessing.tests.test_polynomial",
    "sklearn.tests.test_calibration",
    "sklearn.tests.test_common",
    "sklearn.tests.test_kernel_approximation",
    "sklearn.tests.test_naive_bayes",
    "sklearn.tests.test_pipeline",
    "sklearn.utils.tests.test_array_api",
    "sklearn.utils.tests.test_extmath",
    "sklearn.utils.tests.test_indexing",
    "sklearn.utils.tests.test_multiclass",
    "sklearn.utils.tests.test_optimize",
    "sklearn.utils.tests.test_stats",
    "sklearn.utils.tests.test_validation",
]


# --- the plugin ------------------------------------------------------------------------------------
def selected_namespaces() -> list[str]:
    """The namespaces this run tests (`SKLEARN_ARRAY_API_NAMESPACES`, both by default)."""
    names = os.environ.get(NAMESPACES_VARIABLE, f"{OURS},{REFERENCE}").split(",")
    unknown = set(names) - {OURS, REFERENCE}
    if unknown:
        raise ValueError(f"{NAMESPACES_VARIABLE} names {sorted(unknown)}; it takes {OURS} and {REFERENCE}")
    return names


def yield_namespaces(include_numpy_namespaces: bool = True):
    """scikit-learn's generator of namespace names, naming ours and array_api_strict."""
    yield from selected_namespaces()


def yield_namespace_device_dtype_combinations(include_numpy_namespaces: bool = True):
    """scikit-learn's generator of (namespace, device, dtype), for ours and array_api_strict."""
    for name in selected_namespaces():
        for device, dtype in COMBINATIONS[name]:
            yield name, device, dtype


def yield_mixed_namespace_input_permutations():
    """scikit-learn's mixed inputs (y in one namespace, X in another): each namespace to and from numpy."""
    from sklearn.utils._array_api import NamespaceAndDevice

    numpy = NamespaceAndDevice("numpy", None)
    for name in selected_namespaces():
        device = COMBINATIONS[name][-1][0]
        yield NamespaceAndDevice(name, device), numpy, f"{name} to numpy"
        yield numpy, NamespaceAndDevice(name, device), f"numpy to {name}"


GENERATORS = (yield_namespaces, yield_namespace_device_dtype_combinations, yield_mixed_namespace_input_permutations)


def with_every_namespace(estimator_checks):
    """scikit-learn's array-API estimator checks, where the check it runs with array_api_strict
    alone (fit and predict in one namespace) runs for each namespace under test."""

    def checks(estimator, only_numpy=False):
        for check in estimator_checks(estimator, only_numpy=only_numpy):
            if (
                getattr(check, "keywords", {}).get("array_namespace") == REFERENCE
                and "device_name" not in check.keywords
            ):
                for name in selected_namespaces():
                    yield functools.partial(check.func, *check.args, **{**check.keywords, "array_namespace": name})
            else:
                yield check

    return checks


def patch_scikit_learn() -> None:
    """Put the generators above in `sklearn.utils._array_api` and in every loaded module that
    imported scikit-learn's by name (test modules imported later find ours)."""
    os.environ.setdefault("SCIPY_ARRAY_API", "1")
    from sklearn.utils import _array_api, estimator_checks

    originals = {generator.__name__: getattr(_array_api, generator.__name__) for generator in GENERATORS}
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("sklearn"):
            for generator in GENERATORS:
                if getattr(module, generator.__name__, None) is originals[generator.__name__]:
                    setattr(module, generator.__name__, generator)
    estimator_checks._yield_array_api_checks = with_every_namespace(estimator_checks._yield_array_api_checks)


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc) -> None:
    """A test parametrized by a fixed list of names that holds array_api_strict (and not us), such
    as ``@pytest.mark.parametrize("library", ["numpy", "array_api_strict", "torch"])``, takes
    `autograd_core` too. (A list of tuples is left alone: what it expects of each library, such as
    its float dtypes, is that library's.)"""
    marks = metafunc.definition.own_markers
    for i, mark in enumerate(marks):
        if mark.name == "parametrize" and len(mark.args) == 2 and isinstance(mark.args[1], list) and not mark.kwargs:
            names = [case for case in mark.args[1] if isinstance(case, str)]
            if REFERENCE in names and OURS not in names:
                marks[i] = pytest.mark.parametrize(mark.args[0], [*mark.args[1], OURS]).mark


@dataclass
class Recorder:
    """Each test's outcome ("passed", "failed", "skipped") and a line saying why, by node id."""

    outcomes: dict[str, tuple[str, str]] = field(default_factory=dict)

    def pytest_runtest_logreport(self, report) -> None:
        if report.when == "call" or report.outcome != "passed":
            why, outcome = "", report.outcome
            if hasattr(report, "wasxfail"):
                outcome, why = ("xfailed" if report.skipped else "xpassed"), report.wasxfail
            elif report.skipped and isinstance(report.longrepr, tuple):
                why = report.longrepr[2]
            elif report.failed:
                why = str(getattr(report.longrepr, "reprcrash", None) and report.longrepr.reprcrash.message)
            first_line = why.strip().splitlines()[0][:300] if why.strip() else ""
            if report.failed or report.nodeid not in self.outcomes:  # a failure at teardown overrides a pass
                self.outcomes[report.nodeid] = (outcome, first_line)

    def pytest_sessionfinish(self) -> None:
        path = os.environ.get(REPORT_VARIABLE)
        if path:
            Path(path).write_text(json.dumps(self.outcomes, indent=0))


def pytest_configure(config) -> None:
    patch_scikit_learn()
    config.pluginmanager.register(Recorder(), "sklearn_array_api_recorder")


# --- the runner ------------------------------------------------------------------------------------
ROOT = Path(__file__).resolve().parent.parent
# a fast part that touches every kind of check: metrics, estimators, the helpers, mixed inputs
QUICK_MODULES = ["sklearn.metrics.tests.test_common", "sklearn.tests.test_common", "sklearn.utils.tests.test_array_api"]
QUICK = (
    "(test_array_api_compliance and (accuracy_score or r2_score or roc_auc_score or euclidean_distances)) "
    "or (test_estimators and (Ridge or PCA) and check_array_api_input) "
    "or test_average or test_nan_reductions or test_move_to_array_api_conversions"
)
OUTCOMES = ("passed", "failed", "skipped")


def run_tests(
    backend: str, namespaces: list[str], select: str | None, modules: list[str] = MODULES
) -> dict[str, list[str]]:
    """Run scikit-learn's array-API tests for `namespaces` on one backend in a fresh interpreter,
    from an empty folder (no configuration of this project applies); the outcome of each test."""
    names = " or ".join(namespaces)
    keyword = f"({names}) and ({select})" if select else names
    import sklearn

    with tempfile.TemporaryDirectory() as work:
        report, settings = Path(work) / "outcomes.json", Path(work) / "pytest.ini"
        settings.write_text("[pytest]\n")  # no other configuration applies
        env = {
            **os.environ,
            "AUTOGRAD_BACKEND": backend,
            "SCIPY_ARRAY_API": "1",
            NAMESPACES_VARIABLE: ",".join(namespaces),
            REPORT_VARIABLE: str(report),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        command = [sys.executable, "-m", "pytest", "-p", "tools.sklearn_array_api", "-p", "no:cacheprovider"]
        command += ["-c", str(settings), "--rootdir", str(Path(sklearn.__file__).parent.parent)]  # ids from sklearn/
        command += ["-q", "--no-header", "-rN", "-W", "ignore", "--pyargs", *modules, "-k", keyword]
        run = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
        if not report.exists():
            raise RuntimeError(
                f"scikit-learn's tests did not run on {backend} (exit {run.returncode}):\n"
                f"{run.stdout[-4000:]}{run.stderr[-4000:]}"
            )
        return json.loads(report.read_text())


DEVICE_TOKEN = re.compile(r"'?(?<![A-Za-z0-9_])(None|CPU_DEVICE|device1)(?![A-Za-z0-9_])'?")


def pairing_key(node_id: str) -> str:
    """The id a test has in both namespaces: the namespace and its device named alike."""
    return DEVICE_TOKEN.sub("DEVICE", node_id.replace(REFERENCE, OURS))


def family(node_id: str) -> str:
    """The test function (and for scikit-learn's estimator checks, the check) a test belongs to.

    >>> family("sklearn/tests/test_common.py::test_estimators[PCA()-check_array_api_input(array_namespace=x)]")
    'tests/test_common.py::test_estimators[check_array_api_input]'
    """
    path, _, name = node_id.partition("::")
    function, _, parameters = name.partition("[")
    check = re.search(r"\b(check_\w+)\(", parameters) if function == "test_estimators" else None
    path = path.split("sklearn/", 1)[-1]
    return f"{path}::{function}" + (f"[{check.group(1)}]" if check else "")


def kind(outcome: str) -> str:
    """passed, failed or skipped (an expected failure of scikit-learn's counts as skipped)."""
    return {"xfailed": "skipped", "xpassed": "passed"}.get(outcome, outcome)


@dataclass
class Comparison:
    """The tests of `autograd_core` on one backend beside the same tests of array_api_strict."""

    backend: str
    ours: dict[str, list[str]]  # by pairing key: [outcome, why]
    reference: dict[str, list[str]]

    def counts(self, outcomes: dict[str, list[str]]) -> dict[str, collections.Counter]:
        """For each family, how many tests passed, failed, were skipped."""
        found: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for key, (outcome, _) in outcomes.items():
            found[family(key)][kind(outcome)] += 1
        return found

    def defects(self) -> dict[str, list[str]]:
        """The tests array_api_strict passes and we do not (fail, or skip where it runs)."""
        return {
            key: self.ours[key]
            for key, (outcome, _) in self.reference.items()
            if key in self.ours and kind(outcome) == "passed" and kind(self.ours[key][0]) != "passed"
        }


def split(outcomes: dict[str, list[str]]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """One run's outcomes as (ours, array_api_strict's), each by pairing key."""
    ours = {pairing_key(k): v for k, v in outcomes.items() if OURS in k}
    reference = {pairing_key(k): v for k, v in outcomes.items() if REFERENCE in k}
    return ours, reference


def triple(counter: collections.Counter | None) -> str:
    counter = counter or collections.Counter()
    return " / ".join(str(counter[k]) for k in OUTCOMES)


def report(comparisons: list[Comparison], command: str, seconds: dict[str, float]) -> str:
    """The Markdown page of results/sklearn-array-api.md."""
    import sklearn

    reference = comparisons[0].reference
    lines = [
        "# scikit-learn's array-API checks",
        "",
        f"scikit-learn {sklearn.__version__}'s own array-API tests, each run with `autograd_core` as the namespace "
        "on one backend and with array_api_strict (the reference), compared test by test. Made by",
        "",
        f"    {command}",
        "",
        "(`tools/sklearn_array_api.py`; see its docstring for how the namespaces are chosen). Counts are "
        "passed / failed / skipped; scikit-learn's expected failures (xfail) count as skipped.",
        "",
        "| backend | tests | array_api_strict passes | of those, autograd_core passes | autograd_core "
        "passed / failed / skipped | array_api_strict passed / failed / skipped | wall time |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in comparisons:
        passes = [k for k, (o, _) in c.reference.items() if kind(o) == "passed"]
        ours_total = collections.Counter(kind(o) for o, _ in c.ours.values())
        reference_total = collections.Counter(kind(o) for o, _ in c.reference.values())
        lines.append(
            f"| {c.backend} | {len(c.ours)} | {len(passes)} | {len(passes) - len(c.defects())} | "
            f"{triple(ours_total)} | {triple(reference_total)} | {seconds[c.backend]:.0f} s |"
        )
    lines += [
        "",
        "## Per test family",
        "",
        "| family | array_api_strict | " + " | ".join(f"autograd_core on {c.backend}" for c in comparisons) + " |",
        "|---|---|" + "---|" * len(comparisons),
    ]
    reference_counts = comparisons[0].counts(reference)
    ours_counts = [c.counts(c.ours) for c in comparisons]
    for name in sorted(set(reference_counts).union(*ours_counts)):
        lines.append(
            f"| `{name}` | {triple(reference_counts.get(name))} | "
            + " | ".join(triple(counts.get(name)) for counts in ours_counts)
            + " |"
        )
    lines += ["", "## Tests array_api_strict passes and autograd_core does not", ""]
    defects = [(c.backend, key, outcome) for c in comparisons for key, outcome in c.defects().items()]
    lines += [f"- {backend}: `{key}`: {outcome[0]} ({outcome[1]})" for backend, key, outcome in defects] or ["None."]
    lines += ["", "## Tests both fail or skip", ""]
    both = sorted(
        (c.backend, key, c.ours[key][1] or c.ours[key][0], outcome[1] or outcome[0])
        for c in comparisons
        for key, outcome in c.reference.items()
        if kind(outcome[0]) != "passed" and key in c.ours and kind(c.ours[key][0]) != "passed"
    )
    lines += [f"- {b}: `{k}`: ours {mine}; array_api_strict {theirs}" for b, k, mine, theirs in both] or ["None."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="numpy,torch,jax", help="comma-separated backends (numpy,torch,jax)")
    parser.add_argument("--quick", action="store_true", help="only the fast part the default test run takes")
    parser.add_argument("-k", dest="select", default=None, help="a pytest -k expression narrowing the tests")
    parser.add_argument("--write", type=Path, default=None, help="write the Markdown report here")
    parser.add_argument("--outcomes", type=Path, default=None, help="a folder for each run's outcomes (JSON)")
    args = parser.parse_args(argv)
    modules = QUICK_MODULES if args.quick else MODULES
    select = " and ".join(f"({e})" for e in (QUICK if args.quick else None, args.select) if e) or None
    comparisons, seconds, reference = [], {}, None
    for backend in args.backend.split(","):
        start = time.perf_counter()
        outcomes = run_tests(backend, [OURS] if reference else [OURS, REFERENCE], select, modules)
        if args.outcomes:
            args.outcomes.mkdir(parents=True, exist_ok=True)
            (args.outcomes / f"{backend}.json").write_text(json.dumps(outcomes, indent=0))
        ours, found = split(outcomes)
        seconds[backend] = time.perf_counter() - start
        reference = reference or found  # array_api_strict does not depend on the backend: run once
        comparisons.append(Comparison(backend, ours, reference))
        print(
            f"{backend}: {triple(collections.Counter(kind(o) for o, _ in ours.values()))} (passed / failed / skipped)"
        )
    command = "python tools/sklearn_array_api.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = report(comparisons, command.strip(), seconds)
    if args.write:
        args.write.write_text(text)
    print(text)
    return 1 if any(c.defects() for c in comparisons) else 0


if __name__ == "__main__":
    sys.exit(main())
