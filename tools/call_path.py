"""The project functions and files a snippet passes through, counted by a profile hook.

    python tools/call_path.py                                  # (x * x).sum().backward()
    python tools/call_path.py "x.exp().sum().backward()" --list

`--setup` (by default a float32 vector ``x`` that requires grad) runs before each run of the
snippet, outside the count. The snippet runs once to warm caches (kernels found, namespaces
made), then once under ``sys.setprofile``; every Python function whose code lies in the
project's packages and is called during the second run is counted once (module-level code and
comprehensions aside).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("autograd_core", "backends", "nn", "optim")
SETUP = "x = ag.tensor([1.0, 2.0, 3.0], requires_grad=True)"
SNIPPET = "(x * x).sum().backward()"


def project_functions(snippet: str, setup: str = SETUP) -> list[tuple[str, str]]:
    """(file relative to the root, qualified name) of each project function `snippet` calls."""
    import autograd_core as ag

    scope = {"ag": ag}
    exec(setup + "\n" + snippet, scope)  # warm: the first call finds kernels and namespaces
    exec(setup, scope)
    roots = tuple(str(ROOT / p) + "/" for p in PACKAGES)
    seen: dict[tuple[str, str], None] = {}

    def hook(frame, event, arg):  # noqa: ANN001 - sys.setprofile's signature
        if event == "call" and frame.f_code.co_filename.startswith(roots):
            name = frame.f_code.co_qualname
            if not name.startswith("<"):
                seen[(str(Path(frame.f_code.co_filename).relative_to(ROOT)), name)] = None

    sys.setprofile(hook)
    try:
        exec(snippet, scope)
    finally:
        sys.setprofile(None)
    return list(seen)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("snippet", nargs="?", default=SNIPPET)
    parser.add_argument("--setup", default=SETUP, help="code run first, outside the count")
    parser.add_argument("--list", action="store_true", help="print each function")
    args = parser.parse_args(argv)
    found = project_functions(args.snippet, args.setup)
    if args.list:
        for path, name in found:
            print(f"{path}: {name}")
    files = sorted({path for path, _ in found})
    print(f"{len(found)} project functions in {len(files)} files: {', '.join(files)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
