"""A model request as data: what the cache keys on, and what a cassette compares.

`request_data` is the part of ADK's `LlmRequest` that decides the answer: the
model, the contents, and the generation config (system instruction, tools,
schema, temperature, ...), without what does not (HTTP options, labels).
The ids ADK makes to pair a tool call with its response (``adk-<uuid>``, new in
every run, as the ``id`` of a part's ``function_call`` or ``function_response``)
are numbered in order of appearance (``<id 1>``, ...), so two runs that differ
only by them make the same request while which response answers which call
still counts. They are found where ADK puts them (its own test, the ``adk-``
prefix at that place), never by their shape: an id in a message, a tool's
arguments or its answer is the user's, and a provider's own call id is the
provider's (the cache replays it with its answer); both are kept byte for byte.

`fingerprint` hashes a request with who made it and where it was sent; an
address on this machine (``localhost``, ``127.0.0.0/8``, ``::1``: the sandbox's
loopback rule) counts without its port, which the harness's own servers (the
fake provider, the local model) pick anew each time. `canonical` writes request
data as one string (sorted keys, compact), the form a cassette compares: the
gateway makes it once per call and `fingerprint` hashes the key around it, so a
call's request is written out once. `first_difference` says,
in one short phrase, where two requests part (the first changed words of an
instruction or message, or the tools added and removed).
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from ..._sandbox._loopback import is_loopback

__all__ = [
    "KEY_FORMAT",
    "canonical",
    "first_difference",
    "fingerprint",
    "key_address",
    "request_data",
]

KEY_FORMAT = 2
"""The version of what `fingerprint` hashes: a key of another version is never found.

2: a user's UUIDs are kept (1 numbered every UUID), and a loopback address has no port.
"""

_IGNORED_CONFIG = ("http_options", "labels")
_PAIRING = ("function_call", "function_response", "tool_call", "tool_response")
"""The parts whose ``id`` pairs a call with its response."""
_ADK_ID = "adk-"
"""How ADK's own call ids begin (its ``AF_FUNCTION_CALL_ID_PREFIX``)."""


def request_data(request: Any, model: str) -> dict[str, Any]:
    """The parts of `request` (an `LlmRequest`) that decide the answer, as JSON data."""
    config = getattr(request, "config", None)
    config_data: dict[str, Any] = {}
    if config is not None:
        config_data = config.model_dump(mode="json", exclude_none=True, fallback=_schema_of)
        for key in _IGNORED_CONFIG:
            config_data.pop(key, None)
    contents: list[dict[str, Any]] = [
        content.model_dump(mode="json", exclude_none=True)
        for content in getattr(request, "contents", None) or []
    ]
    _number_pairing_ids(contents)
    return {
        "model": getattr(request, "model", None) or model,
        "contents": contents,
        "config": config_data,
    }


def _schema_of(value: Any) -> Any:
    """A config value pydantic cannot write as JSON: a response schema given as a class."""
    schema = getattr(value, "model_json_schema", None)
    if isinstance(value, type) and callable(schema):
        return schema()
    return repr(value)


def _number_pairing_ids(contents: list[dict[str, Any]]) -> None:
    """Numbers, in place, ADK's ids that pair calls with responses (see the module doc)."""
    numbers: dict[str, str] = {}
    for content in contents:
        for part in content.get("parts") or []:
            for kind in _PAIRING:
                paired = part.get(kind)
                made = paired.get("id") if isinstance(paired, dict) else None
                if isinstance(made, str) and made.startswith(_ADK_ID):
                    paired["id"] = numbers.setdefault(made, f"<id {len(numbers) + 1}>")


@functools.lru_cache(maxsize=256)
def key_address(base_url: str | None) -> str | None:
    """`base_url` as a key holds it: on this machine, without its host's name and port.

    Memoised: an agent's every call asks for the same address.
    """
    if base_url is None:
        return None
    try:
        parts = urlsplit(base_url)
        host = parts.hostname
    except ValueError:
        return base_url
    if host is None or not is_loopback(host):
        return base_url
    return f"{parts.scheme}://loopback{parts.path.rstrip('/')}"


def canonical(data: Any) -> str:
    """`data` as one JSON string: sorted keys, no spaces, characters as they are."""
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def fingerprint(
    role: str,
    model: str,
    base_url: str | None,
    data: Mapping[str, Any],
    attempt: int,
    *,
    written: str | None = None,
) -> str:
    """A hex key for one model request: its role, model, address, request data and attempt.

    The address is `key_address`'s; the key's format is `KEY_FORMAT`. `written` is
    ``canonical(data)`` when the caller has it already: the key is the same.
    """
    request = canonical(data) if written is None else written
    # `canonical` of the whole payload, its keys in sorted order, with the request's
    # canonical text set in place: the same bytes, without writing the request again.
    payload = (
        f'{{"attempt":{canonical(attempt)},"base_url":{canonical(key_address(base_url))},'
        f'"format":{KEY_FORMAT},"model":{canonical(model)},"request":{request},'
        f'"role":{canonical(role)}}}'
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def first_difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """Where `new` first differs from `old` (`request_data` both), briefly (None: equal)."""
    for label, before, after in _sections(old, new):
        if before == after:
            continue
        if label == "tools":
            return "tools: " + _tool_change(before, after)
        if before is None or after is None:
            kind = "not in the recording" if before is None else "recorded, not sent now"
            return f"{label} {kind}: {_clip(_as_text(after if before is None else before))}"
        return f"{label}: {_text_change(_as_text(before), _as_text(after))}"
    return None


def _sections(old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[tuple[str, Any, Any]]:
    old_config, new_config = dict(old.get("config") or {}), dict(new.get("config") or {})
    yield "model", old.get("model"), new.get("model")
    yield (
        "system instruction",
        old_config.pop("system_instruction", None),
        new_config.pop("system_instruction", None),
    )
    yield "tools", old_config.pop("tools", None), new_config.pop("tools", None)
    old_contents, new_contents = old.get("contents") or [], new.get("contents") or []
    for index in range(max(len(old_contents), len(new_contents))):
        before = old_contents[index] if index < len(old_contents) else None
        after = new_contents[index] if index < len(new_contents) else None
        role = (after or before or {}).get("role", "?")
        yield f"message {index + 1} ({role})", before, after
    for key in sorted(set(old_config) | set(new_config)):
        yield f"config {key}", old_config.get(key), new_config.get(key)


def _as_text(value: Any) -> str:
    """The words of an instruction, a message or a config value."""
    if value is None:
        return "(none)"
    if isinstance(value, str):
        return value
    parts = value.get("parts") if isinstance(value, Mapping) else None
    if isinstance(parts, list):
        pieces = []
        for part in parts:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                pieces.append(part["text"])
            else:
                pieces.append(json.dumps(part, sort_keys=True, ensure_ascii=False))
        return " ".join(pieces)
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _text_change(before: str, after: str, context: int = 4) -> str:
    """``…words [old → new] words…`` around the first change."""
    old_words, new_words = before.split(), after.split()
    matcher = difflib.SequenceMatcher(a=old_words, b=new_words, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        lead = old_words[max(0, i1 - context) : i1]
        removed = _clip(" ".join(old_words[i1:i2]))
        added = _clip(" ".join(new_words[j1:j2]))
        change = f"[{removed or '∅'} → {added or '∅'}]"
        prefix = ("…" if i1 > context else "") + " ".join(lead)
        return f"{prefix} {change}".strip()
    return "whitespace differs"


def _clip(text: str, most: int = 60) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def _tool_names(tools: Any) -> dict[str, Any]:
    names: dict[str, Any] = {}
    for tool in tools or []:
        for declaration in (tool or {}).get("function_declarations") or []:
            names[str(declaration.get("name"))] = declaration
        for key in tool or {}:
            if key != "function_declarations":
                names[f"({key})"] = tool[key]
    return names


def _tool_change(before: Any, after: Any) -> str:
    old, new = _tool_names(before), _tool_names(after)
    added = [name for name in new if name not in old]
    removed = [name for name in old if name not in new]
    if added or removed:
        return ", ".join([*(f"+{name}" for name in added), *(f"-{name}" for name in removed)])
    for name in new:
        if old[name] != new[name]:
            return f"`{name}` declared differently: " + _text_change(
                _as_text(old[name]), _as_text(new[name])
            )
    return "declared differently"
