"""What the reader is given: the order sequential reads the passages in, the passage that states a value of the
asked kind preferred, and the arbiter's reading of numbers and words (hand-made passages)."""

from __future__ import annotations

from schemas.contracts import CandidateBrief, RetrievalResult, RetrievedPassage
from tasks.arbiter import evidence as ev
from tasks.arbiter.rules import arbitrate
from tasks.generate.run import reading_order
from tasks.generate.sentences import stem
from tests.reader.kit import DOC, passage_at, q


def test_doubled_consonant_inflections_match_their_canonical_word():
    assert stem("cancelling") == stem("cancel") == stem("cancelled") == stem("cancellation")
    assert stem("filled") == "fill"  # no canonical form: left alone


def brief(cid: str, snippet: str, methods: tuple[str, ...], rrf: float) -> CandidateBrief:
    page = int(cid.split(":")[1])
    return CandidateBrief(question_id="q", candidate_id=cid, doc_id="a" * 64, page=page, line_start=page * 10,
                          line_end=page * 10 + 3, section="", methods=list(methods),
                          ranks={m: 1 for m in methods}, raw_scores={m: 1.0 for m in methods},
                          matched_keywords=["damage"], snippet=snippet, rrf_score=rrf)


def test_weak_evidence_on_a_how_long_question_prefers_the_passage_stating_a_duration():
    question = q("How long do we have to tell the insurer about damage to the house?", "amount",
                 ["insurer", "damage", "house"])
    liability = brief("a:2:l20-23", "We pay damages up to $300,000 for each occurrence.", ("keywords", "embeddings"),
                      0.0323)
    claims = brief("a:5:l50-53", "Give us notice no later than 60 days after the loss and describe the damage.",
                   ("keywords", "embeddings"), 0.0318)
    out = arbitrate(question, [liability, claims])
    roles = {v.candidate_id: v.role for v in out.verdicts}
    assert roles["a:5:l50-53"] == "primary" and roles["a:2:l20-23"] != "primary"


def test_arbiter_amounts_skip_the_day_of_a_date_and_page_counts():
    assert ev.amounts("This Agreement is dated as of March 1, 2024 between the Parties") == []
    assert ev.amounts("Master Services Agreement - Confidential Page 4 of 4") == []
    assert ev.amounts("a fixed monthly fee of $14,000, invoiced in advance") == ["$14000"]


def test_sequential_reads_value_bearing_primaries_first():
    def rp(cid: str, role: str, anchor: bool) -> RetrievedPassage:
        return RetrievedPassage(candidate_id=cid, doc_id=DOC, page=0, line_start=0, line_end=1, section="",
                                text="x", role=role, decision="keep", reason="r", relevance=0.8, anchor_found=anchor,
                                rrf_score=0.0, methods=["keywords"], matched_keywords=[])
    result = RetrievalResult(question_id="q", status="found", primary=[rp("title", "primary", False),
                                                                         rp("fees", "primary", True)],
                             supporting=[rp("other", "supporting", True)], rule="r", arbiter_provider="rules",
                             arbiter_model="rules-v1")
    shown = [passage_at(c, 0, ["x"]).model_copy(update={"candidate_id": c, "role": r})
             for c, r in (("title", "primary"), ("fees", "primary"), ("other", "supporting"))]
    assert [p.candidate_id for p in reading_order(shown, result)] == ["fees", "title", "other"]
