"""agents/scenario/testrunners.py against real test runners' outputs (tests/data/testrunners/, see its README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.scenario import testrunners
from agents.scenario.testrunners import (
    parse_tests,  # not tests_summary: imported by name, pytest would collect it as a test
)

DATA = Path(__file__).parent / "data" / "testrunners"
COMPILER_OUTPUT = Path(__file__).parent / "data" / "compiler_output"

GO_FAILED = ["TestMul", "TestTable/zero", "TestTable/one", "TestTable/two"]
CATCH_FAILED = ["multiplies", "greets", "throws on negative", "sections"]
NODE_FAILED = ["multiplies", "deep equal", "throws"]
JEST_FAILED = ["mul › multiplies 2 * 3", "mul › returns an object", "other throws"]
PYTEST_FAILED = ["test_mul", "test_add_param[0-5-0]", "test_raises"]

CASES = {  # fixture: (runner, passed, total, failing tests in order)
    "go_goflags_v.txt": ("go", 3, 8, ["example.com/calc/broken [build failed]", *GO_FAILED, "TestPanics"]),
    "go_plain.txt": ("go", 0, 5, ["example.com/calc/broken [build failed]", *GO_FAILED, "TestPanics"]),
    "go_parallel_v.txt": ("go", 1, 2, ["TestParB"]),
    "cargo_fail.txt": ("cargo", 3, 6, ["tests::it_multiplies", "tests::it_panics", "integration_mul"]),
    "cargo_backtrace.txt": ("cargo", 1, 3, ["tests::it_panics", "tests::it_multiplies"]),
    "cargo_color.txt": ("cargo", 1, 3, ["tests::it_panics", "tests::it_multiplies"]),
    "cargo_compile_error.txt": ("cargo", 0, 0, ["calc (lib test) did not compile"]),
    "catch2_v2.txt": ("catch2", 2, 6, CATCH_FAILED),
    "catch2_v3.txt": ("catch2", 2, 6, CATCH_FAILED),
    "catch2_v2_pass.txt": ("catch2", 2, 2, []),
    "catch2_v3_pass.txt": ("catch2", 2, 2, []),
    "make_catch2_two_binaries.txt": ("catch2", 4, 8, CATCH_FAILED),
    "ctest.txt": ("ctest", 2, 4, ["catch_fail", "plain_fail"]),
    "ctest_output_on_failure.txt": ("ctest", 2, 4, ["catch_fail", "plain_fail"]),
    "node_tap.txt": ("node", 3, 6, NODE_FAILED),
    "node_spec.txt": ("node", 3, 6, NODE_FAILED),
    "jest_default.txt": ("jest", 4, 7, JEST_FAILED),
    "jest_verbose.txt": ("jest", 4, 7, [*JEST_FAILED, "./broken.test.js (test suite failed to run)"]),
    "jest_pass.txt": ("jest", 2, 2, []),
    "pytest_check.txt": ("pytest", 2, 5, PYTEST_FAILED),
    "pytest_default.txt": ("pytest", 2, 5, PYTEST_FAILED),
    "make_go_and_pytest.txt": ("go+pytest", 5, 12, [*GO_FAILED, *PYTEST_FAILED]),
}

WHY = {  # fixture: {failing test: what its why holds}
    "go_goflags_v.txt": {"TestMul": ["calc_test.go:13: Mul(2, 3) = 7, want 6"],
                         "TestTable/one": ["Mul(1, 5) = 6, want 5"],
                         "TestPanics": ["panic: runtime error: integer divide by zero", "par_test.go:22"],
                         "example.com/calc/broken [build failed]": ["undefined: undefinedThing"]},
    "go_plain.txt": {"TestTable/two": ["calc_test.go:25: Mul(2, 5) = 11, want 10"]},
    "go_parallel_v.txt": {"TestParB": ["checking 7/2", "Div(7, 2) = 3, want 4"]},
    "cargo_fail.txt": {"tests::it_multiplies": ["panicked at src/lib.rs:12:26", "left: 7", "right: 6"],
                       "tests::it_panics": ["index out of bounds: the len is 0 but the index is 3"],
                       "integration_mul": ["tests/integration.rs:7:24", "mul(1, 1) was 2"]},
    "cargo_backtrace.txt": {"tests::it_multiplies": ["assertion `left == right` failed", "left: 7"]},
    "cargo_compile_error.txt": {"calc (lib test) did not compile": ["error[E0425]", "--> src/lib.rs:9:42"]},
    "catch2_v2.txt": {"multiplies": ["REQUIRE( mul(2, 3) == 6 )", "with expansion:", "7 == 6"],
                      "throws on negative": ["due to unexpected exception with message:", "negative input"],
                      "sections": ["REQUIRE( mul(0, 5) == 0 )", "REQUIRE( mul(1, 5) == 5 )"]},
    "catch2_v3.txt": {"greets": ['"Hello Bob" == "Hello, Bob!"', '"Hello " == "Hello"']},
    "ctest.txt": {"catch_fail": ["Failed"]},
    "ctest_output_on_failure.txt": {"catch_fail": ["4 of 6 tests failed", "REQUIRE( mul(2, 3) == 6 )", "7 == 6"],
                                    "plain_fail": ["mul(2, 2) = 5, want 4"]},
    "node_tap.txt": {"multiplies": ["7 !== 6", "expected: 6", "actual: 7", "math.test.js:10:10"],
                     "deep equal": ["strictly deep-equal", "+   v: 2", "-   v: 1"],
                     "throws": ["boom", "math.test.js:23:9"]},
    "node_spec.txt": {"multiplies": ["AssertionError", "7 !== 6", "math.test.js:10:10"],
                      "deep equal": ["actual: { v: 2 }", "expected: { v: 1 }"]},
    "jest_default.txt": {"mul › multiplies 2 * 3": ["expect(received).toBe(expected)", "Expected: 6", "Received: 7",
                                                    "sum.test.js:14:23"],
                         "other throws": ["boom from other"]},
    "jest_verbose.txt": {"./broken.test.js (test suite failed to run)": ["SyntaxError", "Unexpected token"]},
    "pytest_check.txt": {"test_mul": [">       assert mul(2, 3) == 6", "E       assert 7 == 6",
                                      "checks/test_calc.py:11: AssertionError"],
                         "test_raises": ["DID NOT RAISE ValueError"]},
    "make_go_and_pytest.txt": {"TestMul": ["want 6"], "test_mul": ["assert 7 == 6"]},
}


def report(name: str) -> testrunners.TestReport:
    """The report parsed from a fixture."""
    parsed = parse_tests((DATA / name).read_text(encoding="utf-8"))
    assert parsed is not None, name
    return parsed


def test_every_fixture_is_covered() -> None:
    """Each fixture has its expected counts here, and the README says how it was made."""
    fixtures = sorted(path.name for path in DATA.glob("*.txt"))
    assert fixtures == sorted(CASES)
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    assert [name for name in fixtures if f"`{name}`" not in readme] == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_counts_and_failing_tests(name: str) -> None:
    """Runner, tests passed, tests run and the failing tests, in the order the runner reported them."""
    runner, passed, total, failed = CASES[name]
    parsed = report(name)
    assert (parsed.runner, parsed.passed, parsed.total) == (runner, passed, total)
    assert [test for test, _ in parsed.failures] == failed


@pytest.mark.parametrize("name", sorted(WHY))
def test_why_holds_the_assertion(name: str) -> None:
    """A failing test's why holds the runner's own lines on why (assertion, expected and actual, place)."""
    failures = dict(report(name).failures)
    for test, expected in WHY[name].items():
        for text in expected:
            assert text in failures[test], (test, text, failures[test])


@pytest.mark.parametrize("name", sorted(CASES))
def test_why_is_short_and_without_noise(name: str) -> None:
    """A few lines a test, without backtraces, code frames, ANSI colours or Go's runtime frames."""
    for test, why in report(name).failures:
        assert why and len(why.splitlines()) <= 12, (test, why)
        for noise in ("stack backtrace", "rust_begin_unwind", "/src/testing/", "goroutine ", "\x1b[", "> 14 |",
                      "node:internal", "RUST_BACKTRACE"):
            assert noise not in why, (test, noise, why)


def test_ctest_without_output_gives_its_verdict() -> None:
    """Without --output-on-failure, CTest's verdict (Failed, SEGFAULT, Timeout) is the why."""
    assert dict(report("ctest.txt").failures) == {"catch_fail": "Failed", "plain_fail": "Failed"}


def test_ctest_stands_for_the_programs_it_ran() -> None:
    """CTest counts test programs; the Catch2 output it shows is read for why, not counted again."""
    parsed = report("ctest_output_on_failure.txt")
    assert parsed.runner == "ctest" and parsed.total == 4


def test_go_setup_failed_and_lone_parent() -> None:
    """Go 1.21+'s `[setup failed]` (format from its release notes) is named like a build failure; a parent test
    that failed with passing subtests counts as one failed test."""
    output = ("# example.com/m\nmain_test.go:3:8: no required module provides package example.com/x\n"
              "FAIL\texample.com/m [setup failed]\n"
              "=== RUN   TestP\n=== RUN   TestP/a\n    p_test.go:9: cleanup went wrong\n--- FAIL: TestP (0.00s)\n"
              "    --- PASS: TestP/a (0.00s)\nFAIL\nFAIL\texample.com/p\t0.002s\n")
    parsed = parse_tests(output)
    assert parsed is not None and (parsed.passed, parsed.total) == (1, 2)
    assert [name for name, _ in parsed.failures] == ["example.com/m [setup failed]", "TestP"]
    assert "no required module provides package" in parsed.failures[0][1]


def test_go_package_failing_outside_a_test_is_named() -> None:
    """A package that failed with no failing test listed (a time-out, os.Exit in TestMain) is named."""
    parsed = parse_tests("=== RUN   TestSlow\npanic: test timed out after 1s\n\ngoroutine 5 [running]:\n"
                         "FAIL\texample.com/slow\t1.005s\nFAIL\n")
    assert parsed is not None and parsed.total == 0
    assert parsed.failures == [("example.com/slow", "panic: test timed out after 1s")]


def test_all_passing_go_without_v_is_recognised_without_counts() -> None:
    """Without -v go lists no passing test: recognised, nothing counted, nothing failed."""
    parsed = parse_tests("ok  \texample.com/calc/ok\t0.005s\n")
    assert parsed is not None and (parsed.runner, parsed.passed, parsed.total, parsed.failures) == ("go", 0, 0, [])


@pytest.mark.parametrize("output", ["", "hello world\n", "Traceback (most recent call last):\nValueError: x\n",
                                    "ok 1\nnot ok 2\n", "test cases: a | b\n", "Tests: none\n"])
def test_no_report_in_other_output(output: str) -> None:
    """Output that is not a test run's report gives None."""
    assert parse_tests(output) is None


@pytest.mark.parametrize("path", sorted(COMPILER_OUTPUT.glob("*.txt")), ids=lambda path: path.name)
def test_no_report_in_programs_and_builds(path: Path) -> None:
    """Compilers' and programs' outputs (`cargo run`, `go run`, gcc, node) hold no test report."""
    assert parse_tests(path.read_text(encoding="utf-8")) is None


def test_summary_names_the_failures_then_why() -> None:
    """The head counts and names the failing tests; then each of the first `shown`, with its why indented."""
    summary = testrunners.tests_summary(report("cargo_fail.txt"), shown=2)
    lines = summary.splitlines()
    assert lines[0] == "3 of 6 tests failed: tests::it_multiplies, tests::it_panics, integration_mul"
    assert lines[1] == "tests::it_multiplies:" and lines[2].startswith("  thread 'tests::it_multiplies'")
    assert "  left: 7" in lines and "tests::it_panics:" in lines and "integration_mul:" not in lines


def test_summary_without_tests_run_and_limit() -> None:
    """A build that failed before any test ran says so; the summary is cut at `limit`."""
    summary = testrunners.tests_summary(report("cargo_compile_error.txt"))
    assert summary.startswith("no test ran: calc (lib test) did not compile\n")
    assert "error[E0425]" in summary
    assert len(testrunners.tests_summary(report("catch2_v2.txt"), limit=100)) == 100


def test_summary_names_ten_then_counts_the_rest() -> None:
    """Past ten failing tests the head says how many more."""
    many = testrunners.TestReport("go", 0, 12, [(f"Test{i}", "why") for i in range(12)])
    names = ", ".join(f"Test{i}" for i in range(10))
    assert testrunners.tests_summary(many, shown=0) == f"12 of 12 tests failed: {names} and 2 more"


def test_every_runner_is_registered() -> None:
    """The registry holds one parser for each runner."""
    assert set(testrunners.PARSERS) == {"go", "cargo", "catch2", "ctest", "node", "jest", "pytest"}
