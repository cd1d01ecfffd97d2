"""The SDK's calls in a child process: an :class:`OpenAIProvider` whose ``send`` runs in another interpreter.

With questions in flight on a model, the question process is bound by its one interpreter lock, and about a
quarter of that time is the SDK's own work per call (request options, URL and headers, httpx's and h11's
request and response handling: ~1.5 ms a call measured with ``benchmarks/throughput.py --fake-llm``), while the
machine's other cores wait. :class:`ChildCallProvider` sends each request (pickled) to a child process that
makes the call with its own SDK client, in a thread per call in flight, and sends back the reply or the error,
so that work runs beside the question process's instead of under its lock.

Nothing else moves: the logging client (``tasks/llm/client.py``) still wraps ``send`` in this process, so every
attempt's ``llm_calls`` row, retry, validation and fallback is exactly as with the SDK in process; the child is
only the transport. The request body, the schema and the Batch API path (``chat_body``, ``sdk``) stay on the
parent's own :class:`OpenAIProvider` too. The child learns the server's capabilities (a structured-output or
token-parameter fallback) for its calls as the in-process provider would, and reports them in each reply's meta.

The child exits when its input closes: when :meth:`close` is called, or when this process ends in any way (a
SIGKILL too, since no other process holds that pipe), so it is never left behind. It ignores SIGINT and SIGTERM:
a stop signal sent to the whole process group lets this process finish the calls in flight before it closes.
If it dies anyway, the calls waiting on it fail as transient (the client retries them) and the next call starts
a new one. ``ARBITER_LLM__CALL_PROCESS=false`` keeps the calls in this process.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from collections.abc import Iterator
from typing import IO, Any, BinaryIO

from schemas.settings import LLMSettings
from tasks.llm.base import LLMRequest, ProviderReply, TransientLLMError
from tasks.llm.openai_provider import OpenAIProvider

_HEADER = struct.Struct("!I")  # each frame: its length, then a pickle
_REPO = Path(__file__).resolve().parents[2]


def write_frame(out: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(_HEADER.pack(len(data)) + data)
    out.flush()


def read_frames(fd: int) -> Iterator[list[Any]]:
    """The frames from a file descriptor, as lists: every whole frame one read returned (a frame cut by a read
    waits for the next); ends at end of file."""
    buf = bytearray()
    while chunk := os.read(fd, 1 << 20):
        buf += chunk
        frames, at = [], 0
        while len(buf) - at >= _HEADER.size:
            size = _HEADER.unpack_from(buf, at)[0]
            if len(buf) - at - _HEADER.size < size:
                break
            frames.append(pickle.loads(buf[at + _HEADER.size:at + _HEADER.size + size]))
            at += _HEADER.size + size
        del buf[:at]
        if frames:
            yield frames


def _picklable(exc: BaseException) -> BaseException:
    """The error as it can cross the pipe: our errors pickle; an SDK or library error that does not becomes a
    RuntimeError with its type and text (the client records and re-raises it as it would the original)."""
    try:
        pickle.dumps(exc)
        return exc
    except Exception:  # noqa: BLE001 - any pickling failure: send its description instead
        return RuntimeError(f"{type(exc).__name__}: {exc}")


class ChildCallProvider(OpenAIProvider):
    """An OpenAI(-compatible) provider whose ``send`` runs in a child process (see the module docstring)."""

    def __init__(self, settings: LLMSettings, **kwargs: Any):
        super().__init__(settings, **kwargs)
        self._init = (settings, {**kwargs, "api_key": self._secret, "name": self.name})
        self._threads = max(1, settings.max_in_flight)
        self._lock = threading.Lock()  # the child and the table of calls waiting on it
        self._writing = threading.Lock()  # one frame at a time into the child's input
        self._child: subprocess.Popen | None = None
        self._waiting: dict[int, tuple[subprocess.Popen, Future]] = {}  # key -> the child it was sent to
        self._next = 0
        self._up = threading.Event()  # the current child has its provider (its first frame came back)
        with self._lock:  # started now: its imports (~1 s) overlap the run's set-up, not its first call
            self._started()

    def send(self, request: LLMRequest) -> ProviderReply:
        future: Future = Future()
        with self._lock:
            child = self._started()
            self._next += 1
            key = self._next
            self._waiting[key] = (child, future)
        try:
            with self._writing:
                write_frame(child.stdin, (key, request))
        except (OSError, ValueError) as exc:  # a broken pipe, or closed by close() or by the child's end
            with self._lock:
                self._waiting.pop(key, None)
            raise TransientLLMError(f"the call process is gone ({type(exc).__name__}: {exc}); "
                                    "the call is retried in a new one") from exc
        ok, value = future.result()
        if not ok:
            raise value
        return value

    def wait_ready(self, timeout: float = 30.0) -> bool:
        """Whether the child is ready for calls, waiting up to ``timeout`` for it: a run waits here once, in its
        set-up, rather than in its first calls. A child that did not start is reported by the first call."""
        return self._up.wait(timeout)

    def close(self) -> None:
        """End the child: its input closes, it exits (calls still in flight in it are dropped)."""
        with self._lock:
            child, self._child = self._child, None
        if child is not None:
            with contextlib.suppress(OSError, ValueError):
                child.stdin.close()
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()

    def __del__(self):  # a provider dropped without close(): its child goes with it
        with contextlib.suppress(Exception):
            self.close()

    # -- the parent's side of the pipe --------------------------------------------------------------------------
    def _started(self) -> subprocess.Popen:
        """The running child (started on the first call, or again after one died); the lock is held."""
        if self._child is not None and self._child.poll() is None:
            return self._child
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (str(_REPO), os.environ.get("PYTHONPATH", "")) if p)}
        child = subprocess.Popen([sys.executable, "-m", "tasks.llm.call_process"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, env=env, cwd=_REPO)
        self._up.clear()
        with self._writing:
            write_frame(child.stdin, (self._init[0], self._init[1], self._threads))
        self._child = child
        threading.Thread(target=self._replies, args=(child,), name="call-process-replies", daemon=True).start()
        return child

    def _replies(self, child: subprocess.Popen) -> None:
        """Hand each reply to the call waiting on it; when the child ends, fail the calls still waiting.

        Replies are read as they come, all those a read returns at once: this one thread needs the interpreter
        lock for each read, and the question threads hold it in turn for up to a switch interval (5 ms), so a
        frame a read would cost up to that much a reply."""
        with contextlib.suppress(OSError, ValueError, pickle.UnpicklingError):
            for replies in read_frames(child.stdout.fileno()):
                if replies[0][0] == 0:  # the child's first frame: its provider is built
                    self._up.set()
                    replies = replies[1:]
                with self._lock:
                    done = [(self._waiting.pop(key, (None, None))[1], ok, value) for key, ok, value in replies]
                for future, ok, value in done:
                    if future is not None:
                        future.set_result((ok, value))
        code = child.wait()
        with self._lock:  # the calls sent to this child (a new one's, started since, are not its to fail)
            futures = [self._waiting.pop(k)[1] for k, (c, _) in list(self._waiting.items()) if c is child]
        for future in futures:
            future.set_result((False, TransientLLMError(
                f"the call process ended (exit code {code}) before replying; the call is retried in a new one")))


# -- the child ----------------------------------------------------------------------------------------------------
def serve(inp: int, out: BinaryIO) -> None:
    """Read the provider's settings, then calls, from file descriptor ``inp`` until it closes; each call's reply
    or error goes back tagged with its key as soon as it is done (in any order)."""
    frames = (frame for batch in read_frames(inp) for frame in batch)
    init = next(frames, None)
    if init is None:
        os._exit(0)  # the parent closed before it sent the settings
    settings, kwargs, threads = init
    provider = OpenAIProvider(settings, **kwargs)
    write_frame(out, (0, True, None))  # ready (calls are keyed from 1)
    lock = threading.Lock()
    pool = ThreadPoolExecutor(threads, thread_name_prefix="call")

    def call(key: int, request: LLMRequest) -> None:
        try:
            result: tuple[bool, Any] = (True, provider.send(request))
        except Exception as exc:  # noqa: BLE001 - every error goes back to the caller, which maps and logs it
            result = (False, _picklable(exc))
        with lock:
            write_frame(out, (key, *result))

    for key, request in frames:
        pool.submit(call, key, request)
    os._exit(0)  # the parent closed or died: calls in flight here have no one to reply to


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when the calls end (see the docstring)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print goes to stderr, never into the frames
    serve(sys.stdin.fileno(), out)


if __name__ == "__main__":
    main()
