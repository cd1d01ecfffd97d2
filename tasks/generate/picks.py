"""Picks of the offline reader that are neither a typed value nor a name: free text (the row a quoted term keys, the
value of a label the question names, an acronym's expansion) and the two sides of a comparison. Split from
``extractive.py``, which decides whether a pick answers."""

from __future__ import annotations

import re

from tasks.generate import values as V
from tasks.generate.lists import STEP_COMPARISON, compare_steps
from tasks.generate.names import COMPLETE_COVERAGE, cue, pick_acronym
from tasks.generate.sentences import STOPWORDS, TOKEN_RE, PLine, matched, stem, stems
from tasks.generate.typed import Pick, Reader

# a term the question quotes ("for label 'Contact.Meet'"): quote marks that open after a space and close before one
_QUOTED_TERM = re.compile(r"(?:^|(?<=[\s(]))[\"“‘']([^\"“”‘’']{2,60})[\"”’'](?=[\s,.;:?)]|$)")
MAX_ROW_LINES = 4


def pick_keyed(r: Reader) -> list[Pick]:
    """The row a term the question quotes keys: a line that opens with that term and goes on with words of its
    own (a glossary, a two-column table: "Contact.Meet  The word {evt} triggers a MEET event: ..."). The value is
    the rest of that line with the lines that carry its sentence on (they open in lower case), up to a sentence
    end. The quoted term is the question's own name for the row, so the row answers it whatever words frame it."""
    keys = [m.group(1).strip() for m in _QUOTED_TERM.finditer(r.q_text)]
    out = []
    for key in (k for k in keys if k):
        head = re.compile(rf"^\s*[\"“‘']?{re.escape(key)}[\"”’']?[\s:–—-]+(?P<rest>\S.*)$", re.I)
        for rows in r.by_passage:
            for k, ln in enumerate(rows):
                m = head.match(ln.text)
                if not m or len(TOKEN_RE.findall(m.group("rest").lower())) < 3:
                    continue
                parts, lines = [m.group("rest").strip()], [ln]
                for nxt in rows[k + 1:k + MAX_ROW_LINES]:
                    if re.search(r"[.!?]\s*$", parts[-1]) or not re.match(r"^\s*[a-z]", nxt.text):
                        break
                    parts.append(nxt.text.strip())
                    lines.append(nxt)
                out.append(Pick(" ".join(parts), lines, 2.0, 1.0, 2, "keyed", 0.5))
    return out


def pick_text(r: Reader) -> list[Pick]:
    """Free text: the row a quoted term keys (``pick_keyed``), the value of a label the question names ("UNIT 14:
    Using Financial Information"), or an acronym's expansion. A whole sentence is not an answer (it is shown as
    evidence when nothing is found)."""
    out = pick_acronym(r) if cue(r, "expand") else []
    out += pick_keyed(r)
    for ss in r.sents:
        for s in ss:
            cov, n = r.coverage(s)
            if not n:
                continue
            for ln in dict.fromkeys(s.lines):
                lv = V.label_value(ln.text)
                if lv and len(r.terms.hits(stems(lv[0]))) >= max(1, len(r.terms.words) // 2):
                    out.append(Pick(lv[1], [ln], 1.5 * cov + 0.3, max(cov, COMPLETE_COVERAGE), max(n, 2), "label", 0.3))
    return out


def pick_comparison(r: Reader, n_passages: int) -> tuple[str | None, list[PLine], bool, float, list[str]]:
    sides = V.comparison_sides(r.q_text)
    if not sides:
        return None, [], False, 0.0, ["could not tell the two sides of the comparison from the question"]
    if STEP_COMPARISON.search(r.q_text):
        return compare_steps(r, sides, n_passages)
    found = []
    for side in sides:
        words = [stem(t) for t in TOKEN_RE.findall(side.lower()) if t not in STOPWORDS]
        best = None
        for rows in r.by_passage:
            for ln in rows:
                hit = len(matched(words, ln.stems)) / max(1, len(words))
                nums = [v for v in V.find_amounts(ln.text) if v.kind != "year" and v.number is not None]
                if hit >= 0.5 and nums and (best is None or hit > best[0]):
                    best = (hit, ln, nums[0])
        found.append(best)
    caveats = []
    if not all(found):  # one side's value does not answer a comparison
        got = [side for side, f in zip(sides, found) if f]
        caveats.append(f"value found for {len(got)} of 2 sides" + (f" ({got[0]!r})" if got else ""))
        return None, [], False, 0.0, caveats
    (ha, la, va), (hb, lb, vb) = found
    value = f"{sides[0]}: {va.text}; {sides[1]}: {vb.text}"
    if cue(r, "max") != cue(r, "min") and (va.number == vb.number or la is lb):
        # "which is greater" from two equal numbers, or from one line read for both sides: not an answer
        return None, [], False, 0.0, [f"could not tell the sides apart: {value}"]
    if cue(r, "max") != cue(r, "min") and va.number != vb.number:
        want_max = cue(r, "max")
        caveats.append(f"values: {value}")
        value = sides[0] if (va.number > vb.number) == want_max else sides[1]
    complete = n_passages >= 2
    if not complete:
        caveats.append("comparison read from a single passage; not complete until both sides are seen together")
    return value, [la, lb], complete, (ha + hb) / 2, caveats
