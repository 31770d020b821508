"""Attribution's party against a person's: who a careful reader blames for a run that did not pass.

    python bench/attribution_agreement.py --labels bench/labels/attribution.json --json out.json

Each labelled failure is built as a real run ends (`_failures`: provider errors raised
by LiteLLM, google-genai and httpx themselves, adk_eval's own errors, the metrics'
verdicts), attributed by `adk_eval._result._attribution.attribute`, and compared with
the person's party: the agreement with its 95 % Wilson interval on the development
part, the held-out part (the published figure) and both, Cohen's kappa over the five
parties, each party's precision and recall, and the disagreements.

Needs no dataset; runs offline (its servers are sockets on 127.0.0.1), in seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_result
from _failure_cases import BUILDERS

from adk_eval._result._attribution import PARTIES, attribute
from adk_eval._statistics import wilson


def share(agreed: int, n: int) -> dict[str, Any]:
    """`agreed` of `n`, with its 95 % Wilson interval."""
    interval = wilson(agreed, n)
    return {
        "agreed": agreed,
        "n": n,
        "rate": round(interval.estimate, 3),
        "low": round(interval.low, 3),
        "high": round(interval.high, 3),
    }


def kappa(pairs: list[tuple[str, str]]) -> float | None:
    """Cohen's kappa of (rule, person) parties: agreement beyond what chance gives."""
    n = len(pairs)
    if not n:
        return None
    observed = sum(a == b for a, b in pairs) / n
    rule, person = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(rule[p] * person[p] for p in PARTIES) / (n * n)
    return round((observed - chance) / (1 - chance), 3) if chance < 1 else None


def measure(labels: list[dict[str, Any]]) -> dict[str, Any]:
    """The rule's party for every labelled failure, and how it agrees."""
    rows = []
    for label in labels:
        status, error, metrics, modelled = BUILDERS[label["id"]]()
        found = attribute(status, error, metrics, modelled_user=modelled)
        assert found is not None, label["id"]
        said = (
            f"{error.type}: {error.message}"
            if error
            else "; ".join(f"{n}: {'; '.join(m.evidence)}" for n, m in metrics.items())
        )
        rows.append({**label, "rule": found.party, "said": " ".join(said.split())[:200]})
    parts: dict[str, Any] = {}
    for part in ("held_out", "dev", "all"):
        chosen = [r for r in rows if part == "all" or r["split"] == part]
        pairs = [(r["rule"], r["party"]) for r in chosen]
        parts[part] = {
            **share(sum(a == b for a, b in pairs), len(pairs)),
            "kappa": kappa(pairs),
        }
    per_party = {}
    for party in PARTIES:
        found = [r for r in rows if r["rule"] == party]
        meant = [r for r in rows if r["party"] == party]
        per_party[party] = {
            "precision": share(sum(r["party"] == party for r in found), len(found)),
            "recall": share(sum(r["rule"] == party for r in meant), len(meant)),
        }
    misses = [
        {k: r[k] for k in ("id", "split", "party", "rule", "said")}
        for r in rows
        if r["rule"] != r["party"]
    ]
    return {"agreement": parts, "per_party": per_party, "disagreements": misses}


def _cell(row: dict[str, Any]) -> str:
    return f"{row['agreed']}/{row['n']} {row['rate']:.0%} [{row['low']:.0%}, {row['high']:.0%}]"


def _print(result: dict[str, Any]) -> None:
    for part, row in result["agreement"].items():
        print(f"agreement {part:<9} {_cell(row):>22}  kappa {row['kappa']}")
    for party, row in result["per_party"].items():
        print(
            f"  {party:<15} precision {_cell(row['precision']):>22}  recall "
            f"{_cell(row['recall']):>22}"
        )
    print("disagreements:")
    for miss in result["disagreements"]:
        print(
            f"  {miss['split']:<8} {miss['id']:<24} person {miss['party']:<15} rule "
            f"{miss['rule']:<15} {miss['said'][:90]}"
        )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--labels", type=Path, default=Path(__file__).parent / "labels" / "attribution.json"
    )
    parser.add_argument(
        "--json", default=str(Path(__file__).parent / "results" / "attribution_agreement.json")
    )
    args = parser.parse_args(argv)
    labels = json.loads(args.labels.read_text())["failures"]
    unknown = [label["id"] for label in labels if label["id"] not in BUILDERS]
    if unknown:
        raise SystemExit(
            f"{args.labels}: no failure is built for id {unknown[0]!r} (see bench/_failures.py)"
        )
    result = {"labels": str(args.labels), "failures": len(labels), **measure(labels)}
    _print(result)
    write_result(args.json, result)
    return result


if __name__ == "__main__":
    main()
