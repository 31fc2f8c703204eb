"""Runnable workloads on every backend: the line fit, XOR, spirals, MNIST and a character model.

Each script runs with ``AUTOGRAD_BACKEND=<name> python examples/<script>.py`` (or
``python -m examples.<script>``), takes ``--help``, and writes JSON plus a PNG under
``results/``. The scripts are also importable (``main(argv)`` and smaller functions), so the
tests drive them in-process.
"""
