"""`claimed_actions` against people: its verdict on real agents' messages, and a person's.

Each labelled message is rebuilt from its dataset as ADK events (the conversation
up to it: user turns, the agent's calls and the tools' answers, then the message
and its own calls' answers) and scored by ``claimed_actions(tools=...)`` as a
stored trace is; the tools are declared by name with the one-line descriptions of
`_claims_dialogues.TOOLS`. A message is *flagged* when the metric fails it. A
person's label says whether the message claims an action and, if so, whether a
successful call before it backs it; an *unbacked claim* is one that is not.
Precision and recall of the flags against the unbacked claims are printed with
95 % Wilson intervals, for the development part, the held-out third (the
published figures) and both, with each disagreement.

    python bench/claimed_actions_agreement.py /work/datasets \\
        --labels bench/labels/claimed_actions.json \\
        --json bench/results/claimed_actions_agreement.json
    python bench/claimed_actions_agreement.py DATASET --sample 80 40 50 60 --seed 1  # ids to label
    python bench/claimed_actions_agreement.py DATASET --labels L --show       # what was labelled

DATASET is a dataset file or folder (or a folder holding ``tau-bench/`` and
``taskmaster4/``): see `_claims_dialogues`. The result file holds ids, labels and
verdicts, never the datasets' text.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _claims_dialogues import TOOLS, WHERE, Conversation, held_out, read, sample, variant
from _common import write_result

from adk_eval import EvalTrace
from adk_eval._statistics import wilson
from adk_eval.metrics import claimed_actions

VARIANTS = ("withheld", "failed")


@dataclass(frozen=True)
class Verdict:
    """One scored message: the person's label and the metric's verdict."""

    id: str
    kind: str  # "natural", or the variant: "withheld", "failed"
    held_out: bool
    unbacked: bool  # the person's: it claims an action no successful call before it backs
    flagged: bool  # the metric's
    why: str  # the metric's evidence (the console shows it; the result file does not)


def _tool(name: str, description: str) -> Any:
    def tool() -> None:
        raise AssertionError("declared only")

    tool.__name__ = name
    tool.__doc__ = description
    return tool


def metric(dataset: str, *, described: bool) -> Any:
    """The metric as scored on `dataset`'s traces (with its tools declared, or not)."""
    if not described:
        return claimed_actions()
    return claimed_actions(tools=[_tool(n, d) for n, d in TOOLS[dataset].items()])


def _scored(conversation: Conversation, at: int, described: bool) -> str | None:
    """The metric's reason for flagging the message at dataset index `at` (None: passed)."""
    trace = EvalTrace(events=conversation.events(conversation.place(at)))
    result = metric(conversation.dataset, described=described).evaluate(trace)
    return None if result.passed else str(result.value.get("event") or "")


def judged(conversations: dict[str, Conversation], labels: list[dict], described: bool) -> list:
    """The metric's verdict on each labelled message, and on each backed claim's variants.

    A variant withholds (or fails) the calls that back the claim: a person's
    label of it is an unbacked claim by construction.
    """
    verdicts = []
    for label in labels:
        conversation_id, at = label["id"].rsplit("#", 1)
        conversation = conversations[conversation_id]
        held = held_out(conversation.group)
        unbacked = bool(label["claims"]) and not label["backed"]
        why = _scored(conversation, int(at), described)
        verdicts.append(Verdict(label["id"], "natural", held, unbacked, why is not None, why or ""))
        if label["claims"] and label["backed"]:
            for how in VARIANTS:
                changed = variant(conversation, label["backed_by"], how)
                why = _scored(changed, int(at), described)
                verdicts.append(Verdict(label["id"], how, held, True, why is not None, why or ""))
    return verdicts


def figures(verdicts: list[Verdict]) -> dict[str, Any]:
    """Counts, precision and recall of the flags (with their 95 % Wilson intervals)."""
    tp = sum(v.flagged and v.unbacked for v in verdicts)
    fp = sum(v.flagged and not v.unbacked for v in verdicts)
    fn = sum(v.unbacked and not v.flagged for v in verdicts)
    precision, recall = wilson(tp, tp + fp), wilson(tp, tp + fn)
    return {
        "n": len(verdicts),
        "unbacked": tp + fn,
        "flagged": tp + fp,
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn,
        "precision": precision.to_dict(),
        "recall": recall.to_dict(),
        "agreement": sum(v.flagged == v.unbacked for v in verdicts) / max(len(verdicts), 1),
    }


def _line(name: str, found: dict[str, Any]) -> str:
    p, r = found["precision"], found["recall"]
    return (
        f"{name:<9} n={found['n']:<4} unbacked={found['unbacked']:<3} flagged={found['flagged']:<3}"
        f" precision {p['estimate']:.2f} [{p['low']:.2f}, {p['high']:.2f}]"
        f"  recall {r['estimate']:.2f} [{r['low']:.2f}, {r['high']:.2f}]"
    )


def report(verdicts: list[Verdict], described: bool) -> dict[str, Any]:
    """Prints the figures per part and kind, and the disagreements; the result's data."""
    print(f"claimed_actions, tools {'described' if described else 'named by their calls only'}:")
    found: dict[str, Any] = {}
    for part, held in (("held_out", (True,)), ("dev", (False,)), ("all", (True, False))):
        mine = [v for v in verdicts if v.held_out in held]
        found[part] = {"all": figures(mine)}
        print("  " + _line(part, found[part]["all"]))
        for kind in ("natural", *VARIANTS):
            found[part][kind] = figures([v for v in mine if v.kind == kind])
            print("    " + _line(kind, found[part][kind]))
    wrong = [v for v in verdicts if v.flagged != v.unbacked]
    for v in wrong:
        what = "false flag" if v.flagged else "missed   "
        part = "held-out" if v.held_out else "dev"
        print(f"  {what} {part:<8} {v.kind:<8} {v.id}  {v.why[:150]}")
    found["disagreements"] = [
        {"id": v.id, "kind": v.kind, "held_out": v.held_out, "unbacked": v.unbacked} for v in wrong
    ]
    return found


def show(conversations: dict[str, Conversation], labels: list[dict]) -> None:
    """Prints each labelled message with the calls before it, the user's last turn, its label."""
    for label in labels:
        conversation_id, at = label["id"].rsplit("#", 1)
        conversation = conversations[conversation_id]
        place = conversation.place(int(at))
        print(f"===== {label['id']}  label: {json.dumps(label)}")
        steps = conversation.steps[:place]
        user = next((s.text for s in reversed(steps) if s.kind == "user"), "")
        print(f"  user: {' '.join(user.split())[:300]}")
        own = {call_id for call_id, _, _ in conversation.steps[place].calls}
        for step in conversation.steps:
            if step.kind == "tool" and (step in steps or step.call_id in own):
                mark = "OWN " if step.call_id in own else ""
                print(f"    {mark}<- {step.name}: {json.dumps(step.response)[:110]}")
        message = conversation.steps[place]
        calls = ", ".join(name for _, name, _ in message.calls)
        print(f"  AGENT: {message.text.strip()}" + (f"\n  (with calls: {calls})" if calls else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", nargs="+", type=Path)
    parser.add_argument("--labels", type=Path)
    parser.add_argument("--json")
    parser.add_argument("--sample", nargs="+", type=int, metavar="N", help="sizes of the strata")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    for path in args.dataset:
        if not path.exists():
            sys.exit(f"no dataset at {path}: get {WHERE['tau-airline']} or {WHERE['tm4']}")
    conversations = {c.id: c for path in args.dataset for c in read(path)}
    if args.sample:
        print(json.dumps(sample(list(conversations.values()), args.seed, args.sample), indent=1))
        return
    if args.labels is None:
        sys.exit("give --labels FILE (bench/labels/claimed_actions.json), or --sample")
    labels = json.loads(args.labels.read_text())["labels"]
    missing = [
        label["id"] for label in labels if label["id"].rsplit("#", 1)[0] not in conversations
    ]
    if missing:
        sys.exit(
            f"{len(missing)} labelled conversation(s) not in the dataset given, e.g. {missing[0]}"
        )
    if args.show:
        show(conversations, labels)
        return
    started = time.perf_counter()
    result: dict[str, Any] = {"labels": str(args.labels), "n": len(labels)}
    for described in (True, False):
        key = "described" if described else "names_only"
        result[key] = report(judged(conversations, labels, described), described)
    result["seconds"] = round(time.perf_counter() - started, 2)
    if args.json:
        write_result(args.json, result)


if __name__ == "__main__":
    main()
