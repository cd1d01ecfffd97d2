"""Lists as the extractive reader reads them: the items printed under the line that best covers the question
(bullets, one item a line, or an in-line enumeration), gathered across passages; the count of the numbered steps
printed under the line that names the asked task ("To replace the grille:" then "1. ...", "2. ...", "3. ...");
the count of any other noun read from the list printed under a line that names it, where the list visibly ends in
the passages given ("... THESE LEARNING OUTCOMES:" then one bullet an outcome); and the values a list question
says it asks for ("the first and second quarters") from the one sentence that states that many.
"""

from __future__ import annotations

import re

from tasks.generate import values as V
from tasks.generate.normalise import WORD_NUMBERS, normalise_value
from tasks.generate.sentences import STOPWORDS, TOKEN_RE, PLine, matched, stem
from tasks.generate.typed import Reader

NAME_COVERAGE = 0.75  # a name or a list is an answer only from a sentence that carries most of the question
SUPPORT_COVERAGE = 0.5  # each passage's list joins the answer only under a line carrying half the question
MAX_LIST_ITEMS = 20
STEP_NOUNS = ("step", "stage", "phase")
_STEP_LINE = re.compile(r"^\s*(?:step\s*)?(\d{1,2})(?:[.):]|\s)\s*(?=[A-Z\"“(])", re.I)
MAX_COUNTED = 40
# units of measure: a count of them is a quantity stated, never the length of a list
_MEASURE = re.compile(r"(?i)(?:square\s+|cubic\s+)?(?:grams?|kilograms?|kgs?|g|mg|pounds?|lbs?|ounces?|oz|tons?|"
                      r"tonnes?|miles?|kilomet(?:er|re)s?|km|met(?:er|re)s?|m|cm|mm|inch(?:es)?|feet|foot|yards?|"
                      r"lit(?:er|re)s?|ml|l|gallons?|dollars?|euros?|cents?|rupees?|yen|pence|percent|percentage|"
                      r"points?|degrees?|calories?|kcal|bytes?|[kmgt]b|watts?|volts?|amps?|seconds?|minutes?|hours?|"
                      r"days?|nights?|weeks?|months?|years?|decades?|centuries|times)")
# an item of an enumeration: "3. Text", "(3) Text", "3) Text", a bare "3." over its text, or a bullet symbol
_NUMBERED = re.compile(r"^\s*\(?(\d{1,2})(?:[.)](?:\s+\S|\s*$)|\s+(?=[A-Z\"“]))")
_BARE_MARK = re.compile(r"\(?(?:\d{1,2}|[a-h])[.)]")  # an item's mark alone on its line, its text below
_LETTERED = re.compile(r"^\s*\(?([a-h])[.)]\s+\S")
BULLETS = "•·▪◦●○■□➢►▶✓✔*–—-"  # the symbols that mark a list item (inside a character class: "-" last)
_SYMBOL = re.compile(rf"^\s*([{BULLETS}])\s+\S")
# an intro that announces what follows: a line ending in ':', or "the following ..." (or a heading: _heading)
_ANNOUNCES = re.compile(r"(?i):\s*$|\bthe following\b")


def _list_block(rows: list[PLine], k: int) -> list[tuple[str, PLine]]:
    """The items printed after line ``k``: bullet items, or a run of short lines (no sentence end) that follows
    the end of the intro sentence ("... the following paid holidays each year." then one holiday a line)."""
    bullets, short = [], []
    intro_done = bool(re.search(r"[.:]\s*$", rows[k].text))
    for ln in rows[k + 1:]:
        item = V.bullet_item(ln.text)
        text = ln.text.strip()
        if item:
            bullets.append((item, ln))
            continue
        if bullets and re.match(r"^[a-z(]", text):
            continue  # the continuation line of an item
        if bullets:
            break
        if not intro_done:
            intro_done = bool(re.search(r"[.:]\s*$", text))
            continue
        if len(text.split()) <= 8 and re.match(r"^[A-Z0-9\"“]", text) and not re.search(r"[.!?]\s*$", text):
            short.append((text.rstrip(",;"), ln))
            continue
        break
    first = _NUMBERED.match(bullets[0][1].text) if bullets else None
    if first and int(first.group(1)) != 1:
        return []  # items 2, 3 ... continue a list whose first item is elsewhere: not a list under line k
    return bullets if len(bullets) >= 2 else short if len(short) >= 3 else []


def _announced(rows: list[PLine], k: int, items: list[tuple[str, PLine]]) -> bool:
    """At least three short items after an intro that announces them ("the following ...", or a ':')."""
    first = rows.index(items[0][1])
    intro = " ".join(ln.text for ln in rows[k:first])
    return (len(items) >= 3 and all(len(i.split()) <= 8 for i, _ in items)
            and bool(re.search(r"(?i)\bthe following\b|:\s*$", intro)))


def pick_list(r: Reader) -> tuple[list[str], list[PLine], float, int]:
    """Items gathered across the passages, de-duplicated, each with its line: in each passage, the list printed
    under the line that best covers the question's terms (bullets or one item a line), else the in-line
    enumeration on that line."""
    items: dict[str, tuple[str, PLine]] = {}
    best_cov, best_strength = 0.0, 0
    for rows in r.by_passage:
        scored = [(r.terms.coverage(ln.stems, r.titles[ln.pidx]), k) for k, ln in enumerate(rows)]
        scored = sorted(((c, k) for c, k in scored if c[1]), key=lambda t: (-t[0][1], -t[0][0], t[1]))
        found: list[tuple[str, PLine]] = []
        passage_words = set().union(*(ln.stems for ln in rows)) | r.titles[rows[0].pidx] if rows else set()
        for (cov, strength), k in scored:
            found = _list_block(rows, k)
            if found and _announced(rows, k, found):
                # a list the text announces ("the following paid holidays", "...:") under a heading that names the
                # question's terms: the passage's words (its subject) are the heading's context
                cov = max(cov, r.terms.coverage(rows[k].stems, passage_words)[0])
            if not found:
                found = [(i, rows[k]) for i in V.inline_items(rows[k].text)]
            if found:
                best_cov, best_strength = max(best_cov, cov), max(best_strength, strength)
                break
        if found and not (cov >= SUPPORT_COVERAGE and strength >= 2):
            continue  # a passage's list counts only under a line that carries at least half the question
        for item, ln in found:
            items.setdefault(normalise_value(item) or item, (item, ln))
    picked = list(items.values())[:MAX_LIST_ITEMS]
    return [i for i, _ in picked], [ln for _, ln in picked], best_cov, best_strength



def pick_steps(r: Reader, words: list[str] | None = None) -> tuple[int, list[PLine], float] | None:
    """How many numbered steps follow the line that best covers the question's terms (the asked noun aside), or
    ``words`` (one side of a comparison): the run 1, 2, 3 ... counted until the numbering stops or restarts,
    across passages of the same section (a procedure broken over a page). None when no such run follows a line
    that names the task."""
    if words is None:
        words = [w for w in r.terms.words if not w.startswith(STEP_NOUNS)]
    rows = [ln for pidx, lines in enumerate(r.by_passage) for ln in lines]
    best: tuple[float, int] | None = None
    for k, ln in enumerate(rows):
        if _STEP_LINE.match(ln.text):
            continue
        hit = len(r.terms.hits(ln.stems) & set(words))
        cov = hit / max(1, len(words))
        if hit and cov >= 0.5 and (best is None or cov > best[0]):
            best = (cov, k)
    if best is None:
        return None
    cov, k = best
    section = rows[k].passage.get("section")
    count, lines = 0, []
    for ln in rows[k + 1:]:
        if ln.pidx != rows[k].pidx and ln.passage.get("section") != section:
            break
        m = _STEP_LINE.match(ln.text)
        if not m:
            continue
        n = int(m.group(1))
        if n == count + 1:
            count, lines = n, lines + [ln]
        elif n == 1 or count:
            break  # the numbering restarts (the next procedure) or jumps
    return (count, [rows[k], *lines], cov) if count >= 2 else None


# "which has more steps, A or B": the two procedures' numbered steps are counted, not a number their lines print
STEP_COMPARISON = re.compile(rf"(?i)\b(?:more|fewer|less)\s+(?:{'|'.join(STEP_NOUNS)})s?\b")


def compare_steps(r: Reader, sides: tuple[str, str], n_passages: int
                   ) -> tuple[str | None, list[PLine], bool, float, list[str]]:
    """The side whose procedure has more (or fewer) numbered steps, each counted under the line that names it
    best (``pick_steps`` on the side's words); no answer when a side has no counted run, both are counted under
    one line, or the counts are equal."""
    runs = [pick_steps(r, [stem(t) for t in TOKEN_RE.findall(side.lower()) if t not in STOPWORDS]) for side in sides]
    if not all(runs) or runs[0][1][0] is runs[1][1][0] or runs[0][0] == runs[1][0]:
        got = "; ".join(f"{side}: {run[0] if run else 'no numbered steps'}" for side, run in zip(sides, runs))
        return None, [], False, 0.0, [f"could not tell the procedures' steps apart: {got}"]
    (na, la, ca), (nb, lb, cb) = runs
    more = not re.search(r"(?i)\b(?:fewer|less)\b", r.q_text)
    value = sides[0] if (na > nb) == more else sides[1]
    return value, [*la, *lb], n_passages >= 2, (ca + cb) / 2, [f"steps counted: {sides[0]}: {na}; {sides[1]}: {nb}"]


def _item(text: str) -> tuple[str, int | None] | None:
    """('n', number) for a numbered item, ('a', letter's rank) for a lettered one ("b) ..." is 2), ('•', None) for a
    bullet item (its symbol), else None."""
    if m := _NUMBERED.match(text):
        return "n", int(m.group(1))
    if m := _LETTERED.match(text):
        return "a", ord(m.group(1)) - ord("a") + 1
    if m := _SYMBOL.match(text):
        return m.group(1), None
    return None


def _intro_context(rows: list[PLine], k: int, title: set[str]) -> set[str]:
    """What an intro line is read with: its section title and the two lines above it (the heading it sits under:
    "UNIT 8: ..." then "... THESE LEARNING OUTCOMES:")."""
    out = set(title)
    for ln in rows[max(0, k - 2):k]:
        out |= ln.stems
    return out


def _run_after(by_line: dict[tuple[str, int], PLine], intro: PLine) -> tuple[int, list[PLine]] | None:
    """The enumeration that starts within two lines after ``intro``, counted: numbered items 1, 2, 3 ... (the
    lines between them are their text), or items of one bullet symbol (a line starting in lower case, or with a
    sub-item mark, continues an item). Lines are followed across passages of the same document while the line
    numbers run on. None when no list starts there; a count of -1 unless the run visibly ends (a line that is
    neither an item nor its continuation, or a numbering that restarts or jumps): a run cut off by the end of the
    passages may have more items."""
    doc, no = intro.passage.get("doc_id"), intro.line_no
    kind, count, lines, gap, last = None, 0, [], 0, ""
    while (ln := _next_line(by_line, doc, no)) is not None:
        no = ln.line_no
        text = ln.text.strip()
        item = _item(text)
        if kind is None:
            if item is None:
                gap += 1  # the rest of the intro sentence
                if gap > 2:
                    return None
                continue
            if item[1] not in (None, 1):
                return None  # a numbering that starts elsewhere continues an earlier list
            kind, count, lines, last = item[0], 1, [ln], text
            continue
        ordinal = kind in ("n", "a")
        if item is not None and item[0] == kind and (not ordinal or item[1] == count + 1):
            count, lines, last = count + 1, lines + [ln], text
            continue
        if ordinal and item is not None and item[0] == kind:
            break  # the numbering restarts (the next list) or jumps
        # after an item's text that ends a sentence, a heading line ends the list ("c) two photos." then "Fees")
        ended = bool(re.search(r"[.!?;]\s*$", last)) and not _BARE_MARK.fullmatch(last) and _heading(text)
        if item is not None or (ordinal and not _closes(text) and not ended) or re.match(r"^(?:[a-z(]|§|o\s)", text):
            last = text
            continue  # the text of the current item, or its sub-items
        if ordinal and _resumes(by_line, doc, no, kind, count + 1):
            last = text
            continue  # a note inside the list ("NOTE", "Caution"): the numbering goes on after it
        break  # a heading, a paragraph, the next intro
    else:
        return -1, lines  # the passages end inside the run: it may have more items
    return (count, lines) if count >= 2 else None


def _next_line(by_line: dict[tuple[str, int], PLine], doc: str, no: int) -> PLine | None:
    """The line after line ``no`` in the passages: the next line number or, over a page break, the first line held
    within two more (generation leaves a page's furniture out of a list that runs over the break)."""
    if (ln := by_line.get((doc, no + 1))) is not None or (prev := by_line.get((doc, no))) is None:
        return ln
    return next((ln for k in (no + 2, no + 3) if (ln := by_line.get((doc, k))) is not None and ln.page > prev.page),
                None)


def _resumes(by_line: dict[tuple[str, int], PLine], doc: str, no: int, kind: str, want: int, look: int = 6) -> bool:
    """Whether item ``want`` of the list follows within ``look`` lines after line ``no``."""
    for i in range(no + 1, no + 1 + look):
        ln = by_line.get((doc, i))
        if ln is None:
            return False
        if _item(ln.text.strip()) == (kind, want):
            return True
    return False


def _heading(text: str) -> bool:
    """A heading: short, capitalised, no sentence end ("water, a high level can cause" is a wrapped line)."""
    text = text.strip()
    return len(text.split()) <= 8 and text[:1].isupper() and not re.search(r"[.!?,;]\s*$", text)


def _closes(text: str) -> bool:
    """A line that ends a numbered item's text: a heading ("1.12 Choosing apps", "NOTE", "Unit 7 tasks:")."""
    return bool(re.match(r"^\d{1,2}\.\d{1,2}(?:\.\d{1,2})*\s+[A-Z]", text) or re.search(r":\s*$", text)
                or (text.isupper() and len(text.split()) <= 6))


def pick_counted(r: Reader) -> tuple[int, list[PLine], float] | None:
    """How many items an enumeration lists under the line that names the counted noun ("how many learning
    outcomes": "... THESE LEARNING OUTCOMES:" then one bullet an outcome) and most of the question's other terms
    (its section title and the two lines above count half). The intro must announce the list (a ':', "the
    following", or a heading line), every number the question names must stand in the intro or its context, and
    the enumeration must visibly end (see ``_run_after``). None when no such list is found, or when two intros
    fit equally well and count differently."""
    unit = stem(r.asked.unit) if r.asked.unit else ""
    if _MEASURE.fullmatch(r.asked.unit or ""):
        return None  # "how many grams", "how many miles": a quantity, not things a list enumerates
    if not unit or re.search(rf"(?i)\bhow many\s+[\w-]+\s+(?:and|or)\s+(?:[\w-]+\s+)?{re.escape(r.asked.unit)}\b",
                                r.q_text):
        return None  # "how many strengths and weaknesses": two counts asked, one list would answer one of them
    words = [w for w in r.terms.words if not matched([w], {unit}) and w != unit]
    # the counted noun with the words the question puts before it ("how many coffee quality levels")
    m = re.search(rf"(?i)\bhow many\s+((?:[\w-]+\s+){{0,3}}?){re.escape(r.asked.unit)}\b", r.q_text)
    phrase = [stem(w) for w in (m.group(1).split() if m else []) if stem(w) in words]
    numbers = [w for w in words if w.isdigit()]
    by_line = {(ln.passage.get("doc_id"), ln.line_no): ln for rows in r.by_passage for ln in rows}
    scored: list[tuple[float, PLine]] = []
    for pidx, rows in enumerate(r.by_passage):
        for k, ln in enumerate(rows):
            text = ln.text.strip()
            if _item(text) or not matched([unit], ln.stems):
                continue
            if not (_ANNOUNCES.search(text) or _heading(text)):
                continue
            context = _intro_context(rows, k, r.titles[pidx])
            if any(n not in ln.stems | context for n in numbers):
                continue
            share = (len(matched(words, ln.stems)) + 0.5 * len(matched(words, context) - matched(words, ln.stems))
                     ) / max(1, len(words)) if words else 1.0
            headings = set(r.titles[pidx]).union(*(x.stems for x in rows[max(0, k - 8):k] if _heading(x.text)))
            named = bool(phrase) and matched(phrase, ln.stems | headings) == set(phrase) and bool(
                matched(phrase, ln.stems))
            if share >= 0.5 or (named and share >= 0.3):
                # the whole counted phrase named by the list's heading and the headings above it identifies the
                # list ("Quality levels" under "Coffee quality"; not "Buttons" under a sentence about a red
                # light); the rest of the question may only frame the ask ("... can the machine be set to")
                scored.append((share, ln))
    runs = [(share, ln, run) for share, ln in scored if (run := _run_after(by_line, ln)) is not None]
    if not runs:
        return None  # no list under any line that names the noun
    top = max(share for share, _, _ in runs)
    found = {run[0]: (ln, run[1]) for share, ln, run in runs if share == top}
    if len(found) != 1 or -1 in found:
        return None  # the best-fitting list is cut off, or equally fitting lists count differently
    count, (intro, lines) = next(iter(found.items()))
    stated = _stated_count(intro.text, r.asked.unit)
    if stated is not None and stated != count:
        return None  # "composed of five modules:" over a list read as two: the list is not read right
    return (count, [intro, *lines], top) if 2 <= count <= MAX_COUNTED else None


def _stated_count(text: str, unit: str) -> int | None:
    """The number an intro line puts before the counted noun ("five principal modules:", "3 compulsory courses")."""
    m = re.search(rf"(?i)\b(\d{{1,3}}|{'|'.join(WORD_NUMBERS)})\s+(?:[\w-]+\s+){{0,2}}?{re.escape(unit[:4])}", text)
    if not m:
        return None
    word = m.group(1).lower()
    return int(word) if word.isdigit() else WORD_NUMBERS[word]


# "the two plants", "both": a number of things the question asks for ("page 3 in", "exactly three methods": no)
_HOW_MANY_ASKED = re.compile(r"(?i)\b(?:the\s+(two|three|four|five|[2-5])\s+(?!times\b|years\b)[a-z]+s\b|(both)\b)")
_ASKED_PAIR = re.compile(r"(?i)\b((?:[a-z]+,\s+)*[a-z]+),?\s+and\s+([a-z]+)\b")
_COUNT_WORDS = {"both": 2, "two": 2, "three": 3, "four": 4, "five": 5}
_ASKS_AMOUNTS = re.compile(r"(?i)\b(?:how (?:much|many)|amounts?|values?|numbers?|rates?|percent\w*|scores?|growth|"
                           r"prices?|costs?|shares?|totals?|sizes?|counts?|figures?|levels?)\b")


def asked_values(text: str) -> int:
    """How many values a list question asks for by its wording: "the two plants", "both", or ordinals joined by
    'and' ("the first and second quarters respectively"); 0 when it does not say."""
    if m := _HOW_MANY_ASKED.search(text):
        word = (m.group(1) or m.group(2)).lower()
        return _COUNT_WORDS.get(word) or int(word)
    ordinals = r"first|second|third|fourth|fifth|last|previous|next|current|initial|final"
    for m in _ASKED_PAIR.finditer(text):
        parts = [p.strip() for p in m.group(1).split(",")] + [m.group(2)]
        if all(re.fullmatch(ordinals, p, re.I) for p in parts):
            return len(parts)
    return 0


def pick_values(r: Reader) -> tuple[list[str], list[PLine], float] | None:
    """The values of a list question that says how many it asks for ("the growth for the first and second
    quarters respectively"), read from the one sentence that covers the question best when it states exactly
    that many amounts joined as one enumeration ("... the growth was 5.3% and 5.2%"): in order, as printed.
    None when the question does not say how many, or the sentence states more, fewer, or unjoined values."""
    want = asked_values(r.q_text)
    if want < 2 or not _ASKS_AMOUNTS.search(r.q_text):
        return None  # not said how many, or names asked for ("where are the two plants"): no amounts
    best = None
    for ss in r.sents:
        for s in ss:
            cov, n = r.coverage(s)
            if n >= 2 and cov >= 0.5 and (best is None or cov > best[0]):
                best = (cov, s)
    if best is None:
        return None
    cov, s = best
    amounts = [v for v in V.find_amounts(s.text) if v.kind != "year" and v.number is not None
               and v.number not in r.q_numbers]
    if len(amounts) != want or len({v.kind for v in amounts}) != 1:
        return None
    joins = [s.text[a.end:b.start] for a, b in zip(amounts, amounts[1:])]
    if not all(re.fullmatch(r"\s*(?:,|,?\s+and|,?\s+respectively,?\s+and)\s*", j) for j in joins):
        return None  # values of separate statements, not one enumeration
    texts = [v.text for v in amounts]
    if (m := re.fullmatch(r"([\d.,]+)(\s*\S.*)", texts[-1])) is not None:
        # "5.3 and 5.2 million": the scale or unit printed once, after the last value, is every value's
        texts = [t + m.group(2) if re.fullmatch(r"[\d.,]+", t) else t for t in texts]
    return texts, list(dict.fromkeys(s.lines)), cov


def names_only_the_noun(r: Reader, lines: list[PLine]) -> bool:
    """A count whose sentence names the counted noun and nothing else of a question that scopes it with two or more
    other terms ("how many prompt examples are given in the appendix" read from "... a test set of 300 examples")."""
    unit = stem(r.asked.unit) if r.asked.unit else ""
    others = [w for w in r.terms.words if not matched([w], {unit})] if unit else []
    said = set().union(*(ln.stems for ln in lines))
    return bool(unit) and len(others) >= 2 and matched([unit], said) != set() and not matched(others, said)
