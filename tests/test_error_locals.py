"""The sandbox prints the failing frame's variables under a traceback (agents/sandbox/error_locals.py), in a real
container, and a script otherwise runs exactly as `python3 file.py` would run it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.feedback.feedback import Outcome, error_line, execution_feedback
from agents.sandbox.config import SandboxConfig
from agents.sandbox.docker_executor import DockerExecutor
from agents.sandbox.error_locals import LOCALS_HEADER

pytestmark = pytest.mark.docker

PARSE = '''from collections import defaultdict

def count(path):
    counts = defaultdict(int)
    for line in open(path):
        ip, status = line.split()
        counts[status] += 1
    return counts

print("reading")
count("access.log")
'''


@pytest.fixture(params=[True, False], ids=["locals", "plain"])
def executor(request, sandbox_image: str, tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "access.log").write_text('10.0.0.9 - - "GET /about HTTP/1.1" 200 675\n', encoding="utf-8")
    ex = DockerExecutor(SandboxConfig(image=sandbox_image, timeout=10, error_locals=request.param), ws)
    ex.start()
    yield ex
    ex.stop()


def test_a_failing_script_shows_the_variables_of_its_failing_line(executor):
    r = executor.execute(PARSE)
    assert r.exit_code == 1 and r.output.startswith("reading\n")
    assert 'File "/workspace/block01.py", line 6, in count' in r.output
    assert "ValueError: too many values to unpack (expected 2)" in r.output
    assert "<string>" not in r.output and "runpy" not in r.output  # only the script's own frames
    if executor.cfg.error_locals:
        block = r.output[r.output.index(LOCALS_HEADER):]
        assert block.splitlines()[0] == f"{LOCALS_HEADER} (block01.py line 6, in count()):"
        assert "  line = '10.0.0.9 - - \"GET /about HTTP/1.1\" 200 675\\n'" in block  # the data that broke it
        assert "  path = 'access.log'" in block and "counts = defaultdict(<class 'int'>, {})" in block
        assert block.index("  line =") < block.index("  path =")  # the failing line's own names first
    else:
        assert LOCALS_HEADER not in r.output
    # what summaries and attempt notes quote is the exception, not a variable
    assert error_line(r.output) == "ValueError: too many values to unpack (expected 2)"
    feedback = execution_feedback(Outcome("executed", results=[r]))
    assert ("line = '10.0.0.9" in feedback) == executor.cfg.error_locals


def test_a_script_runs_as_it_would_alone(executor):
    """__name__, __file__, sys.argv, sys.path[0], its globals, pickling of its classes, exit codes: as `python3 f`."""
    r = executor.execute("import os, pickle, sys\nclass P: pass\n"
                         "print(__name__, __file__, sys.argv, sys.path[0], os.getcwd())\n"
                         "print(sorted(k for k in globals() if not k.startswith('__')))\n"
                         "print(type(pickle.loads(pickle.dumps(P()))).__name__)\n"
                         "sys.exit(4)")
    assert r.exit_code == 4
    assert r.output.splitlines() == ["__main__ /workspace/block01.py ['block01.py'] /workspace /workspace",
                                     "['P', 'os', 'pickle', 'sys']", "P"]


def test_large_values_are_shortened_and_module_level_names_are_shown(executor):
    r = executor.execute("rows = [{'id': i, 'text': 'x' * 5000} for i in range(1000)]\nimport json\n"
                         "total = 0\nfor row in rows:\n    total += row['price']\n")
    assert r.exit_code == 1 and "KeyError: 'price'" in r.output
    if executor.cfg.error_locals:
        block = r.output[r.output.index(LOCALS_HEADER):]
        assert "(block01.py line 5, module level)" in block and "  total = 0" in block
        assert "  json =" not in block  # modules, functions and classes are not data
        assert all(len(line) < 260 for line in block.splitlines())
        assert len(block) < 2000


def test_an_exception_inside_a_library_shows_the_scripts_own_frame(executor):
    r = executor.execute("import json\ntext = '{\"a\": 1,}'\nvalue = json.loads(text)\n")
    assert r.exit_code == 1 and "JSONDecodeError" in r.output
    if executor.cfg.error_locals:
        assert f"{LOCALS_HEADER} (block01.py line 3, module level):\n  text = '{{\"a\": 1,}}'" in r.output


def test_a_syntax_error_reads_as_python_prints_it(executor):
    r = executor.execute("x = 1\nif x\n    print(x)\n")
    assert r.exit_code == 1
    assert [ln.strip() for ln in r.output.strip().splitlines()] == ['File "/workspace/block01.py", line 2', "if x", "^",
                                             "SyntaxError: expected ':'"]
