"""AG2's own tests for its command-line executors as a yardstick for our SandboxCodeExecutor.

The reference is test/coding/test_commandline_code_executor.py of ag2ai/ag2 (read, not copied: each case below is
written in our words and names the upstream test it follows). Its cases already ported in tests/test_ag2_executor.py
(run there against both executors) are not repeated here: `_test_execute_code`, `_test_timeout`, the restart,
`_test_conversable_agent_code_execution`, `test_silent_pip_install`, `test_valid_relative_path` and
`test_invalid_relative_path`. docs/BENCHMARKS.md ("AG2's executor tests as a yardstick") has the table of every
upstream case: passed, differs (and why) or not applicable. Beyond AG2's cases: the languages of the sandbox, each
with AG2's `filename:` and bare first-line forms, run by a real ConversableAgent. Real containers, no mocks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from autogen import ConversableAgent
from autogen.coding import CodeBlock

from agents.loop.errors import BadInputError, WorkDirTooLarge
from agents.sandbox.ag2_executor import SandboxCodeExecutor
from agents.sandbox.image import LANGUAGES_LABEL, image_status
from tests.helpers import toolchains_image

pytestmark = pytest.mark.docker

SAVE_NOTHING_RUN = {"python": False, "bash": False, "javascript": False, "html": False, "css": False}
"""The policies of AG2's save-only cases: no language runs."""
HELLO = {
    "c": ("c", '#include <stdio.h>\nint main(void) { printf("hello from c\\n"); return 0; }'),
    "cpp": ("cpp", '#include <iostream>\nint main() { std::cout << "hello from cpp" << std::endl; }'),
    "go": ("go", 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello from go") }'),
    "rust": ("rs", 'fn main() { println!("hello from rust"); }'),
    "javascript": ("js", 'console.log("hello from javascript");'),
}
"""A whole program of each language of the sandbox, by its name: (file suffix, code)."""


def run(executor: SandboxCodeExecutor, code: str, language: str) -> object:
    return executor.execute_code_blocks([CodeBlock(code=code, language=language)])


@pytest.fixture
def python_only(sandbox_image: str, tmp_path: Path) -> Iterator[SandboxCodeExecutor]:
    with SandboxCodeExecutor(image=sandbox_image, work_dir=tmp_path / "work") as executor:
        yield executor


@pytest.fixture
def every_language(tmp_path: Path) -> Iterator[SandboxCodeExecutor]:
    toolchains_image()  # built if missing; the executor picks the smallest built image holding the languages
    with SandboxCodeExecutor(languages=list(HELLO), work_dir=tmp_path / "work") as executor:
        yield executor


# -- execution_policies ------------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", ["python", "bash", "html", "javascript"])
def test_execution_policy_enforcement(lang: str, sandbox_image: str, tmp_path: Path) -> None:
    """Upstream `test_execution_policy_enforcement`: with every policy False, a block is saved and not run."""
    with SandboxCodeExecutor(image=sandbox_image, work_dir=tmp_path, execution_policies=SAVE_NOTHING_RUN) as ex:
        code = "print('Hello, world!')" if lang == "python" else "echo 'Hello, world!'"
        result = run(ex, code, lang)
    assert "Hello, world!" not in result.output and result.code_file is not None
    assert result.exit_code == 0 and Path(result.code_file).read_text() == code


def test_policy_override(sandbox_image: str) -> None:
    """Upstream `test_policy_override`: the given policies update the defaults and add no key."""
    with SandboxCodeExecutor(image=sandbox_image, execution_policies={"python": False, "javascript": True}) as ex:
        policies = ex.execution_policies
    assert policies["python"] is False and policies["javascript"] is True
    default = SandboxCodeExecutor.DEFAULT_EXECUTION_POLICY
    assert set(policies) == set(default)
    assert all(policies[lang] == on for lang, on in default.items() if lang not in ("python", "javascript"))


def test_policy_keys_take_the_fence_spellings_and_a_wrong_one_is_one_line(sandbox_image: str) -> None:
    """Ours: `py`, `c++`, `js` name the same policy as python, cpp, javascript; an unknown language or a value that
    is not a bool is refused in one line before any container starts (AG2 stores any key)."""
    with SandboxCodeExecutor(image=sandbox_image, execution_policies={"py": False, "c++": False, "js": False}) as ex:
        assert [ex.execution_policies[k] for k in ("python", "cpp", "javascript")] == [False, False, False]
    with pytest.raises(BadInputError, match=r"^SandboxCodeExecutor: execution_policies: 'pwsh' is not a language"):
        SandboxCodeExecutor(image=sandbox_image, execution_policies={"pwsh": True})
    with pytest.raises(BadInputError, match=r"'python': 'yes' is neither True \(run its blocks\) nor False"):
        SandboxCodeExecutor(image=sandbox_image, execution_policies={"python": "yes"})  # type: ignore[dict-item]


def test_a_saved_block_is_in_the_sandbox_for_the_next_one(python_only: SandboxCodeExecutor) -> None:
    """Ours: save-only is about running, not about the sandbox: the next block that runs sees the saved file."""
    python_only.execution_policies["python"] = False
    result = python_only.execute_code_blocks([
        CodeBlock(code="# filename: greet.py\nprint('hi from greet')", language="python"),
        CodeBlock(code="python3 greet.py", language="sh")])
    assert result.exit_code == 0 and result.output == "saved greet.py (44 bytes)\nhi from greet\n"


# -- the file a block is saved as ----------------------------------------------------------------------------
@pytest.mark.parametrize("save_file_only", [False, True])
def test_save_files(save_file_only: bool, sandbox_image: str, tmp_path: Path) -> None:
    """Upstream `test_local_commandline_code_executor_save_files` and `..._save_files_only` (`_test_save_files`):
    AG2's `filename:` forms and its bare forms (`# test.py`, `// test.js`, `/* test.css */`, `<!-- test.html -->`)
    save the block under that name; Python runs unless its policy says save only."""
    policies = SAVE_NOTHING_RUN if save_file_only else None
    with SandboxCodeExecutor(image=sandbox_image, work_dir=tmp_path, execution_policies=policies) as ex:
        for first in ("# filename: test.py", "# test.py"):
            result = run(ex, f"{first}\nimport sys; print('hello world!')", "python")
            assert result.exit_code == 0 and result.code_file is not None
            assert ("hello world!" in result.output) != save_file_only
            assert Path(result.code_file).name == "test.py" and Path(result.code_file).read_text().startswith(first)
        for lang, body, firsts in [
                ("javascript", "console.log('hello world!')", ("// filename: test.js", "// test.js")),
                ("css", "h1 { color: red; }", ("/* filename: test.css */", "/* test.css */")),
                ("html", "<h1>hello world!</h1>", ("<!-- filename: test.html -->", "<!-- test.html -->"))]:
            for first in firsts:
                result = run(ex, f"{first}\n{body}", lang)
                name = f"test.{ {'javascript': 'js'}.get(lang, lang)}"
                assert result.exit_code == 0 and "hello world!" not in result.output.replace(body, "")
                assert result.code_file is not None and Path(result.code_file).name == name


def test_a_comment_that_is_not_a_file_name_names_no_file(python_only: SandboxCodeExecutor) -> None:
    """Ours (differs from AG2, which saves `# compute the sum` as a file of that name): only a lone file name with
    a code or text suffix is AG2's bare form."""
    for first in ("# compute the sum", "# v1.0", "# see notes.txt below"):
        result = run(python_only, f"{first}\nprint(2 + 2)", "python")
        assert result.exit_code == 0 and result.output.strip() == "4"
        assert Path(result.code_file).name.startswith("block")


@pytest.mark.parametrize("name", list(HELLO))
def test_each_language_runs_with_the_filename_and_the_bare_form(name: str,
                                                                every_language: SandboxCodeExecutor) -> None:
    """Ours, beyond AG2 (whose executors run no compiled language): a block of each language of the sandbox is
    built and run as our loop runs it, saved under the name of its `// filename:` or bare `// name` first line."""
    suffix, code = HELLO[name]
    tag = {"javascript": "js", "cpp": "c++"}.get(name, name)
    result = every_language.execute_code_blocks([
        CodeBlock(code=f"// filename: named_{name}.{suffix}\n{code}", language=tag),
        CodeBlock(code=f"// bare_{name}.{suffix}\n{code}", language=tag)])
    assert result.exit_code == 0, result.output
    assert result.output.count(f"hello from {name}") == 2
    assert Path(result.code_file).name == f"named_{name}.{suffix}"
    assert (every_language.work_dir / f"bare_{name}.{suffix}").read_text().startswith(f"// bare_{name}.{suffix}\n")


def test_c_block_comment_and_shell_forms(every_language: SandboxCodeExecutor) -> None:
    """Ours: AG2's `/* name */` form over a C file, and `# name.sh` over a bash block, run under those names."""
    result = every_language.execute_code_blocks([
        CodeBlock(code=f"/* block_comment.c */\n{HELLO['c'][1]}", language="c"),
        CodeBlock(code="# hello.sh\necho \"hello from $0\"", language="bash")])
    assert result.exit_code == 0 and result.output == "hello from c\nhello from hello.sh\n"
    assert (every_language.work_dir / "block_comment.c").exists()


def test_a_language_the_sandbox_lacks_says_how_to_get_it(python_only: SandboxCodeExecutor) -> None:
    """Ours: a Go block in the Python image runs nothing and names the argument that gives it a Go toolchain."""
    result = run(python_only, HELLO["go"][1], "go")
    assert result.exit_code == 1 and "SandboxCodeExecutor(languages=['go'])" in result.output


def test_an_agent_runs_a_c_block_and_a_go_block(tmp_path: Path) -> None:
    """Upstream `_test_conversable_agent_code_execution`, with a C block and a Go block in the message: the image
    is the one the languages choose, as a scenario's `sandbox.languages` does."""
    toolchains_image()
    with SandboxCodeExecutor(languages=["c", "go"], work_dir=tmp_path) as executor:
        labels = image_status(executor.image).get("labels") or {}
        assert {"c", "go"} <= set(labels.get(LANGUAGES_LABEL, "").split(","))
        agent = ConversableAgent("user_proxy", code_execution_config={"executor": executor}, llm_config=False)
        message = (f"Two programs:\n```c\n{HELLO['c'][1]}\n```\nand\n```go\n// main.go\n{HELLO['go'][1]}\n```\n")
        reply = agent.generate_reply([{"role": "user", "content": message}],
                                     sender=ConversableAgent("user", llm_config=False, code_execution_config=False))
    assert isinstance(reply, str) and "exitcode: 0" in reply
    assert "hello from c" in reply and "hello from go" in reply and (tmp_path / "main.go").exists()


# -- the executor's arguments -------------------------------------------------------------------------------
def test_commandline_executor_init(sandbox_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream `test_commandline_executor_init`: timeout and work_dir as given (work_dir="." in a small folder),
    and FileNotFoundError for a folder whose parent is missing."""
    monkeypatch.chdir(tmp_path)
    with SandboxCodeExecutor(image=sandbox_image, timeout=10, work_dir=".") as executor:
        assert executor.timeout == 10 and str(executor.work_dir) == "."
    with pytest.raises(FileNotFoundError):
        SandboxCodeExecutor(image=sandbox_image, timeout=111, work_dir="/invalid/directory")


def test_a_work_dir_larger_than_the_disk_is_one_line_with_the_fix(sandbox_image: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Ours: work_dir="." in a folder larger than the sandbox's /workspace was a DockerUnavailable ("no space left
    on device"); it is one line that names the size, the limit and the fix, and a bigger `disk=` fits it."""
    for i in range(3):
        (tmp_path / f"data{i}.bin").write_bytes(b"x" * (3 << 20))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(WorkDirTooLarge) as raised:
        SandboxCodeExecutor(image=sandbox_image, work_dir=".", disk="8m")
    said = str(raised.value)
    assert "\n" not in said and said.startswith(f"SandboxCodeExecutor: work_dir {tmp_path} holds 9.0 MiB in 3 files")
    assert "(disk=8m)" in said and "a folder of its own" in said and 'disk="28m"' in said
    with SandboxCodeExecutor(image=sandbox_image, work_dir=".", disk="28m") as executor:
        assert run(executor, "import os; print(os.path.getsize('data2.bin'))", "python").output.strip() == "3145728"


def test_container_create_kwargs_are_not_taken(sandbox_image: str) -> None:
    """Upstream `test_container_create_kwargs_forwarding` (differs on purpose): the container's settings are the
    sandbox's hardening, so there is no argument that passes others to Docker."""
    with pytest.raises(TypeError, match="container_create_kwargs"):
        SandboxCodeExecutor(image=sandbox_image, container_create_kwargs={"environment": {"A": "1"}})  # type: ignore
