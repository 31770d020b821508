"""Cassettes: a run's model calls recorded to a file once, replayed from it offline.

One file per case and attempt: ``<folder>/<case>/attempt-<n>.json``, where
``<case>`` is the case's name when it is a plain lowercase file name (``refund``)
and otherwise a slug of it with a short hash (``refund-eu-3f9a0c21d4``), so any
name gets a safe folder of its own; the file keeps the real name. It holds the
run's calls by role and order: each with its role, its number among that role's
calls, the model, the address it was served from, the request (`request_data`)
and the responses (``LlmResponse`` JSON data).

Recording (`ModelCalls.record`) writes every call when the run ends, to a
temporary file renamed over the case's file: a run that crashes leaves the old
file (or none), never half of one, and the files of other cases stay as they
are. The write is the harness's own, not the case's: the run's sandbox neither
lists nor refuses it. A pass with faults records in a subfolder of its own
(`adk_eval._suites._faulted.cassettes_apart`).

Replaying (`ModelCalls.replay`) answers a call from the recording of its case,
attempt and role: the next unused call of the role when its request is the
same, else any unused call of the role with the same request (parallel agents
may take their turns in another order). "The same request" is `request_data`'s:
the model, the contents and the generation config, without HTTP options,
labels and random ids. The address a model is served from is kept for
information and not compared: a recording answers for the provider, wherever
the run reaches it from (a proxy, a local gateway, no network at all). A call
the recording cannot answer is a miss: with ``on_miss="error"`` a
`CassetteMissError` of one line (the case, the role, the call's number and the
first difference against the recorded call it is closest to, then how to
re-record in the options of where the settings were given: the command line,
pytest or code); with ``on_miss="call"`` the model answers it and the file is
rewritten, when the run ends, with the calls the run made (replayed and new, in
its order). The run's result reports a miss; ADK does not log it
(`adk_eval._quiet`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..._errors import CassetteMissError
from ..._sandbox._scope import model_traffic
from ._answers import ModelCall
from ._requests import canonical, first_difference
from ._settings import ModelCalls

__all__ = ["FORMAT", "Cassette", "case_folder", "cassette_path", "open_cassette"]

FORMAT = 1
"""The version of the file layout, written in each file as ``adk_eval_cassette``."""

_PLAIN = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_HASHED = re.compile(r".*-[0-9a-f]{10}")
_RESERVED = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{kind}{n}" for kind in ("com", "lpt") for n in range(1, 10)]
)
_HINTS = {
    "cli": "(re-record with --record-models DIR, or --on-miss call)",
    "pytest": "(re-record with --adk-eval-record-models DIR, or --adk-eval-on-miss call)",
    "code": "(re-record with ModelCalls(record=DIR), or ModelCalls(on_miss='call'))",
}
"""How a miss says to re-record, by where the settings were given (`ModelCalls.given_by`)."""


def case_folder(case: str) -> str:
    """The folder name of `case`'s cassettes: safe on any file system, one per name.

    A plain lowercase name is kept (``refund``); any other gets a slug and a hash
    of the name (``Refund EU`` -> ``refund-eu-<10 hex>``). Plain names never look
    like hashed ones, so two names never share a folder.
    """
    plain = (
        _PLAIN.fullmatch(case) is not None
        and not case.endswith(".")
        and case.split(".", 1)[0] not in _RESERVED
        and _HASHED.fullmatch(case) is None
    )
    if plain:
        return case
    slug = re.sub(r"[^a-z0-9]+", "-", case.lower()).strip("-")[:48].strip("-") or "case"
    return f"{slug}-{hashlib.sha256(case.encode()).hexdigest()[:10]}"


def cassette_path(folder: Path, case: str, attempt: int) -> Path:
    """The file of `case`'s attempt `attempt` in the cassette folder `folder`."""
    return Path(folder) / case_folder(case) / f"attempt-{attempt}.json"


@dataclass
class _Entry:
    """One recorded call."""

    role: str
    index: int
    model: str
    base_url: str | None
    request: dict[str, Any]
    responses: list[dict[str, Any]]
    used: bool = False
    written: str = field(default="", repr=False)

    @property
    def same(self) -> str:
        """``canonical(request)``, made at the first comparison (copies keep it)."""
        if not self.written:
            self.written = canonical(self.request)
        return self.written

    def to_data(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "index": self.index,
            "model": self.model,
            "base_url": self.base_url,
            "request": self.request,
            "responses": self.responses,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> _Entry:
        return cls(
            role=str(data["role"]),
            index=int(data["index"]),
            model=str(data["model"]),
            base_url=data.get("base_url"),
            request=dict(data["request"]),
            responses=[dict(item) for item in data["responses"]],
        )

    @classmethod
    def of(cls, call: ModelCall, responses: list[dict[str, Any]]) -> _Entry:
        request = json.loads(json.dumps(dict(call.request), ensure_ascii=False))
        return cls(call.role, call.index, call.model, call.base_url, request, list(responses))


class Cassette:
    """One run's cassette: a `ResponseStore` the gateway asks first (see the module doc).

    Args:
        path: The file of the run's case and attempt.
        case: The case's name.
        attempt: Which repetition of the case.
        mode: ``record`` (write every call) or ``replay`` (answer from the file).
        on_miss: When replaying, what a call the file cannot answer does.
        given_by: Where the settings were given: the options a miss names.
    """

    def __init__(
        self,
        path: Path,
        case: str,
        attempt: int,
        *,
        mode: Literal["record", "replay"],
        on_miss: Literal["error", "call"] = "error",
        given_by: str = "code",
    ) -> None:
        self.path = path
        self.case = case
        self.attempt = attempt
        self.mode = mode
        self.on_miss = on_miss
        self.hint = _HINTS.get(given_by, _HINTS["code"])
        self._lock = threading.Lock()
        self._made: list[_Entry] = []  # this run's calls, in the order they were answered
        self._saved = 0
        self._recorded: dict[str, list[_Entry]] = {}
        self._problem: str | None = None
        if mode == "replay":
            self._load()

    def _load(self) -> None:
        if not self.path.is_file():
            self._problem = f"no recording of this case ({self.path} does not exist)"
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("adk_eval_cassette") != FORMAT:
                raise ValueError(f"not a cassette of format {FORMAT}")
            entries = [_Entry.from_data(item) for item in data["entries"]]
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:
            self._problem = f"{self.path} cannot be read ({error})"
            return
        if data.get("case") != self.case:
            self._problem = f"{self.path} holds case `{data.get('case')}`, not this one"
            return
        for entry in sorted(entries, key=lambda item: item.index):
            self._recorded.setdefault(entry.role, []).append(entry)

    def lookup(self, call: ModelCall) -> list[dict[str, Any]] | None:
        """The recorded responses to `call`; None to let the model answer it.

        Raises:
            CassetteMissError: Replaying with ``on_miss="error"``, and the recording
                has no unused call of `call`'s role with its request.
        """
        if self.mode == "record":
            return None
        with self._lock:
            entry = self._match(call)
            if entry is not None:
                entry.used = True
                self._made.append(dataclasses.replace(entry, index=call.index))
                return [dict(item) for item in entry.responses]
            if self.on_miss == "call":
                return None
            raise CassetteMissError(self._miss_line(call))

    def _match(self, call: ModelCall) -> _Entry | None:
        same = call.written or canonical(dict(call.request))
        recorded = self._recorded.get(call.role, ())
        return next((entry for entry in recorded if not entry.used and entry.same == same), None)

    def save(self, call: ModelCall, responses: list[dict[str, Any]]) -> None:
        """Keeps `call`'s responses, written to the file when the run ends."""
        entry = _Entry.of(call, responses)
        with self._lock:
            self._made.append(entry)
            self._saved += 1

    def close(self) -> None:
        """Writes the run's calls, atomically: when recording, or when a replay recorded some."""
        with self._lock:
            if self.mode == "replay" and not self._saved:
                return
            entries = sorted(self._made, key=lambda entry: (entry.role, entry.index))
            data = {
                "adk_eval_cassette": FORMAT,
                "case": self.case,
                "attempt": self.attempt,
                "entries": [entry.to_data() for entry in entries],
            }
            text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
            with model_traffic():  # the harness's own file, not the case's: no sandbox line
                _write_atomically(self.path, text)
            self._saved = 0

    def _miss_line(self, call: ModelCall) -> str:
        head = f"cassette miss: case `{self.case}`, role {call.role}, call {call.index}"
        return f"{head}: {_one_line(self._why(call))} {self.hint}"

    def _why(self, call: ModelCall) -> str:
        if self._problem is not None:
            return self._problem
        recorded = self._recorded.get(call.role, [])
        if not recorded:
            roles = ", ".join(sorted(self._recorded)) or "none"
            return f"the recording has no call of this role (its roles: {roles})"
        unused = [entry for entry in recorded if not entry.used]
        if not unused:
            count = len(recorded)
            return f"the recording has {count} call{'s' * (count != 1)} of this role, all replayed"
        entry = _closest(unused, call)
        difference = first_difference(entry.request, dict(call.request))
        where = "" if entry.index == call.index else f" (against recorded call {entry.index})"
        return f"{difference or 'the request differs'}{where}"


def _closest(entries: list[_Entry], call: ModelCall) -> _Entry:
    """The recorded call `call` most likely stands for: the most in common, then the nearest."""
    request = dict(call.request)

    def likeness(entry: _Entry) -> tuple[int, int, int, int]:
        old, new = entry.request, request
        old_config, new_config = old.get("config") or {}, new.get("config") or {}
        shared = 0
        pairs = zip(old.get("contents") or [], new.get("contents") or [], strict=False)
        for before, after in pairs:
            if before != after:
                break
            shared += 1
        return (
            int(old_config.get("system_instruction") == new_config.get("system_instruction")),
            int(old_config.get("tools") == new_config.get("tools")),
            shared,
            -abs(entry.index - call.index),
        )

    return max(entries, key=likeness)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _write_atomically(path: Path, text: str) -> None:
    """Writes `text` to a temporary file beside `path`, then renames it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with temporary.open("x", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def open_cassette(settings: ModelCalls, case: str, attempt: int) -> Cassette:
    """The cassette of `case`'s attempt `attempt`, as `settings` record or replay it.

    Raises:
        ValueError: `settings` neither record nor replay.
    """
    if settings.record is not None:
        return Cassette(cassette_path(settings.record, case, attempt), case, attempt, mode="record")
    if settings.replay is not None:
        path = cassette_path(settings.replay, case, attempt)
        return Cassette(
            path, case, attempt, mode="replay", on_miss=settings.on_miss, given_by=settings.given_by
        )
    raise ValueError("open_cassette: the settings neither record nor replay model calls")
