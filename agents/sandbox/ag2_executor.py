"""Our hardened sandbox as an AG2 `CodeExecutor`, for any AG2 agent:
`UserProxyAgent("proxy", code_execution_config={"executor": SandboxCodeExecutor()})`.

Built on the public API of DockerExecutor (container, warm runner, limits, bounded output, labels). Deliberate
differences from AG2's DockerCommandLineCodeExecutor are listed in the README ("Use the sandbox in your own
AG2 agents").
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import uuid
from pathlib import Path
from types import TracebackType

from autogen.code_utils import TIMEOUT_MSG
from autogen.coding.base import CodeBlock, CodeExecutor, CodeExtractor, CommandLineCodeResult
from autogen.coding.markdown_code_extractor import MarkdownCodeExtractor

from agents.codeblocks import CodeBlock as Block
from agents.run_folder import container_name
from agents.sandbox.config import SandboxConfig
from agents.sandbox.docker_executor import DockerExecutor
from agents.yamlio import validate

REFUSED = ("Unsupported language {language!r}: this sandbox runs python and shell (bash, sh, shell) blocks only, "
           "nothing was executed\n")


class SandboxCodeExecutor(CodeExecutor):
    """Runs the Python and shell blocks of AG2 messages in one hardened codeduet container (network off, limits,
    non-root)."""

    def __init__(self, image: str | None = None, timeout: float | None = None, work_dir: Path | str | None = None,
                 *, memory: str | None = None, cpus: float | None = None, pids: int | None = None,
                 output_limit: int | None = None, tmpfs_size: str | None = None):
        """Start the container now (fails fast on a missing daemon or image; never pulls).

        None takes the scenario default (agents/sandbox/config.py SandboxConfig). There is no network argument: the
        container has no network. work_dir (default: a fresh temporary folder, deleted by stop()) is mounted
        at /workspace and the sandbox may change it; give it a folder of its own, not your project.
        """
        given = {"image": image, "timeout": timeout, "memory": memory, "cpus": cpus, "pids": pids,
                 "output_limit": output_limit, "tmpfs_size": tmpfs_size}
        self.config: SandboxConfig = validate(SandboxConfig, {k: v for k, v in given.items() if v is not None},
                                              "SandboxCodeExecutor", {})
        self._own_dir = work_dir is None
        self._work_dir = Path(tempfile.mkdtemp(prefix="codeduet-ag2-")) if work_dir is None else Path(work_dir)
        self._work_dir.mkdir(exist_ok=True)  # like AG2: a missing parent raises FileNotFoundError
        self.run_id = f"ag2-{uuid.uuid4().hex[:8]}"
        """The value of the `org.codeduet.run` label on the container (`sandbox clean` finds it)."""
        self._sandbox: DockerExecutor | None = None
        self._blocks = 0
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    # -- the AG2 CodeExecutor interface -------------------------------------------------------
    @property
    def code_extractor(self) -> CodeExtractor:
        """AG2's Markdown extractor (```lang fences), as in AG2's own executors."""
        return MarkdownCodeExtractor()

    def execute_code_blocks(self, code_blocks: list[CodeBlock]) -> CommandLineCodeResult:
        """Run the blocks in order, Python with python3, `sh`/`shell` with sh, `bash` with bash (as AG2 does); the
        first failing or refused block stops the rest (as in AG2)."""
        if not code_blocks:
            raise ValueError("No code blocks to execute.")
        outputs: list[str] = []
        files: list[str] = []
        exit_code = 0
        for block in code_blocks:
            ours = Block(block.language.lower(), block.code)  # AG2's `# filename:`: saved there, run if .py or .sh
            if ours.runnable_as is None and ours.filename is None:
                outputs.append(REFUSED.format(language=block.language))
                exit_code = 1
                break
            sandbox = self._running()
            result = sandbox.execute(ours.script, ours.runnable_as or "python")
            self._blocks = sandbox.counter
            if result.filename:
                files.append(str(sandbox.workspace / result.filename))
            # a timeout reads as in AG2: exit code 124 (even when SIGKILL was needed) and its marker line
            outputs.append(f"{result.output}\n{TIMEOUT_MSG}" if result.timed_out else result.output)
            exit_code = 124 if result.timed_out else result.exit_code
            if exit_code != 0:
                break
        return CommandLineCodeResult(exit_code=exit_code, output="".join(outputs),
                                     code_file=files[0] if files else None)

    def restart(self) -> None:
        """Replace the container by a fresh one (no process of earlier blocks survives, /tmp is empty);
        work_dir keeps its files."""
        self._stop_container()
        self._start()

    # -- lifecycle ---------------------------------------------------------------------------
    def stop(self) -> None:
        """Remove the container (and the temporary work_dir this executor created); safe to call twice."""
        self._stop_container()
        if self._own_dir:
            shutil.rmtree(self._work_dir, ignore_errors=True)

    def __enter__(self) -> SandboxCodeExecutor:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    @property
    def timeout(self) -> float:
        """Seconds per block; every process of the block is killed at the limit."""
        return self.config.timeout

    @property
    def work_dir(self) -> Path:
        """The host folder kept in step with /workspace; code files are saved there as block01.py, block02.py, ...,
        or at the path a block's first line names (`# filename: path`)."""
        return self._work_dir

    @property
    def container_name(self) -> str | None:
        """Name of the running container, None when stopped."""
        return container_name(self.run_id) if self._sandbox is not None else None

    def _start(self) -> None:
        """Start the watchdog, then the container; register the interpreter-exit cleanup."""
        self._work_dir.mkdir(exist_ok=True)
        # its reaper also deletes a work_dir of our own if this process is killed
        sandbox = DockerExecutor(self.config, self._work_dir, self.run_id,
                                 reap_folder=str(self._work_dir) if self._own_dir else None)
        sandbox.counter = self._blocks  # block files keep their numbers across restarts
        try:
            sandbox.start()
        except BaseException:
            sandbox.stop()
            raise
        self._sandbox = sandbox
        atexit.register(self.stop)

    def _running(self) -> DockerExecutor:
        """The container, started again if stop() removed it."""
        if self._sandbox is None:
            self._start()
        assert self._sandbox is not None
        return self._sandbox

    def _stop_container(self) -> None:
        atexit.unregister(self.stop)
        sandbox, self._sandbox = self._sandbox, None
        if sandbox is not None:
            sandbox.stop()
