"""Layer 3, the ops of the public namespace: arithmetic and elementwise functions,
reductions, shapes, indexing, creation, linear algebra, fft, special functions. Each op binds
primitives (layer 2) on the graph (layer 1)."""
