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

from tasks.terms import near_token

STOPWORDS = set(
    "a an the of in on at to for from by with and or but is are was were be been being do does did has have had "
    "what which who whom whose when where why how many much this that these those it its their there here than "
    "as into about according report document paper page pages following shown show shows can could will would "
    "should may might must shall i we you our your my me us they them he she his her any some each every "
    "get gets give gives given".split())
TOKEN_RE = re.compile(r"[a-z0-9]+(?:[.'’&-][a-z0-9]+)*")
_IRREGULAR = {"paid": "pay", "made": "make", "given": "give", "gave": "give", "held": "hold", "sold": "sell",
              "bought": "buy", "spent": "spend", "took": "take", "taken": "take", "kept": "keep", "left": "leave",
              "brought": "bring", "won": "win", "lost": "lose", "grew": "grow", "grown": "grow", "rose": "rise",
              "risen": "rise", "fell": "fall", "fallen": "fall", "began": "begin", "begun": "begin", "led": "lead",
              "met": "meet", "sent": "send", "built": "build", "chose": "choose", "chosen": "choose",
              "wrote": "write", "written": "write", "children": "child", "people": "person", "women": "woman",
              "men": "man", "ended": "end", "ends": "end", "ending": "end"}
# Common English equivalents a question and a document use for one notion (not a domain list): each word maps to
# the group's first word.
_SAME_MEANING = [("annual", "yearly", "annually"), ("monthly", "month"), ("weekly", "week"), ("daily", "day"),
                 ("terminate", "end", "termination", "cancel", "cancellation"),
                 ("begin", "start", "commence", "commencement"), ("purchase", "buy"), ("employee", "staff"),
                 ("cost", "price"), ("fee", "charge"), ("permit", "allow"), ("reimburse", "reimbursement"),
                 ("receive", "get"), ("approve", "approval"), ("hire", "recruit")]
_CANON = {stem_word: group[0] for group in _SAME_MEANING for stem_word in group}
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
    w = word.lower().strip("'’.")
    w = re.sub(r"['’]s$", "", w)
    if w in _IRREGULAR:
        return _CANON.get(_IRREGULAR[w], _IRREGULAR[w])
    if w in _CANON:
        return _CANON[w]
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("es", ""), ("s", ""), ("ing", ""), ("ed", ""), ("ly", "")):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            base = w[: -len(suffix)] + repl
            # a doubled final consonant before -ing/-ed ("cancelling", "cancelled") inflects the single-letter form
            single = base[:-1] if suffix in ("ing", "ed") and len(base) > 4 and base[-1] == base[-2] else base
            return _CANON.get(base, _CANON.get(base + "e", _CANON.get(single, base)))
    return w


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
        words: list[str] = []
        for kw in question.get("keywords_primary") or []:
            words += [stem(t) for t in TOKEN_RE.findall(kw.lower()) if t not in STOPWORDS]
        if not words:
            words = [stem(t) for t in TOKEN_RE.findall((question.get("text") or "").lower()) if t not in STOPWORDS]
        self.words = [w for w in dict.fromkeys(words) if w not in extra_stop] or list(dict.fromkeys(words))
        self.secondary = list(dict.fromkeys(
            stem(t) for kw in question.get("keywords_secondary") or [] for t in TOKEN_RE.findall(kw.lower())
            if t not in STOPWORDS))

    def hits(self, pool: set[str]) -> set[str]:
        return matched(self.words, pool)

    def coverage(self, pool: set[str], context: set[str] = frozenset()) -> tuple[float, int]:
        """(share of the words found, words found); words found only in ``context`` (the section title, the
        neighbouring sentences) count half in the share and not in the words found."""
        hit = self.hits(pool)
        context_only = self.hits(context) - hit if context else set()
        return (len(hit) + 0.5 * len(context_only)) / max(1, len(self.words)), len(hit)
