"""A live Python session in our hardened sandbox as an AG2 `CodeExecutor`, the stateful counterpart of
SandboxCodeExecutor (agents/sandbox/ag2_executor.py):
`UserProxyAgent("proxy", code_execution_config={"executor": SandboxKernelExecutor()})`.

The Python blocks of every message run in the sandbox's kernel (agents/sandbox/kernel.py, the one `codeduet chat`
uses): variables, imports and loaded data persist between blocks and messages, a block's last expression shows its
value, and the figures a block shows or leaves open are saved as PNG under figures/. It answers as AG2's Jupyter
executors do (`execute_code_blocks` returns an `IPythonCodeResult` whose `output_files` are the images the blocks
made; `restart()` starts a fresh session). Shell blocks run as processes in the same container, as in the kernel
sessions of our own loop; every other block is handled as SandboxCodeExecutor handles it. The container, its limits,
its cleanup and its arguments are SandboxCodeExecutor's.
"""

from __future__ import annotations

import shutil

from autogen.coding.base import CodeBlock, IPythonCodeResult

from agents.feedback.figures import describe, figures_of
from agents.feedback.prompts import render
from agents.feedback.workspace_view import changes, snapshot
from agents.sandbox.ag2_executor import SandboxCodeExecutor
from agents.sandbox.kernel import KERNEL_DIR, VALUES_DIR


class SandboxKernelExecutor(SandboxCodeExecutor):
    """Runs the Python blocks of AG2 messages in one live interpreter inside a hardened codeduet container (network
    off, limits, non-root, read-only root), so state persists between messages, as in AG2's Jupyter executors."""

    def execute_code_blocks(self, code_blocks: list[CodeBlock]) -> IPythonCodeResult:  # type: ignore[override]
        """Run the blocks in order (Python in the kernel, shell blocks as processes); the first failing block stops
        the rest. A block cut at its time limit exits 124 with AG2's timeout line: the kernel is interrupted and
        keeps its variables, or, when the block ignores the interrupt, is killed and the output says the next block
        starts a fresh one. Each image the blocks made is named under the output in AG2's words (`Image data saved
        to PATH`, with its size and title) and listed in `output_files` (absolute host paths, as in AG2)."""
        before = snapshot(self.work_dir)
        result = super().execute_code_blocks(code_blocks)
        # the tables the kernel writes for our own page (a DataFrame value): its text is in the output already
        shutil.rmtree(self.work_dir / VALUES_DIR, ignore_errors=True)
        try:
            (self.work_dir / KERNEL_DIR).rmdir()
        except OSError:
            pass
        figures = [{**f, "path": str(self.work_dir / f["path"])}
                   for f in figures_of(self.work_dir, changes(before, snapshot(self.work_dir)))]
        # AG2's words for an image, with what was drawn (the model never sees the pixels)
        lines = [render("image_saved", figure=describe(f)) for f in figures]
        output = "\n".join([result.output.rstrip("\n"), *lines]).lstrip("\n") + "\n" if lines else result.output
        return IPythonCodeResult(exit_code=result.exit_code, output=output, output_files=[f["path"] for f in figures])

    def restart(self) -> None:
        """A fresh session: the container is replaced, so the kernel and every variable, import and process of
        earlier blocks are gone; work_dir keeps its files (figures included)."""
        super().restart()

    def _start(self) -> None:
        """SandboxCodeExecutor's container, its Python blocks in the kernel (sandbox.session kernel)."""
        if self.config.session != "kernel":
            self.config = self.config.model_copy(update={"session": "kernel"})
        super()._start()
