"""Dates and fiscal calendars as documents write them: a date in its usual spellings, the month a 52/53-week period
closes, the fiscal year and quarter of a period, and what a document's first pages say of its fiscal calendar (the
month its fiscal year ends in, and whether it names its periods by fiscal year without saying so). Read by
``tasks.corpus.identity`` (a document's side) and by detection (a question's periods, ``tasks.detect.periods``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from datetime import date, timedelta
from typing import NamedTuple

from schemas.contracts import IdentityField

CALENDAR_PAGES = 25  # a filing states its fiscal calendar in its first notes, and names its periods in its MD&A

MONTHS = {m: i for i, names in enumerate(
    ("january jan", "february feb", "march mar", "april apr", "may", "june jun", "july jul", "august aug",
     "september sep sept", "october oct", "november nov", "december dec"), start=1) for m in names.split()}
MONTH = r"(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|" \
        r"jun|jul|aug|sept|sep|oct|nov|dec)\.?"
# 'June 25, 2022', '25 June 2022', '2022-06-25', 'Oct. 1, 2022', '06/25/2022' (US order, as SEC metadata writes it)
DATE = rf"(?:{MONTH}\s+\d{{1,2}},?\s+\d{{4}}|\d{{1,2}}(?:st|nd|rd|th)?\s+{MONTH},?\s+\d{{4}}|\d{{4}}-\d{{2}}-\d{{2}}" \
       rf"|\d{{1,2}}/\d{{1,2}}/\d{{4}})"
_DATE_PARTS = re.compile(
    rf"(?P<m1>{MONTH})\s+(?P<d1>\d{{1,2}}),?\s+(?P<y1>\d{{4}})|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<m2>{MONTH}),?\s+"
    rf"(?P<y2>\d{{4}})|(?P<y3>\d{{4}})-(?P<mo3>\d{{2}})-(?P<d3>\d{{2}})|(?P<mo4>\d{{1,2}})/(?P<d4>\d{{1,2}})/(?P<y4>\d{{4}})",
    re.IGNORECASE)


def parse_date(text: str) -> date | None:
    """The first date written in ``text`` in one of the :data:`DATE` forms; None when there is none or it is not
    a calendar date."""
    m = _DATE_PARTS.search(text)
    if not m:
        return None
    g = m.groupdict()
    try:
        if g["m1"]:
            return date(int(g["y1"]), MONTHS[g["m1"].lower().rstrip(".")], int(g["d1"]))
        if g["m2"]:
            return date(int(g["y2"]), MONTHS[g["m2"].lower().rstrip(".")], int(g["d2"]))
        if g["y3"]:
            return date(int(g["y3"]), int(g["mo3"]), int(g["d3"]))
        return date(int(g["y4"]), int(g["mo4"]), int(g["d4"]))
    except ValueError:
        return None


def closing_month(d: date) -> tuple[int, int]:
    """(year, month) a period ending on ``d`` closes: a 52/53-week period ending in a month's first week closes the
    month before ('April 1, 2023' closes March, 'October 1, 2022' September)."""
    if d.day <= 7:
        d = d.replace(day=1) - timedelta(days=1)
    return d.year, d.month


class Line(NamedTuple):
    page: int
    line_no: int
    text: str
    font_size: float = 0.0


class PageText:
    """The lines of some pages joined by newlines, so a pattern may run across a line break, with the way back from
    a match to the line it starts on (the field's source)."""

    def __init__(self, lines: Sequence[Line]):
        self.lines = list(lines)
        self.starts, parts, pos = [], [], 0
        for ln in self.lines:
            self.starts.append(pos)
            parts.append(ln.text)
            pos += len(ln.text) + 1
        self.text = "\n".join(parts)

    def source(self, pos: int) -> str:
        ln = self.lines[max(0, bisect_right(self.starts, pos) - 1)]
        return line_source(ln)

    def find(self, pattern: re.Pattern) -> list[re.Match]:
        return list(pattern.finditer(self.text))


def line_source(ln: Line) -> str:
    text = ln.text if len(ln.text) <= 160 else ln.text[:159] + "…"
    if ln.page < 0:  # a line that is not on a page: the document's title, as read (see its own source)
        return f'the title "{text}"'
    return f'page {ln.page} line {ln.line_no}: "{text}"'


def field(value: str | int, source: str) -> IdentityField:
    return IdentityField(value=value, source=source)


# -- the fiscal calendar: year end, fiscal year and period, how the document names its periods ---------------------
_FYE_STATEMENT = re.compile(
    rf"\bfiscal\s+year\b[^.]{{0,100}}?\bend(?:s|ing)?\s+(?:on\s+)?(?:the\s+)?(?:(?:last|first)\s+)?(?:\w+day\s+)?"
    rf"(?:(?:of|in|nearest(?:\s+to)?)\s+)?(?:the\s+month\s+of\s+)?(?P<month>{MONTH})(?!\w)", re.I)
_WEEK_YEAR = re.compile(
    rf"\b5[23][- ](?:or\s+5[23][- ])?week\s+(?:fiscal\s+)?year,?\s+(?:that\s+)?end(?:s|ing)?\s+on\s+the\s+"
    rf"(?:last|first)\s+\w+day\s+(?:of|in|nearest(?:\s+to)?)\s+(?P<month>{MONTH})(?!\w)", re.I)
_FY_ENDED = re.compile(rf"\bfiscal\s+year\s+end(?:ed|ing)\s+(?P<date>{DATE})", re.I)
_BALANCE = re.compile(rf"\bbalance\s+sheets?\b[^\n]{{0,60}}?\bas\s+(?:of|at)\s+(?P<a>{DATE})\s+and\s+(?P<b>{DATE})",
                      re.I)
_QUARTER_OF = re.compile(r"\b(?P<q>first|second|third|fourth)\s+(?P<fq>fiscal\s+)?quarters?\s+of\s+"
                         r"(?P<fiscal>fiscal\s+(?:years?\s+)?)?(?P<year>(?:19|20)\d\d)\b", re.I)
_REFERS = re.compile(r"\breferences\s+to\b[^.]{0,80}?\b(?:years|quarters)\b[^.]{0,120}?\brefer\s+to\b[^.]{0,60}?"
                     r"\bfiscal\b", re.I)
_ORDINALS = ("first", "second", "third", "fourth")


def _month_of(m: re.Match) -> int:
    return MONTHS[m.group("month").lower().rstrip(".")]


def year_end(body: PageText, period_end: date | None, months: int | None) -> IdentityField:
    """The month the fiscal year ends in: a statement of the calendar ('52- or 53-week period that ends on the last
    Saturday of September'), else the month of the fiscal year ends the document cites ('fiscal year ended
    September 24, 2022'), else the comparative date of a quarterly balance sheet ('Balance Sheets as of September
    30, 2022 and June 30, 2022'), else an annual period's own end; the calendar year when nothing says otherwise."""
    for pattern in (_FYE_STATEMENT, _WEEK_YEAR):
        m = pattern.search(body.text)
        if m:
            return field(_month_of(m), body.source(m.start()))
    ended = [(closing_month(d)[1], m) for m in body.find(_FY_ENDED) if (d := parse_date(m.group("date")))]
    if ended:
        month, _ = Counter(mo for mo, _ in ended).most_common(1)[0]
        return field(month, body.source(next(m for mo, m in ended if mo == month).start()))
    for m in body.find(_BALANCE):
        a, b = parse_date(m.group("a")), parse_date(m.group("b"))
        if a and b and period_end and a == period_end and timedelta(0) < a - b <= timedelta(days=366):
            return field(closing_month(b)[1], body.source(m.start()))
    if period_end is not None and months == 12:
        return field(closing_month(period_end)[1], "derived: the end of the annual period it reports on")
    return field(12, f"assumed: no fiscal-year end stated on its first {CALENDAR_PAGES} pages (calendar year)")


def fiscal_label(period_end: date, months: int, year_end_month: int) -> tuple[int, str]:
    """(fiscal year, period) of a period ending on ``period_end``: fiscal years are named by the calendar year they
    end in ('fiscal 2023' of a September year end runs to September 2023); the period is 'Q1'..'Q4', 'H1'/'H2',
    '9M' or 'FY' by the months of that fiscal year elapsed."""
    year, month = closing_month(period_end)
    fiscal_year = year if month <= year_end_month else year + 1
    elapsed = (month - year_end_month - 1) % 12 + 1
    if months >= 12:
        return fiscal_year, "FY"
    if months == 9:
        return fiscal_year, "9M"
    if months == 6:
        return fiscal_year, f"H{(elapsed - 1) // 6 + 1}"
    return fiscal_year, f"Q{(elapsed - 1) // 3 + 1}"


def named_year(body: PageText, fiscal_year: int, period: str) -> tuple[int, str | None]:
    """The fiscal year the document itself gives its quarter: the derived one, unless every mention of the quarter
    ('third quarter of fiscal 2023') names the year before (a document that names fiscal years by the calendar year
    they start in)."""
    if not period.startswith("Q"):
        return fiscal_year, None
    q = int(period[1])
    years = Counter(int(m.group("year")) for m in body.find(_QUARTER_OF)
                    if _ORDINALS.index(m.group("q").lower()) + 1 == q)
    if years and fiscal_year not in years:
        named, _ = years.most_common(1)[0]
        if named == fiscal_year - 1:
            hit = next(m for m in body.find(_QUARTER_OF) if int(m.group("year")) == named)
            return named, body.source(hit.start())
    return fiscal_year, None


def period_names(body: PageText, year_end_month: int) -> IdentityField | None:
    """How the document writes its periods, when its fiscal year is not the calendar year: 'fiscal' when it writes
    them bare ('the third quarter of 2023', or says that its years and quarters are fiscal ones), 'explicit' when
    it writes 'fiscal year 2024'; None when it does not tell."""
    if year_end_month == 12:
        return None
    m = _REFERS.search(body.text)
    if m:
        return field("fiscal", body.source(m.start()))
    bare, explicit = [], []
    for m in body.find(_QUARTER_OF):
        (explicit if m.group("fiscal") or m.group("fq") else bare).append(m)
    if len(bare) == len(explicit):
        return None
    kind, found = ("fiscal", bare) if len(bare) > len(explicit) else ("explicit", explicit)
    example = body.source(found[0].start())
    return field(kind, f"{len(bare)} bare and {len(explicit)} fiscal quarter names, e.g. {example}")


