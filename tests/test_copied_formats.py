"""Our own report formats copied back by the model: a line count or size after a `# filename:` path, a preview
header, a fence echoing `(no output)` or a traceback. None of them changes what is saved or run."""

from __future__ import annotations

import pytest

from agents.feedback.workspace_view import current_text, files_changed_text
from agents.loop.briefing import file_preview
from agents.loop.codeblocks import classify_reply, extract_code_blocks
from agents.loop.conversation import RunOptions, run_scenario
from agents.record.transcript import load_transcript
from agents.sandbox.filenames import declared_filename
from agents.scenario.spec import load_scenario
from tests.conftest import py


def reply(*blocks: str) -> str:
    """An assistant reply holding these python blocks, in order."""
    return "Here it is.\n" + "\n".join(f"```python\n{b}\n```" for b in blocks)


@pytest.mark.parametrize("line, path", [
    ("# filename: pkg/cart.py (11 lines)", "pkg/cart.py"), ("# filename: pkg/cart.py (1 line):", "pkg/cart.py"),
    ("# filename: test_x.py (308 B)", "test_x.py"), ("# filename: data.json (2.4 KiB)", "data.json"),
    ("# filename: big.csv (1.1 MiB)", "big.csv"), ("# filename: data.json (1,234 bytes)", "data.json"),
    ("# filename: calc.py:", "calc.py"), ("# filename: `calc.py` (3 lines):", "calc.py"),
    ("<!-- filename: i.html (3 lines) -->", "i.html"), ("# filename: odd (name).py", "odd (name).py")])
def test_a_count_or_size_copied_from_our_previews_is_not_part_of_the_filename(line, path):
    assert declared_filename(line + "\nx = 1\n") == path


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_filename_line_copied_with_its_line_count_saves_the_file(workspaces, loop_file, tmp_path):
    (tmp_path / "test_cart.py").write_text("from pkg.cart import total\n\n\ndef test_total():\n"
                                           "    assert total([2, 3]) == 5\n")
    fixed = "# filename: pkg/cart.py (2 lines)\ndef total(prices):\n    return sum(prices)\n"
    path = loop_file([reply(fixed), "never asked"], task="Fix total() in pkg/cart.py.",
                     files={"pkg/__init__.py": "", "pkg/cart.py": "def total(prices):\n    return 0\n"},
                     checks=[{"pytest": "test_cart.py"}])
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    assert load_transcript(result.run_dir)["messages"][2]["outcome"]["written"] == ["pkg/cart.py"]
    assert "return sum(prices)" in (result.run_dir / "workspace" / "pkg" / "cart.py").read_text()


def test_every_path_our_reports_print_copied_after_filename_is_the_path(tmp_path):
    """The line a model copies: the line above a preview's fence, and a changed-files entry's path."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "cart.py").write_text("".join(f"x{i} = {i}\n" for i in range(60)))
    previews = [file_preview({"pkg/cart.py": "a = 1\n" * 50}, 30), current_text(tmp_path, ["pkg/cart.py"])]
    for text in previews:
        lines = text.splitlines()
        heading = lines[lines.index("```") - 1]
        assert heading == "pkg/cart.py" and declared_filename(f"# filename: {heading}") == "pkg/cart.py"
        assert "(the first 30 of 50 lines shown)" in text or "(the first 40 of 60 lines shown)" in text
    entry = files_changed_text([{"path": "pkg/cart.py", "change": "created", "size": 308}])
    assert entry == "- created (308 B): pkg/cart.py"
    assert declared_filename(f"# filename: {entry.split(': ', 1)[1]}") == "pkg/cart.py"


@pytest.mark.parametrize("fence", ["```\n(no output)\n```", "```python\n(no output)\n```",
                                   "```\nTraceback (most recent call last):\n  File \"block01.py\", line 1\n"
                                   "NameError: name 'x' is not defined\n```",
                                   "```\n[... output truncated: 9,000 characters cut (output_limit=10,000) ...]\n```"])
def test_a_fence_holding_only_text_our_reports_print_is_not_code(fence):
    assert extract_code_blocks(f"The output was:\n{fence}") == [] and classify_reply(fence) == "no_code"
    assert extract_code_blocks(f"{fence}\n```python\nprint(1)\n```")[0].code == "print(1)\n"


def test_a_reply_whose_only_fence_is_no_output_is_not_executed(workspaces, loop_file):
    echo = "The program printed nothing:\n```\n(no output)\n```"
    result = run_scenario(load_scenario(loop_file([echo, py("print(42)")])), RunOptions())
    assert result.status == "success", result.reason
    t = load_transcript(result.run_dir)
    assert t["totals"]["executions"] == 1  # only print(42) ran
    (rejected,) = t["rejected_replies"]
    assert rejected["reason"] == "no_code" and "(no output)" in rejected["content"]


