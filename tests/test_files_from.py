"""`files_from:`: a project folder copied into every attempt's workspace, with caps and one-line errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents.loop.conversation import RunOptions, run_scenario
from agents.loop.errors import EXIT_BAD_INPUT, ScenarioError
from agents.record.transcript import load_transcript
from agents.scenario.project_files import MAX_BYTES, MAX_FILES
from agents.scenario.spec import load_scenario
from tests.conftest import py
from tests.test_bad_input import error_line, no_run_folder, run_yaml

BINARY = bytes(range(256)) * 4
LISTING = "import os\nfor d, _, fs in os.walk('.'):\n    for f in fs:\n        print(os.path.join(d, f))"


def make_project(root: Path) -> Path:
    """A small project: a package, nested folders, a binary file, and folders that are never copied."""
    proj = root / "proj"
    for rel, text in {"shop/__init__.py": "VERSION = '0'\n", "shop/price.py": "def total(xs):\n    return sum(xs)\n",
                      "shop/deep/er/leaf.txt": "leaf\n", "README.md": "# shop\n", ".git/HEAD": "ref: main\n",
                      "__pycache__/x.pyc": "c", "shop/__pycache__/price.pyc": "c", ".venv/bin/python": "v",
                      ".pytest_cache/v": "p", "node_modules/m/index.js": "n"}.items():
        (proj / rel).parent.mkdir(parents=True, exist_ok=True)
        (proj / rel).write_text(text)
    (proj / "data.bin").write_bytes(BINARY)
    return proj


def test_tree_is_copied_with_binaries_caches_skipped_and_files_winning(tmp_path, workspaces, scenario_file):
    make_project(tmp_path)
    (tmp_path / "proj" / "shop" / "alias.py").symlink_to("price.py")  # a link inside: copied as the file
    (tmp_path / "proj" / "shopdir").symlink_to("shop")  # a link to a folder inside: skipped
    path = scenario_file([py(LISTING)], files_from="proj", files={"shop/__init__.py": "VERSION = '1'\n"},
                         sandbox={"kind": "local"})
    scenario = load_scenario(path)
    expected = {"README.md", "data.bin", "shop/__init__.py", "shop/alias.py", "shop/deep/er/leaf.txt",
                "shop/price.py"}
    assert set(scenario.starting_files()) == expected
    result = run_scenario(scenario, RunOptions())
    assert result.status == "success"
    ws = result.run_dir / "workspace"
    assert (ws / "data.bin").read_bytes() == BINARY
    assert (ws / "shop/__init__.py").read_text() == "VERSION = '1'\n"  # files: wins over the folder
    alias = ws / "shop/alias.py"
    assert alias.read_text() == (ws / "shop/price.py").read_text() and not alias.is_symlink()
    printed = load_transcript(result.run_dir)["messages"][2]["outcome"]["executions"][0]["output"].split()
    assert sorted(p.removeprefix("./") for p in printed if "block" not in p) == sorted(expected)
    snap = load_transcript(result.run_dir)["scenario"]
    assert snap["files_from"] == {"folder": "proj", "binary_files": {"data.bin": len(BINARY)}}
    assert snap["files"]["shop/price.py"] == "def total(xs):\n    return sum(xs)\n"
    assert snap["files"]["shop/__init__.py"] == "VERSION = '1'\n" and "data.bin" not in snap["files"]


def test_every_attempt_starts_from_the_folder(tmp_path, workspaces, scenario_file):
    make_project(tmp_path)
    spoil = py("open('shop/price.py', 'w').write('broken')\nraise SystemExit(1)")
    path = scenario_file([spoil, py("print(open('shop/price.py').read())")], files_from="proj",
                         sandbox={"kind": "local"}, strategy={"attempts": 2},
                         user_proxy={"max_consecutive_auto_reply": 0})
    result = run_scenario(load_scenario(path), RunOptions())
    assert [a["status"] for a in result.attempts] == ["max_replies", "success"]
    assert (result.run_dir / "workspace-2" / "shop/price.py").read_text() == "def total(xs):\n    return sum(xs)\n"


def yaml_with(folder: str) -> str:
    return ('task: x\nmodel: {provider: scripted, replies: ["```python\\nprint(1)\\n```"]}\n'
            f"files_from: {folder}\n")


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_bad_folders_are_one_line_with_file_and_line_and_exit_2(tmp_path):
    (tmp_path / "a_file.txt").write_text("x")
    many = tmp_path / "many"
    many.mkdir()
    for i in range(MAX_FILES + 1):
        (many / f"f{i}.txt").touch()
    big = tmp_path / "big"
    big.mkdir()
    with open(big / "huge.bin", "wb") as fh:  # sparse: no disk used, refused before it is read
        fh.truncate(MAX_BYTES + 1)
    out = tmp_path / "out"
    out.mkdir()
    (out / "ok.py").write_text("x = 1\n")
    os.symlink("/etc/passwd", out / "secret.txt")
    cases = {"nowhere": f"folder '{tmp_path / 'nowhere'}' not found; the path is relative to the scenario file",
             "a_file.txt": f"'{tmp_path / 'a_file.txt'}' is not a folder; list single files under files: instead",
             "many": "the folder holds more than 2,000 files (the cap); point files_from at a smaller folder or "
                     "remove generated files",
             "big": "the folder holds more than 20.0 MiB (the cap; huge.bin is 20.0 MiB); point files_from at a "
                    "smaller folder",
             "out": "secret.txt is a symbolic link to '/etc/passwd', outside the folder; copy the file into the "
                    "folder instead"}
    for folder, message in cases.items():
        proc, path, ws = run_yaml(tmp_path, yaml_with(folder), name=f"bad_{folder.replace('.', '_')}")
        assert proc.returncode == EXIT_BAD_INPUT, proc.stderr
        assert error_line(proc) == f"{path}:3: files_from: {message}"
        assert no_run_folder(ws)


def test_a_link_out_through_a_linked_folder_is_refused(tmp_path):
    proj = tmp_path / "proj"
    (proj / "pkg").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (proj / "pkg" / "ext").symlink_to(outside)
    (tmp_path / "s.yaml").write_text(yaml_with("proj"))
    with pytest.raises(ScenarioError, match=r"s\.yaml:3: files_from: pkg/ext is a symbolic link to .*outside"):
        load_scenario(tmp_path / "s.yaml")


def test_caps_are_module_constants(tmp_path, monkeypatch):
    make_project(tmp_path)
    (tmp_path / "s.yaml").write_text("\n" + yaml_with("proj"))
    monkeypatch.setattr("agents.scenario.project_files.MAX_FILES", 3)
    with pytest.raises(ScenarioError, match=r"s\.yaml:4: files_from: the folder holds more than 3 files"):
        load_scenario(tmp_path / "s.yaml")
    monkeypatch.setattr("agents.scenario.project_files.MAX_FILES", 100)
    monkeypatch.setattr("agents.scenario.project_files.MAX_BYTES", 1000)
    with pytest.raises(ScenarioError, match=r"s\.yaml:4: files_from: the folder holds more than 1000 B"):
        load_scenario(tmp_path / "s.yaml")


def test_a_files_entry_cannot_stand_where_the_folder_has_a_folder(tmp_path):
    make_project(tmp_path)
    (tmp_path / "s.yaml").write_text(yaml_with("proj") + "files:\n  shop: x\n")
    with pytest.raises(ScenarioError, match=r"s\.yaml:3: files_from: files: entry 'shop' collides with files_from"):
        load_scenario(tmp_path / "s.yaml")
