"""Acceptance checks, run after every execution of a reply (whatever its exit code): they decide success.

Each kind is one class: its key (the YAML schema) and its `evaluate`; `@CHECKS.register` makes a scenario accept it.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from agents.config import Kinds, Pattern, Strict
from agents.protocols import ExecResult, Executor
from agents.sandbox.filenames import CHECKS_DIR
from agents.sandbox.safe_write import write_new_file

if TYPE_CHECKING:
    from agents.scenario import Scenario

CHECKS = Kinds()
"""Every check kind by its key."""


@dataclass
class CheckResult:
    """One check's verdict and why."""

    name: str
    passed: bool
    detail: str = ""

    def to_dict(self) -> dict[str, object]:
        """Plain dict for transcripts."""
        return asdict(self)


class CheckKind(Strict):
    """One kind of check: its only field is its key; `evaluate` judges the last execution and the workspace."""

    def label(self) -> str:
        """`stdout_contains: "24966"` style label."""
        key, value = next(iter(self.model_dump().items()))
        return f"{key}: {value!r}"

    def evaluate(self, last: ExecResult, executor: Executor, base_dir: Path) -> tuple[bool, str]:
        """(passed, why not) for this execution; base_dir is the scenario's folder."""
        raise NotImplementedError


class OutputCheck(CheckKind):
    """A check of the program's output: passes only on the output of a run that exited 0 (or of a command-line tool
    printing its usage)."""

    def evaluate(self, last: ExecResult, executor: Executor, base_dir: Path) -> tuple[bool, str]:
        """The output judged by `judge`, unless the block failed."""
        if last.exit_code != 0 and not last.usage:
            # a crash's output holds its traceback (the failing line, its variables): it is not the program's output
            return False, (f"the last block failed (exit code {last.exit_code}), so its output is not judged: the "
                           "output must come from a run that exits 0")
        return self.judge(last.output)

    def judge(self, output: str) -> tuple[bool, str]:
        """(passed, why not) for this output."""
        raise NotImplementedError


@CHECKS.register
class StdoutContains(OutputCheck):
    """stdout of the last execution contains this text."""

    stdout_contains: str

    def judge(self, output: str) -> tuple[bool, str]:
        """The text is in the output."""
        ok = self.stdout_contains in output
        return ok, "" if ok else (f"expected the output to contain "
                                  f"{self.stdout_contains!r}{closest_line(output, self.stdout_contains)}")


@CHECKS.register
class StdoutRegex(OutputCheck):
    """stdout of the last execution matches this regex."""

    stdout_regex: Pattern

    def judge(self, output: str) -> tuple[bool, str]:
        """The regex is found in the output (re.search)."""
        ok = re.search(self.stdout_regex, output) is not None
        literal = re.sub(r"\\[a-zA-Z]|[\\^$.|?*+()\[\]{}]", " ", self.stdout_regex)
        return ok, "" if ok else f"expected the output to match /{self.stdout_regex}/{closest_line(output, literal)}"


@CHECKS.register
class FileExists(CheckKind):
    """A file exists in the run's workspace (path relative to it)."""

    file_exists: str

    def evaluate(self, last: ExecResult, executor: Executor, base_dir: Path) -> tuple[bool, str]:
        """The file is in the workspace (whatever the exit code)."""
        workspace, rel = executor.workspace, self.file_exists
        target = (workspace / rel).resolve()
        inside = target == workspace.resolve() or workspace.resolve() in target.parents
        ok = inside and target.exists()
        return ok, "" if ok else f"the script did not write {rel!r}: the task needs that file in the current directory"


@CHECKS.register
class PytestCheck(CheckKind):
    """A pytest file (relative to the scenario file) run inside the sandbox against the workspace."""

    pytest: str

    def label(self) -> str:
        """Named by its file alone and called hidden: named by its path (`checks/test_x.py`), the model wrote a file
        of its own there."""
        return f"pytest (hidden tests): {PurePosixPath(self.pytest).name!r}"

    def evaluate(self, last: ExecResult, executor: Executor, base_dir: Path) -> tuple[bool, str]:
        """The tests pass in the sandbox (whatever the exit code)."""
        source = base_dir / self.pytest
        # fresh copy each time: the code under test cannot tamper with it, nor redirect it with a symlink
        write_new_file(executor.workspace, f"{CHECKS_DIR}/{source.name}", source.read_text(encoding="utf-8"))
        result = executor.run_command(["python3", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                                       "--no-header", "-rN", f"{CHECKS_DIR}/{source.name}"])
        ok = result.exit_code == 0
        return ok, "" if ok else _pytest_summary(result.output)


Check = CHECKS.union()


def run_checks(scenario: Scenario, executor: Executor, last: ExecResult) -> list[CheckResult]:
    """Evaluate every check of the scenario against the last execution and the workspace. An output check passes
    only on the output of a run that exited 0 (or of a command-line tool printing its usage); a file or pytest
    check judges the workspace, whatever the exit code."""
    return [CheckResult(check.label(), *check.evaluate(last, executor, scenario.base_dir)) for check in scenario.checks]


def closest_line(output: str, expected: str) -> str:
    """'; the closest output line is: ...' (expected and actual side by side), or '' when there is no output."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    if not lines:
        return "; the output was empty"
    target = " ".join(expected.split()).lower()
    best = max(lines, key=lambda ln: difflib.SequenceMatcher(None, ln.lower(), target).ratio())
    return f"; the closest output line is {best[:200]!r}"


def _pytest_summary(output: str, limit: int = 1500) -> str:
    lines = [ln for ln in output.splitlines() if ln.strip() and not set(ln.strip()) <= set("=_-.")]
    # the test's own failing line (the first ">"), then the error lines; frames inside libraries say nothing useful
    first = next((ln for ln in lines if ln.startswith(">")), None)
    keep = [ln for ln in lines if ln is first or ln.startswith(("E ", "FAILED", "ERROR"))
            or ("assert" in ln and not ln.startswith(">"))]
    text = "\n".join(keep or lines[-15:])
    return text[-limit:]
