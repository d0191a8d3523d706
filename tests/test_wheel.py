"""The built wheel in a fresh venv, run from an empty folder: the model table, the image recipes and the default
workspaces come with the package, not from a checkout."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SHIPPED = ("agents/models/llm.yaml", "agents/sandbox/docker/Dockerfile", "agents/sandbox/docker/build-rootfs.sh",
           "agents/feedback/prompts/system.md", "agents/replay/page.css", "agents/sandbox/incontainer/http_check.py",
           "agents/sandbox/incontainer/listening.py")


def sh(*argv: str | Path, cwd: Path, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)
    assert proc.returncode == 0, f"{argv}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """(the venv's codeduet script, a user's environment): the wheel built from a copy of this checkout's sources
    (the build writes build/ and *.egg-info next to them) and installed with its dependencies from PyPI."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(ROOT / "agents", src / "agents", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CODEDUET_", "VIRTUAL_ENV", "PYTHON")) and k != "PIP_REQUIRE_VIRTUALENV"}
    env.update(XDG_CONFIG_HOME=str(tmp / "xdg"), COLUMNS="200", NO_COLOR="1", TERM="dumb")
    sh(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", tmp / "dist", src, cwd=tmp, env=env)
    wheel = next((tmp / "dist").glob("codeduet-*.whl"))
    assert set(SHIPPED) <= set(zipfile.ZipFile(wheel).namelist())
    sh(sys.executable, "-m", "venv", tmp / "venv", cwd=tmp, env=env)
    sh(tmp / "venv" / "bin" / "python", "-m", "pip", "install", "-q", wheel, cwd=tmp, env=env)
    return tmp / "venv" / "bin" / "codeduet", env


def test_the_wheel_runs_a_scenario_and_replays_it_from_an_empty_folder(installed, sandbox_image, tmp_path):
    codeduet, env = installed
    folder = tmp_path / "empty"
    folder.mkdir()
    # no model: in the scenario; --model scripted is an entry of the table shipped in the package (a failing
    # script, then its fix that prints 3)
    (folder / "x.yaml").write_text(yaml.safe_dump({"name": "x", "task": "Print the largest number.",
                                                   "strategy": {"attempts": 1}, "sandbox": {"image": sandbox_image},
                                                   "checks": [{"stdout_contains": "3"}]}))
    ran = sh(codeduet, "run", "x.yaml", "--model", "scripted", cwd=folder, env=env)
    last = ran.stdout.rstrip().splitlines()[-1]
    assert last.startswith(f"run: {folder / 'workspaces' / 'x'}/") and last.endswith(" status=success"), last
    run_dir = Path(last.split()[1])
    assert (run_dir / "transcript.json").is_file()
    shown = sh(codeduet, "replay", run_dir.relative_to(folder), cwd=folder, env=env)
    assert "IndexError" in shown.stdout and "PASSED stdout_contains: '3'" in shown.stdout
    listed = sh(codeduet, "runs", cwd=folder, env=env)
    assert run_dir.name in listed.stdout
    status = sh(codeduet, "model", "status", cwd=folder, env=env)
    table = Path(status.stdout.splitlines()[0].removeprefix("model table: "))
    assert table.name == "llm.yaml" and "site-packages" in table.parts and table.is_file()
    assert sorted(p.name for p in folder.iterdir()) == ["workspaces", "x.yaml"]


def test_the_wheel_builds_the_sandbox_image(installed, sandbox_image, tmp_path):
    """`sandbox build` from the install: its recipes are package data; the rootfs already imported for the default
    image is tagged again, not imported a second time (1 GB: 98 s of this test on an AVX2 machine before)."""
    from docker.errors import ImageNotFound

    from agents.sandbox.image import base_tag, docker_client

    codeduet, env = installed
    tag = f"codeduet-wheeltest:{secrets.token_hex(4)}"
    try:
        built = sh(codeduet, "sandbox", "build", "--image", tag, cwd=tmp_path, env=env)
        assert f"built {tag}" in built.stdout
        client = docker_client()
        assert client.images.get(base_tag(tag)).id == client.images.get(base_tag(sandbox_image)).id
        status = subprocess.run([str(codeduet), "sandbox", "status", "--image", tag], capture_output=True, text=True,
                                cwd=tmp_path, env=env, timeout=120)
        assert status.returncode == 0 and f"image: {tag} present" in status.stdout, status.stdout + status.stderr
    finally:
        client = docker_client()
        for name in (tag, base_tag(tag)):
            try:
                client.images.remove(name)
            except ImageNotFound:  # not built: nothing to remove
                pass
