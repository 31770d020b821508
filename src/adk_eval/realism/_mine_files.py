"""Mining a whole source into a folder, streamed, and reading the folder back as cases.

`mine_sessions(source, out)` reads the stored conversations of a `SessionSource`
one at a time (`StoredConversations`: each redacted, built-in patterns unless told
otherwise), mines each (`mine_session`) and writes, in the folder `out`:

* ``scenarios.evalset.json``: an ADK EvalSet of conversation-scenario cases (one per
  conversation, its id the session's), which ``adk eval`` accepts;
* ``scenarios.jsonl``: one line per scenario with what the EvalSet has no room for
  (its source session, the facts and whether they were asked for, the measured
  behaviour, the outcome).

Both are written beside each other under temporary names and renamed at the end,
so a folder holds a complete pair or its old one; nothing else in it is touched.
Memory stays flat: a mined scenario is written and dropped.

A conversation whose source carries no message text (a trace with content capture
off: `_silent`) is left out and named, and so is an open one (still being written,
unless ``include_open``), and one whose goal the model (``model=``) could not
read: its reply was not the JSON asked for, twice. The rest is written. The
model's calls follow the project's settings through one `Gateway`: one pacer for
all of them, so a limit holds across the conversations.

`load_mined(out, agent)` gives the `EvalCase`s that play them here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from google.adk.agents import BaseAgent
from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
from google.adk.evaluation.simulation.user_simulator_personas import UserBehavior

from .._case import EvalCase
from .._errors import EvalSetupError
from .._sources._filter import SessionFilter
from .._sources._redact._redactor import RedactionCounts, Redactor
from .._sources._source import SessionSource
from .._sources._stored import ReadCounts, StoredConversation, StoredConversations, with_words
from ..goldens._scenario import eval_case_from_scenario
from ..metrics import user_fidelity
from ..metrics._types import Metric
from ..models import ModelSpec
from ..models._gateway._gate import Gateway, gating
from ._extract import read_goal
from ._mine import MinedScenario, mine_session
from ._persona import PersonaSettings
from ._silent import NAMES_KEPT, OPEN, LeftOut, left_out

__all__ = [
    "EVALSET_NAME",
    "MineSummary",
    "SCENARIOS_NAME",
    "load_mined",
    "mine_sessions",
]

EVALSET_NAME = "scenarios.evalset.json"
SCENARIOS_NAME = "scenarios.jsonl"


@dataclass(frozen=True)
class MineSummary:
    """What a mining wrote: how many scenarios, what it left out, what it redacted.

    Attributes:
        mined: Scenarios written.
        skipped: Conversations without a user message, left out.
        redacted: What redaction replaced.
        folder: Where the scenarios are.
        silent: Conversations left out because their source carries no message text.
        silent_sessions: Their session ids (the first 20).
        unread: Conversations left out because the model's reply was not the JSON
            asked for, twice.
        unread_sessions: Their sources (``app/user/session``, the first 20).
        open: Open conversations (still being written), left out.
        open_sessions: Their sources (``app/user/session``, the first 20).
    """

    mined: int
    skipped: int
    redacted: RedactionCounts
    folder: Path
    silent: int = 0
    silent_sessions: tuple[str, ...] = ()
    unread: int = 0
    unread_sessions: tuple[str, ...] = ()
    open: int = 0
    open_sessions: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for the terminal."""
        left = f"; {self.skipped} without a user message left out" if self.skipped else ""
        for said in (
            LeftOut(self.silent, list(self.silent_sessions)).line(""),
            LeftOut(self.open, list(self.open_sessions), OPEN).line(""),
        ):
            left += f"; {said}" if said else ""
        if self.unread:
            more = self.unread - len(self.unread_sessions)
            left += (
                f"; {self.unread} session(s) skipped: the model's reply was not {{goal, "
                f"constraints}} JSON, asked twice: {', '.join(self.unread_sessions)}"
                + (f" and {more} more" if more else "")
            )
        return (
            f"mined {self.mined} scenario(s) into {self.folder / EVALSET_NAME} and "
            f"{self.folder / SCENARIOS_NAME}{left}; {self.redacted.describe()}"
        )


class _Mining:
    """What one mining has seen so far: its counts and the sessions it left out."""

    def __init__(self, model: ModelSpec | None) -> None:
        self.model = model
        self.gateway = Gateway.alone() if model is not None else None
        self.mined = self.skipped = 0
        self.unread: list[str] = []

    async def scenario(
        self, stored: StoredConversation, outcome: bool | None
    ) -> MinedScenario | None:
        """`stored` mined, or None when it is left out (and counted)."""
        scenario = mine_session(stored.session, outcome=outcome)
        if scenario is None:
            self.skipped += 1
            return None
        if self.model is None or self.gateway is None:
            return scenario
        with gating(self.gateway.call_gate()):
            read, _ = await read_goal(stored.session, self.model)
        if read is None:
            self.unread.append(scenario.source)
            return None
        return replace(scenario, goal=read.goal, constraints=tuple(read.constraints))

    async def write(
        self,
        stream: StoredConversations,
        cases: IO[str],
        lines: IO[str],
        outcomes: Mapping[str, bool],
    ) -> None:
        """Each conversation of `stream` mined and written: an EvalSet case, a JSON line."""
        cases.write('{"eval_set_id": "mined_scenarios", "name": "mined_scenarios", ')
        cases.write('"description": "Scenarios mined from stored conversations", ')
        cases.write('"eval_cases": [')
        async for stored in stream:
            scenario = await self.scenario(stored, outcomes.get(stored.session.id))
            if scenario is None:
                continue
            case = scenario.adk_eval_case().model_dump_json(by_alias=True, exclude_none=True)
            cases.write(("," if self.mined else "") + "\n" + case)
            lines.write(json.dumps(scenario.to_json(), ensure_ascii=False) + "\n")
            self.mined += 1
        cases.write("\n]}\n")

    def summary(self, out: Path, counts: ReadCounts) -> MineSummary:
        """What was written into `out`, and what the read (`counts`) left out."""
        silent, opened = left_out(counts)
        return MineSummary(
            self.mined,
            self.skipped,
            counts.redacted or RedactionCounts(sessions=counts.read),
            out,
            silent.count,
            tuple(silent.sessions),
            len(self.unread),
            tuple(self.unread[:NAMES_KEPT]),
            opened.count,
            tuple(opened.sessions),
        )


async def mine_sessions(
    source: SessionSource,
    out: Path,
    *,
    filters: SessionFilter | None = None,
    redactor: Redactor | None = None,
    outcomes: Mapping[str, bool] | None = None,
    model: ModelSpec | None = None,
    include_open: bool = False,
) -> MineSummary:
    """Mines every stored conversation of `source` that passes `filters` into the folder `out`.

    Args:
        source: Where the sessions are (`open_sessions`).
        out: The folder (created if missing).
        filters: Which sessions (all by default).
        redactor: What is redacted before anything is mined (default: the built-in
            patterns; `Redactor.none()` redacts nothing).
        outcomes: Whether each session reached its goal, by session id, when known.
        model: Reads each conversation's goal and constraints (`_extract`: a structured
            schema); None: the goal is the first message, and no constraints. A
            conversation whose reply is not that JSON, asked twice, is left out and named.
        include_open: Mine open conversations (still being written) too, as far as
            they were written.

    Raises:
        EvalSetupError: `out` is a file; the source cannot be read; no conversation
            of the source carries message text.
    """
    _folder(out)
    mining = _Mining(model)
    stream = with_words(source, filters, redactor=redactor, include_open=include_open)
    cases_tmp, lines_tmp = out / f".{EVALSET_NAME}.tmp", out / f".{SCENARIOS_NAME}.tmp"
    try:
        with cases_tmp.open("w", encoding="utf-8") as cases, lines_tmp.open("w") as lines:
            await mining.write(stream, cases, lines, outcomes or {})
        silent, _ = left_out(stream.counts)
        if silent.count and not (mining.mined or mining.skipped or mining.unread):
            raise silent.nothing_left("mine", source.description)
        os.replace(cases_tmp, out / EVALSET_NAME)
        os.replace(lines_tmp, out / SCENARIOS_NAME)
    finally:
        for leftover in (cases_tmp, lines_tmp):
            leftover.unlink(missing_ok=True)
    return mining.summary(out, stream.counts)


def _folder(out: Path) -> None:
    """Makes `out` a folder, or says in one line why it cannot be one."""
    if out.exists() and not out.is_dir():
        raise EvalSetupError(f"--out {out} is a file: give a folder for the mined scenarios")
    out.mkdir(parents=True, exist_ok=True)


def load_mined(
    out: Path,
    agent: BaseAgent,
    *,
    user_model: ModelSpec | None = None,
    metrics: Sequence[Metric] = (),
    tool_mocks: Mapping[str, Any] | None = None,
    settings: PersonaSettings | None = None,
) -> list[EvalCase]:
    """The mined scenarios of the folder `out` as cases of `agent`, in mined order.

    Each case's simulated user plays the scenario (ADK's user-simulator prompt with
    the mined plan and persona) and is scored, beside `metrics`, by a
    `user_fidelity` that holds back the facts the real user gave only when asked.
    `settings` (from `calibrate`) add their instruction to every persona.

    Raises:
        EvalSetupError: The folder holds no mined scenarios (one line naming it).
    """
    from google.adk.evaluation.eval_set import EvalSet

    evalset, records = out / EVALSET_NAME, out / SCENARIOS_NAME
    if not evalset.is_file() or not records.is_file():
        raise EvalSetupError(
            f"{out} holds no mined scenarios: run `adk-eval mine SESSIONS --out {out}`"
        )
    adk_cases = {c.eval_id: c for c in EvalSet.model_validate_json(evalset.read_text()).eval_cases}
    found = []
    for line in records.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        held = [fact["text"] for fact in record["facts"] if fact["asked"]]
        case_id = record["source"].rsplit("/", 1)[-1] or record["source"]
        adk_case: AdkEvalCase = adk_cases[case_id]
        if settings is not None:
            adk_case = _with_settings(adk_case, settings)
        case = eval_case_from_scenario(
            adk_case,
            agent,
            user_model=user_model,
            tool_mocks=tool_mocks,
            metrics=[*metrics, user_fidelity(hold_back=held, judge=False)],
            name=f"mined {record['source']}",
        )
        found.append(case)
    return found


def _with_settings(case: AdkEvalCase, settings: PersonaSettings) -> AdkEvalCase:
    """`case` whose persona also follows `settings`."""
    scenario = case.conversation_scenario
    if scenario is None or scenario.user_persona is None:
        return case
    extra = UserBehavior(
        name="calibrated",
        description=settings.instruction(),
        behavior_instructions=[settings.instruction()],
        violation_rubrics=["The user does not behave as the instruction describes."],
    )
    persona = scenario.user_persona.model_copy(
        update={"behaviors": [*scenario.user_persona.behaviors, extra]}
    )
    return case.model_copy(
        update={"conversation_scenario": scenario.model_copy(update={"user_persona": persona})}
    )
