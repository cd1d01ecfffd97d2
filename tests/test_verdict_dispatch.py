"""Arbiter output validation and the deterministic verdict dispatcher (profiles, guard, not-found, rules)."""

from __future__ import annotations

import json

import pytest

from schemas.contracts import ArbiterOutput, CandidateBrief, CandidateVerdict
from schemas.settings import DISPATCH_PROFILES, DispatchProfile, LLMSettings, Settings
from tasks.arbiter.dispatch import (
    MAX_PASSAGE_LINES,
    DispatchError,
    dispatch,
    resolve_profile,
)
from tasks.arbiter.validate import (
    NOT_RANKED,
    ArbiterOutputError,
    complete_verdicts,
    make_validator,
)
from tasks.llm.base import InvalidOutputError, LLMRequest, ProviderReply
from tasks.llm.client import LLMClient


def cand(cid: str, rrf: float = 0.01, lines: tuple[int, int] = (10, 12), page: int = 1) -> CandidateBrief:
    return CandidateBrief(
        question_id="q", candidate_id=cid, doc_id="d" * 64, page=page, line_start=lines[0], line_end=lines[1],
        section="S", methods=["keywords"], ranks={"keywords": 1}, raw_scores={"keywords": 1.0},
        matched_keywords=["fee"], snippet=f"snippet of {cid}", rrf_score=rrf,
    )


def verdict(cid: str, role: str, relevance: float, **kw) -> CandidateVerdict:
    decision = "discard" if role == "discarded" else "keep"
    return CandidateVerdict(candidate_id=cid, role=role, decision=decision, reason=f"{role} because",
                            relevance=relevance, **kw)


# -- validation ----------------------------------------------------------------------------------------------------
def test_validator_rejects_unknown_ids_and_lists_valid_ones():
    validate = make_validator(["a", "b", "c"])
    validate(ArbiterOutput(verdicts=[verdict("a", "primary", 0.9), verdict("b", "discarded", 0.1)]))  # missing c: ok
    with pytest.raises(ArbiterOutputError) as err:
        validate(ArbiterOutput(verdicts=[verdict("a", "primary", 0.9), verdict("zz", "supporting", 0.5)]))
    assert isinstance(err.value, InvalidOutputError)
    assert err.value.unknown_ids == ["zz"]
    assert "zz" in err.value.feedback and "Valid ids (3): a, b, c" in err.value.feedback


def test_validator_rejects_duplicates():
    validate = make_validator(["a", "b"])
    with pytest.raises(InvalidOutputError, match="duplicate verdicts for a") as err:
        validate(ArbiterOutput(verdicts=[verdict("a", "primary", 0.9), verdict("a", "discarded", 0.0)]))
    assert "exactly one verdict per id" in err.value.feedback


def test_validator_rejects_role_decision_mismatch_built_without_validation():
    bad = CandidateVerdict.model_construct(candidate_id="a", role="discarded", decision="keep", reason="r",
                                           relevance=0.1, contradicts=[], anchor_found=False, rewrite=None,
                                           flagged=False)
    with pytest.raises(ArbiterOutputError) as err:
        make_validator(["a"])(ArbiterOutput.model_construct(verdicts=[bad], not_found=False, not_found_reason=None))
    assert err.value.mapping_errors == ["a: decision 'keep' with role 'discarded'"]
    assert "'discarded' goes with decision 'discard'" in err.value.feedback


def test_mapping_violation_in_a_reply_becomes_feedback_for_the_retry(wh):
    """A provider breaking the role<->decision mapping gets one retry, told what was wrong."""
    def reply(decision: str) -> str:
        verdict = {"candidate_id": "a", "role": "primary", "decision": decision, "reason": "r", "relevance": 0.9}
        return json.dumps({"verdicts": [verdict]})

    bad, good = reply("discard"), reply("keep")

    class Queue:
        name, model, offline = "queue", "queue-1", True

        def __init__(self):
            self.replies, self.seen = [bad, good], []

        def send(self, request):
            self.seen.append(request.messages)
            return ProviderReply(text=self.replies.pop(0))

    provider = Queue()
    request = LLMRequest(stage="arbiter", question_id="q", messages=[{"role": "user", "content": "brief"}],
                         response_model=ArbiterOutput)
    client = LLMClient(provider, wh, "r", LLMSettings())
    result = client.complete(request, validate=make_validator(["a"]))
    client.close()
    assert result.parsed.verdicts[0].decision == "keep" and result.attempts == 2
    feedback = provider.seen[1][-1]["content"]
    assert "decision 'discard' is not allowed for role 'primary'" in feedback


def test_complete_verdicts_adds_missing_ids_flagged_in_brief_order():
    out = ArbiterOutput(verdicts=[verdict("c", "primary", 0.9), verdict("a", "supporting", 0.6)])
    done, missing = complete_verdicts(out, ["a", "b", "c", "d"])
    assert missing == ["b", "d"]
    assert [v.candidate_id for v in done.verdicts] == ["a", "b", "c", "d"]
    b = done.verdicts[1]
    assert (b.role, b.decision, b.reason, b.relevance, b.flagged) == ("discarded", "discard", NOT_RANKED, 0.0, True)
    assert not done.verdicts[0].flagged and out.verdicts[0].candidate_id == "c"  # the input is not mutated


# -- profiles ------------------------------------------------------------------------------------------------------
def test_profiles_and_overrides():
    assert DISPATCH_PROFILES["strict"].min_relevance == 0.9 and DISPATCH_PROFILES["lenient"].min_relevance == 0.5
    name, p = resolve_profile("strict", {"max_primary": 1})
    assert name == "strict+overrides" and p.max_primary == 1 and p.min_relevance == 0.9
    with pytest.raises(DispatchError, match="unknown dispatch profile 'finance'"):
        resolve_profile("finance")
    with pytest.raises(DispatchError, match="unknown dispatch override"):
        resolve_profile("balanced", {"threshold": 0.3})
    assert resolve_profile(DispatchProfile(min_relevance=0.2))[0] == "custom"
    assert Settings(dispatch={"min_relevance": 0.8}).dispatch.overrides() == {"min_relevance": 0.8}


POOL = [cand("p1", 0.03), cand("p2", 0.02), cand("p3", 0.01), cand("s1"), cand("t1"), cand("x1")]
OUTPUT = ArbiterOutput(verdicts=[
    verdict("p1", "primary", 0.95), verdict("p2", "primary", 0.75), verdict("p3", "primary", 0.55),
    verdict("s1", "supporting", 0.6), verdict("t1", "tangential", 0.35), verdict("x1", "discarded", 0.05),
])


@pytest.mark.parametrize("profile, primary, supporting", [
    ("strict", ["p1"], []),
    ("balanced", ["p1", "p2"], ["s1"]),
    ("lenient", ["p1", "p2", "p3"], ["s1"]),
])
def test_each_profile_applies_its_threshold(profile, primary, supporting):
    r = dispatch("q", OUTPUT, POOL, profile)
    assert r.status == "found" and r.profile == profile and not r.guard_fired
    assert [p.candidate_id for p in r.primary] == primary
    assert [p.candidate_id for p in r.supporting] == supporting
    th = DISPATCH_PROFILES[profile].min_relevance
    assert r.rule.startswith(f"found: {len(primary)} primary ≥ {th:g}")


def test_order_is_relevance_then_rrf_and_caps_are_recorded():
    pool = [cand("a", 0.01), cand("b", 0.05), cand("c", 0.03), cand("d", 0.02)]
    out = ArbiterOutput(verdicts=[verdict("a", "primary", 0.8), verdict("b", "primary", 0.8),
                                  verdict("c", "primary", 0.9), verdict("d", "primary", 0.7)])
    r = dispatch("q", out, pool, "balanced", {"max_primary": 2, "guard_min_pool": 99})
    assert [p.candidate_id for p in r.primary] == ["c", "b"]
    assert r.rule == ("found: 2 primary ≥ 0.6, 2 supporting ≥ 0.45; primary capped 4→2, the rest lead the "
                      "supporting")


def test_a_primary_beyond_the_cap_leads_the_supporting_passages_as_one():
    """Dropping a fourth primary kept weaker passages instead: it comes first among the supporting ones, said so."""
    pool = [cand("a", 0.05), cand("b", 0.04), cand("c", 0.03), cand("s", 0.02)]
    out = ArbiterOutput(verdicts=[verdict("a", "primary", 0.9), verdict("b", "primary", 0.8),
                                  verdict("c", "primary", 0.7), verdict("s", "supporting", 0.69)])
    r = dispatch("q", out, pool, "balanced", {"max_primary": 2, "guard_min_pool": 99})
    assert [p.candidate_id for p in r.primary] == ["a", "b"]
    assert [(p.candidate_id, p.role) for p in r.supporting] == [("c", "supporting"), ("s", "supporting")]
    assert "beyond the cap of 2 primaries" in r.supporting[0].reason
    assert "beyond the cap" not in r.supporting[1].reason
    # below min_relevance a primary is not kept at all, as before
    low = ArbiterOutput(verdicts=[verdict("a", "primary", 0.9), verdict("b", "primary", 0.8),
                                  verdict("c", "primary", 0.55), verdict("s", "supporting", 0.69)])
    r = dispatch("q", low, pool, "balanced", {"max_primary": 2, "guard_min_pool": 99})
    assert [p.candidate_id for p in r.supporting] == ["s"]


def test_strict_drops_every_primary_below_its_bar_and_says_so():
    r = dispatch("q", OUTPUT.model_copy(update={"verdicts": OUTPUT.verdicts[1:]}), POOL, "strict")
    assert r.status == "not_found" and r.primary == [] and r.supporting == []
    assert r.rule == "not_found: no primary above min_relevance 0.9"
    assert r.not_found_reason == "no primary reaches min_relevance 0.9 (best 0.75)"


def test_not_found_when_the_arbiter_says_so_or_no_primary():
    said = OUTPUT.model_copy(update={"not_found": True, "not_found_reason": '"2024" appears in no candidate'})
    r = dispatch("q", said, POOL, "lenient")
    assert r.status == "not_found" and r.primary == []
    assert r.rule == 'not_found: arbiter said not found ("2024" appears in no candidate)'
    no_primary = ArbiterOutput(verdicts=[verdict("s1", "supporting", 0.7), verdict("t1", "tangential", 0.3)])
    r = dispatch("q", no_primary, POOL, "lenient")
    assert r.status == "not_found" and r.rule == "not_found: no primary verdict"
    r = dispatch("q", ArbiterOutput(verdicts=[]), [], "balanced")
    assert r.status == "not_found" and r.rule == "not_found: no candidates"


def test_inflation_guard_fires_when_too_many_score_high():
    pool = [cand(f"c{i}", rrf=0.01 * (10 - i)) for i in range(10)]
    inflated = ArbiterOutput(verdicts=[verdict(f"c{i}", "primary" if i < 6 else "supporting", 0.95 - i * 0.01)
                                       for i in range(10)])
    r = dispatch("q", inflated, pool, "lenient")  # lenient: 10/10 > 0.5 share, top-5 kept
    assert r.guard_fired
    assert [p.candidate_id for p in r.primary] == ["c0", "c1", "c2", "c3", "c4"] and r.supporting == []
    assert "guard: 10/10 above 0.8 → top-5 kept" in r.rule
    r = dispatch("q", inflated, pool, "balanced")
    assert r.guard_fired and [p.candidate_id for p in r.primary] == ["c0", "c1", "c2"]


def test_inflation_guard_quiet_on_a_calibrated_pool():
    pool = [cand(f"c{i}") for i in range(10)]
    calibrated = ArbiterOutput(verdicts=[verdict("c0", "primary", 0.92), verdict("c1", "primary", 0.85),
                                         verdict("c2", "primary", 0.75)]
                               + [verdict(f"c{i}", "tangential", 0.3) for i in range(3, 10)])
    r = dispatch("q", calibrated, pool, "balanced")  # 2/10 above 0.8, not more than 30%
    assert not r.guard_fired and "guard" not in r.rule
    assert [p.candidate_id for p in r.primary] == ["c0", "c1", "c2"]
    small = ArbiterOutput(verdicts=[verdict("c0", "primary", 0.92), verdict("c1", "primary", 0.9)])
    assert not dispatch("q", small, pool[:2], "balanced").guard_fired  # below guard_min_pool


def test_passages_carry_text_reason_and_contradictions():
    pool = [cand("a", lines=(10, 12)), cand("b", lines=(40, 41), page=3), cand("big", lines=(1, 500))]
    out = ArbiterOutput(verdicts=[
        verdict("a", "primary", 0.9, contradicts=["b"], anchor_found=True),
        CandidateVerdict(candidate_id="b", role="primary", decision="rewrite", reason="table row", relevance=0.85,
                         contradicts=["a"], rewrite="Fee | 14,000"),
        verdict("big", "supporting", 0.6),
    ])
    calls = []

    def lines_text(doc_id, start, end):
        calls.append((start, end))
        return f"lines {start}..{end}"

    r = dispatch("q", out, pool, "balanced", arbiter_provider="rules", arbiter_model="rules-v1",
                 arbiter_call_id="call-1", lines_text=lines_text)
    a, b = r.primary
    assert a.text == "lines 10..12" and a.reason == "primary because" and a.anchor_found and a.page == 1
    assert b.decision == "rewrite" and b.rewrite == "Fee | 14,000" and b.text == "lines 40..41"
    assert r.supporting[0].text == "snippet of big" and (1, 500) not in calls  # longer than MAX_PASSAGE_LINES
    assert 500 > MAX_PASSAGE_LINES
    assert len(r.contradictions) == 1 and r.contradictions[0].candidate_ids == ["a", "b"]
    assert r.contradictions[0].note == "p.2 lines 10-12 and p.4 lines 40-41 state different values for the same point"
    assert (r.arbiter_provider, r.arbiter_model, r.arbiter_call_id) == ("rules", "rules-v1", "call-1")
    # without a lines source the snippet is the text
    assert dispatch("q", out, pool, "balanced").primary[0].text == "snippet of a"


def test_verdicts_for_unknown_candidates_are_refused():
    with pytest.raises(DispatchError, match="not candidates: \\['ghost'\\]"):
        dispatch("q", ArbiterOutput(verdicts=[verdict("ghost", "primary", 0.9)]), POOL, "balanced")


def test_caps_keep_distinct_pages_first():
    """Within a cap, the best passage of each page not yet kept goes ahead of a second passage of a kept page."""
    pool = [cand("p1", page=1), cand("p1b", page=1), cand("p2", page=2),
            cand("s1", page=1), cand("s1b", page=3), cand("s3", page=3), cand("s4", page=4)]
    out = ArbiterOutput(verdicts=[
        verdict("p1", "primary", 0.95), verdict("p1b", "primary", 0.9), verdict("p2", "primary", 0.8),
        verdict("s1", "supporting", 0.7), verdict("s1b", "supporting", 0.68), verdict("s3", "supporting", 0.66),
        verdict("s4", "supporting", 0.6),
    ])
    r = dispatch("q", out, pool, "balanced", {"max_primary": 2, "max_supporting": 2, "guard_min_pool": 99})
    assert [p.candidate_id for p in r.primary] == ["p1", "p2"]
    assert [p.candidate_id for p in r.supporting] == ["s1b", "s4"]
    assert r.rule == ("found: 2 primary ≥ 0.6, 2 supporting ≥ 0.45; primary capped 3→2, the rest lead the "
                      "supporting; supporting capped 5→2")
