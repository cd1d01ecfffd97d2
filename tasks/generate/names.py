"""Names for the extractive reader: the name phrases in the sentences that carry the question's terms, an
acronym's expansion, a label's value, and the name on the row of a code the question names (``pick_entity``); and
the question cues the reader's choices turn on (who, an identifier, a contact, an expansion, more or less)."""

from __future__ import annotations

import re

from tasks.generate import values as V
from tasks.generate.roles import asked_role, pick_role, pick_signer
from tasks.generate.sentences import STOPWORDS, PLine, matched, stem, stems
from tasks.generate.typed import SHORT_LINE_WORDS, Pick, Reader

# Term evidence a value's sentence needs: found at FOUND_* (coverage share or matched words), complete at COMPLETE_*.
FOUND_COVERAGE, FOUND_WORDS = 0.3, 3
COMPLETE_COVERAGE, COMPLETE_WORDS = 0.5, 4
_HEADING_LINE = re.compile(r"^\s*(?:(?:ARTICLE|PART|SECTION|CHAPTER|Article|Part|Section|Chapter)\s+[IVXLC\d]+\b|"
                           r"\d{1,2}(?:\.\d{1,2})*\.?\s+[A-Z][^.]{0,60}$|[A-Z][A-Z &,-]{3,}$)")
# a sentence or clause break inside a phrase: not one name; an initial ("E. Scott Bradley"), a title ("Dr. Lee") or
# a company's legal form after a comma ("Acme, Inc.") is not a break
_BREAK = re.compile(rf"(?<!\b[A-Z])(?<!\b(?:Mr|Ms|Dr|St|Jr|Sr))(?<!\bMrs)(?<!\bProf)[.:]\s|,\s(?!(?i:{V.LEGAL_FORMS})\b)")
_CUES = {
    "identifier": re.compile(r"phone|telephone|\btel\b|\bfax\b|\bnumber\b|\bcode\b|\bid\b|zip|postcode"),
    "contact": re.compile(r"e-?mail|website|\burl\b|web ?site|address|homepage"),
    "who": re.compile(r"^\s*who\b|\bwho (?:is|was|led|leads)\b|\bperson\b|\bauthor\b"),
    "expand": re.compile(r"stands? for|abbreviat|acronym|\bmean(?:s|ing)?\b|full (?:name|form)"),
    "max": re.compile(r"\b(?:greater|higher|more|larger|bigger|better|most|highest|largest|increas\w*)\b"),
    "min": re.compile(r"\b(?:less|lower|fewer|smaller|worse|least|lowest|smallest|decreas\w*)\b"),
}


def cue(r: Reader, name: str) -> bool:
    return bool(_CUES[name].search(r.q_low))


def _acronyms(r: Reader) -> list[str]:
    return [a for a in re.findall(r"\b[A-Z][A-Z0-9&]{1,7}\b", r.q_text) if not a.isdigit()]


def pick_acronym(r: Reader) -> list[Pick]:
    """Expansions of an acronym the question names (NARL -> National Atmospheric Research Laboratory)."""
    out = []
    for rows in r.by_passage:
        for ln in rows:
            for acr in _acronyms(r):
                if acr in ln.text and (v := V.expand_acronym(ln.text, acr)):
                    out.append(Pick(v.text, [ln], 2.0, max(0.5, FOUND_COVERAGE), 2, "acronym", 0.6))
    return out


# a code made of capitals and digits ("AR01", "GS5002", "P-10"): a key a table row is filed under
_ROW_KEY = re.compile(r"\b[A-Z]{1,5}-?\d{1,5}[A-Z]?\b")
# ... looked up: "the name for code AR01", "the description of error E12", "the item with part no. PN-204"
_LOOKED_UP = r"(?i)\b(?:for|of|with|code|number|no\.?|id)\s+(?:[\w.-]+\s+){{0,2}}{key}\b"
# a period's notation is not a key (Q1, H2, FY2023, 9M): every row of a period's column carries it
_PERIOD = re.compile(r"(?i)(?:Q[1-4]|H[12]|[FC]Y\d{2,4}|\d{1,2}M|[1-4]Q\d{2})")


def pick_keyed(r: Reader) -> list[Pick]:
    """The name on the row of a key the question looks up ("the market name for code AR01" -> "1. Little Rock
    AR01" -> "Little Rock"): a code printed on a line or three only identifies that row, so the row's name is
    the value asked for, whatever words the row's header uses. A period's notation (Q1, FY2023) keys no row."""
    out = []
    rows = [ln for lines in r.by_passage for ln in lines]
    for key in dict.fromkeys(_ROW_KEY.findall(r.q_text)):
        if _PERIOD.fullmatch(key) or not re.search(_LOOKED_UP.format(key=re.escape(key)), r.q_text):
            continue
        on = [ln for ln in rows if re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", ln.text)]
        if not 1 <= len(on) <= 3:
            continue  # absent, or a code every line repeats: it keys no single row
        for ln in on:
            rest = re.sub(rf"(?<![\w-]){re.escape(key)}(?![\w-])", " ", ln.text)
            rest = V.ROW_MARKER.sub("", rest)
            for v in V.find_entities(rest, STOPWORDS):
                if v.kind == "name" and not _ROW_KEY.fullmatch(v.text):
                    out.append(Pick(v.text.strip(" ,;:"), [ln], 1.5 + 0.6 - 0.03 * ln.pidx, 0.75, 1, "keyed", 0.5))
    return out


def _wraps(ln: PLine, v: V.Value) -> bool:
    """Whether a line of prose (with lower-case words) ends in the name: a short line (a title, a signature's name
    over its role) or a line of capitals ("C A N A D A") ends its name."""
    words = ln.text.split()
    return (v.kind == "name" and not ln.text[v.end:].strip() and len(words) > SHORT_LINE_WORDS
            and sum(w[:1].islower() for w in words) >= 2)


def _continued(r: Reader, ln: PLine, v: V.Value) -> V.Value | None:
    """A name a line of prose ends in goes on with the name the next line opens with ("before the United States
    District" / "Court for the District of Delaware" -> one name): a wrapped line's break is not a name's end, and
    the next line's opening words are no name of their own (None)."""
    rows = r.by_passage[ln.pidx]
    k = rows.index(ln)
    if v.kind == "name" and v.start == 0 and k and any(_wraps(rows[k - 1], u) for u in V.find_entities(
            rows[k - 1].text, set())):
        return None
    if k + 1 >= len(rows) or not _wraps(ln, v):
        return v
    opens = next((c for c in V.find_entities(rows[k + 1].text, set()) if c.kind == "name" and c.start == 0), None)
    return V.Value(f"{v.text} {opens.text}", v.kind, v.start, v.end) if opens else v


_CASE_ASK = re.compile(r"(?i)\b(?:which|what)\s+(?:[a-z]+\s+)?(?:case|lawsuit|precedent)\b(?!\s+(?:number|no\b|#))")
_CASE_NAME = re.compile(r"(?:[A-Z][\w.'’&-]*\s+){0,4}[A-Z][\w.'’&-]*,?\s+v\.\s+(?:[A-Z][\w.'’&-]*\s*){1,5}")


def pick_case(r: Reader) -> list[Pick]:
    """Case names ("Wong v. Allison") in the sentences that carry the question's terms."""
    out = []
    for ss in r.sents:
        for s in ss:
            cov, n = r.coverage(s)
            for ln in dict.fromkeys(s.lines) if n else []:
                for m in _CASE_NAME.finditer(ln.text):
                    out.append(Pick(m.group(0).strip(" ,"), [ln], 1.5 * cov + 0.5 - 0.03 * ln.pidx, cov, n, "case", 0.5))
    return out


def pick_entity(r: Reader) -> list[Pick]:
    """Names in the sentences that carry the question's terms; a name made only of question words is not an
    answer; a name next to the noun the question asks for ("which state" -> "the State of Delaware") is preferred.
    A name asked by its role ("Who is the defendant?") is only one the text states that role with (``roles.py``):
    the other names of a sentence that mentions defendants are not the defendant."""
    if role := asked_role(r.q_text):
        return pick_role(r, role)
    if signers := pick_signer(r):  # "who signed ...": the names the text marks as signed
        return signers
    skip = {stem(w) for w in r.q_stems} | STOPWORDS
    out = pick_acronym(r) + pick_keyed(r) + pick_titled(r)
    noun = r.asked.entity_noun
    for ss in r.sents:
        for s in ss:
            cov, n = r.label_coverage(s)
            # "Tel: 01983 873655" under the asked home's heading: the line names the identifier's kind, the
            # context names its subject
            labelled = {c for c in ("identifier", "contact") if cue(r, c) and _CUES[c].search(s.text.lower())}
            if not n and not (labelled and cov > 0):
                continue
            for ln in dict.fromkeys(s.lines):
                if _HEADING_LINE.match(ln.text) and not (noun and ln.text.strip().lower().endswith(noun)):
                    continue  # a heading names the section, not the answer ("SUPERIOR COURT" names a court)
                lv = r.label_pair(ln)
                if lv and matched(r.terms.words, stems(lv[0])):
                    out.append(Pick(lv[1], [ln], 1.5 * cov + 0.5, cov, n, "label", 0.5))
                for v in V.find_entities(ln.text, skip):
                    if (v := _continued(r, ln, v)) is None:
                        continue
                    words = [w for w in re.findall(r"[\w'’.&-]+", v.text) if w.lower() not in STOPWORDS]
                    if not words or all(stem(w) in skip for w in words) or _BREAK.search(v.text) \
                            or V.find_dates(v.text) or re.match(r"[\u00ad-]\s*$", ln.text[v.end:]):
                        continue  # question words only, a sentence break or a date: not a name
                    n_words = len(v.text.split())
                    pref = {"quoted": 0.3, "name": 0.2 + 0.1 * (2 <= n_words <= 4),
                            "identifier": 0.6 if cue(r, "identifier") else -0.3,
                            "contact": 0.9 if cue(r, "contact") else -0.3}[v.kind]
                    if v.kind in labelled:
                        pref += 0.3
                    local = v.text.lower().split("@")[0]  # an e-mail's own part, not the shared domain
                    if v.kind == "contact" and any(len(w) >= 3 and w in local for w in r.terms.words):
                        pref += 0.4  # the address carries the asked person's or body's name
                    if noun and v.kind == "name" and n_words >= 2 and v.text.lower().endswith(noun) \
                            and stem(v.text.split()[0]) not in skip:
                        pref += 0.6  # "what type of court" -> "SUPERIOR COURT": a kind of the asked noun
                    if v.kind == "name" and cue(r, "who") and 2 <= n_words <= 3:
                        pref += 0.3
                    if noun and (v.text.lower().startswith(noun[:5]) or re.search(
                            rf"(?i)\b{re.escape(noun[:5])}\w*\s+of\s+{re.escape(v.text)}|"
                            rf"{re.escape(v.text)}\s+{re.escape(noun[:5])}", ln.text)):
                        pref += 0.6
                    shown = [ln] if v.text in ln.text else [ln, r.by_passage[ln.pidx][r.by_passage[ln.pidx].index(ln) + 1]]
                    out.append(Pick(v.text, shown, 1.5 * cov + pref - 0.03 * ln.pidx, cov, max(n, v.kind in labelled), v.kind,
                                    0.5 if pref >= 0.5 else 0.3))
    if _CASE_ASK.search(r.q_text):  # "which case": a case is named "A v. B", another name is a party or a place
        out = [p for p in out if _CASE_NAME.fullmatch(p.value)] + pick_case(r)
    return out


_TITLE_OF = re.compile(r"(?i)\b(?:title|name|topic)\s+of\s+(?:the\s+|a\s+|an\s+)?(?P<noun>[a-z][a-z -]{2,40}?)"
                       r"(?=\s+(?:given|in|under|on|for|of|that|which|is|was|listed|shown|mentioned)\b|\s*\?|\s*$)")
_TITLE_CASE = re.compile(r"(?:[A-Z][\w'’&-]*|of|the|in|on|and|for|to|a|an|at|with)(?:\s+(?:[A-Z][\w'’&-]*|of|the|in|"
                         r"on|and|for|to|a|an|at|with))*")


def pick_titled(r: Reader) -> list[Pick]:
    """ "The title of the case study under unit 8": the title a line prints right after the named kind ("Case
    Study- Discrimination in the Workplace Continues—submit ..."), in a passage that carries the question's other
    terms."""
    m = _TITLE_OF.search(r.q_text)
    if not m:
        return []
    noun = m.group("noun").strip()
    rest = r.terms.hits(stems(r.q_text)) - stems(noun)
    out = []
    for rows in r.by_passage:
        if rest and not r.terms.hits(set().union(*(ln.stems for ln in rows))) & rest:
            continue  # not the part of the document the question scopes
        for ln in rows:
            k = re.search(rf"(?i)\b{re.escape(noun)}\s*[-:–—]\s*", ln.text)
            t = _TITLE_CASE.match(ln.text, k.end()) if k else None
            title = t.group(0).strip() if t else ""
            while title.split() and title.split()[-1].lower() in STOPWORDS:
                title = title.rsplit(None, 1)[0] if " " in title else ""
            if len(title.split()) >= 2:
                out.append(Pick(title, [ln], 2.0 - 0.03 * ln.pidx, 0.75, 2, "titled", 0.6))
    return out
