"""Text evidence the rules arbiter reads: normalised tokens, keyword matches, values of an answer shape, table rows.

Pure functions over strings, so the rules stay explainable: every score in a verdict traces back to one of these.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

# Words (tasks.words) and term matching (tasks.terms) are what detection reads too; the arbiter's modules use them as
# ``ev.tokens`` etc.
from tasks.questions.distinct import (  # noqa: F401  (the arbiter's reading of a question, in one import)
    YEAR_RE,
    absence_terms,
    asked_keywords,
    distinctive_terms,
    question_framing,
    question_terms,
    without_examples,
)
from tasks.terms import (  # noqa: F401
    absent_terms,
    carries,
    is_acronym,
    is_notation,
    near_token,
    nearest,
    stated,
    vocabulary,
)
from tasks.words import SCAFFOLD, content_tokens, normalise, stem, tokenize, tokens  # noqa: F401

_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_MONTHS_ABBR = "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
AMOUNT_RE = re.compile(
    rf"(?:[$€£¥]\s?|\b(?:usd|eur|gbp)\s?)?(?<![\w.])({_NUMBER})"
    r"(?:\s?(%|percent\b|million\b|billion\b|bn\b|m\b|k\b))?",
    re.IGNORECASE,
)
DATE_RE = re.compile(
    rf"\b(?:\d{{1,2}}\s+(?:{_MONTHS}|{_MONTHS_ABBR})\.?(?:,?\s+\d{{4}})?"
    rf"|(?:{_MONTHS}|{_MONTHS_ABBR})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    rf"|(?:{_MONTHS})\s+\d{{4}}"
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}|q[1-4]\s+\d{4}|(?:19|20)\d{2})\b",
    re.IGNORECASE,
)
_BOOLEAN_CUES = frozenset(
    "yes no not never none must shall required requires prohibited allowed permitted cannot true false only".split()
)
_ENTITY_RE = re.compile(r"(?<![.!?]\s)\b[A-Z][A-Za-z0-9&'.-]*[A-Za-z0-9](?:\s+[A-Z][A-Za-z0-9&'.-]*[A-Za-z0-9])*")
_LIST_RE = re.compile(r"^\s*(?:[-•*●▪]|\(?\d{1,2}[.)]|\(?[a-h][.)])\s+")


def keyword_score(keyword_tokens: list[str], text_tokens: list[str], text_set: set[str] | None = None) -> float:
    """1.0 when the keyword occurs as a phrase; for multi-word keywords, 0.8 x the share of its tokens present."""
    if not keyword_tokens:
        return 0.0
    text_set = text_set if text_set is not None else set(text_tokens)
    n = len(keyword_tokens)
    if n == 1:
        return 1.0 if keyword_tokens[0] in text_set else 0.0
    first = keyword_tokens[0]
    for i, tok in enumerate(text_tokens):
        if tok == first and text_tokens[i : i + n] == keyword_tokens:
            return 1.0
    present = sum(1 for t in keyword_tokens if t in text_set)
    return 0.8 * present / n


WINDOW = 3  # lines of a co-occurrence window: a sentence of a PDF paragraph rarely spans more


def rarity(terms: list[str], token_sets: list[set[str]]) -> dict[str, float]:
    """Each term's weight over a pool, 1 + log((N+1)/(df+1)): in every candidate -> ~1, in one of 30 -> ~3.7 (a
    word every candidate carries tells them apart least)."""
    n = len(token_sets)
    return {t: 1.0 + math.log((n + 1) / (sum(1 for s in token_sets if t in s) + 1)) for t in terms}


def weighted_share(terms: list[str], weights: dict[str, float], present: set[str]) -> float:
    """The rarity-weighted share of ``terms`` in ``present`` (a term without a weight counts 1)."""
    total = sum(weights.get(t, 1.0) for t in terms)
    return sum(weights.get(t, 1.0) for t in terms if t in present) / total if total else 0.0


@dataclass(frozen=True)
class Keyword:
    text: str
    toks: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> "Keyword | None":
        toks = tuple(content_tokens(text))
        return cls(text, toks) if toks else None


def parse_keywords(items: list[str]) -> list[Keyword]:
    seen: set[tuple[str, ...]] = set()
    out = []
    for item in items:
        kw = Keyword.parse(item)
        if kw and kw.toks not in seen:
            seen.add(kw.toks)
            out.append(kw)
    return out


# -- values of an answer shape ---------------------------------------------------------------------------------
def amounts(text: str) -> list[str]:
    """Numbers, normalised ('$12,500' -> '$12500', '28.4 %' -> '28.4%'); bare years and section numbers
    ('Section 3.1') are skipped. When some numbers carry a currency or unit, only those are returned: in
    'Section 3.1 ... a fee of $14,000' the amount is $14,000."""
    with_unit, bare = [], []
    text = normalise(_HEADING_NUMBER.sub(" ", text))
    # the day of a date ("March 1, 2024") and a page count ("Page 4 of 4") are not quantities
    taken = [(d.start(), d.end()) for d in DATE_RE.finditer(text)] + \
        [(d.start(), d.end()) for d in _PAGE_OF.finditer(text)]
    for m in AMOUNT_RE.finditer(text):
        num, unit = m.group(1), (m.group(2) or "").lower()
        raw = num.replace(",", "")
        lead = m.group(0).strip()
        money = lead[:1] if lead[:1] in "$€£¥" else lead[:3] if lead[:3] in ("usd", "eur", "gbp") else ""
        before = text[max(0, m.start() - 12) : m.start()]
        if not unit and not money and (YEAR_RE.fullmatch(raw) or _SECTION_REF.search(before)
                                       or any(a <= m.start(1) < b for a, b in taken)):
            continue
        unit = {"percent": "%", "bn": "billion", "m": "million"}.get(unit, unit)
        value = ("$" if money in ("$", "usd") else money) + raw + unit
        (with_unit if unit or money else bare).append(value)
    return with_unit or bare


# '3.2 Expenses.' / '4. Term' at the start of a line: a heading's number, not a quantity
_HEADING_NUMBER = re.compile(r"(?m)^\s*\d+(?:\.\d+)*\.?(?=\s+[A-Z])")
_PAGE_OF = re.compile(r"\bpage\s+\d+\s+of\s+\d+\b")
_SECTION_REF = re.compile(r"\b(?:section|sections|article|clause|§|table|figure|fig\.|page|item|no\.)\s*$")


def prefer_units(values: list[str]) -> list[str]:
    """Amounts with a currency or unit when there are any (across lines, as ``amounts`` does within one)."""
    with_unit = [v for v in values if v[:1] in "$€£¥" or not v[-1:].isdigit()]
    return with_unit or values


def dates(text: str) -> list[str]:
    return [" ".join(m.group(0).lower().replace(",", " ").split()) for m in DATE_RE.finditer(normalise(text))]


def values_of_shape(text: str, shape: str, question_tokens: frozenset[str] = frozenset()) -> list[str]:
    """Values of the asked answer shape found in ``text`` (empty when the shape needs none: 'text')."""
    if shape in ("amount", "comparison"):
        return amounts(text)
    if shape == "date":
        return dates(text)
    if shape == "boolean":
        return [t for t in re.findall(r"[a-z]+", normalise(text)) if t in _BOOLEAN_CUES]
    if shape == "entity":
        found = []
        for m in _ENTITY_RE.finditer(unicodedata.normalize("NFKC", text)):
            toks = set(content_tokens(m.group(0)))
            if toks and not toks <= question_tokens:
                found.append(m.group(0))
        return found + amounts(text)
    if shape == "list":
        return ["item"] if _LIST_RE.match(text) or text.count(",") >= 2 else amounts(text)
    return []


def shape_needs_value(shape: str) -> bool:
    return shape != "text"


def expansion(letters: str, texts: list[list[str]]) -> tuple[str, ...] | None:
    """The run of tokens whose initials spell ``letters`` most often in ``texts`` ('ppe' -> property, plant,
    equipment), a letter standing for a function word ('o' of 'of', 'a' of 'and') allowed to be missing; None
    when no run has them. Runs are of words of three letters or more, which an acronym abbreviates."""
    wanted = {letters} | {letters[:i] + letters[i + 1 :] for i in range(1, len(letters) - 1) if letters[i] in "oa"}
    counts: dict[tuple[str, ...], int] = {}
    for ts in texts:
        for n in {len(w) for w in wanted}:
            for i in range(len(ts) - n + 1):
                run = tuple(ts[i : i + n])
                if "".join(w[0] for w in run) in wanted and all(len(w) >= 3 and w.isalpha() for w in run):
                    counts[run] = counts.get(run, 0) + 1
    return max(counts, key=lambda r: (counts[r], r)) if counts else None


# -- tables --------------------------------------------------------------------------------------------------------
_CELL_NUMBER = re.compile(r"(?<![\w.])[-+]?\$?\d[\d,]*(?:\.\d+)?%?(?![\w.])")


def numeric_cells(line: str) -> int:
    return len(_CELL_NUMBER.findall(line))


def is_table_row(line: str) -> bool:
    """Several numeric cells on one line: the shape of a table row flattened by the PDF parser."""
    return numeric_cells(line) >= 3


def is_header_line(line: str) -> bool:
    """A line of labels: at least two words and at most one number."""
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z%()/-]+", line)]
    return len(words) >= 2 and numeric_cells(line) <= 1


# -- text addressed to the model ----------------------------------------------------------------------------------
_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+)?(?:previous|prior|above|earlier|"
    r"preceding|system|original)\s+(?:instructions?|prompts?|rules|messages?|directions)"
    r"|\b(?:mark|rank|rate|label|classify|treat|flag|score)\s+(?:this|the)\s+(?:passage|chunk|candidate|snippet|"
    r"document|text|page)\s+(?:as|a|an|with)\b"
    r"|\b(?:you\s+are\s+now|act\s+as|pretend\s+to\s+be)\s+(?:an?\s+|the\s+)?(?:ai|assistant|arbiter|model|llm|"
    r"language\s+model)\b"
    r"|\b(?:system\s+prompt|new\s+instructions|relevance(?:\s+score)?\s+(?:to|of|=)\s*1(?:\.0)?\b)",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=:)[ \t]*\n|(?<=:)[ \t]+(?=[A-Z])")


def strip_instructions(lines: list[str]) -> tuple[list[str], list[str]]:
    """Blank every sentence that addresses the model ('ignore previous instructions...'), keeping line breaks.

    Such a sentence is not a statement about the document's subject, so it is no evidence either way: a planted
    value next to it ('the premium is $1') must not make a passage primary. Returns the lines and the sentences.
    """
    text = "\n".join(lines)
    if not _INJECTION.search(text):
        return lines, []
    found: list[str] = []
    out, pos = [], 0
    bounds = [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]
    for end in bounds:
        sentence = text[pos:end]
        if _INJECTION.search(sentence):
            found.append(" ".join(sentence.split()))
            sentence = "".join(ch if ch == "\n" else " " for ch in sentence)
        out.append(sentence)
        pos = end
    return "".join(out).split("\n"), found
