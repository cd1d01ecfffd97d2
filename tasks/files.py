"""File helpers every brick may use: a file's sha256 (documents' ids, pinned models) and the per-user cache root
(built models, the local LLM server). Imports no brick."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks (model files are hundreds of MB)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def user_cache_root() -> Path:
    """``$XDG_CACHE_HOME/arbiter``, else ``~/.cache/arbiter`` (each cache may have its own variable above it)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "arbiter"
