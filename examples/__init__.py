"""Runnable workloads on every backend: the line fit, XOR, spirals, MNIST (MLP and CNN), three
character models (MLP, LSTM, GPT) and a data set larger than memory (on a dask cluster).

Each script runs from any folder with ``AUTOGRAD_BACKEND=<name> python examples/<script>.py``,
takes ``--help`` and ``--quick``, and writes JSON plus a PNG under ``runs/`` in the current
folder (``--reference``: the repository's ``results/``). Each shows its model and training
loop in its own file; what they share (the command line, the data, the records, the plots)
is the installed package `example_support`. The scripts are also importable (``main(argv)``
and smaller functions), so the tests drive them in-process.

``custom_op_swish.py`` is the worked custom op of docs/custom-ops.md, a registered primitive
with a kernel per library: it trains for a moment and prints, with no flags and no record.
"""
