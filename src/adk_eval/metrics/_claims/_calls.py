"""What backs a claim: the calls made before it, and the verbs each tool performs.

A claim made in the same model response as a call that performs it ("I've
refunded your order" sent with ``refund_order``, as models often write) waits
for that call: it is decided when the matching calls of that response are all
answered (`claim_check` at their answers), and is backed when one of them
succeeded. One whose matching calls never all answered is decided at the end
of the trace (`leftover`), against the calls before it and those of its
response that ran.

A call failed when its tool raised or when its answer says so (`error_of`, the
one definition the other invariants and the live watch read too).

Used by `claimed_actions` (`_metric`) and its judge (`_judge`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from .._invariants import Answer, Call, Observation, Said, Seen, error_of
from .._types import excerpt
from ._text import Claim, find_claims
from ._verbs import BUILTIN, MONEY, READ_ONLY, forms_of, lemma, name_words, related, tool_families

__all__ = [
    "Made",
    "Quiet",
    "Vocabulary",
    "calls_made",
    "claim_check",
    "leftover",
    "reason",
    "unbacked",
]


@dataclass(frozen=True)
class Made:
    """A call the run made before a claim: its tool and how it went."""

    name: str
    status: Literal["ok", "failed", "pending"]
    error: str | None = None

    @property
    def line(self) -> str:
        """``refund_order`` failed, as evidence lists it."""
        return f"`{self.name}` {self.status}"


def calls_made(seen: Seen, ignore: frozenset[str] = frozenset()) -> list[Made]:
    """The calls in `seen` (but the `ignore`d tools'), each with its answer's outcome."""
    by_id = {answer.call_id: answer for answer in seen.answers if answer.call_id}
    unpaired: dict[str, list[Answer]] = {}
    for answer in seen.answers:
        if not answer.call_id:
            unpaired.setdefault(answer.name, []).append(answer)
    made = []
    for call in seen.calls:
        if call.name in ignore:
            continue
        found = by_id.get(call.call_id) if call.call_id else None
        if found is None and not call.call_id and unpaired.get(call.name):
            found = unpaired[call.name].pop(0)
        if found is None:
            made.append(Made(call.name, "pending"))
        elif (error := _error(found)) is not None:
            made.append(Made(call.name, "failed", error))
        else:
            made.append(Made(call.name, "ok"))
    return made


def _error(answer: Answer) -> str | None:
    return answer.error if answer.error is not None else error_of(answer.response)


def _named(tool: str, about: Sequence[str]) -> int:
    """How many of the words of `tool`'s name that are no verb name a word of `about`."""
    nouns = [w for w in name_words(tool) if len(w) >= 3 and lemma(w, READ_ONLY) is None]
    return sum(any(_same(noun, word) for word in about) for noun in nouns)


def _same(noun: str, word: str) -> bool:
    """One word (``flight``, ``flights``), or one's stem starts the other (``bags``)."""
    a, b = sorted((noun.rstrip("s"), word.rstrip("s")), key=len)
    return len(a) >= 3 and b.startswith(a)


_MONEY = frozenset().union(*(related(family) for family in MONEY))
_CARRIERS = frozenset().union(
    *(related(family) for family in ("book", "cancel", "update", "order", "renew", "replace"))
)  # actions that charge or refund on the way


@dataclass(frozen=True)
class Vocabulary:
    """The verbs a run's claims are read with, and the families each tool performs.

    Attributes:
        described: Tool name -> its description (from ``tools=``).
        mapped: Verb family -> the tools that perform it (``verbs=``).
        ignore: Tools whose calls back nothing and add no verb.
        ignore_verbs: Families whose claims are not checked.
    """

    described: Mapping[str, str] = field(default_factory=dict)
    mapped: Mapping[str, frozenset[str]] = field(default_factory=dict)
    ignore: frozenset[str] = frozenset()
    ignore_verbs: frozenset[str] = frozenset()

    def families(self, tool: str) -> frozenset[str]:
        """The verb families `tool` performs (its name, its description, ``verbs=``)."""
        return self._families.get(tool) or self._of(tool)

    def _of(self, tool: str) -> frozenset[str]:
        explicit = frozenset(verb for verb, tools in self.mapped.items() if tool in tools)
        return tool_families(tool, self.described.get(tool, "")) | explicit

    @cached_property
    def _families(self) -> dict[str, frozenset[str]]:
        named = set(self.described) | {tool for tools in self.mapped.values() for tool in tools}
        return {tool: self._of(tool) for tool in named if tool not in self.ignore}

    @cached_property
    def _forms(self) -> dict[str, str]:
        known = set(BUILTIN) | set(self.mapped).union(*self._families.values())
        return forms_of(known)

    def forms(self, tools: Iterable[str]) -> tuple[dict[str, str], frozenset[str]]:
        """Past form -> family for every verb known with `tools` called; the tools' families."""
        verbs = set().union(*self._families.values(), self.mapped)
        for tool in tools:
            if tool not in self.ignore:
                verbs |= self.families(tool)
        return {**forms_of(verbs - set(self._forms.values())), **self._forms}, frozenset(verbs)

    def backs(self, family: str, tool: str) -> bool:
        """Whether a call of `tool` performs `family` (or a synonym of it)."""
        return bool(self.families(tool) & related(family))

    def naming(self, family: str, about: Sequence[str], made: Sequence[Made]) -> list[Made]:
        """The calls of `made` whose tools' names name most of `about`, among those doing `family`.

        All of `made` when no tool that performs `family` (given or called) names any.
        """
        tools = {*self._families, *(m.name for m in made)} - self.ignore
        scores = {t: _named(t, about) for t in tools if self.backs(family, t)}
        best = max(scores.values(), default=0)
        return [m for m in made if scores.get(m.name, 0) == best] if best else list(made)

    def moves_money(self, called: Iterable[str]) -> bool:
        """Whether a tool given or `called` pays, charges or refunds (then only it backs those)."""
        tools = {*self._families, *called} - self.ignore
        return any(self.families(tool) & _MONEY for tool in tools)

    def claims(self, said: Said, made: Sequence[Made]) -> list[Claim]:
        """The claims `said` makes (but those of ignored verbs)."""
        forms, verbs = self.forms({call.name for call in made})
        found = find_claims(said.text, forms, verbs)
        return [claim for claim in found if claim.family not in self.ignore_verbs]


def unbacked(
    vocabulary: Vocabulary,
    family: str,
    made: Sequence[Made],
    tool: str | None = None,
    about: Sequence[str] = (),
) -> str | None:
    """Why no call in `made` backs a claim of `family` (or of `tool`), or None when one does.

    Of the tools that perform `family`, those whose names name most of what the
    claim is `about` back it (``bags added`` by ``update_baggages``, not by
    ``update_flights``); when no name names any of it, all do.

    Money moved (paid, charged, refunded) is backed by a booking, a change, a
    cancellation or an order when no tool of the run moves money: they charge or
    refund on the way.
    """
    matching = [m for m in made if m.name == tool or vocabulary.backs(family, m.name)]
    if tool is None and about:
        matching = vocabulary.naming(family, about, matching)
    if not matching and family in MONEY and not vocabulary.moves_money([m.name for m in made]):
        matching = [m for m in made if vocabulary.families(m.name) & _CARRIERS]
    if any(m.status != "failed" for m in matching):
        return None
    if matching:
        last = matching[-1]
        return f"the call `{last.name}` failed: {(last.error or '')[:200]}"
    return "no call before it performed it"


def claim_check(vocabulary: Vocabulary, seen: Seen, now: Observation) -> str | None:
    """The rules at one observation: why what `now` says is a false claim, or None.

    At an answer: why a claim that waited for its response's calls is false.
    """
    if isinstance(now, Answer):
        return _decided(vocabulary, seen, now)
    if not isinstance(now, Said):
        return None
    made = calls_made(seen, vocabulary.ignore)
    own = [Made(call.name, "pending") for call in waiting(vocabulary, now)]
    for claim in vocabulary.claims(now, [*made, *own]):
        why = unbacked(vocabulary, claim.family, made, about=claim.about)
        if why is not None and not waiting(vocabulary, now, claim.family):
            return reason(now.author, claim.quote, claim.family, why, made)
    return None


def waiting(vocabulary: Vocabulary, said: Said, family: str | None = None) -> list[Call]:
    """The calls of `said`'s own response (that perform `family`) a claim in it waits for."""
    return [
        call
        for call in said.calls
        if call.call_id
        and call.name not in vocabulary.ignore
        and (family is None or vocabulary.backs(family, call.name))
    ]


def _decided(vocabulary: Vocabulary, seen: Seen, now: Answer) -> str | None:
    """Why a claim waiting for `now`'s call (and the rest of its response's) is false."""
    said = [s for s in seen.said if now.call_id and any(c.call_id == now.call_id for c in s.calls)]
    if not said:
        return None
    after = Seen(seen.calls, [*seen.answers, now])
    made = calls_made(after, vocabulary.ignore)
    answered = {answer.call_id for answer in after.answers}
    for message in said:
        for claim in vocabulary.claims(message, made):
            calls = {call.call_id for call in waiting(vocabulary, message, claim.family)}
            if now.call_id not in calls or not calls <= answered:
                continue  # not its call, or another of its calls still runs
            why = unbacked(vocabulary, claim.family, made, about=claim.about)
            if why is not None:
                return reason(message.author, claim.quote, claim.family, why, made)
    return None


def leftover(vocabulary: Vocabulary, seen: Seen, said: Said, before: int) -> str | None:
    """At the end: why a claim of `said` whose calls never all answered is false, or None.

    `before` is how many calls were seen before `said`.
    """
    answered = {answer.call_id for answer in seen.answers}
    own = {call.call_id for call in said.calls}
    ran = [call for call in seen.calls[before:] if call.call_id in own]
    made = calls_made(Seen([*seen.calls[:before], *ran], seen.answers), vocabulary.ignore)
    for claim in vocabulary.claims(said, made):
        calls = {call.call_id for call in waiting(vocabulary, said, claim.family)}
        if not calls or calls <= answered:
            continue  # decided when it was said, or at its calls' answers
        why = unbacked(vocabulary, claim.family, made, about=claim.about)
        if why is not None:
            return reason(said.author, claim.quote, claim.family, why, made)
    return None


def reason(author: str, quote: str, family: str, why: str, made: Sequence[Made]) -> str:
    lines = [m.line for m in made[-8:]]
    if len(made) > 8:
        lines.insert(0, f"… {len(made) - 8} earlier")
    calls = f"calls before it: {', '.join(lines)}" if made else "no tool call before it"
    return f"`{author}` claimed {excerpt(quote)} ({family}), but {why}; {calls}"


@dataclass(frozen=True)
class Quiet:
    """An agent message the rules found no claim in, and how much was seen before it."""

    said: Said
    calls: int
    answers: int

    def before(self, seen: Seen) -> Seen:
        """What was seen before this message, and the calls of its own response that ran."""
        own = {call.call_id for call in self.said.calls if call.call_id}
        calls = [c for c in seen.calls[self.calls :] if c.call_id in own]
        answers = [a for a in seen.answers[self.answers :] if a.call_id in own]
        return Seen([*seen.calls[: self.calls], *calls], [*seen.answers[: self.answers], *answers])
