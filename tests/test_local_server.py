"""The local llama-server wrapper without llama.cpp: clear errors, a health wait, a clean stop (issue #18).

A stand-in "binary" (a Python script that serves /health on the --port it is given) checks the process handling
in seconds; the real server is exercised by the ``local_llm`` tier."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from tasks.llm import local_server
from tasks.llm.local_server import (
    LocalLlamaServer,
    LocalServerError,
    build_llama_server,
    default_cache_dir,
)

FAKE_SERVER = f"""#!{sys.executable}
import sys, http.server
port = int(sys.argv[sys.argv.index("--port") + 1])
if "--die" in sys.argv:
    print("error: model file is not a GGUF", flush=True)
    sys.exit(3)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


@pytest.fixture
def fake_binary(tmp_path) -> Path:
    path = tmp_path / "fake" / "llama-server"
    path.parent.mkdir()
    path.write_text(FAKE_SERVER)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ARBITER_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("ARBITER_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert default_cache_dir() == tmp_path / "x" / "arbiter"


def test_missing_build_tools_are_named(monkeypatch, tmp_path):
    monkeypatch.setattr(local_server.shutil, "which", lambda name: None)
    with pytest.raises(LocalServerError, match=r"missing cmake, ninja or make, a C\+\+ compiler"):
        build_llama_server(tmp_path)


def test_a_cached_binary_is_reused_without_building(monkeypatch, tmp_path, fake_binary):
    target = tmp_path / "llama-server" / local_server.LLAMA_SERVER_BUILD / "bin" / "llama-server"
    target.parent.mkdir(parents=True)
    target.write_bytes(fake_binary.read_bytes())
    target.chmod(0o755)
    monkeypatch.setattr(local_server.shutil, "which", lambda name: pytest.fail("no tool lookup for a cached build"))
    assert build_llama_server(tmp_path) == target


def test_server_is_healthy_on_entry_and_its_group_gone_on_exit(fake_binary, tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    with LocalLlamaServer(fake_binary, model, log_path=tmp_path / "log", startup_timeout=30) as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1" and server._healthy()
        pid = server._proc.pid
        assert not server.exited()
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)  # the whole process group is gone
    server.stop()  # idempotent


def test_a_server_that_dies_raises_with_its_log_tail(fake_binary, tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    server = LocalLlamaServer(fake_binary, model, log_path=tmp_path / "log", extra_args=["--die"], startup_timeout=30)
    with pytest.raises(LocalServerError, match="not a GGUF"):
        server.start()
    assert server._proc is None
