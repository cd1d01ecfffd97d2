"""Text evidence the rules arbiter reads: normalised tokens, keyword matches, values of an answer shape, table rows.

Pure functions over strings, so the rules stay explainable: every score in a verdict traces back to one of these.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

# Term matching lives in tasks.terms (detection reads it too); the arbiter's modules use it as ``ev.tokens`` etc.
from schemas.contracts import ParsedQuestion
from tasks.questions.framing import FORMULA_WORDS, Framing, frame_question, is_role
from tasks.questions.parser import asked_measure
from tasks.terms import (  # noqa: F401
    SCAFFOLD,
    absent_terms,
    carries,
    content_tokens,
    is_acronym,
    is_notation,
    near_token,
    nearest,
    normalise,
    stated,
    stem,
    tokenize,
    tokens,
    vocabulary,
)

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
YEAR_RE = re.compile(r"\b(?:19|20)\d{2}\b")
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


# -- question terms ----------------------------------------------------------------------------------------------
_REF_WORDS = frozenset("""figure fig table page pages section chapter appendix unit step item exhibit slide equation eq
note article clause part annex schedule""".split())
_MONTH_NAMES = frozenset(_MONTHS.split("|")) | frozenset(_MONTHS_ABBR.split("|"))
_PLACEHOLDER = re.compile(r"^[YMDHS]+(?:[-/:.][YMDHS]+)+$")


def _is_code(word: str) -> bool:
    """An identifier mixing capitals and digits ('CA03', 'GPT-4', 'Prover9'), not a structure reference
    ('Table1-1') nor an ordinal-like word ('top2')."""
    letters = re.match(r"[A-Za-z]+", word)
    return bool(letters) and any(c.isupper() for c in word) and any(c.isdigit() for c in word) \
        and letters.group(0).lower() not in _REF_WORDS
_SPECIFIC_NUMBER = re.compile(r"^\$?(?:(?:19|20)\d\d|\d{3,}|\d[\d,]*\.\d+|\d[\d,.]*%)$")


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


def question_framing(question: ParsedQuestion) -> Framing:
    """The question's ask, framing and definitions: the parser's, or split from the text for a question stored
    before the parser split it (the split is a function of the text, so both agree)."""
    if question.ask:
        return Framing(question.ask, list(question.framing), dict(question.definitions))
    return frame_question(question.text)


def question_terms(question: ParsedQuestion) -> list[str]:
    """:func:`distinctive_terms` of the question's ask, without the terms it defines."""
    framed = question_framing(question)
    return distinctive_terms(question.text, question.keywords_primary, framed.ask, list(framed.definitions))


def asked_keywords(question: ParsedQuestion, keywords: list[str]) -> list[str]:
    """The ``keywords`` that the question's ask, its definitions or its instructions state (an instruction may
    point to a source: 'relying on the cash flow statement'; a role given to the reader is no part of it),
    without notation words ('Q3 FY2023', 'USD millions' dropped; 'FCF YTD' -> 'FCF') and without the wording of
    a definition or an instruction itself ('defined', 'plus', 'relying')."""
    framed = question_framing(question)
    instructions = [s for s in framed.framing if not is_role(s)]
    scope = " ".join([framed.ask, *dict.fromkeys(framed.definitions.values()), *instructions]).lower()
    out = []
    for kw in keywords:
        words = [w for w in kw.split() if not is_notation(w) and w.lower() not in FORMULA_WORDS]
        if words and not is_notation(kw) and stated(scope, kw):
            out.append(" ".join(words))
    return out


def absence_terms(question: ParsedQuestion) -> list[str]:
    """The question's terms whose absence from a document says the subject is missing: :func:`question_terms`
    without an acronym naming the measure it asks for ('What was X's COGS ...', 'Compute X's DPO'), which is
    computed from the document as often as printed in it. Any other acronym stays: a document that lacks it
    and every spelling out of it (tasks.terms.carries) lacks the thing it names (a dataset, a programme)."""
    measure = {w.strip("%") for w in asked_measure(question.text)}
    return [t for t in question_terms(question) if not (is_acronym(t) and t.lower().strip("%") in measure)]


def distinctive_terms(question_text: str, keywords: list[str], ask: str | None = None,
                      defined: list[str] | None = None) -> list[str]:
    """The question's keywords that name something specific, which a passage answering it must carry.

    Taken from the parser's keywords (answer-format instructions are already gone there) that the question's
    ``ask`` states (the whole text when not given: role-play, instructions and definitions are not the ask):
    years, numbers of three digits or more, decimals and percentages; codes mixing letters and digits; names
    (words capitalised inside the question, or kept upper-case by the parser). Not terms: references to the
    document's own structure ('figure 3', 'page 14': the PDF's text rarely repeats them next to the answer);
    notations of a period, currency or scale ('FY2023Q1', 'USD mn', '$M', 'YTD': documents write their own,
    see :func:`tasks.terms.is_notation`), also as words of a longer term ('FCF YTD' -> 'FCF'); terms the
    question ``defined`` (computed, not printed). Terms inside a longer term are dropped ('4' inside 'GPT-4').
    """
    text = unicodedata.normalize("NFKC", ask if ask else question_text)
    letters = [c for c in text if c.isalpha()]
    shouting = bool(letters) and sum(c.isupper() for c in letters) > 0.6 * len(letters)
    asked = without_examples(text).lower()
    defined_keys = {tuple(tokens(d)) for d in defined or []}
    terms: list[str] = []
    for kw in keywords:
        words = [w for w in kw.split() if not is_notation(w)]
        if not words or words[0].lower() in _REF_WORDS or is_notation(kw):
            continue  # 'figure 3', 'table datasets': the layout, not the subject; 'Q3 FY2023', 'USD': a notation
        if len(words) < len(kw.split()):
            kw = " ".join(words)
        if tuple(tokens(kw)) in defined_keys or not stated(asked, kw):
            continue
        if any(ch.isdigit() for ch in kw):
            # a number quoted only in an answer-format example ('e.g. ["3.0", "2.0"]') is not asked about
            if len(words) == 1 and (_SPECIFIC_NUMBER.match(kw) or _is_code(kw)):
                terms.append(kw)
            continue
        if _PLACEHOLDER.match(kw):  # an answer format such as YYYY-MM-DD
            continue
        # a name: every word kept upper-case by the parser (an acronym) or capitalised inside the question
        if all(any(c.isupper() for c in w) or (not shouting and _capitalised_in(w, text)) for w in words) \
                and not (len(words) == 1 and kw.lower() in _MONTH_NAMES):
            terms.append(kw)
    # a year the question states but the parse left out (e.g. one in a sentence read as a format instruction)
    terms += [y for y in YEAR_RE.findall(asked) if y not in terms]
    keys = {t: tuple(tokens(t)) for t in terms}
    out: list[str] = []
    for t in terms:
        key = keys[t]
        if not key or any(k != key and _contains(k, key) for k in keys.values()) or key in [keys[o] for o in out]:
            continue
        out.append(t)
    return out


_EXAMPLE = re.compile(
    r"\b(?:e\.g\.|for example|for instance|example)\s*[:,]?\s*(?:\[[^\]]*\]|\"[^\"]*\"|'[^']*'|[^.?!\n]*(?:[.?!](?!\s)[^.?!\n]*)*)",
    re.IGNORECASE,
)


_QUOTED_LIST = re.compile(r"\[\s*[\"'‘“][^\]]*\]")


def without_examples(question_text: str) -> str:
    """The question without its answer-format examples: 'e.g. ["3.0", "2.0"]', 'For example: 1883 Dec.7, 2 8 p.m.'
    (after such a cue, the quoted or bracketed example only, otherwise the rest of the sentence), and any bracketed
    list of quoted items ('in a list like ['2006', '2007']')."""
    return _QUOTED_LIST.sub(" ", _EXAMPLE.sub(" ", question_text))


def _capitalised_in(word: str, text: str) -> bool:
    """Every occurrence of ``word`` in ``text`` is capitalised, and not only because it opens a sentence."""
    # str.find with explicit word edges, not a regex per word: questions' words overflow re's pattern cache, and
    # compiling one pattern per word was 11% of a concurrent run's interpreter time (benchmarks/throughput.py)
    low, key, n = text.lower(), word.lower(), len(word)
    if len(low) != len(text):  # a letter whose lower case is longer shifts the offsets: match by regex instead
        found = [m.start() for m in re.finditer(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE)]
    else:
        found = [i for i in _find_all(low, key) if not (i and _word_char(low[i - 1]))
                 and not (i + n < len(low) and _word_char(low[i + n]))]
    if not found or any(not text[i:i + 1].isupper() for i in found):
        return False
    return any(text[:i].rstrip()[-1:] not in ("", ".", "?", "!", ":", '"') for i in found)


def _find_all(text: str, key: str) -> list[int]:
    out, i = [], text.find(key)
    while i != -1:
        out.append(i)
        i = text.find(key, i + 1)
    return out


def _word_char(c: str) -> bool:
    return c.isalnum() or c in "_-"


def _contains(longer: tuple[str, ...], shorter: tuple[str, ...]) -> bool:
    n = len(shorter)
    return len(longer) > n and any(longer[i : i + n] == shorter for i in range(len(longer) - n + 1))


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
