"""Our SandboxCodeExecutor against AG2's DockerCommandLineCodeExecutor, side by side on our locally built image.

The first cases are ported from AG2's own suite (ag2 repository, test/coding/test_commandline_code_executor.py:
`_test_execute_code`, `_test_timeout`, `_test_restart`, `_test_conversable_agent_code_execution`, multiple blocks,
the python/Python/py spellings, the bash/sh/shell blocks of UNIX_SHELLS and `test_silent_pip_install`). Where ours
deliberately differs (network off, so `pip install` gets one line saying so instead of being silenced, a console
block's commands run, read-only root, limits, bounded output, fresh container on restart, a bare first-line
comment names a file only when it is a lone file name, data files saved without their comment line, no `..`), the
test asserts the difference. More of AG2's cases, and the other languages, are in tests/test_ag2_yardstick.py. The
`# filename:` cases are AG2's `_test_save_files`, `test_valid_relative_path` and `test_invalid_relative_path`.
Real containers and real AG2 agents; the only stand-in is the scripted model.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator

import docker
import pytest
from autogen import AssistantAgent, ConversableAgent, UserProxyAgent
from autogen.coding import CodeBlock, CodeExecutor
from autogen.coding.factory import CodeExecutorFactory

from agents.loop.errors import BadInputError, ImageMissing
from agents.sandbox.ag2_executor import SandboxCodeExecutor
from agents.sandbox.docker_executor import LABEL
from benchmarks.ag2_executors import AG2_LABEL, KINDS, PROBES, crash_leftovers, make, probe_limits
from tests.conftest import ROOT

pytestmark = pytest.mark.docker

PYTHON_VARIANTS = ["python", "Python", "py"]
UNIX_SHELLS = ["bash", "sh", "shell"]
Factory = Callable[..., Any]


def containers(label: str) -> list[Any]:
    """Containers (running or not) carrying label `key=value`."""
    return docker.from_env().containers.list(all=True, filters={"label": label}, ignore_removed=True)


def gone(label: str, within_s: float = 20) -> bool:
    """Whether no container carries the label, allowing AG2's auto_remove (done by the daemon after stop) to finish."""
    deadline = time.monotonic() + within_s
    while containers(label) and time.monotonic() < deadline:
        time.sleep(0.2)
    return containers(label) == []


def label_of(executor: Any, tag: str) -> str:
    """The label that finds this executor's container."""
    return f"{LABEL}={executor.run_id}" if isinstance(executor, SandboxCodeExecutor) else f"{AG2_LABEL}={tag}"


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def new_executor(kind: str, sandbox_image: str, tmp_path: Path) -> Iterator[Factory]:
    """new_executor(**kwargs) -> an executor of this kind; every one is stopped and must leave no container."""
    made: list[Any] = []
    tag = f"test-{uuid.uuid4().hex[:8]}"

    def factory(**kwargs: Any) -> Any:
        executor = make(kind, tmp_path / f"work{len(made)}", image=sandbox_image, tag=tag, **kwargs)
        made.append(executor)
        return executor

    yield factory
    for executor in made:
        executor.stop()
    for executor in made:
        assert gone(label_of(executor, tag)), "a container was left behind"


def run(executor: Any, code: str, language: str = "python") -> Any:
    return executor.execute_code_blocks([CodeBlock(code=code, language=language)])


# -- ported from AG2's suite --------------------------------------------------------------------------
def test_is_an_ag2_code_executor(new_executor: Factory) -> None:
    executor = new_executor()
    assert isinstance(executor, CodeExecutor)
    assert CodeExecutorFactory.create({"executor": executor}) is executor


@pytest.mark.parametrize("py_variant", PYTHON_VARIANTS)
def test_execute_code(kind: str, py_variant: str, new_executor: Factory) -> None:
    executor = new_executor()
    result = run(executor, "import sys; print('hello world!')", py_variant)
    assert result.exit_code == 0 and "hello world!" in result.output and result.code_file is not None

    blocks = [CodeBlock(code="import sys; print('hello world!')", language=py_variant),
              CodeBlock(code="a = 100 + 100; print(a)", language=py_variant)]
    result = executor.execute_code_blocks(blocks)
    assert result.exit_code == 0 and "hello world!" in result.output and "200" in result.output
    assert result.code_file is not None

    result = run(executor, "echo 'hello world!'", "bash")
    assert result.exit_code == 0 and "hello world!" in result.output and result.code_file is not None

    lines = ["import sys", "print('hello world!')", "a = 100 + 100", "print(a)"]
    result = run(executor, "\n".join(lines), py_variant)
    assert result.exit_code == 0 and "hello world!" in result.output and "200" in result.output
    assert Path(result.code_file).read_text().splitlines() == lines


@pytest.mark.parametrize("shell", UNIX_SHELLS)
def test_shell_blocks_run_with_their_shell(shell: str, new_executor: Factory) -> None:
    executor = new_executor()
    result = run(executor, "echo $HOME", shell)  # AG2's test_docker_commandline_code_executor_restart
    assert result.exit_code == 0 and result.output.strip() == "/tmp" and result.code_file is not None
    bash_only = run(executor, 'if [[ -n "$BASH_VERSION" ]]; then echo bash; else echo not bash; fi', shell)
    # a bash block runs with bash, sh and shell with sh (dash), which also complains on stderr that `[[` is not a
    # command: the two streams share one pipe, so that complaint may land in the middle of the stdout line
    if shell == "bash":
        assert bash_only.output.strip() == "bash"
    else:
        assert "not bash" in bash_only.output and "[[: not found" in bash_only.output
    blocks = [CodeBlock(code="# filename: greet.py\nimport sys\nprint('hi', sys.argv[1:])", language="python"),
              CodeBlock(code="python greet.py there", language=shell)]
    result = executor.execute_code_blocks(blocks)
    assert result.exit_code == 0 and "hi ['there']" in result.output and Path(result.code_file).name == "greet.py"


@pytest.mark.parametrize("shell", UNIX_SHELLS)
def test_pip_install_is_said_not_silenced(kind: str, shell: str, new_executor: Factory) -> None:
    # AG2's test_silent_pip_install adds -qqq and expects no output; with no network, ours says what happened (the
    # image has matplotlib and numpy both)
    result = run(new_executor(), "pip install matplotlib numpy", shell)
    if kind == "codeduet":
        assert result.exit_code != 0 and result.output.strip().endswith(
            "matplotlib, numpy are already there; use those]") and "the sandbox has no network" in result.output
    else:
        assert "[codeduet:" not in result.output


def test_a_console_block_runs_its_commands_in_ours_only(kind: str, new_executor: Factory) -> None:
    result = run(new_executor(), "$ echo one\none\n$ echo two\ntwo", "console")
    if kind == "codeduet":
        assert result.exit_code == 0 and result.output.split() == ["one", "two"]
    else:
        assert result.exit_code == 1 and "Unsupported language console" in result.output


def test_the_first_failing_block_stops_the_rest(new_executor: Factory) -> None:
    blocks = [CodeBlock(code="print('one')", language="python"),
              CodeBlock(code="raise SystemExit(3)", language="python"),
              CodeBlock(code="print('three')", language="python")]
    result = new_executor().execute_code_blocks(blocks)
    assert result.exit_code == 3 and "one" in result.output and "three" not in result.output


def test_timeout(new_executor: Factory) -> None:
    result = run(new_executor(timeout=1), "import time; time.sleep(10); print('hello world!')")
    assert result.exit_code and "Timeout" in result.output and "hello world!" not in result.output


def test_restart(kind: str, new_executor: Factory) -> None:
    executor = new_executor()
    assert run(executor, "open('/tmp/marker', 'w').write('x'); open('kept.txt', 'w').write('y')").exit_code == 0
    executor.restart()
    if kind == "ag2":
        wait_running(executor)
    result = run(executor, "import os; print(os.path.exists('/tmp/marker'), open('kept.txt').read())")
    if kind == "ag2" and "cannot exec in a stopped state" in result.output:
        # AG2's restart (docker restart of an auto_remove container) lost the race on a loaded machine, twice in
        # full-suite runs, even after its container was seen running: AG2's behaviour, not ours, so not a failure
        pytest.xfail("AG2's restarted container stopped again before the next exec")
    assert result.exit_code == 0, result.output
    # ours: a fresh container (nothing of earlier blocks survives); AG2: the same container restarted
    assert result.output.split() == (["False", "y"] if kind == "codeduet" else ["True", "y"])


def wait_running(executor: Any, within_s: float = 30) -> None:
    """AG2's restart() returns without waiting: it checks a status attribute it never reloads, so on a loaded
    machine the next exec can meet the container still stopped ("cannot exec in a stopped state", seen in CI).
    Wait as AG2's own start does (its _wait_for_ready), so the test compares what restart keeps, not that race."""
    container = executor._container
    deadline = time.monotonic() + within_s
    container.reload()
    while container.status != "running" and time.monotonic() < deadline:
        time.sleep(0.1)
        container.reload()
    assert container.status == "running", f"AG2's container did not come back: {container.status}"


def test_conversable_agent_code_execution(new_executor: Factory) -> None:
    executor = new_executor()
    agent = ConversableAgent("user_proxy", code_execution_config={"executor": executor}, llm_config=False)
    assert agent.code_executor is executor
    message = """
    Example:
    ```python
    print("hello extract code")
    ```
    """
    reply = agent.generate_reply([{"role": "user", "content": message}],
                                 sender=ConversableAgent("user", llm_config=False, code_execution_config=False))
    assert "hello extract code" in reply


# -- the deliberate differences -----------------------------------------------------------------------
def test_timeout_kills_every_process_and_keeps_the_output(kind: str, new_executor: Factory) -> None:
    executor = new_executor(timeout=1)
    unflushed = run(executor, "import time\nprint('printed before the timeout')\ntime.sleep(10)")
    stubborn = run(executor, "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                             "print('started')\ntime.sleep(4)\nprint('survived the timeout')")
    assert unflushed.exit_code == 124 and stubborn.exit_code == 124
    assert "printed before the timeout" in unflushed.output  # both: the image sets PYTHONUNBUFFERED
    if kind == "codeduet":  # every process of the block is killed at the limit
        assert "started" in stubborn.output and "survived the timeout" not in stubborn.output
    else:  # AG2's `timeout` has no -k: a block that ignores SIGTERM runs on to its end
        assert "survived the timeout" in stubborn.output


def test_limits(kind: str, new_executor: Factory) -> None:
    enforced = {name: probe["enforced"] for name, probe in probe_limits(new_executor()).items()}
    if kind == "codeduet":
        assert enforced == {name: True for name in PROBES}
    else:  # AG2's defaults on our image: only the image's own non-root user
        assert enforced == {name: name == "non-root user" for name in PROBES}


def test_output_is_bounded(kind: str, new_executor: Factory, sandbox_image: str, tmp_path: Path) -> None:
    if kind == "codeduet":
        executor = SandboxCodeExecutor(image=sandbox_image, output_limit=1000, work_dir=tmp_path / "bounded")
        with executor:
            result = run(executor, "print('x' * 100000)")
        assert result.exit_code == 0 and "output truncated" in result.output and len(result.output) < 2000
    else:
        result = run(new_executor(), "print('x' * 100000)")
        assert result.exit_code == 0 and result.output.count("x") == 100000


# -- AG2's `# filename:` cases (test_commandline_code_executor.py: _test_save_files, test_valid_relative_path,
# test_invalid_relative_path), ours beside AG2's on the same blocks ------------------------------------------
@pytest.mark.parametrize("first_line", ["# filename: test.py", "# filename:test.py", "#filename: sub/test.py"])
def test_a_filename_line_saves_the_python_file_and_runs_it(kind: str, first_line: str, new_executor: Factory) -> None:
    if kind == "ag2" and not first_line.startswith("# "):
        pytest.skip("AG2 needs '# ' (hash and space) before the name")
    executor = new_executor()
    name = first_line.split(":", 1)[1].strip()
    code = f"{first_line}\n\nimport sys; print('hello world!')\n"
    result = run(executor, code)
    assert result.exit_code == 0 and "hello world!" in result.output
    assert Path(result.code_file).resolve() == (executor.work_dir / name).resolve()
    assert (executor.work_dir / name).read_text() == code  # saved whole, the comment line included (as AG2)


@pytest.mark.parametrize("language, first_line, body", [
    ("javascript", "// filename: test.js", "console.log('hello world!')"),
    ("css", "/* filename: test.css */", "h1 { color: red; }"),
    ("html", "<!-- filename: test.html -->", "<h1>hello world!</h1>"),
])
def test_a_filename_line_in_another_language_saves_the_file_without_running_it(
        kind: str, language: str, first_line: str, body: str, new_executor: Factory) -> None:
    executor = new_executor()
    result = run(executor, f"{first_line}\n{body}", language)
    name = first_line.split("filename:", 1)[1].split()[0]
    assert result.exit_code == 0 and "hello world!" not in result.output.replace(body, "")
    assert Path(result.code_file).name == name and (executor.work_dir / name).exists()
    saved = (executor.work_dir / name).read_text()
    if kind == "codeduet" and language == "javascript":  # a source file keeps its `//` line, as in AG2, so its
        # error line numbers are the model's (docs/LANGUAGES.md); it ends with one newline
        assert saved == f"{first_line}\n{body}\n" and f"saved {name}" in result.output
    elif kind == "codeduet":  # deliberate: a data file does not keep the comment line (it would break its format),
        # and it ends with one newline
        assert saved == body + "\n" and f"saved {name}" in result.output
    else:
        assert saved == f"{first_line}\n{body}"


@pytest.mark.parametrize("first_line, ag2_name", [("# test.py", "test.py"), ("# compute the sum", "compute the sum")])
def test_a_comment_names_a_file_only_when_it_is_a_file_name(kind: str, first_line: str, ag2_name: str,
                                                            new_executor: Factory) -> None:
    executor = new_executor()
    result = run(executor, f"{first_line}\nprint('hello world!')")
    assert result.exit_code == 0 and "hello world!" in result.output
    if kind == "codeduet" and " " in ag2_name:  # deliberate: a comment that is not a lone file name names no file
        assert Path(result.code_file).name == "block01.py" and not (executor.work_dir / ag2_name).exists()
    else:  # AG2's bare form, in both
        assert Path(result.code_file).name == ag2_name


@pytest.mark.parametrize("path", ["/tmp/test.py", "../test.py", "sub/../../test.py"])
def test_a_path_outside_the_workspace_is_refused(kind: str, path: str, new_executor: Factory, tmp_path: Path) -> None:
    executor = new_executor()
    result = run(executor, f"# filename: {path}\n\nprint('hello world')\n")
    assert result.exit_code == 1 and "hello world" not in result.output and result.code_file is None
    assert not (tmp_path / "test.py").exists() and not Path("/tmp/test.py").exists()
    if kind == "codeduet":
        assert "not saved" in result.output and path in result.output
    else:
        assert "Filename is not in the workspace" in result.output


def test_a_dotdot_that_stays_inside_is_refused_by_ours_only(kind: str, new_executor: Factory) -> None:
    executor = new_executor()
    result = run(executor, "# filename: sub/../test.py\nprint('hello world')")
    if kind == "codeduet":  # deliberate: no '..' at all, rather than resolving it against the host folder
        assert result.exit_code == 1 and "leaves the workspace" in result.output
        assert not (executor.work_dir / "test.py").exists()
    else:
        assert result.exit_code == 0 and Path(result.code_file).name == "test.py"


# -- lifecycle of ours --------------------------------------------------------------------------------
def test_a_user_proxy_runs_a_scripted_assistants_code(sandbox_image: str) -> None:
    from agents.models.scripted import ScriptedConfig, ScriptedProvider

    model = ScriptedProvider("scripted", ScriptedConfig(replies=["```python\nprint(6 * 7)\n```", "TERMINATE"]))
    assistant = AssistantAgent("assistant", llm_config=model.llm_config())
    model.attach(assistant)
    with SandboxCodeExecutor(image=sandbox_image, timeout=10) as executor:
        proxy = UserProxyAgent("proxy", human_input_mode="NEVER", max_consecutive_auto_reply=3,
                               is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""),
                               code_execution_config={"executor": executor})
        chat = proxy.initiate_chat(assistant, message="Print 6 times 7.", silent=True)
        label = f"{LABEL}={executor.run_id}"
        assert len(containers(label)) == 1
    assert containers(label) == []
    assert "exitcode: 0 (execution succeeded)\nCode output: 42\n" in [m["content"] for m in chat.chat_history]


def test_stop_and_context_exit_remove_the_container_and_the_temporary_folder(sandbox_image: str) -> None:
    executor = SandboxCodeExecutor(image=sandbox_image)
    label, folder = f"{LABEL}={executor.run_id}", executor.work_dir
    assert len(containers(label)) == 1 and folder.is_dir()
    executor.stop()
    assert containers(label) == [] and not folder.exists()
    executor.stop()  # twice is fine
    with executor:  # used again: a new container, removed on exit
        assert run(executor, "print('again')").output.strip() == "again"
        assert len(containers(label)) == 1
    assert containers(label) == [] and not folder.exists()


def test_interpreter_exit_removes_the_container(sandbox_image: str) -> None:
    code = ("from agents.sandbox.ag2_executor import SandboxCodeExecutor\n"
            f"ex = SandboxCodeExecutor(image={sandbox_image!r})\nprint(ex.run_id, ex.work_dir)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    run_id, folder = done.stdout.split()
    assert done.returncode == 0 and containers(f"{LABEL}={run_id}") == [] and not Path(folder).exists()


def test_kill_9_of_the_holder_leaves_no_container_unlike_ag2(sandbox_image: str) -> None:
    assert crash_leftovers("codeduet", sandbox_image) == 0
    assert crash_leftovers("ag2", sandbox_image, grace_s=0) == 1  # found, counted, then removed by the bench


def test_bad_arguments_and_a_missing_image_are_one_line_errors(sandbox_image: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(BadInputError, match=r"^SandboxCodeExecutor: memory: 'lots' is not a size like 512m"):
        SandboxCodeExecutor(image=sandbox_image, memory="lots")
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    with pytest.raises(ImageMissing, match="sandbox image codeduet-no-such-image:1 not found"):
        SandboxCodeExecutor(image="codeduet-no-such-image:1")
    assert list(tmp_path.iterdir()) == []  # its temporary work_dir is gone too
    with pytest.raises(FileNotFoundError):
        SandboxCodeExecutor(image=sandbox_image, work_dir=tmp_path / "missing" / "dir")


REAPER_HOLDER = """
import sys, time
from agents.sandbox.reaper import Reaper
reaper = Reaper(sys.argv[1])
if sys.argv[2] == "disarm":
    reaper.disarm()
print("ready", flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("then", ["kill -9", "disarm then kill -9"])
def test_the_watchdog_removes_only_when_its_owner_died(then: str, sandbox_image: str) -> None:
    # a label no other cleaner knows: only the watchdog can remove this container
    label = f"org.codeduet.reaper-test={uuid.uuid4().hex[:8]}"
    key, value = label.split("=")
    container = docker.from_env().containers.run(sandbox_image, ["sleep", "600"], detach=True, labels={key: value},
                                                 network_mode="none")
    try:
        holder = subprocess.Popen([sys.executable, "-c", REAPER_HOLDER, label, then.split()[0]],
                                  stdout=subprocess.PIPE, text=True, cwd=ROOT,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        holder.kill()
        holder.wait()
        if then == "kill -9":
            assert gone(label)
        else:  # disarm() waited for the watchdog to exit, without acting: the container is still there
            assert len(containers(label)) == 1
    finally:
        try:
            container.remove(force=True)
        except docker.errors.NotFound:
            pass


def test_the_bench_reports_both_executors(sandbox_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    from benchmarks import ag2_executors

    monkeypatch.setattr(ag2_executors, "WARMUP", 0)
    monkeypatch.setattr(ag2_executors, "GRACE_S", 0)  # counts right after the kill: only the table's shape is checked
    console = Console(file=io.StringIO(), width=200)
    report = ag2_executors.main(console, n=2, out=tmp_path, image=sandbox_image)
    assert json.loads((tmp_path / "ag2_executors.json").read_text())["latency"] == report["latency"]
    assert {kind: report["latency"][kind]["n"] for kind in KINDS} == {"codeduet": 2, "ag2": 2}
    assert all(set(report["limits"][kind]) == set(PROBES) for kind in KINDS)
    assert set(report["crash_leftovers"]) == set(KINDS)
    text = console.file.getvalue()
    assert "containers left after kill -9" in text and "AG2 DockerCommandLineCodeExecutor" in text
