"""`user_fidelity`'s rules against a person's reading of simulated users' turns.

    python bench/user_fidelity_agreement.py DATASET_PATH \
        --labels bench/labels/user_fidelity.json --json out.json

DATASET_PATH holds ``taskmaster4/`` and ``sgd/`` (see `_task_dialogues`). Each
labelled dialogue is read as a simulated user's turns (`_user_side`): its real user
turns, people's, and one out-of-role variant built from its own words. The rules
(`adk_eval.metrics._fidelity.deterministic_problems`, what runs before any judge) flag
turns; a flag is "out of role". Against the person's labels: precision and recall of
the flags with their 95 % Wilson intervals, on the development part, the held-out part
(the published figure) and both; the recall per kind of variant (what the rules
cannot see is the judge's); and the disagreements.

Runs offline, in seconds. Without the datasets it says in one line how to get them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_result
from _task_dialogues import labelled, load
from _user_side import user_side, variant

from adk_eval._statistics import wilson
from adk_eval.metrics._fidelity import UserTurn, deterministic_problems

Row = dict[str, Any]


def share(hits: int, n: int) -> dict[str, Any]:
    """`hits` of `n`, with its 95 % Wilson interval."""
    interval = wilson(hits, n)
    return {
        "hits": hits,
        "n": n,
        "rate": round(interval.estimate, 3),
        "low": round(interval.low, 3),
        "high": round(interval.high, 3),
    }


def _flags(turns: list[UserTurn]) -> dict[int, str]:
    return {found["turn"]: found["problem"] for found in deterministic_problems(turns)}


def rows_of(root: Path, label: dict[str, Any]) -> list[Row]:
    """Every judged turn of one labelled dialogue: the real ones and the variant."""
    turns = user_side(load(root, label["dialogue"]))
    base = {"dialogue": label["dialogue"], "split": label["split"]}
    flags = _flags(turns)
    rows = [
        {
            **base,
            "turn": t.number,
            "kind": "real",
            "out": t.number in label["real_out_of_role"],
            "flag": flags.get(t.number),
        }
        for t in turns
    ]
    kind, number = label["variant"]["kind"], label["variant"]["turn"]
    changed = variant(turns, kind, number)
    number = 1 if kind == "quit_first" else number
    out = not label["variant"]["in_role"]
    rows.append(
        {**base, "turn": number, "kind": kind, "out": out, "flag": _flags(changed).get(number)}
    )
    return rows


def measure(rows: list[Row]) -> dict[str, Any]:
    """Precision and recall per part, recall per kind, and the disagreements."""
    parts = {}
    for part in ("held_out", "dev", "all"):
        chosen = [r for r in rows if part == "all" or r["split"] == part]
        flagged = [r for r in chosen if r["flag"]]
        out = [r for r in chosen if r["out"]]
        parts[part] = {
            "turns": len(chosen),
            "precision": share(sum(r["out"] for r in flagged), len(flagged)),
            "recall": share(sum(bool(r["flag"]) for r in out), len(out)),
        }
    kinds: dict[str, Any] = {}
    for kind in sorted({r["kind"] for r in rows if r["out"]}):
        for part in ("held_out", "all"):
            out = [
                r for r in rows if r["kind"] == kind and r["out"] and part in ("all", r["split"])
            ]
            kinds.setdefault(kind, {})[part] = share(sum(bool(r["flag"]) for r in out), len(out))
    misses = [
        {k: r[k] for k in ("split", "dialogue", "turn", "kind", "out", "flag")}
        for r in rows
        if bool(r["flag"]) != r["out"]
    ]
    return {"parts": parts, "recall_by_kind": kinds, "disagreements": misses}


def _cell(row: dict[str, Any]) -> str:
    return f"{row['hits']}/{row['n']} {row['rate']:.0%} [{row['low']:.0%}, {row['high']:.0%}]"


def _print(result: dict[str, Any]) -> None:
    for part, row in result["parts"].items():
        print(
            f"{part:<9} {row['turns']:>4} turns  precision {_cell(row['precision']):>22}"
            f"  recall {_cell(row['recall']):>22}"
        )
    print("recall by kind of out-of-role turn (held out, all):")
    for kind, row in result["recall_by_kind"].items():
        print(f"  {kind:<17} {_cell(row['held_out']):>22} {_cell(row['all']):>22}")
    print("disagreements:")
    for miss in result["disagreements"]:
        said = "out of role" if miss["out"] else "in role"
        print(
            f"  {miss['split']:<8} {miss['kind']:<17} turn {miss['turn']:<3} person {said:<11}"
            f" rule {miss['flag'] or '-':<15} {miss['dialogue']}"
        )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args, labels = labelled(__doc__, "user_fidelity", argv)
    rows = [row for label in labels for row in rows_of(args.dataset, label)]
    result = {"labels": str(args.labels), "dialogues": len(labels), **measure(rows)}
    _print(result)
    write_result(args.json, result)
    return result


if __name__ == "__main__":
    main()
