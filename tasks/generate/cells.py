"""Table cells: the value at the row and the column a question names, in tables read by ``tables``. A value is read
only when both its row and its column are identified without doubt:

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

from tasks.generate.measure import measure_words, owners, unnamed
from tasks.generate.period import asked_close, question_period
from tasks.generate.sentences import STOPWORDS, TOKEN_RE, matched, stem
from tasks.generate.tables import Row, cell_number, parse_row, table_rows
from tasks.generate.typed import Pick, Reader

MIN_TERMS = 2  # question terms a row must name: one alone ("balance", "end") is as often framing as the metric
_DEFINED = re.compile(r"(?i)\bdefined as\b|\bdefine \w+(?: \w+)? as\b|\s=\s")
# a question that defines its quantity by a formula or asks one quantity relative to another computes it from
# several cells: any one cell is an operand, never the answer
_FORMULA = re.compile(r"(?i)\bdefined? as\b|\bdefinition\b|=|\bas an? (?:share|percentage|percent|%|ratio|fraction|proportion|multiple) of\b|% of\b|"
                      r"\b(?:divided by|minus|plus|less|excluding|net of|ratio|per cent of|compute|calculate)\b")


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


def joins_another(label: str, q_low: str) -> bool:
    """The label joins two names ("Compute & Networking", "Sales and Marketing") and the question (lower case) names
    one of them only: the row is the figure of both together, not of the one asked."""
    return any((m.group(1).lower() in q_low) != (m.group(2).lower() in q_low) for m in _JOINED.finditer(label))


def the_row(r: Reader, rows: list[Row]) -> list[Row]:
    """The rows that name the question's subject best, when they are one subject (one label); else none. A row of
    two names joined, one of them asked, is not the asked one's."""
    scored = [(row_score(r, row), row) for row in rows if not joins_another(row.label, r.q_low)]
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


_PART_OF = re.compile(r"(?i)\b(?:included|recorded|recognized|reported|presented)\s+(?:in|within|as)\b")


def residual(label: str, asked: str) -> bool:
    """An "Other" row ("Other, net", "Other income (expense), net") the ask does not name: the residual line of a
    block, never the measure (or a formula's operand) it is part of; and a row that says it is a part of another
    ("Tax benefit included in provision for income taxes"): its figure is the part's, not the measure's."""
    other = bool(re.search(r"(?i)\bother\b", label)) and not re.search(r"(?i)\bother\b", asked)
    return other or (bool(_PART_OF.search(label)) and not _PART_OF.search(asked))


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
    own = {stem(t) for t in TOKEN_RE.findall(f"{row.label} {row.context}".lower())} | {_initials(row.label).lower()}
    acronyms = _acronyms(r.q_text)
    names = _names(r.q_text)
    if names & own:
        # the row carries a name of the question ("Accelerated Computing Systems and Graphics"): the one whose
        # figure it is ("Intel's", also in "Intel Foundry Services") is no other subject
        names -= {stem(o) for o in owners(r.q_text)}
    for name in names - own:
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
        end = asked_close(r.q_text, row.line.passage)
        fit = [j for j in _columns(row, period, end) if _fits(r.asked.cls, row.cells[j])]
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
