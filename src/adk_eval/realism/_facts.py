"""What a user's message tells the agent about their need, and which goal it is about.

Facts and goals need reading; these rules approximate a careful reader with patterns and
small English word lists, deterministic and cheap (`_features` documents what they miss):

* `fact_items(text)`: the values a message gives, one each: an e-mail, a number, a date
  or weekday, a time of day ("tomorrow evening" is one), a proper noun, a count in words
  ("for two"), a constraint in words ("cheap", "in the north", "decaf", "round trip",
  "with a garage") or a place after a preposition ("to the airport", "in the kitchen").
* `no_preference(text)`: "I don't care", "any is fine", "doesn't matter": an answer.
* `domains(text)`: the kinds of service a message names (a cab, a flight, a song, a
  payment, ...): a message naming a kind its goal did not is a new goal.
"""

from __future__ import annotations

import re

from ._text import STOPWORDS, proper_nouns, sentences, word_set, words

__all__ = [
    "domains",
    "fact_items",
    "is_closing",
    "new_goal_marker",
    "no_preference",
    "reports_done",
    "requests",
]

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_CALENDAR = (
    r"january|february|march|april|june|july|august|september|october|november|december|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|week|month"
)
_WHEN = re.compile(
    r"\b(?:(?:this|next|tomorrow|today|tonight)\s+)?(?:morning|afternoon|evening|night|noon|"
    r"midnight|tonight|tomorrow|today|weekend|next (?:week|month|year)|(?:" + _CALENDAR + r"))\b"
    r"|\bmay\s+\d",
    re.IGNORECASE,
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_DATE = re.compile(
    r"\b(?:(?:the\s+)?" + _DAY + r"\s+(?:of\s+)?(?:this\s+month|next\s+month|"
    r"(?:may|" + _CALENDAR + r"))|(?:may|" + _CALENDAR + r")\s+(?:the\s+)?" + _DAY + r")"
    r"(?:,?\s+\d{4})?\b",
    re.IGNORECASE,
)
_CLOCK = re.compile(
    r"\b(?:\d{1,2}(?::\d\d)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
    r"\s*(?:[ap]\.?m\.?|o'?clock|in the (?:morning|afternoon|evening))|\b\d{1,2}:\d\d\b"
    r"|\bthe\s+\d{1,2}(?:st|nd|rd|th)\b",
    re.IGNORECASE,
)
_JOINED = re.compile(r"^(?:\s*(?:,|in the|of|at|on|on the|from|for the|for)?\s*)$", re.IGNORECASE)
_NOT_PLACES = word_set(
    "moment time minute end way rest same following details detail list number name one "
    "ones option options thing things information info cost price total meantime least most "
    "screen order drink drinks car ride booking reservation group trip mood meals"
)
_NUMBER_WORD = (
    r"(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|"
    r"ninety|hundred|thousand)"
)
_UNIT = (
    r"(?:people|persons?|guests?|adults?|kids|children|tickets?|seats?|rooms?|nights?|"
    r"bedrooms?|bathrooms?|dollars|bucks|pounds|euros|pumps|shots)"
)
_COUNT = re.compile(
    r"\b(?:(?:a couple of|a few|"
    + _NUMBER_WORD
    + r")(?:[\s-]+(?:and\s+)?(?:one|"
    + _NUMBER_WORD
    + r"))*(?:\s+"
    + _UNIT
    + r")?|(?:for|of)\s+(?:one|1)\b|(?:one|1)\s+"
    + _UNIT
    + r")",
    re.IGNORECASE,
)
_TO_GO = re.compile(r"\bto go\b(?=\s*(?:[.,!?]|please\b|$))", re.IGNORECASE)
_EXTRA = re.compile(r"\bextra\s+\w+", re.IGNORECASE)
_ABOUT_IT = re.compile(
    r"^(?:is|are|was|were|does|do|did|has|have)\s+(?:it|they|that|this|he|she)\b"
)
_CONSTRAINTS = sorted(
    word_set(
        "cheap inexpensive expensive pricey moderate moderately affordable budget luxury "
        "upscale high-end fancy north south east west northern southern eastern western "
        "centre center central downtown nearby large small medium tall grande venti big "
        "extra hot iced cold warm decaf decaffeinated regular skim skimmed whole oat almond "
        "soy coconut sugar-free unsweetened sweet vegan vegetarian gluten-free halal kosher "
        "takeaway for_here round_trip one_way direct nonstop refundable private public "
        "shared pool economy business first_class pet-friendly child-friendly family-friendly "
        "wheelchair accessible oat_milk almond_milk soy_milk whipped_cream extra_shot "
        "latte cappuccino espresso americano mocha macchiato chai_latte chai tea coffee "
        "flat_white cold_brew frappuccino hot_chocolate single double triple non-fat nonfat "
        "skinny sweetener syrup caramel vanilla hazelnut honey cinnamon insurance pop rock "
        "jazz metal classical country comedy horror drama action thriller romantic "
        "documentary animated sedan suv hatchback compact convertible minivan"
    ),
    key=len,
    reverse=True,
)
_CONSTRAINT = re.compile(
    r"\b(?:" + "|".join(re.escape(c).replace("_", r"\s+") for c in _CONSTRAINTS) + r")\b",
    re.IGNORECASE,
)
_PLACE = re.compile(
    r"\b(?:(?:in|at|to|from|near|on)\s+(?:the|my|a|an)|with\s+(?:the|a|an))\s+([a-z][\w'-]*)",
    re.IGNORECASE,
)
_NEXT_WORD = re.compile(r"\s+([a-z][\w'-]*)")
_NO_PREFERENCE = re.compile(
    r"\b(?:(?:doesn'?t|does not|don'?t|do not) matter|(?:i )?(?:don'?t|do not) care|"
    r"(?:don'?t|do not) mind|no preference|"
    r"(?:any|either)(?: \w+)? (?:is|are|will be|would be|works?) (?:fine|good|ok|okay)|"
    r"(?:any|either) (?:one|of them|will do|works)|whatever (?:you|is)|up to you|"
    r"(?:i'?m|i am) flexible|anything (?:is fine|works|will do)|anywhere|any (?:time|day|kind"
    r"|type|price|device|location|place)|not (?:picky|fussy))\b"
)
_DOMAINS: dict[str, frozenset[str]] = {
    "restaurant": word_set("restaurant restaurants food dinner lunch breakfast eat table dine"),
    "hotel": word_set("hotel hotels motel hostel accommodation"),
    "home": word_set("house apartment apartments property flat home homes"),
    "car rental": word_set("car cars vehicle rental"),
    "ride": word_set("cab taxi ride uber lyft"),
    "flight": word_set("flight flights fly plane airline"),
    "train": word_set("train trains rail"),
    "bus": word_set("bus buses coach"),
    "music": word_set("song songs music album track playlist"),
    "movie": word_set("movie movies film films cinema"),
    "event": word_set("event events concert concerts game show"),
    "alarm": word_set("alarm alarms"),
    "weather": word_set("weather forecast rain"),
    "payment": word_set("payment pay transaction transfer money"),
    "medical": word_set("doctor dentist therapist psychologist psychiatrist clinic"),
    "salon": word_set("salon haircut stylist barber"),
    "attraction": word_set("attraction attractions sightseeing"),
    "location": word_set("location"),
}
_NEW_GOAL = re.compile(
    r"^(?:\W*(?:ok|okay|great|thanks|thank you|fine|yes|no|also|and|now)\W+){0,3}"
    r"(?:also|another thing|one more thing|by the way|something else|different question|"
    r"(?:i|we) (?:also|now) (?:need|want|would like)|now (?:i|we) (?:need|want))\b"
    r"|\b(?:make|book|do|schedule|set up|request|start) another\b"
)


_CLOSING = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|great|perfect|cool|awesome|nice|good|fine|yes|no|sure|alright|"
    r"thanks?|thank you|that'?s (?:all|it|great|perfect|fine)|bye|goodbye)\b)"
)
_DONE = re.compile(
    r"\b(?:success(?:ful(?:ly)?)?|complete[d]?|(?:has|have) been (?:booked|made|reserved|"
    r"scheduled|sent|set|shared|placed|confirmed|cancell?ed)|(?:is|are) (?:booked|confirmed|"
    r"now playing|playing|on (?:its|the) way|en route|set)|i(?:'ve| have)? (?:made|booked|"
    r"reserved|scheduled|sent|shared|set up|placed|cancell?ed))\b"
)
_REQUEST = re.compile(
    r"\b(?:need|want|would like|'d like|find|book|search|look for|get me|help me|can you|"
    r"could you|would you|please|also|another)\b"
)


def is_closing(text: str) -> bool:
    """Whether a message only closes or thanks: it opens so, requests nothing, gives nothing."""
    lowered = _lower(text)
    if not _CLOSING.match(lowered) or _REQUEST.search(lowered) or "?" in lowered:
        return False
    return not fact_items(text)


def requests(text: str) -> bool:
    """Whether a message asks the agent for something ("I need", "can you", "please")."""
    return bool(_REQUEST.search(_lower(text)))


def reports_done(text: str) -> bool:
    """Whether an agent's message says a task is done ("booked", "was successful")."""
    return bool(_DONE.search(_lower(text)))


def _lower(text: str) -> str:
    return text.replace("\u2019", "'").lower()


def fact_items(text: str) -> list[str]:
    """The values `text` gives about the need, one string each, in order (see the module).

    Overlapping matches count once (the longest); a place after a preposition counts
    when it is no stopword and no other item.
    """
    spans: list[tuple[int, int, str]] = []
    rest = _EMAIL.sub(lambda m: " " * len(m.group()), text)
    for sentence in sentences(rest):  # what the user asks about the item at hand is no fact
        if _ABOUT_IT.match(sentence.lower()):
            at = rest.find(sentence)
            rest = rest[:at] + " " * len(sentence) + rest[at + len(sentence) :]
    for found in _EMAIL.finditer(text):
        spans.append((found.start(), found.end(), found.group().lower()))
    for pattern in (_DATE, _CLOCK, _WHEN, _COUNT, _TO_GO, _EXTRA, _CONSTRAINT, _NUMBER):
        spans += [(m.start(), m.end(), m.group().lower()) for m in pattern.finditer(rest)]
    spans = [span for span in spans if span[2] != "1"]  # "1 cortado": an article
    spans += [(start, start + len(name), name.lower()) for start, name in proper_nouns(rest)]
    for found in _PLACE.finditer(rest):
        if found.group(1).lower() not in STOPWORDS | _NOT_PLACES:
            end = found.end(1)
            after = _NEXT_WORD.match(rest, end)
            if after and after.group(1).lower() not in STOPWORDS:
                end = after.end(1)
            spans.append((found.start(1), end, rest[found.start(1) : end].lower()))
    kept: list[tuple[int, int, str]] = []
    for start, end, item in sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))):
        if kept and start < kept[-1][1]:
            continue
        gap = rest[kept[-1][1] : start] if kept else ""
        joined = kept and _when(kept[-1][2]) and _when(item) and _JOINED.match(gap)
        if joined or (kept and kept[-1][2].isdigit() and gap == " "):  # "115 Main Street"
            kept[-1] = (kept[-1][0], end, rest[kept[-1][0] : end].lower())
            continue
        kept.append((start, end, item))
    return [item for _, _, item in kept]


def _when(item: str) -> bool:
    """Whether an item is a date or a time (two in a row make one: "Tuesday at 10 am")."""
    return bool(_WHEN.search(item) or _CLOCK.search(item) or _DATE.search(item))


def no_preference(text: str) -> bool:
    """Whether the message says the user has no preference ("I don't care", "any is fine")."""
    return bool(_NO_PREFERENCE.search(_lower(text)))


def domains(text: str) -> set[str]:
    """The kinds of service `text` names (see the module's list)."""
    said = set(words(text))
    return {name for name, cue in _DOMAINS.items() if said & cue}


def new_goal_marker(text: str) -> bool:
    """Whether the message opens on a new-goal marker ("also", "by the way", "I now need")."""
    return bool(_NEW_GOAL.search(_lower(text)))
