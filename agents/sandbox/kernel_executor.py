"""`sandbox.session: kernel` as an executor of its own: the hardened container of agents/sandbox/docker_executor.py,
whose Python blocks run in one live interpreter (agents/sandbox/kernel.py), so a variable, an import or a loaded
DataFrame one block made is there for the next. Shell blocks, test files, package modules and other languages run
as processes, as in a process session.

The session's state is the list of files its kernel has run since it started (`session_files`); `restore` rebuilds
it in another sandbox by running them again (a turn's candidates, a resumed run). make_executor picks this class
for a kernel session (agents/sandbox/__init__.py); nothing above the executor asks which session it has."""

from __future__ import annotations

from agents.loop.protocols import ExecResult
from agents.sandbox.docker_executor import DockerExecutor
from agents.sandbox.filenames import runs_as_script
from agents.sandbox.kernel import KERNEL_PIDS, in_kernel, kernel_argv, kernel_history

KERNEL_INTERRUPTED = "interrupted at the block's time limit (the KeyboardInterrupt above)"
"""What the kernel's client says of a block it interrupted (agents/sandbox/kernel.py): for a server, said otherwise."""


class KernelExecutor(DockerExecutor):
    """A docker sandbox whose Python scripts run in its live kernel."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.kernel_files: list[str] = []
        """The files run in the kernel since it last started, in order."""

    def _argv(self, language: str, filename: str) -> tuple[list[str], str]:
        if language == "python" and runs_as_script(self.workspace, filename):
            return kernel_argv("python3", filename, self.cfg.error_locals), ""
        return super()._argv(language, filename)

    def _run_block(self, argv: list[str], filename: str) -> ExecResult:
        return self._run_in_kernel(argv, filename) if in_kernel(argv) else super()._run_block(argv, filename)

    def _run_in_kernel(self, argv: list[str], filename: str) -> ExecResult:
        """Run a kernel client's argv: a kill after it spares the kernel; the files it has run are kept."""
        self._spare = KERNEL_PIDS
        try:
            result = self.run_command(argv)
        finally:
            self._spare = None
        if result.server is not None:  # the kernel's client was stopped as the block is at its limit
            result.output = result.output.replace(KERNEL_INTERRUPTED, "stopped as a server is (the KeyboardInterrupt "
                                                                      "above)")
        self.kernel_files = kernel_history(self.kernel_files, filename, result)
        return result

    def session_files(self) -> list[str] | None:
        return list(self.kernel_files)

    def restore(self, files: list[str]) -> None:
        for filename in files:
            self._run_in_kernel(kernel_argv("python3", filename, self.cfg.error_locals), filename)

    def _session_lost(self) -> None:
        self.kernel_files = []
