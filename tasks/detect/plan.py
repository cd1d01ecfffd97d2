"""Detector dispatcher: which detectors run for a question, by fixed rules, with the rule that fired.

Deterministic on purpose (DESIGN.md, "Dispatcher"): the same question on the same documents always gets the same
plan, and the plan's ``rule`` says why, for the audit trail.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from schemas.contracts import DETECTORS, ParsedQuestion

# Exact identifiers: a lookup by a literal string that a nearest-neighbour vector cannot be trusted to honour.
_QUOTED = re.compile(r"\"([^\"]{2,})\"|“([^”]{2,})”|«([^»]{2,})»|(?<![\w])'([^']{2,}?)'(?![\w])")
_REFERENCE = re.compile(
    r"\b(?:item|section|sections|clause|article|part|chapter|appendix|annex|exhibit|schedule|rule|regulation|§)"
    r"\s*\d+[a-z]?(?:[.(]\d+\)?)*\b|§\s*\d+",
    re.IGNORECASE,
)
_SECTION_NUMBER = re.compile(r"(?<![\d.])\d+\.\d+\.\d+(?:\.\d+)*(?![\d.])")
# Codes and model numbers: letters and digits in one token, with a separator or upper-case letters, e.g.
# INV-2023-001, ISO-9001, RTX4090, A100, 1500S (not plain years, amounts, '3rd' or 'Q3' style words).
_CODE = re.compile(
    r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])"
    r"(?:[A-Za-z0-9]+[-_/][A-Za-z0-9][\w/-]*|[A-Z]+\d+[A-Z\d]*|\d+[A-Z]+[A-Z\d]*)(?![\w-])"
)
_NOT_CODE = re.compile(r"^(?:\d+(?:st|nd|rd|th|s|k|m|b|x|am|pm|d|h)|[QH][1-4]|FY\d{2,4}|\d{4}s?)$", re.IGNORECASE)
_MONTH = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b", re.IGNORECASE)
# Answer-format instructions ("Directly answer 'yes' or 'no'", "a list like ['Page 2', 'Page 4']") quote example
# answers, not strings to look up: such sentences and bracketed examples are ignored.
_FORMAT_CUE = re.compile(
    r"^\s*(?:please\s+)?answer\b|\b(?:format(?:ted)?|for example|for instance|e\.g\.|directly answer"
    r"|answer (?:with|in|as|only)|write (?:down )?(?:the|your) answer|in (?:a )?list)\b",
    re.IGNORECASE,
)
_BRACKETED = re.compile(r"\[[^\]]*\]")


_COUNTS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
           "seventeen eighteen nineteen twenty").split()
_ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
             "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth").split()
_PAGE_NUMBER = re.compile(
    r"\bpages?\s*(?:no\.?\s*|number\s*)?\(?\s*(\d{1,4}|" + "|".join(_COUNTS) + r")\b\s*\)?(?![.,]\d)", re.IGNORECASE
)
_PAGE_ORDINAL = re.compile(r"\b(" + "|".join(_ORDINALS) + r"|last)\s+(?:[a-z]+\s+)?page\b", re.IGNORECASE)


# A figure or table the question names ('Figure 9', 'Fig. 2', 'table 3'), and the caption line that labels it: the
# label at the start of a line, then ':', '.' or '|' ('Figure 9: ...', 'Table 3. ...'; not 'Figure 9 shows ...').
_FIGURE_REFERENCE = re.compile(r"\b(fig(?:ure)?s?\.?|tables?)\s*(\d{1,3})\b(?![.,]\d)", re.IGNORECASE)
_CAPTION = re.compile(r"^\s*(fig(?:ure)?\.?|table)\s*(\d{1,3})\s*[.:|]", re.IGNORECASE)


def _label_kind(word: str) -> str:
    return "table" if word.lower().startswith("table") else "figure"


def figure_references(text: str) -> list[tuple[str, str]]:
    """('figure' | 'table', number) of each figure or table the question names, in order."""
    return list(dict.fromkeys((_label_kind(m.group(1)), m.group(2)) for m in _FIGURE_REFERENCE.finditer(text)))


def caption_label(line: str) -> tuple[str, str] | None:
    """('figure' | 'table', number) when ``line`` opens a caption ('Figure 9: ...', 'Table 3. ...')."""
    m = _CAPTION.match(line)
    return (_label_kind(m.group(1)), m.group(2)) if m else None


def page_references(text: str) -> list[int]:
    """Pages the question names, 1-based as written ('page 3', 'page(1)', 'page two', 'second page'); -1 = 'last
    page'."""
    found = []
    for m in _PAGE_NUMBER.finditer(text):
        word = m.group(1).lower()
        found.append(int(word) if word.isdigit() else _COUNTS.index(word) + 1)
    for m in _PAGE_ORDINAL.finditer(text):
        word = m.group(1).lower()
        found.append(-1 if word == "last" else _ORDINALS.index(word) + 1)
    return list(dict.fromkeys(n for n in found if n != 0))


@dataclass(frozen=True)
class DetectorPlan:
    detectors: list[str]
    rule: str


def _without_format_instructions(text: str) -> str:
    sentences = re.split(r"(?<=[.?!])\s+", _BRACKETED.sub(" ", text).strip())
    kept = [s for s in sentences if not _FORMAT_CUE.search(s)]
    return " ".join(kept or sentences[:1])


def exact_identifiers(text: str) -> list[str]:
    """Quoted strings, references like 'Item 7A' / 'Section 4.2', dotted section numbers and codes (letters and
    digits with an upper-case letter: INV-2023-001, A100, PaLM-2L) in the text, answer-format instructions aside."""
    text = _without_format_instructions(text)
    found = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)]
    found = [f for f in found if any(ch.isalnum() for ch in f)]
    found += [m.group(0) for m in _REFERENCE.finditer(text)]
    found += [m.group(0) for m in _SECTION_NUMBER.finditer(text)]
    found += [c for c in (m.group(0) for m in _CODE.finditer(text))
              if not _NOT_CODE.match(c) and any(ch.isupper() for ch in c) and not _MONTH.search(c)]
    found = list(dict.fromkeys(f.strip() for f in found if f.strip()))
    return [f for f in found if not any(f != g and f in g for g in found)]  # 'Item 7A' covers '7A'



def plan_detectors(question: ParsedQuestion, toc_sources: Mapping[str, str],
                   embeddings_available: bool) -> DetectorPlan:
    """Pick the detectors for one question.

    - ``toc`` runs unless every scoped document's sections are plain pages (titles like 'Page 3' mean nothing)
      and the question names no page ('page 3', 'second page');
    - ``embeddings`` is skipped for exact-identifier lookups (quoted strings, 'Item 7A', '4.2.1', 'INV-2023-001')
      and when the scope has no vectors;
    - ``keywords`` always runs.
    """
    reasons = []
    chosen = set(DETECTORS)
    if not toc_sources:
        chosen.discard("toc")
        reasons.append("no toc: no document in scope")
    elif all(src == "pages" for src in toc_sources.values()):
        if page_references(question.text) or figure_references(question.text):
            reasons.append("toc: only page units, but the question names a page, a figure or a table")
        else:
            chosen.discard("toc")
            reasons.append("no toc: only page units (no outline or headings)")
    else:
        with_toc = sum(src != "pages" for src in toc_sources.values())
        reasons.append(f"toc: {with_toc}/{len(toc_sources)} document(s) with outline or headings")
    identifiers = exact_identifiers(question.text)
    if identifiers:
        chosen.discard("embeddings")
        shown = ", ".join(repr(i) for i in identifiers[:3])
        reasons.append(f"no embeddings: exact identifier {shown}")
    elif not embeddings_available:
        chosen.discard("embeddings")
        reasons.append("no embeddings: no vectors for the scoped documents")
    else:
        reasons.append("embeddings: no exact identifier")
    detectors = [d for d in DETECTORS if d in chosen]
    label = "all" if len(detectors) == len(DETECTORS) else "+".join(detectors)
    return DetectorPlan(detectors=detectors, rule=f"{label}: " + "; ".join(reasons))
