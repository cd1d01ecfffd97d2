"""Answers the reader works out itself, from rows and positions rather than from one printed value:

- a superlative over a table's rows ("Which programme has the longest time period?" over rows that each print a
  name and one value): the row with the extreme value, compared in one unit (durations in days), its name;
- which of two named steps comes first ("Is "A" the step before or after "B"?"), from where their lines stand;
- the n-th bullet or sub-heading of the section the question names ("the second bullet point for safety");
- what follows from a condition ("What if X?"): the consequence a sentence states after the same condition.

The reader otherwise abstains on a question that selects by rank, since one extracted value cannot show it is the
highest. Here the comparison is made, so only where it can be made honestly: at least three rows in one run of
lines of one passage, each with exactly one value of the same kind (all durations, all amounts of money, all
percentages, or all plain numbers of one unit), a name before it, and the question's terms on the rows, the lines
just above them or the passage's section title. A question naming the measured kind ("time period", "cost",
"percentage") compares only values of that kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tasks.generate import values as V
from tasks.generate.sentences import PLine, stems
from tasks.generate.typed import Reader

_MAX = {"highest", "largest", "longest", "greatest", "biggest", "most", "furthest", "farthest", "oldest", "best",
        "strongest", "fastest"}
_MIN = {"lowest", "smallest", "shortest", "fewest", "least", "newest", "youngest", "weakest", "slowest", "worst"}
_DAYS = {"minute": 1 / 1440, "min": 1 / 1440, "hour": 1 / 24, "hr": 1 / 24, "day": 1, "week": 7, "month": 30,
         "year": 365, "yr": 365}
_ASKS_TIME = re.compile(r"(?i)\b(?:how long|long(?:est)?|short(?:est)?|duration|period|time|weeks?|months?|years?|"
                        r"days?)\b")
_ASKS_MONEY = re.compile(r"(?i)\b(?:costs?|price|fees?|fund\w*|spend\w*|budget|revenue|income|paid|pay)\b")
_ASKS_PERCENT = re.compile(r"(?i)%|\bpercent|\bshare\b|\brate\b")
MIN_ROWS = 3
MAX_GAP = 2  # lines between two rows of one table (a name broken over a line, a note)


@dataclass(frozen=True)
class Row:
    name: str
    value: str
    key: float
    lines: tuple[PLine, ...]


def _measure(v: V.Value) -> tuple[str, float] | None:
    """(kind of the value, its size in that kind's common unit); None for a value that cannot be compared."""
    if v.number is None or v.kind == "year":
        return None
    if v.kind == "measure":
        unit = v.unit.lower().rstrip("s")
        if unit in _DAYS:
            return "duration", v.number * _DAYS[unit]
        return f"measure:{unit}", v.number
    return v.kind, v.number


def _asked_kind(text: str) -> str | None:
    if _ASKS_PERCENT.search(text):
        return "percent"
    if _ASKS_MONEY.search(text):
        return "currency"
    if _ASKS_TIME.search(text):
        return "duration"
    return None


def _rows(r: Reader, lines: list[PLine]) -> list[tuple[int, str, Row]]:
    """(index, kind, row) of each line that prints one comparable value after a name; a name broken over the
    line above (a short line with no value) is joined. A contents or index line's number is a page: no row."""
    out = []
    for k, ln in enumerate(lines):
        if r.is_reference_list(ln):
            continue
        values = [(v, m) for v in V.find_amounts(ln.text) if (m := _measure(v))]
        if len(values) != 1:
            continue
        v, (kind, key) = values[0]
        name = V.ROW_MARKER.sub("", ln.text[: v.start]).strip(" :–—-,")
        row_lines = (ln,)
        above = lines[k - 1].text.strip() if k else ""
        if k and above and len(above.split()) <= 6 and not V.find_amounts(above) and not above.endswith((".", ":")) \
                and (not name or name[:1].islower() or above.endswith(("in", "of", "and", "for", "the", ":"))):
            name = f"{V.ROW_MARKER.sub('', above)} {name}".strip()
            row_lines = (lines[k - 1], ln)
        if not re.search(r"[A-Za-z]", name) or not re.search(r"\b[A-Z]", name) or len(name.split()) > 12:
            continue
        out.append((k, kind, Row(name, v.text, key, row_lines)))
    return out


def _blocks(rows: list[tuple[int, str, Row]]) -> list[tuple[str, list[Row], int]]:
    """Runs of rows of one kind, each within MAX_GAP lines of the one before: (kind, rows, first line index)."""
    out: list[tuple[str, list[Row], int]] = []
    prev = None
    for k, kind, row in rows:
        if out and prev is not None and out[-1][0] == kind and k - prev <= MAX_GAP + 1:
            out[-1][1].append(row)
        else:
            out.append((kind, [row], k))
        prev = k
    return out


def pick_ranked(r: Reader, rank: str) -> tuple[Row, list[Row]] | None:
    """The row with the extreme value the question asks for, and the rows it was compared with; None when no
    table of comparable rows on the question's subject is in the passages."""
    word = rank.lower()
    if word not in _MAX | _MIN:
        return None
    wanted = _asked_kind(r.q_text)
    best: tuple[int, int, list[Row]] | None = None
    for pidx, lines in enumerate(r.by_passage):
        for kind, rows, first in _blocks(_rows(r, lines)):
            if len(rows) < MIN_ROWS or (wanted and kind != wanted):
                continue
            context = set(r.titles[pidx]).union(*(ln.stems for ln in lines[max(0, first - 2): first]),
                                                 *(ln.stems for row in rows for ln in row.lines))
            hits = len(r.terms.hits(context))
            if hits and (best is None or hits > best[0]):
                best = (hits, pidx, rows)
    if best is None:
        return None
    rows = best[2]
    top = (max if word in _MAX else min)(rows, key=lambda row: row.key)
    if sum(row.key == top.key for row in rows) > 1:
        return None  # a tie: no one row is the answer
    return top, rows


_BEFORE_AFTER = re.compile(r"(?i)\b(?:before|after)\s+or\s+(?:before|after)\b")
_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")


def _fold(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _first_heading(r: Reader, phrase: str, contents: bool) -> PLine | None:
    """The first line that begins with ``phrase`` (a step or a heading that names it), in document order: among
    the body's lines, or (``contents``) among a contents list's."""
    want = _fold(phrase)
    lines = [ln for rows in r.by_passage for ln in rows if r.is_reference_list(ln) == contents
             and _fold(V.ROW_MARKER.sub("", ln.text)).startswith(want)]
    return min(lines, key=lambda ln: (ln.passage.get("doc_id") or "", ln.line_no), default=None)


def pick_order(r: Reader) -> tuple[str, list[PLine]] | None:
    """ "Is "A" the step before or after "B"?": 'before' or 'after', from where the lines that begin with A and B
    stand in the document; None unless the question asks exactly that and both are found in one document."""
    m = _BEFORE_AFTER.search(r.q_text)
    if not m:
        return None
    before = [q.group(1) for q in _QUOTED.finditer(r.q_text[: m.start()])]
    after = [q.group(1) for q in _QUOTED.finditer(r.q_text[m.end():])]
    if not before or not after:
        return None
    # both from the body, else both from a contents list (which lists them in the body's order)
    a, b = _first_heading(r, before[-1], False), _first_heading(r, after[0], False)
    if a is None or b is None:
        a, b = _first_heading(r, before[-1], True), _first_heading(r, after[0], True)
    if a is None or b is None or a.passage.get("doc_id") != b.passage.get("doc_id") or a.line_no == b.line_no:
        return None
    return ("before" if a.line_no < b.line_no else "after"), [a, b]


_WHAT_IF = re.compile(r"(?i)^\s*what\s+(?:happens\s+|will\s+happen\s+|would\s+happen\s+|to\s+do\s+)?(?:if|when)\s+"
                      r"(?P<cond>.+?)\s*\??\s*$")
_IF_CLAUSE = re.compile(r"(?i)\b(?:if|when|whenever|should)\s+(?P<cond>[^,;]{4,200}?),\s*(?:then\s+)?"
                        r"(?P<then>[^.;)]{4,300})")


def pick_consequence(r: Reader) -> tuple[str, list[PLine]] | None:
    """ "What if <condition>?": the consequence a sentence states after the same condition ("If the output
    current is less than 1.5 A, the charging time will increase"), the clause after the condition's comma; the
    condition and what the sentence says before it must carry most of the question's terms. None for other questions or when no sentence states one."""
    m = _WHAT_IF.match(r.q_text)
    if not m:
        return None
    words = r.terms.words
    best: tuple[float, str, list[PLine]] | None = None
    for ss in r.sents:
        for s in ss:
            for c in _IF_CLAUSE.finditer(s.text):
                # the condition, and what the sentence says before it (its subject: "a USB AC adaptor capable
                # of ... (If the output current is less than 1.5 A, ...")
                if not r.terms.hits(stems(c.group("cond"))):
                    continue
                cov = len(r.terms.hits(stems(s.text[: c.start("then")]))) / max(1, len(words))
                if cov >= 0.5 and (best is None or cov > best[0]):
                    best = (cov, c.group("then").strip(" ,"), list(dict.fromkeys(s.lines)))
    return (best[1], best[2]) if best else None


_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "last": -1}
_ORDINAL_ASK = re.compile(r"(?i)\b(first|second|third|fourth|fifth|last)\s+(?:[a-z-]+\s+){0,2}?"
                          r"(bullet(?:\s+point)?s?|items?|points?|sub-?divisions?|sub-?sections?|sub-?headings?|"
                          r"topics?|headings?)\b")


def _heading_like(lines: list[PLine], k: int) -> bool:
    """A line that titles what follows: short, capitalised, no closing stop, after a finished sentence, with
    prose under it."""
    text = lines[k].text.strip()
    prev = lines[k - 1].text.strip() if k else ""
    nxt = lines[k + 1].text.strip() if k + 1 < len(lines) else ""
    return (0 < len(text.split()) <= 8 and text[:1].isupper() and not text.endswith((".", ",", ";", ":"))
            and not re.search(r"\d{2,}", text) and (not prev or prev.endswith((".", ":", "?", "!")))
            and len(nxt.split()) > len(text.split()))


def pick_ordinal(r: Reader) -> tuple[str, list[PLine]] | None:
    """ "The second bullet point under Safety", "the first subdivision of Areas for future research": the n-th item
    (bullets, numbered items) or sub-heading of the section the question names, counted from the section's start
    in the passage whose section title carries most of the question's other terms; None when no passage is that
    section's or it has too few items."""
    m = _ORDINAL_ASK.search(r.q_text)
    if not m:
        return None
    n, unit = _ORDINALS[m.group(1).lower()], m.group(2).lower()
    bullets = unit.startswith(("bullet", "item", "point"))
    best: tuple[int, int] | None = None
    for pidx, title in enumerate(r.titles):
        hits = len(r.terms.hits(title))
        if hits and (best is None or hits > best[0]):
            best = (hits, pidx)
    if best is None:
        return None
    lines = r.by_passage[best[1]]
    items = [ln for k, ln in enumerate(lines)
             if (V.BULLET_RE.match(ln.text) if bullets else k and _heading_like(lines, k))]
    if not items or (n > 0 and len(items) < n):
        return None
    item = items[n - 1] if n > 0 else items[-1]
    text = V.bullet_item(item.text) if bullets else item.text.strip()
    return (text, [item]) if text else None
