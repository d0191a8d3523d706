"""Test reports (tests passed of tests run, each failing test with why) read from test runners' outputs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable


@dataclass
class TestReport:
    """A test run: runner(s), tests passed of tests run (skipped left out), (name, why) of failed tests and builds."""

    __test__ = False  # not a pytest test class
    runner: str  # "go", "cargo", "catch2", "ctest", "node", "jest" or "pytest"; several joined by "+" (`make test`)
    passed: int
    total: int
    failures: list[tuple[str, str]] = field(default_factory=list)  # a build that failed is not counted in total


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
GO_PACKAGE = re.compile(r"^(ok|FAIL)\s+(\S+)\s+(\(cached\)|[\d.]+s|\[(?:build|setup) failed\])")
GO_RESULT = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+) \(")
GO_START = re.compile(r"^=== (?:RUN|CONT|NAME|PAUSE)\s+(\S+)")
GO_BUILD = re.compile(r"^# (\S+)(?: \[(\S+?)(?:\.test)?\])?$")  # `# pkg_test [pkg.test]`: pkg's test build
GO_OWN_FRAME = re.compile(r"^(?!.*/src/(?:runtime|testing)/)/\S+\.go:\d+")
CARGO_FAILED = re.compile(r"^test (.+?) \.\.\. FAILED")
CARGO_RESULT = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed;")
CARGO_OUTPUT = re.compile(r"^---- (.+?) std(?:out|err) ----$")
CARGO_BUILD = re.compile(r"^error: could not compile `([^`]+)` \(([^)]*\btest\b[^)]*)\)")  # a test target
CARGO_ERROR = re.compile(r"^error(\[E\d+\])?: (?!could not compile|test failed|\d+ targets? failed|aborting)"
                         r"|^\s+--> (?!/rustc/)")
CATCH_RULE = re.compile(r"^(?:-{70,}|={70,})$")
CATCH_DOTS = re.compile(r"^\.{70,}$")
CATCH_TOTALS = re.compile(r"^test cases:\s*\d+\s*\|(.*)$", re.IGNORECASE)
CATCH_ALL = re.compile(r"^All tests passed \(\d+ assertions? in (\d+) test cases?\)")
CTEST_TOTALS = re.compile(r"^\d+% tests passed, (\d+) tests? failed out of (\d+)")
CTEST_FAILED = re.compile(r"^\s*\d+ - (.+?) \(([^)]+)\)$")
CTEST_PROGRESS = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: (\S+) ")
CTEST_STOP = re.compile(r"^\s+Start\s+\d+: |^\d+% tests passed")
NODE_COUNT = re.compile(r"^(?:# |ℹ )(pass|fail|cancelled) (\d+)$")
TAP_NOT_OK = re.compile(r"^(\s*)not ok \d+ - (.*?)(?:\s+# (?:SKIP|TODO)\b.*)?$")
SPEC_FAIL = re.compile(r"^(\s*)✖ (.*?)(?: \([\d.]+m?s\))?$")
SUBTESTS = re.compile(r"^'?\d+ subtests? failed'?$")
JEST_TOTALS = re.compile(r"^Tests:\s+(.*?\d+ total)")
JEST_SUITE = re.compile(r"^(?:FAIL|PASS)\s+(\S+)")
JEST_FAILURE = re.compile(r"^\s*● (.+)$")
JEST_STOP = re.compile(r"^Test Suites:|^Summary of all failing tests")
JEST_CODE = re.compile(r"^>?\s*\d+ \||^\|")
PYTEST_FINAL = re.compile(r"^=*\s*(?:no tests ran|(?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|warnings?"
                          r"|deselected|rerun)(?:, )?)+) in [\d.]+s\b")
PYTEST_SECTION = re.compile(r"^_+ (?![_ ]+$)(.+?) _+$")  # not the `_ _ _` between two frames
PYTEST_SHORT = re.compile(r"^(?:FAILED|ERROR) (\S+)(?: - (.*))?$")
PYTEST_RULE = re.compile(r"^=+ .* =+$|^=+$")
PYTEST_WHY = re.compile(r"^E |^\S+\.py:\d+: \w")  # `E   assert 7 == 6`, `x.py:12: AssertionError`


def parse_tests(output: str) -> TestReport | None:
    """The test report in a test runner's output, recognised from the output alone; None when none is found."""
    return _parse(_ANSI.sub("", output).replace("\r\n", "\n").split("\n"), list(PARSERS))


def _parse(lines: list[str], runners: list[str]) -> TestReport | None:
    """The reports of these runners found in the lines, summed; an outer runner's (see OUTER) alone."""
    reports = [report for runner in runners if (report := PARSERS[runner](lines))]
    reports = [report for report in reports if report.runner in OUTER] or reports
    if len(reports) < 2:
        return reports[0] if reports else None
    return TestReport("+".join(r.runner for r in reports), sum(r.passed for r in reports),
                      sum(r.total for r in reports), [f for r in reports for f in r.failures])


def tests_summary(report: TestReport, limit: int = 1500, shown: int = 3) -> str:
    """For the model: '2 of 7 tests failed: TestA, TestB' then, for the first `shown` failures, the name and why."""
    names = [name for name, _ in report.failures]
    listed = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    head = f"{report.total - report.passed} of {report.total} tests failed" if report.total else "no test ran"
    parts = [head + (f": {listed}" if listed else "")]
    parts += [f"{name}:\n" + "\n".join(f"  {ln}" for ln in why.splitlines()) for name, why in report.failures[:shown]]
    return "\n".join(parts)[:limit]


def _why(lines: Iterable[str], limit: int = 10) -> str:
    """The first `limit` non-blank lines, stripped, a line repeated right after itself once."""
    out = [line for line in (ln.strip() for ln in lines) if line]
    return "\n".join([ln for i, ln in enumerate(out) if not i or ln != out[i - 1]][:limit])


def _first(lines: list[str], prefix: str | tuple[str, ...]) -> int:
    """The index of the first line starting with `prefix`, else the number of lines."""
    return next((i for i, ln in enumerate(lines) if ln.startswith(prefix)), len(lines))


def _sections(lines: list[str], header: re.Pattern[str], stop: re.Pattern[str]) -> list[tuple[re.Match, list]]:
    """Each header line's match with the lines under it, up to the next header or a `stop` line."""
    sections: list[tuple[re.Match, list]] = []
    body: list[str] | None = None
    for line in lines:
        if m := header.match(line):
            sections.append((m, body := []))
        elif stop.match(line):
            body = None
        elif body is not None:
            body.append(line)
    return sections


def go_tests(lines: list[str]) -> TestReport | None:
    """`go test`: leaf tests counted (TestX/case_1, not TestX too); without -v passing tests are unlisted, uncounted."""
    found, passed, total, failures, current = False, 0, 0, [], ""
    results, logs = {}, {}  # test -> PASS/FAIL/SKIP, test (or `# package` of a build) -> its lines
    for line in lines:
        if m := GO_PACKAGE.match(line):
            found, (ok, pkg, how) = True, m.groups()
            p, t, failed = _go_leaves(results, logs)
            passed, total, failures = passed + p, total + t, failures + failed
            if how.startswith("["):
                failures.append((f"{pkg} {how}", _why(logs.get("# " + pkg, []), 6)))
            elif ok == "FAIL" and not failed:
                failures.append((pkg, _go_why(logs.get(current, []))))
            results, logs = {}, {key: log for key, log in logs.items() if key.startswith("# ")}
        elif m := GO_RESULT.match(line):
            current, results[m.group(2)] = m.group(2), m.group(1)
        elif m := GO_START.match(line):
            current = m.group(1)
        elif m := GO_BUILD.match(line):
            current = "# " + (m.group(2) or m.group(1))
        else:
            logs.setdefault(current, []).append(line)
    return TestReport("go", passed, total, failures) if found or results else None


def _go_leaves(results: dict[str, str], logs: dict[str, list[str]]) -> tuple[int, int, list[tuple[str, str]]]:
    """One package's (passed, total, failures): its leaf tests, and parents that failed on their own."""
    counted = [(name, status) for name, status in results.items() if status != "SKIP" and not (
        (children := [results[n] for n in results if n.startswith(name + "/")])
        and (status == "PASS" or "FAIL" in children))]
    failures = [(name, _go_why(logs.get(name, []))) for name, status in counted if status == "FAIL"]
    return len(counted) - len(failures), len(counted), failures


def _go_why(lines: list[str]) -> str:
    """A failed test's log lines, and of a panic its message and the frames outside Go's runtime and testing."""
    out, trace = [], False
    for line in (ln.strip() for ln in lines):
        trace = trace or line.startswith("goroutine ")
        if not trace and line not in ("FAIL", "PASS") and not line.startswith("exit status"):
            out.append(line)
        elif trace and GO_OWN_FRAME.match(line):
            out.append(line.split(" +0x")[0])
    return _why(out)


def cargo_tests(lines: list[str]) -> TestReport | None:
    """`cargo test`: one `test result:` line per test binary (summed); a crate that did not compile is named."""
    counts = [tuple(map(int, m.groups())) for line in lines if (m := CARGO_RESULT.match(line))]
    builds = [m for line in lines if (m := CARGO_BUILD.match(line))]
    if not counts and not builds:
        return None
    outputs = {m.group(1): _cargo_why(body) for m, body in _sections(lines, CARGO_OUTPUT, re.compile(r"^failures:"))}
    failures = [(m.group(1), outputs.get(m.group(1), "")) for line in lines if (m := CARGO_FAILED.match(line))]
    errors = _why((ln for ln in lines if CARGO_ERROR.match(ln)), 6)
    failures += [(f"{m.group(1)} ({m.group(2)}) did not compile", errors) for m in builds]
    return TestReport("cargo", sum(p for p, _ in counts), sum(p + f for p, f in counts), failures)


def _cargo_why(body: list[str]) -> str:
    """The test's output from its panic (place and message) on, without the backtrace."""
    start = next((i for i, ln in enumerate(body) if " panicked at " in ln), 0)
    return _why(body[start:start + _first(body[start:], ("note:", "stack backtrace:"))])


def catch2_tests(lines: list[str]) -> TestReport | None:
    """Catch2 v2 (catch.hpp) and v3: test cases counted; one `test cases:` line per test program (summed)."""
    counts = [{kind: int(n) for n, kind in re.findall(r"(\d+) (passed|failed as expected|failed)", m.group(1))}
              for m in map(CATCH_TOTALS.match, lines) if m]
    counts += [{"passed": int(m.group(1))} for m in map(CATCH_ALL.match, lines) if m]
    passed = sum(c.get("passed", 0) + c.get("failed as expected", 0) for c in counts)
    failures = _catch_failures(lines)
    if not counts and not failures:
        return None
    why = [(name, _why(body)) for name, body in failures.items()]
    return TestReport("catch2", passed, passed + sum(c.get("failed", 0) for c in counts) if counts else len(why), why)


def _catch_failures(lines: list[str]) -> dict[str, list[str]]:
    """Failed test case -> the lines under its headers (rule, test case and sections, rule, file:line, dots)."""
    blocks: dict[str, list[str]] = {}
    for d in range(4, len(lines)):
        if CATCH_DOTS.match(lines[d]) and CATCH_RULE.match(lines[d - 2]):
            top = next((i for i in range(d - 4, max(d - 12, -1), -1) if CATCH_RULE.match(lines[i])), d - 4)
            end = next((i for i in range(d + 1, len(lines)) if CATCH_RULE.match(lines[i])), len(lines))
            if any(": FAILED:" in ln for ln in lines[d + 1:end]):
                blocks.setdefault(lines[top + 1].strip(), []).extend(lines[d + 1:end])
    return blocks


def ctest_tests(lines: list[str]) -> TestReport | None:
    """CTest: the test programs counted; why from their output (--output-on-failure), read by the other parsers."""
    totals = [(int(m.group(1)), int(m.group(2))) for line in lines if (m := CTEST_TOTALS.match(line))]
    if not totals:
        return None
    outputs = {m.group(1): body for m, body in _sections(lines, CTEST_PROGRESS, CTEST_STOP)}
    failures = [(m.group(1), _ctest_why(outputs.get(m.group(1), [])) or m.group(2))
                for line in lines[_first(lines, "The following tests FAILED"):] if (m := CTEST_FAILED.match(line))]
    return TestReport("ctest", sum(t - f for f, t in totals), sum(t for _, t in totals), failures)


def _ctest_why(output: list[str]) -> str:
    """A test program's own report of its failing tests, else its last lines."""
    inner = _parse(output, [runner for runner in PARSERS if runner not in OUTER])
    return _why(tests_summary(inner, shown=2).splitlines() if inner and inner.failures else output[-10:], 12)


def node_tests(lines: list[str]) -> TestReport | None:
    """`node --test`, TAP reporter (node 20's default when not on a terminal) or spec reporter."""
    matches = [m for m in map(NODE_COUNT.match, lines) if m]
    if not {"pass", "fail"} <= {m.group(1) for m in matches}:
        return None
    failures: dict[str, str] = {}
    for name, why in [*_tap_failures(lines), *_spec_failures(lines)]:
        if why and not SUBTESTS.match(why):
            failures.setdefault(name, why)
    passed = sum(int(m.group(2)) for m in matches if m.group(1) == "pass")
    return TestReport("node", passed, sum(int(m.group(2)) for m in matches), list(failures.items()))


def _indented(lines: list[str], start: int, indent: int) -> list[str]:
    """The lines after `start` more indented than `indent` (blank ones too), up to the first that is not."""
    return lines[start + 1:next((j for j in range(start + 1, len(lines))
                                 if lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) <= indent), len(lines))]


def _tap_failures(lines: list[str]) -> Iterable[tuple[str, str]]:
    """(name, why) of each `not ok` with its YAML block: the error, expected and actual, the test's frame."""
    for i, line in enumerate(lines):
        if m := TAP_NOT_OK.match(line):
            fields: dict[str, list[str]] = {}
            for ln in _indented(lines, i, len(m.group(1))):
                if k := re.match(rf"^{m.group(1)}  (\w+):\s*(.*)$", ln):
                    fields[k.group(1)] = [] if k.group(2) in ("|-", "|", ">-", "") else [k.group(2).strip("'")]
                elif fields and ln.strip() not in ("---", "..."):
                    fields[list(fields)[-1]].append(ln.strip())
            if "subtestsFailed" not in " ".join(fields.get("failureType", [])):
                values = [f"{key}: {' '.join(fields[key])}" for key in ("expected", "actual") if key in fields]
                frame = [ln for ln in fields.get("stack", []) if "node:" not in ln][:1]
                yield m.group(2), _why([*fields.get("error", []), *values, *frame])


def _spec_failures(lines: list[str]) -> Iterable[tuple[str, str]]:
    """(name, why) of each `✖ name` with an error under it, from the `✖ failing tests:` list when there is one."""
    start = next((i for i, ln in enumerate(lines) if ln.strip() == "✖ failing tests:"), -1)
    for i in range(start + 1, len(lines)):
        if m := SPEC_FAIL.match(lines[i]):
            body = [ln.strip() for ln in _indented(lines, i, len(m.group(1)))]
            first = _first(body, "at ")
            values = [ln.rstrip(",") for ln in body if ln.startswith(("expected:", "actual:"))]
            frame = [ln for ln in body if ln.startswith("at ") and "node:" not in ln][:1]
            yield m.group(2), _why([*body[:first], *values, *frame])


def jest_tests(lines: list[str]) -> TestReport | None:
    """jest: the `Tests:` line's counts; a suite that failed to run is named `path (test suite failed to run)`."""
    counts = [{kind: int(n) for n, kind in re.findall(r"(\d+) (\w+)", m.group(1))}
              for line in lines if (m := JEST_TOTALS.match(line))]
    if not counts:
        return None
    sections: dict[str, list[str]] = {}
    suite, body = "", None
    for line in lines:
        if m := JEST_SUITE.match(line):
            suite, body = m.group(1), None
        elif JEST_STOP.match(line):  # the summary of all failing tests repeats them
            body = None
        elif (m := JEST_FAILURE.match(line)) and m.group(1) != "Console":
            name = f"{suite} (test suite failed to run)" if m.group(1) == "Test suite failed to run" else m.group(1)
            body = None if name in sections else sections.setdefault(name, [])
        elif body is not None and not JEST_CODE.match(line.strip()):  # not the code frame
            body.append(line.strip())
    passed = sum(c.get("passed", 0) for c in counts)
    return TestReport("jest", passed, passed + sum(c.get("failed", 0) for c in counts),  # why: up to its first frame
                      [(name, _why(body[:_first(body, "at ") + 1])) for name, body in sections.items()])


def pytest_tests(lines: list[str]) -> TestReport | None:
    """pytest: its last line's counts (errors as failed tests), why from the failures' sections or the short summary."""
    if (final := next((ln for ln in reversed(lines) if PYTEST_FINAL.match(ln)), None)) is None:
        return None
    counts = {kind.rstrip("s"): int(n) for n, kind in re.findall(r"(\d+) (passed|failed|errors?)\b", final)}
    failures = [(m.group(1), _why([*body[_first(body, ">"):][:1], *filter(PYTEST_WHY.match, body)]))  # `>`: its line
                for m, body in _sections(lines, PYTEST_SECTION, PYTEST_RULE)]
    failures = failures or [(m.group(1), m.group(2) or "") for line in lines if (m := PYTEST_SHORT.match(line))]
    return TestReport("pytest", counts.get("passed", 0), sum(counts.values()), failures)


PARSERS: dict[str, Callable[[list[str]], TestReport | None]] = {
    "go": go_tests, "cargo": cargo_tests, "catch2": catch2_tests, "ctest": ctest_tests, "node": node_tests,
    "jest": jest_tests, "pytest": pytest_tests}  # runner -> its report in an output's lines, None when it has none
OUTER = ("ctest",)  # runners of test programs that print their output: when found, their report is the output's
