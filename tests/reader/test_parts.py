"""Multi-part questions (rules ``parts.values``, ``abstain.part_missing``): each part answered on its own, the
question answered only when every part is; on hand-made passages."""

from __future__ import annotations

from tests.reader.kit import answer, numbered, q


REVENUE = numbered("c1", 4, [(40, "Financial highlights"), (41, "Total revenue in 2023 reached $4.2 million, up 12%"),
                            (42, "from the prior year.")])


def test_multi_part_question_is_not_answered_by_one_part_s_value():
    # right or silent: the revenue answers one of two asks; shown, it would read as the answer to both
    a = answer(q("What was the revenue in 2023 and what was the margin?", "amount", ["revenue", "2023", "margin"],
                 "multi_part"), [REVENUE])
    assert not a.answer_found and a.rule == "abstain.part_missing" and a.evidence
    assert "1 of 2 parts found" in a.caveats[0] and "'margin'" in a.caveats[-1]
