"""What the operator's terminal shows: progress as a bar on a TTY and as plain lines elsewhere, a run's failures
(first few, a count, the SQL), and exit 2 from `answer` and `eval` when a line of the question file or a question
failed."""

from __future__ import annotations

import io
import json

import pytest
from typer.testing import CliRunner

from flows import console
from flows.cli import app
from tasks.corpus.sample.generate import generate_sample_corpus


class Stream(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_progress_is_a_bar_on_a_tty_and_plain_lines_elsewhere(monkeypatch):
    tty = Stream(True)
    with console.Progress("questions", 3, stream=tty) as bar:
        for _ in range(3):
            bar.update(note="answered")
    assert "\r" in tty.getvalue() and "[########################] questions: 3/3" in tty.getvalue()
    assert tty.getvalue().endswith("\n")
    plain = Stream(False)
    with console.Progress("questions", 100, stream=plain, every_s=0.0) as bar:
        for _ in range(100):
            bar.update()
    lines = plain.getvalue().splitlines()
    assert "\r" not in plain.getvalue() and lines[-1].startswith("questions: 100/100")
    quiet = Stream(False)
    monkeypatch.setitem(console._state, "quiet", True)
    with console.Progress("questions", 5, stream=quiet) as bar:
        bar.update(5)
    assert quiet.getvalue() == ""


def test_failure_lines_show_the_first_few_then_a_count_and_the_sql():
    failures = [{"stage": "questions", "subject": f"q.jsonl:{i}", "error": f"q.jsonl:{i}: bad line"}
                for i in range(1, 8)]
    lines = console.failure_lines("RUN", failures, 7, "/h/warehouse.duckdb")
    assert lines[0] == "7 failure(s) in run RUN:"
    assert lines[1] == "  questions q.jsonl:1: bad line"  # the subject once, not twice
    assert len(lines) == 1 + console.FAILURES_SHOWN + 1
    assert "2 more" in lines[-1] and "FROM errors WHERE run_id = 'RUN'" in lines[-1]
    assert console.failure_lines("RUN", [], 0, "/h/w.duckdb") == []


@pytest.fixture(scope="module")
def bad_set(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad")
    sample = generate_sample_corpus(root / "sample")
    good = json.loads(sample.questions_path.read_text().splitlines()[0])
    lines = [json.dumps(good), '{"qid": "b2", "question": "broken', json.dumps({"qid": "b3", "doc": good["doc"]}),
             json.dumps({**good, "question": "again?"}), json.dumps({"qid": "b5", "question": "x?", "doc": "gone.pdf"})]
    path = root / "questions.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return sample, path, good


@pytest.mark.parametrize("command", ["answer", "eval"])
def test_a_malformed_question_file_prints_its_errors_and_exits_2(bad_set, tmp_path, monkeypatch, prefect_server,
                                                                   command):
    sample, path, good = bad_set
    monkeypatch.setenv("ARBITER_EMBEDDER__KIND", "hash")
    out = CliRunner().invoke(app, [command, str(path), "--data-root", str(sample.root), "--home", str(tmp_path)])
    assert out.exit_code == 2, out.output
    err = out.stderr
    assert "4 failure(s) in run" in err, err
    for message in ("not valid JSON", "missing required field 'question'", f"duplicate qid '{good['qid']}'",
                    "document(s) not found"):
        assert message in err, (message, err)
    assert "FROM errors WHERE run_id" in err
    assert "Task run" not in out.output  # Prefect's per-task lines are off by default
