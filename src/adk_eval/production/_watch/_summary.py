"""What a watch did so far: its running totals, and the one line people read."""

from __future__ import annotations

from dataclasses import dataclass, field

from ._verdict import Alert

__all__ = ["WatchSummary"]


@dataclass
class WatchSummary:
    """What a watch did (so far).

    Attributes:
        scored: Conversations scored by this run.
        rescored: Of those, conversations scored before that had changed since.
        verdicts: Verdicts handed on.
        failed: Verdicts that did not pass.
        judged: Conversations the judges read.
        judge_calls: Judge calls spent (one per judge metric on a conversation).
        judge_tokens: Tokens the judges' model calls used (as their responses say).
        judge_cost: US dollars they cost (priced models only; see `cost_of`).
        skipped_sample: Conversations whose judges were left out: not in the sample.
        skipped_budget: Sampled conversations whose judges the budget could not afford.
        open: Open conversations met at the last poll (left for a later one).
        unreadable: Sessions whose rows could not be read (skipped).
        polls: Polls made.
        alerts: The alerts consumers raised, in order.
    """

    scored: int = 0
    rescored: int = 0
    verdicts: int = 0
    failed: int = 0
    judged: int = 0
    judge_calls: int = 0
    judge_tokens: int = 0
    judge_cost: float = 0.0
    skipped_sample: int = 0
    skipped_budget: int = 0
    open: int = 0
    unreadable: int = 0
    polls: int = 0
    alerts: list[Alert] = field(default_factory=list)

    def line(self) -> str:
        """The summary as one line, for people."""
        skipped = self.skipped_sample + self.skipped_budget
        return (
            f"{self.scored} conversation(s) scored ({self.rescored} again after a change), "
            f"{self.verdicts} verdict(s), {self.failed} failed; judges read {self.judged} "
            f"({self.judge_calls} call(s), {self.judge_tokens} tokens, ${self.judge_cost:.4f}), "
            f"left out {skipped} ({self.skipped_sample} not "
            f"sampled, {self.skipped_budget} over budget); {self.open} open; "
            f"{len(self.alerts)} alert(s)"
        )
