"""What a question asks for, typed (``schemas.contracts.Asked``): the value class a reader must find (duration, money,
percentage, date, count, yes/no, entity, list, a plain number, or free text), read from the parsed question's answer
shape and decomposition and from the question's own wording; with the ask's rank word, the parts of a multi-part
question, and what a text reader cannot state (a computed value, a reading of a picture).

The parser gives a coarse ``answer_shape`` (amount, date, boolean, entity, text, list, comparison) and this module the
finer class the reader needs, because a value of the wrong class is never the answer: a duration question never
gets a bare number, a money question never gets a section number. The wording decides where it is explicit ("how
long", "how many days", "how much ... fee", "what percentage", "when"); otherwise the parser's shape stands. The
parser stores the type with the question (``ParsedQuestion.asked``) and generation reads it from there.
Deterministic, pure regular expressions.
"""

from __future__ import annotations

import re
from typing import Any

from schemas.contracts import Asked, ParsedQuestion

TIME_UNITS = ("second", "minute", "hour", "day", "week", "month", "year", "quarter")
_TIME_UNIT = r"(?:business |calendar |working )?(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)"
_AUX = (r"is|are|was|were|do|does|did|can|could|will|would|should|has|have|had|may|must|shall|might")
_YESNO_RE = re.compile(rf"^\s*(?:{_AUX})\b(?![^?]*\b(?:or)\b[^?]*\?\s*$)", re.I)
_DURATION_RE = re.compile(
    rf"\bhow long\b|\bhow many {_TIME_UNIT}\b|\bhow much (?:time|notice|warning|advance notice)\b|\bhow soon\b|"
    rf"\bwithin how\b|\b(?:notice|grace|probation\w*|waiting|cooling[- ]off|retention|warranty) period\b|"
    rf"\bhow (?:much|long a) notice\b|\bnotice (?:is|must|do|does)\b|\bfor how long\b|\bduration\b|"
    rf"\bhow many (?:[a-z-]+ ){{0,2}}?{_TIME_UNIT}\b", re.I)
_PERCENT_RE = re.compile(r"\bpercent(?:age)?s?\b|%|\bper cent\b|\bwhat share\b|\bwhat proportion\b|"
                         r"\bwhat fraction\b|\b(?:interest|growth|tax|unemployment|inflation|response|success|participation|"
                         r"turnout|vacancy|occupancy|return|discount|commission) rates?\b", re.I)
_MONEY_RE = re.compile(
    r"[$€£¥]|\b(?:usd|eur|gbp|dollars?|euros?|pounds sterling|cents?)\b|\bhow much (?:is|was|are|were|does|did|do|"
    r"will|would|money|cash|can|must|should|has|have)\b|"
    # a money noun as a word of its own: "fine-tuning", "cost-effective", "price-sensitive" name no amount
    r"(?<![\w-])(?:fees?|premiums?|prices?|costs?|deductibles?|"
    r"allowances?|reimburse\w*|salar(?:y|ies)|wages?|revenues?|income|budgets?|spend\w*|spent|charges?|rents?|"
    r"payments?|fines?|penalt(?:y|ies)|worth|valuation|funding|profits?|earnings|dividends?|capex|expenses?|"
    r"tuition|compensation|bonus(?:es)?|stipends?|grants?|amount|cash|cash flows?|sales|assets|debts?)(?![\w-])", re.I)
_IDENTIFIER_RE = re.compile(r"\b(?:(?:tele)?phone|fax|serial|account|registration|reference|contact|policy|model|"
                            r"part|case|licen[cs]e|passport|tax|vat|order|invoice|id) (?:number|no\.?|code)\b", re.I)
_COUNT_RE = re.compile(r"\bhow many\b|\bnumber of\b|\bcount of\b|\bhow often\b", re.I)
_DATE_RE = re.compile(r"^\s*when\b|\bwhen (?:is|was|did|does|do|will|are|were)\b|\b(?:what|which) "
                      r"(?:date|day|year|month|time)\b|\bon what date\b|\bin what year\b|\bsince when\b|"
                      r"\bfrom what date\b|\bby what date\b|\bwhat is the (?:effective|start|end|due) date\b|"
                      r"\byyyy-mm-dd\b|\bformat the date\b", re.I)
_ENTITY_NOUN_RE = re.compile(
    r"\b(?:which|what|whose)\s+(?:(?:[a-z]+)\s+){0,2}?(state|country|countries|city|cities|company|companies|"
    r"firm|organi[sz]ation|person|people|court|province|region|county|law|bank|agency|party|university|"
    r"brand|team|department|airline|continent|nation|language|author|name)\b", re.I)
_WHO_RE = re.compile(r"^\s*(?:who|whom|whose)\b|\bwho (?:is|was|are|were|approves|signs|pays)\b|"
                     r"\bwhere\b|\bname of\b|\bwhat is the name\b", re.I)
_LIST_RE = re.compile(r"\b(?:list|name) (?:all|the|every|each)\b|\bwhat are (?:all )?the\b.*\b(?:types|kinds|"
                      r"ways|steps|items|causes|reasons|exclusions|benefits|categories|members|components|"
                      r"requirements|conditions)\b|"
                      # "which public holidays does ...", "which causes of loss are ...": a plural noun asked for
                      r"^\s*(?:which|what)\s+(?:(?!of\b)[a-z-]+\s+){0,2}?[a-z-]+[^su\W]s(?:\s+of\s+[a-z]+)?\s+"
                      r"(?:are|were|do|does|did|have|has|can|will|should|must)\b", re.I)
# An answer-format template the question gives ("as YYYY-MM-DD", "in HH:MM"): framing, neither a term to find
# nor a code the value is scoped to
FORMAT_TEMPLATE = re.compile(r"(?i)(?:y{2,4}|m{1,2}|d{1,2}|h{1,2}|s{1,2})(?:[-/.:](?:y{2,4}|m{1,2}|d{1,2}|h{1,2}|s{1,2}))+")
# A leading clause that frames the ask ("When using X as the base model, how many ...", "If the fee rises, what
# ..."): the question is the clause after the comma.
_LEAD_CLAUSE_RE = re.compile(r"^\s*(?:when|if|after|before|while|given|using|assuming)\b[^,?]{3,80},\s*"
                             r"(?=(?:how|what|which|who|whom|whose|when|where|is|are|was|were|do|does|did|can)\b)", re.I)
_ASKED_UNIT_RE = re.compile(r"\bhow many ((?:[a-z-]+\s?){1,4})", re.I)


# What an extractive reader cannot state: a value computed from several (a difference, a sum, a ratio, an average)
# or read off a picture (colours, counting drawn objects, positions in a figure). The text rarely prints it, and a
# number found near the question's words is then someone else's number.
_COMPUTED_RE = re.compile(
    r"\b(?:differences?|gap|sum|summ?ed|combined|in total|total number|altogether|on average|average|mean|"
    r"ratio|how much (?:higher|lower|more|less|greater|smaller|bigger)|how many (?:more|fewer|less|times)|"
    r"(?:higher|lower|more|less|greater|smaller|larger|bigger) than|compared (?:to|with)|increase[sd]? by|"
    r"decrease[sd]? by|grow(?:th)? (?:by|of)|change (?:in|from|between)|times (?:higher|larger|more)|"
    r"percentage points?|multipl\w+|divided|subtract\w*|add(?:ing)? up|"
    # "the total X of A and B": a sum over two named things
    r"total\b[^?]{0,80}\band\b)\b", re.I)
COLOUR = r"red|green|blue|yellow|orange|purple|grey|gray|black|white|pink|brown|beige|caramel|violet|gold|silver"
_VISUAL_RE = re.compile(
    rf"\b(?:colou?rs?|colou?red|{COLOUR}|"
    r"logos?|icons?|pictures?|photos?|photographs?|images?|drawn|draw|shown in (?:the )?(?:figure|image|picture|"
    r"chart|graph|map|diagram)|in (?:the )?(?:figure|image|picture|chart|graph|map|diagram|slide|screenshot)s?\b|"
    r"(?:top|bottom|left|right)(?:[- ]most)? (?:of|corner|side)|demonstrated|illustrated|depicted|plotted|"
    r"standing|wearing|bar|line chart|pie chart|legend|axis)\b", re.I)


# A question that selects by rank ("which step takes the most words", "the party with the higher share") asks the
# reader to compare values across a set; an extracted value answers it only where its own text states the ranking
# ("GPT-4 performs the best", "up to $750", "higher than").
_SUPERLATIVE = (r"highest|lowest|largest|smallest|longest|shortest|greatest|biggest|fewest|furthest|farthest|"
                r"oldest|newest|youngest|earliest|strongest|weakest|fastest|slowest|most|least|best|worst")
_COMPARATIVE = r"higher|lower|greater|larger|smaller|bigger|longer|shorter|more|fewer"
_RANK_ASK_RE = re.compile(rf"(?i)(?<!\bat )\b(?:{_SUPERLATIVE})\b|^\s*(?:which|what|who)\b.*\b(?:{_COMPARATIVE})\b")
_RANK_STATED_RE = re.compile(rf"(?i)\b(?:{_SUPERLATIVE}|{_COMPARATIVE}|than|top|up to|at most|maximum|minimum|"
                             r"max|min|no more than|not (?:to )?exceed\w*|limit(?:ed)?|cap(?:ped)?|leads?|leading|"
                             r"ranks?|ranked|first|outperforms?)\b")


def asks_ranking(text: str) -> str | None:
    """The rank word of a question that selects by rank ("highest", "more"), else None."""
    ask = re.split(r"(?<=\?)\s+", text.strip())[-1] if text.count("?") >= 2 else text
    # a rank word written with a capital inside the sentence is part of a name ("Apple's Greater China segment")
    ask = re.sub(rf"(?<=\s)(?=[A-Z][a-z])(?i:{_SUPERLATIVE}|{_COMPARATIVE})(?=\s+[A-Z])", "_", ask)
    m = _RANK_ASK_RE.search(ask)
    return (re.search(rf"(?i)\b(?:{_SUPERLATIVE}|{_COMPARATIVE})\b", m.group(0)[-20:]) or m).group(0) if m else None


def states_ranking(text: str) -> bool:
    return bool(_RANK_STATED_RE.search(text))


def reader_cannot_state(text: str, printed: str = "") -> tuple[str, str] | None:
    """What an extractive reader cannot answer in ``text`` and why, ``("picture" | "computed", why)``, else None.
    A colour the question names that the passages' text ``printed`` itself names is a legend the text states
    ("green  very cold milk (up to 8 °C)"), not a picture: readable."""
    ask = re.split(r"(?<=\?)\s+", text.strip())[-1] if text.count("?") >= 2 else text
    colours = {c.lower() for c in re.findall(rf"(?i)\b(?:{COLOUR})\b", ask)}
    legend = bool(colours) and all(re.search(rf"(?i)\b{c}\b", printed) for c in colours)
    if legend:
        ask = re.sub(rf"(?i)\b(?:{COLOUR})\b|\bcolou?r(?:s|ed)?\b", " ", ask)
    if m := _VISUAL_RE.search(ask):
        return "picture", f"the question asks what a figure or picture shows ({m.group(0)!r}); text extraction " \
                          f"cannot read it"
    if m := _COMPUTED_RE.search(ask):
        return "computed", f"the question asks for a computed value ({m.group(0)!r}); the passages would have to " \
                           f"state it"
    return None


# The physical quantity a question names, with the units that measure it (physics, not a domain list): a measure in
# another quantity's units is never the answer to it.
DIMENSIONS = {
    "temperature": {"°c", "°f"}, "weight": {"g", "kg", "mg", "lb", "lbs", "oz"},
    "length": {"mm", "cm", "m", "km"}, "volume": {"ml", "l"}, "speed": {"mph", "km/h"},
    "power": {"w", "kw", "mw"}, "voltage": {"v"}, "frequency": {"hz", "khz", "mhz", "ghz"},
    "storage": {"kb", "mb", "gb", "tb"}, "charge": {"mah"},
}
_DIMENSION_RE = {
    "temperature": r"temperatures?|how (?:hot|cold|warm)|degrees?", "weight": r"weights?|weighs?|mass|how heavy",
    "length": r"lengths?|heights?|widths?|depths?|distances?|how (?:tall|far|wide|deep|high)",
    "volume": r"volumes?|capacity (?:in|of) (?:litres|liters|ml)", "speed": r"speeds?|how fast", "power": r"power|wattage",
    "voltage": r"voltages?", "frequency": r"frequenc(?:y|ies)", "storage": r"storage|memory|ram|file size",
    "charge": r"battery capacity",
}


def dimension_of(text: str) -> str:
    """The physical quantity the question asks ("what temperature ..." -> temperature), else ''."""
    return next((d for d, rx in _DIMENSION_RE.items() if re.search(rf"(?i)\b(?:{rx})\b", text)), "")


def _unit_of(text: str) -> str:
    """The noun a "how many" question counts: "days" in "how many vacation days", "grams" in "how many grams of
    coffee", "independents" in "how many were independents"; a time unit first."""
    m = _ASKED_UNIT_RE.search(text)
    if not m:
        return ""
    words: list[str] = []
    seq = m.group(1).lower().split()
    for i, w in enumerate(seq):
        if re.fullmatch(_AUX, w) or w in ("of", "in", "per", "for", "from", "on", "at"):
            if not words and re.fullmatch(_AUX, w) and i + 1 < len(seq):
                words = [seq[i + 1]]  # "how many were independents"
            break
        words.append(w)
    return next((w for w in words if w.rstrip("s") in TIME_UNITS), words[-1] if words else "")


_PART_SPLIT_RE = re.compile(r",?\s+and\s+(?=(?:how|what|which|who|when|where)\b)|;\s*", re.I)


def question_parts(text: str) -> list[str]:
    """The asks of a multi-part question ("How long is the initial term, and how long is each renewal?")."""
    parts = [p.strip(" ?,") for p in _PART_SPLIT_RE.split(text.strip()) if p and p.strip(" ?,")]
    return parts if len(parts) >= 2 else [text]


def asked_class(question: dict[str, Any]) -> Asked:
    """The typed ask of a question given as a dict with ``text``, ``answer_shape`` and ``decomposition`` (a parsed
    question's fields, or one part of a multi-part question)."""
    text = question.get("text") or ""
    shape = question.get("answer_shape") or "text"
    multi = (question.get("decomposition") or "single") != "single"
    # a question with several '?' states its framing first: the last one is the ask
    ask = re.split(r"(?<=\?)\s+", text.strip())[-1] if text.count("?") >= 2 else text
    ask = _LEAD_CLAUSE_RE.sub("", ask)  # "When using GPT-4 as the base model, how many datasets ...": the count
    first_part = re.split(r",?\s+and\s+(?=how|what|which|who|when|where)", ask, maxsplit=1, flags=re.I)[0]
    if shape == "list" or _LIST_RE.search(ask):
        return Asked(cls="list", multi_part=multi, reasons=["list"])
    if _YESNO_RE.match(first_part):  # "Did the amendment change how much notice ...?" is still yes/no
        return Asked(cls="yesno", multi_part=multi, reasons=["opens with an auxiliary verb"])
    if _DURATION_RE.search(ask):
        unit = _unit_of(ask)
        return Asked(cls="duration", unit=unit if unit.rstrip("s") in TIME_UNITS else "", multi_part=multi,
                     reasons=["asks how long"])
    if _PERCENT_RE.search(ask):
        return Asked(cls="percentage", multi_part=multi, reasons=["asks a percentage"])
    if _DATE_RE.search(ask) or shape == "date":
        return Asked(cls="date", multi_part=multi, reasons=["asks when"])
    if _IDENTIFIER_RE.search(ask):
        return Asked(cls="entity", entity_noun="number", multi_part=multi, reasons=["asks an identifier"])
    if _COUNT_RE.search(ask):
        return Asked(cls="count", unit=_unit_of(ask), multi_part=multi, reasons=["asks how many"])
    if _MONEY_RE.search(ask) and shape in ("amount", "text", "entity"):
        return Asked(cls="money", multi_part=multi, reasons=["asks an amount of money"])
    noun = _ENTITY_NOUN_RE.search(ask)
    if shape == "entity" or noun or _WHO_RE.search(ask):
        return Asked(cls="entity", entity_noun=noun.group(1).lower() if noun else "", multi_part=multi,
                     reasons=["asks a name"])
    if shape == "boolean":
        return Asked(cls="yesno", multi_part=multi, reasons=["boolean shape"])
    if shape == "amount":
        dim = dimension_of(ask)
        return Asked(cls="number", multi_part=multi, dimension=dim,
                     reasons=["amount shape"] + ([f"asks a {dim}"] if dim else []))
    return Asked(cls="text", multi_part=multi, reasons=[f"{shape} shape"])


def asked_of(question: ParsedQuestion) -> Asked:
    """The question's typed ask: the one the parser stored, else typed now from its text, shape and decomposition
    (a row stored before the parser typed it; the same function, so both agree)."""
    return question.asked or asked_class(question.model_dump())
