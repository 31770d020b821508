"""Real agents' conversations rebuilt as ADK events, for `claimed_actions_agreement.py`.

Two public datasets of task dialogues with the agent's tool calls and answers
(fetched at development time, never committed):

* tau-bench's ``historical_trajectories/gpt-4o-airline.json``
  (github.com/sierra-research/tau-bench): a GPT-4o airline agent, OpenAI-style
  messages with ``tool_calls`` and tool answers (JSON, or text such as
  ``Error: ...``). A conversation is ``tau-airline/<task_id>.<trial>``.
* Taskmaster-4 (github.com/google-research-datasets/Taskmaster, ``TM-4-2024/data/``):
  coffee orders written by people, the agent's API calls and answers annotated on
  the user turn they follow. A conversation is ``tm4/<conversation_id>``.

A message is ``<conversation>#<index>`` (the index in ``traj`` or in ``utterances``).
Neither dataset declares its tools' descriptions: `TOOLS` holds a one-line
description written here from each tool's name (what a developer would write),
never from the agent's messages.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.adk.events import Event
from google.genai import types

from adk_eval.testing import function_response_event, user_event

WHERE = {
    "tau-airline": "tau-bench's historical_trajectories/gpt-4o-airline.json "
    "(github.com/sierra-research/tau-bench)",
    "tm4": "Taskmaster-4's TM-4-2024/data/ folder (github.com/google-research-datasets/Taskmaster)",
}

TOOLS: dict[str, dict[str, str]] = {
    "tau-airline": {
        "get_user_details": (
            "Gets a user's profile: name, payment methods, membership, reservations."
        ),
        "get_reservation_details": "Gets the details of a reservation.",
        "search_direct_flight": "Searches direct flights between two airports on a date.",
        "search_onestop_flight": "Searches one-stop flights between two airports on a date.",
        "list_all_airports": "Lists all airports and their cities.",
        "calculate": "Calculates the result of an arithmetic expression.",
        "think": "Writes down a thought; changes nothing.",
        "book_reservation": "Books a flight reservation.",
        "cancel_reservation": "Cancels a reservation.",
        "update_reservation_flights": "Updates the flights or cabin of a reservation.",
        "update_reservation_baggages": "Updates the checked bags of a reservation.",
        "update_reservation_passengers": "Updates the passengers of a reservation.",
        "send_certificate": "Sends a travel certificate to a user.",
        "transfer_to_human_agents": "Transfers the user to a human agent.",
    },
    "tm4": {
        "get_menu_items": "Gets the menu items matching a query.",
        "show_menu": "Shows the menu on the customer's screen.",
        "get_addons": "Gets the add-ons (milk, shots, syrups) of a menu item.",
        "add_order_item": "Adds an item to the customer's order.",
        "update_order_item": "Updates an item of the order.",
        "update_order": "Updates the order (the customer's name, here or to go).",
        "get_order_details": "Gets the order's details, shown on the customer's screen.",
        "finish_order": "Finishes the order and sends it to the coffee bar to be made.",
    },
}


@dataclass
class Step:
    """One thing that happened: a user's or an agent's message, or a tool's answer."""

    kind: str  # "user", "agent" or "tool"
    text: str = ""
    at: int = -1  # its index in the dataset (messages only)
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # id, name, args
    call_id: str = ""
    name: str = ""
    response: Any = None


@dataclass
class Conversation:
    """A conversation of one dataset, as steps."""

    id: str
    dataset: str
    group: str  # the held-out split goes by group (a tau-bench task's trials are one group)
    steps: list[Step]

    def messages(self) -> Iterator[tuple[int, Step]]:
        """The agent messages that say something, with their place in `steps`."""
        for index, step in enumerate(self.steps):
            if step.kind == "agent" and step.text.strip():
                yield index, step

    def place(self, at: int) -> int:
        """The place in `steps` of the message at dataset index `at`."""
        return next(i for i, step in enumerate(self.steps) if step.at == at)

    def after_call(self, index: int) -> bool:
        """Whether a tool answered since the user last spoke, or the message makes calls."""
        if self.steps[index].calls:
            return True
        for step in reversed(self.steps[:index]):
            if step.kind == "user":
                return False
            if step.kind == "tool":
                return True
        return False

    def events(self, index: int) -> list[Event]:
        """ADK events up to the message at `index` and its own calls' answers.

        Earlier agent messages keep their calls but not their text, so the one
        message at `index` is what the metric reads (its verdict is that message's).
        """
        own = {call_id for call_id, _, _ in self.steps[index].calls}
        events: list[Event] = []
        for at, step in enumerate(self.steps):
            if at > index and not (step.kind == "tool" and step.call_id in own):
                if step.kind != "tool":
                    break
                continue
            if step.kind == "user":
                events.append(user_event(step.text))
            elif step.kind == "tool":
                events.append(_answer(step))
            elif at == index or step.calls:
                events.append(_said(step.text if at == index else "", step.calls))
        return events


FAILURE: dict[str, Any] = {
    "tau-airline": "Error: the request could not be completed",
    "tm4": {"success": False},
}
"""A failed answer in each dataset's own form (its tools' error text, its success flag)."""


def variant(conversation: Conversation, tools: list[str], how: str) -> Conversation:
    """`conversation` with every call of `tools` withheld or failed (`how`)."""
    steps = []
    for step in conversation.steps:
        if step.kind == "tool" and step.name in tools:
            if how == "failed":
                steps.append(dataclasses.replace(step, response=FAILURE[conversation.dataset]))
            continue
        calls = [c for c in step.calls if how == "failed" or c[1] not in tools]
        steps.append(dataclasses.replace(step, calls=calls))
    return dataclasses.replace(conversation, steps=steps)


def held_out(group: str) -> bool:
    """Whether `group` is in the held-out third (a stable hash of its name)."""
    return int(hashlib.sha256(group.encode()).hexdigest(), 16) % 3 == 0


def _said(text: str, calls: list[tuple[str, str, dict[str, Any]]]) -> Event:
    parts = [types.Part(text=text)] if text else []
    parts += [
        types.Part(function_call=types.FunctionCall(name=name, args=args, id=call_id))
        for call_id, name, args in calls
    ]
    return Event(author="agent", content=types.Content(role="model", parts=parts))


def _answer(step: Step) -> Event:
    """The answer as ADK records it: a dict, or ``{"result": ...}`` around anything else."""
    response = step.response if isinstance(step.response, dict) else {"result": step.response}
    return function_response_event("agent", step.name, response, call_id=step.call_id)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def read(path: Path) -> list[Conversation]:
    """The conversations of a dataset file or folder (tau-bench's JSON, Taskmaster-4's)."""
    if path.is_dir():
        if (path / "gpt-4o-airline.json").exists() or (path / "data_00.json").exists():
            files = sorted(path.glob("gpt-4o-airline.json")) + sorted(path.glob("data_*.json"))
        else:
            files = sorted(path.glob("*/gpt-4o-airline.json")) + sorted(path.glob("*/data_*.json"))
        return [c for file in files for c in read(file)]
    data = json.loads(path.read_text())
    if data and isinstance(data[0], dict) and "traj" in data[0]:
        return [_tau(item) for item in data]
    return [_taskmaster(item) for item in data]


def _tau(item: dict[str, Any]) -> Conversation:
    steps = []
    for message in item["traj"]:
        role = message["role"]
        at = len(steps)
        if role == "user":
            steps.append(Step("user", message.get("content") or "", at=at))
        elif role == "assistant":
            calls = [
                (c["id"], c["function"]["name"], _json(c["function"]["arguments"]) or {})
                for c in message.get("tool_calls") or []
            ]
            steps.append(Step("agent", message.get("content") or "", at=at, calls=calls))
        elif role == "tool":
            steps.append(
                Step(
                    "tool",
                    call_id=message["tool_call_id"],
                    name=message["name"],
                    response=_json(message["content"]),
                )
            )
        else:
            steps.append(Step("system"))  # kept so indexes stay those of `traj`
    task = f"tau-airline/{item['task_id']}"
    return Conversation(f"{task}.{item['trial']}", "tau-airline", task, steps)


def _taskmaster(item: dict[str, Any]) -> Conversation:
    steps: list[Step] = []
    for utterance in item["utterances"]:
        kind = "user" if utterance["speaker"] == "user" else "agent"
        steps.append(Step(kind, utterance["text"], at=utterance["index"]))
        notes = {(a["context"], a["name"]): a["value"] for a in utterance["annotations"]}
        calls = sorted(
            {ctx.rsplit("_", 1)[1] for ctx, name in notes if name == "api_call"}, key=int
        )
        for n in calls:
            name = notes[(f"api_call_{n}", "api_call")]
            args = _json(notes.get((f"api_call_{n}", "request"), "{}"))
            call_id = f"api_{n}"
            call = (call_id, name, args if isinstance(args, dict) else {})
            steps.append(Step("agent", calls=[call]))  # its calls before its reply
            response = _json(notes.get((f"api_response_{n}", "response"), "null"))
            steps.append(Step("tool", call_id=call_id, name=name, response=response))
    conversation = f"tm4/{item['conversation_id']}"
    return Conversation(conversation, "tm4", conversation, steps)


CLAIM_LIKE = re.compile(
    r"\b(has|have|had)\s+(\w+\s+){0,2}been\b"
    r"|\b(i|we)('ve|\s+have|\s+had)?\s+(\w+\s+)?\w+(ed|ent|ade|ut|aid|ought)\b"
    r"|\bsuccessfully\b|\b(is|are)\s+(now|all|already)\s+\w+|\bdone\b|\ball set\b",
    re.IGNORECASE,
)
"""Wording that may claim an action, any verb (broader than the metric's rules)."""


READS = ("get_", "search_", "list_", "show_", "calculate", "think")
"""Tool names that only read (for the sample's strata, not the metric)."""


def acted(conversation: Conversation, index: int) -> bool:
    """Whether a tool that does not only read answered without an error in the message's turn.

    The turn: since the user last spoke, and the message's own calls.
    """
    own = {call_id for call_id, _, _ in conversation.steps[index].calls}
    turn = []
    for step in reversed(conversation.steps[:index]):
        if step.kind == "user":
            break
        turn.append(step)
    turn += [s for s in conversation.steps[index + 1 :] if s.kind == "tool" and s.call_id in own]
    return any(
        step.kind == "tool"
        and not step.name.startswith(READS)
        and not (isinstance(step.response, str) and step.response.startswith("Error"))
        for step in turn
    )


def sample(conversations: list[Conversation], seed: int, sizes: list[int]) -> list[str]:
    """Seeded message ids to label, per dataset, from four strata in turn.

    `sizes`: how many messages after tool calls, of the rest, then among the
    messages not drawn yet whose wording may claim an action (`CLAIM_LIKE`),
    then among those with such wording in a turn where no acting tool answered
    without an error (`acted`): unbacked claims are rare, and a person's label,
    not these patterns, says which are claims.
    """
    ids = []
    for dataset in sorted({c.dataset for c in conversations}):
        pools: dict[str, list[str]] = {"after": [], "other": [], "wording": [], "no_act": []}
        for conversation in (c for c in conversations if c.dataset == dataset):
            for index, step in conversation.messages():
                at = f"{conversation.id}#{step.at}"
                pools["after" if conversation.after_call(index) else "other"].append(at)
                if CLAIM_LIKE.search(step.text):
                    pools["wording"].append(at)
                    if not acted(conversation, index):
                        pools["no_act"].append(at)
        draw = random.Random(f"{seed}/{dataset}")
        drawn: list[str] = []
        for pool, size in zip(("after", "other", "wording", "no_act"), sizes, strict=False):
            rest = [at for at in pools[pool] if at not in set(drawn)]
            drawn += draw.sample(rest, min(size, len(rest)))
        ids += drawn
    return ids
