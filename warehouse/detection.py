"""SQL for the detection brick: ``detector_hits`` and ``candidates`` rows (written by ``warehouse.sink``, replaced
whole per (run_id, question_id)) and their reads.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from schemas.contracts import CandidateBrief, DetectorHit
from warehouse.db import Warehouse, to_json

HIT_COLUMNS = ["run_id", "question_id", "detector", "rank", "raw_score", "doc_id", "page", "line_start", "line_end",
               "section_id", "matched_keywords"]
CANDIDATE_COLUMNS = ["run_id", "question_id", "candidate_id", "doc_id", "page", "line_start", "line_end",
                     "section_id", "section", "methods", "ranks", "raw_scores", "matched_keywords", "snippet",
                     "rrf_score", "rrf_rank", "in_pool", "document", "preferred", "preferred_group"]


def detection_rows(run_id: str, question_id: str, hits: Sequence[DetectorHit],
                   candidates: Sequence[tuple[CandidateBrief, int, bool]]) -> tuple[list[dict], list[dict]]:
    """The ``detector_hits`` and ``candidates`` rows of one question (``candidates``: (brief, rrf_rank, in_pool)
    triples), for ``warehouse.sink``."""
    wrong = sorted(({h.question_id for h in hits} | {c[0].question_id for c in candidates}) - {question_id})
    if wrong:
        raise ValueError(f"detection rows for question {question_id!r} got rows of question(s) {wrong}")
    hit_rows = [[run_id, question_id, h.detector, h.rank, h.raw_score, h.doc_id, h.page, h.line_start, h.line_end,
                 h.section_id, list(h.matched_keywords)] for h in hits]
    cand_rows = [[run_id, question_id, b.candidate_id, b.doc_id, b.page, b.line_start, b.line_end, b.section_id,
                  b.section, list(b.methods), to_json(b.ranks), to_json(b.raw_scores), list(b.matched_keywords),
                  b.snippet, b.rrf_score, int(rrf_rank), bool(in_pool), b.document, b.preferred, b.preferred_group]
                 for b, rrf_rank, in_pool in candidates]
    return [dict(zip(HIT_COLUMNS, r)) for r in hit_rows], [dict(zip(CANDIDATE_COLUMNS, r)) for r in cand_rows]


def load_candidates(wh: Warehouse, run_id: str, question_id: str, in_pool_only: bool = True) -> list[CandidateBrief]:
    """The question's candidates in RRF order (by default only those handed to the arbiter)."""
    rows = wh.query(
        "SELECT * FROM candidates WHERE run_id = ? AND question_id = ?"
        + (" AND in_pool" if in_pool_only else "") + " ORDER BY rrf_rank",
        [run_id, question_id],
    )
    return [
        CandidateBrief(
            question_id=r["question_id"], candidate_id=r["candidate_id"], doc_id=r["doc_id"], page=r["page"],
            line_start=r["line_start"], line_end=r["line_end"], section_id=r["section_id"], section=r["section"] or "",
            methods=list(r["methods"] or []), ranks=_in_methods_order(r["ranks"], r["methods"]),
            raw_scores=_in_methods_order(r["raw_scores"], r["methods"]),
            matched_keywords=list(r["matched_keywords"] or []), snippet=r["snippet"] or "", rrf_score=r["rrf_score"],
            document=r.get("document") or "", preferred=r.get("preferred") or "",
            preferred_group=r.get("preferred_group"),
        )
        for r in rows
    ]


def load_pool_flags(wh: Warehouse, run_id: str, question_id: str) -> dict[str, tuple[int, bool]]:
    """candidate_id -> (rrf_rank, in_pool), for reports on the pool cap."""
    rows = wh.execute(
        "SELECT candidate_id, rrf_rank, in_pool FROM candidates WHERE run_id = ? AND question_id = ?",
        [run_id, question_id],
    )
    return {cid: (rank, bool(pool)) for cid, rank, pool in rows}


def load_hits(wh: Warehouse, run_id: str, question_id: str, detector: str | None = None) -> list[DetectorHit]:
    """The question's detector hits, by detector then rank."""
    sql = "SELECT * FROM detector_hits WHERE run_id = ? AND question_id = ?"
    params: list = [run_id, question_id]
    if detector is not None:
        sql += " AND detector = ?"
        params.append(detector)
    rows = wh.query(sql + " ORDER BY detector, rank", params)
    return [
        DetectorHit(
            question_id=r["question_id"], detector=r["detector"], rank=r["rank"], raw_score=r["raw_score"],
            doc_id=r["doc_id"], page=r["page"], line_start=r["line_start"], line_end=r["line_end"],
            section_id=r["section_id"], matched_keywords=list(r["matched_keywords"] or []),
        )
        for r in rows
    ]


def _in_methods_order(stored: str | None, methods: list[str] | None) -> dict:
    """Per-detector dicts back in ``methods`` order, as aggregation built them. JSON storage sorts keys, and a
    brief rebuilt with another key order is another request text: another hash, and a replay miss."""
    d = json.loads(stored) if stored else {}
    return {**{m: d[m] for m in (methods or []) if m in d}, **d}
