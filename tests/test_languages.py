"""C, C++, Go, Rust and JavaScript in the sandbox: blocks built and run, files saved and built, compiler and
sanitizer reports as feedback, crashes named, the `command:` check with test counts, and the shipped scripted
scenarios of every language through the product. Real containers of the image with every toolchain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.loop.codeblocks import CodeBlock
from agents.loop.conversation import RunOptions, run_scenario
from agents.loop.errors import ScenarioError
from agents.record.transcript import load_transcript
from agents.sandbox.config import SandboxConfig
from agents.sandbox.docker_executor import DockerExecutor
from agents.sandbox.languages import block_name, normalize
from agents.scenario.checks import CommandCheck
from agents.scenario.spec import load_scenario
from tests.conftest import ROOT
from tests.helpers import toolchains_image

ALL = ("c", "cpp", "go", "javascript", "rust")


@pytest.fixture(scope="session")
def language_sandbox() -> str:
    """The image with every toolchain, built locally if missing (`make test` builds it before the tests)."""
    return toolchains_image()


@pytest.fixture
def executor(tmp_path: Path, language_sandbox: str):
    ex = DockerExecutor(SandboxConfig(languages=list(ALL)), tmp_path / "ws")
    ex.start()
    yield ex
    ex.stop()


# -- configuration, no Docker --------------------------------------------------------------------------------------
def test_a_toolchains_tag_names_its_languages_and_no_other_tag_does():
    from agents.sandbox.image import tag_languages

    assert tag_languages("codeduet-sandbox:c-go") == ("c", "go")
    assert tag_languages("codeduet-sandbox:latest") == ()
    assert tag_languages("codeduet-sandbox:go-javascript-p1a2b3c4d") == ()  # a package set's tag: its hash decides
    assert tag_languages("someone/else:c-go") == ()


def test_languages_are_named_and_aliased():
    assert normalize(["C++", "js", "go", "python", "c"]) == ("c", "cpp", "go", "javascript")
    with pytest.raises(ValueError, match="unknown language 'cobol'"):
        normalize(["cobol"])
    assert [CodeBlock(tag, "x").runnable_as for tag in ("c", "c++", "golang", "rs", "node", "text")] == \
        ["c", "cpp", "go", "rust", "javascript", None]
    assert CodeBlock("c", "int main(){}").runs_in(["c"]) and not CodeBlock("c", "int main(){}").runs_in([])


def test_a_sandbox_with_languages_gets_their_image_and_roomier_limits():
    cfg = SandboxConfig(languages=["go", "c"])
    assert cfg.image == "codeduet-sandbox:c-go" and cfg.languages == ["c", "go"]
    assert (cfg.memory, cfg.timeout, cfg.tmpfs_size) == ("2g", 60.0, "1g")
    assert SandboxConfig(languages="rust", memory="1g").memory == "1g"  # what the scenario sets wins
    assert SandboxConfig().image == "codeduet-sandbox:latest" and SandboxConfig().memory == "512m"


def test_a_command_check_and_an_unknown_language_in_yaml(tmp_path: Path):
    path = tmp_path / "s.yaml"
    path.write_text("task: t\nsandbox:\n  languages: [go]\nchecks:\n  - command: go test ./...\n    exit_code: 0\n")
    check = load_scenario(path).checks[0]
    assert isinstance(check, CommandCheck) and check.command == "go test ./..." and check.label() == \
        "command: 'go test ./...'"
    path.write_text("task: t\nsandbox:\n  languages: [cobol]\n")
    with pytest.raises(ScenarioError, match=r"s\.yaml:3: sandbox\.languages: .*unknown language 'cobol'"):
        load_scenario(path)
    path.write_text("task: t\nchecks:\n  - command: make test\n    files: {t.c: missing.c}\n")
    with pytest.raises(ScenarioError, match="command file 'missing.c' not found"):
        load_scenario(path)


def test_a_frame_in_a_workspace_file_quotes_its_source_line(tmp_path: Path):
    from agents.feedback.workspace_view import quote_frames

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text("fn a() {}\n\n    let x = v[i + 1];\n", encoding="utf-8")
    (tmp_path / "stats.c").write_text("int main(void) {\n  items[n++] = value;\n}\n", encoding="utf-8")
    report = ("WRITE of size 4\n    stats.c:2 in read_numbers\n    src/lib.rs:3:17 in roman::to_roman\n"
              "    stats.c:99 in main\n    ../etc/passwd.c:1 in f\n    /usr/lib/x.c:1 in g\nstats.c:2 in prose")
    assert quote_frames(report, tmp_path).splitlines() == [
        "WRITE of size 4", "    stats.c:2 in read_numbers: items[n++] = value;",
        "    src/lib.rs:3:17 in roman::to_roman: let x = v[i + 1];", "    stats.c:99 in main",
        "    ../etc/passwd.c:1 in f", "    /usr/lib/x.c:1 in g", "stats.c:2 in prose"]


def test_a_lone_source_path_comment_names_the_file():
    assert CodeBlock("rust", "// src/lib.rs\npub fn f() {}\n").filename == "src/lib.rs"  # as the 1.5B writes it
    assert CodeBlock("c", "// compute the sum\nint main(void) {}\n").filename is None
    assert CodeBlock("python", "# utils.py\nx = 1\n").filename is None  # Python's rule is unchanged
    assert CodeBlock("c", "// notes.txt\nint main(void) {}\n").filename is None


def test_the_system_prompt_names_the_toolchains():
    from agents.feedback.prompts import system_message

    text = system_message(False, ["c", "rust"])
    assert "C: gcc" in text and "Rust: rustc, cargo" in text and "// filename:" in text and "```rust" in text
    assert system_message(False) == system_message(False, [])  # Python-only prompts unchanged


# -- blocks in the sandbox -----------------------------------------------------------------------------------------
@pytest.mark.docker
@pytest.mark.parametrize("language,code", [
    ("c", '#include <stdio.h>\nint main(void) { printf("hi from c %d\\n", 6 * 7); return 0; }\n'),
    ("cpp", '#include <iostream>\nint main() { std::cout << "hi from c++ " << 6 * 7 << std::endl; }\n'),
    ("go", 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hi from go", 6*7) }\n'),
    ("rust", 'fn main() { println!("hi from rust {}", 6 * 7); }\n'),
    ("javascript", 'console.log("hi from javascript", 6 * 7);\n'),
])
def test_a_block_of_each_language_is_built_and_run(executor, language, code):
    result = executor.execute(code, language)
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith("42") and "hi from" in result.output
    assert result.filename == block_name(language, 1) and result.language == language


@pytest.mark.docker
def test_named_files_are_saved_and_a_program_is_built_with_its_neighbours(executor):
    header = executor.execute("// filename: src/util.h\nint twice(int x);\n", "c")
    assert header.saved_only and (executor.workspace / "src/util.h").read_text().startswith("// filename: src/util.h")
    util = executor.execute('// filename: src/util.c\n#include "util.h"\nint twice(int x) { return 2 * x; }\n', "c")
    assert util.saved_only  # no main: saved, built with the program beside it
    main = executor.execute('// filename: src/main.c\n#include <stdio.h>\n#include "util.h"\n'
                            'int main(void) { printf("%d\\n", twice(21)); return 0; }\n', "c")
    assert main.exit_code == 0 and main.output.strip() == "42" and main.filename == "src/main.c"
    shell = executor.execute("cd src && cc -o app main.c util.c && ./app", "sh")
    assert shell.exit_code == 0 and shell.output.strip() == "42"


@pytest.mark.docker
def test_a_compiler_error_leads_the_feedback(executor):
    from agents.feedback.feedback import Outcome, execution_feedback

    result = executor.execute('#include <stdio.h>\nint main(void) {\n    printf("%d\\n", total);\n}\n', "c")
    assert result.exit_code != 0 and "total’ undeclared" in result.output  # gcc quotes ‘so’ in C.UTF-8
    feedback = execution_feedback(Outcome("executed", results=[result]))
    assert "block01.c:3" in feedback and "total’ undeclared" in feedback and "```c block" in feedback


@pytest.mark.docker
def test_addresssanitizer_names_the_bad_access_and_its_line(executor):
    from agents.feedback.feedback import Outcome, execution_feedback

    code = ("#include <stdlib.h>\n#include <stdio.h>\nint main(void) {\n"
            "    int *a = malloc(4 * sizeof(int));\n    for (int i = 0; i <= 4; i++) a[i] = i;\n"
            "    printf(\"%d\\n\", a[0]);\n    free(a);\n    return 0;\n}\n")
    result = executor.execute(code, "c")
    assert result.exit_code != 0 and "heap-buffer-overflow" in result.output
    feedback = execution_feedback(Outcome("executed", results=[result]), workspace=executor.workspace)
    assert "heap-buffer-overflow" in feedback
    assert "block01.c:5 in main: for (int i = 0; i <= 4; i++) a[i] = i;" in feedback  # the frame quotes its line
    assert "Shadow byte" not in feedback and "allocated by thread T0 here" in feedback and "block01.c:4" in feedback


@pytest.mark.docker
def test_a_crash_by_signal_is_named(executor):
    from agents.feedback.feedback import Outcome, execution_feedback

    # built by a shell block without sanitizers: the kernel's SIGSEGV is what stops it
    executor.execute("// filename: crash.c\n#include <stdio.h>\nint main(void) { int *p = 0; printf(\"before\\n\"); "
                     "fflush(stdout); return *p; }\n", "text")
    result = executor.execute("cc -o crash crash.c && ./crash", "sh")
    assert result.exit_code == 139, result.output
    feedback = execution_feedback(Outcome("executed", results=[result]))
    assert "segmentation fault (SIGSEGV)" in feedback and "before" in feedback


@pytest.mark.docker
def test_a_language_the_sandbox_lacks_is_refused_in_one_line(tmp_path, sandbox_image):
    ex = DockerExecutor(SandboxConfig(), tmp_path / "ws")
    ex.start()
    try:
        result = ex.execute('int main(void) { return 0; }', "c")
    finally:
        ex.stop()
    assert result.exit_code == 1 and "no C toolchain" in result.output and "languages: [c]" in result.output


# -- the command check --------------------------------------------------------------------------------------------
@pytest.mark.docker
def test_a_command_check_counts_go_tests_and_keeps_its_files_hidden(executor, tmp_path):
    checks = tmp_path / "checks"
    checks.mkdir()
    (checks / "add_test.go").write_text(
        'package add\n\nimport "testing"\n\n'
        'func TestOne(t *testing.T) { if Add(1, 2) != 3 { t.Errorf("Add(1, 2) = %d, want 3", Add(1, 2)) } }\n'
        'func TestZero(t *testing.T) { if Add(0, 0) != 0 { t.Error("Add(0, 0) != 0") } }\n')
    executor.execute("// filename: go.mod\nmodule add\n\ngo 1.22\n", "text")
    executor.execute("// filename: add.go\npackage add\n\nfunc Add(a, b int) int { return a - b }\n", "go")
    check = CommandCheck(command="go test ./...", files={"add_test.go": "checks/add_test.go"})
    passed, why, tests_passed, tests = check.evaluate(None, executor, tmp_path)
    assert not passed and (tests_passed, tests) == (1, 2)
    assert "TestOne" in why and "want 3" in why and "TestZero" not in why.split("TestOne")[0][-20:]
    assert not (executor.workspace / "add_test.go").exists()  # removed again: the code never sees the tests
    executor.execute("// filename: add.go\npackage add\n\nfunc Add(a, b int) int { return a + b }\n", "go")
    assert check.evaluate(None, executor, tmp_path)[0]


@pytest.mark.docker
def test_a_command_check_expects_an_exit_code(executor, tmp_path):
    assert CommandCheck(command="exit 3", exit_code=3).evaluate(None, executor, tmp_path)[0]
    passed, why, *_ = CommandCheck(command="echo nope; exit 1").evaluate(None, executor, tmp_path)
    assert not passed and why.startswith("it exited with 1") and "nope" in why


# -- the shipped scenarios ------------------------------------------------------------------------------------------
SCRIPTED = ["c_scripted", "cpp_scripted", "go_scripted", "rust_scripted", "js_scripted"]


@pytest.mark.docker
@pytest.mark.parametrize("name", SCRIPTED)
def test_each_languages_scripted_scenario_debugs_to_success(name, language_sandbox, workspaces):
    scenario = load_scenario(ROOT / "scenarios" / f"{name}.yaml")
    result = run_scenario(scenario, RunOptions())
    assert result.status == "success", result.reason
    messages = load_transcript(result.run_dir)["messages"]
    assert [m["role"] for m in messages] == ["task", "assistant", "execution", "assistant", "execution"]
    first = messages[2]["outcome"]
    assert not first["success"] and messages[4]["outcome"]["success"]


@pytest.mark.docker
def test_a_language_scenario_runs_through_the_cli(language_sandbox, tmp_path):
    from tests.helpers import run_cli

    proc = run_cli("run", str(ROOT / "scenarios" / "c_scripted.yaml"), "--workspace", str(tmp_path / "ws"), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    t = load_transcript(Path(json.loads(proc.stdout)["run_dir"]))
    report = t["messages"][2]["content"]
    assert "heap-buffer-overflow" in report and "block01.c:8" in report and "Shadow byte" not in report
    assert t["messages"][2]["outcome"]["executions"][0]["language"] == "c"


@pytest.mark.docker
def test_replay_execute_of_a_language_run_matches(language_sandbox, workspaces):
    from tests.helpers import run_cli

    result = run_scenario(load_scenario(ROOT / "scenarios" / "go_scripted.yaml"), RunOptions())
    proc = run_cli("replay", str(result.run_dir), "--execute")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 block(s): 2 match, 0 diverged" in proc.stdout


# -- the command line ------------------------------------------------------------------------------------------------
@pytest.mark.docker
def test_sandbox_status_lists_the_language_image_and_a_missing_set_names_its_build_command(language_sandbox):
    from agents.loop.errors import ImageMissing
    from agents.sandbox.image import ensure_image, image_status
    from tests.helpers import run_cli

    proc = run_cli("sandbox", "status", "--languages", "rust,c")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"image: {language_sandbox} present" in proc.stdout  # the set resolves to an image that has more
    assert "+ c, cpp, go, javascript, rust" in proc.stdout and "mem_limit=2g" in proc.stdout
    if image_status("codeduet-sandbox:c-javascript")["exists"]:  # a set nobody builds, unless they did
        pytest.skip("codeduet-sandbox:c-javascript is built here")
    with pytest.raises(ImageMissing, match=r"no sandbox image with c, javascript is built: run `codeduet sandbox "
                                           r"build --languages c,javascript`"):
        ensure_image("codeduet-sandbox:c-javascript", languages=("c", "javascript"))
    bad = run_cli("sandbox", "build", "--languages", "cobol")
    assert bad.returncode == 2 and "--languages: unknown language 'cobol'" in bad.stdout + bad.stderr


@pytest.mark.docker
def test_run_languages_adds_a_toolchain_to_a_python_scenario(language_sandbox, tmp_path):
    from tests.helpers import run_cli

    reply = "```go\npackage main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"total\", 6*7) }\n```"
    path = tmp_path / "s.yaml"
    path.write_text(json.dumps({"task": "Print 42 in Go.", "model": {"provider": "scripted", "replies": [reply]},
                                "checks": [{"stdout_contains": "total 42"}]}))
    assert run_cli("run", str(path), "--workspace", str(tmp_path / "a"), "--json").returncode == 1  # not run
    proc = run_cli("run", str(path), "--workspace", str(tmp_path / "b"), "--languages", "golang", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    t = load_transcript(Path(json.loads(proc.stdout)["run_dir"]))
    assert t["scenario"]["sandbox"]["languages"] == ["go"]
    html = tmp_path / "run.html"
    assert run_cli("replay", str(t["run_dir"]), "--html", str(html)).returncode == 0
    page = html.read_text()
    assert '<span class="nx">Println</span>' in page  # the Go block, highlighted as Go


@pytest.mark.docker
def test_sanitize_false_builds_c_plain(tmp_path, language_sandbox):
    ex = DockerExecutor(SandboxConfig(languages=["c"], sanitize=False), tmp_path / "ws")
    ex.start()
    try:
        result = ex.execute("#include <stdlib.h>\n#include <stdio.h>\nint main(void) {\n    int *a = malloc(64);\n"
                            "    a[16] = 7;\n    printf(\"unchecked %d\\n\", a[16]);\n    return 0;\n}\n", "c")
    finally:
        ex.stop()
    assert result.exit_code == 0 and "unchecked 7" in result.output and "AddressSanitizer" not in result.output


@pytest.mark.docker
def test_a_block_that_is_not_a_program_is_said_so_and_go_blocks_stay_out_of_the_package(executor, tmp_path):
    executor.execute("// filename: go.mod\nmodule wrap\n\ngo 1.22\n", "text")
    executor.execute("// filename: wrap.go\npackage wrap\n\nfunc Twice(x int) int { return 2 * x }\n", "go")
    library = executor.execute("package wrap\n\nfunc Twice(x int) int { return x + x }\n", "go")
    assert library.exit_code == 1 and "not a whole program" in library.output and "// filename:" in library.output
    program = executor.execute('package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("ok") }\n', "go")
    assert program.exit_code == 0 and program.filename == ".codeduet_blocks/block01.go"
    tests = tmp_path / "wrap_test.go"
    tests.write_text('package wrap\n\nimport "testing"\n\n'
                     'func TestTwice(t *testing.T) { if Twice(2) != 4 { t.Fail() } }\n')
    passed, why, *_ = CommandCheck(command="go test ./...", files={"wrap_test.go": str(tests)}).evaluate(
        None, executor, tmp_path)
    assert passed, why  # the throwaway program did not join package wrap
    module = executor.execute("export function f() { return 1 }\n", "javascript")
    assert module.exit_code == 1 and "not a whole program" in module.output


@pytest.mark.docker
def test_a_given_file_sent_back_without_its_name_is_saved_as_that_file(executor):
    stub = "// slugify.js turns a title into a slug\nfunction slugify(title) {\n  return title;\n}\n\n" \
           "module.exports = { slugify };\n"
    executor.execute(f"// filename: slugify.js\n{stub}", "javascript")
    executor.execute("// filename: other.js\nconst x = 1;\nconst y = 2;\nmodule.exports = { x, y };\n", "javascript")
    fixed = stub.replace("return title;", "return title.toLowerCase();")  # the 1.5B's habit: no filename line
    result = executor.execute(fixed, "javascript")
    assert result.filename == "slugify.js" and "saved as slugify.js" in result.output
    assert "toLowerCase" in (executor.workspace / "slugify.js").read_text()
    assert not (executor.workspace / "block01.js").exists()
    unrelated = executor.execute("console.log('hello', 6 * 7);\n", "javascript")
    assert unrelated.filename == "block01.js" and "hello 42" in unrelated.output


@pytest.mark.docker
def test_a_script_with_a_shebang_keeps_it_on_its_first_line(executor):
    """Exercism's javascript/grep (2026-11-27): `// filename: grep.js` was kept above `#!/usr/bin/env node`, and
    node refused the file with a SyntaxError on line 2."""
    result = executor.execute("// filename: tool.js\n#!/usr/bin/env node\nconsole.log('ok', 6 * 7);\n", "javascript")
    assert result.exit_code == 0 and "ok 42" in result.output, result.output
    assert (executor.workspace / "tool.js").read_text().startswith("#!/usr/bin/env node\n")
    kept = executor.execute("// filename: main.c\n#include <stdio.h>\nint main(void) { puts(\"hi\"); }\n", "c")
    assert kept.exit_code == 0 and (executor.workspace / "main.c").read_text().startswith("// filename: main.c\n")


def test_a_reply_that_forgot_its_opening_fence_is_read_as_the_file_it_names():
    """Exercism's rust/accumulate (2026-11-27): the 1.5B began with `// filename: src/lib.rs`, ended with a bare
    ```, and was told twice that its reply was cut off; its code never ran."""
    from agents.loop.codeblocks import classify_reply, extract_code_blocks

    reply = ("// filename: src/lib.rs\npub fn map(v: Vec<i32>, f: fn(i32) -> i32) -> Vec<i32> {\n"
             "    v.into_iter().map(f).collect()\n}\n\n// filename: Cargo.toml\n[package]\nname = \"acc\"\n```\n")
    assert classify_reply(reply) == "python"  # something to run or save
    blocks = extract_code_blocks("Here it is:\n" + reply + "It maps.\n")
    assert [(b.language, b.filename) for b in blocks] == [("rust", "src/lib.rs"), ("rust", "Cargo.toml")]
    assert classify_reply("# filename: a.py\n```\nprint(1)\n") == "unclosed"  # a bare fence that opens: cut off
    assert classify_reply("```rust\nfn main() {\n") == "unclosed"
    assert classify_reply("fn main() {}\n```\n") == "unclosed"  # no file named: as before, nothing to go by
    paasio = "// filename: paasio.go\npackage paasio\n\nfunc Count() int { return 0 }\n"  # go/paasio: no fence at all
    assert [(b.language, b.filename) for b in extract_code_blocks(paasio)] == [("go", "paasio.go")]
    assert classify_reply("Save it as:\n// filename: paasio.go\npackage paasio\n") == "no_code"  # prose first: not


def test_a_cut_off_reply_is_asked_again_in_its_language():
    from agents.feedback.feedback import code_ask

    assert code_ask("```python\nprint(1)\n") == "script in one ```python block"  # the Python product as before
    assert code_ask("```rust\nfn main() {\n", ["rust"]) == "file or program in one ```rust block"
    assert code_ask("```cpp\nint main() {\n", ["c", "cpp"]) == "file or program in one ```cpp block"
    assert code_ask("```\nint main() {\n", ["go"]) == "file or program in one ```go block"
    assert code_ask("```\nx = 1\n", ["c", "go"]) == "script in one ```python block"
    assert code_ask("no code here", ["go"], "no_code") == "file or program in one ```go block"
    assert code_ask("no code here", [], "no_code") == "Python script in a ```python block"
    from agents.feedback.prompts import render
    assert render("empty", what=code_ask("", ["rust"], "empty")).endswith("one ```rust block.")
