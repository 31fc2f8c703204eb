"""The examples' figures (matplotlib on the Agg backend, file only): learning curves with
whole-number steps and plainly labelled log scales, decision regions, and the PNG saved next
to the JSON. matplotlib is optional: without it `draw` skips the plot and says so once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.plot import plain_log_axis
from example_support.optional import missing


def draw(plot: Callable[..., Path], *args: Any) -> Path | None:
    """``plot(*args)``, the PNG it saved; None, after one line on stderr saying so, where
    matplotlib is not installed."""
    if missing("matplotlib", "no plot"):
        return None
    return plot(*args)


def figure(ncols: int = 1, width: float = 5.0, height: float = 4.0) -> tuple[Any, Any]:
    """A matplotlib figure with `ncols` axes side by side, on the Agg (file-only) backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False)
    return fig, axes[0]


def save_figure(fig: Any, json_path: Path) -> Path:
    """Save `fig` as the PNG next to the JSON at `json_path` and close it."""
    import matplotlib.pyplot as plt

    png = json_path.with_suffix(".png")
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


def plot_curve(
    ax: Any, values: Sequence[float], title: str, ylabel: str = "loss", xlabel: str = "step", log_scale: bool = False
) -> None:
    """One training curve on `ax` (steps from 1, integer ticks; a log scale labelled plainly)."""
    ax.plot(np.arange(1, len(values) + 1), values, lw=1)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    integer_ticks(ax.xaxis)
    if log_scale:
        log_scale_plain(ax.yaxis)
    ax.grid(alpha=0.3)


def integer_ticks(axis: Any) -> None:
    """Ticks at whole numbers only on `axis` (``ax.xaxis``: epochs, steps), even when it spans a
    single epoch (matplotlib's default would tick 0.95, 0.975 ... 1.05)."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1, steps=[1, 2, 5, 10]))


def log_scale_plain(axis: Any) -> None:
    """A log scale on `axis`, labelled with plain numbers (30, 40) rather than 3×10¹, 4×10¹."""
    axis.axes.set(**{f"{axis.axis_name}scale": "log"})
    plain_log_axis(axis)


def legend_outside(ax: Any, fontsize: int = 8) -> None:
    """The legend of `ax` to the right of it, where it covers no line."""
    ax.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def save_curve_figure(fig: Any, ax: Any, json_path: Path) -> Path:
    """Finish a learning-curve figure (steps from 0 on whole-number ticks, so a short run's
    single point still sits on a step axis; a grid; the legend outside) and save it as the PNG
    next to the JSON at `json_path`."""
    ax.set_xlim(left=0)
    integer_ticks(ax.xaxis)
    ax.grid(alpha=0.3)
    legend_outside(ax)
    return save_figure(fig, json_path)


def plot_regions(
    ax: Any,
    predict_class: Callable[[np.ndarray], np.ndarray],
    x: np.ndarray,
    y: np.ndarray,
    title: str,
    resolution: int = 200,
) -> None:
    """The decision regions of a 2-D classifier, with the points (x, labels y) on top."""
    pad = 0.1 * (x.max() - x.min())
    lo, hi = x.min(axis=0) - pad, x.max(axis=0) + pad
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], resolution), np.linspace(lo[1], hi[1], resolution))
    grid = np.stack([gx.ravel(), gy.ravel()], axis=1).astype(x.dtype)
    from matplotlib.colors import ListedColormap

    classes = predict_class(grid).reshape(gx.shape)
    n = int(max(classes.max(), y.max())) + 1
    dark = [f"C{i % 10}" for i in range(n)]
    ax.contourf(gx, gy, classes, levels=np.arange(n + 1) - 0.5, cmap=ListedColormap(dark), alpha=0.25)
    ax.scatter(x[:, 0], x[:, 1], c=y, cmap=ListedColormap(dark), vmin=-0.5, vmax=n - 0.5, s=6, edgecolors="none")
    ax.set(title=title, xticks=[], yticks=[])
