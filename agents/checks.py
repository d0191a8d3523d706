"""Acceptance checks, run after every execution of a reply (whatever its exit code): they decide success."""

from __future__ import annotations

import difflib
import re
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath

from agents.protocols import ExecResult, Executor
from agents.sandbox.filenames import CHECKS_DIR
from agents.sandbox.safe_write import write_new_file
from agents.scenario import Check, FileExists, PytestCheck, Scenario, StdoutContains, StdoutRegex


@dataclass
class CheckResult:
    """One check's verdict and why."""

    name: str
    passed: bool
    detail: str = ""

    def to_dict(self) -> dict[str, object]:
        """Plain dict for transcripts."""
        return asdict(self)


def describe(check: Check) -> str:
    """`stdout_contains: "24966"` style label. A pytest check is named by its file alone and called hidden: named
    by its path (`checks/test_x.py`), the model wrote a file of its own there."""
    key, value = next(iter(check.model_dump().items()))
    if isinstance(check, PytestCheck):
        return f"pytest (hidden tests): {PurePosixPath(check.pytest).name!r}"
    return f"{key}: {value!r}"


def run_checks(scenario: Scenario, executor: Executor, last: ExecResult) -> list[CheckResult]:
    """Evaluate every check of the scenario against the last execution and the workspace. An output check passes
    only on the output of a run that exited 0 (or of a command-line tool printing its usage); a file or pytest
    check judges the workspace, whatever the exit code."""
    results = []
    for check in scenario.checks:
        name = describe(check)
        if isinstance(check, (StdoutContains, StdoutRegex)) and last.exit_code != 0 and not last.usage:
            # a crash's output holds its traceback (the failing line, its variables): it is not the program's output
            results.append(CheckResult(name, False, f"the last block failed (exit code {last.exit_code}), so its "
                                       "output is not judged: the output must come from a run that exits 0"))
        elif isinstance(check, StdoutContains):
            ok = check.stdout_contains in last.output
            results.append(CheckResult(name, ok, "" if ok else f"expected the output to contain "
                                       f"{check.stdout_contains!r}{closest_line(last.output, check.stdout_contains)}"))
        elif isinstance(check, StdoutRegex):
            ok = re.search(check.stdout_regex, last.output) is not None
            literal = re.sub(r"\\[a-zA-Z]|[\\^$.|?*+()\[\]{}]", " ", check.stdout_regex)
            results.append(CheckResult(name, ok, "" if ok else f"expected the output to match "
                                       f"/{check.stdout_regex}/{closest_line(last.output, literal)}"))
        elif isinstance(check, FileExists):
            results.append(_file_exists(executor.workspace, check.file_exists, name))
        elif isinstance(check, PytestCheck):
            results.append(_pytest(scenario, executor, check, name))
    return results


def closest_line(output: str, expected: str) -> str:
    """'; the closest output line is: ...' (expected and actual side by side), or '' when there is no output."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    if not lines:
        return "; the output was empty"
    target = " ".join(expected.split()).lower()
    best = max(lines, key=lambda ln: difflib.SequenceMatcher(None, ln.lower(), target).ratio())
    return f"; the closest output line is {best[:200]!r}"


def _file_exists(workspace: Path, rel: str, name: str) -> CheckResult:
    target = (workspace / rel).resolve()
    inside = target == workspace.resolve() or workspace.resolve() in target.parents
    ok = inside and target.exists()
    return CheckResult(name, ok, "" if ok else f"the script did not write {rel!r}: the task needs that file in the "
                                               "current directory")


def _pytest(scenario: Scenario, executor: Executor, check: PytestCheck, name: str) -> CheckResult:
    source = scenario.base_dir / check.pytest
    # fresh copy each time: the code under test cannot tamper with it, nor redirect it with a symlink
    write_new_file(executor.workspace, f"{CHECKS_DIR}/{source.name}", source.read_text(encoding="utf-8"))
    result = executor.run_command(["python3", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                                   "--no-header", "-rN", f"{CHECKS_DIR}/{source.name}"])
    ok = result.exit_code == 0
    return CheckResult(name, ok, "" if ok else _pytest_summary(result.output))


def _pytest_summary(output: str, limit: int = 1500) -> str:
    lines = [ln for ln in output.splitlines() if ln.strip() and not set(ln.strip()) <= set("=_-.")]
    # the test's own failing line (the first ">"), then the error lines; frames inside libraries say nothing useful
    first = next((ln for ln in lines if ln.startswith(">")), None)
    keep = [ln for ln in lines if ln is first or ln.startswith(("E ", "FAILED", "ERROR"))
            or ("assert" in ln and not ln.startswith(">"))]
    text = "\n".join(keep or lines[-15:])
    return text[-limit:]
