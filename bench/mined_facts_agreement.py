"""Scenario mining's facts against a person's reading of real task dialogues.

    python bench/mined_facts_agreement.py DATASET_PATH \
        --labels bench/labels/mined_facts.json --json out.json

DATASET_PATH holds ``taskmaster4/`` and ``sgd/`` (see `_task_dialogues`). Each
labelled dialogue is rebuilt as a stored session, mined (`adk_eval.realism.mine_session`)
and its facts compared with the person's, message by message: a fact the rule found
that the person marked too is a true positive. Precision and recall of facts, and of
facts with the right *asked* / *volunteered* mark, with 95 % Wilson intervals, on the
development part, the held-out part (the published figure) and both; then the
disagreements.

Runs offline, in seconds. Without the datasets it says in one line how to get them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from google.adk.sessions import Session

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_result
from _task_dialogues import events, labelled, load

from adk_eval._statistics import wilson
from adk_eval.realism._mine import mine_session

Label = dict[str, Any]


def _share(hits: int, n: int) -> dict[str, Any]:
    interval = wilson(hits, n)
    return {
        "hits": hits,
        "n": n,
        "value": round(interval.estimate, 3),
        "low": round(interval.low, 3),
        "high": round(interval.high, 3),
    }


def _found(root: Path, label: Label) -> dict[int, bool]:
    """The rule's facts of one dialogue: message number -> asked."""
    session = Session(
        id="d", app_name="bench", user_id="u", events=events(load(root, label["dialogue"]))
    )
    mined = mine_session(session)
    return {fact.turn: fact.asked for fact in mined.facts} if mined else {}


def measure(root: Path, labels: list[Label]) -> dict[str, Any]:
    """Precision and recall of facts per part, and the disagreements."""
    counts: dict[str, dict[str, int]] = {}
    misses: list[dict[str, Any]] = []
    for label in labels:
        mine = _found(root, label)
        theirs = {turn: True for turn in label["asked"]} | {
            turn: False for turn in label["volunteered"]
        }
        both = mine.keys() & theirs.keys()
        marked = sum(mine[turn] == theirs[turn] for turn in both)
        for part in (label["split"], "all"):
            tally = counts.setdefault(part, {"tp": 0, "found": 0, "labelled": 0, "marked": 0})
            tally["tp"] += len(both)
            tally["found"] += len(mine)
            tally["labelled"] += len(theirs)
            tally["marked"] += marked
        for turn in sorted(mine.keys() ^ theirs.keys()):
            kind = "not a fact by hand" if turn in mine else "missed"
            misses.append(
                {
                    "dialogue": label["dialogue"],
                    "split": label["split"],
                    "message": turn,
                    "miss": kind,
                }
            )
    table = {
        part: {
            "precision": _share(c["tp"], c["found"]),
            "recall": _share(c["tp"], c["labelled"]),
            "asked_mark_agreement": _share(c["marked"], c["tp"]),
        }
        for part, c in counts.items()
    }
    return {"facts": table, "disagreements": misses}


def _cell(row: dict[str, Any]) -> str:
    return f"{row['hits']}/{row['n']} {row['value']:.0%} [{row['low']:.0%}, {row['high']:.0%}]"


def _print(result: dict[str, Any]) -> None:
    table = result["facts"]
    print(f"{'facts':<22} {'held out':>22} {'development':>22} {'all':>22}")
    for name in ("precision", "recall", "asked_mark_agreement"):
        cells = [
            _cell(table[part][name]) if part in table else "-"
            for part in ("held_out", "dev", "all")
        ]
        print(f"{name:<22} {cells[0]:>22} {cells[1]:>22} {cells[2]:>22}")
    print("disagreements:")
    for miss in result["disagreements"]:
        where = f"{miss['split']:<8} message {miss['message']:<3}"
        print(f"  {where} {miss['miss']:<20} {miss['dialogue']}")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args, labels = labelled(__doc__, "mined_facts", argv)
    result = {"labels": str(args.labels), "dialogues": len(labels), **measure(args.dataset, labels)}
    _print(result)
    write_result(args.json, result)
    return result


if __name__ == "__main__":
    main()
