"""Rebuild one question's retrieval decision from the warehouse: parse, detector plan, brief, verdicts, rule, calls.

``audit_question`` gathers it as a dict (JSON-friendly, for ``--json``); ``render_audit`` prints it for a terminal.
Everything shown is read back from stored rows, so the audit shows what the run did, not what it would do now.
"""

from __future__ import annotations

import json
from typing import Any

from warehouse import retrieval as store
from warehouse.db import Warehouse
from warehouse.questions import load_questions


class AuditError(LookupError):
    pass


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def audit_question(wh: Warehouse, run_id: str, question_id: str) -> dict[str, Any]:
    q = next((r for r in load_questions(wh, run_id) if r["question_id"] == question_id), None)
    verdict_rows = store.load_verdicts(wh, run_id, question_id)
    retrieval = store.load_retrieval_row(wh, run_id, question_id)
    if q is None and not verdict_rows and retrieval is None:
        raise AuditError(f"question {question_id!r} has no rows in run {run_id!r}; check the ids with "
                         "`arbiter runs list` and the run's questions")
    call_ids = sorted({r["call_id"] for r in verdict_rows if r["call_id"]})
    if retrieval and retrieval.get("arbiter_call_id"):
        call_ids = sorted({*call_ids, retrieval["arbiter_call_id"]})
    result = _json(retrieval["result"]) if retrieval and retrieval.get("result") else None
    candidates = [
        {"candidate_id": c["candidate_id"], "page": c["page"], "lines": f"{c['line_start']}-{c['line_end']}",
         "section": c["section"] or "", "methods": list(c["methods"] or []), "ranks": _json(c["ranks"]) or {},
         "matched_keywords": list(c["matched_keywords"] or []), "rrf_score": c["rrf_score"],
         "rrf_rank": c["rrf_rank"], "in_pool": c["in_pool"], "snippet": c["snippet"] or "",
         "document": c.get("document") or "", "preferred": c.get("preferred") or ""}
        for c in store.candidate_rows(wh, run_id, question_id)
    ]
    return {
        "run_id": run_id,
        "question_id": question_id,
        "question": None if q is None else {
            "text": q["text"], "status": q["status"], "error": q["error"],
            "keywords_primary": list(q["keywords_primary"] or []),
            "keywords_secondary": list(q["keywords_secondary"] or []), "answer_shape": q["answer_shape"],
            "decomposition": q["decomposition"], "intent": q["intent"], "parser": q["parser"],
            "gold_pages": q["gold_pages"],
        },
        "detector_plan": None if q is None else {
            "detectors": list(q["detectors"] or []), "rule": q["detector_rule"],
            "hits": store.hit_counts(wh, run_id, question_id),
        },
        "candidates": candidates,
        "verdicts": [{k: r[k] for k in ("candidate_id", "role", "decision", "relevance", "reason", "rewrite",
                                         "anchor_found", "flagged", "contradicts", "provider", "model", "call_id")}
                     for r in verdict_rows],
        "retrieval": None if retrieval is None else {
            "status": retrieval["status"], "rule": retrieval["rule"], "error": retrieval["error"],
            "profile": (result or {}).get("profile"), "guard_fired": (result or {}).get("guard_fired"),
            "not_found_reason": (result or {}).get("not_found_reason"),
            "primary": [p["candidate_id"] for p in (result or {}).get("primary", [])],
            "supporting": [p["candidate_id"] for p in (result or {}).get("supporting", [])],
            "contradictions": (result or {}).get("contradictions", []),
        },
        "llm_calls": [{k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}
                      for row in store.arbiter_calls(wh, run_id, question_id, call_ids)],
    }


def render_audit(audit: dict[str, Any]) -> str:
    out: list[str] = [f"Audit of question {audit['question_id']} in run {audit['run_id']}", ""]
    q = audit.get("question")
    if q:
        out += [f"Question: {q['text']}",
                f"  parse ({q['parser']}): primary {q['keywords_primary']}, secondary {q['keywords_secondary']}, "
                f"shape {q['answer_shape']}, {q['decomposition']}, intent {q['intent']!r}",
                f"  status: {q['status']}" + (f" ({q['error']})" if q.get("error") else "")]
        if q.get("gold_pages") is not None:
            out.append(f"  gold pages (0-based): {q['gold_pages']}")
    plan = audit.get("detector_plan")
    if plan:
        hits = ", ".join(f"{d} {n}" for d, n in plan["hits"].items()) or "none"
        out += ["", f"Detector plan: {', '.join(plan['detectors']) or '(none recorded)'}"
                    + (f" - {plan['rule']}" if plan.get("rule") else ""), f"  hits: {hits}"]
    cands = audit.get("candidates", [])
    pool = [c for c in cands if c["in_pool"]]
    out += ["", f"Brief: {len(pool)} candidate(s) handed to the arbiter ({len(cands)} proposed)"]
    for c in pool:
        ranks = ", ".join(f"{d} #{r}" for d, r in c["ranks"].items())
        out.append(f"  [{c['candidate_id']}] p.{c['page'] + 1} l.{c['lines']}  {'+'.join(c['methods'])} ({ranks}); "
                   f"rrf #{c['rrf_rank']} {c['rrf_score']:.4f}")
        if c.get("document"):
            out.append(f"      document: {c['document']}")
        if c.get("preferred"):
            out.append(f"      searched first: {c['preferred']}")
        if c["section"]:
            out.append(f"      section: {c['section']}")
        if c["matched_keywords"]:
            out.append(f"      matched: {', '.join(c['matched_keywords'])}")
        out.append(f"      snippet: {_short(c['snippet'])}")
    verdicts = audit.get("verdicts", [])
    out += ["", f"Verdicts ({len(verdicts)}):"]
    for v in sorted(verdicts, key=lambda v: (_ROLE_ORDER[v["role"]], -v["relevance"])):
        flags = [f for f, on in (("anchor", v["anchor_found"]), ("flagged", v["flagged"])) if on]
        out.append(f"  {v['role']:<10} {v['decision']:<7} {v['relevance']:.2f}  {v['candidate_id']}"
                   + (f"  [{', '.join(flags)}]" if flags else ""))
        out.append(f"      reason: {v['reason']}")
        if v.get("rewrite"):
            out.append(f"      rewrite: {v['rewrite']}")
        if v.get("contradicts"):
            out.append(f"      contradicts: {', '.join(v['contradicts'])}")
    r = audit.get("retrieval")
    out.append("")
    if r is None:
        out.append("Dispatcher: no retrieval result stored")
    else:
        out.append(f"Dispatcher ({r['profile'] or '-'} profile): {r['status']} - {r['rule'] or r['error']}")
        if r["status"] == "found":
            out.append(f"  primary: {', '.join(r['primary'])}")
            if r["supporting"]:
                out.append(f"  supporting: {', '.join(r['supporting'])}")
        if r.get("not_found_reason"):
            out.append(f"  not found: {r['not_found_reason']}")
        for c in r.get("contradictions") or []:
            out.append(f"  contradiction: {' vs '.join(c['candidate_ids'])} - {c['note']}")
    calls = audit.get("llm_calls", [])
    out += ["", f"Arbiter LLM calls ({len(calls)} attempt(s)):"]
    for c in calls:
        tokens = f"in {c['input_tokens']} (cached {c['cached_tokens']}) out {c['output_tokens']}"
        if c.get("tokens_counted"):
            tokens += " (counted locally)"
        cost = f", ${c['cost_usd']:.6f}" if c.get("cost_usd") is not None else ""
        line = (f"  {c['provider']}/{c['model']} attempt {c['attempt']} {c['status']}: {tokens}, "
                f"{c['latency_ms']:.0f} ms{cost}")
        if c["run_id"] != audit["run_id"]:
            line += f" (from run {c['run_id']})"
        out.append(line)
        if c.get("error"):
            out.append(f"      error: {c['error']}")
    return "\n".join(out)


_ROLE_ORDER = {"primary": 0, "supporting": 1, "tangential": 2, "discarded": 3}


def _short(text: str, limit: int = 220) -> str:
    flat = " / ".join(line.strip() for line in text.splitlines() if line.strip())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
