"""Copy-back after a block: files up to sandbox.copy_back_max come back to the run folder, bigger ones are listed by
name and size; only the block that hit the disk limit is tagged; resume carries binary files and goes on with the
block numbers (issue 20 item 9). Real CLI, real Docker sandbox, scripted model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.record.transcript import load_transcript
from tests.conftest import py
from tests.helpers import run_cli

pytestmark = pytest.mark.docker

FILL = py("with open('junk.bin', 'wb') as f:\n    for _ in range(100):\n        f.write(b'x' * (1 << 20))")
TWO_MIB = py("open('two.bin', 'wb').write(b'y' * (2 << 20))\nprint('wrote two.bin')")


def executions(run_dir: Path) -> list[dict]:
    return [e for m in load_transcript(run_dir)["messages"] for e in (m.get("outcome") or {}).get("executions", [])]


def run(scenario: Path, ws: Path, *args: str) -> Path:
    proc = run_cli("run", str(scenario), "--workspace", str(ws), "--json", *args)
    assert proc.stdout.strip(), proc.stderr
    return Path(json.loads(proc.stdout)["run_dir"])


def test_a_disk_full_block_leaves_its_big_file_in_the_sandbox_and_only_it_is_tagged(sandbox_image, scenario_file,
                                                                                     tmp_path):
    path = scenario_file([FILL, py("print('ok')")], name="full", sandbox={"disk": "32m"},
                         checks=[{"stdout_contains": "ok"}])
    run_dir = run(path, tmp_path / "ws")
    first, second = executions(run_dir)
    assert first["disk_full"] and not second["disk_full"]
    assert "files larger than 16m (sandbox.copy_back_max) stay in the sandbox" in first["output"]
    assert "junk.bin (32.0 MiB)" in first["output"] or "junk.bin (31." in first["output"], first["output"]
    assert not (run_dir / "workspace" / "junk.bin").exists()  # not 32 MiB of junk in the run folder
    assert second["exit_code"] == 0 and "could not be written" not in second["output"]
    assert "block02.py (saved in the run folder) could not be put in it" in second["output"]
    assert (run_dir / "workspace" / "block02.py").is_file()


@pytest.mark.parametrize("cap,copied", [("1m", False), ("4m", True)])
def test_copy_back_max_is_configurable(sandbox_image, scenario_file, tmp_path, cap, copied):
    run_dir = run(scenario_file([TWO_MIB], name="cap", sandbox={"copy_back_max": cap}), tmp_path / "ws")
    (only,) = executions(run_dir)
    assert (run_dir / "workspace" / "two.bin").exists() is copied
    assert ("two.bin (2.0 MiB)" in only["output"]) is not copied, only["output"]


def test_resume_carries_binary_files_and_goes_on_with_the_block_numbers(sandbox_image, scenario_file, tmp_path):
    write = py("open('data.bin', 'wb').write(bytes(range(256)) * 4)\nprint('saved')")
    read = py("data = open('data.bin', 'rb').read()\nprint(len(data), data[:3])")
    path = scenario_file([write, read], name="resumed", user_proxy={"max_consecutive_auto_reply": 0})
    parent = run(path, tmp_path / "ws")
    assert [e["filename"] for e in executions(parent)] == ["block01.py"]
    proc = run_cli("replay", str(parent), "--resume", "--max-auto-reply", "0")
    assert proc.returncode in (0, 1), proc.stderr
    assert "not carried over" not in proc.stderr
    child = next(p for p in parent.parent.iterdir() if p != parent)
    (new,) = executions(child)
    assert new["filename"] == "block02.py"  # not block01.py again: the history already has a block01.py
    assert new["exit_code"] == 0 and "1024 b'\\x00\\x01\\x02'" in new["output"], new["output"]
    assert (child / "workspace" / "data.bin").read_bytes() == bytes(range(256)) * 4
