"""Layer 1, the graph: tensors as graph nodes, `Primitive` and its registry, the raw
namespaces, dtypes, grad mode, anomaly mode, pytrees, and the C sweep. Imports `backends`
(the contract and its selection) and nothing else of the project."""
