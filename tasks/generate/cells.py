"""Table cells: the value at the row and the column a question names, in a table printed as text lines.

A PDF table comes out as a row per line, a label then its cells ("Research and development $ 6,797 $ 5,717
$ 19,490 $ 16,142"), under header lines that carry the columns' periods and years ("Three Months Ended Nine Months
Ended", then "June 25, 2022", "June 26, 2021", ...). A value is read from such a row only when both its row and its
column are identified without doubt:

- the row: its label (with the label-only line heading its block, "AWS" over "Operating income", else the table's
  title line) names two or more of the question's own terms, more than any other row of the passages, and at least
  half of the label's own words are question terms; an acronym of the question ("R&D", "PP&E") names the words it
  spells ("Research and development"); rows hold cells of the asked class (amounts, or percents for a share); a
  name the question writes with a capital ("Mobileye's net revenue") that labels another row makes the row not it;
- the column: the header gives every cell a year (as many years as cells), and a period when it groups the cells
  ("Three Months Ended" / "Nine Months Ended" over four cells: two each); the question names one year and, where the
  table groups its cells, one period ("Q3 FY2022": three months, 2022); exactly one cell has both. A fiscal year is
  named after the calendar year it ends in, so "FY2023" also reads the column of 2022 when no column is of 2023.

Otherwise there is no cell, and the reader's other picks decide (``typed.pick_numeric``). A question that defines
its quantity by a formula or asks one quantity relative to another is never answered by one cell.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from tasks.generate.measure import measure_words, unnamed
from tasks.generate.sentences import STOPWORDS, TOKEN_RE, PLine, matched, stem
from tasks.generate.typed import Pick, Reader

# a cell: an amount as tables print it, "$ 6,797", "(1,016)", "56.8 %", "(21)%", or a dash for an empty cell
_CELL = r"(?:\$\s?)?\(?-?\d[\d,]*(?:\.\d+)?\)?\s?%?|[—–-](?:\s?%)?"  # "— %": an empty cell of a percent column
_ROW = re.compile(rf"^(?P<label>[A-Za-z][^$\d]*?)\s+(?P<cells>(?:{_CELL})(?:\s+(?:{_CELL}))+)\s*$")
_CELL_RE = re.compile(_CELL)
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
_GROUP = re.compile(r"(?i)\b(three|six|nine|twelve|3|6|9|12)\s+months?\s+ended|\b(quarter|year)\s+ended")
_GROUP_MONTHS = {"three": 3, "3": 3, "six": 6, "6": 6, "nine": 9, "9": 9, "twelve": 12, "12": 12, "quarter": 3,
                 "year": 12}
# the words a header line is made of: periods, dates, units, change columns
_HEADER_WORDS = re.compile(
    r"(?i)\b(?:three|six|nine|twelve|months?|weeks?|ended|ending|quarters?|years?|fiscal|as|of|at|and|change|percent|"
    r"percentage|except|per|share|amounts|data|unaudited|ytd|"
    r"in|millions?|billions?|thousands?|dollars|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|"
    r"july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|q[1-4]|unaudited)\b")
_SCALE = re.compile(r"(?i)\bin (millions|billions|thousands)\b")
_SHARE_TABLE = re.compile(r"(?i)\b(?:percent(?:age)?s? of|as a % of|mix)\b")  # "Net sales mix:" shares of a total
_FOOTNOTE = re.compile(r"\([1-9]\)")  # a footnote marker after a row's label, one more cell than the header has years
MAX_WALK = 60  # lines a row's header is looked for above it
MIN_TERMS = 2  # question terms a row must name: one alone ("balance", "end") is as often framing as the metric
LABEL_WORDS = 8  # a label-only line this short heads the rows under it ("AWS", "Operating income (loss):")

# the period a question names: (months or "ytd", two- or four-digit year, fiscal)
_Q_PERIODS = [
    (re.compile(r"(?i)\bQ([1-4])\s*(FY)?\s*'?(\d{4}|\d{2})\b"), lambda m: (3, m.group(3), bool(m.group(2)))),
    (re.compile(r"(?i)\b([1-4])Q\s*(FY)?\s*'?(\d{4}|\d{2})\b"), lambda m: (3, m.group(3), bool(m.group(2)))),
    (re.compile(r"(?i)\bFY\s*'?(\d{4}|\d{2})\s*Q([1-4])\b"), lambda m: (3, m.group(1), True)),
    (re.compile(r"(?i)\b(H1|6M|9M|YTD)\s*(FY)?\s*'?(\d{4}|\d{2})\b"),
     lambda m: (_PART[m.group(1).upper()], m.group(3), bool(m.group(2)))),
    (re.compile(r"(?i)\bFY\s*'?(\d{4}|\d{2})\s*(H1|6M|9M|YTD)\b"),
     lambda m: (_PART[m.group(2).upper()], m.group(1), True)),
]
_PART = {"H1": 6, "6M": 6, "9M": 9, "YTD": "ytd"}
_DEFINED = re.compile(r"(?i)\bdefined as\b|\bdefine \w+(?: \w+)? as\b|\s=\s")
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_MONTH_RE = re.compile(r"(?i)\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b")
_NAMED_COLUMN = re.compile(r"(?i)\b(Q[1-4]|YTD|H1|6M|9M)\s*((?:19|20)\d{2})\b")
# a question that defines its quantity by a formula or asks one quantity relative to another computes it from
# several cells: any one cell is an operand, never the answer
_FORMULA = re.compile(r"(?i)\bdefined? as\b|\bdefinition\b|=|\bas an? (?:share|percentage|percent|%|ratio|fraction|proportion|multiple) of\b|% of\b|"
                      r"\b(?:divided by|minus|plus|less|excluding|net of|ratio|per cent of|compute|calculate)\b")


@dataclass
class Row:
    line: PLine
    label: str
    cells: list[str]
    context: str  # the label-only line heading the row's block
    years: list[str]  # the column years, one per cell
    months: list[int | str | None]  # the column periods, one per cell (None: the header does not group the cells)
    scale: str
    span: int = 1  # cells under one column of the header ("Amount" and "% of Net Revenue": 2)
    ends: list[int | None] | None = None  # the month each column's period ends in, where the header dates them
    part_of: str = ""  # what the "Total X" row closing its run of rows totals (X), for a formula's operands


def parse_row(text: str) -> tuple[str, list[str]] | None:
    """``(label, cells)`` of a table row: a label then two or more cells and nothing else."""
    m = _ROW.match(text.strip())
    if not m:
        return None
    cells = [c.replace(" ", "") for c in _CELL_RE.findall(m.group("cells"))]
    return (m.group("label").strip(), cells) if len(cells) >= 2 else None


def is_header(text: str) -> bool:
    """A header line: only periods, dates, years, units and '$'/'%' ("Three Months Ended", "June 25,", "2022")."""
    if re.search(r"\d,\d{3}|\(\d", text):
        return False  # an amount ("1,655", "(378)"): a row's cells, printed apart from its label
    rest = _HEADER_WORDS.sub(" ", text)
    rest = re.sub(r"[\d,.;$%()/:\-–—|]", " ", rest)
    return bool(text.strip()) and not rest.split()


_CELLS_ONLY = re.compile(rf"(?:{_CELL})(?:\s+(?:{_CELL}))*")


def table_line(text: str, below: str = "") -> str:
    """What a line between a table row and its header is: ``row``; ``label``, a short line or one ending in a colon
    that heads the rows under it ("Operating income (loss):", "Adjustments to reconcile net income to net cash from
    operations:"); ``part`` of a row printed on two lines, its cells alone ("8,124 9,788 25,083 30,764" under
    "Client Computing") or a long label that runs on into the row below ("Acquisition of companies, net of cash
    acquired, and purchases of" over "intangible and other assets (301) (18,719)"); else ``prose``."""
    if parse_row(text):
        return "row"
    if _CELLS_ONLY.fullmatch(text):
        return "part"
    if re.search(r"\d", text):
        return "prose"
    if len(text.split()) <= LABEL_WORDS or text.endswith(":"):
        return "label"
    return "part" if re.match(r"[a-z]", below) else "prose"


def _header(rows: list[PLine], k: int) -> tuple[list[str], list[int], list[tuple[int | str, str]], list[int], str, str,
                                                bool] | None:
    """Years, period groups, named periods ("Q3 2023", "YTD 2023") and end months of the header above row ``k``, the
    label heading the row's block, the scale, and whether the table states shares (percents printed bare)."""
    context = ""
    i = k - 1
    cells_below = False  # the line below is the cells of a row whose label is this line
    while i >= 0 and k - i <= MAX_WALK and not is_header(rows[i].text):
        text = rows[i].text.strip()
        kind = table_line(text, rows[i + 1].text.strip())
        if kind == "prose":
            return None  # prose between the row and any header: not this row's header
        if kind == "label" and not cells_below:
            context = context or text
        cells_below = bool(_CELLS_ONLY.fullmatch(text))
        i -= 1
    block: list[str] = []
    while i >= 0 and is_header(rows[i].text):
        block.insert(0, rows[i].text)
        i -= 1
    if not block:
        return None
    title = rows[i].text.strip() if i >= 0 else ""
    if not context and title and not re.search(r"\d", title) and len(title.split()) <= LABEL_WORDS:
        context = title  # the table's title line names what its rows state ("Revenue by Reportable Segments")
    head = " ".join(block)
    # the columns in header order: a year each, or a change column ("$ Change", "% Change") with no year
    years = re.findall(r"(?i)\b(?:19|20)\d{2}\b|\bchange\b", head)
    groups = [_GROUP_MONTHS[(g.group(1) or g.group(2)).lower()] for g in _GROUP.finditer(head)]
    named = [(_PART.get(m.group(1).upper(), 3), m.group(2)) for m in _NAMED_COLUMN.finditer(head)]
    ends = [closing_month(m.group(0)) for m in _MONTH_RE.finditer(head)]
    above = " ".join(ln.text for ln in rows[max(0, i - 3): k])
    scale = _SCALE.search(above)
    # a table "expressed as a percentage of revenue" (its title, or the heading of the row's block, says so)
    # prints its percents without the sign; a header with a percent column of its own mixes amounts and percents
    title = " ".join(ln.text for ln in rows[max(0, i - 3): i + 1])
    shares = bool(_SHARE_TABLE.search(f"{title} {context}")) and not re.search(r"%|(?i:percent)", head)
    return years, groups, named, ends, context, (scale.group(1).lower().rstrip("s") if scale else ""), shares


def table_rows(r: Reader) -> list[Row]:
    out = []
    for rows in r.by_passage:
        for k, ln in enumerate(rows):
            parsed = parse_row(ln.text)
            if parsed is None or r.is_reference_list(ln):
                continue
            head = _header(rows, k)
            if head is None:
                continue
            years, groups, named, ends, context, scale, shares = head
            label, cells = parsed
            if len(cells) == len(years) + 1 and _FOOTNOTE.fullmatch(cells[0]):
                label, cells = f"{label} {cells[0]}", cells[1:]  # "Third-party seller services (3) 25,335 29,820"
            if shares:  # "Research and development 32.8 19.8" under "... expressed as a percentage of revenue"
                cells = [c if c.endswith("%") or c in "—–-" else f"{c}%" for c in cells]
            if named and len(cells) % len(named) == 0 and len(cells) // len(named) <= 2:
                # columns named by period and year; a column may span an amount and its share ("Amount", "% of
                # Net Revenue"), told apart by the asked class
                span = len(cells) // len(named)
                out.append(Row(ln, label, cells, context, [named[j // span][1] for j in range(len(cells))],
                               [named[j // span][0] for j in range(len(cells))], scale, span))
                continue
            if len(years) != len(cells) or not years[0].isdigit():
                continue  # the columns cannot be told from the header (a change column printed first: out of order)
            per = len(cells) // len(groups) if groups and len(cells) % len(groups) == 0 else 0
            months = [groups[j // per] if per else None for j in range(len(cells))]
            dated = iter(ends if len(ends) == sum(y.isdigit() for y in years) else [])
            out.append(Row(ln, label, cells, context, years, months, scale,
                           ends=[next(dated, None) if y.isdigit() else None for y in years]))
    return _under_totals(out)


def _under_totals(rows: list[Row]) -> list[Row]:
    """A row with no heading of its own, in a run of rows under one header that ends in a "Total X" row, is a part
    of X ("iPhone" ... "Total net sales": iPhone's net sales). Kept apart from its heading: a part is never the
    total a question asks ("Other, net" is no net income), only an operand a formula names ("iPhone net sales")."""
    run: list[Row] = []
    for row in rows:
        if run and (row.line.pidx != run[-1].line.pidx or row.years != run[-1].years or row.context != run[-1].context):
            run = []
        run.append(row)
        total = re.match(r"(?i)^total\s+(.+)$", row.label)
        if total:
            for part in run[:-1]:
                if not part.context:
                    part.part_of = total.group(1)
            run = []
    return rows


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


@functools.lru_cache(maxsize=256)  # the question's, asked again for every row of every table scored
def _acronyms(text: str) -> frozenset[str]:
    return frozenset(re.sub(r"[&/-]", "", t) for t in re.findall(r"\b[A-Z][A-Za-z]*(?:[&/-]?[A-Z])+\b", text)
                     if sum(ch.isupper() for ch in t) >= 2)


def _letters(label: str) -> list[str]:
    """The initial of each word of a label that an acronym spells (a short all-capitals word stands whole: "AI")."""
    words = [w for w in re.findall(r"[A-Za-z]+", label) if w.lower() not in STOPWORDS]
    return [w if w.isupper() and len(w) <= 4 else w[0].upper() for w in words]


def _initials(label: str) -> str:
    return "".join(_letters(label))


def _spelled(label: str, acronyms: frozenset[str]) -> int:
    """Words of the label that an acronym of the question spells, consecutive ("PP&E": "Property, plant and
    equipment" of "Property, plant and equipment, net")."""
    letters = _letters(label)
    return max((j - i for i in range(len(letters)) for j in range(i + 1, len(letters) + 1)
                if "".join(letters[i:j]) in acronyms and j - i >= 2), default=0)


def row_score(r: Reader, row: Row) -> tuple[int, float]:
    """(question terms the label names, share of the label's words that are question terms); an acronym of the
    question names the label's words it spells."""
    words = [stem(t) for t in TOKEN_RE.findall(row.label.lower()) if t not in STOPWORDS]
    if not words:
        return 0, 0.0
    # "total" is no subject of its own to the reader, but "total revenue" asks the row labelled "Total"
    total = ["total"] if re.search(r"\btotal\b", r.q_low) else []
    terms = list(dict.fromkeys(r.terms.words + r.terms.secondary + total))
    acronyms = _acronyms(r.q_text)
    spelled = _spelled(row.label, acronyms)
    own = matched(words, set(terms))
    ctx = {stem(t) for t in TOKEN_RE.findall(row.context.lower()) if t not in STOPWORDS}
    named = matched(r.terms.words + total, set(words) | ctx)  # the question's own terms the label and its heading name
    extra = spelled + _spelled(row.context, acronyms)
    return len(named) + extra, min(1.0, (len(own) + spelled) / len(words))


_JOINED = re.compile(r"\b([A-Z][\w-]*)\s+(?:&|and)\s+([A-Z][\w-]*)\b")


def joins_another(label: str, q_text: str) -> bool:
    """The label joins two names ("Compute & Networking", "Sales and Marketing") and the question names one of
    them only: the row is the figure of both together, not of the one asked."""
    asked = q_text.lower()
    return any((m.group(1).lower() in asked) != (m.group(2).lower() in asked) for m in _JOINED.finditer(label))


def the_row(r: Reader, rows: list[Row]) -> list[Row]:
    """The rows that name the question's subject best, when they are one subject (one label); else none. A row of
    two names joined, one of them asked, is not the asked one's."""
    scored = [(row_score(r, row), row) for row in rows if not joins_another(row.label, r.q_text)]
    # a one-word measure ("inventories") is named whole by one term; the rows were kept for naming the whole measure
    least = max(1, min(MIN_TERMS, len(measure_words(r.q_text))))
    scored = [(s, row) for s, row in scored if s[0] >= least and s[1] >= 0.5]
    if not scored:
        return []
    top = max(s for s, _ in scored)
    best = [row for s, row in scored if s == top]
    # one subject: one label, or one label with its heading that every other row's names (the same row printed in
    # two tables, the statement and a note, is one subject, whichever of the two names the heading: "International"
    # under "Operating income (loss)" and "Operating income" under "International"); the caller then requires one
    # value
    subjects = sorted((_subject(row) for row in best), key=len)
    one = len({row.label.lower() for row in best}) == 1 or all(subjects[0] <= s for s in subjects)
    return best if one else []


def _subject(row: Row) -> frozenset[str]:
    return frozenset(stem(t) for t in TOKEN_RE.findall(f"{row.label} {row.context}".lower()) if t not in STOPWORDS)


_ENDS_ON = re.compile(r"(?i)\b(?:as of|ended|ending|at)\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+"
                      r"\d{1,2},?\s+(?:19|20)\d\d\b")


def closing_month(date: str) -> int:
    """The month a period ending on ``date`` closes: a 52- or 53-week period that ends in the first week of a month
    closes the month before ("October 1, 2022": the quarter of July to September, 9)."""
    month = _MONTHS.index(_MONTH_RE.search(date).group(0)[:3].lower()) + 1
    day = int(re.search(r"\d{1,2}\b", _MONTH_RE.search(date).group(0)).group(0))
    return (month - 2) % 12 + 1 if day <= 7 else month


def calendar_end(text: str) -> int | None:
    """The month the period the question names ends in: the date it names ("as of April 30, 2023": 4, "the three
    months ended July 1, 2023": 6, ``closing_month``), else a calendar period's ("Q2 2023": 6, "H1 2023": 6); None for a fiscal
    period named without its date, whose months depend on where the fiscal year starts."""
    if len(dates := {closing_month(m.group(0)) for m in _ENDS_ON.finditer(text)}) == 1:
        return dates.pop()
    if re.search(r"(?i)\bFY|\bfiscal\b", text):
        return None
    m = re.search(r"(?i)\bQ([1-4])(?=\s*'?\d{2})|\b([1-4])Q(?=\s*'?\d{2})|\b(H1|6M|9M)(?=\s*'?\d{2})", text)
    if not m:
        return None
    return 3 * int(m.group(1) or m.group(2)) if not m.group(3) else (9 if m.group(3).upper() == "9M" else 6)


def _columns(row: Row, period: tuple[int | str | None, int, bool], end: int | None = None) -> list[int]:
    """The cells under the column of the question's period: one, or an amount and its share; none when unsure. A
    column dated to end in another month than the calendar period asked ("Three Months Ended March 31" for "Q2
    2023") is another period."""
    months, year, fiscal = period
    cols = list(range(len(row.cells)))
    if end is not None and row.ends:
        cols = [j for j in cols if row.ends[j] in (None, end)]
    if "ytd" in row.months:  # a year-to-date column is the one period longer than a quarter the header names
        months = "ytd" if months in (6, 9, "ytd") else months
    elif any(m is not None for m in row.months):
        if months == "ytd":
            longer = [m for m in row.months if m is not None and 3 < m < 12]
            months = max(longer) if longer else None
    # the period must be the column's: none asked of a table whose columns carry one, or a quarter asked of a
    # table whose columns carry none (an annual or an as-of table), leaves the column unknown
    if any(m is not None for m in row.months) or months is not None:
        if months is None:
            return []
        cols = [j for j in cols if row.months[j] == months]
    for y in ([year, year - 1] if fiscal else [year]):
        hit = [j for j in cols if row.years[j].isdigit() and int(row.years[j]) == y]
        if hit:
            return hit if len(hit) == row.span else []
    return []


def of_the_year(rows: list[Row], period: tuple[int | str | None, int, bool]) -> list[Row]:
    """A fiscal year is read as the calendar year it ends in, or the one before (``_columns``); where some of the rows
    carry a column of the year named itself, those rows are the year's, and the others' earlier year is not it
    (two filings' tables: "9M FY23" is the 2023 column of the one, not the 2022 column of the other)."""
    exact = [row for row in rows if any(y.isdigit() and int(y) == period[1] for y in row.years)]
    return exact if period[2] and exact else rows


def _fits(cls: str, cell: str) -> bool:
    if cell.rstrip("%") in "—–-":
        return False
    if cls == "percentage":
        return cell.endswith("%")
    return not cell.endswith("%") and cls in ("money", "number", "count")


_PER_SHARE = re.compile(r"(?i)\bper[- ](?:common |ordinary )?share\b|\bEPS\b")


def per_share(text: str) -> bool:
    return bool(_PER_SHARE.search(text))


def _value(row: Row, cell: str) -> str:
    negative = cell.lstrip("$").startswith(("(", "-"))  # "(265)", "$(265)": a table's negative
    number = cell.strip("$()-%")
    if cell.endswith("%"):
        return f"{'-' if negative else ''}{number}%"
    dollar = "$" if "$" in cell or "$" in row.line.text else ""
    # "(in millions, except per share amounts)": a per-share row is in dollars, whatever the table's scale
    scale = "" if per_share(f"{row.label} {row.context}") else row.scale
    return f"{'-' if negative else ''}{dollar}{number}{' ' + scale if scale else ''}"


_OUTLAY = re.compile(r"(?i)\b(?:expenses?|costs?|spen[dt]|spending|outlays?)\b")


def deduction(r: Reader, row: Row) -> bool:
    """An expense row of a reconciliation ("Research and development expense (6,797) (5,717) ..."): every cell in
    parentheses, the amount it takes off a total; the question asks that outlay, not a negative of it."""
    return (bool(_OUTLAY.search(row.label)) and bool(_OUTLAY.search(r.q_text))
            and not re.search(r"(?i)\b(?:income|benefit|gain|loss|net)\b", row.label)
            and all((n := cell_number(c)) is None or n < 0 for c in row.cells))


def cell_number(cell: str) -> float | None:
    """A cell's number, negative when printed in parentheses or with a minus ("$(7,419)", "(3)%"); None for a dash."""
    text = cell.replace("$", "").replace(",", "").replace("%", "")
    negative = text.startswith(("(", "-"))
    try:
        value = float(text.strip("()-"))
    except ValueError:
        return None
    return -value if negative else value


def residual(label: str, asked: str) -> bool:
    """An "Other" row ("Other, net", "Other income (expense), net") the ask does not name: the residual line of a
    block, never the measure (or a formula's operand) it is part of."""
    return bool(re.search(r"(?i)\bother\b", label)) and not re.search(r"(?i)\bother\b", asked)


def names_the_measure(r: Reader, row: Row) -> bool:
    """The row (its label, its block's heading, its passage's section) names every word of the asked measure
    (``measure.py``), and is a per-share row exactly when the question asks a per-share figure."""
    if per_share(f"{row.label} {row.context}") != per_share(r.q_text):
        return False
    if residual(row.label, r.q_text):
        return False
    if per_share(r.q_text) and not any("." in c for c in row.cells):
        return False  # a per-share amount is printed to the cent; whole numbers under "per share" are share counts
    section = row.line.passage.get("section") or ""
    return not unnamed(measure_words(r.q_text), f"{row.label} {row.context} {section}", r.q_text)


def defines_quantity(text: str) -> bool:
    """The question defines the quantity it asks by a formula ("Operating margin is defined as operating income /
    net sales", "EBITDA = ..."): the value is computed, a stated number is at most one of its operands."""
    return bool(_DEFINED.search(text))


_MONTH_NAME = re.compile(r"(?i)(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?")


def _names(text: str) -> set[str]:
    """The names a question writes with a capital (not its first word, a period or a currency): its subjects."""
    words = re.findall(r"(?<![.?!]\s)(?<!^)\b[A-Z][\w&’'-]*", text.strip())
    return {stem(re.sub(r"[’']s$", "", w)) for w in words
            if len(w) >= 2 and not re.fullmatch(r"(?i)(?:Q[1-4]|[1-4]Q\d*|FY\d*|H[12]|[69]M|YTD|USD|GAAP)", w)
            and not _MONTH_NAME.fullmatch(w)}  # a month names the period, not a subject


_ATTRIBUTABLE = re.compile(r"(?i)\battributable to\b.*$")


def _named_elsewhere(r: Reader, row: Row) -> str:
    """A name of the question that the row (its label, its block's heading) does not carry but another table row's
    label does: the question asks about that row's subject."""
    own = {stem(t) for t in TOKEN_RE.findall(f"{row.label} {row.context}".lower())}
    acronyms = _acronyms(r.q_text)
    for name in _names(r.q_text) - own:
        for rows in r.by_passage:
            for ln in rows:
                parsed = parse_row(ln.text)
                # "Net income attributable to Intel" is the owner's share of another measure, not a row of Intel's
                label = _ATTRIBUTABLE.sub("", parsed[0]) if parsed else ""
                if parsed and ln is not row.line and (
                        name in {stem(t) for t in TOKEN_RE.findall(label.lower())}
                        or (_initials(label) in acronyms and _initials(label).lower() == name)):
                    return name
    return ""


def on_dated_row(r: Reader, pick: Pick) -> bool:
    """The pick is a cell of a table row whose header dates its columns, for a question that names a period: the
    cell reader found no column of that period there, so the value is one of the other periods' columns."""
    if question_period(r.q_text) is None:
        return False
    line = pick.lines[0]
    return any(row.line is line and any(y.isdigit() for y in row.years) for row in table_rows(r))


def pick_cell(r: Reader) -> Pick | None:
    """The value at the row and column the question names, when both are identified without doubt."""
    period = question_period(r.q_text)
    if period is None or _FORMULA.search(r.q_text):
        return None
    # a row answers only in cells of the asked class: a money question's row holds amounts, a share's percents
    rows = [row for row in table_rows(r) if any(_fits(r.asked.cls, c) for c in row.cells)
            and names_the_measure(r, row)]
    values = {}
    for row in of_the_year(the_row(r, rows), period):
        fit = [j for j in _columns(row, period, calendar_end(r.q_text)) if _fits(r.asked.cls, row.cells[j])]
        if len(fit) != 1:
            continue  # no column of the asked period, or no one: another table of the subject may have it
        value = _value(row, row.cells[fit[0]])
        if deduction(r, row):
            value = value.lstrip("-")  # the outlay asked, printed as what it takes off a reconciliation's total
        # the statement prints "$ 297", the note "297": one figure, shown with its currency where one prints it
        key = value.replace("$", "")
        if key not in values or "$" in value:
            values[key] = (value, row)
    if len(values) != 1:
        return None
    value, row = next(iter(values.values()))
    if _named_elsewhere(r, row):
        return None  # the question names a subject ("Mobileye's net revenue") that another row is labelled by
    score, _ = row_score(r, row)
    return Pick(value, [row.line], 10.0, 1.0, max(2, score), "cell", 0.8,
                [f"the cell of {row.label!r} under the column of {period[1]}"])
