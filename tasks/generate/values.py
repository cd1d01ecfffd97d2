"""Typed value finders for the extractive generator: amounts, dates, entities, list items, yes/no cues.

Each finder reads one line of document text and returns :class:`Value` spans with a ``kind`` the generator scores
against the question's cues. Pure regular expressions: no model, no network, deterministic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tasks.generate.normalise import spelled_numbers


@dataclass(frozen=True)
class Value:
    text: str
    kind: str
    start: int
    end: int
    number: float | None = None
    unit: str = ""


_CUR = r"(?:US\$|A\$|C\$|HK\$|\$|€|£|¥|₹|(?:USD|EUR|GBP|JPY|INR|CHF|CNY|RMB)\b\s?|Rs\.?\s?)"
_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+"
_SCALE = r"(?:(?i:thousand|million|billion|trillion|mln|mn|bn|tn)\b|[KMB]\b)"
_UNITS = (r"%|(?i:percent(?:age points?)?|per cent|percentage points?|pp|bps|basis points|"
          r"cm|mm|km|m|kg|g|mg|lbs?|oz|ml|l|ms|sec(?:onds?)?|s|min(?:utes?)?|hrs?|hours?|days?|weeks?|months?|"
          r"years?|yrs|gb|mb|tb|kb|ghz|mhz|hz|kw|mw|w|v|mah|°c|°f|mph|km/h|x|times|points?|pts)\b")
AMOUNT_RE = re.compile(
    rf"(?<![\w.]){_CUR}?(?<![\w.,])(?P<num>{_NUM})(?![\d,]\d)(?:\s?(?P<scale>{_SCALE}))?(?:\s?(?P<unit>{_UNITS}))?"
)
_CUR_RE = re.compile(_CUR)
# "1 At a position ...", "6 Insert ground coffee": a step number, not an amount (a count reads "25 people ...")
_STEP_MARKER_RE = re.compile(r"^\s*\d{1,2}[.)]?\s+[A-Z]")
UNIT_NAMES = {
    "g": ("g", "gram", "grams"), "kg": ("kg", "kilogram", "kilograms"), "mg": ("mg", "milligram", "milligrams"),
    "cm": ("cm", "centimeter", "centimeters", "centimetre", "centimetres"),
    "mm": ("mm", "millimeter", "millimeters", "millimetre", "millimetres"),
    "km": ("km", "kilometer", "kilometers", "kilometre", "kilometres"), "m": ("meter", "meters", "metre", "metres"),
    "ml": ("ml", "milliliter", "milliliters", "millilitre", "millilitres"), "l": ("liter", "liters", "litre", "litres"),
    "s": ("second", "seconds"), "sec": ("second", "seconds"), "seconds": ("second", "seconds"),
    "min": ("minute", "minutes"), "minutes": ("minute", "minutes"), "h": ("hour", "hours"),
    "hours": ("hour", "hours"), "hrs": ("hour", "hours"), "days": ("day", "days"), "weeks": ("week", "weeks"),
    "months": ("month", "months"), "years": ("year", "years"), "%": ("percent", "percentage", "%"),
    "mah": ("mah",), "gb": ("gb", "gigabytes"), "mb": ("mb", "megabytes"), "w": ("watt", "watts"),
    "v": ("volt", "volts"), "mph": ("mph",), "points": ("points", "point"),
}
_REF_BEFORE = re.compile(
    r"(?i)(?:\bfig(?:ure)?s?\.?|\btables?|\bpages?|\bpp?\.|\bsections?|\bsec\.|\bchapters?|\bsteps?|\bno\.|#|§|"
    r"\bappendix|\beq\.?|\bclauses?|\barticles?|\bart\.|\bitems?|\bparts?|\bexhibits?|\bschedules?|\bannex|"
    r"\bparagraphs?|\bpara\.?|\bnotes?|\brules?|\bquestions?|\blines?|\bslides?|\bcharts?|\bversion|\bv\.|"
    r"\bphase|\bstage|\blevel|\btier|\bform|\bsuite|\broom|\bfloor|\bunit|\bbox|\bref\.?|\bsubsection)\s*$")
# "(Lines 5 vs. 8)", "Tables 2 and 3": every number of a group that a reference word opens is a reference
_REF_GROUP_RE = re.compile(r"(?i)\b(?:lines|tables|figures|figs\.|sections|pages|steps|rows|columns|equations|eqs\.)"
                           r"\s*\d+(?:\s*(?:,|and|or|vs\.?|versus|to|-|–)\s*\d+)*\s*(?:,|and|or|vs\.?|versus|to|-|–)\s*$")
# "3.5 Liability", "4.4 Termination for Cause.", "2) Open the lid": a heading or list-marker number opens the line
_HEADING_NUMBER_RE = re.compile(r"^\s*\(?(?:\d{1,2}(?:\.\d{1,2})+\.?|\d{1,2}[.)]|[A-Za-z][.)]|[ivxIVX]{1,4}[.)])\s+(?=[A-Z(\"“])")
_PAGE_OF_RE = re.compile(r"(?i)\bpage\s+\d+\s*(?:of|/)\s*\d+")
_PHONE_RE = re.compile(r"(?<![\w.])(?:\+?\d{1,3}[\s.-]?)?(?:\(\d{2,5}\)|\d{3})[\s.-]?\d{3,4}[\s.-]\d{3,4}(?![\w])")
# numbers glued to letters by a hyphen or slash are parts of a code: "HO-3", "HMI-HO-2024-118604", "SOW-2"
_ADDRESS_RE = re.compile(r"\b\d{1,6}\s+(?:[A-Z][a-z]+\s+){1,3}(?:Street|St\.?|Road|Rd\.?|Avenue|Ave\.?|Boulevard|"
                         r"Blvd\.?|Lane|Ln\.?|Drive|Dr\.?|Way|Court|Ct\.?|Place|Pl\.?|Square|Parkway|Highway)\b|"
                         r"\b[A-Z][a-z]+,?\s+[A-Z]{2}\s+\d{5}(?:-\d{4})?\b|,\s*[A-Z][a-z]+\s+\d{5}\b")  # "..., Maine 04101"
_CODE_RE = re.compile(r"(?i)\b(?:[a-z]+[-/])+[a-z0-9]*\d[\w-]*|\b\d+[-/][a-z]+[\w-]*")
_PERCENT_UNITS = {"%", "percent", "per cent", "percentage point", "percentage points", "pp", "bps",
                  "basis points"}

_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
          r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_YEAR = r"(?:1[6-9]|20)\d\d"
DATE_PATTERNS: list[tuple[str, float, re.Pattern]] = [
    ("full_date", 4.0, re.compile(
        rf"(?i)\b(?:{_MONTH}\s+{_DAY},?\s+{_YEAR}|{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}|{_YEAR}-\d{{2}}-\d{{2}}|"
        rf"\d{{1,2}}/\d{{1,2}}/(?:{_YEAR}|\d\d)|\d{{1,2}}\.\d{{1,2}}\.{_YEAR})\b")),
    ("month_year", 3.0, re.compile(rf"(?i)\b{_MONTH},?\s+{_YEAR}\b")),
    ("quarter", 3.0, re.compile(rf"(?i)\b(?:Q[1-4]\s*(?:FY)?\s*{_YEAR}|(?:first|second|third|fourth)\s+quarter"
                                rf"(?:\s+of)?\s+{_YEAR})\b")),
    ("year_range", 2.5, re.compile(rf"\b{_YEAR}\s*[-–/]\s*(?:{_YEAR}|\d\d)\b")),
    ("time", 2.0, re.compile(r"(?i)\b\d{1,2}:\d{2}\s?(?:[ap]\.?m\.?)?(?![\d:])")),
    ("year", 2.0, re.compile(rf"\b{_YEAR}\b")),
]

# a company's legal form ("Acme Holdings, Inc.", "LIBERTARIAN PARTY OF GEORGIA, INC."): the end of its name
LEGAL_FORMS = (r"inc|incorporated|llc|l\.l\.c|ltd|limited|corp|corporation|company|co|llp|l\.l\.p|lp|l\.p|plc|"
               r"gmbh|n\.a|s\.a|ag")
_LEGAL_FORM_AFTER = re.compile(rf"(?i),?\s+(?:{LEGAL_FORMS})\b\.?(?!\w)")
_SMALL = {"of", "and", "for", "the", "&", "in", "on", "de", "du", "la", "to", "at", "a", "an", "und", "der"}
_NAME_RE = re.compile(r"(?:[A-Z][\w'’.&-]*|[A-Z]{2,})(?:\s+(?:(?:of|and|for|the|&|de|du|la|in|on)\s+)*"
                      r"(?:[A-Z][\w'’.&-]*|[A-Z]{2,}|\d+))*")
_STARTERS = set(
    "the a an it its this these those that in on at for from to of and but or as by with we our you your they "
    "their he she his her there here when where what which who how why if all each every some many most more "
    "see note figure fig table page source also however after before during while since until jan january feb "
    "february mar march apr april may jun june jul july aug august sep sept september oct october nov november "
    "dec december monday tuesday wednesday thursday friday saturday sunday am pm moreover furthermore thus hence "
    "therefore additionally finally first second third overall notably specifically similarly instead meanwhile "
    "besides yet still today recently currently unlike although though because while whereas".split())
_EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL_RE = re.compile(r"(?:https?://|www\.)[^\s,;)]+")
_ID_RE = re.compile(r"(?<![\w])\+?\(?\d[\d ()./-]{5,}\d(?![\w])")
_QUOTED_RE = re.compile(r"[\"“”‘’']([^\"“”‘’']{3,120})[\"“”’']")
_BULLET = r"[•·▪◦●○■□➢►▶✓✔\-\*–—]|\(?\d{1,2}[.)]|\(?[a-z][.)]|\(?[ivx]{1,4}[.)]"
BULLET_RE = re.compile(rf"^\s*(?:{_BULLET})\s+(?P<item>\S.*)$")
# a row's own number or bullet before its text ("1. Little Rock AR01", "• Field Surveying 6 weeks")
ROW_MARKER = re.compile(r"^\s*(?:\d{1,3}[.)]|[-•*▪●○])\s+")
_ENUM_CUE = re.compile(r"(?i)(?:\binclud(?:e|es|ing)\b|\bsuch as\b|\bnamely\b|\bare\b|\bwere\b|:)\s*(?P<rest>.+)$")


def _to_float(num: str) -> float:
    return float(num.replace(",", ""))


def non_answer_spans(text: str) -> list[tuple[int, int, str]]:
    """Spans of one line whose numbers are never answer values: a heading or list-marker number opening the line,
    "Page 3 of 7", phone numbers and codes ("HO-3"). (Numbers right after 'section', 'clause', 'figure', 'table',
    'page', 'item', 'step' ... are skipped where they are read, see ``_REF_BEFORE``.)"""
    out = []
    m = _HEADING_NUMBER_RE.match(text)
    if m:
        out.append((m.start(), m.end(), "heading or list-marker number"))
    out += [(m.start(), m.end(), "page number") for m in _PAGE_OF_RE.finditer(text)]
    out += [(m.start(), m.end(), "phone number") for m in _PHONE_RE.finditer(text)
            if sum(ch.isdigit() for ch in m.group(0)) >= 7]
    out += [(m.start(), m.end(), "code") for m in _CODE_RE.finditer(text)]
    out += [(m.start(), m.end(), "street address or postcode") for m in _ADDRESS_RE.finditer(text)]
    return out


def find_amounts(text: str) -> list[Value]:
    """Numbers with their currency, scale and unit; ranges (``2.5-3 cm``) kept whole; numbers inside dates and
    times, and reference numbers (``_REF_BEFORE``: sections, clauses, figures, pages, items, steps; and the spans
    of :func:`non_answer_spans`: headings, list markers, phone numbers, codes) are skipped."""
    dates = [d for d in find_dates(text) if d.kind != "year"]
    skip = non_answer_spans(text)
    out: list[Value] = []
    for m in AMOUNT_RE.finditer(text):
        if (_REF_BEFORE.search(text[: m.start()]) or _REF_GROUP_RE.search(text[: m.start()])
                or any(d.start <= m.start() < d.end for d in dates)
                or any(a <= m.start() < b for a, b, _ in skip)):
            continue
        if not text[: m.start()].strip() and _STEP_MARKER_RE.match(text) and not m.group("unit"):
            continue
        raw = m.group(0).rstrip()
        unit = (m.group("unit") or "").lower()
        qualified = None if unit else _QUALIFIED_UNIT_RE.match(text, m.end())
        if qualified:  # "90 calendar days", "5 business days"
            unit = qualified.group(1).lower()
            raw = raw + qualified.group(0)
        cur = bool(_CUR_RE.match(raw))
        value = _to_float(m.group("num"))
        if m.group("scale"):
            scale = m.group("scale").lower()
            value *= {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "mln": 1e6, "mn": 1e6,
                      "b": 1e9, "billion": 1e9, "bn": 1e9, "trillion": 1e12, "tn": 1e12}[scale]
        if unit in _PERCENT_UNITS or unit.startswith("percent"):
            kind = "percent"
        elif cur:
            kind = "currency"
        elif unit:
            kind = "measure"
        elif re.fullmatch(_YEAR, m.group("num")) and not m.group("scale"):
            kind = "year"
        else:
            kind = "number"
        value_ = Value(raw, kind, m.start(), m.start() + len(raw), value, unit)
        paren = _PAREN_UNIT_RE.match(text, m.end()) if text[: m.start()].endswith("(") else None
        if paren and not unit:  # "forty-five (45) days": the unit follows the closing parenthesis
            unit = paren.group(1).lower()
            value_ = Value(f"{raw} {paren.group(1)}", "measure", m.start(), paren.end(), value, unit)
        if out and kind != "year" and _RANGE_GAP.fullmatch(text[out[-1].end:m.start()]):
            prev = out.pop()
            value_ = Value(text[prev.start:value_.end], kind, prev.start, value_.end, None, unit)
        out.append(value_)
    taken = [(v.start - 1, v.end) for v in out]
    for number, start, end in spelled_numbers(text):
        unit_m = _SPELLED_UNIT_RE.match(text, end)
        if unit_m and not any(a <= start < b or start <= a < end for a, b in taken) and "(" not in text[start:end]:
            out.append(Value(text[start:unit_m.end()], "measure", start, unit_m.end(), number, unit_m.group(1).lower()))
    return sorted(out, key=lambda v: v.start)


_RANGE_GAP = re.compile(r"\s*(?:[-–]|to)\s*")
_TIME_UNITS_RE = r"(?:business |calendar |working )?(seconds?|minutes?|hours?|days?|weeks?|months?|years?)"
_QUALIFIED_UNIT_RE = re.compile(r"\s(?:calendar|business|working|consecutive|full|school)\s(days?|weeks?|months?|years?)\b",
                                re.I)
_PAREN_UNIT_RE = re.compile(rf"\)['’]?\s?{_TIME_UNITS_RE}\b", re.I)
_SPELLED_UNIT_RE = re.compile(rf"[\s-]{_TIME_UNITS_RE}\b", re.I)


def unit_named(unit: str, words: set[str]) -> bool:
    """Whether the question names this unit ("How many grams ..." names g)."""
    return bool(unit) and bool(set(UNIT_NAMES.get(unit.lower(), (unit.lower(),))) & words)


def year_of(date_text: str) -> str | None:
    """The year a date states ('31st March, 2007' -> '2007'); None when it states none or several."""
    years = re.findall(rf"\b{_YEAR}\b", date_text)
    return years[0] if len(years) == 1 else None


def find_dates(text: str) -> list[Value]:
    """Dates, most specific first; a span inside a more specific date, a code or a phone number is not a date."""
    out: list[Value] = []
    codes = [(a, b) for a, b, why in non_answer_spans(text) if why in ("code", "phone number")]
    for kind, _, pattern in DATE_PATTERNS:
        for m in pattern.finditer(text):
            if any(v.start <= m.start() and m.end() <= v.end for v in out) or any(a <= m.start() < b for a, b in codes):
                continue
            out.append(Value(m.group(0).strip(), kind, m.start(), m.end()))
    return sorted(out, key=lambda v: v.start)


DATE_KIND_SCORE = {kind: score for kind, score, _ in DATE_PATTERNS}


def expand_acronym(text: str, acronym: str) -> Value | None:
    """The words whose initials spell ``acronym`` (small words skipped), e.g. NARL -> National Atmospheric ..."""
    letters = acronym.lower()
    words = list(re.finditer(r"[A-Za-z][\w'’-]*", text))
    for i in range(len(words)):
        if words[i].group(0)[0].lower() != letters[0] or words[i].group(0).lower() in _SMALL:
            continue
        k, j = 0, i
        while j < len(words) and k < len(letters):
            w = words[j].group(0)
            if w.lower() in _SMALL and k > 0:
                j += 1
                continue
            if w[0].lower() != letters[k]:
                break
            k, j = k + 1, j + 1
        start, end = words[i].start(), words[j - 1].end()
        # the words of one phrase: not the acronym itself, nor words across a comma or a clause break
        if k == len(letters) and acronym not in {w.group(0).upper() for w in words[i:j]} \
                and not re.search(r"[,;:()]|[.!?]\s", text[start:end]):
            return Value(text[start:end], "acronym", start, end)
    return None


def find_entities(text: str, skip_words: set[str]) -> list[Value]:
    """Capitalised name phrases, quoted titles, e-mail addresses, URLs and long number identifiers (phone, codes)
    in one line."""
    out = [Value(m.group(0).rstrip("."), "contact", m.start(), m.end()) for r in (_EMAIL_RE, _URL_RE)
           for m in r.finditer(text)]
    for m in _QUOTED_RE.finditer(text):
        out.append(Value(m.group(1).strip(), "quoted", m.start(1), m.end(1)))
    dates = find_dates(text)
    taken = 0  # the end of a name extended over its legal form: the form is not a name of its own
    for m in _NAME_RE.finditer(text):
        start, phrase = m.start(), m.group(0)
        if start < taken:
            continue
        while True:  # drop sentence starters and months: "The 2015 Report" -> "Report"
            first = re.match(r"([\w'’.&-]+)\s*", phrase)
            if not first or first.group(1).lower() not in _STARTERS or first.end() == len(phrase):
                break
            start, phrase = start + first.end(), phrase[first.end():]
        words = [w for w in re.findall(r"[\w'’.&-]+", phrase) if w.lower() not in _SMALL]
        kept = [w for w in words if w.lower().strip(".") not in skip_words and not w.isdigit()]
        if (not kept or len(phrase.strip()) < 2 or _CUR_RE.match(phrase) or phrase.lower() in _STARTERS
                or any(d.start <= start < d.end for d in dates)):
            continue
        phrase = phrase.strip()
        while m_end := re.search(r"\s+(?:of|and|for|the|&|in|on)\s+([\w'’&-]+)\.?$", phrase):
            if m_end.group(1).lower() not in _STARTERS:
                break
            phrase = phrase[:m_end.start()]  # "Delaware in July": a month or a starter word ends the name before it
        last = phrase.rsplit(None, 1)[-1]
        if last.endswith(".") and "." not in last[:-1] and len(last) > 4:
            phrase = phrase[:-1]  # the sentence's full stop, not an abbreviation's ("Co.", "Jr.", "U.S.")
        if (form := _LEGAL_FORM_AFTER.match(text, start + len(phrase))) and "," in form.group(0):
            phrase, taken = text[start:form.end()], form.end()  # "Acme Holdings, Inc.": the form is its name's
        out.append(Value(phrase, "name", start, start + len(phrase)))
    for m in _ID_RE.finditer(text):
        if any(d.start <= m.start() < d.end for d in dates):
            continue
        if sum(ch.isdigit() for ch in m.group(0)) >= 7:
            out.append(Value(m.group(0).strip(), "identifier", m.start(), m.end()))
    return out


def label_value(text: str) -> tuple[str, str] | None:
    """``Label: value`` (or ``Label – value``) lines, common in forms, manuals and tables."""
    m = re.match(r"^\s*(?P<label>[^:–—]{1,80}?[A-Za-z0-9)])\s*(?::\s|\s[–—-]\s)\s*(?P<value>\S.{0,200})$", text)
    if not m:
        return None
    return m.group("label"), m.group("value").strip()


def bullet_item(text: str) -> str | None:
    m = BULLET_RE.match(text)
    if not m:
        return None
    item = m.group("item").strip()
    head = re.split(r"\s*[:–—]\s+", item, maxsplit=1)[0]
    return head if 0 < len(head.split()) <= 12 else " ".join(item.split()[:12])


def inline_items(text: str) -> list[str]:
    """Items of an in-line enumeration: 'includes A, B and C' / 'such as A, B, C' / 'X: A; B; C'."""
    m = _ENUM_CUE.search(text)
    if not m:
        return []
    rest = re.split(r"[.](?:\s|$)", m.group("rest"))[0]
    parts = [p.strip(" .;:'\"") for p in re.split(r"\s*[,;](?:\s+|$)(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+", rest)]
    parts = [p for p in parts if p]
    if len(parts) < 2 or any(len(p.split()) > 6 for p in parts):
        return []
    return parts


def comparison_sides(text: str) -> tuple[str, str] | None:
    """The two things a comparison question contrasts ('A or B', 'A vs B', 'between A and B', 'A compared to B')."""
    core = re.sub(r"^.*?\?\s*(?=\S)", "", text.strip()) if text.count("?") >= 2 else text
    for pattern in (r"between (.+?) and (.+?)[?.]*$",
                    r"(.+?)\s*,?\s+(?:vs\.?|versus|compared (?:to|with))\s+(.+?)[?.]*$",
                    r"([^,:?]+?)\s*,?\s+or\s+([^?]+?)[?.]*$"):
        m = re.search(pattern, core, re.I)
        if m:
            a, b = (re.sub(r"^(?:the|a|an|is|are|was|were)\s+", "", x.strip(" ,:"), flags=re.I) for x in m.groups())
            if a and b:
                return a, b
    return None


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")


def iso_date(text: str) -> str | None:
    """A full date as YYYY-MM-DD ('January 5, 2022', '5th Jan 2022', '01/05/2022' read month first, '2022-01-05');
    None when ``text`` is not one full date."""
    t = text.strip().lower().replace(",", " ")
    if m := re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", t):
        y, mo, d = int(m[1]), int(m[2]), int(m[3])
    elif m := re.fullmatch(r"(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})", t):
        mo, d, y = int(m[1]), int(m[2]), int(m[3])
        if mo > 12 >= d:
            mo, d = d, mo  # day first: 25/01/2022
    else:
        words = t.replace(".", " ").split()
        month = next((i + 1 for w in words for i, name in enumerate(_MONTHS) if len(w) >= 3 and name.startswith(w)), None)
        nums = [int(re.sub(r"(?:st|nd|rd|th)$", "", w)) for w in words if re.fullmatch(r"\d{1,4}(?:st|nd|rd|th)?", w)]
        days, years = [n for n in nums if n <= 31], [n for n in nums if n > 31]
        if month is None or len(days) != 1 or len(years) != 1:
            return None
        y, mo, d = years[0], month, days[0]
    if not (1 <= mo <= 12 and 1 <= d <= 31):
        return None
    return f"{y:04d}-{mo:02d}-{d:02d}"

