"""Right or silent: the checks a typed value must pass before the offline reader shows it (issue #28).

A value printed near the question's words is often someone else's value: the answer to another kind of question
(an explanation, a comparison across periods), a change where a level is asked, or the figure of another period
than the one asked. Each check returns why the value does not answer, or None; the reader then abstains with the
passages as evidence, and its rule names the check (``abstain.<check>``).

- ``asks_explanation``: the question asks how things relate, compare, change or align, asks to analyse, assess or
  combine, or asks for the factors, priorities or breakdown behind a figure. A printed value is at most one input
  of such an answer.
- ``states_change``: the value is stated as a change ("increased $850 million", "a decrease of 3%") and the
  question asks a level, not a change.
- ``period_unverified``: the question names a quarter, a fiscal year, a part of a year ("nine months", "YTD") or a
  relative period ("the latest quarter"), and the value was read from a sentence (not a table cell under that
  period's column header): the sentence must name the asked quarter or fiscal year itself and pair the value with
  no other value of its kind ("$31.8 billion and $25.7 billion for the three months ended ... 2023 and 2022,
  respectively" pairs values with periods by position); a relative period cannot be checked from one sentence.
- ``negation_missing``: the question negates its subject ("people who do not go online") and the value's sentence
  states no negation: its value is the other group's.
- ``asked_items``: a list whose items are questions (a syllabus's prompts) states no answer.
- ``computed_caveat``: what a computed value (growth, ratio, share, sum, difference) would be computed from: the
  printed values of the best-covered lines, with the line each is read from. The reader does not compute.
"""

from __future__ import annotations

import re

from tasks.generate import values as V
from tasks.generate.measure import asks_reported_figure, measure_words, unnamed
from tasks.generate.typed import Pick, Reader

_HOW_VERBS = (r"relate[sd]?|relating|compare[sd]?|differ(?:s|ed)?|align(?:s|ed)?|change[sd]?|evolve[sd]?|"
              r"affect(?:s|ed)?|impact(?:s|ed)?|correlate[sd]?|reflect(?:s|ed)?|contribute[sd]?|connect(?:s|ed)?|"
              r"trend(?:s|ed)?|vary|varied|fluctuate[sd]?")
_EXPLAIN_RE = re.compile(
    rf"(?i)\bhow (?:does|do|did|has|have|is|are|was|were|would|will|can|could)\b[^?]*?\b(?:{_HOW_VERBS})\b"
    r"|(?:^|[,;:]\s*)(?:please\s+)?(?:analy[sz]e|assess|correlate|combine|align|explain|discuss|describe|evaluate|"
    r"summari[sz]e|contrast|examine|investigate|elaborate)\b"
    r"|\b(?:chief|main|primary|key|major|principal) (?:factors?|drivers?|reasons?|causes?)\b"
    r"|\bbreakdown\b|\bbroken down\b"
    r"|\band (?:what|which|how|why)\b[^?]*\b(?:focus\w*|priorit\w*|initiatives?|strateg\w*|areas?|reasons?|"
    rf"factors?|drivers?|{_HOW_VERBS})\b")

# a value stated as a movement, not a level: the word before it or the word after it says so ("rose to $5 billion"
# and "up to $750" state a level and a cap)
_CHANGE_BEFORE = re.compile(
    r"(?i)\b(?:increase[sd]?|decrease[sd]?|rose|risen|fell|fallen|grew|grown|declined?|dropped|up|down|higher|lower|"
    r"gains?|loss(?:es)?|reductions?|growth|improve[sd]?|improvement|declines?|drops?|rises?|reduced|expanded|"
    r"contracted|change[sd]?)\s+(?:in\s+(?:[\w&'’-]+\s+){1,4}?)?(?:of\s+|by\s+)?"
    r"(?:approximately\s+|about\s+|nearly\s+|roughly\s+)?$")
_CHANGE_AFTER = re.compile(r"(?i)^\s*(?:\w+\s+){0,2}?(?:increase|decrease|rise|decline|reduction|growth|drop|"
                           r"improvement|change)\b")
_ASKS_CHANGE = re.compile(r"(?i)\b(?:increase\w*|decrease\w*|chang\w*|grow\w*|rise|rose|risen|decline\w*|drop\w*|"
                          r"fall|fell|more|less|fewer|difference|differ\w*|gain\w*|loss\w*|improve\w*|reduc\w*)\b")

_ORDINAL_Q = {"first": "1", "second": "2", "third": "3", "fourth": "4"}
_QUARTER_RE = re.compile(r"(?i)\bQ([1-4])\b|\b([1-4])Q\b|\b(first|second|third|fourth)\s+(?:fiscal\s+)?quarter\b")
_FISCAL_RE = re.compile(r"(?i)\bFY\s?'?(\d{2}(?:\d{2})?)\b|\bfiscal\s+(?:year\s+)?((?:19|20)\d\d)\b")
_PART_YEAR_RE = re.compile(r"(?i)\b(?:three|six|nine|twelve|3|6|9|12)\s+months\b|\bYTD\b|\byear[- ]to[- ]date\b|"
                           r"\b(?:first|second)\s+half\b|\bH[12]\b")
_RELATIVE_RE = re.compile(r"(?i)\b(?:latest|most recent|current|last|previous|prior|recent)\s+(?:fiscal\s+)?"
                          r"(?:quarter|period|year|10-[QK]|report|filing|quarterly|annual)\w*")


def asks_explanation(text: str) -> str | None:
    """The words of a question that asks an explanation, a relation or a comparison across periods, else None."""
    m = _EXPLAIN_RE.search(text)
    return m.group(0).strip(" ,;:") if m else None


def _around(best: Pick) -> tuple[str, int, int]:
    """The pick's lines joined, and where its value stands in them (-1 when the value is not found verbatim)."""
    text = " ".join(ln.text for ln in best.lines)
    at = text.find(best.value)
    return text, at, at + len(best.value)


def states_change(q_text: str, best: Pick) -> str | None:
    """Why a value stated as a change does not answer a question that asks a level, else None."""
    if _ASKS_CHANGE.search(q_text):
        return None
    text, start, end = _around(best)
    if start < 0:
        return None
    word = _CHANGE_BEFORE.search(text[:start]) or _CHANGE_AFTER.search(text[end:])
    return f"{best.value!r} is stated as a change ({word.group(0).strip()!r}); the question asks a level" \
        if word else None


# a question that asks the size of a change ("By how much did inventories increase", "By what percentage did net
# sales change"): a level stated beside the question's words is not its answer
_ASKS_CHANGE_SIZE = re.compile(r"(?i)\bby (?:how much|what (?:percentage|percent|amount|%))\b|"
                               r"\bhow much (?:did|has|have|was|were) [^?]*\b(?:increase|decrease|grow|rise|fall|"
                               r"decline|change)\w*\b")
_STATED_CHANGE = re.compile(r"(?i)\b(?:increase\w*|decrease\w*|rose|risen|rise|fell|fallen|grew|grown|growth|"
                            r"declin\w*|drop\w*|up|down|higher|lower|change\w*|gain\w*|reduc\w*|improv\w*)\b")


def states_no_change(q_text: str, best: Pick) -> str | None:
    """Why a value does not answer a question that asks the size of a change, else None: its sentence states no
    change at all (a level, an obligation, a share)."""
    if best.kind == "cell" or not _ASKS_CHANGE_SIZE.search(q_text):
        return None
    text, _, _ = _around(best)
    if _STATED_CHANGE.search(text):
        return None
    return f"the question asks the size of a change; the sentence that states {best.value!r} states no change"


def asked_period(q_text: str) -> str | None:
    """The period a question scopes its value to (a quarter, a fiscal year, a part of a year, a relative period)."""
    for rx in (_RELATIVE_RE, _QUARTER_RE, _FISCAL_RE, _PART_YEAR_RE):
        if m := rx.search(q_text):
            return m.group(0)
    return None


def _quarter_named(q: re.Match, text: str) -> bool:
    n = q.group(1) or q.group(2) or _ORDINAL_Q[q.group(3).lower()]
    word = next(w for w, d in _ORDINAL_Q.items() if d == n)
    return bool(re.search(rf"(?i)\bQ{n}\b|\b{n}Q\b|\b{word}\s+(?:fiscal\s+)?quarter\b", text))


def _fiscal_named(f: re.Match, text: str) -> bool:
    year = f.group(1) or f.group(2)
    short = year[-2:]
    return bool(re.search(rf"(?i)\bFY\s?'?(?:20)?{short}\b|\bfiscal\s+(?:year\s+)?(?:20)?{short}\b", text))


def _a_quarter(part: re.Match) -> bool:
    """A part of the year (``_PART_YEAR_RE``) of three months ("three months ended", "3 months")."""
    return bool(re.match(r"(?i)three|3\b", part.group(0)))


def period_unverified(r: Reader, best: Pick) -> str | None:
    """Why a value read from a sentence is not shown to be the asked period's (module docstring), else None."""
    period = asked_period(r.q_text)
    if period is None or best.kind == "cell":
        return None
    text, start, end = _around(best)
    if _RELATIVE_RE.search(r.q_text):
        return f"the question asks the {period!r} figure; a sentence does not say which period is the latest"
    q, f = _QUARTER_RE.search(r.q_text), _FISCAL_RE.search(r.q_text)
    years = set(re.findall(r"\b(?:19|20)\d\d\b", r.q_text)) if q else set()  # "Q3 2022": the quarter of that year
    if q and not _quarter_named(q, text) or f and not _fiscal_named(f, text) or any(y not in text for y in years):
        return f"the sentence that states {best.value!r} does not name the period asked ({period!r})"
    # the value's own period: what the clause that follows it names, up to the next value ("$1.1 billion in the
    # first nine months of 2022 ($28 million net losses in the third quarter of 2021 ...")
    after = re.split(r"[$€£]\s?\d|\d\s?%|[,.;(]\s", text[end:], maxsplit=1)[0] if start >= 0 else ""
    part, q_part = _PART_YEAR_RE.search(after), _PART_YEAR_RE.search(r.q_text)
    other_quarter = q is not None and _QUARTER_RE.search(after) and not _quarter_named(q, after)
    if other_quarter or q and part and not _a_quarter(part) or \
            q_part and (part and part.group(0).lower() != q_part.group(0).lower() or _QUARTER_RE.search(after)):
        return f"{best.value!r} is stated for {(part or _QUARTER_RE.search(after)).group(0)!r}; the question asks " \
               f"{period!r}"
    if q_part and not q and not _a_quarter(q_part) and all(_a_quarter(p) for p in _PART_YEAR_RE.finditer(text)):
        # a part of the year longer than a quarter asked ("the nine months ended ..."), and the sentence names none:
        # a periodic report's sentences state the quarter's figures unless they say otherwise ("Gaming revenue was
        # up 81% from a year ago and up 15% sequentially")
        return f"the sentence that states {best.value!r} names no {q_part.group(0)!r}; the question asks {period!r}"
    if start >= 0 and years:
        # its year: the years of that clause, else the nearest year before it
        own = re.findall(r"\b(?:19|20)\d\d\b", after) or re.findall(r"\b(?:19|20)\d\d\b", text[:start])[-1:]
        if own and not set(own) & years:
            return f"{best.value!r} is stated for {', '.join(own)}; the question asks {period!r} of " \
                   f"{', '.join(sorted(years))}"
    return None


def paired_by_position(best: Pick) -> str | None:
    """Why a value a sentence pairs with another of its kind by position ("7% and 11% on Physics and Chemistry",
    "$31.8 billion and $25.7 billion for 2023 and 2022, respectively", "(61% to" 30% on the next line) is not
    shown to be the asked one, else None: which subject or period each belongs to is not stated next to it."""
    if best.kind == "cell":
        return None
    text, start, end = _around(best)
    if start < 0:
        return None
    kinds = [v for v in V.find_amounts(text) if v.kind != "year" and v.number is not None]
    after = re.search(r"^\s*(?:,|and|or|to|versus|vs\.?)\s*(?:\(?[$€£]?\s*\d|$)", text[end:])
    before = re.search(r"\d[\w%)]*(?:\s+(?:thousand|million|billion|trillion))?\s*(?:,|and|or|to|versus|vs\.?)"
                       r"\s*\(?$", text[:start])  # "$343 million and $570 million, respectively"
    dangling = after is not None and not text[end + after.end():].strip()  # the other value is on the next line
    if (after or before) and len(kinds) >= 2 or dangling:
        return f"the sentence pairs {best.value!r} with another value by position; which subject or period each " \
               f"belongs to is not stated next to it"
    return None


_ASKS_RE = re.compile(r"(?i)^\W*(?:why|what|how|who|when|where|which|whose|do|does|did|is|are|can|should)\b")
# the subject negated ("people who do not go online"); "without cause" names a condition, not a group
_NEGATION_RE = re.compile(r"(?i)\b(?:not|never|no longer)\b|n['’]t\b")


def asked_items(items: list[str]) -> int:
    """How many of a list's items are questions (a syllabus's prompts, an FAQ's headings): they state no answer."""
    return sum(1 for it in items if it.rstrip().endswith("?") or _ASKS_RE.match(it))


def negation_missing(q_text: str, best: Pick) -> str | None:
    """Why a value does not answer a question that negates its subject ("people who do not go online"), else
    None: the value's sentence states no negation, so its value is the other group's."""
    if not _NEGATION_RE.search(q_text):
        return None
    text, _, _ = _around(best)
    if _NEGATION_RE.search(text):
        return None
    return f"the question negates its subject ({_NEGATION_RE.search(q_text).group(0)!r}); the sentence that states " \
           f"{best.value!r} does not"


_SCALE = re.compile(r"(?i)\b(?:thousand|million|billion|trillion|mln|mn|bn|crores?|lakhs?)\b|\d\s*[kmb]\b")
_PERCENT = re.compile(r"(?i)\bper\s?cent|\bpercentage points?\b|\bbasis points\b")


def kind_mismatch(cls: str, best: Pick) -> str | None:
    """Why a value read from a sentence is not of the asked kind, else None: money is written with a currency or a
    scale, a percentage with a percent sign or word (a bare figure is a money or percentage answer only in a table
    cell under a header that says so, which ``cells.py`` reads)."""
    if best.kind == "cell":
        return None
    kinds = {v.kind for v in V.find_amounts(best.value)}
    if cls == "money" and "currency" not in kinds and not _SCALE.search(best.value):
        return f"{best.value!r} states no currency or scale; the question asks an amount of money"
    if cls == "percentage" and "percent" not in kinds and not _PERCENT.search(best.value):
        return f"{best.value!r} states no percent; the question asks a percentage"
    return None


def measure_unnamed(r: Reader, best: Pick) -> str | None:
    """Why a value read from a sentence is not shown to be the asked measure, else None: its sentence (with its
    passage's section) leaves a word of the measure unnamed ("$3.4 billion of revenue recognized in the three
    months ended ..." for an operating income of that quarter)."""
    if not asks_reported_figure(r.asked.cls, r.q_text):
        return None
    text, _, _ = _around(best)
    missing = unnamed(measure_words(r.q_text), f"{text} {best.lines[0].passage.get('section') or ''}")
    if not missing:
        return None
    return f"the sentence that states {best.value!r} does not name {', '.join(r.terms.as_written(missing))!r} of " \
           f"the measure asked"


def computed_caveat(r: Reader, why: str) -> str:
    """What a computed value would be computed from: the printed values of the sentences that name most of the
    question's terms, each with its page and line (a person or a model computes from these; the reader does not)."""
    ranked = []
    for ss in r.sents:
        for sent in ss:
            cov, n = r.coverage(sent)
            if n:
                ranked.append((n, cov, sent))
    inputs: list[str] = []
    for _, _, sent in sorted(ranked, key=lambda t: (-t[0], -t[1])):
        for ln in dict.fromkeys(sent.lines):
            for v in V.find_amounts(ln.text):
                if v.kind != "year" and v.number is not None and len(inputs) < 4:
                    inputs.append(f"{v.text.strip()} (page {ln.page}, line {ln.line_no}: {ln.text.strip()[:60]!r})")
    if not inputs:
        return f"{why}; no printed value to compute it from stands near the question's terms"
    return f"{why}; it would be computed from the printed values: " + "; ".join(dict.fromkeys(inputs))
