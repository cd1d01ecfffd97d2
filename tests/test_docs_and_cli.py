"""The README documents every setting; the operator CLI answers without a running pipeline."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from flows.cli import app
from schemas.settings import get_settings, settings_reference
from tasks.providers import use_arbiter
from warehouse.db import Warehouse
from warehouse.runs import finish_run, start_run

REPO = Path(__file__).resolve().parents[1]


def test_readme_documents_every_setting():
    readme = (REPO / "README.md").read_text()
    missing = [env for env, _, _ in settings_reference() if f"`{env}`" not in readme]
    assert not missing, f"settings missing from README's table: {missing}"


def test_every_setting_has_a_description():
    assert all(desc for _, _, desc in settings_reference())


def test_readme_two_commands_are_the_makefile_targets():
    readme = (REPO / "README.md").read_text()
    makefile = (REPO / "Makefile").read_text()
    assert "make demo" in readme and "make test" in readme
    assert "\ndemo:" in makefile and "\ntest:" in makefile
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_db_path_runs_list_and_config(tmp_path):
    runner = CliRunner()
    out = runner.invoke(app, ["db", "path", "--home", str(tmp_path)])
    assert out.exit_code == 0 and out.output.strip() == str((tmp_path / "warehouse.duckdb").resolve())
    out = runner.invoke(app, ["runs", "list", "--home", str(tmp_path)])
    assert out.exit_code != 0 and "no warehouse" in str(out.exception or out.output)
    with Warehouse(tmp_path / "warehouse.duckdb") as wh:
        run_id = start_run(wh, "ingest", {"paths": []})
        finish_run(wh, run_id, "ok", {})
    out = runner.invoke(app, ["runs", "list", "--home", str(tmp_path), "--json"])
    assert out.exit_code == 0 and run_id in out.output
    out = runner.invoke(app, ["config"])
    assert out.exit_code == 0 and "ARBITER_LLM__BASE_URL" in out.output


def test_unknown_arbiter_is_refused_before_any_run_starts(tmp_path):
    import pytest

    questions = tmp_path / "q.jsonl"
    questions.write_text('{"qid": "1", "question": "What is the fee?"}\n', encoding="utf-8")
    for command in (["answer", str(questions)], ["eval", str(questions)]):
        out = CliRunner().invoke(app, [*command, "--arbiter", "oracle", "--home", str(tmp_path)])
        assert out.exit_code == 2 and "arbiter must be one of rules, openai, replay, learned" in out.output
    assert not (tmp_path / "warehouse.duckdb").exists()
    with pytest.raises(ValueError, match="unknown arbiter provider 'oracle'"):
        use_arbiter(get_settings(tmp_path), "oracle")
    assert use_arbiter(get_settings(tmp_path), "replay").arbiter.provider == "replay"
    assert use_arbiter(get_settings(tmp_path), None).arbiter.provider == get_settings(tmp_path).arbiter.provider
