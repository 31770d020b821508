"""The error tree: drawn once in `adk_eval._errors`, the same in docs/api.md, true to the code."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import adk_eval
from adk_eval import _errors
from adk_eval._errors import AdkEvalError, EvalSetupError

API_DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def drawn_tree(text: str) -> dict[str, str | None]:
    """Each class of a drawn tree -> its parent (None for the root), from the box drawing."""
    parents: dict[str, str | None] = {}
    chain: list[str] = []
    for line in text.splitlines():
        match = re.match(r"^\s*((?:[│ ] {3}|[├└]── )*)([A-Z]\w+)(?:\s|$)", line)
        if not match:
            continue
        depth = len(match.group(1)) // 4
        if depth == 0 and not match.group(2).endswith(("Error", "Warning")):
            continue  # a sentence, not the tree's root
        chain[depth:] = [match.group(2)]
        parents[match.group(2)] = chain[depth - 1] if depth else None
    return parents


def doc_block(text: str) -> str:
    """The drawn tree in a text: the lines from `AdkEvalError` to the end of the drawing."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("AdkEvalError "))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].strip() in ("", "```"))
    return "\n".join(line.strip() for line in lines[start:end])


def import_everything() -> None:
    for info in pkgutil.walk_packages(adk_eval.__path__, "adk_eval."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)


def every_exception_class() -> set[type[BaseException]]:
    """Every exception class a module of adk_eval defines (warnings aside)."""
    import_everything()
    found: set[type[BaseException]] = set()
    pending: list[type[BaseException]] = [BaseException]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                pending.append(sub)
    return {
        cls
        for cls in found
        if cls.__module__.startswith("adk_eval") and not issubclass(cls, Warning)
    }


def real_tree() -> dict[str, str | None]:
    """Every public error class adk_eval defines -> its parent in the tree."""
    import_everything()
    parents: dict[str, str | None] = {"AdkEvalError": None}
    pending = [AdkEvalError]
    while pending:
        cls = pending.pop()
        for sub in cls.__subclasses__():
            if sub.__module__.startswith("adk_eval") and not sub.__name__.startswith("_"):
                parent = next(b for b in sub.__bases__ if issubclass(b, AdkEvalError))
                parents[sub.__name__] = parent.__name__
                pending.append(sub)
    return parents


def test_the_docstring_draws_every_error_class_under_its_parent():
    drawn = drawn_tree(_errors.__doc__ or "")
    drawn.pop("SharedModelWarning", None)  # named in the docstring, beside the tree
    assert drawn == real_tree()


CAUGHT_WHERE_RAISED = {
    "adk_eval._sources._spans._receiver.Refusal": "an HTTP refusal the collector answers",
    "adk_eval._sources._spans._json_stream.NotJson": "not JSON: `_read` says so in one line",
}
"""Exception classes that never reach a caller: signals adk_eval catches and answers itself."""


def test_every_public_exception_class_is_in_the_tree_and_defined_with_it():
    public = {
        cls
        for cls in every_exception_class()
        if not cls.__name__.startswith("_")
        and f"{cls.__module__}.{cls.__name__}" not in CAUGHT_WHERE_RAISED
    }
    outside = sorted(
        f"{c.__module__}.{c.__name__}" for c in public if not issubclass(c, AdkEvalError)
    )
    assert outside == []
    elsewhere = sorted(
        f"{c.__module__}.{c.__name__}" for c in public if c.__module__ != _errors.__name__
    )
    assert elsewhere == []


@pytest.mark.parametrize(
    ("name", "also"),
    [
        ("CacheBusyError", RuntimeError),
        ("UserCodeExit", RuntimeError),
        ("SpanFormatError", ValueError),
        ("CollectorError", ValueError),
        ("AnswerError", ValueError),
    ],
)
def test_an_error_moved_into_the_tree_is_still_caught_as_before(name, also):
    assert issubclass(getattr(_errors, name), also)


def test_docs_api_draws_the_same_tree():
    assert doc_block(API_DOC.read_text()) == doc_block(_errors.__doc__ or "")


def test_the_drawing_reader_reads_depth():
    tree = "AdkEvalError  x\n├── AError  a\n│   └── BError  b\n└── CError  c\n"
    assert drawn_tree(tree) == {
        "AdkEvalError": None,
        "AError": "AdkEvalError",
        "BError": "AError",
        "CError": "AdkEvalError",
    }


@pytest.mark.parametrize("caught", [ValueError, TypeError])
def test_a_setup_mistake_is_caught_as_before(caught):
    from adk_eval.metrics import state_metric

    with pytest.raises(caught):
        state_metric("x", "session", "", lambda value: True)
    with pytest.raises(EvalSetupError):
        state_metric("x", "session", "", lambda value: True)
