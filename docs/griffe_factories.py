"""A griffe extension for the API reference (mkdocs.yml loads it).

Many public functions are made by a factory when their module is imported
(``exp = unary_op("exp", ...)`` in autograd_core, the activations of nn.functional). To
static analysis they are attributes without a docstring, so the reference would leave them
out; this extension documents each as the function it is at run time: its signature and its
docstring. Names a module makes in a loop or by unpacking, which the parser cannot see,
are found through the module's ``__all__``. And doctests, which the docstrings write without
an "Examples:" heading, are fenced as code.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from typing import Any

import griffe

PACKAGES = ("autograd_core", "backends", "nn", "optim")
_PROMPT = re.compile(r"^[ \t]*>>> ")
_FLAGS = re.compile(r"\s*# doctest:.*$")


def _text(value: Any) -> str | None:
    """An annotation or default as source text (annotations are strings under
    ``from __future__ import annotations``)."""
    if value is inspect.Parameter.empty:
        return None
    return value if isinstance(value, str) else getattr(value, "__name__", repr(value))


def _function(name: str, fn: Any, agent: Any, lineno: int | None) -> griffe.Function:
    """`fn` as griffe's model of a function called `name` (defined at `lineno`)."""
    signature = inspect.signature(fn)
    parameters = griffe.Parameters(
        *(
            griffe.Parameter(
                p.name,
                annotation=_text(p.annotation),
                kind=griffe.ParameterKind(p.kind.description),
                default=None if p.default is inspect.Parameter.empty else repr(p.default),
            )
            for p in signature.parameters.values()
        )
    )
    function = griffe.Function(
        name, lineno=lineno, endlineno=lineno, parameters=parameters, returns=_text(signature.return_annotation)
    )
    function.docstring = griffe.Docstring(
        inspect.cleandoc(fn.__doc__),
        lineno=lineno,
        parent=function,
        parser=agent.docstring_parser,
        parser_options=agent.docstring_options,
    )
    return function


def fence_doctests(text: str) -> str:
    """`text` with each doctest (from a ``>>>`` line to the next blank line) in a ```pycon
    fence, so Markdown shows it as code rather than as nested block quotes."""
    lines, out, fenced, i = text.split("\n"), [], False, 0
    while i < len(lines):
        if lines[i].lstrip().startswith("```"):
            fenced = not fenced
        if fenced or not _PROMPT.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        block = []
        while i < len(lines) and lines[i].strip():
            block.append(_FLAGS.sub("", lines[i]))
            i += 1
        out += ([""] if out and out[-1].strip() else []) + [
            "```pycon",
            *inspect.cleandoc("\n".join(block)).split("\n"),
            "```",
        ]
    return "\n".join(out)


def _objects(obj: griffe.Object) -> list[griffe.Object]:
    """`obj` and everything defined in it (aliases, defined elsewhere, left out)."""
    found = [obj]
    for member in obj.members.values():
        if not member.is_alias:
            found += _objects(member)
    return found


class FactoryFunctions(griffe.Extension):
    """Module attributes whose run-time value is a documented function become functions."""

    def on_module_members(
        self, *, node: ast.AST | griffe.ObjectNode, mod: griffe.Module, agent: Any, **kwargs: Any
    ) -> None:
        if mod.path.split(".")[0] not in PACKAGES:
            return
        made = [
            m
            for m in mod.members.values()  # `name = factory(...)` without a docstring of its own
            if not m.is_alias and m.is_attribute and not m.docstring and isinstance(m.value, griffe.ExprCall)
        ]
        # names made in a loop or by unpacking, which the parser cannot see: listed in __all__
        unseen = [] if mod.is_package else [n for n in mod.exports or () if isinstance(n, str) and n not in mod.members]
        if not made and not unseen:
            return
        runtime = importlib.import_module(mod.path)
        for name, lineno in [(m.name, m.lineno) for m in made] + [(n, None) for n in unseen]:
            fn = getattr(runtime, name, None)
            if inspect.isfunction(fn) and fn.__doc__:
                mod.set_member(name, _function(name, fn, agent, lineno))

    def on_package(self, *, pkg: griffe.Module, loader: Any, **kwargs: Any) -> None:
        if pkg.name in PACKAGES:
            for obj in _objects(pkg):
                if obj.docstring:
                    obj.docstring.value = fence_doctests(obj.docstring.value)
