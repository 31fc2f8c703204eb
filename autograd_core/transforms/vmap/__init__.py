"""vmap, whole: the transform (`api`), the batch edges it records (`edges`), the backend
whose arrays carry a batch (`backend`, `batched`), and the batching rules of the primitives
that need one (`rules`)."""
