"""Prefect flows. Importing this package sets offline, quiet defaults (no telemetry, no hub downloads, no
weights-loading bar: the operator's terminal shows one bar per long stage, see flows/console.py)."""

import os

from schemas.settings import offline_environment

offline_environment()
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # transformers' tqdm bars read it at import
