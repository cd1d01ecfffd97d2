"""Nightly, backfill and diff: a nightly on the sample corpus, then backfills of its answer run as linked runs.

A replay backfill must diff to zero; a stricter profile re-dispatches without any arbiter call and the diff names
what moved. The diff's own rules are pinned on hand-made rows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from fake_openai import FakeOpenAI, FakeResponse, completion, error_body
from test_crash_resume import FAILING, arbiter_replies, question_subset
from typer.testing import CliRunner

from flows.backfill import BackfillError, backfill_flow, choose_mode, source_runs
from flows.cli_ops import diff_cmd, parse_thresholds
from flows.nightly import load_config, nightly_flow
from tasks.corpus.sample.generate import generate_sample_corpus
from tasks.report.diff import diff_runs, format_diff
from warehouse.db import Warehouse
from warehouse.runs import start_run

QIDS = ["s01", "s02", "s03", "s10", "s11", "s25"]


@pytest.fixture(scope="module")
def night(tmp_path_factory, prefect_server):
    """One nightly run over the sample corpus (one question set), run twice with the same run id."""
    root = tmp_path_factory.mktemp("nightly")
    sample = generate_sample_corpus(root / "sample")
    question_subset(sample, sample.root / "subset.jsonl", ids=QIDS)
    config = root / "nightly.toml"
    config.write_text(
        'regime = "auto"\narbiter = "rules"\nprofile = "balanced"\n'
        '[[corpora]]\nname = "sample"\npaths = ["sample/docs"]\n'
        '[[question_sets]]\nname = "subset"\nquestions = "sample/subset.jsonl"\ndata_root = "sample"\n')
    mp = pytest.MonkeyPatch()
    mp.setenv("ARBITER_EMBEDDER__KIND", "hash")
    home = root / "home"
    first = nightly_flow(str(config), home=str(home))
    again = nightly_flow(str(config), home=str(home), run_id=first["run_id"])
    yield {"home": home, "first": first, "again": again, "config": config}
    mp.undo()


def open_wh(night, read_only: bool = True) -> Warehouse:
    return Warehouse(night["home"] / "warehouse.duckdb", read_only=read_only)


def test_nightly_links_children_writes_reports_and_resumes(night):
    first, again = night["first"], night["again"]
    assert first["ingest"]["ingested"] == 5 and not first["failed_sets"]
    (answer,) = first["answer_runs"]
    assert answer["statuses"] == {"answered": len(QIDS)}
    (report,) = first["reports"]
    assert Path(report).parent == night["home"] / "reports" and "<html" in Path(report).read_text()[:200]
    # the same run id resumes: same child answer run, nothing re-ingested or re-answered
    assert again["run_id"] == first["run_id"] and again["answer_runs"][0]["run_id"] == answer["run_id"]
    assert again["ingest"]["ingested"] == 0 and again["ingest"]["skipped_unchanged"] == 5
    with open_wh(night) as wh:
        runs = {r["run_id"]: r for r in wh.query("SELECT run_id, flow, parent_run_id, status, summary FROM runs")}
        parent = runs[first["run_id"]]
        assert parent["flow"] == "nightly" and parent["status"] == "ok"
        assert json.loads(parent["summary"])["answer_runs"][0]["run_id"] == answer["run_id"]
        children = {r["flow"] for r in runs.values() if r["parent_run_id"] == first["run_id"]}
        assert children == {"ingest", "answer"}
        assert sum(r["flow"] == "answer" for r in runs.values()) == 1


def test_replay_backfill_has_zero_diffs(night):
    source = night["first"]["answer_runs"][0]["run_id"]
    out = backfill_flow(from_run=source, arbiter="replay", home=str(night["home"]))
    (b,) = out["backfills"]
    assert b["mode"] == "rearbitrate" and b["statuses"] == {"answered": len(QIDS)}
    assert b["diff"]["changes"] == 0 and b["diff"]["questions_changed"] == 0
    with open_wh(night) as wh:
        run = wh.query("SELECT flow, parent_run_id, status FROM runs WHERE run_id = ?", [b["run_id"]])[0]
        assert run == {"flow": "backfill", "parent_run_id": source, "status": "ok"}
        calls = wh.query("SELECT provider, replay_of FROM llm_calls WHERE run_id = ? AND stage = 'arbiter'",
                         [b["run_id"]])
        assert len(calls) == len(QIDS) and all(c["provider"] == "replay" and c["replay_of"] for c in calls)
        d = diff_runs(wh, source, b["run_id"])
    assert d.questions == [] and d.summary.spend["delta"]["input_tokens"] == 0
    result = CliRunner().invoke(_diff_app(), [source, b["run_id"], "--json", "--exit-code",
                                              "--home", str(night["home"])])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["summary"]["changes"] == 0


def test_threshold_backfill_redispatches_and_diff_names_the_changes(night):
    source = night["first"]["answer_runs"][0]["run_id"]
    out = backfill_flow(from_run=source, thresholds={"min_relevance": 0.99}, home=str(night["home"]))
    (b,) = out["backfills"]
    assert b["mode"] == "redispatch" and b["overrides"] == {"min_relevance": 0.99}
    with open_wh(night) as wh:
        assert wh.scalar("SELECT count(*) FROM llm_calls WHERE run_id = ? AND stage = 'arbiter'", [b["run_id"]]) == 0
        truth = dict(wh.execute(
            "SELECT a.question_id, a.status || '→' || b.status FROM retrieval_results a JOIN retrieval_results b "
            "USING (question_id) WHERE a.run_id = ? AND b.run_id = ? AND a.status <> b.status", [source, b["run_id"]]))
        d = diff_runs(wh, source, b["run_id"])
    assert truth, "min_relevance 0.99 should turn found questions into not_found"
    assert {q.question_id: f"{q.status_a}→{q.status_b}" for q in d.questions if q.status_changed} == truth
    assert d.summary.status_changes == {"found→not_found": len(truth)}
    assert d.summary.role_changes == 0  # same verdicts: only the dispatcher moved
    changed = [q for q in d.questions if q.status_changed]
    assert all(q.primary_pages_a and not q.primary_pages_b for q in changed)
    for q in changed:  # answered "not found" now (the route may differ too: then the old regime's row is gone)
        assert [a.exit_b for a in q.answer_changes if a.status_b is not None] == ["not_found"], q.answer_changes
    text = format_diff(d)
    assert f"{changed[0].question_id}  " in text and "status found -> not_found" in text
    result = CliRunner().invoke(_diff_app(), [source, b["run_id"], "--exit-code", "--home", str(night["home"])])
    assert result.exit_code == 1 and "found→not_found" in result.output
    # the same backfill again under its run id (a resume): same run, answers untouched
    with open_wh(night) as wh:
        answers = wh.query("SELECT * FROM answers WHERE run_id = ? ORDER BY question_id, regime", [b["run_id"]])
    again = backfill_flow(from_run=source, thresholds={"min_relevance": 0.99}, run_id=b["run_id"],
                          home=str(night["home"]))["backfills"][0]
    assert again["run_id"] == b["run_id"] and again["diff"] == b["diff"]
    with open_wh(night) as wh:
        assert wh.query("SELECT * FROM answers WHERE run_id = ? ORDER BY question_id, regime", [b["run_id"]]) == answers


def test_redetect_backfill_of_an_offline_run_diffs_to_zero(night):
    source = night["first"]["answer_runs"][0]["run_id"]
    (b,) = backfill_flow(from_run=source, redetect=True, home=str(night["home"]))["backfills"]
    assert b["mode"] == "redetect" and b["statuses"] == {"answered": len(QIDS)}
    assert b["copied"] == {"questions": len(QIDS)} and b["diff"]["changes"] == 0  # same corpus, same code
    with open_wh(night) as wh:
        hits = [wh.scalar("SELECT count(*) FROM detector_hits WHERE run_id = ?", [r]) for r in (source, b["run_id"])]
    assert hits[0] == hits[1] > 0  # detected afresh, not copied


def test_batch_api_backfill_sends_one_batch_and_the_rest_live(night, monkeypatch):
    source = night["first"]["answer_runs"][0]["run_id"]
    with FakeOpenAI(default=arbiter_replies) as fake:  # answers batch lines like chat requests; 400 for FAILING
        fake.batch_polls = 2
        for key, value in {"ARBITER_LLM__BASE_URL": fake.base_url, "ARBITER_LLM__API_KEY": "sk-test",
                           "ARBITER_LLM__MAX_ATTEMPTS": "1"}.items():
            monkeypatch.setenv(key, value)
        out = backfill_flow(from_run=source, arbiter="openai", batch_api=True, batch_poll_s=0.01,
                            home=str(night["home"]))
        batches = [r for r in fake.requests if r.method == "POST" and r.path.endswith("/batches")]
        live = fake.chat_requests()
    (b,) = out["backfills"]
    assert b["statuses"] == {"answered": len(QIDS) - 1, "failed": 1}
    assert len(batches) == 1 and len(live) == 1  # one batch; only the question whose line failed went live
    assert f"Question ({FAILING})" in live[0].body["messages"][1]["content"]
    with open_wh(night) as wh:
        calls = wh.query("SELECT question_id, batch_api, status FROM llm_calls WHERE run_id = ? AND stage = 'arbiter' "
                         "ORDER BY question_id, batch_api DESC", [b["run_id"]])
        assert sum(c["batch_api"] for c in calls) == len(QIDS)
        assert [c for c in calls if not c["batch_api"]] == [{"question_id": FAILING, "batch_api": False,
                                                              "status": "error"}]
        assert wh.scalar("SELECT status FROM questions WHERE run_id = ? AND question_id = ?",
                         [b["run_id"], FAILING]) == "failed"
    with pytest.raises(BackfillError, match="rearbitrate"):
        backfill_flow(from_run=source, batch_api=True, home=str(night["home"]))
    with pytest.raises(BackfillError, match="unknown threshold"):
        backfill_flow(from_run=source, thresholds={"min_relevence": 0.5}, home=str(night["home"]))


def generation_replies(failing: set[str]):
    """A fake model's generation replies: HTTP 400 for the questions in ``failing``, a found answer otherwise."""
    def reply(body: dict) -> FakeResponse:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        qid = re.search(r"Question \(([^)]+)\)", user).group(1)
        if qid in failing:
            return FakeResponse(status=400, body=error_body(f"fake: generation for {qid} rejected"))
        return FakeResponse(body=completion({"value": "fake value", "evidence": [], "answer_found": True,
                                             "complete_answer_found": True, "confidence": 0.9, "caveats": []}))
    return reply


@pytest.mark.parametrize("mode", ["redispatch", "rearbitrate", "regenerate", "redetect"])
def test_a_generation_call_failing_in_a_backfill_fails_its_question_and_a_rerun_retries_it(night, monkeypatch, mode):
    """Every backfill mode walks its questions through the one walk, whose failure rule is the answer flow's: a
    question with a failed answer row is 'failed' (not 'answered' with a failed answer), and the backfill's resume
    walks it again."""
    source = night["first"]["answer_runs"][0]["run_id"]
    with open_wh(night) as wh:  # a question the source answered from a found passage: generation is called
        failing = wh.scalar("SELECT min(question_id) FROM retrieval_results WHERE run_id = ? AND status = 'found'",
                            [source])
    with FakeOpenAI(default=generation_replies({failing})) as fake:
        for key, value in {"ARBITER_LLM__BASE_URL": fake.base_url, "ARBITER_LLM__API_KEY": "sk-test",
                           "ARBITER_LLM__MAX_ATTEMPTS": "1"}.items():
            monkeypatch.setenv(key, value)
        (b,) = backfill_flow(from_run=source, generator="openai", mode=mode, home=str(night["home"]))["backfills"]
        with open_wh(night) as wh:
            status, error = wh.execute("SELECT status, error FROM questions WHERE run_id = ? AND question_id = ?",
                                       [b["run_id"], failing])[0]
            run_status = wh.scalar("SELECT status FROM runs WHERE run_id = ?", [b["run_id"]])
            answer = wh.query("SELECT status, error FROM answers WHERE run_id = ? AND question_id = ?",
                              [b["run_id"], failing])
        assert b["statuses"] == {"answered": len(QIDS) - 1, "failed": 1}
        assert status == "failed" and error.startswith("generate: ") and "rejected" in error
        assert run_status == "partial" and [a["status"] for a in answer] == ["failed"]

        fake.default = generation_replies(set())  # the model is back: the backfill's resume retries the question
        again = backfill_flow(from_run=source, generator="openai", mode=mode, run_id=b["run_id"],
                              home=str(night["home"]))["backfills"][0]
    assert again["processed"] == 1 and again["statuses"] == {"answered": len(QIDS)}
    with open_wh(night) as wh:
        assert wh.query("SELECT status, value FROM answers WHERE run_id = ? AND question_id = ?",
                        [b["run_id"], failing]) == [{"status": "ok", "value": "fake value"}]
        assert wh.scalar("SELECT status FROM runs WHERE run_id = ?", [b["run_id"]]) == "ok"


def _diff_app() -> typer.Typer:
    app = typer.Typer()
    app.command()(diff_cmd)
    return app


# -- the diff's rules on hand-made rows ---------------------------------------------------------------------------
def _verdict(run, qid, cid, role, reason="r", relevance=0.8):
    return {"run_id": run, "question_id": qid, "candidate_id": cid, "role": role,
            "decision": "discard" if role == "discarded" else "keep", "reason": reason, "relevance": relevance,
            "contradicts": [], "anchor_found": False, "rewrite": None, "flagged": False, "provider": "p",
            "model": "m", "call_id": None}


def _answer(run, qid, value, value_norm, status="ok"):
    return {"run_id": run, "question_id": qid, "regime": "batch", "routed": True, "status": status,
            "value": value, "value_norm": value_norm, "answer_found": value is not None,
            "input_tokens": 100 if run == "A" else 130, "output_tokens": 10}


def test_diff_rules_on_hand_made_runs(wh):
    for run in ("A", "B"):
        start_run(wh, "answer", {}, run_id=run)
    wh.insert_rows("verdicts", [_verdict("A", "q1", "c1", "primary", "states the amount"),
                                _verdict("B", "q1", "c1", "tangential", "topical only"),
                                _verdict("A", "q1", "c2", "supporting"), _verdict("B", "q1", "c2", "supporting"),
                                _verdict("A", "q2", "c3", "primary"), _verdict("B", "q2", "c3", "primary")])
    page = '{"question_id": "q", "status": "found", "primary": [{"doc_id": "d", "page": %d}]}'
    wh.insert_rows("retrieval_results", [
        {"run_id": "A", "question_id": "q1", "status": "found", "result": page % 3},
        {"run_id": "B", "question_id": "q1", "status": "not_found", "result": None},
        {"run_id": "A", "question_id": "q2", "status": "found", "result": page % 3},
        {"run_id": "B", "question_id": "q2", "status": "found", "result": page % 4}])
    wh.insert_rows("answers", [_answer("A", "q1", "$1,000", "1000"), _answer("B", "q1", None, None),
                               _answer("A", "q2", "$5", "5"), _answer("B", "q2", "5.00 USD", "5")])
    d = diff_runs(wh, "A", "B")
    s = d.summary
    assert (s.role_changes, s.role_transitions) == (1, {"primary→tangential": 1})
    assert s.status_changes == {"found→not_found": 1} and s.primary_page_changes == 2
    assert s.answer_value_changes == 1  # q2's values normalise to the same answer
    q1 = next(q for q in d.questions if q.question_id == "q1")
    assert q1.role_changes[0].reason_a == "states the amount" and q1.role_changes[0].reason_b == "topical only"
    assert s.questions_changed == 2 and s.changes == 1 + 1 + 2 + 1
    assert diff_runs(wh, "A", "A").summary.changes == 0
    with pytest.raises(LookupError, match="nope"):
        diff_runs(wh, "A", "nope")


def test_backfill_sources_modes_and_thresholds(wh):
    for run_id, day in (("old", "2026-01-01"), ("mid", "2026-02-01"), ("new", "2026-03-01")):
        start_run(wh, "answer", {}, run_id=run_id)
        wh.execute("UPDATE runs SET started_at = ?, status = 'ok' WHERE run_id = ?", [day, run_id])
    start_run(wh, "ingest", {}, run_id="ingest-run")
    assert source_runs(wh, None, "2026-01-15", "2026-03-01") == ["mid"]
    assert source_runs(wh, None, "2026-01-01", None) == ["old", "mid", "new"]
    assert source_runs(wh, "old", None, None) == ["old"]
    with pytest.raises(BackfillError, match="either"):
        source_runs(wh, "old", "2026-01-01", None)
    with pytest.raises(BackfillError, match="nothing to backfill"):
        source_runs(wh, None, None, None)
    with pytest.raises(BackfillError, match="bad date"):
        source_runs(wh, None, "yesterday", None)
    assert choose_mode("auto", arbiter=None, model=None, redetect=False) == "redispatch"
    assert choose_mode("auto", arbiter="openai", model=None, redetect=False) == "rearbitrate"
    assert choose_mode("auto", arbiter=None, model="gpt-4.1", redetect=False) == "rearbitrate"
    assert choose_mode("auto", arbiter=None, model=None, redetect=True) == "redetect"
    assert parse_thresholds(["min_relevance=0.8", "max_primary=2"]) == {"min_relevance": 0.8, "max_primary": 2}
    with pytest.raises(typer.BadParameter):
        parse_thresholds(["min_relevance"])


def test_nightly_config_validation(tmp_path):
    bad = tmp_path / "n.toml"
    bad.write_text('regime = "auto"\n')
    with pytest.raises(ValueError, match="nothing to do"):
        load_config(bad)
    good = tmp_path / "n.yaml"
    good.write_text("question_sets:\n  - questions: q.jsonl\n    data_root: data\n")
    cfg = load_config(good)
    assert cfg.question_sets[0].questions == (tmp_path / "q.jsonl").resolve()
    assert cfg.question_sets[0].data_root == (tmp_path / "data").resolve()
    example = load_config(Path(__file__).resolve().parents[1] / "deployments" / "nightly.example.toml")
    assert example.corpora and example.question_sets and example.scale.task_runner == "threads"
