"""`make demo` installs only what the demo needs, and each setup step is one line with its time; a failing step
prints its log's path (issue 20 item 12). Real make, real shell; no package is installed by these tests."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from tests.conftest import ROOT


def dry_run(target: str) -> str:
    proc = subprocess.run(["make", "-n", "-C", str(ROOT), target], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_demo_installs_only_what_it_needs_and_the_tests_get_the_browser():
    demo, test = dry_run("demo"), dry_run("test")
    assert "for pkg in mmdebstrap;" in demo and "chromium" not in demo
    assert "'.[local,ui]'" in demo and "'.[local,test,ray,ui,server,export]'" not in demo  # `codeduet ui` comes next
    assert "for pkg in mmdebstrap chromium chromium-driver;" in test and "'.[local,test,ray,ui,server,export]'" in test
    assert "run.py run scenarios/primes.yaml" in demo and ".ci/tests" in test


def prerequisites(target: str) -> set[str]:
    """`target`'s prerequisites as make's own database says (no recipe runs)."""
    proc = subprocess.run(["make", "-pqn", "-C", str(ROOT), "no-such-target"],  # the database only
                          capture_output=True, text=True, timeout=60)
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith(f"{target}:") and "=" not in ln)
    return set(line.partition(":")[2].split())


def test_setup_runs_its_independent_steps_side_by_side():
    """The llama.cpp compile, the model download and the image build need only codeduet's own packages (`base`):
    none waits for another, and setup runs them with -j (issue 55: `make demo` from nothing under 6 minutes)."""
    assert prerequisites("image") == {"base", "system-deps"}
    assert prerequisites("model") == {"base"}
    assert "base" not in prerequisites("llama-wheel")
    assert prerequisites("venv") == {"base", "llama-wheel"}
    assert "-j4" in dry_run("setup")


def test_a_step_beside_others_prints_a_start_line_and_an_end_line(tmp_path):
    env = {**os.environ, "CODEDUET_SETUP_LOG": str(tmp_path / "setup.log"), "CODEDUET_STEP_PARALLEL": "1"}
    ok = subprocess.run([str(ROOT / ".ci" / "step"), "a step beside others", "true"],
                        capture_output=True, text=True, env=env, timeout=30)
    assert ok.returncode == 0
    start, end = ok.stdout.splitlines()
    assert start == "… a step beside others" and end.startswith("✓ a step beside others")


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_the_tiers_each_print_their_time_and_a_failing_tier_does_not_stop_the_next():
    env = {**os.environ, "PYTEST_ARGS": "--no-such-pytest-flag"}
    proc = subprocess.run([str(ROOT / ".ci" / "tests"), "fast", "serial"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 4, proc.stdout + proc.stderr  # pytest's usage error, from the first failing tier
    summary = proc.stdout[proc.stdout.index("── tiers (seconds):"):]
    assert re.search(r"fast +\d+s  FAILED \(exit 4\)", summary) and re.search(r"serial +\d+s  FAILED", summary)
    assert re.search(r"all +\d+s", summary)


def test_a_step_is_one_line_with_its_time_and_its_output_goes_to_the_log(tmp_path):
    log = tmp_path / "setup.log"
    env = {**os.environ, "CODEDUET_SETUP_LOG": str(log)}
    ok = subprocess.run([str(ROOT / ".ci" / "step"), "a quiet step", "sh", "-c", "echo hundreds of lines of apt"],
                        capture_output=True, text=True, env=env, timeout=30)
    assert ok.returncode == 0 and ok.stderr == ""
    assert ok.stdout.count("\n") == 1 and ok.stdout.startswith("✓ a quiet step") and ok.stdout.rstrip().endswith("s")
    assert "hundreds of lines of apt" in log.read_text()  # kept in the log, not shown
    bad = subprocess.run([str(ROOT / ".ci" / "step"), "a broken step", "sh", "-c", "echo the cause; exit 7"],
                         capture_output=True, text=True, env=env, timeout=30)
    assert bad.returncode == 7
    assert bad.stdout.startswith("✗ a broken step failed after") and "(exit 7)" in bad.stdout
    assert "the cause" in bad.stdout and f"full log: {log}" in bad.stdout
