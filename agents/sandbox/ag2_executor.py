"""Our hardened sandbox as an AG2 `CodeExecutor`, for any AG2 agent:
`UserProxyAgent("proxy", code_execution_config={"executor": SandboxCodeExecutor()})`.

Built on the public API of DockerExecutor (container, warm runner, limits, bounded output, labels, and how our own
loop runs a block of each language). Deliberate differences from AG2's DockerCommandLineCodeExecutor are listed in
docs/SANDBOX.md ("The sandbox in your own AG2 agents"); AG2's own executor tests, case by case, in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import atexit
import math
import shutil
import tempfile
import uuid
from pathlib import Path
from types import TracebackType
from typing import ClassVar

from autogen.code_utils import TIMEOUT_MSG
from autogen.coding.base import CodeBlock, CodeExecutor, CodeExtractor, CommandLineCodeResult
from autogen.coding.markdown_code_extractor import MarkdownCodeExtractor

from agents.loop.codeblocks import ALIASES, SHELL
from agents.loop.codeblocks import CodeBlock as Block
from agents.loop.errors import BadInputError, DockerUnavailable, WorkDirTooLarge
from agents.record.run_folder import container_name
from agents.sandbox import executor_class
from agents.sandbox.archive import human, regular_files
from agents.sandbox.config import SandboxConfig
from agents.sandbox.docker_executor import DockerExecutor
from agents.sandbox.filenames import declared_filename
from agents.sandbox.languages import NAMES
from agents.scenario.yamlio import validate

REFUSED = "Unsupported language {language!r}: this sandbox runs {runs} blocks, nothing was executed{hint}\n"
HINT = "; SandboxCodeExecutor(languages=[{name!r}]) runs them in an image that has its toolchain"
PAGE = 4096
"""A file takes whole pages of the /workspace tmpfs (a 10-byte file takes 4 KiB)."""


def policy_key(tag: str) -> str:
    """The `execution_policies` key of a fence tag: python for its spellings (py, Python), a shell's own tag,
    a language's name (c++ -> cpp, js -> javascript), else the tag itself (html, css)."""
    tag = tag.strip().lower()
    runner = ALIASES.get(tag)
    return tag if tag in SHELL or runner is None else runner


def folder_size(folder: Path) -> tuple[int, int, int]:
    """(bytes, files, tmpfs bytes: whole pages) of the regular files below `folder`, as they are copied in."""
    size = files = pages = 0
    for _, st in regular_files(folder):
        size, files, pages = size + st.st_size, files + 1, pages + math.ceil(st.st_size / PAGE)
    return size, files, pages * PAGE


class SandboxCodeExecutor(CodeExecutor):
    """Runs the blocks of AG2 messages in one hardened codeduet container (network off, limits, non-root): Python
    and shell, and C, C++, Go, Rust and JavaScript when `languages` names them."""

    DEFAULT_EXECUTION_POLICY: ClassVar[dict[str, bool]] = {
        "python": True, "bash": True, "sh": True, "shell": True, "console": True, **dict.fromkeys(NAMES, True),
        "html": False, "css": False}
    """AG2's switch per language: True runs its blocks, False only saves them. A language the sandbox lacks is not
    run either way (its block is refused, or saved when it names its file)."""

    def __init__(self, image: str | None = None, timeout: float | None = None, work_dir: Path | str | None = None,
                 *, languages: list[str] | str | None = None, execution_policies: dict[str, bool] | None = None,
                 memory: str | None = None, cpus: float | None = None, pids: int | None = None,
                 output_limit: int | None = None, tmpfs_size: str | None = None, disk: str | None = None):
        """Start the container now (fails fast on a missing daemon or image; never pulls).

        None takes the scenario default (agents/sandbox/config.py SandboxConfig): `languages` (c, cpp, go, rust,
        javascript) picks the image that has them and the larger limits a compiler needs, as a scenario's
        `sandbox.languages` does. There is no network argument: the container has no network. work_dir (default: a
        fresh temporary folder, deleted by stop()) is copied into /workspace, a tmpfs of `disk` bytes, and kept in
        step with it; the sandbox may change it, so give it a folder of its own, not your project.
        `execution_policies` updates DEFAULT_EXECUTION_POLICY, as in AG2's command-line executors.
        """
        given = {"image": image, "timeout": timeout, "memory": memory, "cpus": cpus, "pids": pids,
                 "output_limit": output_limit, "tmpfs_size": tmpfs_size, "disk": disk, "languages": languages}
        self.config: SandboxConfig = validate(SandboxConfig, {k: v for k, v in given.items() if v is not None},
                                              type(self).__name__, {})
        self.execution_policies: dict[str, bool] = {**self.DEFAULT_EXECUTION_POLICY,
                                                    **self._policies(execution_policies or {})}
        """Which languages run (True) or are only saved (False), by policy_key."""
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
        """Run the blocks in order, Python with python3, `sh`/`shell` with sh, `bash` with bash (as AG2 does), a
        language's block built and run as our own loop runs it (agents/sandbox/languages.py); a block whose language's
        policy is False is only saved. The first failing or refused block stops the rest (as in AG2)."""
        if not code_blocks:
            raise ValueError("No code blocks to execute.")
        outputs: list[str] = []
        files: list[str] = []
        exit_code = 0
        for block in code_blocks:
            ours = Block(block.language.lower(), block.code)  # AG2's `# filename:` (and `# test.py`): saved there
            key = policy_key(block.language)
            runs = self.execution_policies.get(key, False)
            refused = self._refused(ours, saves=key in self.execution_policies and not runs)
            if refused:
                outputs.append(refused)
                exit_code = 1
                break
            sandbox = self._running()
            result = sandbox.execute(ours.script, ours.runnable_as or ("python" if runs else key), bare=True,
                                     save_only=not runs)
            self._blocks = sandbox.counter
            if result.filename:
                files.append(str(sandbox.workspace / result.filename))
            # a timeout reads as in AG2: exit code 124 (even when SIGKILL was needed) and its marker line
            outputs.append(f"{result.output}\n{TIMEOUT_MSG}" if result.timed_out else
                           f"{result.output}\n" if result.saved_only else result.output)
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
        """The host folder kept in step with /workspace; code files are saved there as block01.py, block02.c, ...,
        or at the path a block's first line names (`# filename: path`, or AG2's bare `# test.py`)."""
        return self._work_dir

    @property
    def image(self) -> str:
        """The image the container runs: `image`, or the built image that has the `languages` (as a scenario's)."""
        return self._sandbox.image if self._sandbox is not None else self.config.image

    @property
    def container_name(self) -> str | None:
        """Name of the running container, None when stopped."""
        return container_name(self.run_id) if self._sandbox is not None else None

    def _refused(self, ours: Block, saves: bool) -> str | None:
        """The output line of a block neither run nor saved (its language runs nowhere here, or lacks its toolchain,
        and it names no file), else None. A block whose policy `saves` is saved as AG2 saves it, named or not."""
        lacking = ours.runnable_as in NAMES and ours.runnable_as not in self.config.languages
        if saves or (ours.runnable_as is not None and not lacking) or declared_filename(ours.code, bare=True):
            return None
        kinds = ", ".join(["python", "shell (bash, sh, shell)", *self.config.languages])
        return REFUSED.format(language=ours.language, runs=kinds,
                              hint=HINT.format(name=ours.runnable_as) if lacking else "")

    def _policies(self, given: dict[str, bool]) -> dict[str, bool]:
        """`execution_policies` by policy_key; an unknown language or a value that is not a bool is one line."""
        out = {}
        for tag, value in given.items():
            key = policy_key(str(tag))
            if key not in self.DEFAULT_EXECUTION_POLICY:
                raise BadInputError(f"{type(self).__name__}: execution_policies: {tag!r} is not a language this "
                                    f"sandbox knows ({', '.join(self.DEFAULT_EXECUTION_POLICY)})")
            if not isinstance(value, bool):
                raise BadInputError(f"{type(self).__name__}: execution_policies: {tag!r}: {value!r} is neither True "
                                    "(run its blocks) nor False (save them only)")
            out[key] = value
        return out

    def _too_large(self, size: int, files: int, pages: int) -> WorkDirTooLarge:
        """The one line for a work_dir that does not fit in /workspace (`pages`: what its files take there)."""
        fits = f"{math.ceil(pages * 1.25 / 2 ** 20) + 16}m"
        return WorkDirTooLarge(
            f"{type(self).__name__}: work_dir {self._work_dir.resolve()} holds {human(size)} in {files:,} files, which "
            f"does not fit in the sandbox's /workspace (disk={self.config.disk}), where it is copied; give the "
            f"executor a folder of its own (work_dir=None: a fresh temporary one) or a bigger disk "
            f"(disk=\"{fits}\", which lives in RAM)")

    def _start(self) -> None:
        """Check that work_dir fits in /workspace, start the watchdog, then the container; register the
        interpreter-exit cleanup."""
        self._work_dir.mkdir(exist_ok=True)
        size, files, pages = folder_size(self._work_dir)
        if pages > self.config.disk_bytes:
            raise self._too_large(size, files, pages)
        # its reaper also deletes a work_dir of our own if this process is killed
        sandbox = executor_class(self.config)(self.config, self._work_dir, self.run_id,  # a kernel session's too
                                              reap_folder=str(self._work_dir) if self._own_dir else None)
        sandbox.counter = self._blocks  # block files keep their numbers across restarts
        try:
            sandbox.start()
        except DockerUnavailable as exc:  # copied in, it still filled /workspace (folders take pages too)
            sandbox.stop()
            if "no space left on device" in str(exc).lower():
                raise self._too_large(size, files, pages) from None
            raise
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
