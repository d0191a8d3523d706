"""The hardened Docker executor: one container per executor, so per attempt (`codeduet-<run-id>`, then
`codeduet-<run-id>-a2`) or per candidate, re-used across its turns, removed at stop(). The workspace
lives in the container (a size-limited tmpfs volume, no host bind mount), so any Docker engine works, remote ones
too; the host's run folder is kept in step by agents/sandbox/archive.py after every block."""

from __future__ import annotations

import codecs
import os
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from agents.loop.budget import clamp
from agents.loop.errors import DockerUnavailable
from agents.loop.protocols import ExecResult
from agents.record.run_folder import container_name
from agents.sandbox.archive import CopyReport, WorkspaceSync
from agents.sandbox.config import SandboxConfig
from agents.sandbox.filenames import command_for, not_in_sandbox, place_block, ran_as, saved_only
from agents.sandbox.image import docker_client, ensure_image, image_status, resolve_image
from agents.sandbox.languages import block_name
from agents.sandbox.lost import between_blocks, check_count, lost_state, remove_lost, under_block
from agents.sandbox.offline import pip_note
from agents.sandbox.output import BoundedOutput
from agents.sandbox.packages import pinned
from agents.sandbox.runner import RunnerBroken, RunnerClient, runner_source
from agents.sandbox.servers import served, server_line

LABEL = "org.codeduet.run"
LABEL_PID = "org.codeduet.pid"
LABEL_HOST = "org.codeduet.host"
LABEL_WORKSPACE = "org.codeduet.workspace"
"""The host folder the run's workspace is copied back to (how tests find the containers they started)."""
SANDBOX_UID = 1000
RUNNERS = {"python": ["python3", "-u"], "sh": ["sh"], "bash": ["bash"]}
BROKEN = "\n[codeduet: the sandbox runner stopped answering during this block; later blocks use docker exec]"
NO_SPACE = ("No space left on device", "[Errno 28]", "ENOSPC")


def kill_all_but(pids_file: str) -> str:
    """A shell script that SIGKILLs every process of the sandbox user but PID 1 (the runner) and those whose ids
    `pids_file` lists (a kernel's two, after a block the kernel interrupted: what the block started in the
    background goes, the kernel stays)."""
    return (f'spare=" 1 $$ $(cat {pids_file} 2>/dev/null) "; '
            'for round in 1 2 3; do for p in /proc/[0-9]*; do p=${p#/proc/}; case "$spare" in *" $p "*) ;; '
            '*) kill -9 "$p" 2>/dev/null;; esac; done; done; true')


NAME_WAIT_S = 30.0
"""How long a lost container's replacement waits for the daemon to let go of its name."""


def name_taken(exc: Exception) -> bool:
    """Docker refused to create a container because another one still has its name (409 Conflict)."""
    return getattr(getattr(exc, "response", None), "status_code", None) == 409 and "already in use" in str(exc)


def sandbox_owner() -> tuple[int, int]:
    """uid and gid the code runs as: 1000 when we are root, else our own (so copied-back files stay ours)."""
    return (SANDBOX_UID, SANDBOX_UID) if os.geteuid() == 0 else (os.getuid(), os.getgid())


def workspace_mount(cfg: SandboxConfig) -> Any:
    """/workspace: an anonymous tmpfs volume of `disk` bytes owned by the sandbox user, removed with the container.
    A volume (not HostConfig.Tmpfs) because the engine's archive API sees volumes, and not plain tmpfs mounts."""
    from docker.types import DriverConfig, Mount

    uid, gid = sandbox_owner()
    options = f"size={cfg.disk_bytes},uid={uid},gid={gid},mode=0755,nosuid,nodev"
    return Mount(target="/workspace", source=None, type="volume",
                 driver_config=DriverConfig("local", {"type": "tmpfs", "device": "tmpfs", "o": options}))


ENVIRONMENT = {
    "HOME": "/tmp", "PYTHONUNBUFFERED": "1",
    # no .pyc: a module saved twice within a second at the same size would run stale
    "PYTHONDONTWRITEBYTECODE": "1",
    # the project's root is importable from any file (tests/test_x.py imports pkg), as under pytest; a file's own
    # folder still comes first
    "PYTHONPATH": "/workspace",
    # no network: pip fails at once instead of retrying a download it cannot make
    "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
"""The environment of every sandbox."""
SANITIZERS = {"ASAN_OPTIONS": "print_legend=0:detect_leaks=1", "UBSAN_OPTIONS": "print_stacktrace=1",
              "LSAN_OPTIONS": ""}
"""With languages: AddressSanitizer reports without its shadow-byte legend and counts a leak as a failure (it names
the allocation's line); UBSan prints the stack of its finding. LSAN_OPTIONS is emptied: its `exitcode` is shared with
ASan, so exitcode=0 there let a heap overflow exit 0."""


def hardening(cfg: SandboxConfig) -> dict[str, Any]:
    """docker-py create kwargs that make the container a sandbox."""
    user = "{}:{}".format(*sandbox_owner())
    return {
        "network_mode": cfg.network,
        "mem_limit": cfg.memory,
        "memswap_limit": cfg.memory,
        "nano_cpus": int(cfg.cpus * 1e9),
        "pids_limit": cfg.pids,
        "read_only": True,
        # with languages, /tmp holds the build caches and the programs built there run: exec (/workspace is too)
        "tmpfs": {"/tmp": f"rw,{'exec,' if cfg.languages else ''}nosuid,nodev,size={cfg.tmpfs_size}"},
        "user": user,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "ipc_mode": "private",
        "environment": ENVIRONMENT,
        "mounts": [workspace_mount(cfg)],
    } | ({"environment": {**ENVIRONMENT, **SANITIZERS}} if cfg.languages else {})


class DockerExecutor:
    """Runs code blocks in one hardened container whose /workspace is copied back to the run's folder."""

    def __init__(self, cfg: SandboxConfig, workspace: Path, run_id: str | None = None, reap_folder: str | None = None):
        self.cfg = cfg
        self.deadline: float | None = None
        """When set (a time.monotonic() instant: a run's time budget), no block or command runs past it."""
        self.workspace = Path(workspace).resolve()
        self.run_id = run_id or uuid.uuid4().hex[:8]
        self.reap_folder = reap_folder
        """A temporary folder the reaper also deletes if this process dies (SandboxCodeExecutor's own work_dir)."""
        self.reaper: Any = None
        self._creating = False
        self.container: Any = None
        self.client: Any = None
        self.image_id: str | None = None
        self.image_packages: dict[str, Any] = {}
        """The declared packages the image was built with (agents/sandbox/packages.py pinned)."""
        self.image = cfg.image
        """The image the container runs: cfg.image, or a built image with more languages (resolve_image)."""
        self.counter = 0
        self._oom_kills = 0
        self._lock = threading.Lock()
        self.runner: RunnerClient | None = None
        self.warm = True
        """Blocks go to the warm runner (PID 1) until it breaks; then each block is a `docker exec`."""
        self.sync = WorkspaceSync(self.workspace, sandbox_owner(), cfg.disk_bytes, cfg.disk, cfg.copy_back_bytes,
                                  cfg.copy_back_max)
        self._put: list[str] = []
        """Files put into the container since the runner last heard of it."""
        self._files: dict[str, tuple[str, int]] = {}
        """Small host files the runner writes into /workspace with the next block (no put_archive round trip)."""
        self._fallback: list[str] | None = None
        """The block as `python3 -c code`, for when its file cannot be written (a full workspace)."""
        self._placed = True
        """Whether the last command's files reached the workspace."""
        self._full_before = False
        """Whether /workspace was full after the previous block."""
        self._changes: dict[str, Any] | None = None
        """What the last block changed in /workspace, as the runner saw it (None: unknown, compare everything)."""
        self._broken: Exception | None = None
        """Why the warm runner broke during the last block (None: it did not)."""
        self.lost = 0
        """Containers lost so far; each was replaced by a fresh one."""
        self._spare: str | None = None
        """A file in the sandbox listing the process ids a kill after the running command spares (a kernel session's
        kernel: agents/sandbox/kernel_executor.py); None: such a kill takes every process of the sandbox user."""
        self._block = False
        """The command running is a block, watched for a server (incontainer/listening.py), not a check."""
        self._server: dict[str, Any] | None = None
        """The server the last command started, as the runner saw it (None: none)."""

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        """Create the container (checks the daemon and the image first; never pulls), watched by a reaper process
        that removes it if this process dies without stop(), even by kill -9 (agents/sandbox/reaper.py)."""
        if self.container is not None:
            return
        from agents.sandbox.reaper import Reaper

        self._close_client()  # a lost container's replacement gets a new client
        self.client = docker_client()
        self.image = resolve_image(self.cfg.image, self.cfg.languages, self.client, self.cfg.debian_packages,
                                   self.cfg.packages.python, self.cfg.packages.rust)
        self.image_id = ensure_image(self.image, self.client, self.cfg.languages, python=self.cfg.packages.python,
                                     rust=self.cfg.packages.rust)
        self.image_packages = pinned(image_status(self.image, self.client).get("labels") or {})
        self.workspace.mkdir(parents=True, exist_ok=True)
        if self.reaper is None:  # before the container: no moment without a cleaner
            self.reaper = Reaper(f"{LABEL}={self.run_id}", self.reap_folder)
        labels = {LABEL: self.run_id, LABEL_PID: str(os.getpid()), LABEL_HOST: socket.gethostname(),
                  LABEL_WORKSPACE: str(self.workspace)}
        name = container_name(self.run_id)
        self._creating = True  # Ctrl-C inside the next call may leave a container the daemon made without us
        try:
            try:
                self.container = self._create(name, labels)
            except Exception as exc:
                if not name_taken(exc):
                    raise
                # our own lost container, still being removed (the daemon removes a killed container in the
                # background, slowly under load): the fresh one takes its name once it is gone
                self._await_gone(name)
                self.container = self._create(name, labels)
            self._put = self.sync.put(self.client.api, self.container.id)
            self._creating = False
        except Exception as exc:  # docker.errors.* and connection errors alike
            self._creating = False
            self._remove_failed(name)
            self._disarm()
            raise DockerUnavailable(f"could not start the sandbox container: {exc}".splitlines()[0]) from None

    def _create(self, name: str, labels: dict[str, str]) -> Any:
        return self.client.containers.run(
            self.image, command=["python3", "-c", runner_source()], detach=True, name=name,
            labels=labels, working_dir="/workspace", init=False, stdin_open=True, **hardening(self.cfg))

    def _await_gone(self, name: str, timeout: float = NAME_WAIT_S) -> None:
        """Remove the container holding `name` and wait until the daemon has let it go (at most `timeout` s)."""
        from docker.errors import NotFound

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self.client.containers.get(name).remove(force=True, v=True)
            except NotFound:
                return
            except Exception:  # "removal already in progress": wait for it
                pass
            time.sleep(0.25)

    def _remove_failed(self, name: str) -> None:
        """A container created but not started (or not filled) is removed with its volume."""
        self.container = None
        try:
            self.client.containers.get(name).remove(force=True, v=True)
        except Exception:
            pass

    def stop(self) -> None:
        """Remove the container; safe to call twice and from a signal path."""
        container = self._release()
        if container is not None:
            try:
                container.remove(force=True, v=True)  # v: the workspace volume goes with it
            except Exception:
                pass
        if self._creating:  # interrupted while the daemon created it: remove it by name, and keep the reaper
            try:           # armed, which removes what the daemon finishes creating once this process exits
                self.client.containers.get(container_name(self.run_id)).remove(force=True, v=True)
            except Exception:
                pass
            return
        self._disarm()
        self._close_client()

    def _release(self) -> Any:
        """Take the container and the runner off this executor (the runner's connection closed); the container."""
        with self._lock:
            container, self.container = self.container, None
            runner, self.runner = self.runner, None
        if runner is not None:
            runner.close()
        return container

    def _close_client(self) -> None:
        """Close the Docker client's pooled connections now: the run's objects form reference cycles, so without
        this its sockets stay open until a full garbage collection (a process running run after run, a Ray worker,
        piles them up). The client stays usable: a later call opens a new connection."""
        if self.client is not None:
            try:
                self.client.close()
            except Exception:
                pass

    def _disarm(self) -> None:
        """This process cleaned up itself: its reaper exits without doing anything."""
        reaper, self.reaper = self.reaper, None
        if reaper is not None:
            reaper.disarm()

    def describe(self) -> dict[str, Any]:
        """Kind, image, image id, the image's declared packages as built (Debian's versions, PyPI's versions and
        sha256) and limits, for the transcript."""
        return {"kind": "docker", "image": self.image, "image_id": self.image_id,
                "image_packages": self.image_packages, "container": container_name(self.run_id),
                **self.cfg.model_dump(exclude={"kind", "image"})}

    # -- execution ---------------------------------------------------------------------------
    def execute(self, code: str, language: str = "python", run: bool = True, *, bare: bool = False,
                save_only: bool = False) -> ExecResult:
        """Write the block to the host workspace (put into the container before it runs) and run it with python3, sh
        or bash (`language`); a block whose first line is `# filename: path` is saved at that path, and run only when
        it is a .py file (or a shell block's .sh file). A shell block's `pip install` gets a line on the missing
        network (agents/sandbox/offline.py). `bare`: AG2's bare `# test.py` first line names the file too;
        `save_only`: the block is saved where it would run from, and not run (AG2's execution_policies)."""
        missing = None if save_only else not_in_sandbox(code, language, self.cfg.languages, bare)
        if missing is not None:
            return missing
        placed = place_block(self.workspace, code, language, self.cfg.disk_bytes, self.cfg.disk, self._next_name,
                             self.links_on, self.cfg.languages if run and not save_only else (), bare)
        if isinstance(placed, ExecResult):  # a file only saved, or refused
            return placed
        if save_only:
            return saved_only(self.workspace, placed[0], placed[1])
        filename, language, note = placed
        # if the code filled the workspace: the run goes on from the block's text (a compiled block cannot)
        self._fallback = [*RUNNERS[language], "-c", code] if language in RUNNERS else None
        try:
            argv, how = self._argv(language, filename)
            self._block = True
            result = self._run_block(argv, filename)
        finally:
            self._fallback, self._block = None, False
        if not self._placed:
            result.output += (f"\n[codeduet: the sandbox's workspace is full (disk limit {self.cfg.disk}), so "
                              f"{filename} (saved in the run folder) could not be put in it; the block ran as "
                              f"`{RUNNERS[language][0]} -c`]")
        offline = pip_note(code, self.cfg.image) if language != "python" and self.cfg.network == "none" else ""
        result.output += f"\n{offline}" if offline else ""
        return ran_as(result, filename, language, note, how)

    def _argv(self, language: str, filename: str) -> tuple[list[str], str]:
        """The argv that runs a placed block, and a note for its output (agents/sandbox/filenames.py)."""
        return command_for("python3", language, self.workspace, filename, self.cfg.error_locals, self.cfg.sanitize)

    def _run_block(self, argv: list[str], filename: str) -> ExecResult:
        """Run a placed block's argv (a session of its own runs it in its session)."""
        return self.run_command(argv)

    def session_files(self) -> list[str] | None:
        """None: every block runs in a fresh process (a kernel session: agents/sandbox/kernel_executor.py)."""
        return None

    def restore(self, files: list[str]) -> None:
        """Nothing: no state lives on between blocks here."""

    def _session_lost(self) -> None:
        """The container was lost: a session of its own forgets its state (nothing here)."""

    def _next_name(self, language: str) -> str:
        """The next throwaway file name: block01.py, block02.sh, block03.c, ..."""
        self.counter += 1
        return block_name(language, self.counter)

    def links_on(self, path: str) -> list[str]:
        """The components of a workspace path that are symlinks in the container (links are never copied back)."""
        self.start()
        parts = path.split("/")
        prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        script = 'for p; do [ -L "/workspace/$p" ] && echo "$p"; done; true'
        try:
            _, raw = self.container.exec_run(["sh", "-c", script, "sh", *prefixes], user=hardening(self.cfg)["user"])
        except Exception:  # the container is gone: nothing is written there either
            return []
        return [line for line in raw.decode("utf-8", errors="replace").splitlines() if line in prefixes]

    def run_command(self, argv: list[str], timeout: float | None = None) -> ExecResult:
        """Run argv in /workspace with `timeout`; kill every sandbox process when it is exceeded; then copy what
        it wrote back to the host folder."""
        self.start()
        replaced = self._replace_if_gone()
        limit = clamp(timeout or self.cfg.timeout, self.deadline)
        cmd, fallback = (["timeout", "-k", "1", "-s", "TERM", f"{limit:g}", *a] if a else None
                         for a in (argv, self._fallback))
        out = BoundedOutput(self.cfg.output_limit)
        out.write(replaced)
        started = time.perf_counter()
        self._changes, self._broken, self._server, lost = None, None, None, None
        try:
            self._placed = self._sync_in(inline=self.warm)
            exit_code = self._run_warm(cmd, limit, out, fallback) if self.warm else None
            if exit_code is None:
                self._placed = self._sync_in(inline=False)
                exit_code = self._run_exec(cmd if self._placed or not fallback else fallback, limit, out)
        except Exception:  # the container went away under the block, or the daemon did
            lost = self._lost_state()
            if lost is None:
                raise
            exit_code = None
        if lost is None and (self._broken is not None or exit_code is None):
            lost = self._lost_state()
        if lost is not None:
            return self._lost_block(lost, out, time.perf_counter() - started)
        if self._broken is not None:
            out.write(BROKEN if isinstance(self._broken, RunnerBroken) else f"\n[codeduet: {self._broken}]")
        duration = time.perf_counter() - started
        timed_out = exit_code == 124 or (exit_code in (137, None) and duration >= limit)
        server = served(self._server, timed_out, duration)
        timed_out = timed_out and server is None  # a server stopped at the limit is a server, not a time-out
        # a block a session's client stopped at the limit (a kernel's) says so itself; what it started in the
        # background goes, the session's processes stay (when it did not stop, the client killed it)
        session_stopped = self._spare is not None and exit_code == 124
        if timed_out or exit_code is None or server is not None:
            self._kill_all(spare=self._spare if server is not None or session_stopped else None)
            exit_code = 124 if exit_code is None else exit_code
        oom = exit_code != 0 and not timed_out and (
            (exit_code == 137 and self._new_oom_kill()) or "MemoryError" in out.text()[-2000:])
        text = out.text()
        if server is not None:
            text += f"\n[codeduet: {server_line(server)}; every process of the block was stopped]"
        elif timed_out and not session_stopped:
            text += f"\n[codeduet: timed out after {limit:g} s; every process of the block was killed]"
        elif timed_out:
            text += f"\n[codeduet: timed out after {limit:g} s]"
        elif oom:
            text += f"\n[codeduet: killed: the memory limit ({self.cfg.memory}) was hit]"
        report = self.copy_back()
        full_now = self._disk_full(text)
        # tagged only on the block that hit the limit: filled it, or was refused a write (the workspace was full
        # already); a block that ran fine in a workspace still full is not
        disk_full = full_now and (not self._full_before or any(marker in text for marker in NO_SPACE))
        self._full_before = full_now
        if disk_full:
            text += (f"\n[codeduet: the workspace disk limit ({self.cfg.disk}) was hit: /workspace is full, writes "
                     f"fail with 'No space left on device']")
        for note in report.notes():
            text += "\n" + note
        return ExecResult(exit_code=exit_code, output=text, duration_s=round(duration, 4), timed_out=timed_out,
                          truncated=out.truncated, oom_killed=oom, disk_full=disk_full, server=server)

    # -- a container that went away (agents/sandbox/lost.py) ------------------------------------
    def _lost_state(self) -> str | None:
        """What happened to the container when it no longer runs blocks; None when it runs, or was stopped here."""
        container = self.container
        return None if container is None else lost_state(self.client.api, container.id, self.cfg.memory)

    def _replace_if_gone(self) -> str:
        """Before a block: if the container went away since the last one (its runner's stream ended, or, before
        the first block, the daemon no longer knows it), start a fresh one; return the line saying so."""
        runner = self.runner
        if (runner is not None and not runner.ended()) or (runner is None and not self.warm):
            return ""  # alive; or in docker exec mode, where a lost container shows in the block's own run
        lost = self._lost_state()
        if lost is None:
            return ""
        self._discard(lost)
        self.start()
        return between_blocks(lost)

    def _lost_block(self, lost: str, out: BoundedOutput, duration: float) -> ExecResult:
        """The report of a block whose container went away under it; the next block gets a fresh container."""
        self._discard(lost)
        return ExecResult(exit_code=125, output=out.text() + under_block(lost), duration_s=round(duration, 4),
                          truncated=out.truncated, sandbox_lost=lost)

    def _discard(self, lost: str) -> None:
        """Forget the lost container (removed; unpaused first if paused); the host folder, complete after every
        finished block, fills the next one. SandboxLost when this has happened LOST_MAX times."""
        container = self._release()
        if container is not None:
            remove_lost(container)
        self.warm, self._put, self._files, self._changes = True, [], {}, None
        self._session_lost()
        self._full_before, self._oom_kills = False, 0
        self.sync.synced.clear()  # the fresh container gets every file of the host folder
        self.lost += 1
        check_count(self.lost, lost)

    def _sync_in(self, inline: bool) -> bool:
        """Send the host files written since the last block into the container: small ones with the runner's next
        request (`inline`), else one put_archive. False when the workspace is full."""
        from docker.errors import APIError

        changed = self.sync.changed()
        if not changed:
            return True
        files = self.sync.inline(changed) if inline else None
        if files is not None:
            self._files.update(files)
            return True
        try:
            self._put += self.sync.put(self.client.api, self.container.id, changed)
        except APIError as exc:
            if "no space left on device" not in str(exc).lower():
                raise
            return False
        return True

    def copy_back(self) -> CopyReport:
        """Bring what the last command wrote into the host folder (everything, when the runner could not say)."""
        container = self.container
        if container is None:  # removed meanwhile (Ctrl-C): nothing to bring back
            return self.sync.new_report()
        return self.sync.copy_back(self.client.api, container.id, self._changes)

    def _disk_full(self, text: str) -> bool:
        """The runner saw /workspace full after the block (or, when it could not say, ENOSPC in the output)."""
        if self._changes is None or self._changes.get("free") is None:
            return any(marker in text for marker in NO_SPACE)
        free, total = self._changes.get("free"), self._changes.get("total")
        return isinstance(free, int) and isinstance(total, int) and free < min(1 << 16, max(total, 1) // 100)

    def _run_warm(self, cmd: list[str], limit: float, out: BoundedOutput, fallback: list[str] | None) -> int | None:
        """Through the warm runner; None when it is unusable before the block started (use docker exec)."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        received = False

        def write(data: bytes) -> None:
            nonlocal received
            received = True
            out.write(decoder.decode(data))

        files: dict[str, tuple[str, int]] = {}
        try:
            if self.runner is None:
                self.runner = RunnerClient(self.client.api, self.container.id)
            put, self._put, files, self._files = self._put, [], self._files, {}
            spare = {"spare": self._spare} if self._spare else {}
            watch = {"server": self.cfg.server_seconds} if self._block else {}
            code, answer = self.runner.run(cmd, limit + 3, write,
                                           {"put": put, "files": files, "fallback": fallback, **spare, **watch})
            self._server = answer.get("server") if isinstance(answer.get("server"), dict) else None
            changes = answer.get("changes")
            self._changes = changes if isinstance(changes, dict) else None
            self._placed = self._placed and answer.get("placed") is not False
            out.write(decoder.decode(b"", final=True))
            return code
        except Exception as exc:  # RunnerBroken, or the attach itself failed
            self._drop_runner()
            self._kill_all()
            if not received and self.container is not None:
                for path in [*files, *self._files]:  # maybe never written: docker exec's put_archive sends them
                    self.sync.synced.pop(path, None)
                self._files = {}
                return None  # nothing of the block came back: run it with docker exec
            self._broken = exc  # said after the block, unless the container itself is gone
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

    def _kill_all(self, spare: str | None = None) -> None:
        """SIGKILL every process of the sandbox user except PID 1 (the runner), and those whose ids the file `spare`
        lists (a kernel's)."""
        container = self.container
        if container is None:
            return
        try:
            script = kill_all_but(spare) if spare else "kill -9 -1"
            container.exec_run(["sh", "-c", script], user=hardening(self.cfg)["user"])
        except Exception:
            pass
