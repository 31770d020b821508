"""The behaviour features of a user side against a person's reading of real task dialogues.

    python bench/user_behaviour_agreement.py DATASET_PATH \
        --labels bench/labels/user_behaviour.json --json out.json

DATASET_PATH holds ``taskmaster4/`` and ``sgd/`` (see `_task_dialogues`). Each
labelled dialogue is rebuilt as a stored session's events, measured by
`adk_eval.realism.features` (the outcome unknown, as for a stored session), and
compared with the labels, feature by feature: the share of dialogues where the
rule's value equals the person's (counts exactly, words per message within 5 %),
with its 95 % Wilson interval, on the development part, the held-out part (the
published figure) and both. ``answers_direct`` is the number of the agent's
questions answered directly; ``answers`` is every answer's class at once.

Then calibration on the same dialogues (`adk_eval.realism.calibrate`): the
cooperation it finds against the share of the agent's questions the person read as
answered directly.

Runs offline, in seconds. Without the datasets it says in one line how to get them.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.adk.events import Event
from google.adk.sessions import Session

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_result
from _task_dialogues import events, labelled, load

from adk_eval._statistics import wilson
from adk_eval.realism import UserBehaviour, calibrate, features

Label = dict[str, Any]


def _exact(name: str) -> Callable[[UserBehaviour, Label], tuple[Any, Any, bool]]:
    def compare(found: UserBehaviour, label: Label) -> tuple[Any, Any, bool]:
        mine, theirs = getattr(found, name), label[name]
        return mine, theirs, mine == theirs

    return compare


def _words(found: UserBehaviour, label: Label) -> tuple[Any, Any, bool]:
    mine, theirs = round(found.words_per_message, 2), label["words_per_message"]
    return mine, theirs, abs(mine - theirs) <= 0.05 * theirs


def _direct(found: UserBehaviour, label: Label) -> tuple[Any, Any, bool]:
    theirs = label["answers"].count("direct")
    return found.answers_direct, theirs, found.answers_direct == theirs


def _answers(found: UserBehaviour, label: Label) -> tuple[Any, Any, bool]:
    kinds = ("direct", "evasive", "refusing", "none")
    mine = [getattr(found, f"answers_{kind}") for kind in kinds]
    theirs = [label["answers"].count(kind) for kind in kinds]
    return mine, theirs, mine == theirs


def _volunteered(found: UserBehaviour, label: Label) -> tuple[Any, Any, bool]:
    theirs = sum(label["volunteered"])
    return found.volunteered, theirs, found.volunteered == theirs


FEATURES: dict[str, Callable[[UserBehaviour, Label], tuple[Any, Any, bool]]] = {
    "turns": _exact("turns"),
    "words_per_message": _words,
    "questions_asked": _exact("questions_asked"),
    "agent_questions": _exact("agent_questions"),
    "answers_direct": _direct,
    "answers": _answers,
    "corrections": _exact("corrections"),
    "volunteered": _volunteered,
    "topic_changes": _exact("topic_changes"),
    "repetitions": _exact("repetitions"),
    "abandoned": _exact("abandoned"),
}
"""Each feature compared, and how: the rule's value, the person's, whether they agree."""


def _share(agreed: int, n: int) -> dict[str, Any]:
    interval = wilson(agreed, n)
    return {
        "agreed": agreed,
        "n": n,
        "agreement": round(interval.estimate, 3),
        "low": round(interval.low, 3),
        "high": round(interval.high, 3),
    }


def volunteered_per_message(events_: list[Event]) -> list[int]:
    """The rule's volunteered items in each user message (the walk run to each message)."""
    counts, before = [], 0
    for index, event in enumerate(events_):
        if event.author == "user":
            now = features(events_[: index + 1]).volunteered
            counts.append(now - before)
            before = now
    return counts


def _per_message(rule: list[int], person: list[int]) -> tuple[int, int]:
    """Messages where the rule's volunteered count equals the person's, and messages."""
    return sum(a == b for a, b in zip(rule, person, strict=False)), len(person)


def measure(root: Path, labels: list[Label]) -> dict[str, Any]:
    """Every feature's agreement per part, and the disagreements."""
    parts: dict[str, dict[str, list[int]]] = {}
    misses: list[dict[str, Any]] = []
    sessions = []
    extra: dict[str, dict[str, int]] = {}
    for label in labels:
        dialogue = load(root, label["dialogue"])
        found = features(events(dialogue))
        agreed, n = _per_message(volunteered_per_message(events(dialogue)), label["volunteered"])
        for part in (label["split"], "all"):
            tally = extra.setdefault(part, Counter())
            tally["messages_agreed"] += agreed
            tally["messages"] += n
            tally["rule_items"] += found.volunteered
            tally["person_items"] += sum(label["volunteered"])
            tally["questions"] += len(label["answers"])
            tally["rule_direct"] += found.answers_direct
            tally["person_direct"] += label["answers"].count("direct")
        sessions.append(
            Session(id=label["dialogue"], app_name="bench", user_id="u", events=events(dialogue))
        )
        for name, compare in FEATURES.items():
            mine, theirs, same = compare(found, label)
            for part in (label["split"], "all"):
                parts.setdefault(part, {}).setdefault(name, []).append(int(same))
            if not same:
                misses.append(
                    {
                        "dialogue": label["dialogue"],
                        "split": label["split"],
                        "feature": name,
                        "rule": mine,
                        "person": theirs,
                    }
                )
    table = {
        part: {name: _share(sum(marks), len(marks)) for name, marks in names.items()}
        for part, names in parts.items()
    }
    for part, tally in extra.items():
        table[part]["volunteered_per_message"] = _share(tally["messages_agreed"], tally["messages"])
    totals = {part: dict(tally) for part, tally in extra.items()}
    return {
        "agreement": table,
        "totals": totals,
        "disagreements": misses,
        "calibration": _calibration(sessions, labels),
    }


def _calibration(sessions: list[Session], labels: list[Label]) -> dict[str, Any] | None:
    """The cooperation calibration finds on these dialogues, against the person's direct share
    (None: fewer than the 4 dialogues calibration needs)."""
    if len(sessions) < 4:
        return None
    asked = sum(len(label["answers"]) for label in labels)
    direct = sum(label["answers"].count("direct") for label in labels)
    found = calibrate(sessions)
    measured = [features(session.events) for session in sessions]
    asked_rule = sum(m.agent_questions for m in measured)
    direct_rule = sum(m.answers_direct for m in measured)
    return {
        "person_direct_share": round(direct / asked, 3) if asked else None,
        "rule_direct_share": round(direct_rule / asked_rule, 3) if asked_rule else None,
        "calibrated_cooperation": found.best.cooperation,
        "calibrated_volunteering": found.best.volunteering,
        "held_out_distance": round(found.held_out, 3),
    }


def _cell(row: dict[str, Any] | None) -> str:
    if not row:
        return "-"
    return (
        f"{row['agreed']}/{row['n']} {row['agreement']:.0%} [{row['low']:.0%}, {row['high']:.0%}]"
    )


def _print(result: dict[str, Any]) -> None:
    table = result["agreement"]
    print(f"{'feature':<24} {'held out':>22} {'development':>22} {'all':>22}")
    for name in [*FEATURES, "volunteered_per_message"]:
        cells = [_cell(table.get(part, {}).get(name)) for part in ("held_out", "dev", "all")]
        print(f"{name:<24} {cells[0]:>22} {cells[1]:>22} {cells[2]:>22}")
    for part in ("held_out", "dev", "all"):
        if t := result["totals"].get(part):
            print(
                f"{part}: volunteered items {t['rule_items']} by the rules, {t['person_items']} "
                f"by hand; agent questions answered directly {t['rule_direct']} by the rules, "
                f"{t['person_direct']} of {t['questions']} by hand"
            )
    print("disagreements:")
    for miss in result["disagreements"]:
        where = f"{miss['split']:<8} {miss['feature']:<18}"
        rule, person = f"{miss['rule']!s:<14}", f"{miss['person']!s:<14}"
        print(f"  {where} rule {rule} person {person} {miss['dialogue']}")
    c = result["calibration"]
    if c is None:
        print("calibration: not run (it needs at least 4 dialogues)")
        return
    print(
        f"calibration: cooperation {c['calibrated_cooperation']}, volunteering "
        f"{c['calibrated_volunteering']} found for users who answered "
        f"{c['person_direct_share']:.0%} of the agent's questions directly by hand "
        f"({c['rule_direct_share']:.0%} by the rules)"
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args, labels = labelled(__doc__, "user_behaviour", argv)
    result = {"labels": str(args.labels), "dialogues": len(labels), **measure(args.dataset, labels)}
    _print(result)
    write_result(args.json, result)
    return result


if __name__ == "__main__":
    main()
