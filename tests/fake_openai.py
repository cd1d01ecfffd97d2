"""A fake OpenAI-compatible HTTP server (stdlib only) for driving the real ``openai`` SDK in tests and benchmarks.

``/v1/chat/completions`` answers from a programmable queue (status, headers, JSON body, delay) and then from an
optional ``default`` responder; every request is recorded. ``/v1/files`` and ``/v1/batches`` implement enough
of the Batch API for the batch path: an uploaded JSONL batch is answered line by line by the same responders.
Run as a script (``python tests/fake_openai.py --latency 0.2``) it serves in its own process, printing its port.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeResponse:
    status: int = 200
    body: dict[str, Any] | str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any


def completion(content: str | dict | None, *, prompt_tokens: int = 120, completion_tokens: int = 30,
               cached_tokens: int = 0, reasoning_tokens: int = 0, finish_reason: str = "stop",
               refusal: str | None = None, model: str = "gpt-4o-mini-2024-07-18",
               usage: bool = True) -> dict[str, Any]:
    """A chat.completion body; a dict ``content`` is sent as its JSON text."""
    text = json.dumps(content) if isinstance(content, dict) else content
    body: dict[str, Any] = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": text, "refusal": refusal},
            "finish_reason": finish_reason,
            "logprobs": None,
        }],
    }
    if usage:
        body["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": reasoning_tokens, "audio_tokens": 0},
        }
    return body


def error_body(message: str, type_: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


Responder = Callable[[dict[str, Any]], FakeResponse]


class FakeOpenAI:
    """The server; use as a context manager. ``base_url`` is what ``OpenAI(base_url=...)`` wants."""

    def __init__(self, default: Responder | None = None):
        self.default = default
        self.requests: list[RecordedRequest] = []
        self.disconnects = 0  # replies the client no longer waited for (its timeout fired first)
        self.unqueued = 0  # chat requests that found neither a queued response nor a default
        self._queue: deque[FakeResponse] = deque()
        self._lock = threading.Lock()
        self._files: dict[str, bytes] = {}
        self._batches: dict[str, dict[str, Any]] = {}
        self.batch_polls = 3  # polls a batch reports in_progress before completing on the last one
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- programming the fake -----------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, response: FakeResponse) -> None:
        with self._lock:
            self._queue.append(response)

    def enqueue_completion(self, content: str | dict | None, *, delay_s: float = 0.0, **kw) -> None:
        self.enqueue(FakeResponse(body=completion(content, **kw), delay_s=delay_s))

    def enqueue_error(self, status: int, message: str = "error", headers: dict[str, str] | None = None,
                      delay_s: float = 0.0) -> None:
        type_ = "rate_limit_error" if status == 429 else "server_error" if status >= 500 else "invalid_request_error"
        self.enqueue(FakeResponse(status=status, body=error_body(message, type_), headers=headers or {},
                                  delay_s=delay_s))

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    # -- lifecycle ------------------------------------------------------------------------------------------------
    def start(self) -> "FakeOpenAI":
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "FakeOpenAI":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- answering ------------------------------------------------------------------------------------------------
    def answer_chat(self, body: dict[str, Any]) -> FakeResponse:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.default is not None:
            return self.default(body)
        with self._lock:
            self.unqueued += 1
        return FakeResponse(status=400, body=error_body("fake server: no response queued for this request"))

    def create_file(self, content: bytes, purpose: str, filename: str) -> dict[str, Any]:
        file_id = f"file-{uuid.uuid4().hex[:12]}"
        with self._lock:
            self._files[file_id] = content
        return {"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()),
                "filename": filename, "purpose": purpose, "status": "processed"}

    def create_batch(self, input_file_id: str, endpoint: str, completion_window: str) -> dict[str, Any]:
        """Answer the batch's lines at once (like chat requests); polls see it complete on ``batch_polls``."""
        with self._lock:
            data = self._files.get(input_file_id)
        if data is None:
            raise KeyError(input_file_id)
        out_lines = []
        for line in data.decode().splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            resp = self.answer_chat(item["body"])
            out_lines.append(json.dumps({
                "id": f"batch_req_{uuid.uuid4().hex[:8]}", "custom_id": item["custom_id"],
                "response": {"status_code": resp.status, "request_id": uuid.uuid4().hex, "body": resp.body},
                "error": None,
            }))
        output = self.create_file("\n".join(out_lines).encode() + b"\n", "batch_output", "output.jsonl")
        batch_id = f"batch_{uuid.uuid4().hex[:12]}"
        batch = {
            "id": batch_id, "object": "batch", "endpoint": endpoint, "input_file_id": input_file_id,
            "completion_window": completion_window, "status": "in_progress", "output_file_id": None,
            "error_file_id": None, "created_at": int(time.time()),
            "request_counts": {"total": len(out_lines), "completed": 0, "failed": 0},
            "_output_file_id": output["id"], "_polls_left": self.batch_polls,
        }
        with self._lock:
            self._batches[batch_id] = batch
        return _public(batch)

    def get_batch(self, batch_id: str) -> dict[str, Any]:
        with self._lock:
            batch = self._batches[batch_id]
            batch["_polls_left"] -= 1
            if batch["_polls_left"] <= 0 and batch["status"] == "in_progress":
                batch.update(status="completed", output_file_id=batch["_output_file_id"])
                counts = batch["request_counts"]
                counts["completed"] = counts["total"]
            return _public(batch)

    def file_content(self, file_id: str) -> bytes:
        with self._lock:
            return self._files[file_id]


def _public(batch: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in batch.items() if not k.startswith("_")}


def _handler_for(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
        disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart (delayed ACK)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read fake.requests instead
            return

        def _read(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _send(self, resp: FakeResponse) -> None:
            if resp.delay_s:
                time.sleep(resp.delay_s)
            payload = resp.body if isinstance(resp.body, str) else json.dumps(resp.body)
            data = (payload or "").encode()
            try:
                self.send_response(resp.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in resp.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                with fake._lock:
                    fake.disconnects += 1
                self.close_connection = True

        def _record(self, body: Any) -> None:
            with fake._lock:
                fake.requests.append(RecordedRequest(self.command, self.path,
                                                     {k.lower(): v for k, v in self.headers.items()}, body))

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            raw = self._read()
            if self.path.endswith("/chat/completions"):
                body = json.loads(raw or b"{}")
                self._record(body)
                self._send(fake.answer_chat(body))
            elif self.path.endswith("/files"):
                self._record("<multipart>")
                fields = _multipart(self.headers.get("Content-Type", ""), raw)
                self._send(FakeResponse(body=fake.create_file(fields["file"], fields["purpose"].decode(),
                                                              fields.get("_filename", "upload.jsonl"))))
            elif self.path.endswith("/batches"):
                body = json.loads(raw or b"{}")
                self._record(body)
                try:
                    created = fake.create_batch(body["input_file_id"], body["endpoint"], body["completion_window"])
                except KeyError:
                    self._send(FakeResponse(status=404, body=error_body("no such file")))
                else:
                    self._send(FakeResponse(body=created))
            else:
                self._send(FakeResponse(status=404, body=error_body(f"fake server: no route POST {self.path}")))

        def do_GET(self) -> None:  # noqa: N802
            self._record(None)
            if m := re.search(r"/batches/([^/?]+)$", self.path):
                try:
                    self._send(FakeResponse(body=fake.get_batch(m.group(1))))
                except KeyError:
                    self._send(FakeResponse(status=404, body=error_body("no such batch")))
            elif m := re.search(r"/files/([^/?]+)/content$", self.path):
                try:
                    self._send(FakeResponse(body=fake.file_content(m.group(1)).decode()))
                except KeyError:
                    self._send(FakeResponse(status=404, body=error_body("no such file")))
            else:
                self._send(FakeResponse(status=404, body=error_body(f"fake server: no route GET {self.path}")))

    return Handler


def _multipart(content_type: str, raw: bytes) -> dict[str, bytes]:
    """Minimal multipart/form-data parser (the SDK's file upload): name -> bytes, plus ``_filename``."""
    m = re.search(r'boundary="?([^";]+)"?', content_type)
    if not m:
        raise ValueError(f"not multipart: {content_type}")
    out: dict[str, Any] = {}
    for part in raw.split(b"--" + m.group(1).encode()):
        if b"\r\n\r\n" not in part:
            continue
        head, _, data = part.partition(b"\r\n\r\n")
        name = re.search(rb'name="([^"]+)"', head)
        if not name:
            continue
        out[name.group(1).decode()] = data[:-2] if data.endswith(b"\r\n") else data
        filename = re.search(rb'filename="([^"]*)"', head)
        if filename:
            out["_filename"] = filename.group(1).decode()
    return out


def latency_responder(content: str | dict, latency_s: float, jitter_s: float, seed: int = 0) -> Responder:
    """A default responder: ``content`` after ``latency_s`` ± ``jitter_s`` (uniform)."""
    rng = random.Random(seed)
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> FakeResponse:
        with lock:
            delay = max(0.0, latency_s + rng.uniform(-jitter_s, jitter_s))
        return FakeResponse(body=completion(content), delay_s=delay)

    return respond


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="fake OpenAI-compatible server with injected latency")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per chat completion")
    parser.add_argument("--jitter", type=float, default=0.05, help="uniform ± jitter in seconds")
    parser.add_argument("--content", default='{"answer": "42", "found": true}', help="JSON reply content")
    args = parser.parse_args(argv)
    fake = FakeOpenAI(default=latency_responder(json.loads(args.content), args.latency, args.jitter))
    fake.start()
    print(f"PORT {fake.port}", flush=True)
    try:
        sys.stdin.read()  # serve until the parent closes our stdin
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
