"""The period a question asks and the month a period closes, for the table-cell readers (``cells``, ``changes``,
``formula``): "Q3 FY2022" is three months of fiscal 2022, "the nine months ended September 30, 2023" nine months
of 2023 closing in September, "October 1, 2022" closes September (a 52- or 53-week year, ``tasks.corpus.fiscal``).
"""

from __future__ import annotations

import re
from datetime import date

from tasks.corpus.fiscal import closing_month as closing_of_date

_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
# the period a question names: (months or "ytd", two- or four-digit year, fiscal)
_Q_PERIODS = [
    (re.compile(r"(?i)\bQ([1-4])\s*(FY)?\s*'?(\d{4}|\d{2})\b"), lambda m: (3, m.group(3), bool(m.group(2)))),
    (re.compile(r"(?i)\b([1-4])Q\s*(FY)?\s*'?(\d{4}|\d{2})\b"), lambda m: (3, m.group(3), bool(m.group(2)))),
    (re.compile(r"(?i)\bFY\s*'?(\d{4}|\d{2})\s*Q([1-4])\b"), lambda m: (3, m.group(1), True)),
    (re.compile(r"(?i)\b(H1|6M|9M|YTD)\s*(FY)?\s*'?(\d{4}|\d{2})\b"),
     lambda m: (PART[m.group(1).upper()], m.group(3), bool(m.group(2)))),
    (re.compile(r"(?i)\bFY\s*'?(\d{4}|\d{2})\s*(H1|6M|9M|YTD)\b"),
     lambda m: (PART[m.group(2).upper()], m.group(1), True)),
]
PART = {"H1": 6, "6M": 6, "9M": 9, "YTD": "ytd"}
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
MONTH_RE = re.compile(r"(?i)\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b")


def question_period(text: str) -> tuple[int | str | None, int, bool] | None:
    """(months or 'ytd' or None, year, fiscal) of the one period the question names; None: none or several."""
    found = set()
    for pat, read in _Q_PERIODS:
        for m in pat.finditer(text):
            months, year, fiscal = read(m)
            found.add((months, int(year) % 100 + 2000 if len(year) == 2 else int(year), fiscal))
    dated = {m.group(0) for m in _ENDS_ON.finditer(text)}
    if not found and len(dated) == 1 and len({int(y) for y in _YEAR.findall(text)}) > 1:
        # "the first quarter of fiscal year 2023 (quarter ended September 30, 2022)": the date names the column
        text = re.sub(r"(?i)\bFY\s*'?\d{2,4}\b|\bfiscal(?: year)?\s+(?:19|20)\d\d\b", " ", text)
    if not found:
        years = {int(y) for y in _YEAR.findall(text)}
        fy = re.findall(r"(?i)\bFY\s*'?(\d{4}|\d{2})\b", text)
        years |= {int(y) % 100 + 2000 if len(y) == 2 else int(y) for y in fy}
        if len(years) != 1:
            return None
        low = text.lower()
        months = (3 if re.search(r"\b(?:three months|quarter)\b|\bq[1-4]|\b[1-4]q\b", low) else
                  6 if re.search(r"\b(?:six months|first half)\b", low) else
                  9 if re.search(r"\bnine months\b", low) else
                  "ytd" if re.search(r"\b(?:ytd|year[- ]to[- ]date)\b", low) else None)
        found.add((months, years.pop(), bool(fy) or "fiscal" in low))
    return found.pop() if len(found) == 1 else None


_ENDS_ON = re.compile(r"(?i)\b(?:as of|ended|ending|at)\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+"
                      r"\d{1,2},?\s+(?:19|20)\d\d\b")


def closing_month(text: str) -> int:
    """The month a period ending on the date ``text`` starts with closes ("October 1, 2022": 9; a date printed
    without its year, "June 25,", in a header whose years stand on another line, is read in a leap year)."""
    m = MONTH_RE.search(text)
    month, day = MONTHS.index(m.group(0)[:3].lower()) + 1, int(re.search(r"\d{1,2}\b", m.group(0)).group(0))
    try:
        return closing_of_date(date(2000, month, day))[1]
    except ValueError:  # no such day ("June 31"): the month printed
        return month


def calendar_end(text: str) -> int | None:
    """The month the period the question names ends in: the date it names ("as of April 30, 2023": 4, "the three
    months ended July 1, 2023": 6, ``closing_month``), else a calendar period's ("Q2 2023": 6, "H1 2023": 6); None
    for a fiscal period named without its date, whose months depend on where the fiscal year starts."""
    if len(dates := {closing_month(m.group(0)) for m in _ENDS_ON.finditer(text)}) == 1:
        return dates.pop()
    if re.search(r"(?i)\bFY|\bfiscal\b", text):
        return None
    m = re.search(r"(?i)\bQ([1-4])(?=\s*'?\d{2})|\b([1-4])Q(?=\s*'?\d{2})|\b(H1|6M|9M)(?=\s*'?\d{2})", text)
    if not m:
        return None
    return 3 * int(m.group(1) or m.group(2)) if not m.group(3) else (9 if m.group(3).upper() == "9M" else 6)


_FISCAL_PART = re.compile(r"(?i)\bQ([1-4])\s*(?:FY)|\bFY\s*'?\d{2,4}\s*Q([1-4])\b|\b(first|second|third|fourth)\s+"
                          r"(?:fiscal\s+)?quarter\s+of\s+fiscal\b|\b(H1|6M|9M)\s*FY|\bFY\s*'?\d{2,4}\s*(H1|6M|9M)\b|"
                          r"\bfirst\s+(half|nine\s+months)\s+of\s+fiscal\b")
_ELAPSED = {"first": 3, "second": 6, "third": 9, "fourth": 12, "h1": 6, "6m": 6, "9m": 9, "half": 6}


def fiscal_close(text: str, year_end_month: int | None) -> int | None:
    """The month a fiscal period the question names by its place in the year ("Q2 FY2023", "the first quarter of
    fiscal 2024", "H1 FY23") closes, in a document whose fiscal year ends in ``year_end_month`` (its identity):
    Q2 of a year ending in December closes in June, of one ending in September in March. None when the question
    names no such period or the year end is not known."""
    m = _FISCAL_PART.search(text)
    if m is None or year_end_month is None:
        return None
    part = next(g for g in m.groups() if g).lower()
    elapsed = 3 * int(part) if part.isdigit() else _ELAPSED.get(part, 9 if "nine" in part else 0)
    return (year_end_month + elapsed - 1) % 12 + 1 if elapsed else None


def asked_close(text: str, passage: dict) -> int | None:
    """The month the asked period closes in, read for one passage: the date or calendar period the question names
    (:func:`calendar_end`), else its fiscal period closed by the passage's document's fiscal year end
    (:func:`fiscal_close`)."""
    return calendar_end(text) or fiscal_close(text, passage.get("fiscal_year_end_month"))
