"""Passages as the extractive reader reads them: numbered lines joined into sentences, and the question's terms
matched in each sentence (coverage), so a value is judged by the sentence that states it, not by a line cut.

A PDF line is often half a sentence, and a sentence often spans two lines; headings, list items and table cells
are units of their own. Term matching is lenient where spelling is (plurals and -ing/-ed, irregular verbs,
one-letter variants such as instalment/installment), never across unrelated words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from tasks import words
from tasks.questions.lexicon import MONTHS
from tasks.terms import near_token

# The reader's stopwords (tasks.words): function words, the verbs a question asks with ('show', 'give') and the words
# it points at its document with ('report', 'page'); not the relational words ('before', 'not', 'only', 'more'),
# which change what a sentence states, nor the telling verbs ('state', 'list': nouns in a document)
STOPWORDS = words.FUNCTION_WORDS | words.SHOWING_VERBS | words.DOCUMENT_WORDS
TOKEN_RE = words.WORD_TOKEN
# Common English equivalents a question and a document use for one notion (not a domain list): each word's stem maps
# to the stem of the group's first word.
_SAME_MEANING = [("annual", "yearly", "annually"), ("monthly", "month"), ("weekly", "week"), ("daily", "day"),
                 ("terminate", "end", "termination", "cancel", "cancellation"),
                 ("begin", "start", "commence", "commencement"), ("purchase", "buy"), ("employee", "staff"),
                 ("cost", "price"), ("fee", "charge"), ("permit", "allow"), ("reimburse", "reimbursement"),
                 ("receive", "get"), ("approve", "approval"), ("hire", "recruit")]
_CANON = {words.stem(w): words.stem(group[0]) for group in _SAME_MEANING for w in group}
_SENTENCE_END = re.compile(r"[.!?;](?=\s+[A-Z0-9(\"“‘$€£]|\s*$)")
_ABBREVIATIONS = {"no", "co", "inc", "ltd", "vs", "mr", "ms", "mrs", "dr", "st", "jr", "sr", "etc", "approx", "fig",
                  "e.g", "i.e", "u.s", "corp", "dept", "est", "vol", "art", "sec", "para", "p", "pp", "max", "min", "ca",
                  "nos", "ref", "tel", "ext"}


def _ends(text: str):
    """Sentence ends in one line: '.', '!', '?' or ';' before a capital, a digit or the line end, not after an
    abbreviation or an initial."""
    for m in _SENTENCE_END.finditer(text):
        word = re.search(r"([\w.]+)$", text[: m.start()])
        w = word.group(1).lower() if word else ""
        if m.group(0) == "." and (w in _ABBREVIATIONS or (len(w) == 1 and w.isalpha())
                                  or re.fullmatch(r"[\d.]+", w) and not text[: m.start() - len(w)].strip()):
            continue
        yield m
_BULLET_START = re.compile(r"^\s*(?:[•·▪◦●○■□➢►▶✓✔\-\*–—]\s+|\(?(?:\d{1,2}|[a-z])[.)]\s+(?=[A-Z\"“]))")
_HEADING_START = re.compile(r"^\s*(?:\d{1,2}(?:\.\d{1,2})*\.?|ARTICLE\s+[IVXLC\d]+|PART\s+[IVXLC\d]+|Item\s+\d+)\s")


@lru_cache(maxsize=1 << 17)  # pure, called per word of every passage sentence (200k calls for 256 questions)
def stem(word: str) -> str:
    """The reader's stem of a word as written (quotes and a possessive 's dropped): the shared stem
    (``tasks.words.stem``), an irregular form with a second reading taken as the verb (``AMBIGUOUS_FORMS``: in a
    sentence that answers a question, 'rose' is the verb the question asks with 'rise'), an adverb read as its
    adjective ('quarterly' states 'quarter'), and the words of one notion (``_SAME_MEANING``) made one."""
    w = word.lower().strip("'’.")
    w = re.sub(r"['’]s$", "", w)
    w = words.AMBIGUOUS_FORMS.get(w, w)
    base = words.stem(w)
    if base not in _CANON and len(w) > 5 and w.endswith("ly"):
        base = words.stem(w[:-2])
    if base not in _CANON and len(base) > 4 and base[-1] == base[-2] == "l":
        base = base[:-1] if base[:-1] in _CANON else base  # 'cancelled' (British): the synonym of 'cancel'
    return _CANON.get(base, base)


def stems(text: str) -> set[str]:
    return {stem(t) for t in TOKEN_RE.findall(text.lower())}


@lru_cache(maxsize=200_000)
def same(a: str, b: str) -> bool:
    """Two stems name the same word: equal, one a prefix of the other (4+ letters), or one typo apart (7+)."""
    if a == b:
        return True
    if min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)):
        return True
    return min(len(a), len(b)) >= 7 and near_token(a, {b})


def matched(words: list[str], pool: set[str]) -> set[str]:
    return {w for w in words if w in pool or any(same(w, t) for t in pool)}


@dataclass(eq=False)  # identity: the same line object is one line, whatever its text
class PLine:
    pidx: int
    passage: dict[str, Any]
    line_no: int
    page: int
    text: str
    stems: set[str] = field(default_factory=set)


_PAGE_NUMBER_END = re.compile(r"(?i)\s*\b(?!(?:19|20)\d\d$)(?:\d{1,4}|[ivxlc]{1,6})\s*$")  # a year is no page number
_COPYRIGHT = re.compile(r"(?i)©|\(c\)\s*(?:19|20)\d\d|\bcopyright\b|\ball rights reserved\b")


def furniture_lines(lines: list[PLine]) -> set[int]:
    """The ids of the page furniture among ``lines``, whose values are not statements of their passage: a running
    header or footer (a line of three words or more, month names aside, printed again with another page number:
    a sentence a document repeats word for word is not one) and a copyright notice ("Issue 01 (2020-09-07)
    Copyright © Huawei ... 34": its date is the edition's)."""
    printed: dict[str, set[str]] = {}
    for ln in lines:
        printed.setdefault(_PAGE_NUMBER_END.sub("", ln.text.strip()), set()).add(ln.text.strip())
    return {id(ln) for ln in lines if _COPYRIGHT.search(ln.text) or (
        len(printed[key := _PAGE_NUMBER_END.sub("", ln.text.strip())]) >= 2
        and len([w for w in re.findall(r"[A-Za-z]{2,}", key) if w.lower() not in MONTHS]) >= 3)}


@dataclass
class Sentence:
    """One sentence (or heading, list item, table cell) of a passage: its text, the lines it spans, and where each
    line's text starts inside it."""

    pidx: int
    text: str
    lines: list[PLine]
    offsets: list[int]  # where each piece starts in ``text``
    starts: list[int]  # where each piece starts in its line's own text
    stems: set[str] = field(default_factory=set)


_ROW_END = re.compile(r"(?:[$€£¥]?\d[\d,.]*\s?(?:%|[A-Za-z]{1,3})?|[-–—])\s*$")


def _is_unit_line(text: str) -> bool:
    """A line that stands alone: a heading, a list item, or a table row (a short line ending in a figure, with no
    sentence end in it)."""
    if _BULLET_START.match(text) or _HEADING_START.match(text) and len(text.split()) <= 8:
        return True
    return bool(_ROW_END.search(text)) and len(text.split()) <= 10 and not re.search(r"[.;:]\s", text)


def _is_title_line(text: str, next_text: str) -> bool:
    """A short line with no sentence end, followed by a line that starts a sentence: a heading or a label."""
    return (len(text.split()) <= 5 and not re.search(r"[.,;:!?]\s*$", text) and not text.strip().islower()
            and bool(re.match(r"^\s*[A-Z]", next_text)))


def sentences(rows: list[PLine]) -> list[Sentence]:
    """The passage's lines joined and cut at sentence ends; a heading or list item starts a new unit."""
    out: list[Sentence] = []
    cur_lines: list[PLine] = []
    cur_offsets: list[int] = []
    cur_starts: list[int] = []
    buf = ""

    def flush() -> None:
        nonlocal buf, cur_lines, cur_offsets, cur_starts
        if buf.strip():
            out.append(Sentence(cur_lines[0].pidx, buf, cur_lines, cur_offsets, cur_starts, stems(buf)))
        buf, cur_lines, cur_offsets, cur_starts = "", [], [], []

    def add(ln: PLine, text: str, start: int, end: int) -> None:
        nonlocal buf
        piece = text[start:end]
        if not piece.strip():
            return
        lead = len(piece) - len(piece.lstrip())
        cur_lines.append(ln)
        cur_starts.append(start + lead)
        cur_offsets.append(len(buf) + (1 if buf else 0))
        buf = (buf + " " + piece.strip()) if buf else piece.strip()

    for k, ln in enumerate(rows):
        text = ln.text
        if not text.strip():
            continue
        nxt = rows[k + 1].text if k + 1 < len(rows) else ""
        if (_is_unit_line(text) or _is_title_line(text, nxt)
                or (cur_lines and (_is_unit_line(cur_lines[-1].text) or _is_title_line(cur_lines[-1].text, text)))):
            flush()
        start = 0
        for m in _ends(text):
            add(ln, text, start, m.end())
            flush()
            start = m.end()
        add(ln, text, start, len(text))
    flush()
    return out


class Terms:
    """The question's content words (primary keywords, else the question's words) and their coverage of a text."""

    def __init__(self, question: dict[str, Any], extra_stop: set[str] = frozenset()):
        written: list[str] = []
        for kw in question.get("keywords_primary") or []:
            written += [t for t in TOKEN_RE.findall(kw.lower()) if t not in STOPWORDS]
        if not written:
            written = [t for t in TOKEN_RE.findall((question.get("text") or "").lower()) if t not in STOPWORDS]
        # each stem as the question writes it, for the reasons a reader gives ("no sentence speaks about 'dogs'")
        self.written: dict[str, str] = {}
        for t in written:
            self.written.setdefault(stem(t), t)
        words = [stem(t) for t in written]
        self.words = [w for w in dict.fromkeys(words) if w not in extra_stop] or list(dict.fromkeys(words))
        self.secondary = list(dict.fromkeys(
            stem(t) for kw in question.get("keywords_secondary") or [] for t in TOKEN_RE.findall(kw.lower())
            if t not in STOPWORDS))

    def hits(self, pool: set[str]) -> set[str]:
        return matched(self.words, pool)

    def as_written(self, stems_: list[str]) -> list[str]:
        """Question stems as the question writes them."""
        return [self.written.get(w, w) for w in stems_]

    def coverage(self, pool: set[str], context: set[str] = frozenset()) -> tuple[float, int]:
        """(share of the words found, words found); words found only in ``context`` (the section title, the
        neighbouring sentences) count half in the share and not in the words found."""
        hit = self.hits(pool)
        context_only = self.hits(context) - hit if context else set()
        return (len(hit) + 0.5 * len(context_only)) / max(1, len(self.words)), len(hit)
