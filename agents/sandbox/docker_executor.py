"""The hardened Docker executor: one container per run, re-used across turns, removed at the end."""

from __future__ import annotations

import codecs
import os
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from agents.errors import DockerUnavailable
from agents.protocols import ExecResult
from agents.sandbox.output import BoundedOutput
from agents.sandbox.runner import RUNNER, RunnerBroken, RunnerClient
from agents.sandbox.safe_write import write_new_file
from agents.scenario import SandboxConfig

LABEL = "org.codeduet.run"
LABEL_PID = "org.codeduet.pid"
LABEL_HOST = "org.codeduet.host"
SANDBOX_UID = 1000
RUNNERS = {"python": ["python3", "-u"], "sh": ["sh"]}
SUFFIX = {"python": ".py", "sh": ".sh"}
BROKEN = "\n[codeduet: the sandbox runner stopped answering during this block; later blocks use docker exec]"


def hardening(cfg: SandboxConfig) -> dict[str, Any]:
    """docker-py create kwargs that make the container a sandbox."""
    user = f"{SANDBOX_UID}:{SANDBOX_UID}" if os.geteuid() == 0 else f"{os.getuid()}:{os.getgid()}"
    return {
        "network_mode": cfg.network,
        "mem_limit": cfg.memory,
        "memswap_limit": cfg.memory,
        "nano_cpus": int(cfg.cpus * 1e9),
        "pids_limit": cfg.pids,
        "read_only": True,
        "tmpfs": {"/tmp": f"rw,nosuid,nodev,size={cfg.tmpfs_size}"},
        "user": user,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "ipc_mode": "private",
        "environment": {"HOME": "/tmp", "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg"},
    }


class DockerExecutor:
    """Runs code blocks in one hardened container bind-mounting the run's workspace at /workspace."""

    def __init__(self, cfg: SandboxConfig, workspace: Path, run_id: str | None = None):
        self.cfg = cfg
        self.workspace = Path(workspace).resolve()
        self.run_id = run_id or uuid.uuid4().hex[:8]
        self.container: Any = None
        self.client: Any = None
        self.image_id: str | None = None
        self.counter = 0
        self._oom_kills = 0
        self._lock = threading.Lock()
        self.runner: RunnerClient | None = None
        self.warm = True
        """Blocks go to the warm runner (PID 1) until it breaks; then each block is a `docker exec`."""

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        """Create the container (checks the daemon and the image first; never pulls)."""
        if self.container is not None:
            return
        from agents.sandbox.image import docker_client, ensure_image

        self.client = docker_client()
        self.image_id = ensure_image(self.cfg.image)
        self.workspace.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            for path in [self.workspace, *self.workspace.rglob("*")]:
                os.chown(path, SANDBOX_UID, SANDBOX_UID, follow_symlinks=False)
        labels = {LABEL: self.run_id, LABEL_PID: str(os.getpid()), LABEL_HOST: socket.gethostname()}
        try:
            self.container = self.client.containers.run(
                self.cfg.image, command=["python3", "-c", RUNNER], detach=True, name=f"codeduet-{self.run_id}",
                labels=labels, working_dir="/workspace", init=False, stdin_open=True,
                volumes={str(self.workspace): {"bind": "/workspace", "mode": "rw"}}, **hardening(self.cfg))
        except Exception as exc:  # docker.errors.* and connection errors alike
            raise DockerUnavailable(f"could not start the sandbox container: {exc}".splitlines()[0]) from None

    def stop(self) -> None:
        """Remove the container; safe to call twice and from a signal path."""
        with self._lock:
            container, self.container = self.container, None
            runner, self.runner = self.runner, None
        if runner is not None:
            runner.close()
        if container is not None:
            try:
                container.remove(force=True)
            except Exception:
                pass

    def describe(self) -> dict[str, Any]:
        """Kind, image, image id and limits, for the transcript."""
        return {"kind": "docker", "image": self.cfg.image, "image_id": self.image_id,
                "container": f"codeduet-{self.run_id}", **self.cfg.model_dump(exclude={"kind", "image"})}

    # -- execution ---------------------------------------------------------------------------
    def execute(self, code: str, language: str = "python") -> ExecResult:
        """Write the block to the workspace and run it under the timeout."""
        self.counter += 1
        filename = f"block{self.counter:02d}{SUFFIX[language]}"
        # never write through a symlink an earlier block planted at this name (it could point at a host file)
        write_new_file(self.workspace, filename, code, SANDBOX_UID if os.geteuid() == 0 else None)
        result = self.run_command([*RUNNERS[language], filename])
        result.filename = filename
        result.language = language
        return result

    def run_command(self, argv: list[str], timeout: float | None = None) -> ExecResult:
        """Run argv in /workspace with `timeout`; kill every sandbox process when it is exceeded."""
        self.start()
        limit = timeout or self.cfg.timeout
        cmd = ["timeout", "-k", "1", "-s", "TERM", f"{limit:g}", *argv]
        out = BoundedOutput(self.cfg.output_limit)
        started = time.perf_counter()
        exit_code = self._run_warm(cmd, limit, out) if self.warm else None
        if exit_code is None:
            exit_code = self._run_exec(cmd, limit, out)
        duration = time.perf_counter() - started
        timed_out = exit_code == 124 or (exit_code in (137, None) and duration >= limit)
        if timed_out or exit_code is None:
            self._kill_all()
            exit_code = 124 if exit_code is None else exit_code
        oom = exit_code != 0 and not timed_out and (
            (exit_code == 137 and self._new_oom_kill()) or "MemoryError" in out.text()[-2000:])
        text = out.text()
        if timed_out:
            text += f"\n[codeduet: timed out after {limit:g} s; every process of the block was killed]"
        elif oom:
            text += f"\n[codeduet: killed: the memory limit ({self.cfg.memory}) was hit]"
        return ExecResult(exit_code=exit_code, output=text, duration_s=round(duration, 4),
                          timed_out=timed_out, truncated=out.truncated, oom_killed=oom)

    def _run_warm(self, cmd: list[str], limit: float, out: BoundedOutput) -> int | None:
        """Through the warm runner; None when it is unusable before the block started (use docker exec)."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        received = False

        def write(data: bytes) -> None:
            nonlocal received
            received = True
            out.write(decoder.decode(data))

        try:
            if self.runner is None:
                self.runner = RunnerClient(self.client.api, self.container.id)
            code = self.runner.run(cmd, limit + 3, write)
            out.write(decoder.decode(b"", final=True))
            return code
        except Exception as exc:  # RunnerBroken, or the attach itself failed
            self._drop_runner()
            self._kill_all()
            if not received and self.container is not None:
                return None  # nothing of the block came back: run it with docker exec
            out.write(BROKEN if isinstance(exc, RunnerBroken) else f"\n[codeduet: {exc}]")
            return 125
        except BaseException:  # Ctrl-C mid-block: its frames may still come, so this stream is never read again
            self._drop_runner()
            raise

    def _drop_runner(self) -> None:
        """Stop using the warm runner: later blocks of this run go through `docker exec`."""
        self.warm = False
        runner, self.runner = self.runner, None
        if runner is not None:
            runner.close()

    def _run_exec(self, cmd: list[str], limit: float, out: BoundedOutput) -> int | None:
        """Through one `docker exec` (the fallback); None when the exit code is unknown."""
        api = self.client.api
        exec_id = api.exec_create(self.container.id, cmd, workdir="/workspace")["Id"]
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        started = time.perf_counter()
        done = threading.Event()
        watchdog = threading.Thread(target=self._watch, args=(exec_id, started, limit, done), daemon=True)
        watchdog.start()
        try:
            for chunk in api.exec_start(exec_id, stream=True, demux=False):
                out.write(decoder.decode(chunk))
        finally:
            done.set()
        out.write(decoder.decode(b"", final=True))
        return api.exec_inspect(exec_id).get("ExitCode")

    def _watch(self, exec_id: str, started: float, limit: float, done: threading.Event) -> None:
        """Kill stragglers: past the deadline, or background children still holding the output pipe."""
        while not done.wait(0.25):
            if time.perf_counter() - started <= limit + 5:
                try:
                    running = self.client.api.exec_inspect(exec_id).get("Running", False)
                except Exception:
                    return
                if running or done.wait(0.5):
                    continue
            self._kill_all()  # repeated until the output stream ends, should one kill not get through
            done.wait(2)

    def _new_oom_kill(self) -> bool:
        """Whether the kernel OOM-killed something since the last look (a plain SIGKILL also exits 137)."""
        try:
            _, raw = self.container.exec_run(["cat", "/sys/fs/cgroup/memory/memory.oom_control",
                                              "/sys/fs/cgroup/memory.events"], user=hardening(self.cfg)["user"])
            count = next(int(line.split()[1]) for line in raw.decode().splitlines() if line.startswith("oom_kill "))
        except Exception:  # counter not readable: trust the exit code
            return True
        new, self._oom_kills = count > self._oom_kills, count
        return new

    def _kill_all(self) -> None:
        """SIGKILL every process of the sandbox user except PID 1 (the runner)."""
        container = self.container
        if container is None:
            return
        try:
            container.exec_run(["sh", "-c", "kill -9 -1"], user=hardening(self.cfg)["user"])
        except Exception:
            pass
