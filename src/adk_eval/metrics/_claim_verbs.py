"""The English rules of `claimed_actions`: action verbs, their forms, and what a claim looks like.

A *verb family* is a verb's base form (``refund``); its past forms (``refunded``)
are what a claim says. The families come from a built-in table of common
actions and from the tools (the verb a tool's name starts with, the first verb
of its description's first sentence, and the action nouns in its name:
``create_booking`` -> ``create``, ``book``). Families in one synonym group
back one another (``book``, ``reserve``, ``schedule``).

A claim is a past form, in a sentence that is not a question, said as done:

* by the speaker: ``I refunded``, ``I've just refunded``, ``we have sent``,
  ``billing has refunded`` (not ``you have ...``);
* as done to something: ``has been booked``, ``is now cancelled``,
  ``are all set``... (``is``/``are`` only with now, all, already,
  successfully, officially), ``was successfully sent``, ``successfully
  saved``;
* alone: ``Booked!``, ``Done — refunded``, ``Cancelled the booking``,
  ``Email sent.``

It is not a claim after a negation or a modal in its clause (``I couldn't``,
``hasn't been``, ``will be``, ``can be``, ``I'll have it``), nor after a condition
in its sentence (``if``, ``once``, ``when``, ``unless``, ``until``, ``whether``).
A light verb (``processed``, ``issued``, ``made``, ``confirmed``, ``completed``)
claims the action noun of its sentence (``your refund has been processed`` claims
a refund); without one it claims only a verb some tool has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache

__all__ = [
    "BUILTIN",
    "Claim",
    "find_claims",
    "lemma",
    "name_words",
    "past_forms",
    "related",
    "tool_families",
]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_GROUPS: tuple[frozenset[str], ...] = tuple(
    _words(group)
    for group in (
        "refund reimburse",
        "send email mail text message forward notify alert inform share invite",
        "book reserve schedule arrange rebook",
        "create add insert open log file lodge submit register enroll post upload place schedule",
        "cancel void revoke terminate annul",
        "delete remove erase purge",
        "update change modify edit amend set adjust correct reschedule rename move",
        "order purchase buy place",
        "pay charge bill settle",
        "transfer move",
        "save store record",
        "reset",
        "approve authorize accept",
        "reject decline deny",
        "escalate assign",
        "replace exchange swap",
        "block lock freeze suspend disable deactivate",
        "unblock unlock unfreeze enable activate reactivate",
        "subscribe enroll register",
        "unsubscribe",
        "renew extend",
        "upgrade",
        "downgrade",
        "return",
        "close",
        "verify",
    )
)
"""Synonym groups: a verb of a group backs a claim of any other."""

LIGHT = _words("issue process initiate complete finalize execute make handle confirm")
"""Verbs that claim the action noun of their sentence (``processed your refund``)."""

_MAKING = LIGHT | _words("create add place submit open make")
"""Verbs whose object names the action done (``create_booking``)."""

BUILTIN = frozenset().union(*_GROUPS) | LIGHT
"""The built-in action verbs (base forms)."""

NOUNS: Mapping[str, str] = {
    "refund": "refund",
    "reimbursement": "reimburse",
    "booking": "book",
    "reservation": "reserve",
    "appointment": "book",
    "cancellation": "cancel",
    "payment": "pay",
    "transfer": "transfer",
    "deletion": "delete",
    "removal": "remove",
    "purchase": "purchase",
    "replacement": "replace",
    "exchange": "exchange",
    "subscription": "subscribe",
    "registration": "register",
    "enrollment": "enroll",
    "renewal": "renew",
    "upgrade": "upgrade",
    "downgrade": "downgrade",
    "reset": "reset",
    "escalation": "escalate",
    "email": "send",
    "transaction": "pay",
}
"""Action nouns, by the verb family they name."""

_IRREGULAR: Mapping[str, tuple[str, ...]] = {
    "send": ("sent",),
    "pay": ("paid",),
    "make": ("made",),
    "buy": ("bought",),
    "set": ("set",),
    "reset": ("reset",),
    "put": ("put",),
    "cancel": ("cancelled", "canceled"),
    "freeze": ("froze", "frozen"),
    "unfreeze": ("unfroze", "unfrozen"),
    "write": ("wrote", "written"),
    "rewrite": ("rewrote", "rewritten"),
    "forward": ("forwarded",),
    "open": ("opened",),
    "enroll": ("enrolled",),
    "label": ("labelled", "labeled"),
}

READ_ONLY = _words(
    "get fetch find search list lookup look query read show view retrieve load check "
    "describe count browse"
)
"""Verbs a tool name may start with that perform no action: they add no family."""


@cache
def past_forms(base: str) -> tuple[str, ...]:
    """The past tense and participle forms of `base` (regular ones, over-generated)."""
    if base in _IRREGULAR:
        return _IRREGULAR[base]
    if base.endswith("e"):
        return (base + "d",)
    if base.endswith("y") and len(base) > 1 and base[-2] not in "aeiou":
        return (base[:-1] + "ied",)
    forms = [base + "ed"]
    vowels = [letter in "aeiou" for letter in base[-3:]]
    if vowels == [False, True, False] and base[-1] not in "wxy":  # ship -> shipped
        forms.append(base + base[-1] + "ed")
    return tuple(forms)


def forms_of(bases: Iterable[str]) -> dict[str, str]:
    """Past form -> base form, for `bases`."""
    return {form: base for base in bases for form in past_forms(base)}


_BUILTIN_FORMS = forms_of(BUILTIN)


@cache
def related(family: str) -> frozenset[str]:
    """`family` and the families of its synonym groups."""
    return frozenset({family}).union(*(group for group in _GROUPS if family in group))


def lemma(word: str, known: Iterable[str] = BUILTIN) -> str | None:
    """The base form among `known` (and the built-in verbs) of `word`, or None."""
    word = word.lower()
    bases = set(known) | BUILTIN
    if word in bases:
        return word
    forms = _BUILTIN_FORMS if not set(known) - BUILTIN else forms_of(bases)
    if word in forms:
        return forms[word]
    candidates = []
    if word.endswith("ies"):
        candidates.append(word[:-3] + "y")
    if word.endswith("es"):
        candidates.append(word[:-2])
    if word.endswith("s"):
        candidates.append(word[:-1])
    if word.endswith("ing"):
        candidates += [word[:-3], word[:-3] + "e", word[:-4]]
    return next((c for c in candidates if c in bases), None)


def name_words(name: str) -> list[str]:
    """The words of a tool name: ``refund_order``, ``sendEmail``, ``book-table``."""
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", name)]


def tool_families(name: str, description: str = "") -> frozenset[str]:
    """The verb families a tool performs, from its name and its description's first sentence.

    Each gives its first word's verb (``refund_order``, "Sends an email"), unless
    that word only reads (``get``, ``lookup``, ``search``, ...): a word the
    built-in table does not know counts as a verb of its own (``escalate``).
    After a verb that makes something (``create``, ``process``, ``issue``, ...)
    or a first word that is no verb, the action nouns that follow count too
    (``create_booking``: ``create``, ``book``; "Issues a refund": ``issue``,
    ``refund``).
    """
    sentence = re.split(r"(?<=[.!?])\s|\n\s*\n", description.strip(), maxsplit=1)[0]
    found = _families_of(name_words(name))
    if sentence:
        found |= _families_of(re.findall(r"[a-z]+", sentence.lower()), strict=True)
    return frozenset(found)


def _families_of(words: list[str], *, strict: bool = False) -> set[str]:
    """The families of a name's or a sentence's words (see `tool_families`)."""
    if not words or words[0] in READ_ONLY or lemma(words[0]) in READ_ONLY:
        return set()
    verb = lemma(words[0])
    if verb is None and (strict or len(words[0]) < 3):
        return set()  # a description that does not start with a known verb says nothing
    found = {verb or words[0]}
    if verb is None or verb in _MAKING:
        found.update(NOUNS[n] for word in words[1:] if (n := _noun(word)) is not None)
    return found


def _noun(word: str) -> str | None:
    if word in NOUNS:
        return word
    if word.endswith("s") and word[:-1] in NOUNS:
        return word[:-1]
    return None


# -- finding claims in what an agent said ------------------------------------------

_ADVERBS = _words(
    "just now already also successfully all both actually finally officially fully "
    "indeed previously automatically manually immediately properly correctly "
    "completely"
)
_STRONG = _words("now all already successfully officially")
_PERFECT = _words("have has had i've we've they've")
_CONDITIONS = _words("if once unless until whether when whenever")
_MODALS = _words(
    "will shall would could can may might should must going gonna let be want wants "
    "need needs about planning trying ready"
)
_NEGATIONS = _words("not never cannot unable nothing neither nor failed fails unsuccessful without")
_ASSURE = _words("confirm see tell assure verify")  # "I can confirm it has been..."
_CLAUSE = _words(", but so however")  # modality and negation end here
_PART = _words("and or then &")  # a new part of a clause (for "... and sent it")
_OPENERS = _words(
    "done all set great ok okay sure perfect alright yes good news success excellent "
    "thanks thank you also then just now successfully both there"
)
_AFTER_BARE = _words(
    "your the it them a an this that these those for to you on in with at and all "
    "both everything successfully back out up off as per via by from into my our his "
    "her their its today now already just right # ,"
)
_SUBJECTS = _words("i you we they he she")
_DASHES = "\u2014\u2013"  # em and en dash
_TOKEN = re.compile(rf"[a-z]+(?:'[a-z]+)*|\d+|[,;:&{_DASHES}]|\s-\s")


@dataclass(frozen=True)
class Claim:
    """An action an agent said was done.

    Attributes:
        family: The verb family claimed (``refund``).
        word: The word that claims it, as written (``refunded``).
        quote: The sentence that says it.
    """

    family: str
    word: str
    quote: str


def sentences(text: str) -> Iterator[str]:
    """The sentences of `text` (split after ``.``, ``!``, ``?`` and at line breaks)."""
    for piece in re.split(r"(?<=[.!?])\s+|\n+", text):
        if piece.strip():
            yield piece.strip()


def find_claims(text: str, forms: Mapping[str, str], tool_verbs: Iterable[str]) -> list[Claim]:
    """The claims in `text`, in order (see the module doc).

    Args:
        text: What an agent said.
        forms: Past form -> verb family, for every verb that can be claimed.
        tool_verbs: The families some tool performs (a light verb with no action
            noun claims only these).
    """
    claims: list[Claim] = []
    verbs = frozenset(tool_verbs)
    for sentence in sentences(text):
        if sentence.rstrip(" \"')").endswith("?"):
            continue
        normal = sentence.lower().replace("\u2019", "'").replace("\u2018", "'")
        normal = normal.replace("e-mail", "email")
        tokens = [_kind(t) for t in _TOKEN.findall(normal)]
        for index, token in enumerate(tokens):
            family = forms.get(token)
            if family is None or not _claims_at(tokens, index, family):
                continue
            if family in LIGHT:
                nouns = [_noun(t) for t in tokens if t != token]
                found = next((NOUNS[n] for n in nouns if n is not None), None)
                if found is None and family not in verbs:
                    continue
                family = found or family
            claims.append(Claim(family, token, sentence[:200]))
    return claims


def _kind(token: str) -> str:
    if token.isdigit():
        return "#"
    if token in (";", ":") or token in _DASHES or token.strip() == "-":
        return ","
    return token


def _claims_at(tokens: list[str], index: int, family: str) -> bool:
    """Whether the past form at `index` is said as done (see the module doc)."""
    if any(t in _CONDITIONS for t in tokens[:index]):
        return False
    clause = max((i + 1 for i in range(index) if tokens[i] in _CLAUSE), default=0)
    for i in range(clause, index):
        token = tokens[i]
        modal = token in _MODALS or token.endswith(("'ll", "'d"))
        if modal and token in ("can", "could") and index > i + 1 and tokens[i + 1] in _ASSURE:
            modal = False
        if modal or token in _NEGATIONS or token.endswith("n't"):
            return False
    before = index - 1
    skipped: set[str] = set()
    while before >= 0 and (tokens[before] in _ADVERBS or _went_ahead(tokens, before)):
        skipped.add(tokens[before])
        before -= 3 if _went_ahead(tokens, before) else 1
    if "successfully" in skipped:
        return True
    previous = tokens[before] if before >= 0 else ","
    if previous in ("i", "we"):
        return True
    if previous in _PERFECT:
        return _perfect(tokens, before)
    if previous == "been":
        k = before - 1
        while k >= 0 and tokens[k] in _ADVERBS:
            k -= 1
        return k >= 0 and _perfect(tokens, k)
    if previous in ("is", "are") or previous.endswith(("'s", "'re")):
        return bool(skipped & _STRONG)
    return _alone(tokens, index, family, clause)


def _perfect(tokens: list[str], at: int) -> bool:
    """Whether `at` is a perfect's auxiliary whose subject is not the user (``you have``)."""
    token = tokens[at]
    if token == "you've" or (at > 0 and tokens[at - 1] in ("you", "they")):
        return False
    return token in _PERFECT or token.endswith(("'s", "'ve"))


def _went_ahead(tokens: list[str], at: int) -> bool:
    return at >= 2 and tokens[at - 2 : at + 1] in (
        ["went", "ahead", "and"],
        ["gone", "ahead", "and"],
    )


def _alone(tokens: list[str], index: int, family: str, clause: int) -> bool:
    """Said alone: ``Booked!``, ``Done: refunded``, ``... and sent it``, ``Email sent.``."""
    start = max((i + 1 for i in range(clause, index) if tokens[i] in _PART), default=clause)
    lead = tokens[start:index]
    after = tokens[index + 1] if index + 1 < len(tokens) else ","
    if tokens[index] == family:
        return False  # "set", "reset": the base form too, an order as much as a claim
    if all(t in _OPENERS for t in lead):
        return after in _AFTER_BARE
    telegraphic = 0 < len(lead) <= 4 and after == ","  # "Email sent." "Your refund processed!"
    return telegraphic and not any(t in _SUBJECTS or t in _BUILTIN_FORMS for t in lead)
