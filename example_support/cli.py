"""The examples' command line: the parser with the flags every example takes, the argparse
types of their flags, and `main`, which checks the backend and the output folder before a run
and turns a user's mistake into one line on stderr and exit status 2."""

from __future__ import annotations

import argparse
import math
import os
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import backends
from example_support.records import output_folder
from example_support.threads import limited_threads


class UsageError(Exception):
    """A command-line mistake found after parsing (a bad backend, an output folder that cannot
    be made, settings that do not fit together): `main` reports it in one line, exit status 2."""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The description as written, and each flag's default once, after its help (not for
    switches, nor for a default of None: the help says what happens then)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if any(action.default is skip for skip in (None, False, argparse.SUPPRESS)) or "%(default)" in text:
            return text
        return f"{text} (default: %(default)s)"

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)  # a flag stays whole


class Parser(argparse.ArgumentParser):
    """An example's argument parser: a mistake is one line on stderr and exit status 2 (no
    usage block, no traceback), and ``--quick`` applies the example's `quick` settings to the
    flags not given on the command line."""

    def __init__(self, *args: Any, quick: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.quick = quick or {}

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> tuple[Any, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if getattr(parsed, "quick", False) and namespace is None:
            self.set_defaults(**self.quick)  # flags given on the command line still win
            parsed, extras = super().parse_known_args(args, namespace)
        return parsed, extras


def _checked(convert: Callable[[str], Any], test: Callable[[Any], bool], what: str) -> Callable[[str], Any]:
    """An argparse type: `convert`, then refuse a value that fails `test` with "expected `what`"."""

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not test(value):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse


positive_int = _checked(int, lambda v: v > 0, "a positive integer")
natural_int = _checked(int, lambda v: v >= 0, "an integer >= 0")
positive_float = _checked(float, lambda v: 0 < v < math.inf, "a positive number")
natural_float = _checked(float, lambda v: 0 <= v < math.inf, "a number >= 0")
probability = _checked(float, lambda v: 0 <= v < 1, "a probability in [0, 1)")


def quick_text(quick: dict[str, Any]) -> str:
    """The quick settings as command-line flags: ``--steps 100 --eval-limit 4096``."""
    return " ".join(f"--{key.replace('_', '-')} {value}" for key, value in quick.items())


def parser(name: str, description: str, quick: dict[str, Any], folder: str = "examples") -> Parser:
    """The parser of `folder`/`name`.py, with the flags every example takes (--out, --reference,
    --quick, --seed, --quiet, --threads); `quick` holds the settings of its ``--quick`` run."""
    p = Parser(
        prog=f"{folder}/{name}.py",
        description=description,
        quick=quick,
        formatter_class=HelpFormatter,
        epilog="The backend is chosen by the AUTOGRAD_BACKEND environment variable (numpy when unset).",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="PATH",
        help="Write the JSON record to this .json file, and the PNG next to it. Without --out or "
        "--reference the run goes to the runs/ folder under the current folder.",
    )
    where.add_argument(
        "--reference",
        action="store_true",
        help="Write to the repository's results/ folder, replacing the committed reference run "
        "(the command recorded in the JSON then includes --reference).",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"Make a short run that finishes in under a minute on numpy: {quick_text(quick)}. "
        "Flags given on the command line still win.",
    )
    p.add_argument("--seed", type=natural_int, default=0, help="Seed of the initial weights and of the data order.")
    p.add_argument("--quiet", action="store_true", help="Print no progress line and no summary.")
    p.add_argument(
        "--threads",
        type=positive_int,
        default=None,
        help="Use at most THREADS threads in BLAS, OpenMP and torch; 1 is much faster on a machine "
        "shared with other work. Without it, each library chooses.",
    )
    return p


def main(
    parser: argparse.ArgumentParser,
    run: Callable[[argparse.Namespace, Sequence[str] | None], dict],
    argv: Sequence[str] | None = None,
) -> dict:
    """Parse `argv` (default: the command line), check the backend and the output folder, and
    call ``run(args, argv)`` under the thread limit; a `UsageError` exits with status 2."""
    args = parser.parse_args(argv)
    with limited_threads(args.threads):
        try:
            try:
                backends.current()
            except (ValueError, backends.BackendUnavailableError) as e:
                raise UsageError(f"AUTOGRAD_BACKEND={os.environ.get('AUTOGRAD_BACKEND', '')!r}: {e}") from None
            prepare_output(args)
            return run(args, argv)
        except UsageError as e:
            parser.error(str(e))


def prepare_output(args: argparse.Namespace) -> None:
    """Make the output folder now rather than after the training; a `UsageError` if ``--out``
    is not a .json file or the folder cannot be made or written to."""
    if args.out is not None and args.out.suffix != ".json":
        raise UsageError(f"--out {args.out}: expected a file name ending in .json (the PNG goes next to it)")
    folder = output_folder(args)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create the output folder {folder}: {e.strerror or e}") from None
    if not os.access(folder, os.W_OK):
        raise UsageError(f"cannot write to the output folder {folder}")
