"""Real task dialogues between people, rebuilt as the ADK events a stored session holds.

Two public datasets of task dialogues written by people, read from a folder given on
the command line (never committed: only dialogue ids and our own labels are):

* ``taskmaster4/``: Taskmaster TM-4-2024 (google-research-datasets/Taskmaster, CC BY
  4.0), coffee-ordering self-dialogs, ``data_00.json`` ... ``data_07.json``; the
  agent's API calls and responses are annotated on the user's utterance before them.
* ``sgd/``: Schema-Guided Dialogue (google-research-datasets/dstc8-schema-guided-dialogue,
  CC BY-SA 4.0), ``train|dev|test/dialogues_NNN.json``; the system's service call
  and results are in its turn's frames.

A dialogue is named ``taskmaster4/data_03.json#dlg-...`` or ``sgd/test/dialogues_001.json#1_00000``
(its file, so only that file is read). `events(dialogue)` rebuilds it as a session's
events: a user text event per user turn; per agent turn, its tool calls (a function
call event and a function response event by the agent, as ADK writes them) and then
its text event. Nothing else: no thoughts, no state.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from google.adk.events import Event
from google.genai import types

__all__ = ["GET_THEM", "Dialogue", "Turn", "events", "load", "read_file"]

GET_THEM = (
    "get the datasets into DATASET_PATH: taskmaster4/ from github.com/google-research-datasets/"
    "Taskmaster (TM-4-2024/data/data_0*.json), sgd/ from github.com/google-research-datasets/"
    "dstc8-schema-guided-dialogue (train/, dev/, test/ dialogues_*.json)"
)
"""One line saying how to get the datasets."""

AGENT = "agent"


@dataclass(frozen=True)
class Turn:
    """One turn: who spoke, what they said, and the agent's tool calls before it.

    Attributes:
        by_user: The user's turn (else the agent's).
        text: What was said.
        calls: The agent's tool calls before this text: ``(name, args, response)``.
    """

    by_user: bool
    text: str
    calls: tuple[tuple[str, dict[str, Any], dict[str, Any]], ...] = ()


@dataclass(frozen=True)
class Dialogue:
    """One dialogue: its name (file#id), its domain and its turns."""

    name: str
    domain: str
    turns: tuple[Turn, ...]


@cache
def read_file(root: Path, relative: str) -> dict[str, Any]:
    """The dialogues of one dataset file, by id (read once per process)."""
    raw = json.loads((root / relative).read_text())
    if relative.startswith("taskmaster4/"):
        return {item["conversation_id"]: item for item in raw}
    return {item["dialogue_id"]: item for item in raw}


def _loads(value: str) -> dict[str, Any]:
    try:
        found = json.loads(value)
    except ValueError:
        return {"value": value}
    return found if isinstance(found, dict) else {"value": found}


def _taskmaster(name: str, item: dict[str, Any]) -> Dialogue:
    turns: list[Turn] = []
    pending: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for utterance in item["utterances"]:
        by_user = utterance["speaker"] == "user"
        turns.append(Turn(by_user, utterance["text"], () if by_user else tuple(pending)))
        if not by_user:
            pending = []
            continue
        calls: dict[str, dict[str, Any]] = {}
        for note in utterance.get("annotations", []):
            slot = calls.setdefault(note["context"].rsplit("_", 1)[-1], {})
            slot[note["name"]] = note["value"]
        for call in calls.values():
            if "api_call" in call:
                request, response = call.get("request", "{}"), call.get("response", "{}")
                pending.append((call["api_call"], _loads(request), _loads(response)))
    return Dialogue(name, item.get("scenario", "coffee"), tuple(turns))


def _sgd(name: str, item: dict[str, Any]) -> Dialogue:
    turns = []
    for turn in item["turns"]:
        by_user = turn["speaker"] == "USER"
        calls = tuple(
            (
                frame["service_call"]["method"],
                dict(frame["service_call"]["parameters"]),
                {"results": frame.get("service_results", [])[:3]},
            )
            for frame in turn["frames"]
            if "service_call" in frame and not by_user
        )
        turns.append(Turn(by_user, turn["utterance"], calls))
    return Dialogue(name, ",".join(item["services"]), tuple(turns))


def load(root: Path, name: str) -> Dialogue:
    """The dialogue `name` (``FILE#ID``) of the datasets under `root`.

    Raises:
        KeyError: No such dialogue in that file.
        FileNotFoundError: No such file.
    """
    relative, _, ident = name.partition("#")
    item = read_file(root, relative)[ident]
    return _taskmaster(name, item) if relative.startswith("taskmaster4/") else _sgd(name, item)


def _event(author: str, part: types.Part, invocation: str) -> Event:
    role = "user" if author == "user" or part.function_response is not None else "model"
    return Event(
        author=author, invocation_id=invocation, content=types.Content(role=role, parts=[part])
    )


def events(dialogue: Dialogue) -> list[Event]:
    """The dialogue as a stored session's events (see the module doc)."""
    found: list[Event] = []
    invocation = "inv-0"
    for index, turn in enumerate(dialogue.turns):
        if turn.by_user:
            invocation = f"inv-{index}"
            found.append(_event("user", types.Part(text=turn.text), invocation))
            continue
        for number, (name, args, response) in enumerate(turn.calls):
            ident = f"call-{index}-{number}"
            call = types.FunctionCall(id=ident, name=name, args=args)
            answer = types.FunctionResponse(id=ident, name=name, response=response)
            found.append(_event(AGENT, types.Part(function_call=call), invocation))
            found.append(_event(AGENT, types.Part(function_response=answer), invocation))
        found.append(_event(AGENT, types.Part(text=turn.text), invocation))
    return found


def labelled(doc: str, name: str, argv: list[str] | None) -> tuple[argparse.Namespace, list[Any]]:
    """An agreement script's arguments and its labels, the datasets they need checked.

    The arguments: the datasets' folder, ``--labels`` (``labels/NAME.json``) and
    ``--json`` (``results/NAME_agreement.json``). A dataset file a label names that
    is not there ends the script with one line saying how to get the datasets.
    """
    here = Path(__file__).parent
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("dataset", type=Path, help="the folder holding taskmaster4/ and sgd/")
    parser.add_argument("--labels", type=Path, default=here / "labels" / f"{name}.json")
    parser.add_argument("--json", default=str(here / "results" / f"{name}_agreement.json"))
    args = parser.parse_args(argv)
    labels = json.loads(args.labels.read_text())["dialogues"]
    needed = {label["dialogue"].partition("#")[0] for label in labels}
    missing = sorted(name for name in needed if not (args.dataset / name).is_file())
    if missing:
        raise SystemExit(f"no {args.dataset / missing[0]}: {GET_THEM}")
    return args, labels
