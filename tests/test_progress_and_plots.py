"""The progress lines (tqdm on a terminal, plain periodic lines elsewhere) and the plots'
ticks, titles and legends, read back from the matplotlib objects."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench import plot as bench_plot
from bench.progress import Bar, Progress, format_duration, format_value
from example_support import characters, mnist, plots
from example_support.progress import Progress as ExampleProgress
from examples import gpt

pytest.importorskip("matplotlib")

TIMES = re.compile(r"elapsed \d\d:\d\d, ETA \d\d:\d\d")


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def run_bar(stream: io.StringIO, losses: tuple[float, ...] = (1.0, 1e-3, 1e-12), **kwargs: object) -> str:
    bar = Bar(len(losses), "train", stream=stream, **kwargs)
    for loss in losses:
        bar.update(loss=loss)
    bar.close()
    return stream.getvalue()


# --- progress ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.41234, "0.4123"),
        (1.0, "1.0000"),
        (1e-3, "0.0010"),
        (9.99e-4, "1.0e-03"),
        (1e-12, "1.0e-12"),
        (-2.5e-7, "-2.5e-07"),
        (12345.0, "1.2e+04"),
        (0.0, "0"),
        (float("nan"), "nan"),
        (3, "3"),
    ],
)
def test_values_keep_their_size(value, text):
    assert format_value(value) == text


def test_durations_read_as_tqdm_writes_them():
    assert [format_duration(s) for s in (0, 59.6, 75, 3600, 3725)] == ["00:00", "01:00", "01:15", "1:00:00", "1:02:05"]


def test_log_file_gets_plain_lines_with_times_and_the_last_line_once():
    text = run_bar(io.StringIO())
    assert "\r" not in text and text.endswith("\n")
    lines = text.splitlines()
    assert all(TIMES.search(line) for line in lines)
    assert [line.split("  ")[0] for line in lines] == ["train 1/3 (33%)", "train 2/3 (67%)", "train 3/3 (100%)"]
    assert "loss 1.0e-12" in lines[-1] and "0.0000" not in text


def test_plain_lines_are_periodic_not_per_step():
    text = run_bar(io.StringIO(), losses=tuple(1.0 / k for k in range(1, 1001)))
    lines = text.splitlines()
    assert len(lines) == 10 and lines[-1].startswith("train 1000/1000 (100%)")


def test_plain_lines_also_come_after_an_interval(monkeypatch):
    clock = iter(range(0, 100_000, 40))  # every reading of the clock is 40 s later
    monkeypatch.setattr("bench.progress.time", SimpleNamespace(perf_counter=lambda: next(clock)))
    text = run_bar(io.StringIO(), losses=(1.0,) * 50, lines=1, interval=60.0)
    assert 20 <= len(text.splitlines()) <= 50  # about one line per minute of the 50 * 40 s, not one per tenth


def test_terminal_gets_a_tqdm_bar_with_elapsed_and_eta():
    pytest.importorskip("tqdm")
    text = run_bar(Terminal())
    assert "\r" in text and text.count("\n") == 1  # redrawn in place, ended once
    final = text.rsplit("\r", 1)[-1]
    assert "3/3" in final and "loss 1.0e-12" in final and re.search(r"\[\d\d:\d\d<\d\d:\d\d", final)


def test_without_tqdm_a_terminal_gets_plain_lines(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # `from tqdm import tqdm` now raises ImportError
    text = run_bar(Terminal())
    assert "\r" not in text and len(text.splitlines()) == 3 and "loss 1.0e-12" in text


def test_disabled_bar_writes_nothing():
    assert run_bar(io.StringIO(), enabled=False) == "" and run_bar(Terminal(), enabled=False) == ""


def test_examples_keep_the_progress_api():
    stream = io.StringIO()
    bar = ExampleProgress(2, "epoch 1/1", enabled=True, stream=stream)
    bar.update(loss=0.5)
    bar.update(loss=0.25)
    bar.close()
    assert stream.getvalue().splitlines()[-1].startswith("epoch 1/1 2/2 (100%)  loss 0.2500  elapsed")


def bench_points(progress: Progress) -> None:
    for label in ("mlp b=1", "ops"):
        progress.start_point(label)
        progress.update(0.5)
        progress.log(f"skip x at {label}")
        progress.finish_point(" (3 impls, 8 rounds)")
    progress.close()


def test_bench_log_gets_one_line_per_point_with_eta():
    stream = io.StringIO()
    bench_points(Progress(2, stream=stream, live=False))
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert lines[0] == "skip x at mlp b=1" and lines[2] == "skip x at ops"
    assert re.fullmatch(r"\[1/2\] mlp b=1: \d+\.\d s \(3 impls, 8 rounds\); " + TIMES.pattern, lines[1])
    assert lines[3].startswith("[2/2] ops: ") and len(lines) == 4


def test_bench_terminal_bar_shows_the_point_and_times():
    pytest.importorskip("tqdm")
    stream = Terminal()
    bench_points(Progress(2, stream=stream, live=True))
    text = stream.getvalue()
    assert "point 2/2: ops" in text and "[1/2] mlp b=1: " in text and re.search(r"\[\d\d:\d\d<\d\d:\d\d", text)
    assert text.rsplit("\r", 1)[-1].startswith("bench: 100%")


# --- plots -------------------------------------------------------------------------------------
def labels(ax, axis: str = "y", minor: bool = False) -> list[str]:
    """The tick labels of `ax` that are drawn inside its limits."""
    ax.figure.canvas.draw()
    which = getattr(ax, f"get_{axis}axis")()
    lo, hi = sorted(getattr(ax, f"get_{axis}lim")())
    ticks = which.get_minor_ticks() if minor else which.get_major_ticks()
    return [t.label1.get_text() for t in ticks if lo <= t.get_loc() <= hi and t.label1.get_text()]


def scientific(texts: list[str]) -> list[str]:
    return [t for t in texts if "times" in t or "^" in t or "$" in t]


MACHINE = {
    "cpu": "Test CPU 9000",
    "cpu_count": 2,
    "threads": {"threads": 1},
    "git": "abc1234",
    "started": "2026-11-30T02:32:15+00:00",
}


def bench_result(mode: str, impls: tuple[str, ...] = ("ours:numpy", "torch", "numpy-by-hand")) -> dict:
    """A bench JSON in which ours is 3x the baseline at batch 1 and torch 1.2x at batch 2048."""
    base = {1: 1.0, 32: 2.0, 2048: 50.0}
    factor = {
        "ours:numpy": {1: 3.0, 32: 2.0, 2048: 1.1},
        "torch": {1: 2.0, 32: 1.5, 2048: 1.2},
        "numpy-by-hand": {1: 1.0, 32: 1.0, 2048: 1.0},
    }
    records = [
        {
            "workload": "mlp",
            "batch": b,
            "impl": i,
            "phase": "step",
            "min_ms": base[b] * factor[i][b],
            "median_ms": base[b] * factor[i][b] * 1.1,
        }
        for i in impls
        for b in base
    ]
    records += [
        {"workload": "ops", "batch": 1, "impl": i, "phase": "step", "min_ms": t, "median_ms": t * 1.1}
        for i, t in zip(impls, (0.03, 0.04, 0.025))
    ]
    return {"mode": mode, "machine": MACHINE, "records": records}


@pytest.fixture
def bench_figure():
    import matplotlib.pyplot as plt

    figures = []

    def make(result: dict):
        figures.append(bench_plot.figure(result))
        return figures[-1]

    yield make
    for fig in figures:
        plt.close(fig)


def test_bench_mlp_panel_is_relative_to_numpy_by_hand_with_plain_ticks(bench_figure):
    fig = bench_figure(bench_result("quick"))
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert list(lines["numpy-by-hand"].get_ydata()) == [1.0, 1.0, 1.0]
    assert list(lines["ours:numpy"].get_ydata()) == pytest.approx([3.0, 2.0, 1.1])
    ys = labels(ax)
    assert ys and all(t.endswith("×") for t in ys) and not scientific(ys + labels(ax, minor=True))
    assert "1×" in ys and "2×" in ys
    assert [t.split("\n")[0] for t in labels(ax, "x")] == ["1", "32", "2048"]
    assert "numpy-by-hand" in ax.get_ylabel()


def test_bench_lines_differ_in_marker_or_style(bench_figure):
    ax = bench_figure(bench_result("full")).axes[0]
    styles = [(line.get_marker(), line.get_linestyle(), line.get_color()) for line in ax.get_lines()]
    assert len(set(styles)) == len(styles) == 3


def test_bench_falls_back_to_torch_then_to_absolute(bench_figure):
    ax = bench_figure(bench_result("full", impls=("ours:numpy", "torch"))).axes[0]
    assert "torch" in ax.get_ylabel() and all(t.endswith("×") for t in labels(ax))
    ax = bench_figure(bench_result("full", impls=("ours:numpy",))).axes[0]
    assert ax.get_ylabel() == "ms per step (min)" and not scientific(labels(ax) + labels(ax, minor=True))


@pytest.mark.parametrize("mode", ["quick", "full"])
def test_bench_title_says_mode_and_machine(bench_figure, mode):
    title = bench_figure(bench_result(mode)).get_suptitle()
    assert title.startswith(f"bench, {mode} run") and "Test CPU 9000, 2 cores" in title
    assert "1 thread;" in title and "2026-11-30 02:32 UTC" in title and "git abc1234" in title


def test_bench_op_panel_has_plain_log_ticks(bench_figure):
    ax = bench_figure(bench_result("quick")).axes[1]
    assert ax.get_xscale() == "log" and not scientific(labels(ax, "x") + labels(ax, "x", minor=True))
    assert labels(ax, "x") + labels(ax, "x", minor=True)  # something is labelled


def test_bench_plot_writes_a_png(tmp_path):
    assert bench_plot.plot(bench_result("quick"), tmp_path / "b.png") is None
    assert (tmp_path / "b.png").read_bytes()[:4] == b"\x89PNG"
    assert bench_plot.plot({"mode": "quick", "machine": MACHINE, "records": []}, tmp_path / "c.png")


@pytest.fixture
def saved_figures(monkeypatch):
    """The figures the examples save, kept open for inspection."""
    import matplotlib.pyplot as plt

    figures = []
    save = plots.save_figure

    def keep(fig, json_path):
        figures.append(fig)
        return save(fig, json_path)

    monkeypatch.setattr(plots, "save_figure", keep)
    yield figures
    for fig in figures:
        plt.close(fig)


def test_one_epoch_mnist_plot_has_integer_epoch_ticks(saved_figures, tmp_path):
    results = {
        "backend": "numpy",
        "dtype": "float32",
        "step_losses": [2.3 * 0.99**k for k in range(400)],
        "val_accuracy": [0.97],
        "test_accuracy": 0.968,
        "twin_max_weight_diff": [3e-7],
    }
    mnist.plot(results, tmp_path / "m.json")
    (fig,) = saved_figures
    loss, accuracy, twin = fig.axes
    assert labels(accuracy, "x") == ["1"] and labels(twin, "x") == ["1"]
    assert not scientific(labels(loss) + labels(loss, minor=True) + labels(twin) + labels(twin, minor=True))
    assert all(float(t) == int(float(t)) for t in labels(loss, "x"))


def test_curve_of_a_few_steps_has_integer_steps_and_plain_log_labels(tmp_path):
    import matplotlib.pyplot as plt

    fig, (ax,) = plots.figure(1)
    plots.plot_curve(ax, [45.0, 38.0, 26.0], "loss", log_scale=True)  # within one decade: 3x10^1, 4x10^1 before
    assert labels(ax, "x") == ["1", "2", "3"]
    ys = labels(ax) + labels(ax, minor=True)
    assert "30" in ys and "40" in ys and not scientific(ys)
    plt.close(fig)


@pytest.mark.parametrize("example", [characters, gpt], ids=["char", "gpt"])
def test_char_plots_keep_the_legend_off_the_lines(example, saved_figures, tmp_path):
    results = {
        "backend": "numpy",
        "dtype": "float32",
        "train_curve": [[50, 3.4]],
        "val_curve": [[50, 2.9]],
        "val_nats": 2.9,
        "baselines": {"uniform": 4.17, "unigram": 3.35, "bigram": 2.48},
    }
    example.plot(results, tmp_path / "c.json")
    (fig,) = saved_figures
    (ax,) = fig.axes
    fig.canvas.draw()
    assert ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1  # beside the axes, not on them
    assert labels(ax, "x")[0] == "0" and all(t.isdigit() for t in labels(ax, "x"))
    assert Path(tmp_path / "c.png").stat().st_size > 1000
