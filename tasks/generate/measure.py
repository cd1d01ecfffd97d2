"""The measure a question asks: its words that name *what* is measured, apart from those that say whose, when and in
what unit it is.

"What operating income did Apple's Americas segment report for the three months ended December 31, 2022?" asks the
measure "operating income" of "Americas"; "Apple's" says whose, "three months ended December 31, 2022" when, and
"segment" and "report" only frame the ask. A value answers only where the words around it name the whole measure: a
table row whose label (with the heading of its block) names every measure word, or a sentence that names every one.
A sentence that names the period and the company but another measure ("$3.4 billion of revenue recognized in the
three months ended December 31, 2022") states someone else's figure; so does a row labelled "Net service sales"
for "third-party seller services net sales".
"""

from __future__ import annotations

import functools
import re

from tasks.generate.sentences import STOPWORDS, TOKEN_RE, matched, stem
from tasks.questions.framing import frame_question

# when: periods, dates and their words
_PERIOD = re.compile(
    r"(?i)^(?:(?:q[1-4]|[1-4]q|h[12]|[1-4]h|\d{1,2}m|ytd)(?:fy)?'?\d{0,4}(?:q[1-4])?|fy\S*|\d[\d,.]*|first|second|third|fourth|quarters?|quarterly|"
    r"months?|three|six|nine|twelve|years?|annual|half|fiscal|calendar|period|ended|ending|end|date|dates|"
    r"year-to-date|same|prior|previous|earlier|ago|latest|current|recent|most|jan(?:uary)?|feb(?:ruary)?|"
    r"mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|"
    r"dec(?:ember)?|through|between|during|since|until)$")
# how the ask is framed, in what unit: no part of the measure
_FRAME = re.compile(
    r"(?i)^(?:value|values|amount|amounts|figure|figures|balance|sheet|sheets|statements?|report|reported|reports|"
    r"reporting|record|recorded|disclose|disclosed|line|item|segment|segments|company|company's|consolidated|"
    r"condensed|total|totals|usd|dollars?|millions?|billions?|thousands?|mn|bn|m|b|k|mm|percent|percentage|"
    r"respectively|carrying|carry|carried|hold|held|post|posted|book|booked|number|level|unaudited|filing|10-q|"
    r"quarter.s|stated|state|overall|"
    # a change or a relation asked: the direction is the value's own word ("increased 11%"), checked elsewhere
    r"change[sd]?|compare[sd]?|comparison|versus|vs|grow|grew|growth|increase[sd]?|decrease[sd]?|rise|rose|"
    r"decline[sd]?|divided|divide|plus|minus)$")
_SHARE_OF = re.compile(r"(?i)(?:what|as an?)\s+(?:share|portion|proportion|fraction|percentage|percent)\s+of")


# nouns of any expense or outlay that a table leaves to its heading ("Operating expenses:" over "Research and
# development"): they name no particular measure, so a row or sentence need not repeat them
_GENERIC = {stem(w) for w in ("expense", "expenses", "cost", "costs", "spend", "spent", "spending", "outlay")}
_DATED = re.compile(r"(?i)\b(?:as of|ended|ending|at)\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+"
                    r"\d{1,2},?\s+(?:19|20)\d\d\b|\b(?:three|six|nine|twelve)\s+months\b|\bQ[1-4]\b|\b[1-4]Q\b|"
                    r"\bFY\s?'?\d{2}|\b(?:first|second|third|fourth)\s+(?:fiscal\s+)?quarter\b|\bfiscal\s+(?:year\s+)?"
                    r"(?:19|20)\d\d\b|\bYTD\b|\b(?:first|second)\s+half\b|\b(?:H[12]|9M|6M)\b")


def asks_reported_figure(cls: str, q_text: str) -> bool:
    """An amount, a percentage or a number asked for a reporting period ("for the three months ended ...", "as of March 31,
    2023", "Q3 FY23"): a figure of periodic statements, where every value stands beside the measure it is of."""
    return cls in ("money", "percentage", "number", "count") and bool(_DATED.search(q_text))


def _acronym_named(acronym: str, text: str) -> bool:
    """An acronym of the question ("R&D", "MG&A") is named by the words it spells, in order, in ``text``."""
    letters = re.sub(r"[^a-z]", "", acronym.lower())
    initials = "".join(w[0] for w in re.findall(r"[a-z]+", text.lower()) if w not in STOPWORDS)
    return len(letters) >= 2 and letters in initials


# whose figure it is: a name written possessively ("Apple's") or as the one who reports it ("reported by Apple",
# "did Microsoft report")
_OWNER = re.compile(r"\b([A-Z][\w&.-]*)['’]s\b|\b(?:by|at)\s+([A-Z][\w&.-]*)\b(?!\s+[A-Z])|\b(?:did|does|has|had)\s+"
                    r"([A-Z][\w&.-]*)\s+(?:report|disclose|record|post|spend|pay|generate|earn|have|hold|declare|carry|own|owe|"
                    r"incur|book|recogni[sz]e|repurchase|issue|sell|invest|return|make|reach)")


def owners(text: str) -> set[str]:
    """The names (lower case) whose figure the question asks: written possessively ("Apple's") or as the one who
    reports it ("did Microsoft report")."""
    return {next(g for g in m.groups() if g).lower() for m in _OWNER.finditer(text)}


def measure_words(q_text: str, periods: bool = True) -> list[str]:
    """The stems of the question's words that name the measure: content words that are neither a period, nor a
    framing word, nor the name of whose measure it is (a capitalised name followed by 's: "Apple's"). A formula's
    operand names no period (``periods=False``): its "current" is the measure's ("total current assets")."""
    return list(_measure_words(q_text, periods))


@functools.lru_cache(maxsize=256)  # asked again for every table row of every passage a question is read in
def _measure_words(q_text: str, periods: bool) -> tuple[str, ...]:
    ask = frame_question(q_text).ask or q_text  # a role or an instruction around the ask names no measure
    owners_ = owners(ask)
    out = []
    tokens = TOKEN_RE.findall(_SHARE_OF.sub(" ", ask).lower())
    for i, tok in enumerate(tokens):
        bare = re.sub(r"['’]s$", "", tok)
        if tok in STOPWORDS or bare in STOPWORDS or bare in owners_ or _FRAME.match(bare) \
                or (_PERIOD.match(bare) if periods else re.fullmatch(r"[\d,.]+", bare)):
            continue
        # "cost of sales" names a measure of its own; "R&D expense", "spent on marketing" do not
        if stem(bare) not in _GENERIC or tokens[i + 1:i + 2] == ["of"]:
            out.append(stem(bare))
    return tuple(dict.fromkeys(out))


_DEFINED_ACRONYM = re.compile(r"(?<![\w'’])((?:[A-Za-z][\w-]*\s+(?:and\s+|&\s+)?){1,6})\(([A-Z][A-Za-z&]{1,7})\)")


def unnamed(words: list[str], text: str, q_text: str = "") -> list[str]:
    """The measure words ``text`` does not name (a word of the question is named by its stem, a prefix or a near
    spelling, ``sentences.same``). An acronym the question defines ("Network and Edge (NEX)") names its words, and
    its words name it."""
    pool = {stem(t) for t in TOKEN_RE.findall(text.lower())}
    for tok in TOKEN_RE.findall(text.lower()):  # "third-party" names "third" and "party"
        pool |= {stem(p) for p in tok.split("-") if p}
    found = matched(words, pool)
    for m in _DEFINED_ACRONYM.finditer(q_text):
        long = [stem(t) for t in TOKEN_RE.findall(m.group(1).lower()) if t not in STOPWORDS]
        acronym = stem(m.group(2).lower())
        if re.search(rf"\b{re.escape(m.group(2))}\b", text) or (long and set(matched(long, pool)) == set(long)):
            found |= set(long) | {acronym}
    return [w for w in words if w not in found and not ("&" in w and _acronym_named(w, text))]
