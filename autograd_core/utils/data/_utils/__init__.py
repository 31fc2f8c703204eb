"""The DataLoader's machinery, laid out as PyTorch's ``torch.utils.data._utils``: `collate`,
`fetch` (a batch from a dataset), `rng` (the random draws), `worker` (the worker processes)."""
