"""Prefect flows. Importing this package sets offline, quiet defaults (no telemetry, no hub downloads)."""

from schemas.settings import offline_environment

offline_environment()
