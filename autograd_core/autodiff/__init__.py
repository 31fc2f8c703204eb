"""Layer 4, autodiff: the reverse sweep (`engine`), forward mode, custom functions,
gradient checks, and the public `Tensor` with its operators and methods."""
