"""The offline extractive generator: a Provider that answers from the request payload without a model.

It scores every passage line by the question's keywords (the line, its neighbours and the passage's section
title), looks for a value of the asked shape on and next to the matching lines, and returns AnswerWithEvidence
JSON quoting the lines it used. It is honest about what it found: no typed value near the keywords means
``answer_found = False``; a single typed value (amount, date, boolean, entity) tied to the question's keywords
(on a keyword line, or a bare value cell next to one) is complete: it has no other part to wait for, so the
sequential loop stops there; a list or a comparison is never complete from a single passage; a multi-part
question is never complete from one extracted value. Deterministic; named as what it is (not an LLM).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from schemas.contracts import SINGLE_VALUE_SHAPES, AnswerWithEvidence, EvidenceSpan
from tasks.generate import values as V
from tasks.generate.normalise import normalise_value
from tasks.llm.base import LLMRequest, ProviderReply, TerminalLLMError

# Keyword evidence a line window needs: found at FOUND_* (coverage share or matched words), complete at COMPLETE_*.
FOUND_COVERAGE, FOUND_WORDS = 0.3, 3
COMPLETE_COVERAGE, COMPLETE_WORDS = 0.5, 4
MAX_LIST_ITEMS = 20
MAX_CELL_WORDS = 2  # words besides the value on a line that still reads as a bare value cell

STOPWORDS = set(
    "a an the of in on at to for from by with and or but is are was were be been being do does did has have had "
    "what which who whom whose when where why how many much this that these those it its their there here than "
    "as into about according report document paper page pages following shown show shows".split())
_TOKEN_RE = re.compile(r"[a-z0-9]+(?:[.'’&-][a-z0-9]+)*")
_CUES = {
    "percent": re.compile(r"percent|percentage|%|\bshare\b|proportion|\brates?\b|ratio"),
    "percent_word": re.compile(r"percent|%"),
    "money": re.compile(r"[$€£¥]|\bcost|price|revenue|income|sales|spen[dt]|budget|\bfees?\b|salar|profit|"
                        r"\bloss|dollar|euro|\bpa(?:y|id)\b|worth|funding|capital|earning|debt|assets"),
    "count": re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b"),
    "measure": re.compile(r"\bhow (?:long|old|far|tall|high|big|large|wide|heavy)\b|duration|distance|weight|"
                          r"height|\bsize\b|length"),
    "year": re.compile(r"\byears?\b"), "month": re.compile(r"\bmonths?\b"), "quarter": re.compile(r"quarter"),
    "time": re.compile(r"\btime\b|o'clock|\bhour\b"),
    "contact": re.compile(r"e-?mail|website|\burl\b|web ?site|address|homepage"),
    "year_only": re.compile(r"\b(?:which|what|in what) year\b|\byear (?:was|did|is|does)\b"),
    "identifier": re.compile(r"phone|telephone|\btel\b|\bfax\b|\bnumber\b|\bcode\b|\bid\b|zip|postcode"),
    "who": re.compile(r"^\s*who\b|\bwho (?:is|was|led|leads)\b|\bperson\b|\bauthor\b"),
    "expand": re.compile(r"stands? for|abbreviat|acronym|\bmean(?:s|ing)?\b|full (?:name|form)"),
    "max": re.compile(r"\b(?:greater|higher|more|larger|bigger|better|most|highest|largest|increas\w*)\b"),
    "min": re.compile(r"\b(?:less|lower|fewer|smaller|worse|least|lowest|smallest|decreas\w*)\b"),
}


_REFERENCE_SECTION = re.compile(r"(?:^|> )(?:index|contents|table of contents)\b")
_DOT_LEADER = re.compile(r"(?:\.\s?){4,}\s*\d+\s*$")


def stem(word: str) -> str:
    w = word.lower().strip("'’.")
    w = re.sub(r"['’]s$", "", w)
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("es", ""), ("s", ""), ("ing", ""), ("ed", ""), ("ly", "")):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)] + repl
    return w


def stems(text: str) -> set[str]:
    return {stem(t) for t in _TOKEN_RE.findall(text.lower())}


def _same(a: str, b: str) -> bool:
    return a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)))


def _matched(words: list[str], pool: set[str]) -> set[str]:
    return {w for w in words if any(_same(w, t) for t in pool)}


@dataclass
class PLine:
    pidx: int
    passage: dict[str, Any]
    line_no: int
    page: int
    text: str
    stems: set[str] = field(default_factory=set)


@dataclass
class Pick:
    value: str
    lines: list[PLine]
    score: float
    coverage: float
    strength: int
    kind: str = ""


class Scorer:
    """Keyword evidence around each line: coverage of the question's content words in the line window."""

    def __init__(self, question: dict[str, Any], passages: list[dict[str, Any]]):
        self.q_text = question.get("text", "")
        self.q_low = self.q_text.lower()
        words: list[str] = []
        for kw in question.get("keywords_primary") or []:
            words += [stem(t) for t in _TOKEN_RE.findall(kw.lower()) if t not in STOPWORDS]
        if not words:
            words = [stem(t) for t in _TOKEN_RE.findall(self.q_low) if t not in STOPWORDS]
        self.words = list(dict.fromkeys(words))
        self.secondary = list(dict.fromkeys(
            stem(t) for kw in question.get("keywords_secondary") or [] for t in _TOKEN_RE.findall(kw.lower())
            if t not in STOPWORDS))
        self.q_stems = stems(self.q_text)
        self.q_numbers = {v.number for v in V.find_amounts(self.q_text) if v.number is not None}
        self.q_dates = {d.text.lower() for d in V.find_dates(self.q_text)}
        self.lines: list[PLine] = []
        self.by_passage: list[list[PLine]] = []
        self.section_stems: list[set[str]] = []
        for i, p in enumerate(passages):
            rows = [PLine(i, p, int(ln["line_no"]), int(ln.get("page", p.get("page", 0))), ln["text"],
                          stems(ln["text"])) for ln in p.get("lines") or []]
            self.by_passage.append(rows)
            self.section_stems.append(stems(p.get("section") or ""))
            self.lines += rows

    def is_reference_list(self, ln: PLine) -> bool:
        """Index / contents lines, whose numbers are page references: 'Rinsing ...... 70' or an 'Index' section."""
        section = (ln.passage.get("section") or "").lower()
        return bool(_REFERENCE_SECTION.search(section) or _DOT_LEADER.search(ln.text))

    def cue(self, name: str) -> bool:
        return bool(_CUES[name].search(self.q_low))

    def window(self, ln: PLine) -> tuple[float, int, float]:
        """(coverage, matched words, line coverage) for one line. The window is the line and its neighbours;
        words found only in the passage's section title count half in coverage and not in matched words."""
        rows = self.by_passage[ln.pidx]
        k = rows.index(ln)
        hit = _matched(self.words, set().union(*(r.stems for r in rows[max(0, k - 1): k + 2])))
        title_only = _matched(self.words, self.section_stems[ln.pidx]) - hit
        n = max(1, len(self.words))
        return (len(hit) + 0.5 * len(title_only)) / n, len(hit), len(_matched(self.words, ln.stems)) / n

    def base(self, ln: PLine) -> tuple[float, float, int]:
        cov, strength, line_cov = self.window(ln)
        bonus = 0.05 * len(_matched(self.secondary, ln.stems))
        return cov + 0.5 * line_cov + bonus - 0.03 * ln.pidx, cov, strength


def _found(p: Pick | None) -> bool:
    return p is not None and p.strength >= 1 and (p.coverage >= FOUND_COVERAGE or p.strength >= FOUND_WORDS)


def _complete(p: Pick) -> bool:
    return p.coverage >= COMPLETE_COVERAGE or p.strength >= COMPLETE_WORDS


def _tied_to_keywords(s: Scorer, p: Pick) -> bool:
    """The pick's own line names a keyword of the question, or is little more than the value itself (a table cell
    or the value half of a label/value pair printed under its label). A value inside a neighbouring line of prose
    about something else is not tied to the keywords."""
    line = p.lines[0]
    if _matched(s.words, line.stems):
        return True
    rest = line.text.replace(p.value, " ", 1)
    return len(re.findall(r"[A-Za-z]{2,}", rest)) <= MAX_CELL_WORDS


def _best(picks: list[Pick]) -> Pick | None:
    return max(picks, key=lambda p: (p.score, -p.lines[0].pidx, -p.lines[0].line_no), default=None)


def pick_amount(s: Scorer) -> list[Pick]:
    prefs = {"percent": 0.9 if s.cue("percent_word") else 0.6 if s.cue("percent") else -0.2 * s.cue("count"),
             "currency": 0.6 if s.cue("money") else 0.0, "measure": 0.4 if s.cue("measure") else 0.0,
             "number": 0.3 if s.cue("count") else 0.0}
    q_words = set(_TOKEN_RE.findall(s.q_low)) | ({"%"} if "%" in s.q_low else set())
    out = []
    for ln in s.lines:
        if s.is_reference_list(ln):
            continue
        base, cov, strength = s.base(ln)
        for v in V.find_amounts(ln.text):
            if v.kind == "year" or (v.number is not None and v.number in s.q_numbers):
                continue
            pref = prefs.get(v.kind, 0.0) + (0.8 if V.unit_named(v.unit, q_words) else 0.0)
            out.append(Pick(v.text, [ln], base + pref, cov, strength, v.kind))
    return out


def pick_date(s: Scorer) -> list[Pick]:
    prefs = {"year": 0.5 * s.cue("year"), "year_range": 0.5 * s.cue("year"), "month_year": 0.4 * s.cue("month"),
             "quarter": 0.5 * s.cue("quarter"), "time": 0.8 if s.cue("time") else -0.5}
    out = []
    for ln in s.lines:
        base, cov, strength = s.base(ln)
        for d in V.find_dates(ln.text):
            if d.text.lower() in s.q_dates:
                continue
            score = base + V.DATE_KIND_SCORE[d.kind] / 8 + prefs.get(d.kind, 0.0)
            text = d.text
            if s.cue("year_only") and d.kind in ("full_date", "month_year", "quarter"):
                text = V.year_of(d.text) or d.text  # "Which year ...?" asks for the year, not the day
            out.append(Pick(text, [ln], score, cov, strength, d.kind))
    return out


def _acronyms(s: Scorer) -> list[str]:
    return [a for a in re.findall(r"\b[A-Z][A-Z0-9&]{1,7}\b", s.q_text) if not a.isdigit()]


def pick_acronym(s: Scorer) -> list[Pick]:
    """Expansions of an acronym the question names (NARL -> National Atmospheric Research Laboratory)."""
    out = []
    for ln in s.lines:
        for acr in _acronyms(s):
            if acr in ln.text and (v := V.expand_acronym(ln.text, acr)):
                base, cov, strength = s.base(ln)
                out.append(Pick(v.text, [ln], base + 1.0, max(cov, FOUND_COVERAGE), max(strength, 1), "acronym"))
    return out


def pick_entity(s: Scorer) -> list[Pick]:
    skip = set(s.q_stems) | STOPWORDS
    out = pick_acronym(s)
    for ln in s.lines:
        base, cov, strength = s.base(ln)
        lv = V.label_value(ln.text)
        if lv and _matched(s.words, stems(lv[0])):
            out.append(Pick(lv[1], [ln], base + 0.5, cov, strength, "label"))
        for v in V.find_entities(ln.text, {stem(w) for w in skip} | skip):
            n_words = len(v.text.split())
            pref = {"quoted": 0.3, "name": 0.2 + 0.1 * (2 <= n_words <= 4),
                    "identifier": 0.6 if s.cue("identifier") else -0.3,
                    "contact": 0.9 if s.cue("contact") else -0.3}[v.kind]
            if v.kind == "name" and s.cue("who") and 2 <= n_words <= 3:
                pref += 0.3
            out.append(Pick(v.text, [ln], base + pref, cov, strength, v.kind))
    return out


def pick_text(s: Scorer) -> list[Pick]:
    out = pick_acronym(s) if _CUES["expand"].search(s.q_low) else []
    for ln in s.lines:
        base, cov, strength = s.base(ln)
        if not _matched(s.words, ln.stems):
            continue
        lv = V.label_value(ln.text)
        if lv and _matched(s.words, stems(lv[0])):
            out.append(Pick(lv[1], [ln], base + 0.3, cov, strength, "label"))
            continue
        rows = s.by_passage[ln.pidx]
        k = rows.index(ln)
        used = [ln]
        if not re.search(r"[.!?:]\s*$", ln.text) and k + 1 < len(rows):
            used.append(rows[k + 1])
        out.append(Pick(" ".join(r.text.strip() for r in used), used, base, cov, strength, "sentence"))
    return out


def pick_boolean(s: Scorer) -> list[Pick]:
    out = []
    for ln in s.lines:
        base, cov, strength = s.base(ln)
        if strength:
            out.append(Pick("No" if V.says_no(ln.text) else "Yes", [ln], base, cov, strength, "cue"))
    return out


def pick_list(s: Scorer) -> tuple[list[str], list[PLine], float, int]:
    """Bullet items of the passages that match the keywords, else an in-line enumeration on the best line."""
    items: dict[str, tuple[str, PLine]] = {}
    best_cov, best_strength = 0.0, 0
    for rows in s.by_passage:
        scored = [(s.base(r), r) for r in rows]
        matched = [(b, r) for b, r in scored if b[2]]
        if not matched:
            continue
        (_, cov, strength), first = max(matched, key=lambda t: t[0][0])
        best_cov, best_strength = max(best_cov, cov), max(best_strength, strength)
        bullets = [(V.bullet_item(r.text), r) for r in rows if r.line_no >= matched[0][1].line_no]
        bullets = [(b, r) for b, r in bullets if b]
        found = bullets if len(bullets) >= 2 else [(i, first) for i in V.inline_items(first.text)]
        for item, r in found:
            items.setdefault(normalise_value(item) or item, (item, r))
    picked = list(items.values())[:MAX_LIST_ITEMS]
    return [i for i, _ in picked], [r for _, r in picked], best_cov, best_strength


def pick_comparison(s: Scorer, n_passages: int) -> tuple[str | None, list[PLine], bool, float, list[str]]:
    sides = V.comparison_sides(s.q_text)
    if not sides:
        return None, [], False, 0.0, ["could not tell the two sides of the comparison from the question"]
    found = []
    for side in sides:
        words = [stem(t) for t in _TOKEN_RE.findall(side.lower()) if t not in STOPWORDS]
        best = None
        for ln in s.lines:
            hit = len(_matched(words, ln.stems)) / max(1, len(words))
            nums = [v for v in V.find_amounts(ln.text) if v.kind != "year" and v.number is not None]
            if hit >= 0.5 and nums and (best is None or hit > best[0]):
                best = (hit, ln, nums[0])
        found.append(best)
    caveats = []
    if not all(found):
        got = [(side, f) for side, f in zip(sides, found) if f]
        caveats.append(f"value found for {len(got)} of 2 sides")
        if not got:
            return None, [], False, 0.0, caveats
        side, (hit, ln, v) = got[0]
        return f"{side}: {v.text}", [ln], False, hit / 2, caveats
    (ha, la, va), (hb, lb, vb) = found
    value = f"{sides[0]}: {va.text}; {sides[1]}: {vb.text}"
    if s.cue("max") != s.cue("min") and va.number != vb.number:
        want_max = s.cue("max")
        caveats.append(f"values: {value}")
        value = sides[0] if (va.number > vb.number) == want_max else sides[1]
    complete = n_passages >= 2
    if not complete:
        caveats.append("comparison read from a single passage; not complete until both sides are seen together")
    return value, [la, lb], complete, (ha + hb) / 2, caveats


def spans(lines: list[PLine]) -> list[EvidenceSpan]:
    """Consecutive lines of one passage merged into one span quoting them verbatim."""
    out: list[EvidenceSpan] = []
    last: PLine | None = None
    unique = {(ln.pidx, ln.line_no): ln for ln in lines}
    for key in sorted(unique):
        ln = unique[key]
        if out and last and last.pidx == ln.pidx and ln.line_no == out[-1].line_end + 1:
            out[-1].line_end = ln.line_no
            out[-1].quote += "\n" + ln.text
        else:
            out.append(EvidenceSpan(doc_id=ln.passage["doc_id"], page=ln.page, line_start=ln.line_no,
                                    line_end=ln.line_no, quote=ln.text))
        last = ln
    return out


def _answer(value: str | None, lines: list[PLine], found: bool, complete: bool, coverage: float,
            caveats: list[str]) -> AnswerWithEvidence:
    if not found:
        return AnswerWithEvidence(value=None, evidence=[], answer_found=False, complete_answer_found=False,
                                  confidence=0.0, caveats=caveats)
    return AnswerWithEvidence(value=value, evidence=spans(lines), answer_found=True,
                              complete_answer_found=complete, confidence=round(min(0.95, 0.35 + 0.6 * coverage), 2),
                              caveats=caveats)


def extract_answer(payload: dict[str, Any]) -> AnswerWithEvidence:
    """Answer one generation payload (see ``prompts.build_generation_request``) by extraction."""
    question, passages = payload["question"], payload.get("passages") or []
    shape = question.get("answer_shape", "text")
    s = Scorer(question, passages)
    single = len(passages) == 1
    caveats: list[str] = []
    if shape == "list":
        items, lines, cov, strength = pick_list(s)
        found = len(items) >= 1 and (cov >= FOUND_COVERAGE or strength >= FOUND_WORDS)
        if found and single:
            caveats.append("list read from a single passage; other passages may hold more items")
        return _answer("; ".join(items), lines, found, found and not single, cov, caveats)
    if shape == "comparison" or (shape in ("entity", "text", "boolean") and V.comparison_sides(s.q_text)
                                 and s.cue("max") != s.cue("min")):
        value, lines, complete, cov, caveats = pick_comparison(s, len(passages))
        return _answer(value, lines, value is not None, complete, cov, caveats)
    pickers = {"amount": pick_amount, "date": pick_date, "entity": pick_entity, "boolean": pick_boolean}
    picks = pickers.get(shape, pick_text)(s)
    best = _best(picks)
    if not _found(best):
        reason = "no value of the asked shape next to the question's keywords" if picks else \
            "no value of the asked shape in the passages"
        return _answer(None, [], False, False, 0.0, [f"extractive: {reason}"])
    assert best is not None
    # a single typed value has no other part: tied to the keywords, it is the whole answer (free text: by coverage)
    complete = _complete(best) or (shape in SINGLE_VALUE_SHAPES and _tied_to_keywords(s, best))
    if question.get("decomposition", "single") != "single":
        complete = False
        caveats.append(f"{question.get('decomposition')} question: one extracted value may not answer every part")
    rivals = [p for p in picks if p.lines[0].pidx != best.lines[0].pidx and p.score >= best.score - 0.1
              and normalise_value(p.value) != normalise_value(best.value)]
    if rivals:
        r = max(rivals, key=lambda p: p.score)
        caveats.append(f"candidate {r.lines[0].passage.get('candidate_id')} states {r.value!r} instead")
    return _answer(best.value, best.lines, True, complete, best.coverage, caveats)


class ExtractiveProvider:
    """Offline generator over ``LLMRequest.payload``; the client counts its tokens from the messages."""

    name = "extractive"
    model = "extractive"
    offline = True

    def send(self, request: LLMRequest) -> ProviderReply:
        if request.stage != "generate" or "question" not in request.payload:
            raise TerminalLLMError(
                f"the extractive provider answers generation requests only (stage 'generate' with a question "
                f"payload), got stage {request.stage!r}; configure another provider for this stage")
        return ProviderReply(text=extract_answer(request.payload).model_dump_json())
