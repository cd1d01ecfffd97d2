"""The typed picks of the extractive reader: a value of the asked class (see ``asked.py``) in the sentence that
covers the question's terms best, expanded to the phrase that states it; yes/no from a cue sentence about the
asked subject.

Each pick carries the sentence's coverage of the question's terms; the reader (``extractive.py``) decides from it
whether the pick is found and complete. A value of the wrong class is never a pick: a duration needs a time unit,
money a currency (or a bare amount in a table cell), a percentage a percent sign (or a bare figure), a count a whole
number; section, clause, figure, table, page, list-marker and phone numbers never count (``values.find_amounts``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from schemas.contracts import Asked
from tasks.generate import values as V
from tasks.generate.sentences import (
    STOPWORDS,
    TOKEN_RE,
    PLine,
    Sentence,
    Terms,
    furniture_lines,
    matched,
    sentences,
    stem,
    stems,
)
from tasks.questions.asked import COLOUR, DIMENSIONS, FORMAT_TEMPLATE, TIME_UNITS

_EXCLUDED_RE = re.compile(r"(?i)\b(?:without|other than|except(?: for)?|excluding|apart from|besides)\s+"
                          r"((?:(?!and\b|or\b|but\b)[\w'-]+\s*){1,3})")
# Where in the document the question says to look ("on the first page", "on page 3", "in the last slide", "as
# mentioned in the document"): framing, not the subject; a sentence that states the answer does not repeat it.
# The first page is page 0 of its document, so a sentence elsewhere does not answer; other ordinals ("last page") and
# printed page numbers cannot be checked against a passage, so only the number is dropped and "last" stays a term.
_LOCATION_RE = re.compile(r"(?i)\b(?:(first|front|cover|title|second|third|fourth|fifth|sixth|seventh|eighth|ninth|"
                          r"tenth)\s+)(?:page|slide|sheet)\b|\b(?:page|slide|sheet)s?\s+(\d{1,4})\b")
_ORDINAL_PAGE = {"first": 0, "front": 0, "cover": 0, "title": 0, "second": 1, "third": 2, "fourth": 3, "fifth": 4,
                 "sixth": 5, "seventh": 6, "eighth": 7, "ninth": 8, "tenth": 9}
_HEADING_TEXT = re.compile(r"^\s*(?:\d{1,2}(?:\.\d{1,2})*\.?|ARTICLE|Article|PART|Part|SECTION|Section|Item)\s")
SHORT_LINE_WORDS = 5  # a line this short is a label, a title or a name of its own, not prose
MAX_CELL_WORDS = 2  # words besides the value on a line that still reads as a bare value cell
_REFERENCE_SECTION = re.compile(r"(?:^|> )(?:index|contents|table of contents)\b")
_DOT_LEADER = re.compile(r"(?:\.\s?){4,}\s*\d+\s*$")
_BEFORE_MOD = re.compile(
    r"(?i)\b(?:at least|at most|up to|no more than|no later than|not more than|not less than|no less than|"
    r"more than|less than|fewer than|within|over|under|about|approximately|around|nearly|almost|only|"
    r"a maximum of|a minimum of|a total of|in excess of|exceeding|a cap of|a limit of)\s+$")
_SPELLED_BEFORE = re.compile(r"(?i)\b[a-z]+(?:-[a-z]+)?\s*\($")
_AFTER_MOD = re.compile(
    r"(?i)^(?:['’]s?)?(?:\s+(?:prior|advance|written|calendar|business|working))*(?:\s+(?:written\s+)?notice)?"
    r"(?:\s+(?:per|each|a|an)\s+(?:occurrence|claim|day|week|month|year|annum|person|employee|hour|trip|night|"
    r"unit|share|item|policy|event|visit|accident|loss)\b)?(?:\s+(?:after|before|of|from)\s+the\s+[a-z]+)?")
_TIME_UNIT_NAMES = {"hrs": "hour", "hr": "hour", "min": "minute", "mins": "minute", "sec": "second",
                    "s": "second", "ms": "", "yrs": "year", "h": "hour"}
@dataclass
class Pick:
    value: str
    lines: list[PLine]
    score: float
    coverage: float
    strength: int
    kind: str = ""
    fit: float = 0.0  # how well the value's kind fits the asked class (0.5+: strong)
    notes: list[str] = field(default_factory=list)


class Reader:
    """The passages as sentences, and the question's terms matched in each."""

    def __init__(self, question: dict[str, Any], passages: list[dict[str, Any]], asked: Asked):
        self.asked = asked
        self.q_text = question.get("text") or ""
        self.q_low = self.q_text.lower()
        generic = {"long", "much", "many", "amount", "number", "percentage", "percent", "value", "total", "rate",
                   "there", "allow", "allowed", "permit", "permitted",
                   # answer-format instructions are framing, not the ask ("Directly answer 'yes' or 'no'")
                   "yes", "no", "directly", "answer", "integer", "format", "please", "write", "return", "rounded",
                   "round", "decimal", "float", "digits", "places", "represent", "exact",
                   # the framing: "as mentioned in the document"
                   "mention", "mentioned", "document", "slide", "sheet"}
        if asked.cls == "entity":
            generic |= {"name"}  # "what is the name of the governor": the ask, not the subject
        self.only_page: int | None = None  # "on the second page": the 0-based page a sentence must be on
        for m in _LOCATION_RE.finditer(self.q_text):
            generic |= {w.lower() for w in m.groups() if w}
            if m.group(1):
                self.only_page = _ORDINAL_PAGE[m.group(1).lower()]
        if asked.cls == "date":
            generic |= {"date", "year", "day", "time"}
        generic |= {m.group(0).lower() for m in FORMAT_TEMPLATE.finditer(self.q_text)}
        # "without cause", "other than unpaid premium": the excluded terms do not count for a sentence, they count
        # against it
        excluded = _EXCLUDED_RE.search(self.q_text)
        self.excluded = [stem(w) for w in TOKEN_RE.findall(excluded.group(1).lower()) if w not in STOPWORDS] \
            if excluded else []
        self.terms = Terms(question, {stem(w) for w in generic} | set(self.excluded))
        self.q_stems = stems(self.q_text)
        # a colour the question names is the key of a legend: the row that names it is the one asked about
        self.keys = {c.lower() for c in re.findall(rf"(?i)\b(?:{COLOUR})\b", self.q_text)}
        self.q_numbers = {v.number for v in V.find_amounts(self.q_text) if v.number is not None}
        self.q_dates = {d.text.lower() for d in V.find_dates(self.q_text)}
        self.by_passage: list[list[PLine]] = []
        self.sents: list[list[Sentence]] = []
        self.titles: list[set[str]] = []
        self.where: dict[tuple[int, int], list[tuple[int, Sentence]]] = {}
        for i, p in enumerate(passages):
            rows = [PLine(i, p, int(ln["line_no"]), int(ln.get("page", p.get("page", 0))), ln["text"],
                          stems(ln["text"])) for ln in p.get("lines") or []]
            self.by_passage.append(rows)
        self.furniture = furniture_lines([ln for rows in self.by_passage for ln in rows])
        for i, (p, rows) in enumerate(zip(passages, self.by_passage)):
            self.titles.append(stems(p.get("section") or ""))
            ss = sentences(rows)
            self.sents.append(ss)
            for s in ss:
                for ln, start in zip(s.lines, s.starts):
                    self.where.setdefault((i, ln.line_no), []).append((start, s))

    def is_furniture(self, ln: PLine) -> bool:
        """A page furniture line (``sentences.furniture_lines``) that names none of the question's terms (a question
        about the document's own edition or copyright may be answered there)."""
        return id(ln) in self.furniture and not self.terms.hits(ln.stems)

    def sentence_of(self, ln: PLine, pos: int) -> Sentence | None:
        pieces = self.where.get((ln.pidx, ln.line_no)) or []
        before = [(start, s) for start, s in pieces if start <= pos]
        return max(before, key=lambda t: t[0])[1] if before else (pieces[0][1] if pieces else None)

    def is_reference_list(self, ln: PLine) -> bool:
        """Index / contents lines, whose numbers are page references: 'Rinsing ...... 70' or an 'Index' section."""
        section = (ln.passage.get("section") or "").lower()
        return bool(_REFERENCE_SECTION.search(section) or _DOT_LEADER.search(ln.text))

    def coverage(self, s: Sentence) -> tuple[float, int]:
        """The sentence's coverage of the question's terms; the section title and the sentences just before and
        after it count as context (half). A sentence that names a term the question excludes covers nothing; one
        whose heading or neighbour names it loses a third of its share."""
        ss = self.sents[s.pidx]
        k = next(i for i, x in enumerate(ss) if x is s)
        context = set(self.titles[s.pidx])
        for x in ss[max(0, k - 1): k + 2]:
            if x is ss[min(k + 1, len(ss) - 1)] and x is not s and is_heading(x.text):
                continue  # the next section's heading is not this sentence's context
            context |= x.stems
        if self.excluded and matched(self.excluded, s.stems) or (self.only_page is not None
                                                                      and s.lines[0].page != self.only_page):
            return 0.0, 0
        cov, n = self.terms.coverage(s.stems, context)
        if self.excluded and matched(self.excluded, context):
            cov *= 2 / 3
        return cov, n

    def cell_coverage(self, ln: PLine) -> tuple[float, int]:
        """A bare value cell (the value alone on its line) takes the words of the line above (its label)."""
        rows = self.by_passage[ln.pidx]
        k = rows.index(ln)
        pool = set().union(*(r.stems for r in rows[max(0, k - 1): k + 1]))
        return self.terms.coverage(pool, self.titles[ln.pidx])

    def label_pair(self, ln: PLine) -> tuple[str, str] | None:
        """``(label, value)`` of a form-like line: "Label: value" on the line, or a short line ending in ':' just
        above it ("Produced by:" over "Florida Department of Health", as cover pages and forms print them)."""
        if lv := V.label_value(ln.text):
            return lv
        rows = self.by_passage[ln.pidx]
        k = rows.index(ln)
        above = rows[k - 1].text.strip() if k else ""
        value = ln.text.strip()
        # a heading over a list ("Key Assignments:" over "• Quiz #4 ...") is not a label of one value
        if (above.endswith(":") and len(above.split()) <= SHORT_LINE_WORDS and ":" not in above[:-1] and value
                and len(value.split()) <= 2 * SHORT_LINE_WORDS and not V.BULLET_RE.match(value)):
            return above[:-1].strip(), value
        return None

    def label_coverage(self, s: Sentence) -> tuple[float, int]:
        """A name alone on a short line takes the words of its label: the line above when it ends in ':'
        ("Produced by:" over "Florida Department of Health"), or the short line under it when that line is made
        of question words only, with no figure ("Rick Scott" over "GOVERNOR" on a cover page or a signature
        block). Other sentences: their own coverage."""
        cov = self.coverage(s)
        if len(s.lines) != 1 or len(s.text.split()) > SHORT_LINE_WORDS or not cov[0]:
            return cov
        rows = self.by_passage[s.pidx]
        k = rows.index(s.lines[0])
        label: set[str] = set()
        if k > 0 and rows[k - 1].text.rstrip().endswith(":"):
            label |= rows[k - 1].stems
        if k + 1 < len(rows):
            below = rows[k + 1]
            words = {w for w in below.stems if w not in STOPWORDS}
            if (words and len(below.text.split()) <= SHORT_LINE_WORDS and not re.search(r"\d", below.text)
                    and len(self.terms.hits(words)) == len(words)):
                label |= below.stems
        return max(cov, self.terms.coverage(s.stems | label, self.titles[s.pidx])) if label else cov

    def best_sentence(self, statements_only: bool = False) -> tuple[Sentence | None, float, int]:
        """The sentence with the most question terms (then the best coverage); a question printed in the text
        states nothing, so ``statements_only`` skips sentences ending in '?'."""
        best = (None, 0.0, 0)
        for ss in self.sents:
            for s in ss:
                if statements_only and s.text.rstrip().endswith("?"):
                    continue
                cov, n = self.coverage(s)
                if (n, cov) > (best[2], best[1]):
                    best = (s, cov, n)
        return best

    def missing_terms(self) -> list[str]:
        """Question terms that no passage line carries."""
        pool = set().union(*(ln.stems for rows in self.by_passage for ln in rows), *self.titles)
        return [w for w in self.terms.words if not matched([w], pool)]


def is_heading(text: str) -> bool:
    return bool(_HEADING_TEXT.match(text)) and len(text.split()) <= 8


def _is_time_unit(unit: str) -> bool:
    u = _TIME_UNIT_NAMES.get(unit.lower(), unit.lower())
    return bool(u) and u.rstrip("s") in TIME_UNITS


def class_fit(asked: Asked, v: V.Value, after: str, cell: bool = False) -> float | None:
    """How well value ``v`` fits the asked class (higher is better); None: the wrong class, never the answer."""
    kind, unit = v.kind, v.unit.lower()
    cls = asked.cls
    if kind == "year":
        return None
    if cls == "duration":
        if kind != "measure" or not _is_time_unit(unit):
            return None
        asked_unit = asked.unit.rstrip("s")
        return 0.6 + (0.5 if asked_unit and _TIME_UNIT_NAMES.get(unit, unit).rstrip("s") == asked_unit else 0.0)
    if cls == "money":
        if kind == "currency":
            return 0.8
        return 0.0 if kind == "number" else None
    if cls == "percentage":
        if kind == "percent":
            return 0.8
        return -0.1 if kind == "number" else None
    if cls == "count":
        if kind in ("percent", "currency") or (kind == "measure" and _is_time_unit(unit)):
            return None
        if v.number is None or (kind == "number" and v.number != int(v.number) and "." in v.text):
            return None  # a count is one whole number; "3.5" is a clause or a measure, "1-5" a range
        if re.match(r"-(?:\s|[A-Za-z])", after):
            return None  # "50-shot", "50- and 100-shot": a compound modifier, not a count
        if kind == "measure" and V.unit_named(unit, {asked.unit}):
            return 0.9
        noun = stem(asked.unit) if asked.unit else ""
        if noun and any(stem(w) == noun or (len(noun) >= 4 and stem(w).startswith(noun[:5]))
                        for w in re.findall(r"[A-Za-z]+", after)[:3]):
            return 0.9  # "25 people", "3 of the charts": the number counts what was asked
        return 0.0 if cell else None  # a bare number counts the asked thing only as a table cell by its label
    if cls == "number":
        if kind == "measure" and asked.dimension:
            units = DIMENSIONS[asked.dimension]
            if unit in units:
                return 0.7  # the quantity asked, in one of its units
            if _is_time_unit(unit) or any(unit in u for u in DIMENSIONS.values()):
                return None  # a measure of another quantity: "15 seconds" never answers a temperature
        return {"percent": 0.1, "currency": 0.2, "measure": 0.1, "number": 0.2}.get(kind, 0.0)
    return None


def phrase(line: str, v: V.Value) -> str:
    """The value with the words that state it: 'at least 30 days' written notice', '$300,000 per occurrence'."""
    before = line[: v.start]
    spelled = _SPELLED_BEFORE.search(before)
    start = spelled.start() if spelled else v.start
    mod = _BEFORE_MOD.search(line[:start])
    head = mod.group(0) if mod else ""
    tail = _AFTER_MOD.match(line[v.end:])
    text = v.text if v.text.startswith(line[v.start:v.start + 1]) else line[v.start:v.end]
    out = f"{head}{text}{tail.group(0) if tail else ''}"
    return " ".join(out.split()).rstrip(",;:")


def _proximity(s: Sentence, r: Reader, pos: int) -> float:
    """0..0.3: how close the value sits to a matched question term in its sentence."""
    hits = r.terms.hits(s.stems)
    best = None
    for m in TOKEN_RE.finditer(s.text.lower()):  # by stem: "cancel" is where a question's "cancelling" is
        if matched(list(hits), {stem(m.group(0))}):
            d = abs(m.start() - pos)
            best = d if best is None else min(best, d)
    return 0.0 if best is None else 0.3 * max(0.0, 1 - best / 150)


# A duration is either the length of something ("an initial term of 24 months") or a deadline measured from an
# event ("at least 60 days before the end", "within 30 days after the loss"). A question about notice, warning or a
# time limit for doing something asks the deadline; one asking how long a term or period lasts asks the length.
_DEADLINE_ASK = re.compile(r"(?i)\b(?:notice|warning|warn|before|after|prior|advance|deadline|in time|"
                           r"(?:have|has|had|need|needs) to|must|within|how soon|by when)\b")
_DEADLINE_AFTER = re.compile(r"(?i)^(?:['’]s?)?\s+(?:(?:prior|advance|written|calendar|business|working)\s+)*"
                             r"(?:notice|before|after|prior|in advance|following|from (?:the|its|your|our|their|"
                             r"receipt)|of (?:the|receiv|receipt))")
_DEADLINE_BEFORE = re.compile(r"(?i)\b(?:within|no later than|not later than|notice of|notice period of)\s+"
                              r"(?:at least |at most |up to )?$")


def is_deadline(line: str, v: V.Value) -> bool:
    """The duration is stated relative to an event: "30 days before the date", "within 60 days" ."""
    return bool(_DEADLINE_AFTER.match(line[v.end:]) or _DEADLINE_BEFORE.search(line[: v.start]))


def pick_numeric(r: Reader) -> list[Pick]:
    out = []
    q_words = set(re.findall(r"[a-z%]+", r.q_low))
    deadline_ask = bool(_DEADLINE_ASK.search(r.q_text))
    # "how much notice": the value that the asked noun follows ("90 days' prior written notice") states it itself
    noun = re.search(r"(?i)\bhow (?:much|long an?|many) ([a-z]+)", r.q_text)
    asked_noun = stem(noun.group(1)) if noun and noun.group(1).lower() not in STOPWORDS else ""
    for rows in r.by_passage:
        for ln in rows:
            if r.is_reference_list(ln):
                continue
            for v in V.find_amounts(ln.text):
                if v.number is not None and v.number in r.q_numbers:
                    continue
                rest = ln.text[: v.start] + " " + ln.text[v.end:]
                n_words = len(re.findall(r"[A-Za-z]{2,}", rest))
                if r.asked.cls == "count" and n_words == 0 and not re.search(r"[A-Za-z]", rest):
                    continue  # a number alone on its line (a figure callout, a page or list marker) counts nothing
                fit = class_fit(r.asked, v, ln.text[v.end:], cell=n_words <= MAX_CELL_WORDS)
                if fit is None:
                    continue
                s = r.sentence_of(ln, v.start)
                if s is None:
                    continue
                cov, n = r.coverage(s)
                if n_words == 0:
                    cov, n = max((cov, n), r.cell_coverage(ln))
                if v.kind == "number" and r.asked.cls in ("money", "percentage") and n_words > 6:
                    continue  # a bare number in prose is not the amount or share asked: prose states the unit
                named = 0.4 if V.unit_named(v.unit, q_words) else 0.0
                pos = s.offsets[s.lines.index(ln)] + v.start - _line_start(s, ln)
                bonus = 0.05 * len(matched(r.terms.secondary, s.stems))
                if r.keys and r.keys <= s.stems:
                    bonus += 0.5
                notes = []
                if r.asked.cls == "duration":
                    fits_relation = is_deadline(ln.text, v) == deadline_ask
                    bonus += 0.3 if fits_relation else -0.3
                    notes = ["fits the asked relation"] if fits_relation and deadline_ask else []
                    if asked_noun and matched([asked_noun], stems(" ".join(ln.text[v.end:].split()[:4]))):
                        bonus += 0.2
                score = 1.5 * cov + fit + named + _proximity(s, r, pos) + bonus - 0.03 * ln.pidx
                out.append(Pick(phrase(ln.text, v), [ln], score, cov, n, v.kind, fit, notes))
    return out


def _line_start(s: Sentence, ln: PLine) -> int:
    return s.starts[s.lines.index(ln)]


def pick_date(r: Reader) -> list[Pick]:
    prefs = {"year": 0.5 * bool(re.search(r"\byears?\b", r.q_low)), "quarter": 0.5 * ("quarter" in r.q_low),
             "month_year": 0.4 * bool(re.search(r"\bmonths?\b", r.q_low)),
             "time": 0.8 if re.search(r"\btime\b|o'clock|\bhour\b", r.q_low) else -0.5}
    iso = "yyyy-mm-dd" in r.q_low
    year_only = bool(re.search(r"\b(?:which|what|in what) year\b|\byear (?:was|did|is|does)\b", r.q_low))
    out = []
    for rows in r.by_passage:
        for ln in rows:
            if r.is_furniture(ln):
                continue
            for d in V.find_dates(ln.text):
                if d.text.lower() in r.q_dates:
                    continue
                s = r.sentence_of(ln, d.start)
                if s is None:
                    continue
                cov, n = r.coverage(s)
                if len(ln.text.split()) <= MAX_CELL_WORDS + len(d.text.split()):
                    cov, n = max((cov, n), r.cell_coverage(ln))
                pos = s.offsets[s.lines.index(ln)] + d.start - _line_start(s, ln)
                score = 1.5 * cov + V.DATE_KIND_SCORE[d.kind] / 8 + prefs.get(d.kind, 0.0) + _proximity(s, r, pos) \
                    - 0.03 * ln.pidx
                text = d.text
                if iso and (as_iso := V.iso_date(d.text)):
                    text = as_iso  # the format the question asks for
                if year_only and d.kind in ("full_date", "month_year", "quarter"):
                    text = V.year_of(d.text) or d.text  # "Which year ...?" asks for the year, not the day
                out.append(Pick(text, [ln], score, cov, n, d.kind, 0.6 if d.kind != "year" or year_only else 0.3))
    return out
