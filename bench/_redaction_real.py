"""Real dialogues for `redaction_recall.py`: the datasets read, and what redaction does to them.

* `dialogues`: every dialogue of Taskmaster-4, SGD and tau-bench's airline agent,
  as ``(speaker, text, SGD's slots)`` turns.
* `real_text`: false positives on the text as written (ordinary tokens touched),
  and recall on the phone numbers, street addresses and names SGD marks.
* `sample` and `precision`: what redaction replaces in real text, drawn to be
  labelled by hand (``bench/labels/redaction_precision.json``: dialogue ids,
  turn, span and the label, never the text), and the precision per kind those
  labels give.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from google.adk.events import Event
from google.adk.sessions import Session

from adk_eval._sources._redact._redactor import Redactor, redact_session
from adk_eval._statistics import wilson
from adk_eval.testing import text_event, user_event

MARKER = re.compile(r"<[A-Z][A-Z0-9_]*_\d+>")


WORD = re.compile(r"[A-Za-z0-9]+")


_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"


ORDINARY = {
    "time": re.compile(
        r"\b\d{1,2}(?::\d{2})?\s?(?:[ap]\.?m\.?)(?![a-z])|\b\d{1,2}:\d{2}(?::\d{2})?\b", re.I
    ),
    "date": re.compile(
        rf"\b\d{{1,4}}[/.-]\d{{1,2}}[/.-]\d{{2,4}}\b|\b\d{{1,2}}/\d{{1,2}}\b"
        rf"|\b{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?(?:,? \d{{4}})?\b"
        rf"|\b\d{{1,2}}(?:st|nd|rd|th)?(?: of)? {_MONTH}(?: \d{{4}})?"
        r"|\b\d{1,2}(?:st|nd|rd|th)\b",
        re.I,
    ),
    "price": re.compile(
        r"[$€£]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)? ?(?:dollars|bucks|usd|euros?)\b", re.I
    ),
    "postcode": re.compile(r"\b\d{5}(?:-\d{4})?\b|\b[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}\b", re.ASCII),
    "number": re.compile(r"(?<![\w$€£.,:/-])\d+(?:[.,]\d+)*(?![\w:/-])"),
}
"""Ordinary tokens by class; a token is of the first class that finds it."""


SGD_ORDINARY = {
    "time": ("time",),
    "date": ("date",),
    "price": ("price", "fare", "amount", "total", "rent", "balance"),
}


_ADDRESS_SLOTS = (
    "address street_address venue_address address_of_location destination "
    "pickup_location event_location location venue from_station to_station"
)


SGD_PERSONAL = {"phone_number": "phone"} | {slot: "address" for slot in _ADDRESS_SLOTS.split()}
"""SGD's slots that hold phone numbers and street addresses (a shop's or a person's)."""


LABELS = Path(__file__).parent / "labels" / "redaction_precision.json"


SGD_NAMES = ("receiver", "recipient_name", "contact_name")


def dialogues(root: Path) -> Iterator[tuple[str, list[tuple[str, str, list[dict[str, Any]]]]]]:
    """Every dialogue: its id and its turns as ``(speaker, text, slots)``."""
    for path in sorted((root / "taskmaster4").glob("data_*.json")):
        for item in json.loads(path.read_text()):
            turns = [(u["speaker"], u["text"], []) for u in item["utterances"]]
            yield f"tm4/{item['conversation_id']}", turns
    for path in sorted((root / "sgd").glob("*/dialogues_*.json")):
        for item in json.loads(path.read_text()):
            turns = [
                (
                    turn["speaker"].lower(),
                    turn["utterance"],
                    [slot for frame in turn["frames"] for slot in frame["slots"]],
                )
                for turn in item["turns"]
            ]
            yield f"sgd/{path.parent.name}/{item['dialogue_id']}", turns
    tau = json.loads((root / "tau-bench" / "gpt-4o-airline.json").read_text())
    for index, item in enumerate(tau):
        turns = [
            (m["role"], m["content"], [])
            for m in item["traj"]
            if m["role"] in ("user", "assistant") and isinstance(m.get("content"), str)
        ]
        yield f"tau/{index}/{item.get('task_id', index)}", turns


def session_of(agent: str, user: tuple[str, ...]) -> Session:
    events: list[Event] = [text_event("agent", agent)] if agent else []
    events += [user_event(text) for text in user]
    return Session(id="s", app_name="bench", user_id="u", events=events)


def left_over(value: str, context: str, texts: list[str]) -> list[str]:
    """The words of `value` still in `texts` more often than `context` has them."""
    seen = Counter(w.lower() for t in texts for w in WORD.findall(MARKER.sub(" ", t)))
    before = Counter(w.lower() for w in WORD.findall(context))
    return [w for w in dict.fromkeys(WORD.findall(value)) if seen[w.lower()] > before[w.lower()]]


def real_text(root: Path, redactor: Redactor, limit: int | None) -> dict[str, Any]:
    """False positives on the datasets as written, and recall on SGD's marked values."""
    tokens: Counter[str] = Counter()
    touched: Counter[str] = Counter()
    examples: list[dict[str, Any]] = []
    personal: Counter[str] = Counter()
    personal_found: Counter[str] = Counter()
    personal_missed: list[dict[str, Any]] = []
    redacted_kinds: Counter[str] = Counter()
    count = 0
    for name, turns in dialogues(root):
        if limit is not None and count >= limit:
            break
        count += 1
        events = [(user_event if s == "user" else _agent)(text) for s, text, _ in turns]
        session = Session(id="s", app_name="bench", user_id="u", events=events)
        clean, counts = redact_session(session, redactor)
        redacted_kinds.update(counts.occurrences)
        before = ""
        for (_, text, slots), event in zip(turns, clean.events, strict=True):
            after = event.content.parts[0].text
            spans, classes = _ordinary(text, slots)
            tokens.update(classes)
            if after != text:
                replaced = _replaced(redactor, text, before)
                for (start, end), cls in zip(spans, classes, strict=True):
                    hit = [r for r in replaced if r.start < end and start < r.end]
                    if hit:
                        touched[cls] += 1
                        examples.append(_touched(name, cls, text, (start, end), hit[0]))
            _real_values(text, after, slots, personal, personal_found, personal_missed, name)
            before = text
    return {
        "dialogues": count,
        "ordinary_tokens": dict(tokens),
        "touched": dict(touched),
        "touched_examples": examples[:1000],
        "redacted_by_kind": dict(redacted_kinds),
        "sgd_marked_values": {
            kind: {
                "n": personal[kind],
                "found": personal_found[kind],
                "recall": wilson(personal_found[kind], personal[kind]).to_dict(),
            }
            for kind in personal
        },
        "sgd_missed_examples": personal_missed[:100],
    }


def _agent(text: str) -> Event:
    return text_event("agent", text)


def _ordinary(text: str, slots: list[dict[str, Any]]) -> tuple[list[tuple[int, int]], list[str]]:
    """The ordinary tokens of a turn (spans and classes), outside phone and address slots."""
    blocked = [
        (s["start"], s["exclusive_end"])
        for s in slots
        if s["slot"] in SGD_PERSONAL or s["slot"] in SGD_NAMES
    ]
    spans: list[tuple[int, int]] = []
    classes: list[str] = []
    for s in slots:
        for cls, words in SGD_ORDINARY.items():
            if any(w in s["slot"] for w in words) and any(c.isdigit() for c in _at(text, s)):
                spans.append((s["start"], s["exclusive_end"]))
                classes.append(cls)
                break
    for cls, pattern in ORDINARY.items():
        for m in pattern.finditer(text):
            inside = any(a <= m.start() < b or a < m.end() <= b for a, b in blocked + spans)
            if not inside:
                spans.append(m.span())
                classes.append(cls)
    return spans, classes


def _at(text: str, slot: dict[str, Any]) -> str:
    return text[slot["start"] : slot["exclusive_end"]]


def _replaced(redactor: Redactor, text: str, before: str) -> list[Any]:
    """What redaction replaces in a turn (read with the turn before, where it can be)."""
    try:
        return list(redactor.find(text, before))
    except TypeError:  # a redactor of before the message before was read
        return list(redactor.find(text))  # type: ignore[call-arg]


def _touched(name: str, cls: str, text: str, token: tuple[int, int], span: Any) -> dict[str, Any]:
    return {
        "dialogue": name,
        "class": cls,
        "token": text[token[0] : token[1]],
        "kind": span.kind,
        "replaced": text[span.start : span.end],
    }


def _real_values(
    text: str,
    after: str,
    slots: list[dict[str, Any]],
    n: Counter[str],
    found: Counter[str],
    missed: list[dict[str, Any]],
    name: str,
) -> None:
    for slot in slots:
        kind = SGD_PERSONAL.get(slot["slot"]) or ("name" if slot["slot"] in SGD_NAMES else None)
        value = _at(text, slot)
        if kind is None or (kind != "name" and not any(c.isdigit() for c in value)):
            continue  # a place's name in an address slot is no street address
        n[kind] += 1
        if not left_over(value, text.replace(value, " "), [after]):
            found[kind] += 1
        elif len(missed) < 100:
            missed.append({"dialogue": name, "kind": kind, "value": value, "redacted": after})


def precision(root: Path, redactor: Redactor, labels: Path) -> dict[str, Any]:
    """Precision per kind on real text: replaced values a person labelled personal or not."""
    wanted = json.loads(labels.read_text())["labels"]
    by_dialogue = {label["dialogue"] for label in wanted}
    turns_of = {name: turns for name, turns in dialogues(root) if name in by_dialogue}
    kept: Counter[str] = Counter()
    right: Counter[str] = Counter()
    wrong: list[dict[str, Any]] = []
    for label in wanted:
        turns = turns_of[label["dialogue"]]
        before = turns[label["turn"] - 1][1] if label["turn"] else ""
        text = turns[label["turn"]][1]
        spans = {(s.start, s.end, s.kind) for s in redactor.find(text, before)}
        if (label["start"], label["end"], label["kind"]) not in spans:
            continue  # no longer replaced
        kept[label["kind"]] += 1
        right[label["kind"]] += label["right"]
        if not label["right"]:
            wrong.append({**label, "value": text[label["start"] : label["end"]]})
    return {
        "per_kind": {
            k: {"n": kept[k], "right": right[k], "precision": wilson(right[k], kept[k]).to_dict()}
            for k in sorted(kept)
        },
        "wrong": wrong,
    }


def sample(root: Path, redactor: Redactor, seed: int, per_kind: int) -> list[dict[str, Any]]:
    """A seeded sample of what redaction replaces in real text, per kind, to label by hand."""
    found: dict[str, list[dict[str, Any]]] = {}
    for name, turns in dialogues(root):
        for index, (speaker, text, _) in enumerate(turns):
            before = turns[index - 1][1] if index else ""
            for span in redactor.find(text, before):
                found.setdefault(span.kind, []).append(
                    {
                        "dialogue": name,
                        "turn": index,
                        "speaker": speaker,
                        "kind": span.kind,
                        "start": span.start,
                        "end": span.end,
                        "shown": f"{text[max(span.start - 60, 0) : span.start]}"
                        f"[[{text[span.start : span.end]}]]{text[span.end : span.end + 40]}",
                    }
                )
    rng = random.Random(seed)
    return [
        x
        for kind in sorted(found)
        for x in rng.sample(found[kind], min(per_kind, len(found[kind])))
    ]
