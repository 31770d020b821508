"""Street addresses and spoken e-mail addresses: values written in words, found by their form.

**Street addresses.** A house number, a street's name (capitalized words or an
ordinal: "Old Mill", "West 42nd") and a street type from the US Postal
Service's list of suffixes ("Street", "Ave", "Blvd", "Terrace") or its British
kin ("Road", "Close", "Mews"); then what follows it in an address: a direction
("Northeast"), a unit ("Apt 4B", "Suite 200", "#7"), a city with a state code
and ZIP ("Austin, TX 78701") or a British postcode ("London NW1 6XE"). Also
German and French street forms ("Hauptstraße 5, 10115 Berlin", "12 rue Lepic,
75018 Paris") and post office boxes. A house number before lower-case words
("2 rooms at Park Lane") is not an address: the street's name must be
capitalized, or the whole address written in lower case with its number of
two digits or more ("742 evergreen terrace"). What it misses: a street without
a type ("El Camino Real"), a bare landmark ("the Ferry Building").

`usaddress` (a parser of US addresses) was measured for this and not used: it
labels the words of any string as parts of an address (in "I want to book 2
rooms at Park Lane hotel" it finds a house number, a street and a place), so
it cannot tell where an address is in a sentence, which is the question here.

**Spoken e-mail addresses.** "pierre dot dubois at gmail dot com", "anna
underscore lee at outlook dot co dot uk", "jane [at] example [dot] com": a
mailbox (words joined by dot, underscore, dash or their names, with a number
at its end), "at" and a domain ending in a top-level name. A mailbox of one
plain word is only taken with a mail provider's domain or a spoken "dot" in
the domain ("look at amazon.com" is not an e-mail address). The key is the
address as it is written, so "pierre dot dubois at gmail dot com" and
"pierre.dubois@gmail.com" get one marker.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["find_addresses", "find_spoken_emails"]


class Place(NamedTuple):
    """A value found: ``text[start:end]``, and its normalized form."""

    start: int
    end: int
    key: str


_SUFFIX = (
    r"(?:Street|St|Avenue|Ave|Av|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place"
    r"|Pl|Terrace|Ter|Circle|Cir|Parkway|Pkwy|Highway|Hwy|Trail|Trl|Square|Sq|Loop|Alley"
    r"|Row|Plaza|Crescent|Cres|Close|Gardens|Mews|Walk|Path|Pike|Expressway|Expy|Freeway"
    r"|Fwy|Broadway|Turnpike|Tpke|Run|Point|Pt|Crossing|Xing|Commons|Heights|Hts)\.?"
)
_DIRECTION = (
    r"(?:N|S|E|W|NE|NW|SE|SW|North|South|East|West|Northeast|Northwest|Southeast|Southwest)\.?"
)
_WORD = r"(?:[A-Z][A-Za-z'\u2019.-]*|\d+(?:st|nd|rd|th)|[A-Z]+)"
_NUMBER = r"\d{1,6}[A-Za-z]?(?:-\d{1,4})?"
_UNIT = (
    r"(?:,?\s(?:Apt|Apartment|Suite|Ste|Unit|Fl|Floor|Room|Rm|Bldg|Building)\.?\s?#?[A-Za-z0-9-]+"
    r"|\s#\s?[A-Za-z0-9-]+)"
)
_STATES = (
    "AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH "
    "NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC PR"
).replace(" ", "|")
_CITY = r"[A-Z][a-z]+(?:\s[A-Z][a-z]+){0,2}"
_UK_POSTCODE = r"[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}"
_TAIL = (
    rf"(?:,?\s{_CITY},?\s(?:{_STATES})(?:\s\d{{5}}(?:-\d{{4}})?)?(?![A-Za-z])"
    rf"|,\s{_CITY}(?:,?\s{_UK_POSTCODE}|\s\d{{5}})?(?![A-Za-z])|\s\d{{5}}(?:-\d{{4}})?(?!\d))"
)
_STREET = re.compile(
    rf"(?<![\w$€£.,:/-]){_NUMBER}\s(?:{_DIRECTION}\s)?(?:{_WORD}\s){{1,4}}{_SUFFIX}"
    rf"(?![\w'-])(?:\s{_DIRECTION}(?![\w']))?(?:{_UNIT})?(?:{_TAIL})?"
)
# In lower case only the plain street types, after words that are no quantity's: "1790
# bucks their way" and "a 20 minute drive" are no addresses.
_LOWER_SUFFIX = (
    r"(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|highway|hwy|parkway"
    r"|pkwy|terrace)\.?"
)
_NOT_A_STREET_WORD = (
    r"(?!(?:their|my|your|our|his|her|its|the|a|an|this|that|these|those|per|for|to|of|and"
    r"|or|in|on|at|by|with|from|dollars|bucks|euros|pounds|people|persons|guests|nights|days"
    r"|minutes?|mins?|hours?|hrs?|miles?|km|seconds?|weeks?|tickets|seats|rooms|times)\b)"
)
_STREET_LOWER = re.compile(
    rf"(?<![\w$€£.,:/-])\d{{2,6}}[a-z]?\s(?:{_NOT_A_STREET_WORD}[a-z]+\s){{1,3}}"
    rf"{_LOWER_SUFFIX}(?![\w'-])"
    rf"(?:{_UNIT.lower()})?"
)
_CONTINENTAL = re.compile(
    r"(?<![\w-])(?:[A-ZÄÖÜ][a-zäöüß]+(?:straße|strasse|str\.|weg|gasse|platz|allee|damm)"
    r"\s\d{1,4}[a-z]?|\d{1,4}(?:\sbis)?,?\s(?:rue|avenue|av\.|boulevard|bd|place|allée|impasse"
    r"|chemin|quai|cours)\s(?:(?:de la|de l'|des|du|de|la|le|l')\s?)?"
    r"[A-ZÉ][\w'\u2019-]+(?:\s[A-Z][\w'\u2019-]+)*)"
    r"(?:,?\s\d{5}\s[A-Z][a-zäöüéè]+(?:[\s-][A-Z][a-zäöüéè]+)?)?"
)
_PO_BOX = re.compile(r"\b(?:P\.?\s?O\.?\s?Box|Post Office Box)\s#?\d{1,7}\b", re.IGNORECASE)


_DIGIT = re.compile(r"\d")


def find_addresses(text: str) -> list[Place]:
    """Street addresses (US, British, German, French) and post office boxes."""
    if _DIGIT.search(text) is None:
        return []
    found = []
    for pattern in (_STREET, _STREET_LOWER, _CONTINENTAL, _PO_BOX):
        for match in pattern.finditer(text):
            value = match.group().rstrip(" ,.")
            found.append(Place(match.start(), match.start() + len(value), _key(value)))
    return found


def _key(value: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", value.lower()))


_TLDS = (
    "com net org edu gov mil int io co uk us ca au de fr es it nl be ch at se no dk fi ie pl "
    "pt br mx ar in jp cn kr ru za nz sg hk info biz me tv app dev ai eu"
).replace(" ", "|")
_PROVIDERS_WORDS = (
    "gmail googlemail yahoo ymail hotmail outlook live msn aol icloud me mac proton "
    "protonmail pm gmx web mail zoho yandex comcast verizon att sbc"
)
_PROVIDERS = _PROVIDERS_WORDS.split()
_DOT = r"(?:\s(?:dot|period)\s|\s?\[dot\]\s?|\s?\(dot\)\s?|\.)"
_JOIN = r"(?:\s(?:dot|period|underscore|dash|hyphen)\s|\s?\[dot\]\s?|\.|_|-)"
_AT = r"(?P<at>\s(?:at)\s|\s?\[at\]\s?|\s?\(at\)\s?|\s@\s)"
_SPOKEN = re.compile(
    rf"(?<![\w.@-])(?P<box>[a-z0-9]+(?:{_JOIN}[a-z0-9]+)*(?:\s\d{{1,4}})?){_AT}"
    rf"(?P<domain>[a-z0-9][a-z0-9-]*(?:{_DOT}[a-z0-9][a-z0-9-]*)*{_DOT}(?:{_TLDS}))(?![\w@-])",
    re.IGNORECASE,
)
_SPOKEN_WORDS = {"dot": ".", "period": ".", "underscore": "_", "dash": "-", "hyphen": "-"}


def find_spoken_emails(text: str) -> list[Place]:
    """E-mail addresses with 'at' and 'dot' said in words; the key is the written address."""
    lowered = text.lower()
    if " at " not in lowered and "[at]" not in lowered and "(at)" not in lowered:
        return []
    found = []
    for match in _SPOKEN.finditer(text):
        box, domain = _written(match.group("box")), _written(match.group("domain"))
        plain = re.fullmatch(r"[a-z0-9]+", box, re.IGNORECASE) is not None
        spoken_domain = re.search(r"\s(?:dot|period)\s|\[dot\]|\(dot\)", match.group("domain"))
        bracketed = match.group("at").strip() in ("[at]", "(at)")
        known = domain.split(".")[0].lower() in _PROVIDERS
        if plain and not (known or spoken_domain or bracketed):
            continue
        found.append(Place(match.start(), match.end(), f"{box}@{domain}".lower()))
    return found


def _written(spoken: str) -> str:
    """'pierre dot dubois' as 'pierre.dubois' (and brackets, underscores, spaces)."""
    for word, sign in _SPOKEN_WORDS.items():
        spoken = re.sub(rf"\s{word}\s", sign, spoken, flags=re.IGNORECASE)
    return re.sub(r"\s|\[|\]|\(|\)", "", re.sub(r"\[dot\]|\(dot\)", ".", spoken, flags=re.I))
