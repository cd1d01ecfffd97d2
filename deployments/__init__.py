"""The deployments of ``deployments/prefect.yaml``, read back for ``arbiter serve`` and the tests.

``prefect deploy --all --prefect-file deployments/prefect.yaml`` registers them with a server and a work pool;
:func:`runner_deployments` builds the same deployments for ``prefect.serve`` (one local process, no pool).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import yaml

PREFECT_YAML = Path(__file__).with_name("prefect.yaml")
REPO_ROOT = PREFECT_YAML.parents[1]
PATH_PARAMETERS = ("config",)  # parameters holding a path relative to the repository root


def load_prefect_yaml(path: Path = PREFECT_YAML) -> dict[str, Any]:
    """The file as Prefect's own ``prefect deploy`` model validates it (raises on a malformed file)."""
    from prefect.cli.deploy._models import PrefectYamlModel

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    PrefectYamlModel.model_validate(data)
    return data


def load_flow(entrypoint: str):
    """``flows/nightly.py:nightly_flow`` -> the Prefect flow object (imported as a module of this project)."""
    file, sep, name = entrypoint.partition(":")
    if not sep or not file.endswith(".py"):
        raise ValueError(f"entrypoint {entrypoint!r} is not 'path/to/module.py:flow_name'")
    module = importlib.import_module(file[:-3].replace("/", "."))
    try:
        return getattr(module, name)
    except AttributeError:
        raise ValueError(f"entrypoint {entrypoint!r}: {module.__name__} has no {name!r}") from None


def schedules_of(spec: dict[str, Any]) -> list:
    """The deployment's schedules as Prefect schedule objects (cron, interval or rrule)."""
    from datetime import timedelta

    from prefect.client.schemas.schedules import (
        CronSchedule,
        IntervalSchedule,
        RRuleSchedule,
    )

    out = []
    for s in spec.get("schedules") or []:
        tz = s.get("timezone")
        if s.get("cron"):
            out.append(CronSchedule(cron=s["cron"], **({"timezone": tz} if tz else {})))
        elif s.get("interval"):
            out.append(IntervalSchedule(interval=timedelta(seconds=s["interval"]), **({"timezone": tz} if tz else {})))
        elif s.get("rrule"):
            out.append(RRuleSchedule(rrule=s["rrule"], **({"timezone": tz} if tz else {})))
    return out


def deployment_parameters(spec: dict[str, Any], overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The deployment's parameters with ``overrides``; repository-relative paths made absolute; nulls dropped."""
    params = {**(spec.get("parameters") or {}), **(overrides or {})}
    for key in PATH_PARAMETERS:
        if isinstance(params.get(key), str) and not Path(params[key]).is_absolute():
            params[key] = str(REPO_ROOT / params[key])
    return {k: v for k, v in params.items() if v is not None}


def runner_deployments(parameters: dict[str, dict[str, Any]] | None = None, schedules: bool = True,
                       path: Path = PREFECT_YAML) -> list:
    """``RunnerDeployment`` objects for ``prefect.serve``: the file's deployments, their schedules and parameters
    (``parameters``: per-deployment overrides, by deployment name)."""
    parameters = parameters or {}
    out = []
    for spec in load_prefect_yaml(path)["deployments"]:
        flow = load_flow(spec["entrypoint"])
        limit = spec.get("concurrency_limit")
        out.append(flow.to_deployment(
            name=spec["name"], description=spec.get("description"), tags=spec.get("tags"),
            parameters=deployment_parameters(spec, parameters.get(spec["name"])),
            schedules=schedules_of(spec) if schedules else None,
            concurrency_limit=limit.get("limit") if isinstance(limit, dict) else limit,
        ))
    return out
