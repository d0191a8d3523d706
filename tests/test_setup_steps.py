"""`make demo` installs only what the demo needs, and each setup step is one line with its time; a failing step
prints its log's path (issue 20 item 12). Real make, real shell; no package is installed by these tests."""

from __future__ import annotations

import os
import subprocess

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
    assert "run.py run scenarios/primes.yaml" in demo and "-m pytest" in test


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
