"""Runnable workloads on every backend: the line fit, XOR, spirals, MNIST (MLP and CNN), three
character models (MLP, LSTM, GPT) and a data set larger than memory (on a dask cluster).

Each script runs with ``AUTOGRAD_BACKEND=<name> python examples/<script>.py`` (or
``python -m examples.<script>``), takes ``--help`` and ``--quick``, and writes JSON plus a PNG
under ``runs/`` in the current folder (``--reference``: the repository's ``results/``). The
scripts are also importable (``main(argv)`` and smaller functions), so the tests drive them
in-process.
"""
