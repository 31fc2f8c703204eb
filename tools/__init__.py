"""The project's own tools: the figures of the README and docs, and the reference runs behind them."""
