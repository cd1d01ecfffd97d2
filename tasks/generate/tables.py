"""Tables printed as text lines, read into rows whose columns are dated.

A PDF table comes out as a row per line, a label then its cells ("Research and development $ 6,797 $ 5,717
$ 19,490 $ 16,142"), under header lines that carry the columns' periods and years ("Three Months Ended Nine Months
Ended", then "June 25, 2022", "June 26, 2021", ...). A row is read with its header when only rows, block headings
("Operating expenses:") and the parts of rows printed on two lines stand between them; its columns get a year each
(as many years as cells), a period when the header groups them, the month each ends in where the header dates
them, and the table's scale. Which row and which column answer a question is ``cells``'s to decide.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tasks.generate.period import MONTH_RE, PART, closing_month
from tasks.generate.sentences import PLine
from tasks.generate.typed import Reader

# a cell: an amount as tables print it, "$ 6,797", "(1,016)", "56.8 %", "(21)%", or a dash for an empty cell
_CELL = r"(?:\$\s?)?\(?-?\d[\d,]*(?:\.\d+)?\)?\s?%?|[—–-](?:\s?%)?"  # "— %": an empty cell of a percent column
_ROW = re.compile(rf"^(?P<label>[A-Za-z][^$\d]*?)\s+(?P<cells>(?:{_CELL})(?:\s+(?:{_CELL}))+)\s*$")
_CELL_RE = re.compile(_CELL)
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
LABEL_WORDS = 8  # a label-only line this short heads the rows under it ("AWS", "Operating income (loss):")

_NAMED_COLUMN = re.compile(r"(?i)\b(Q[1-4]|YTD|H1|6M|9M)\s*((?:19|20)\d{2})\b")


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
# a row whose label prints figures of its own ("Property, plant, and equipment, net of accumulated depreciation of
# $95,781 ($93,386 as of December 31, 2022) 90,945 80,860"): no row to read, but no prose either; the rows under it
# keep their header
_ENDS_IN_CELLS = re.compile(rf"^[A-Za-z].*?\s(?:{_CELL})\s+(?:{_CELL})\s*$")


def cells_only(text: str) -> bool:
    """A line of cells alone: the row of the label above it, or the total of the block that label heads."""
    return bool(_CELLS_ONLY.fullmatch(text))


def table_line(text: str, below: str = "") -> str:
    """What a line between a table row and its header is: ``row``; ``label``, a short line or one ending in a colon
    that heads the rows under it ("Operating income (loss):", "Adjustments to reconcile net income to net cash from
    operations:"); ``part`` of a row printed on two lines, its cells alone ("8,124 9,788 25,083 30,764" under
    "Client Computing") or a long label that runs on into the row below ("Acquisition of companies, net of cash
    acquired, and purchases of" over "intangible and other assets (301) (18,719)"); else ``prose``."""
    if parse_row(text) or _ENDS_IN_CELLS.search(text):
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
    # a line of cells alone is the row of the next label up: its own ("Client Computing" over "8,124 9,788 ..."),
    # or the total of the block that label heads ("Client Computing", "Desktop ...", "Other ...", "8,124 ..."); that
    # label is no heading of the rows below the cells
    skip_label = False
    while i >= 0 and k - i <= MAX_WALK and not is_header(rows[i].text):
        text = rows[i].text.strip()
        kind = table_line(text, rows[i + 1].text.strip())
        if kind == "prose":
            return None  # prose between the row and any header: not this row's header
        if kind == "label":
            context, skip_label = (context if skip_label else context or text), False
        skip_label = skip_label or cells_only(text)
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
    named = [(PART.get(m.group(1).upper(), 3), m.group(2)) for m in _NAMED_COLUMN.finditer(head)]
    ends = [closing_month(m.group(0)) for m in MONTH_RE.finditer(head)]
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
            n_dated = sum(y.isdigit() for y in years)
            # a date per column, or one over all of them ("Three Months Ended March 31," over "2022 2023")
            dated = iter(ends if len(ends) == n_dated else ends * n_dated if len(set(ends)) == 1 else [])
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


def cell_number(cell: str) -> float | None:
    """A cell's number, negative when printed in parentheses or with a minus ("$(7,419)", "(3)%"); None for a dash."""
    text = cell.replace("$", "").replace(",", "").replace("%", "")
    negative = text.startswith(("(", "-"))
    try:
        value = float(text.strip("()-"))
    except ValueError:
        return None
    return -value if negative else value
