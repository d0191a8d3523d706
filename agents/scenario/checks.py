"""Acceptance checks, run after every execution of a reply (whatever its exit code): they decide success.

Each kind is one class: its key (the YAML schema) and its `evaluate`; `@CHECKS.register` makes a scenario accept it.
"""

from __future__ import annotations

import difflib
import re
import shlex
from pathlib import Path, PurePosixPath

from pydantic import Field

from agents.feedback.compiler_output import summarize
from agents.loop.protocols import ExecResult, Executor
from agents.sandbox.filenames import CHECKS_DIR
from agents.sandbox.safe_write import write_new_file
from agents.scenario.check_kinds import CHECKS, NOT_JUDGED, CheckKind, CheckResult, Verdict
from agents.scenario.schema import Pattern
from agents.scenario.testrunners import TestReport, parse_tests, tests_summary


class OutputCheck(CheckKind):
    """A check of the program's output: passes only on the output of a run that exited 0 (or of a command-line tool
    printing its usage)."""

    def evaluate(self, last: ExecResult, executor: Executor, base_dir: Path) -> tuple[bool, str]:
        """The output judged by `judge`, unless the block failed."""
        if last.exit_code != 0 and not last.usage and not last.server:
            # a crash's output holds its traceback (the failing line, its variables): it is not the program's output
            return False, not_judged(last.exit_code)
        return self.judge(last.output)

    def judge(self, output: str) -> tuple[bool, str]:
        """(passed, why not) for this output."""
        raise NotImplementedError


def not_judged(exit_code: int) -> str:
    """Why an output check failed when the block crashed."""
    return f"{NOT_JUDGED} (exit code {exit_code}), and the output must come from a run that exits 0"


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

    def evaluate(self, last: ExecResult, executor: Executor, base_dir: Path) -> Verdict:
        """Every test passes in the sandbox (whatever the exit code). All of them run (no `-x`): the report names
        each failing test, and the count of passing ones ranks replies that fail the same check."""
        source = base_dir / self.pytest
        # fresh copy each time: the code under test cannot tamper with it, nor redirect it with a symlink
        write_new_file(executor.workspace, f"{CHECKS_DIR}/{source.name}", source.read_text(encoding="utf-8"))
        result = executor.run_command(["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                       "--no-header", "-rN", f"{CHECKS_DIR}/{source.name}"])
        ok = result.exit_code == 0
        passed, total = pytest_counts(result.output)
        return ok, "" if ok else pytest_summary(result.output, passed, total), passed, total


@CHECKS.register
class CommandCheck(CheckKind):
    """A command run in the sandbox after each execution (`go test ./...`, `cargo test`, `make test`, `ctest`,
    `node --test`): it passes when it exits with `exit_code`. For the test runners agents/scenario/testrunners.py
    knows, the
    report names each failing test with why and counts the tests passed, as a pytest check does."""

    command: str = Field(min_length=1)
    """The shell command (sh -c), run in /workspace."""
    exit_code: int = 0
    """The exit code that passes."""
    files: dict[str, str] = Field(default_factory=dict)
    """Hidden files the command needs, such as tests: workspace path -> a file or folder next to the scenario file.
    They are copied in fresh before each run and removed after it, so the code under test neither sees nor edits
    them."""
    timeout: float | None = Field(default=None, gt=0, le=3600)
    """Seconds the command may take (default: the sandbox's timeout per block)."""

    def label(self) -> str:
        """`command: 'go test ./...'`, said hidden when it brings files of its own."""
        return f"command{' (hidden tests)' if self.files else ''}: {self.command!r}"

    def evaluate(self, last: ExecResult, executor: Executor, base_dir: Path) -> Verdict:
        """Run the command (with its hidden files in place) whatever the last block's exit code."""
        placed = [place_hidden(executor.workspace, dest, base_dir / source) for dest, source in self.files.items()]
        # go test lists every test it runs only with -v (so passed tests can be counted)
        script = f'export GOFLAGS="${{GOFLAGS:-}} -v"\n{self.command}\n'
        if placed:
            removal = " ".join(shlex.quote(path) for path in self.files)
            script = f"( {script} )\ncode=$?\nrm -rf -- {removal}\nexit $code\n"
        result = executor.run_command(["sh", "-c", script], timeout=self.timeout)
        ok = result.exit_code == self.exit_code and not result.timed_out
        report = parse_tests(result.output)
        passed, total = (report.passed, report.total) if report else (0, 0)
        if ok:
            return True, "", passed, total
        return False, command_failure(result, self.exit_code, report), passed, total


def place_hidden(workspace: Path, dest: str, source: Path) -> str:
    """Copy a hidden file, or a folder's files, to `dest` in the workspace (fresh, never through a link)."""
    if source.is_dir():
        for path in sorted(p for p in source.rglob("*") if p.is_file()):
            write_new_file(workspace, f"{dest}/{path.relative_to(source).as_posix()}",
                           path.read_text(encoding="utf-8", errors="replace"))
    else:
        write_new_file(workspace, dest, source.read_text(encoding="utf-8", errors="replace"))
    return dest


def command_failure(result: ExecResult, expected: int, report: TestReport | None) -> str:
    """Why a command check failed: the failing tests with why, else the compiler's first errors, else the tail."""
    head = f"it exited with {result.exit_code}" + (f", not {expected}" if expected else "")
    if result.timed_out:
        head = "it was stopped at the time limit"
    if report is not None and report.total and report.failures:  # tests ran: which failed, and why
        return f"{head}; {tests_summary(report)}"
    errors = summarize(result.output)  # the first errors lead: cut from the end; a raw tail: from the start
    lines = [ln for ln in (errors or result.output).strip().splitlines() if ln.strip()]
    lines = lines if errors else lines[-15:]
    while len(lines) > 1 and sum(len(ln) + 1 for ln in lines) > 1500:  # whole lines: a cut word misleads
        lines.pop(-1 if errors else 0)
    return f"{head}:\n" + ("\n".join(lines)[-1500:] or "(no output)")


def run_checks(checks: list[CheckKind], base_dir: Path, executor: Executor, last: ExecResult) -> list[CheckResult]:
    """Evaluate every check (a scenario's, its files beside `base_dir`) against the last execution and the
    workspace. An output check passes only on the output of a run that exited 0 (or of a command-line tool printing
    its usage); a file or pytest check judges the workspace, whatever the exit code."""
    check_page.number_pages(checks)
    return [CheckResult(check.label(), *check.evaluate(last, executor, base_dir)) for check in checks]


def closest_line(output: str, expected: str) -> str:
    """'; the closest output line is: ...' (expected and actual side by side), or '' when there is no output."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    if not lines:
        return "; the output was empty"
    target = " ".join(expected.split()).lower()
    best = max(lines, key=lambda ln: difflib.SequenceMatcher(None, ln.lower(), target).ratio())
    return f"; the closest output line is {best[:200]!r}"


_COUNT = re.compile(r"(\d+) (passed|failed|errors?)\b")
_SECTION = re.compile(r"^_+ (.+?) _+$")
"""A failure's header: `____ test_name ____` (a long name gets one `_` a side)."""


def pytest_counts(output: str) -> tuple[int, int]:
    """(tests passed, tests run) from pytest's last line ("2 failed, 6 passed in 0.05s"); (0, 0) when it has none
    (a crash or a time-out before pytest could count)."""
    for line in reversed(output.splitlines()):
        counts = {kind.rstrip("s"): int(n) for n, kind in _COUNT.findall(line)}
        if counts and " in " in line:
            return counts.get("passed", 0), sum(counts.values())
    return 0, 0


def _text_lines(lines: list[str]) -> list[str]:
    """pytest's lines without the blank ones, the rules (`=====`, `_____`) and its "Use -v" hints."""
    return [ln for ln in lines if ln.strip() and not set(ln.strip()) <= set("=_-.")
            and not ln[1:].strip().startswith("Use -v to get")]


def _failure_lines(lines: list[str]) -> list[str]:
    """What says why one test failed: its failing line (the first ">"), then the error lines; frames inside
    libraries say nothing useful."""
    lines = _text_lines(lines)
    first = next((ln for ln in lines if ln.startswith(">")), None)
    return [ln for ln in lines if ln is first or ln.startswith(("E ", "FAILED", "ERROR"))
            or ("assert" in ln and not ln.startswith(">"))]


def pytest_summary(output: str, passed: int = 0, total: int = 0, limit: int = 1500, shown: int = 3) -> str:
    """A failed pytest check for the model: which tests failed (when it ran several), then why, for the first
    `shown` of them."""
    sections: list[tuple[str, list[str]]] = []
    for line in output.splitlines():
        if (m := _SECTION.match(line.strip())) and m.group(1).strip("_ "):  # not `_ _ _` between two frames
            sections.append((m.group(1), []))
        elif sections:
            sections[-1][1].append(line)
    if not sections:  # nothing pytest could report per test (a crash, a time-out): its last lines
        lines = _text_lines(output.splitlines())
        return "\n".join(_failure_lines(lines) or lines[-15:])[-limit:]
    if len(sections) == 1 and total <= 1:  # one test (HumanEval's examples): why it failed
        return "\n".join(_failure_lines(sections[0][1]))[-limit:]
    titles = [title for title, _ in sections]
    names = ", ".join(titles[:10]) + (f" and {len(titles) - 10} more" if len(titles) > 10 else "")
    head = f"{total - passed} of {total} tests failed: {names}" if total > 1 else f"Failed: {names}"
    parts = [head] + [f"{title}:\n" + "\n".join(_failure_lines(body)) for title, body in sections[:shown]]
    return "\n".join(parts)[:limit]


from agents.scenario import check_http, check_page  # noqa: E402, F401  (the kinds of their own modules register themselves)

Check = CHECKS.union()
