"""llama.cpp's own OpenAI-compatible server (`python -m llama_cpp.server`) for the embedded GGUF: start, wait, stop.

`codeduet model serve` runs it in the foreground; the `llamacpp-server` model entry talks to it through
`provider: openai`, as a user of LM Studio, Ollama or vLLM would. The tests start it on a loopback port.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from agents.loop.errors import ModelUnavailable
from agents.loop.extras import require
from agents.record.paths import codeduet_home

MODEL_ALIAS = "qwen2.5-coder-1.5b-instruct"
"""The model name the server answers to (the `llamacpp-server` entry's `model:`)."""
DEFAULT_PORT = 8080


def serve_argv(model_path: Path, host: str = "127.0.0.1", port: int = DEFAULT_PORT, n_ctx: int = 8192,
               n_threads: int | None = None) -> list[str]:
    """The server's command line for a GGUF, answering to MODEL_ALIAS."""
    argv = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--model_alias", MODEL_ALIAS,
            "--host", host, "--port", str(port), "--n_ctx", str(n_ctx)]
    return argv + (["--n_threads", str(n_threads)] if n_threads else [])


def default_log() -> Path:
    """Where the server's own output goes: CODEDUET_HOME/logs/llama-server.log."""
    return codeduet_home() / "logs" / "llama-server.log"


class LlamaServer:
    """One server process in its own process group; `with LlamaServer(...) as s:` waits until it answers."""

    def __init__(self, model_path: Path, host: str = "127.0.0.1", port: int = DEFAULT_PORT, n_ctx: int = 8192,
                 n_threads: int | None = None, log: Path | None = None):
        self.argv = serve_argv(model_path, host, port, n_ctx, n_threads)
        self.base_url = f"http://{host}:{port}/v1"
        self.log = log or default_log()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> "LlamaServer":
        """Start the process; its output goes to the log file."""
        require("server", "llama.cpp's server")
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        return self

    def ready(self) -> bool:
        """Whether GET /v1/models answers 200."""
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                return response.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def wait_ready(self, timeout: float = 120) -> None:
        """Block until the server answers; one line naming the log when it exits or never answers."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise ModelUnavailable(f"llama.cpp's server exited with code {self.process.returncode} before it "
                                       f"answered: see {self.log}")
            if self.ready():
                return
            time.sleep(0.25)
        self.stop()
        raise ModelUnavailable(f"llama.cpp's server did not answer at {self.base_url} within {timeout:.0f} s: "
                               f"see {self.log}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15) -> int | None:
        """Signal the whole process group and wait; SIGKILL when it does not go. Its exit code."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        for s in (sig, signal.SIGKILL):
            try:
                os.killpg(self.process.pid, s)
            except ProcessLookupError:
                break
            try:
                return self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                continue
        return self.process.wait()

    def __enter__(self) -> "LlamaServer":
        self.start()
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
