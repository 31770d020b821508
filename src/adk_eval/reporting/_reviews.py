"""Human review: a person's agree/disagree on a stored run, or on one metric's verdict.

Labels live in the runs database, in a ``reviews`` table of their own (made at the
first label; the runs are never changed). A label on a metric of an `llm_judge`
keeps what the judge said and which judge it was (model and prompt hash), so the
judge can be calibrated against people (`judge_calibration`): raw agreement,
Cohen's kappa with the people's base rate, the number of labels, and the judge's
self-consistency over its own samples.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from .._errors import RunStoreError
from .._statistics import agreement
from ._store import RunStore

__all__ = [
    "JudgeCalibration",
    "Review",
    "add_review",
    "judge_calibration",
    "review_queue",
    "reviews",
]

_TABLE = """
CREATE TABLE IF NOT EXISTS reviews (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    case_name TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    metric TEXT,
    verdict TEXT NOT NULL,
    note TEXT NOT NULL,
    judged_passed INTEGER,
    judge_model TEXT,
    prompt_hash TEXT,
    self_consistency REAL
)
"""

Verdict = Literal["agree", "disagree"]


@dataclass(frozen=True)
class Review:
    """One label.

    Attributes:
        run_id: The stored run.
        case: The case's name.
        attempt: The run of the case.
        metric: The metric whose verdict is labelled (None: the run's outcome).
        verdict: ``agree`` or ``disagree`` with that verdict.
        note: Why, in the reviewer's words.
        judged_passed: What the metric (or run) said: passed or not.
        judge_model: For an `llm_judge` metric: its model.
        prompt_hash: For an `llm_judge` metric: a hash of its prompt.
        self_consistency: For an `llm_judge` metric: the share of its samples that
            agreed with its verdict.
        created_at: When (ISO 8601).
    """

    run_id: int
    case: str
    attempt: int
    metric: str | None
    verdict: Verdict
    note: str = ""
    judged_passed: bool | None = None
    judge_model: str | None = None
    prompt_hash: str | None = None
    self_consistency: float | None = None
    created_at: str = ""

    def to_data(self) -> dict[str, Any]:
        """Plain data, for the API and exports."""
        return dict(self.__dict__)


def add_review(
    store: RunStore,
    run_id: int,
    case: str,
    attempt: int,
    metric: str | None,
    verdict: str,
    note: str = "",
) -> Review:
    """Stores a label on a run (or one of its metrics); what was judged is read from the run.

    Raises:
        RunStoreError: No such run, case, attempt or metric, or a verdict that is neither
            ``agree`` nor ``disagree``.
    """
    if verdict not in ("agree", "disagree"):
        raise RunStoreError(f"a review is 'agree' or 'disagree', got {verdict!r}")
    report = store.load(run_id)
    run = next(
        (r for r in report["results"] if r["name"] == case and r["attempt"] == attempt), None
    )
    if run is None:
        raise RunStoreError(f"run {run_id} has no case `{case}` attempt {attempt}")
    judged, judge, consistency = _judged(run, metric, f"case `{case}` of run {run_id}")
    review = Review(
        run_id=run_id,
        case=case,
        attempt=attempt,
        metric=metric,
        verdict=verdict,  # type: ignore[arg-type]
        note=note,
        judged_passed=judged,
        judge_model=judge.get("model"),
        prompt_hash=judge.get("prompt_hash"),
        self_consistency=consistency,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    with store._connect(create=False) as db:
        db.execute(_TABLE)
        db.execute(
            "INSERT INTO reviews (created_at, run_id, case_name, attempt, metric, verdict, note, "
            "judged_passed, judge_model, prompt_hash, self_consistency) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                review.created_at,
                run_id,
                case,
                attempt,
                metric,
                verdict,
                note,
                int(judged),
                review.judge_model,
                review.prompt_hash,
                consistency,
            ),
        )
    return review


def _judged(
    run: dict[str, Any], metric: str | None, where: str
) -> tuple[bool, dict[str, Any], float | None]:
    """What a review labels: the verdict, the judge that gave it, and its self-consistency.

    The run's outcome when `metric` is None; else the metric's verdict and, for an
    `llm_judge`, its model and prompt hash and the share of its samples that agreed.

    Raises:
        RunStoreError: `where` (the run's case) has no such metric.
    """
    if metric is None:
        return run["outcome"] in ("passed", "xfailed"), {}, None
    found = run["metrics"].get(metric)
    if found is None:
        raise RunStoreError(f"{where} has no metric `{metric}`")
    judged = bool(found["passed"])
    value = found.get("value") if isinstance(found.get("value"), dict) else {}
    judge = value.get("judge") or {}
    consistency = None
    if judge and value.get("samples"):
        agreeing = value["votes"] if judged else value["samples"] - value["votes"]
        consistency = agreeing / value["samples"]
    return judged, judge, consistency


def reviews(store: RunStore) -> list[Review]:
    """Every label, oldest first (none when nobody reviewed anything yet)."""
    with store._connect(create=False) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        if "reviews" not in tables:
            return []
        rows = db.execute(
            "SELECT run_id, case_name, attempt, metric, verdict, note, judged_passed, "
            "judge_model, prompt_hash, self_consistency, created_at FROM reviews ORDER BY id"
        ).fetchall()
    return [
        Review(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6]), r[7], r[8], r[9], r[10])
        for r in rows
    ]


@dataclass(frozen=True)
class JudgeCalibration:
    """How one judge (metric, model, prompt hash) agrees with the people who reviewed it.

    Attributes:
        metric: The `llm_judge` metric's name.
        model: The judge's model.
        prompt_hash: A hash of its prompt (another prompt is another judge).
        labels: Reviews of its verdicts (the latest per run of a case counts).
        raw: The share of its verdicts people agreed with.
        kappa: Cohen's kappa between its verdicts and the people's (None: undefined).
        base_rate: The share of the reviewed runs people think should pass.
        self_consistency: The mean share of its samples that agreed with its verdict.
    """

    metric: str
    model: str
    prompt_hash: str
    labels: int
    raw: float
    kappa: float | None
    base_rate: float
    self_consistency: float | None

    def to_data(self) -> dict[str, Any]:
        """Plain data, for the API and ``adk-eval judges --json``."""
        return dict(self.__dict__)


def judge_calibration(labels: Iterable[Review]) -> list[JudgeCalibration]:
    """Each judge's agreement with its reviewers (see `JudgeCalibration`)."""
    latest: dict[tuple[Any, ...], tuple[tuple[str, str, str], Review]] = {}
    for review in labels:
        if review.metric is not None and review.judge_model and review.prompt_hash:
            judge = (review.metric, review.judge_model, review.prompt_hash)
            latest[(review.run_id, review.case, review.attempt, review.metric)] = (judge, review)
    groups: dict[tuple[str, str, str], list[Review]] = {}
    for judge, review in latest.values():
        groups.setdefault(judge, []).append(review)
    found = []
    for (metric, model, prompt_hash), group in sorted(groups.items()):
        pairs = [
            (bool(r.judged_passed), bool(r.judged_passed) == (r.verdict == "agree")) for r in group
        ]
        measured = agreement(pairs)
        spread = [r.self_consistency for r in group if r.self_consistency is not None]
        found.append(
            JudgeCalibration(
                metric=metric,
                model=model,
                prompt_hash=prompt_hash,
                labels=measured.count,
                raw=measured.raw,
                kappa=measured.kappa,
                base_rate=measured.base_rate,
                self_consistency=sum(spread) / len(spread) if spread else None,
            )
        )
    return found


_RANK = {"error": 0, "failed": 1, "xpassed": 2, "terminated": 3, "xfailed": 4, "passed": 5}


def review_queue(store: RunStore, *, runs: int = 20) -> list[dict[str, Any]]:
    """Every run of a case in the latest `runs` stored runs, as a queue for people to review.

    Runs that did not pass come first (errors, failures, ...), newest stored run
    first within an outcome. Each says its outcome, the party a failure is
    attributed to, its failing metrics and whether someone reviewed its verdict.
    """
    with store._connect(create=False) as db:
        rows = db.execute(
            "SELECT r.id, r.created_at, json_extract(j.value, '$.name'), "
            "json_extract(j.value, '$.attempt'), json_extract(j.value, '$.outcome'), "
            "json_extract(j.value, '$.attribution.party'), json_extract(j.value, '$.metrics') "
            "FROM (SELECT id, created_at, report FROM runs ORDER BY id DESC LIMIT ?) r, "
            "json_each(r.report, '$.results') j",
            (max(1, runs),),
        ).fetchall()
    done = {(r.run_id, r.case, r.attempt) for r in reviews(store) if r.metric is None}
    queue = [
        {
            "run_id": run_id,
            "created_at": created_at,
            "case": case,
            "attempt": attempt,
            "outcome": outcome,
            "party": party,
            "failing": [
                name
                for name, metric in json.loads(metrics or "{}").items()
                if metric.get("applicable", True) and not metric.get("passed")
            ],
            "reviewed": (run_id, case, attempt) in done,
        }
        for run_id, created_at, case, attempt, outcome, party, metrics in rows
    ]
    queue.sort(key=lambda item: (_RANK.get(item["outcome"], 9), -item["run_id"], item["case"]))
    return queue
