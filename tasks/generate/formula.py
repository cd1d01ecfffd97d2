"""A value the question defines by a formula of printed figures ("operating margin (operating income divided by total
revenue)", "free cash flow, defined as net cash provided by operating activities minus purchases of property and
equipment"): computed from the table cells its operands name, each cited with its page and line, or not at all.

Each operand is the one table row whose label (with its block's heading) names every word of the operand and whose
label is mostly those words, restricted to the rows that also name the question's own subject where any does
("Greater China" for a segment's margin); its cell is the asked period's column, read as ``cells.py`` reads one.
Every operand must resolve to one value; a ratio is stated as a percentage to one decimal (a "ratio" as a plain
number to two), a sum or a difference in the unit of its operands. A figure printed in parentheses that the formula
subtracts is an outflow, subtracted as printed in words ("minus payments for ..."): by its magnitude.
"""

from __future__ import annotations

import re

from tasks.generate import cells as C
from tasks.generate.measure import measure_words, unnamed
from tasks.generate.period import calendar_end, question_period
from tasks.generate.sentences import STOPWORDS, TOKEN_RE, stem
from tasks.generate.tables import Row, cell_number, table_rows
from tasks.generate.typed import Pick, Reader

_DEFINITION = re.compile(r"(?i)\(([^()]*?\b(?:divided by|minus|plus)\b[^()]*)\)|\b(?:defined as|define[sd]? as|"
                         r"calculated as|computed as|=)\s+([^?]+)")
_OPERATOR = re.compile(r"(?i)\s*,?\s+(divided by|minus|plus|less)\s+")
_NAME = re.compile(r"(?<![.?!]\s)(?<!^)\b([A-Z][\w&-]*(?:\s+(?:&\s+)?[A-Z][\w&-]*)*)")


def formula(q_text: str) -> list[str] | None:
    """[operand, operator, operand, ...] of the formula the question defines, None when it defines none."""
    m = _DEFINITION.search(q_text)
    if not m:
        return None
    parts = _OPERATOR.split((m.group(1) or m.group(2)).strip(" .,"))
    if len(parts) < 3 or len(parts) % 2 == 0:
        return None
    return [p.strip(" ,.") for p in parts]


def _subjects(q_text: str, owners: set[str]) -> list[str]:
    """The names the question writes with capitals besides whose figure it is and its periods ("Greater China",
    "Intelligent Cloud"): the subject every operand is of."""
    out = []
    for m in _NAME.finditer(q_text):
        name = re.sub(r"['’]s$", "", m.group(1))
        if name.lower() in owners or C._MONTH_NAME.fullmatch(name) or re.fullmatch(r"(?i)Q[1-4]|FY\w*|H[12]|[69]M", name):
            continue
        out.append(name)
    return out


def _operand(rows: list[Row], phrase: str, subjects: list[str], period, end) -> tuple[Row, str] | None:
    words = measure_words(phrase, periods=False)
    if not words:
        return None
    scored = []
    for row in rows:
        section = row.line.passage.get("section") or ""
        if unnamed(words, f"{row.label} {row.context or row.part_of} {section}") \
                or C.per_share(row.label) != C.per_share(phrase) or C.residual(row.label, phrase):
            continue
        label = [stem(t) for t in TOKEN_RE.findall(row.label.lower()) if t not in STOPWORDS]
        # the label's words are the operand's ("Total" of "total revenue" under "Revenue:") or the subject's
        # ("North America" under "Operating income:", for a segment's operating income)
        mine = {stem(t) for t in TOKEN_RE.findall(f"{phrase} {' '.join(subjects)}".lower())}
        own = sum(1 for w in label if w in mine or any(w.startswith(x) or x.startswith(w) for x in words))
        if label and own / len(label) >= 0.5:
            named = sum(1 for s in subjects if s.lower() in f"{row.label} {row.context}".lower())
            scored.append(((named, own, own / len(label)), row))
    if not scored:
        return None
    top = max(s for s, _ in scored)
    values = {}
    for s, row in scored:
        if s != top:
            continue
        cols = [j for j in C._columns(row, period, end) if C._fits("money", row.cells[j])]
        if len(cols) != 1:
            return None
        values.setdefault(row.cells[cols[0]], row)
    if len(values) != 1:
        return None
    cell, row = next(iter(values.items()))
    return row, (_flip(cell) if _names_the_alternative(words, row.label) else cell)


def _names_the_alternative(words: list[str], label: str) -> bool:
    """The operand names the label's alternative in parentheses, not its first reading ("provision" of "Benefit
    (provision) for income taxes"): the cell is printed with the sign of the first reading."""
    m = re.search(r"^(.*?)\(([^()]+)\)", label)
    if not m:
        return False
    alternative = {stem(t) for t in TOKEN_RE.findall(m.group(2).lower())}
    first = {stem(t) for t in TOKEN_RE.findall(m.group(1).lower())} - alternative
    return bool(set(words) & alternative) and not set(words) & first


def _flip(cell: str) -> str:
    bare = cell.replace("$", "")
    return bare.strip("()") if bare.startswith("(") else f"({bare})"


def pick_formula(r: Reader) -> Pick | None:
    """The value of the formula the question defines, computed from one cell per operand; None when any operand
    does not resolve to one printed value."""
    parts = formula(r.q_text)
    period = question_period(r.q_text)
    if parts is None or period is None:
        return None
    end = calendar_end(r.q_text)
    owners = {m.group(1).lower() for m in re.finditer(r"\b([A-Z][\w&.-]*)['’]s\b", r.q_text)}
    subjects = _subjects(_DEFINITION.sub(" ", r.q_text), owners)
    rows = table_rows(r)
    found = [_operand(rows, p, subjects, period, end) for p in parts[::2]]
    if any(f is None for f in found):
        return None
    values = [cell_number(cell) for _, cell in found]
    if any(v is None for v in values):
        return None
    total, notes = values[0], []
    for op, (row, cell), value in zip(parts[1::2], found[1:], values[1:]):
        op = op.lower()
        if op in ("minus", "less"):
            total -= abs(value) if cell.startswith(("(", "$(")) else value  # an outflow subtracted by its size
        elif op == "plus":
            total += value
        elif value == 0:
            return None
        else:
            total /= value
    for (row, cell) in found:
        notes.append(f"{cell} {row.label!r} (page {row.line.page}, line {row.line.line_no})")
    ops = list(dict.fromkeys(op.lower() for op in parts[1::2]))
    if any(op.lower() == "divided by" for op in parts[1::2]):
        text = f"{total:.2f}" if re.search(r"(?i)\bratio\b", r.q_text) else f"{total * 100:.1f}%"
    else:
        row = found[0][0]
        scale = f" {row.scale}" if row.scale else ""
        dollar = "$" if r.asked.cls == "money" or any("$" in row.line.text for row, _ in found) else ""
        text = f"{'-' if total < 0 else ''}{dollar}{abs(total):,.0f}{scale}"
    return Pick(text, [row.line for row, _ in found], 9.0, 1.0, 3, "cell", 0.8,
                ["computed: " + f" {ops[0]} ".join(notes) if len(ops) == 1 else "computed from " + "; ".join(notes)])
