"""The words and patterns the question parser reads (stopwords, generic and reference nouns, the noun classes
that type an answer, synonyms), and the normalisation every part of it applies first: curly quotes and dashes made
plain, answer-format instructions dropped (:func:`question_core`). Split from :mod:`tasks.questions.parser` so the
keyword extraction and the answer-shape rules read one vocabulary.
"""

from __future__ import annotations

import re

from tasks import words
from tasks.questions.framing import sentences


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# The parser's stopwords (tasks.words): never keywords and never the end of a keyword's phrase. Every group but
# the verbs of asking (GENERIC below reads them) and the document's own words (a question may be about a report);
# not 'may', which is a month here (MONTHS)
STOPWORDS = ((words.FUNCTION_WORDS - {"may"}) | words.RELATIONAL_WORDS | words.ABBREVIATIONS
             | words.QUESTION_HEDGES)
# generic verbs: never keywords, and they end a phrase
GENERIC = _words("""mention mentioned mentions show shown shows showing give given gives provide provided provides
include included includes including contain contained contains containing appear appears appeared describe described
discuss discussed list listed present presented report reported reports disclosed disclose state stated say said see
seen make made get got go goes use used using based find found tell write written answer answers question questions
take takes took stand stands need needs needed require requires allow allows happen happens become becomes seem seems
want wants put puts come comes compare compares compared comparing relate relates related affect affects affected""")
# imperative openers ("List all ...", "Summarize the ..."): dropped when they start a clause
IMPERATIVES = _words("""list name enumerate describe explain summarize summarise outline give provide write identify
state tell show find compare analyze analyse examine assess evaluate discuss align combine correlate calculate compute
determine count please""")
AUX = _words("""is are was were do does did can could has have had will would should shall may might must isn't aren't
wasn't weren't doesn't don't didn't hasn't haven't can't won't""")
WH = _words("what which who whom whose when where why how")
LEAD_CLAUSE = _words("""in for from according among amongst based as during given using within on at by of with after
before since if compared considering regarding excluding including except besides across under over between""")
REF_NOUNS = _words("""figure fig table page pages section chapter appendix unit part step item exhibit note article
clause schedule annex slide quarter q equation eq""")
MONTHS = _words("""january february march april may june july august september october november december jan feb mar
apr jun jul aug sep sept oct nov dec""")
DATE_NOUNS = _words("date dates day days month months year years deadline time period quarter")
QUANTITY_NOUNS = _words("""number amount amounts percentage percent proportion share fraction ratio rate rates sum total
count value values gap average mean median size cost costs price prices fee fees premium premiums revenue revenues
sales income margin margins profit profits loss losses earnings expense expenses expenditure expenditures spending
budget capacity population score scores accuracy performance height weight length width distance area volume speed
voltage frequency power duration temperature age salary salaries dividend dividends balance growth decline cash
increase decrease f1 precision recall maximum minimum hours minutes weeks miles km kg
deductible deductibles allowance allowances charge charges rent wage wages stipend reimbursement compensation
tuition penalty fine""")
MASS_PLURALS = _words("""sales earnings expenses revenues costs proceeds savings profits losses assets liabilities
receivables payables borrowings""")
ENTITY_NOUNS = _words("""company firm name person organisation organization country city state region model method
dataset product brand author title party team department agency bank auditor university location place vendor
supplier customer segment color colour type kind term word symbol icon logo""")
IDENTIFIER_NOUNS = _words("number no id code identifier")
# words that get no plural/singular variant (determiners-like adjectives, uncountables, -ly adverbs are handled apart)
NO_INFLECTION = _words("""last first second third fourth next previous prior entire top total exact distinct specific
certain several various main key major minor net gross new old recent latest current highest lowest largest smallest
best worst greater higher lower larger smaller bigger better worse fewer earlier later people criteria data news
series species means analysis basis crisis thesis""")
LY_NOUNS = _words("family supply assembly monopoly anomaly quarterly monthly yearly weekly daily early italy ally "
                   "rally")

# A small general-purpose synonym map for business and technical documents (members of a group are equivalent).
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("revenue", "sales", "net sales", "turnover", "net revenue"), ("price", "premium", "cost", "pricing"),
    ("fee", "charge", "commission"), ("employee", "staff", "personnel", "workforce", "headcount"),
    ("terminate", "cancel", "termination", "cancellation"), ("profit", "income", "earnings", "net income"),
    ("percentage", "percent", "per cent", "%"), ("expense", "expenditure", "spending", "outlay"),
    ("operating expenses", "opex", "operating costs"), ("capital expenditure", "capex"),
    ("r&d", "research and development"), ("share repurchase", "stock repurchase", "buyback", "share buyback"),
    ("acquisition", "takeover", "merger"), ("divestiture", "divestment", "disposal", "spin-off"),
    ("customer", "client"), ("company", "corporation", "firm"), ("debt", "borrowings", "indebtedness"),
    ("foreign exchange", "currency", "exchange rate", "fx"), ("shareholder", "stockholder"), ("dividend", "payout"),
    ("lawsuit", "litigation", "legal proceedings"), ("gross margin", "gross profit"),
    ("salary", "compensation", "remuneration", "wages", "pay"), ("contract", "agreement"),
    ("increase", "rise", "growth"), ("decrease", "decline", "reduction", "drop"),
    ("quarter", "three months ended", "quarterly"), ("annual", "yearly", "fiscal year"),
    ("total", "sum", "aggregate"), ("figure", "chart", "graph", "diagram"), ("chapter", "section"),
    ("appendix", "annex"), ("deadline", "due date"), ("begin", "start", "commence"), ("buy", "purchase"),
    ("q1", "first quarter"), ("q2", "second quarter"), ("q3", "third quarter"), ("q4", "fourth quarter"),
)
SYNONYMS: dict[str, tuple[str, ...]] = {}
for _group in SYNONYM_GROUPS:
    for _term in _group:
        SYNONYMS[_term] = tuple(dict.fromkeys(SYNONYMS.get(_term, ()) + _group))

_FORMAT_CLAUSE = re.compile(r"\[[^\]]*\]|\(?\b(e\.g\.|for example|for instance)[^)]*\)?[.?]?"
                            r"|,?\s*\b(in|with|by) (ascending|descending|alphabetical)( alphabetical)? order\b"
                            r"|,?\s*\bwith (one|two|three|\d) decimal places?\b", re.I)
_FORMAT_SENTENCE = re.compile(r"\bformat(ted)?\b|\bwrite (down )?(the|your) answer\b|\bthe answer (should|shall|must)\b"
                              r"|\bgive me an?\b|\breturn me\b|\b(in|as) a list\b|\bdecimal places?\b|\balphabetical\b"
                              r"|\b(ascending|descending) order\b|\brepresent these\b", re.I)


def normalise_text(text: str) -> str:
    text = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2018", "'").replace("\u2019", "'")
    return " ".join(re.sub(r"[\u2013\u2014]", "-", text).split())


def question_core(text: str) -> str:
    """Drop answer-format instructions (examples, ordering, 'write the answer in list format'), keep the question."""
    sents = sentences(text)
    core = " ".join([s for s in sents if not _FORMAT_SENTENCE.search(s)] or sents[:1])
    return " ".join(_FORMAT_CLAUSE.sub(" ", core).split()) or core

def is_plural(word: str) -> bool:
    w = word.lower()
    return w in ("people", "children", "men", "women", "criteria") or (
        len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is", "ics", "ous")))


def is_adverb(low: str) -> bool:
    return len(low) > 5 and low.endswith("ly") and low not in LY_NOUNS and not low.endswith(("ply", "bly"))
