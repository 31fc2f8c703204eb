"""What the example scripts (examples/) and the tools behind the reference runs (tools/) share,
one module per job: `cli` (the command line and `main`), `threads` (``--threads``), `records`
(where a run is written, its JSON record), `progress`, `plots` (matplotlib, optional),
`optional` (the libraries a run can do without), `data` (the data sets, minibatch order),
`evaluation`, `characters` (the Tiny Shakespeare models' corpus and baselines), `mnist` (the
MNIST networks, flags and record) and `twin` (a PyTorch twin of a model; needs torch). It
needs only numpy and array-api-compat, and the project's packages."""
