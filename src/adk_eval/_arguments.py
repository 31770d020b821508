"""A tool call checked against the tool's declaration: what the model was told it takes.

`call_problems` names each argument the declaration does not have (with the
closest declared name), each required argument that is missing, and each value
of the wrong JSON type. `ScriptedLlm` refuses a scripted call with problems (a
script is test code); the interception marks a real model's call with problems
in the trace. The check reads the declaration ADK sends the model, in either of
its forms (a `types.Schema` or a JSON schema), and answers "cannot tell" rather
than guess where a schema says more than it understands.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import weakref
from dataclasses import dataclass, field
from typing import Any

from google.genai import types

__all__ = [
    "Declared",
    "call_problems",
    "closest_name",
    "declared",
    "declared_by",
    "near_miss",
    "tool_problems",
]


@dataclass(frozen=True)
class Declared:
    """The parameters a declaration gives a tool (JSON-schema dicts, lower-case types)."""

    name: str
    properties: dict[str, dict[str, Any]] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    open: bool = False
    """Whether the declaration takes arguments it does not name (``additionalProperties``)."""

    def describe(self) -> str:
        """``lookup_order(order_id: string, note?: string)``: the declared parameters."""
        parts = [
            f"{key}{'' if key in self.required else '?'}: {_type_name(schema)}"
            for key, schema in self.properties.items()
        ]
        if self.open:
            parts.append("...")
        return f"{self.name}({', '.join(parts)})"


def declared(declaration: types.FunctionDeclaration | None) -> Declared | None:
    """The parameters of a function declaration (None when there is none to check against)."""
    if declaration is None or not declaration.name:
        return None
    schema: Any = declaration.parameters_json_schema
    if schema is None and declaration.parameters is not None:
        schema = _from_schema(declaration.parameters)
    if schema is None:
        return Declared(declaration.name)  # the model was told the tool takes no arguments
    if not isinstance(schema, dict) or "$ref" in schema:
        return None
    properties = schema.get("properties") or {}
    extra = schema.get("additionalProperties", False)
    return Declared(
        name=declaration.name,
        properties={key: value for key, value in properties.items() if isinstance(value, dict)},
        required=tuple(schema.get("required") or ()),
        open=bool(extra) or schema.get("type") not in (None, "object", "OBJECT"),
    )


_DECLARED: weakref.WeakKeyDictionary[Any, tuple[Declared | None]] = weakref.WeakKeyDictionary()
"""What `declared_by` worked out, by the function or tool that declares it."""


def declared_by(tool: Any) -> Declared | None:
    """`declared(tool._get_declaration())`, worked out once per declaring function or tool.

    ADK builds a function tool's declaration from its function's signature
    each time it is asked, and hands a new `FunctionTool` for a plain function
    at every request: for ADK's own function tool classes the function is
    what declares it. Any other tool (a subclass may declare itself otherwise)
    is its own key. A declaration that
    cannot be built is None, as for a tool the checks cannot read.
    """
    func = getattr(tool, "func", None)
    key = func if func is not None and type(tool) in _function_tools() else tool
    try:
        return _DECLARED[key][0]
    except (KeyError, TypeError):  # not yet, or a key that cannot be weakly held
        pass
    try:
        found = declared(tool._get_declaration())
    except Exception:  # a declaration that cannot be built: ADK reports it itself
        return None
    with contextlib.suppress(TypeError):  # a key that cannot be weakly held: not kept
        _DECLARED[key] = (found,)
    return found


@functools.cache
def _function_tools() -> frozenset[type]:
    """ADK's function tool classes: their declaration is their function's."""
    from google.adk.tools.function_tool import FunctionTool
    from google.adk.tools.long_running_tool import LongRunningFunctionTool

    return frozenset({FunctionTool, LongRunningFunctionTool})


def call_problems(tool: Declared, args: dict[str, Any]) -> list[str]:
    """What is wrong with calling `tool` with `args`, one readable line each ([] if nothing)."""
    problems: list[str] = []
    missing = [key for key in tool.required if key not in args]
    unknown = [key for key in args if key not in tool.properties and not tool.open]
    for key in unknown:
        guess = closest_name(key, [*missing, *tool.properties])
        if guess is None and len(unknown) == len(missing) == 1:
            guess = missing[0]  # the one argument given for the one required
        hint = f": did you mean `{guess}`?" if guess else ""
        problems.append(f"`{key}` is not a parameter of `{tool.name}`{hint}")
    problems.extend(f"`{key}` is required but missing" for key in missing)
    for key, value in args.items():
        schema = tool.properties.get(key)
        if schema is not None and _matches(value, schema) is False:
            problems.append(
                f"`{key}` should be {_type_name(schema)}, got {_short(value)} "
                f"({type(value).__name__})"
            )
    return problems


def tool_problems(name: str, tools: dict[str, Any]) -> list[str]:
    """The problem of a call to `name` when the agent's tools are `tools` ([] if it has it)."""
    if name in tools:
        return []
    guess = closest_name(name, list(tools))
    hint = f": did you mean `{guess}`?" if guess else ""
    offered = ", ".join(f"`{key}`" for key in sorted(tools)) or "none"
    return [f"`{name}` is not a tool of this agent{hint} (its tools: {offered})"]


def closest_name(name: str, candidates: list[str]) -> str | None:
    """The candidate `name` most likely meant: same words, a shared word, or close spelling."""
    if not candidates:
        return None
    folded = {candidate.lower(): candidate for candidate in candidates}
    if name.lower() in folded:
        return folded[name.lower()]
    words = set(_words(name))
    sharing = [candidate for candidate in candidates if words & set(_words(candidate))]
    if sharing:  # the closest spelling among them, else the first (callers list missing first)
        spelled = difflib.get_close_matches(name, sharing, n=1, cutoff=0.6)
        return spelled[0] if spelled else sharing[0]
    matches = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return matches[0] if matches else None


def near_miss(name: str, names: list[str]) -> str | None:
    """The one of `names` that `name` is a typo of (None if it is no near miss of any).

    A near miss differs only in case and separators, or by at most one edit (two
    for names longer than eight characters), an edit being an insertion, a
    deletion, a substitution or two neighbours swapped.
    """
    squashed = _squash(name)
    allowed = 2 if len(squashed) > 8 else 1
    best: tuple[int, str] | None = None
    for candidate in names:
        distance = _edits(squashed, _squash(candidate))
        if distance <= allowed and (best is None or distance < best[0]):
            best = (distance, candidate)
    return best[1] if best is not None and len(squashed) > 2 else None


def _squash(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalnum())


def _edits(a: str, b: str) -> int:
    """Optimal string alignment distance: Levenshtein plus swaps of neighbours."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(rows[i - 1][j] + 1, row[j - 1] + 1, rows[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[i - 2][j - 2] + 1)
        rows.append(row)
    return rows[len(a)][len(b)]


def _words(name: str) -> list[str]:
    spaced = "".join(f" {c.lower()}" if c.isupper() else c for c in name)
    return [word for word in spaced.replace("-", "_").replace(" ", "_").split("_") if word]


def _from_schema(schema: types.Schema) -> dict[str, Any]:
    """A `types.Schema` as a JSON-schema dict (the parts the check reads)."""
    data: dict[str, Any] = {}
    if schema.type is not None:
        data["type"] = str(schema.type.value).lower()
    if schema.nullable:
        data["nullable"] = True
    if schema.enum:
        data["enum"] = list(schema.enum)
    if schema.any_of:
        data["anyOf"] = [_from_schema(option) for option in schema.any_of]
    if schema.properties:
        data["properties"] = {key: _from_schema(value) for key, value in schema.properties.items()}
    if schema.required:
        data["required"] = list(schema.required)
    return data


_JSON_TYPES: dict[str, Any] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list | tuple),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _matches(value: Any, schema: dict[str, Any]) -> bool | None:
    """Whether `value` fits `schema` (None: the schema says more than this check reads)."""
    if value is None and (schema.get("nullable") or schema.get("default", 0) is None):
        return True
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list):
        answers = [_matches(value, option) for option in options if isinstance(option, dict)]
        if any(answers):
            return True
        return False if answers and all(answer is False for answer in answers) else None
    if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
        enum = schema["enum"]
        return value in enum or str(value) in [str(option) for option in enum]
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds] if kinds else []
    if not kinds or any(str(kind).lower() not in _JSON_TYPES for kind in kinds):
        return None
    return any(_JSON_TYPES[str(kind).lower()](value) for kind in kinds)


def _type_name(schema: dict[str, Any]) -> str:
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return "one of " + ", ".join(repr(option) for option in schema["enum"])
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list) and options:
        return " or ".join(_type_name(option) for option in options if isinstance(option, dict))
    kinds = schema.get("type")
    if isinstance(kinds, list):
        return " or ".join(str(kind).lower() for kind in kinds)
    return str(kinds).lower() if kinds else "any value"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
