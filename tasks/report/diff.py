"""Diff of two runs: what the arbiter and generation decided differently, question by question.

A question *changed* when a candidate's role differs (or a verdict exists in one run only), the retrieval status
differs (found / not_found / failed), the set of primary pages differs, or an answer differs (normalised value,
or status, per regime). Token and cost deltas are reported beside the changes but are not changes themselves:
a replayed run repeats its source's tokens and costs nothing, and must diff to zero changes.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from warehouse import diff as store
from warehouse.db import Warehouse


class RoleChange(BaseModel):
    candidate_id: str
    role_a: str | None = Field(description="None: no verdict for this candidate in run A")
    role_b: str | None
    reason_a: str | None = None
    reason_b: str | None = None
    relevance_a: float | None = None
    relevance_b: float | None = None


class AnswerChange(BaseModel):
    regime: str
    value_a: str | None
    value_b: str | None
    status_a: str | None = Field(description="ok | failed; None: no answer in this regime in run A")
    status_b: str | None
    exit_a: str | None = None
    exit_b: str | None = None
    correct_a: bool | None = None
    correct_b: bool | None = None


class Spend(BaseModel):
    """Summed over the question's arbiter and generation attempts (``llm_calls``)."""

    input_tokens_a: int = 0
    input_tokens_b: int = 0
    output_tokens_a: int = 0
    output_tokens_b: int = 0
    cost_usd_a: float | None = None
    cost_usd_b: float | None = None
    reference_cost_usd_a: float = 0.0
    reference_cost_usd_b: float = 0.0

    @property
    def input_delta(self) -> int:
        return self.input_tokens_b - self.input_tokens_a

    @property
    def output_delta(self) -> int:
        return self.output_tokens_b - self.output_tokens_a

    @property
    def cost_delta(self) -> float | None:
        if self.cost_usd_a is None or self.cost_usd_b is None:
            return None
        return self.cost_usd_b - self.cost_usd_a

    def add(self, other: "Spend") -> "Spend":
        def plus(x: float | None, y: float | None) -> float | None:
            return None if x is None or y is None else x + y

        return Spend(input_tokens_a=self.input_tokens_a + other.input_tokens_a,
                     input_tokens_b=self.input_tokens_b + other.input_tokens_b,
                     output_tokens_a=self.output_tokens_a + other.output_tokens_a,
                     output_tokens_b=self.output_tokens_b + other.output_tokens_b,
                     cost_usd_a=plus(self.cost_usd_a, other.cost_usd_a),
                     cost_usd_b=plus(self.cost_usd_b, other.cost_usd_b),
                     reference_cost_usd_a=self.reference_cost_usd_a + other.reference_cost_usd_a,
                     reference_cost_usd_b=self.reference_cost_usd_b + other.reference_cost_usd_b)

    def deltas(self) -> dict[str, Any]:
        return {"input_tokens": self.input_delta, "output_tokens": self.output_delta, "cost_usd": self.cost_delta}


class QuestionDiff(BaseModel):
    question_id: str
    text: str | None = None
    in_a: bool = True
    in_b: bool = True
    status_a: str | None = Field(None, description="retrieval status in run A: found | not_found | failed")
    status_b: str | None = None
    rule_a: str | None = None
    rule_b: str | None = None
    primary_pages_a: list[str] = Field(default_factory=list, description="'doc_id:page' (0-based) of primaries")
    primary_pages_b: list[str] = Field(default_factory=list)
    role_changes: list[RoleChange] = Field(default_factory=list)
    answer_changes: list[AnswerChange] = Field(default_factory=list)
    spend: Spend = Field(default_factory=Spend)

    @property
    def status_changed(self) -> bool:
        return self.status_a != self.status_b

    @property
    def primary_changed(self) -> bool:
        return self.primary_pages_a != self.primary_pages_b

    @property
    def changed(self) -> bool:
        return (not (self.in_a and self.in_b) or self.status_changed or self.primary_changed
                or bool(self.role_changes) or bool(self.answer_changes))


class DiffSummary(BaseModel):
    questions: int = 0
    questions_changed: int = 0
    only_in_a: int = 0
    only_in_b: int = 0
    role_changes: int = 0
    role_transitions: dict[str, int] = Field(default_factory=dict, description="'primary→tangential': count")
    status_changes: dict[str, int] = Field(default_factory=dict, description="'found→not_found': count")
    primary_page_changes: int = 0
    answer_value_changes: int = 0
    spend: dict[str, Any] = Field(default_factory=dict)

    @property
    def changes(self) -> int:
        return (self.role_changes + sum(self.status_changes.values()) + self.primary_page_changes
                + self.answer_value_changes + self.only_in_a + self.only_in_b)


class RunDiff(BaseModel):
    run_a: str
    run_b: str
    summary: DiffSummary
    questions: list[QuestionDiff] = Field(description="questions that changed or whose tokens changed")
    doc_names: dict[str, str] = Field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        out = self.model_dump(mode="json")
        out["summary"]["changes"] = self.summary.changes
        for q, dumped in zip(self.questions, out["questions"]):
            dumped.update(changed=q.changed, status_changed=q.status_changed, primary_changed=q.primary_changed)
            dumped["spend"]["delta"] = q.spend.deltas()
        return out


def _answer_key(row: dict[str, Any], side: str) -> tuple:
    value = row[f"value_norm_{side}"] if row[f"value_norm_{side}"] is not None else row[f"value_{side}"]
    return row[f"status_{side}"], row[f"answer_found_{side}"], value


def diff_runs(wh: Warehouse, run_a: str, run_b: str) -> RunDiff:
    """Compare ``run_b`` against ``run_a`` (typically a backfill against its source run)."""
    missing = store.runs_exist(wh, [run_a, run_b])
    if missing:
        raise LookupError(f"run(s) {', '.join(missing)} not found in this warehouse; see `arbiter runs list`")
    by_q: dict[str, QuestionDiff] = {}

    def q(qid: str) -> QuestionDiff:
        return by_q.setdefault(qid, QuestionDiff(question_id=qid))

    for row in store.question_pairs(wh, run_a, run_b):
        d = q(row["question_id"])
        d.text, d.in_a, d.in_b = row["text"], row["status_a"] is not None, row["status_b"] is not None
    for row in store.retrieval_pairs(wh, run_a, run_b):
        d = q(row["question_id"])
        d.status_a, d.status_b, d.rule_a, d.rule_b = row["status_a"], row["status_b"], row["rule_a"], row["rule_b"]
        d.primary_pages_a = list(row["primary_pages_a"] or [])
        d.primary_pages_b = list(row["primary_pages_b"] or [])
    for row in store.verdict_pairs(wh, run_a, run_b):
        if row["role_a"] != row["role_b"]:
            q(row["question_id"]).role_changes.append(RoleChange(**{k: row[k] for k in RoleChange.model_fields}))
    for row in store.answer_pairs(wh, run_a, run_b):
        if _answer_key(row, "a") != _answer_key(row, "b"):
            q(row["question_id"]).answer_changes.append(AnswerChange(**{k: row[k] for k in AnswerChange.model_fields}))
    for row in store.spend_pairs(wh, run_a, run_b):
        d = q(row["question_id"])
        d.spend = d.spend.add(Spend(
            input_tokens_a=row["input_tokens_a"] or 0, input_tokens_b=row["input_tokens_b"] or 0,
            output_tokens_a=row["output_tokens_a"] or 0, output_tokens_b=row["output_tokens_b"] or 0,
            cost_usd_a=row["cost_usd_a"] if row["attempts_a"] else 0.0,
            cost_usd_b=row["cost_usd_b"] if row["attempts_b"] else 0.0,
            reference_cost_usd_a=row["reference_cost_usd_a"] or 0.0,
            reference_cost_usd_b=row["reference_cost_usd_b"] or 0.0))
    questions = [by_q[k] for k in sorted(by_q)]
    summary = summarise(questions)
    shown = [d for d in questions if d.changed or d.spend.input_delta or d.spend.output_delta]
    pages = [p for d in shown for p in d.primary_pages_a + d.primary_pages_b]
    names = store.doc_names(wh, [p.rsplit(":", 1)[0] for p in pages])
    return RunDiff(run_a=run_a, run_b=run_b, summary=summary, questions=shown, doc_names=names)


def summarise(questions: list[QuestionDiff]) -> DiffSummary:
    s = DiffSummary(questions=len(questions))
    transitions: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    total = Spend(cost_usd_a=0.0, cost_usd_b=0.0)
    for d in questions:
        s.questions_changed += d.changed
        s.only_in_a += d.in_a and not d.in_b
        s.only_in_b += d.in_b and not d.in_a
        s.role_changes += len(d.role_changes)
        transitions.update(f"{c.role_a or '(none)'}→{c.role_b or '(none)'}" for c in d.role_changes)
        if d.status_changed:
            statuses[f"{d.status_a or '(none)'}→{d.status_b or '(none)'}"] += 1
        s.primary_page_changes += d.primary_changed
        s.answer_value_changes += len(d.answer_changes)
        total = total.add(d.spend)
    s.role_transitions, s.status_changes = dict(sorted(transitions.items())), dict(sorted(statuses.items()))
    s.spend = {**total.model_dump(), "delta": total.deltas()}
    return s


# -- text rendering -------------------------------------------------------------------------------------------------
def _pages(pages: list[str], names: dict[str, str]) -> str:
    out = []
    for p in pages:
        doc, _, page = p.rpartition(":")
        out.append(f"{names.get(doc, doc[:12])}:p{page}")
    return ", ".join(out) or "(none)"


def _money(x: float | None) -> str:
    return "unpriced" if x is None else f"${x:,.4f}"


def _signed(x: int) -> str:
    return f"{x:+,}"


def format_diff(d: RunDiff) -> str:
    """The diff as text for the terminal: a summary, then one block per changed question."""
    s = d.summary
    sp = s.spend
    lines = [
        f"diff {d.run_a} -> {d.run_b}: {s.questions} question(s), {s.questions_changed} changed",
        f"  roles changed: {s.role_changes}"
        + (f" ({', '.join(f'{k} {v}' for k, v in s.role_transitions.items())})" if s.role_transitions else ""),
        f"  retrieval status changed: {sum(s.status_changes.values())}"
        + (f" ({', '.join(f'{k} {v}' for k, v in s.status_changes.items())})" if s.status_changes else ""),
        f"  primary pages changed: {s.primary_page_changes}; answer values changed: {s.answer_value_changes}"
        + (f"; only in A: {s.only_in_a}; only in B: {s.only_in_b}" if s.only_in_a or s.only_in_b else ""),
        f"  tokens: input {sp['input_tokens_a']:,} -> {sp['input_tokens_b']:,} "
        f"({_signed(sp['delta']['input_tokens'])}),"
        f" output {sp['output_tokens_a']:,} -> {sp['output_tokens_b']:,} ({_signed(sp['delta']['output_tokens'])});"
        f" cost {_money(sp['cost_usd_a'])} -> {_money(sp['cost_usd_b'])}"
        f" (at reference prices {_money(sp['reference_cost_usd_a'])} -> {_money(sp['reference_cost_usd_b'])})",
    ]
    for q in d.questions:
        lines.append("")
        lines.append(f"{q.question_id}  {(q.text or '')[:90]}")
        if not q.in_b or not q.in_a:
            lines.append(f"  only in run {'A' if q.in_a else 'B'}")
        if q.status_changed:
            lines.append(f"  status {q.status_a} -> {q.status_b}  (rule: {q.rule_a} -> {q.rule_b})")
        if q.primary_changed:
            lines.append(f"  primary pages (0-based) {_pages(q.primary_pages_a, d.doc_names)} -> "
                         f"{_pages(q.primary_pages_b, d.doc_names)}")
        one_sided = [side for side in ("a", "b") if q.role_changes and
                     all(getattr(c, f"role_{side}") is None for c in q.role_changes)]
        if one_sided:  # no verdicts at all on one side (e.g. its arbiter call failed): one line, not one per id
            roles = Counter(getattr(c, "role_b" if one_sided[0] == "a" else "role_a") for c in q.role_changes)
            lines.append(f"  verdicts only in run {'B' if one_sided[0] == 'a' else 'A'}: "
                         + ", ".join(f"{n} {r}" for r, n in sorted(roles.items())))
        for c in [] if one_sided else q.role_changes:
            lines.append(f"  role {c.candidate_id}: {c.role_a or '(none)'} -> {c.role_b or '(none)'}")
            if c.reason_a != c.reason_b:
                lines.append(f"      was: {c.reason_a or '-'}")
                lines.append(f"      now: {c.reason_b or '-'}")
        for a in q.answer_changes:
            lines.append(f"  answer [{a.regime}] {a.value_a!r} ({a.status_a}, {a.exit_a}) -> "
                         f"{a.value_b!r} ({a.status_b}, {a.exit_b})")
        if q.spend.input_delta or q.spend.output_delta or q.spend.cost_delta:
            lines.append(f"  tokens: input {_signed(q.spend.input_delta)}, output {_signed(q.spend.output_delta)}"
                         + (f"; cost {q.spend.cost_delta:+.4f} USD" if q.spend.cost_delta else ""))
    return "\n".join(lines)
