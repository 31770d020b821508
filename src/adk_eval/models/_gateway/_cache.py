"""The model-output cache: a content-addressed SQLite file of model answers.

An entry is keyed by `ModelCall.key`: a hash of the role, the model, its address,
the whole request and the attempt (`models._requests.fingerprint`: what is not in
it), so a changed instruction, message, tool, setting or any id the user gave is
another entry, and each ``--repeat`` attempt has its own. It keeps the
answer (``LlmResponse`` JSON), who asked (role and its kind, model, address,
case, attempt), when, the tokens and cost of the answer, and a hash of the
request (for a judge, ``judge:METRIC``, the hash of its prompt as sent).

An entry older than `ModelCalls.cache_ttl` seconds is a miss (`ModelCache.prune`
deletes such entries). Answers with an ``error_code`` are never kept. An entry
whose answer cannot be read back (the file was damaged or edited) is never
used: the run ends with one `EvalSetupError` naming the file and the command
that clears it.

The file (`cache_file`): `ModelCalls.cache_path`, else
``$ADK_EVAL_CACHE_DIR/models.sqlite``, else ``$XDG_CACHE_HOME/adk-eval/models.sqlite``,
else ``~/.cache/adk-eval/models.sqlite``. Worker processes write it at once: it
is in WAL mode, waits for a busy file rather than failing (a lookup that still
finds it busy is a miss, a save is skipped), and holds each write for one
statement. A file at the path that is not a model cache is never written:
opening it is one `EvalSetupError` naming the file and what to do
(`models._cache_file`).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._errors import EvalSetupError
from ..._quiet import quiet
from ._answers import ModelCall
from ._cache_file import (
    CACHE_DIR_ENV,
    CacheBusyError,
    CacheDatabase,
    cache_file,
    remove_damaged,
)
from ._settings import ModelCalls, role_kind
from ._usage import cost_of

__all__ = [
    "CACHE_DIR_ENV",
    "CacheEntry",
    "ModelCache",
    "cache_file",
    "close_caches",
    "open_cache",
    "remove_damaged",
    "request_hash",
]

_COLUMNS = (
    "key, role, kind, model, base_url, case_name, attempt, created, request_hash, "
    "input_tokens, output_tokens, cost_usd"
)
_INSERT = (
    "INSERT OR REPLACE INTO entries (key, role, kind, model, base_url, case_name, attempt, "
    "created, request_hash, responses, input_tokens, output_tokens, cost_usd) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def request_hash(request: Mapping[str, Any]) -> str:
    """The sha256 of a request's canonical JSON (`request_data`)."""
    text = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class CacheEntry:
    """One cached answer, as listed (its responses left out).

    Attributes:
        key: `ModelCall.key`.
        role: ``agent``, ``user:NAME``, ``judge:METRIC``, ``tool:NAME``, ``summarizer``.
        kind: The role's kind: ``agent``, ``users``, ``judges`` or ``tools``.
        model: The model that answered.
        base_url: Its address (None: its provider's default).
        case: The case whose run asked (None: outside a run).
        attempt: Which repetition of the case.
        created: When it was kept (POSIX seconds).
        request_hash: The sha256 of the request (for a judge: of its prompt as sent).
        input_tokens: Prompt tokens of the answer.
        output_tokens: Completion tokens of the answer.
        cost_usd: What the answer cost (None: a model without a known price).
    """

    key: str
    role: str
    kind: str
    model: str
    base_url: str | None
    case: str | None
    attempt: int
    created: float
    request_hash: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


@dataclass(frozen=True)
class ModelCache:
    """The cache file's answers (a `ResponseStore`), valid for `ttl` seconds.

    Attributes:
        database: The open file.
        ttl: Seconds an entry stays valid (None: until cleared).
        clock: POSIX seconds now.
    """

    database: CacheDatabase
    ttl: float | None = None
    clock: Callable[[], float] = time.time

    @property
    def path(self) -> Path:
        """The cache file."""
        return self.database.path

    def lookup(self, call: ModelCall) -> list[dict[str, Any]] | None:
        """The answer kept for `call`, None when there is none, it expired or the file is busy."""
        try:
            with self.database.using() as db:
                row = db.execute(
                    "SELECT responses, created FROM entries WHERE key = ?", (call.key,)
                ).fetchone()
        except CacheBusyError:  # a miss, not a failure
            return None
        if row is None or self._expired(row[1]):
            return None
        return self._answer(call, row[0])

    def _answer(self, call: ModelCall, text: str) -> list[dict[str, Any]]:
        """The responses kept as `text`, each a valid ``LlmResponse``; else one clear error."""
        from google.adk.models.llm_response import LlmResponse
        from pydantic import ValidationError

        try:
            answer = json.loads(text)
            if not isinstance(answer, list) or not answer:
                raise ValueError("not a list of responses")
            for item in answer:
                LlmResponse.model_validate(item)
        except (ValueError, ValidationError):
            error = EvalSetupError(
                f"model cache {self.path} holds an answer it cannot read back for this "
                f"{call.role} call of {call.model} (the file was damaged or edited); it was "
                f"not used: delete that role's answers with `adk-eval cache clear --cache-path "
                f"{self.path} --role {call.role}` (or the whole cache without --role), or run "
                "without --cache"
            )
            quiet(error)
            raise error from None
        return answer

    def save(self, call: ModelCall, responses: list[dict[str, Any]]) -> None:
        """Keeps `responses` as the answer to `call` (not when empty or one has an error)."""
        if not responses or any(item.get("error_code") is not None for item in responses):
            return
        prompt, output, cost = _usage_of(responses, call.model)
        row = (
            call.key,
            call.role,
            role_kind(call.role),
            call.model,
            call.base_url,
            call.case,
            call.attempt,
            self.clock(),
            request_hash(call.request),
            json.dumps(responses, ensure_ascii=False, separators=(",", ":")),
            prompt,
            output,
            cost,
        )
        try:
            with self.database.using() as db:
                db.execute(_INSERT, row)
        except CacheBusyError:  # the answer is not kept, and the run goes on
            return

    def close(self) -> None:
        """Nothing to write: each answer is kept as it comes (the file stays open)."""

    def entries(self, *, role: str | None = None, model: str | None = None) -> list[CacheEntry]:
        """The entries, oldest first; `role` (a role or a kind) and `model` (a glob) filter."""
        where, values = _where(role, model, None, self.clock())
        with self.database.using() as db:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM entries{where} ORDER BY created, key", values
            ).fetchall()
        return [CacheEntry(*row) for row in rows]

    def expired(self, entry: CacheEntry) -> bool:
        """Whether `entry` is older than this cache's `ttl`."""
        return self._expired(entry.created)

    def clear(
        self,
        *,
        role: str | None = None,
        model: str | None = None,
        older_than: float | None = None,
    ) -> int:
        """Deletes the entries that match (all without filters); returns how many."""
        where, values = _where(role, model, older_than, self.clock())
        with self.database.using() as db:
            return db.execute(f"DELETE FROM entries{where}", values).rowcount

    def prune(self, older_than: float | None = None) -> int:
        """Deletes the entries older than `older_than` seconds (None: the `ttl`), and compacts.

        Returns:
            How many entries were deleted.
        """
        age = self.ttl if older_than is None else older_than
        deleted = self.clear(older_than=age) if age is not None else 0
        with self.database.using() as db:
            db.execute("VACUUM")
            # in WAL mode VACUUM writes the compacted copy to the log: back into the file
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return deleted

    def _expired(self, created: float) -> bool:
        return self.ttl is not None and self.clock() - created > self.ttl


def _where(
    role: str | None, model: str | None, older_than: float | None, now: float
) -> tuple[str, tuple[Any, ...]]:
    clauses: list[str] = []
    values: list[Any] = []
    if role is not None:
        clauses.append("(role = ? OR kind = ?)")
        values += [role, role]
    if model is not None:
        clauses.append("model GLOB ?")
        values.append(model)
    if older_than is not None:
        clauses.append("created < ?")
        values.append(now - older_than)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(values)


def _usage_of(responses: list[dict[str, Any]], model: str) -> tuple[int, int, float | None]:
    """Prompt and completion tokens of the answer's final responses, and their cost."""
    prompt = output = 0
    cost: float | None = 0.0
    for item in responses:
        usage = item.get("usage_metadata")
        if not isinstance(usage, dict) or item.get("partial"):
            continue
        tokens_in = int(usage.get("prompt_token_count") or 0)
        tokens_out = int(usage.get("candidates_token_count") or 0)
        cached = int(usage.get("cached_content_token_count") or 0)
        prompt += tokens_in
        output += tokens_out
        price = cost_of(str(item.get("model_version") or model), tokens_in, tokens_out, cached)
        cost = None if price is None or cost is None else cost + price
    return prompt, output, cost


_OPEN: dict[tuple[Path, int], CacheDatabase] = {}
_OPEN_LOCK = threading.Lock()


def open_cache(settings: ModelCalls) -> ModelCache:
    """The cache of `settings` (its file opened once per process, then reused).

    Raises:
        EvalSetupError: The file is damaged or is not a model cache (it is left as it is).
    """
    path = cache_file(settings).absolute()
    with _OPEN_LOCK:
        key = (path, os.getpid())  # a forked worker opens its own connection
        database = _OPEN.get(key)
        if database is None:
            database = _OPEN[key] = CacheDatabase(path)
    return ModelCache(database, settings.cache_ttl)


def close_caches() -> None:
    """Closes every cache file this process opened (the next `open_cache` opens it again)."""
    with _OPEN_LOCK:
        for (_, pid), database in list(_OPEN.items()):
            if pid == os.getpid():
                database.close()
        _OPEN.clear()
