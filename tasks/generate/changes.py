"""A change asked as a percentage ("By what percentage did X change in Q3 2022 compared with Q3 2021?"): read where the
document states it, else computed from the two printed figures it compares, each cited.

A filing states most changes itself, in a table's change column ("Total net sales $ 81,797 $ 82,959 (1)%") or in a
sentence ("International sales decreased 5% in Q3 2022 ... compared to the comparable prior year periods"). Where
it does not, the change is computed from the row that names the measure, under the asked period's column and the
column of the same period a year earlier: (current - prior) / |prior|, to one decimal. Each source is held to the
checks a value must pass: the row or the sentence names the whole measure (``measure.py``), the column or the
sentence is the asked period's, and one value only.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

from tasks.generate import cells as C
from tasks.generate.guards import period_unverified
from tasks.generate.measure import measure_words, unnamed
from tasks.generate.period import asked_close, question_period
from tasks.generate.sentences import matched, stems
from tasks.generate.tables import Row, cell_number, table_rows
from tasks.generate.typed import Pick, Reader

ASKS_PERCENT_CHANGE = re.compile(
    r"(?i)\bby what (?:percentage|percent|%)\b|\bwhat (?:was|is) the (?:percentage|%|percent) (?:change|growth|"
    r"increase|decrease|decline)\b|\b(?:year[- ]over[- ]year|yoy) (?:growth|change)\b|\bgrowth rate\b")
# where the question names the period it compares with: the asked period is named before it
_AGAINST = re.compile(r"(?i)\b(?:compared (?:to|with)|versus|vs\.?|relative to|over|from)\b")
_CHANGED = re.compile(
    r"(?i)\b(?P<verb>increased|decreased|grew|declined|rose|fell|was up|were up|was down|were down|up|down)\s+"
    r"(?:by\s+)?(?:\$[\d.,]+\s*(?:million|billion)?,?\s*or\s+)?(?P<pct>\d+(?:\.\d+)?)\s?%")
_BASE = re.compile(r"(?i)\b(?:from|compared (?:to|with)|versus|vs\.?|over)\s+(?:the\s+)?(?:(?:Q[1-4]|[1-4]Q|FY)\s*'?\d{2,4}|"
                   r"(?:first|second|third|fourth)\s+quarter\s+of\s+(?:fiscal\s+(?:year\s+)?)?\d{4}|(?:19|20)\d\d)")
_DOWN = re.compile(r"(?i)decreased|declined|fell|down")


def _period_words(head: str) -> str:
    """The words of the asked period in the question's head ("the third quarter of 2022", "Q3 2022")."""
    m = re.search(r"(?i)\b(?:in|for|during)\s+(?:the\s+)?(.*)$", head)
    return m.group(1) if m else head


def asks_percent_change(q_text: str) -> bool:
    return bool(ASKS_PERCENT_CHANGE.search(q_text))


def changed_period(q_text: str) -> tuple[int | str | None, int, bool] | None:
    """The period whose change is asked: the one named before the period it is compared with."""
    head = _AGAINST.split(q_text, maxsplit=1)[0]
    return question_period(head) or question_period(q_text)


def _rows(r: Reader) -> list[Row]:
    return [row for row in table_rows(r) if C.names_the_measure(r, row)
            and any(c[:1].isdigit() or c.startswith("$") for c in row.cells)]


def _group(row: Row, period: tuple[int | str | None, int, bool], end: int | None) -> list[int]:
    """The columns of the row's period group that holds the asked period: [current, prior, change?]."""
    months, year, fiscal = period
    current = C._columns(row, (months, year, fiscal), end)
    if len(current) != 1:
        return []
    j = current[0]
    group = [k for k in range(len(row.cells)) if row.months[k] == row.months[j]] if any(row.months) else \
        list(range(len(row.cells)))
    return [j] + [k for k in group if k != j]


def pick_change(r: Reader) -> tuple[Pick, str] | None:
    """(the pick, its rule) for a question asking a change as a percentage; None when no source names it alone."""
    period = changed_period(r.q_text)
    head = _AGAINST.split(r.q_text, maxsplit=1)[0]
    rows = _rows(r)
    the = C.of_the_year(C.the_row(r, rows), period) if period else []
    found: dict[str, tuple[Pick, str]] = {}
    for row in the:
        cols = _group(row, period, asked_close(head, row.line.passage))
        if not cols:
            continue
        change = [k for k in cols[1:] if row.years[k].lower() == "change" and row.cells[k].endswith("%")]
        prior = [k for k in cols[1:] if row.years[k].isdigit() and int(row.years[k]) == int(row.years[cols[0]]) - 1]
        if change:
            value = C._value(row, row.cells[change[0]])
            found.setdefault(value, (Pick(value, [row.line], 10.0, 1.0, 3, "cell", 0.8,
                                          [f"the change column of {row.label!r}"]), "change.cell"))
        elif len(prior) == 1 and not row.cells[cols[0]].endswith("%"):  # a share's change is in points, not growth
            cur, old = cell_number(row.cells[cols[0]]), cell_number(row.cells[prior[0]])
            if cur is None or old in (None, 0):
                continue
            value = f"{(cur - old) / abs(old) * 100:.1f}%"
            note = (f"computed: ({row.cells[cols[0]]} - {row.cells[prior[0]]}) / |{row.cells[prior[0]]}| from "
                    f"{row.label!r} (page {row.line.page}, line {row.line.line_no}), columns {row.years[cols[0]]} "
                    f"and {row.years[prior[0]]}")
            found.setdefault(value, (Pick(value, [row.line], 9.0, 1.0, 3, "cell", 0.8, [note]), "computed.growth"))
    if len(found) == 1:
        return next(iter(found.values()))
    stated = [v for v, (_, rule) in found.items() if rule == "change.cell"]
    if len(stated) == 1 and all(_rounds_to(v, stated[0]) for v, (_, rule) in found.items() if rule != "change.cell"):
        return found[stated[0]]  # the change printed, and computed to the precision it prints: one figure
    if found:
        return None  # two rows disagree: not shown
    return _stated(r)


def _rounds_to(computed: str, printed: str) -> bool:
    """A computed percent ("-1.4%") that rounds to a printed one ("-1%") at the precision it is printed to."""
    digits = len(printed.rstrip("%").partition(".")[2])
    try:
        return round(float(computed.rstrip("%")), digits) == float(printed.rstrip("%"))
    except ValueError:
        return False


def _stated(r: Reader) -> tuple[Pick, str] | None:
    """The one sentence that names the whole measure, states its change as a percent and names the asked period."""
    words = measure_words(r.q_text)
    # the asked period is the one named first; a filing names its fiscal years by their number ("the first quarter
    # of 2023"), so "fiscal" is not required of the sentence
    head = re.sub(r"(?i)\bfiscal\s+(?:year\s+)?(?=(?:19|20)\d\d)", "", _AGAINST.split(r.q_text, maxsplit=1)[0])
    asked = SimpleNamespace(q_text=head)
    period = question_period(head)
    picks: dict[str, Pick] = {}
    for ss in r.sents:
        for s in ss:
            section = s.lines[0].passage.get("section") or ""
            prev = 0
            for m in _CHANGED.finditer(s.text):
                # the subject of a change is named just before it ("CCG revenue decreased 17%, ... and NEX revenue
                # increased 14%"): a word of the measure there, the rest there or in the section
                window, prev = s.text[max(prev, m.start() - 80):m.start()], m.end()
                if not matched(words, stems(window)) or unnamed(words, f"{window} {section}", r.q_text):
                    continue
                value = f"{'-' if _DOWN.search(m.group('verb')) else ''}{m.group('pct')}%"
                # the period a change is measured from ("from Q3 2021", "compared to the prior year") is its base,
                # not its own
                own = SimpleNamespace(text=_BASE.sub(" ", s.text))
                if period and any(int(y) == period[1] - 1 for b in _BASE.finditer(s.text)
                                  for y in re.findall(r"(?:19|20)\d\d", b.group(0))):
                    own.text += f" {_period_words(head)}"  # measured from a year before the asked period: its own
                pick = Pick(f"{m.group('pct')}%", [own], 8.0, 1.0, 3, "sentence", 0.8)
                if period_unverified(asked, pick) is None:
                    picks.setdefault(value, Pick(value, s.lines, 8.0, 1.0, 3, "sentence", 0.8,
                                                 [f"stated: {m.group(0)!r}"]))
                break
    return (next(iter(picks.values())), "change.sentence") if len(picks) == 1 else None
