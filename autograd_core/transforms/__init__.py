"""Layer 5, transforms of functions: `func` (grad, vjp, jvp, jacobians, vmap),
checkpointing, and `compile`."""
