"""Checks on an arbiter reply beyond its JSON schema: ids, duplicates, the role <-> decision mapping.

A violation raises :class:`InvalidOutputError` whose ``feedback`` the LLM client sends back for its one retry, so
it names what was wrong and what is valid. (A reply that breaks the schema itself, the mapping included, already
fails in the client's ``parse_reply`` with the pydantic error as feedback; the check here also covers outputs
built without validation.) Ids the arbiter left out are not an error: they become ``discarded``
verdicts with reason "not ranked by arbiter", flagged for the audit (DESIGN.md, ArbiterOutput).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from schemas.contracts import ROLE_DECISIONS, ArbiterOutput, CandidateVerdict
from tasks.llm.base import InvalidOutputError

NOT_RANKED = "not ranked by arbiter"
_MAX_LISTED = 40  # ids named in a feedback message; a long pool is summarised


class ArbiterOutputError(InvalidOutputError):
    """An arbiter reply that names unknown ids, repeats ids or breaks the role <-> decision mapping."""

    def __init__(self, message: str, feedback: str, unknown_ids: list[str] | None = None,
                 duplicate_ids: list[str] | None = None, mapping_errors: list[str] | None = None):
        super().__init__(message, feedback)
        self.unknown_ids = unknown_ids or []
        self.duplicate_ids = duplicate_ids or []
        self.mapping_errors = mapping_errors or []


def make_validator(candidate_ids: Iterable[str]) -> Callable[[ArbiterOutput], None]:
    """A validator for ``LLMClient.complete(validate=...)`` bound to the ids that were in the brief."""
    valid = list(dict.fromkeys(candidate_ids))
    valid_set = set(valid)

    def validate(output: ArbiterOutput) -> None:
        ids = [v.candidate_id for v in output.verdicts]
        unknown = sorted({i for i in ids if i not in valid_set})
        duplicates = sorted(i for i, n in Counter(ids).items() if n > 1)
        mapping = [
            f"{v.candidate_id}: decision {v.decision!r} with role {v.role!r}"
            for v in output.verdicts
            if v.decision not in ROLE_DECISIONS[v.role]
        ]
        if not (unknown or duplicates or mapping):
            return
        problems, feedback = [], []
        if unknown:
            problems.append(f"{len(unknown)} unknown id(s) {_few(unknown)}")
            feedback.append(f"These ids were not in the brief: {_few(unknown)}. Use only the listed ids.")
        if duplicates:
            problems.append(f"duplicate verdicts for {_few(duplicates)}")
            feedback.append(f"Give exactly one verdict per id; these appear more than once: {_few(duplicates)}.")
        if mapping:
            problems.append(f"role/decision mismatch: {'; '.join(mapping[:5])}")
            feedback.append(_MAPPING_RULE + f" Violations: {'; '.join(mapping[:10])}.")
        feedback.append(f"Valid ids ({len(valid)}): {_few(valid)}.")
        raise ArbiterOutputError(
            "arbiter output rejected: " + "; ".join(problems),
            feedback=" ".join(feedback),
            unknown_ids=unknown,
            duplicate_ids=duplicates,
            mapping_errors=mapping,
        )

    return validate


_MAPPING_RULE = (
    "Role 'discarded' goes with decision 'discard' and only with it; primary, supporting and tangential take "
    "'keep' or 'rewrite' (and 'rewrite' needs a non-empty rewrite)."
)


def complete_verdicts(output: ArbiterOutput, candidate_ids: Iterable[str]) -> tuple[ArbiterOutput, list[str]]:
    """Add a flagged ``discarded`` verdict for every id the arbiter left out; returns the output and those ids.

    Verdicts come back in brief order, so stored rows and audits read in the order the arbiter saw them.
    """
    by_id = {v.candidate_id: v for v in output.verdicts}
    ordered: list[CandidateVerdict] = []
    missing: list[str] = []
    for cid in dict.fromkeys(candidate_ids):
        if cid in by_id:
            ordered.append(by_id[cid])
        else:
            missing.append(cid)
            ordered.append(CandidateVerdict(
                candidate_id=cid, role="discarded", decision="discard", reason=NOT_RANKED, relevance=0.0,
                flagged=True,
            ))
    known = {v.candidate_id for v in ordered}
    extra = [v for v in output.verdicts if v.candidate_id not in known]  # unknown ids: make_validator rejects them
    return output.model_copy(update={"verdicts": ordered + extra}), missing


def _few(ids: list[str]) -> str:
    shown = ", ".join(ids[:_MAX_LISTED])
    return shown + (f" (+{len(ids) - _MAX_LISTED} more)" if len(ids) > _MAX_LISTED else "")
