"""Redaction measured on real conversations: recall on made-up values, false positives on real text.

Three public datasets of task dialogues between people (fetched beside each
other in one folder, never committed):

* ``taskmaster4/`` (google-research-datasets/Taskmaster, TM-4-2024: coffee orders),
* ``sgd/`` (google-research-datasets/dstc8-schema-guided-dialogue: 20 domains),
* ``tau-bench/gpt-4o-airline.json`` (sierra-research/tau-bench: an airline agent).

**Recall.** For each kind, ``--per-kind`` real user turns are drawn (seeded) and a
made-up value of that kind is put in (`_redaction_values`: a sentence added to
the turn, an answer to the agent's question in the message before, or a value
split over two messages). The conversation (the agent's message before, the
user's) is redacted as `redact_session` redacts a stored one, and the value
counts as found when none of its words or digit groups is left in the user's
messages (a part left over is a miss), by a marker of any kind ("kind right"
counts those of the expected kind too).

**Real values.** SGD marks the values in its turns (slots): the phone numbers and
street addresses that people and agents wrote, and the names of the people money
is sent to or events are shared with. Their recall is measured on the real
turns as they are.

**False positives.** Every turn (both sides) of the three datasets, as written,
is redacted dialogue by dialogue, and the ordinary tokens in it (times, dates,
prices, postcodes, other numbers: found by patterns, and SGD's own time, date
and price slots) are counted, with those redaction touched (the token no longer
whole in the text). A token inside a value SGD marks as a phone number or an
address is not an ordinary token. Touched tokens are listed with their turn.

    python bench/redaction_recall.py /path/to/datasets --seed 2 --json out.json

Writes the figures as JSON (``--json``) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _common import machine, write_result
from _redaction_values import KINDS, Insertion, draw
from google.adk.events import Event
from google.adk.sessions import Session

from adk_eval._sources._redact._redactor import Redactor, redact_session
from adk_eval._statistics import wilson
from adk_eval.testing import text_event, user_event

WHERE = (
    "needs the datasets folder: taskmaster4/ (github.com/google-research-datasets/Taskmaster, "
    "TM-4-2024/data), sgd/ (github.com/google-research-datasets/dstc8-schema-guided-dialogue) "
    "and tau-bench/gpt-4o-airline.json (github.com/sierra-research/tau-bench, "
    "historical_trajectories)"
)
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
SGD_PERSONAL = {"phone_number": "phone", "street_address": "address", "address": "address"}
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


def _session(agent: str, user: tuple[str, ...]) -> Session:
    events: list[Event] = [text_event("agent", agent)] if agent else []
    events += [user_event(text) for text in user]
    return Session(id="s", app_name="bench", user_id="u", events=events)


def _left(value: str, context: str, texts: list[str]) -> list[str]:
    """The words of `value` still in `texts` more often than `context` has them."""
    seen = Counter(w.lower() for t in texts for w in WORD.findall(MARKER.sub(" ", t)))
    before = Counter(w.lower() for w in WORD.findall(context))
    return [w for w in dict.fromkeys(WORD.findall(value)) if seen[w.lower()] > before[w.lower()]]


def recall(
    root: Path, redactor: Redactor, seed: int, per_kind: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Each kind's recall on made-up values put into real user turns; and the misses."""
    rng = random.Random(seed)
    turns = [
        (name, text)
        for name, dialogue in dialogues(root)
        for speaker, text, _ in dialogue
        if speaker == "user" and 2 <= len(text.split()) <= 40
    ]
    figures: dict[str, Any] = {}
    misses: list[dict[str, Any]] = []
    for kind in KINDS:
        found = right = 0
        forms: Counter[str] = Counter()
        missed_forms: Counter[str] = Counter()
        for _ in range(per_kind):
            name, turn = rng.choice(turns)
            insertion = draw(kind, rng, turn)
            clean, _ = redact_session(_session(insertion.agent, insertion.user), redactor)
            texts = [e.content.parts[0].text for e in clean.events if e.author == "user"]
            left = _left(insertion.value, insertion.context, texts)
            forms[insertion.form] += 1
            if left:
                missed_forms[insertion.form] += 1
                misses.append(_miss(name, insertion, texts, left))
                continue
            found += 1
            right += any(f"<{kind.upper()}_" in text for text in texts)
        figures[kind] = {
            "n": per_kind,
            "found": found,
            "kind_right": right,
            "recall": wilson(found, per_kind).to_dict(),
            "forms": dict(forms),
            "missed_by_form": dict(missed_forms),
        }
    return figures, misses


def _miss(name: str, insertion: Insertion, texts: list[str], left: list[str]) -> dict[str, Any]:
    return {
        "dialogue": name,
        "kind": insertion.kind,
        "form": insertion.form,
        "value": insertion.value,
        "agent": insertion.agent,
        "redacted": texts,
        "left": left,
    }


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
        for (_, text, slots), event in zip(turns, clean.events, strict=True):
            after = event.content.parts[0].text
            if after == text and not slots:
                tokens.update(_ordinary(text, slots)[1])
                continue
            spans, classes = _ordinary(text, slots)
            tokens.update(classes)
            for (start, end), cls in zip(spans, classes, strict=True):
                if after != text and not _whole(text[start:end], text, after):
                    touched[cls] += 1
                    examples.append({"dialogue": name, "class": cls, "token": text[start:end]})
            _real_values(text, after, slots, personal, personal_found, personal_missed, name)
    return {
        "dialogues": count,
        "ordinary_tokens": dict(tokens),
        "touched": dict(touched),
        "touched_examples": examples[:200],
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


def _whole(token: str, before: str, after: str) -> bool:
    """Whether `token` is still in the redacted text as often as it was."""
    return after.count(token) >= before.count(token)


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
        if not _left(value, text.replace(value, " "), [after]):
            found[kind] += 1
        elif len(missed) < 100:
            missed.append({"dialogue": name, "kind": kind, "value": value, "redacted": after})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", type=Path)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--per-kind", type=int, default=200)
    parser.add_argument("--dialogues", type=int, default=None, help="real text: the first N")
    parser.add_argument("--json", default="bench/results/redaction_recall.json")
    args = parser.parse_args()
    needed = [args.datasets / p for p in ("taskmaster4", "sgd", "tau-bench/gpt-4o-airline.json")]
    if not all(p.exists() for p in needed):
        print(f"{args.datasets}: {WHERE}", file=sys.stderr)
        return 2
    redactor = Redactor()
    started = time.perf_counter()
    figures, misses = recall(args.datasets, redactor, args.seed, args.per_kind)
    real = real_text(args.datasets, redactor, args.dialogues)
    result = {
        "machine": machine(),
        "seed": args.seed,
        "redactor": repr(redactor),
        "recall": figures,
        "misses": misses,
        "real_text": real,
        "seconds": round(time.perf_counter() - started, 1),
    }
    print(f"{'kind':<11} {'found':>9} {'recall [95% CI]':>22}  missed by form")
    for kind, row in figures.items():
        r = row["recall"]
        interval = f"{r['estimate']:.2f} [{r['low']:.2f}, {r['high']:.2f}]"
        print(f"{kind:<11} {row['found']:>4}/{row['n']:<4} {interval:>22}  {row['missed_by_form']}")
    print(f"real text: {real['dialogues']} dialogues, redacted {real['redacted_by_kind']}")
    for cls, count in real["ordinary_tokens"].items():
        print(f"  {cls:<9} {count:>7} tokens, {real['touched'].get(cls, 0)} touched")
    for kind, row in real["sgd_marked_values"].items():
        print(f"  SGD's marked {kind}: {row['found']}/{row['n']}")
    write_result(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
