"""Lists as the extractive reader reads them: the items printed under the line that best covers the question
(bullets, one item a line, or an in-line enumeration), gathered across passages; and the count of the numbered steps
printed under the line that names the asked task ("To replace the grille:" then "1. ...", "2. ...", "3. ...").
"""

from __future__ import annotations

import re

from tasks.generate import values as V
from tasks.generate.normalise import normalise_value
from tasks.generate.sentences import PLine
from tasks.generate.typed import Reader

NAME_COVERAGE = 0.75  # a name or a list is an answer only from a sentence that carries most of the question
MAX_LIST_ITEMS = 20
STEP_NOUNS = ("step", "stage", "phase")
_STEP_LINE = re.compile(r"^\s*(?:step\s*)?(\d{1,2})(?:[.):]|\s)\s*(?=[A-Z\"“(])", re.I)


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
        for item, ln in found:
            items.setdefault(normalise_value(item) or item, (item, ln))
    picked = list(items.values())[:MAX_LIST_ITEMS]
    return [i for i, _ in picked], [ln for _, ln in picked], best_cov, best_strength



def pick_steps(r: Reader) -> tuple[int, list[PLine], float] | None:
    """How many numbered steps follow the line that best covers the question's terms (the asked noun aside): the
    run 1, 2, 3 ... counted until the numbering stops or restarts, across passages of the same section (a
    procedure broken over a page). None when no such run follows a line that names the task."""
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
