"""deployments/prefect.yaml is a valid Prefect project file whose deployments match the flows they run."""

from __future__ import annotations

import inspect
from datetime import datetime, timedelta, timezone

import pytest
from cronsim import CronSim
from prefect import Flow
from prefect.client.schemas.schedules import CronSchedule
from prefect.exceptions import ParameterTypeError

from deployments import (
    PREFECT_YAML,
    deployment_parameters,
    load_flow,
    load_prefect_yaml,
    runner_deployments,
)
from flows.nightly import load_config

EXPECTED = {"nightly": "flows/nightly.py:nightly_flow", "backfill": "flows/backfill.py:backfill_flow",
            "report": "flows/report.py:report_flow"}


@pytest.fixture(scope="module")
def project() -> dict:
    return load_prefect_yaml(PREFECT_YAML)  # also validated by Prefect's own prefect.yaml model


@pytest.fixture(scope="module")
def specs(project) -> dict[str, dict]:
    return {d["name"]: d for d in project["deployments"]}


def required(flow: Flow) -> set[str]:
    return {n for n, p in inspect.signature(flow.fn).parameters.items() if p.default is inspect.Parameter.empty}


def test_entrypoints_resolve_to_flows(specs):
    assert {n: s["entrypoint"] for n, s in specs.items()} == EXPECTED
    for name, spec in specs.items():
        flow = load_flow(spec["entrypoint"])
        assert isinstance(flow, Flow), f"{spec['entrypoint']} is not a Prefect flow"
        assert flow.name == name
    with pytest.raises(ValueError, match="no 'missing_flow'"):
        load_flow("flows/nightly.py:missing_flow")


def test_parameters_match_flow_signatures(specs):
    for name, spec in specs.items():
        flow = load_flow(spec["entrypoint"])
        signature = inspect.signature(flow.fn).parameters
        given = set(spec.get("parameters") or {})
        assert given <= set(signature), f"{name}: parameters not in the flow's signature: {given - set(signature)}"
        if spec.get("schedules"):  # nobody is there to supply a missing parameter to a scheduled run
            assert required(flow) <= given, f"{name}: scheduled without {required(flow) - given}"
        else:
            missing = required(flow) - given
            assert missing <= {"run_id"}, f"{name}: {missing} must be given at each run"
        if not required(flow) - given:
            flow.validate_parameters(deployment_parameters(spec))  # types check against the annotations
    with pytest.raises(ParameterTypeError):
        load_flow(EXPECTED["backfill"]).validate_parameters({"redetect": "not a bool"})


def test_nightly_schedule_is_a_daily_utc_cron(specs):
    (schedule,) = specs["nightly"]["schedules"]
    assert schedule["timezone"] == "UTC" and schedule.get("active", True)
    CronSchedule(cron=schedule["cron"], timezone=schedule["timezone"])  # Prefect accepts it
    start = datetime(2026, 3, 28, 12, 0, tzinfo=timezone.utc)  # spans the EU DST switch: UTC must not move
    runs = CronSim(schedule["cron"], start)
    first = [next(runs) for _ in range(3)]
    assert first[0] == datetime(2026, 3, 29, 2, 0, tzinfo=timezone.utc)
    assert [b - a for a, b in zip(first, first[1:])] == [timedelta(days=1)] * 2
    assert specs["backfill"].get("schedules") in (None, []) and specs["report"].get("schedules") in (None, [])


def test_work_pool_and_concurrency(specs):
    pools = {s["work_pool"]["name"] for s in specs.values()}
    assert pools == {"arbiter-process"}
    for name in ("nightly", "backfill"):  # one writer per warehouse: never two of them at once
        assert specs[name]["concurrency_limit"]["limit"] == 1


def test_runner_deployments_for_serve(specs):
    deployments = {d.name: d for d in runner_deployments(parameters={"report": {"home": "/tmp/h"}})}
    assert set(deployments) == set(EXPECTED)
    nightly = deployments["nightly"]
    assert nightly.entrypoint == EXPECTED["nightly"]
    (sched,) = nightly.schedules
    assert sched.schedule.cron == "0 2 * * *" and sched.schedule.timezone == "UTC"
    config = load_config(nightly.parameters["config"])  # the repo-relative config path, made absolute, loads
    assert config.question_sets
    assert deployments["backfill"].schedules == [] and deployments["report"].parameters == {"home": "/tmp/h"}
    unscheduled = runner_deployments(schedules=False)
    assert all(not d.schedules for d in unscheduled)
