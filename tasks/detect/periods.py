"""The periods a question names, in the notations analysts write, and how well a document's identity matches one.

Notations: fiscal quarters and halves ('Q3 FY2023', 'FY23 Q1', 'FY2023Q1', '2Q FY24', 'H1 FY23', '9M FY22',
'FY2023 YTD'), plain ones ('Q3 2022', 'Q22023', '3Q22', '1H23', 'H1 2023', '2023 Q2'), calendar ones ('CY2023 Q2',
'calendar Q2 2023'), words ('the second quarter of fiscal 2023', 'the first nine months of 2022', 'the first half of
fiscal 2023'), end dates ('the quarter ended April 30, 2023', 'the December 2022 quarter'), fiscal years ('FY2022',
'fiscal 2023') and, when nothing finer is named, a year ('in 2022'). A quarter mark without a year ('Q3revenue for
FY2023') takes the question's one year.

A document's period has two names when its fiscal year is not the calendar year: its fiscal one (the company's
'third quarter of fiscal 2024') and its calendar one (the calendar quarter most of its days fall in). A question
that says 'fiscal' or 'FY' means the first, one that says 'calendar' the second; a bare 'Q3 2023' is read in the
document's own notation (``DocumentIdentity.period_names``: a document that writes its fiscal quarters bare is asked
in them; one that always writes 'fiscal year 2024' is asked about a bare quarter by the calendar), and by either when
the document does not tell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from schemas.contracts import DocumentIdentity
from tasks.corpus.fiscal import DATE, MONTH, MONTHS, closing_month, parse_date

EXACT, SAME_YEAR, NO_MATCH = 2, 1, 0


@dataclass(frozen=True)
class AskedPeriod:
    """One period a question names (``text`` as written)."""

    text: str
    year: int | None
    quarter: int | None = None
    half: int | None = None
    months: int | None = None  # 9 for '9M'; 12 for a whole (fiscal) year
    fiscal: bool = False
    calendar: bool = False
    ytd: bool = False
    end: date | None = None  # 'the quarter ended April 30, 2023'
    end_month: tuple[int, int] | None = None  # 'the December 2022 quarter': (2022, 12)

    def describe(self) -> str:
        return self.text


def _year(text: str | None) -> int | None:
    if not text:
        return None
    y = int(text.strip("'’ "))
    return y + 2000 if y < 100 else y


_ORD = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}
_MARK = r"(?:Q(?P<q>[1-4])|(?P<q2>[1-4])Q|H(?P<h>[12])|(?P<h2>[12])H|(?P<m>3|6|9|12)M)"
# a year: four digits, or two written against a letter or after an apostrophe ('FY23', '3Q22', "Q3'23"; not the '10'
# of 'Q3 10-Q'), never '00' ('H100' is a product code)
_Y = r"(?P<y>(?:19|20)\d\d|(?:'|’|(?<=[A-Za-z]))(?!00)\d\d)(?![0-9-])"
_EDGE = r"(?<![A-Za-z0-9])"
_PATTERNS: tuple[tuple[str, re.Pattern], ...] = tuple((kind, re.compile(p, re.I)) for kind, p in (
    ("fiscal", rf"{_EDGE}FY\s*{_Y}\s*[-/ ]?\s*{_MARK}(?![0-9])"),
    ("fiscal", rf"{_EDGE}{_MARK}\s*[-/ ]?\s*(?:FY|fiscal(?:\s+year)?)\s*{_Y}(?![0-9])"),
    ("calendar", rf"{_EDGE}(?:CY|calendar(?:\s+year)?)\s*{_Y}\s*[-/ ]?\s*{_MARK}(?![0-9])"),
    ("plain", rf"{_EDGE}{_MARK}\s*[-/ ]?\s*{_Y}(?![0-9])"),
    ("plain", rf"(?<![0-9])(?P<y>(?:19|20)\d\d)\s*[-/ ]?\s*{_MARK}(?![0-9])"),
    ("words", r"\b(?P<ord>first|second|third|fourth|1st|2nd|3rd|4th)\s+(?P<fq>fiscal\s+)?(?P<unit>quarter|half)\s+"
              r"(?:of\s+)?(?:the\s+)?(?:(?P<kind>fiscal|calendar)\s+(?:year\s+)?)?(?P<y>(?:19|20)\d\d)\b"),
    ("words", r"\b(?:(?P<kind>fiscal|calendar)\s+(?:year\s+)?)?(?P<y>(?:19|20)\d\d)\s+(?P<ord>first|second|third|"
              r"fourth|1st|2nd|3rd|4th)\s+(?P<unit>quarter|half)\b"),
    ("months", r"\b(?:first\s+)?(?P<n>three|six|nine|twelve)\s+months\s+(?:of\s+)?(?:the\s+)?"
               r"(?:(?P<kind>fiscal|calendar)\s+(?:year\s+)?)?(?P<y>(?:19|20)\d\d)\b"),
    ("ended", rf"\b(?P<unit>quarter|three\s+months|six\s+months|nine\s+months|twelve\s+months|half[- ]year|"
              rf"fiscal\s+year|year|period)\s+end(?:ed|ing)\s+(?:on\s+)?(?P<date>{DATE})"),
    ("month_quarter", rf"\b(?P<mon>{MONTH})\s+(?P<y>(?:19|20)\d\d)\s+quarter\b"),
    ("fiscal_year", rf"{_EDGE}FY\s*{_Y}(?![0-9])|\bfiscal\s+(?:year\s+)?(?P<y4>(?:19|20)\d\d)\b"),
    ("calendar_year", rf"{_EDGE}CY\s*{_Y}(?![0-9])|\bcalendar\s+(?:year\s+)?(?P<y4>(?:19|20)\d\d)\b"),
    ("loose_mark", rf"{_EDGE}(?:Q(?P<q>[1-4])|H(?P<h>[12])|(?P<m>9)M)(?![0-9])"),
    ("loose_words", r"\b(?P<ord>first|second|third|fourth)\s+(?P<unit>quarter|half)\b|\b(?:first\s+)?(?P<n>six|nine)"
                    r"\s+months\b"),
    ("ytd_year", r"\b(?:YTD|year[- ]to[- ]date)\s*(?:FY\s*)?(?P<y>(?:19|20)\d\d)\b"),
    ("year", r"\b(?:in|for|during|of|over)\s+(?:the\s+(?:year|period)\s+)?(?P<y>(?:19|20)\d\d)\b(?!\s*[-–]?\s*\d)"),
))
_YTD = re.compile(r"\bYTD\b|\byear[- ]to[- ]date\b", re.I)
_N = {"three": 3, "six": 6, "nine": 9, "twelve": 12}
_UNIT_MONTHS = (("three", 3), ("quarter", 3), ("six", 6), ("half", 6), ("nine", 9), ("twelve", 12), ("year", 12))


def _from_match(kind: str, m: re.Match, text: str) -> AskedPeriod | None:
    g = {k: v for k, v in m.groupdict().items() if v}
    said = m.group(0).strip()
    before = text[max(0, m.start() - 12):m.start()].lower()
    fiscal = kind == "fiscal" or (g.get("kind", "").lower() == "fiscal") or bool(g.get("fq"))
    calendar = kind == "calendar" or g.get("kind", "").lower() == "calendar" or bool(re.search(r"calendar\s+$", before))
    year = _year(g.get("y") or g.get("y4"))
    quarter = int(g.get("q") or g.get("q2") or 0) or None
    half = int(g.get("h") or g.get("h2") or 0) or None
    months = int(g["m"]) if g.get("m") else None
    if "ord" in g:
        n = _ORD[g["ord"].lower()]
        if g.get("unit", "").lower() == "half":
            half = n if n <= 2 else None
        else:
            quarter = n
    if g.get("n"):
        months = _N[g["n"].lower()]
    if months == 3:
        months = None
    if months == 6 and not half:
        half, months = 1, None
    if kind in ("fiscal_year", "calendar_year"):
        return AskedPeriod(said, year, months=12, fiscal=kind == "fiscal_year", calendar=kind == "calendar_year")
    if kind == "ended":
        end = parse_date(g["date"])
        unit = g["unit"].lower()
        n = next(v for word, v in _UNIT_MONTHS if word in unit) if any(w in unit for w, _ in _UNIT_MONTHS) else None
        return AskedPeriod(said, end.year if end else None, months=n, end=end) if end else None
    if kind == "month_quarter":
        return AskedPeriod(said, year, end_month=(year, MONTHS[g["mon"].lower().rstrip(".")]))
    if kind in ("year", "ytd_year"):
        return AskedPeriod(said, year, ytd=kind == "ytd_year")
    return AskedPeriod(said, year, quarter=quarter, half=half, months=months, fiscal=fiscal, calendar=calendar)


def asked_periods(text: str) -> list[AskedPeriod]:
    """Every period ``text`` names, most specific first (a fiscal year or a bare year named beside a finer period of
    the same year is dropped: 'FY22 YTD (first nine months of fiscal 2022)' asks one period)."""
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, AskedPeriod]] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            asked = _from_match(kind, m, text)
            if asked is None:
                continue
            taken.append((m.start(), m.end()))
            found.append((m.start(), asked))
    found.sort(key=lambda x: x[0])
    periods = [p for _, p in found]
    ytd = bool(_YTD.search(text))
    years = {p.year for p in periods if p.year is not None}
    fiscal_years = {p.year for p in periods if p.months == 12 and p.fiscal}
    out: list[AskedPeriod] = []
    for p in periods:
        if p.year is None and (p.quarter or p.half or p.months):  # a loose mark takes the question's one year
            if len(years) != 1:
                continue
            y = next(iter(years))
            p = AskedPeriod(p.text, y, p.quarter, p.half, p.months, fiscal=y in fiscal_years)
        out.append(p)
    finer = {p.year for p in out if p.quarter or p.half or (p.months and p.months < 12) or p.end or p.end_month}
    out = [p for p in out if p.quarter or p.half or (p.months and p.months < 12) or p.end or p.end_month
           or p.year not in finer]
    if ytd:
        out = [AskedPeriod(p.text, p.year, p.quarter, p.half, p.months, p.fiscal, p.calendar, True, p.end,
                           p.end_month) if p.months == 12 or (p.year and not (p.quarter or p.half or p.months))
               else p for p in out]
    unique: dict[tuple, AskedPeriod] = {}
    for p in out:
        unique.setdefault((p.year, p.quarter, p.half, p.months, p.fiscal, p.calendar, p.ytd, p.end, p.end_month), p)
    return list(unique.values())


# -- a document's side -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DocPeriod:
    """A document's period as identity says it: its fiscal label, its calendar label, its end and how it names
    its periods."""

    end: date | None
    months: int | None
    fiscal_year: int | None
    fiscal_period: str | None  # 'Q3', 'H1', '9M', 'FY'; 'dated' for a document with a date and no period
    calendar_year: int | None
    calendar_period: str | None
    year_end_month: int
    names: str | None  # 'fiscal' | 'explicit' | None

    @classmethod
    def of(cls, ident: DocumentIdentity | None) -> DocPeriod | None:
        """None when the identity names no period; a document with only a date (a paper, a policy, a contract) is
        of its date's year ('dated')."""
        if ident is None:
            return None
        if ident.fiscal_year is None:
            if ident.date is None:
                return None
            year = date.fromisoformat(str(ident.date.value)).year
            return cls(None, None, year, "dated", year, "dated", 12, None)
        end = date.fromisoformat(str(ident.period_end.value)) if ident.period_end else None
        months = int(ident.period_months.value) if ident.period_months else None
        fye = int(ident.fiscal_year_end_month.value) if ident.fiscal_year_end_month else 12
        cal_year = cal_period = None
        if end is not None and months:
            year, month = closing_month(end)
            middle = (year * 12 + month - 1) - months // 2  # the month most of the period's days fall around
            cal_year, mid = divmod(middle, 12)
            if months == 3:
                cal_period = f"Q{mid // 3 + 1}"
            elif months == 6:
                cal_period = f"H{mid // 6 + 1}"
            elif months >= 12:
                cal_period = "FY"
        return cls(end, months, int(ident.fiscal_year.value), str(ident.fiscal_period.value)
                   if ident.fiscal_period else None, cal_year, cal_period, fye,
                   str(ident.period_names.value) if ident.period_names else None)


def _labels(asked: AskedPeriod, doc: DocPeriod) -> list[tuple[int | None, str | None]]:
    """The document's (year, period) names the question's period is read against."""
    fiscal, calendar = (doc.fiscal_year, doc.fiscal_period), (doc.calendar_year, doc.calendar_period)
    if asked.fiscal or doc.year_end_month == 12:
        return [fiscal]
    if asked.calendar:
        return [calendar]
    if doc.names == "fiscal":
        return [fiscal]
    if doc.names == "explicit":
        return [calendar]
    return [fiscal, calendar]


def _covers(asked: AskedPeriod, period: str | None) -> bool:
    """A document of ``period`` ('Q2', 'H1', 'FY' ...) reports the asked part of its year: a quarter's own report,
    a half in the report of its second quarter (six months ended) or a half-year report, nine months in the third
    quarter's report, a whole year in an annual report."""
    if period is None:
        return False
    if period == "dated":  # a dated document answers for its year, not for a quarter of it
        return not (asked.quarter or asked.half or asked.months and asked.months < 12)
    if asked.quarter:
        return period == f"Q{asked.quarter}" or (period == "FY" and asked.quarter == 4)
    if asked.half:
        return period in (f"H{asked.half}", f"Q{2 * asked.half}") or (period == "FY" and asked.half == 2)
    if asked.months == 9:
        return period in ("9M", "Q3")
    return period == "FY"


def period_match(asked: AskedPeriod, doc: DocPeriod | None) -> int:
    """EXACT when the document reports the asked period, SAME_YEAR when it reports another period of the asked
    year (a fiscal year asked of quarterly reports, a year-to-date), NO_MATCH otherwise."""
    if doc is None:
        return NO_MATCH
    if asked.end is not None:
        if doc.end is not None and abs((doc.end - asked.end).days) <= 7:
            return EXACT
        return NO_MATCH
    if asked.end_month is not None:
        return EXACT if doc.end is not None and closing_month(doc.end) == asked.end_month else NO_MATCH
    best = NO_MATCH
    for year, period in _labels(asked, doc):
        if year is None or year != asked.year:
            continue
        if _covers(asked, period) and not asked.ytd:
            return EXACT
        best = SAME_YEAR
    return best
