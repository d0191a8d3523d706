"""SandboxKernelExecutor: a live Python session in the hardened sandbox for any AG2 agent. Real containers, real AG2
agents (generate_reply, and a UserProxyAgent's chat with the scripted model, the only stand-in)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import docker
import pytest
from autogen import AssistantAgent, ConversableAgent, UserProxyAgent
from autogen.code_utils import TIMEOUT_MSG
from autogen.coding import CodeBlock, CodeExecutor
from autogen.coding.base import IPythonCodeResult

from agents.feedback.figures import PNG_SIGNATURE
from agents.loop.errors import BadInputError
from agents.sandbox.ag2_kernel_executor import SandboxKernelExecutor
from agents.sandbox.docker_executor import LABEL, sandbox_owner
from tests.conftest import ROOT

pytestmark = pytest.mark.docker


def containers(executor: SandboxKernelExecutor) -> list[Any]:
    """The executor's containers, running or not."""
    return docker.from_env().containers.list(all=True, filters={"label": f"{LABEL}={executor.run_id}"},
                                             ignore_removed=True)


def run(executor: SandboxKernelExecutor, code: str, language: str = "python") -> IPythonCodeResult:
    return executor.execute_code_blocks([CodeBlock(code=code, language=language)])


def ask(agent: ConversableAgent, content: str) -> str:
    """The agent's reply to one user message (AG2 runs the message's code blocks with the agent's executor)."""
    sender = ConversableAgent("user", llm_config=False, code_execution_config=False)
    return str(agent.generate_reply([{"role": "user", "content": content}], sender=sender))


def test_state_persists_between_two_messages_of_a_user_proxy(sandbox_image: str, tmp_path: Path) -> None:
    with SandboxKernelExecutor(image=sandbox_image, work_dir=tmp_path / "work", timeout=20) as executor:
        assert isinstance(executor, CodeExecutor)
        proxy = UserProxyAgent("proxy", human_input_mode="NEVER", code_execution_config={"executor": executor})
        first = ask(proxy, "Load it:\n```python\nimport statistics\ndata = [3, 1, 4, 1, 5]\nx = 41\n```")
        assert first.startswith("exitcode: 0 (execution succeeded)")
        # the next message reads the variable, the import and the data; a last expression shows its value
        second = ask(proxy, "```python\nprint(x + 1)\nstatistics.mean(data)\n```\n```sh\nls\n```")
        assert second.startswith("exitcode: 0 (execution succeeded)\nCode output: 42\n2.8\n")
        assert "block01.py" in second  # the shell block ran as a process in the same container and workspace


def test_a_scripted_assistant_builds_on_its_earlier_block(sandbox_image: str, tmp_path: Path) -> None:
    from agents.models.scripted import ScriptedConfig, ScriptedProvider

    replies = ["```python\nrows = [{'n': i, 'sq': i * i} for i in range(10)]\n```",
               "```python\nsum(r['sq'] for r in rows)\n```", "TERMINATE"]
    model = ScriptedProvider("scripted", ScriptedConfig(replies=replies))
    assistant = AssistantAgent("assistant", llm_config=model.llm_config())
    model.attach(assistant)
    with SandboxKernelExecutor(image=sandbox_image, work_dir=tmp_path / "work", timeout=20) as executor:
        proxy = UserProxyAgent("proxy", human_input_mode="NEVER", max_consecutive_auto_reply=4,
                               is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""),
                               code_execution_config={"executor": executor})
        chat = proxy.initiate_chat(assistant, message="Sum the squares below 10, step by step.", silent=True)
    assert "exitcode: 0 (execution succeeded)\nCode output: 285\n" in [m["content"] for m in chat.chat_history]
    assert containers(executor) == []


def test_a_figure_is_saved_as_png_and_listed_in_output_files(sandbox_image: str, tmp_path: Path) -> None:
    with SandboxKernelExecutor(image=sandbox_image, work_dir=tmp_path / "work", timeout=30) as executor:
        run(executor, "import matplotlib.pyplot as plt\nys = [1, 4, 9, 16]")
        result = run(executor, "plt.plot(ys)\nplt.title('Squares')\nplt.show()")
        assert result.exit_code == 0 and len(result.output_files) == 1
        figure = Path(result.output_files[0])
        assert figure == tmp_path / "work" / "figures" / "block02-1.png"
        assert figure.read_bytes().startswith(PNG_SIGNATURE)
        assert f"Image data saved to {figure} (640x480 px" in result.output and "title: Squares" in result.output
        assert run(executor, "len(ys)").output_files == []  # only the blocks' own images
        table = run(executor, "import pandas as pd\npd.DataFrame({'y': ys})")
        assert table.output.split() == ["y", "0", "1", "1", "4", "2", "9", "3", "16"]  # as a notebook shows it
        assert not (tmp_path / "work" / ".codeduet").exists()  # the kernel's table for our page is not left


def test_an_endless_loop_is_stopped_and_the_kernel_recovers(sandbox_image: str, tmp_path: Path) -> None:
    with SandboxKernelExecutor(image=sandbox_image, work_dir=tmp_path / "work", timeout=2) as executor:
        run(executor, "x = 41")
        looped = run(executor, "while True:\n    x += 0")
        assert looped.exit_code == 124 and looped.output.endswith(TIMEOUT_MSG)
        assert "KeyboardInterrupt" in looped.output and "the Python kernel lives on with its variables" in looped.output
        assert run(executor, "x + 1").output == "42\n"
        # a block that swallows the interrupt: the kernel is killed, and both reports say so
        stubborn = run(executor, "import time\nwhile True:\n    try:\n        time.sleep(5)\n"
                                 "    except KeyboardInterrupt:\n        pass")
        assert stubborn.exit_code == 124 and "so the Python kernel was killed" in stubborn.output
        fresh = run(executor, "x")
        assert fresh.exit_code == 1 and "a fresh Python kernel: the previous one died" in fresh.output
        assert "NameError: name 'x' is not defined" in fresh.output
        assert run(executor, "x = 1\nx").output == "1\n"  # the fresh kernel works


def test_restart_clears_the_state_and_keeps_the_files(sandbox_image: str, tmp_path: Path) -> None:
    with SandboxKernelExecutor(image=sandbox_image, work_dir=tmp_path / "work", timeout=20) as executor:
        run(executor, "x = 1\nopen('kept.txt', 'w').write('kept')")
        first = containers(executor)[0].id
        executor.restart()
        result = run(executor, "print(open('kept.txt').read())\nx")
        assert result.exit_code == 1 and result.output.startswith("kept\n") and "NameError" in result.output
        assert [c.id for c in containers(executor)] != [first] and len(containers(executor)) == 1


HARDENING = """
import os, socket
print("uid", os.getuid())
try:
    open("/usr/lib/escape", "w")
except OSError as exc:
    print("root:", exc.strerror)
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
except OSError as exc:
    print("network:", exc.strerror or exc)
print("interfaces", sorted(os.listdir("/sys/class/net")))
"""


def test_the_container_is_hardened_seen_from_the_kernel(sandbox_image: str, tmp_path: Path) -> None:
    with SandboxKernelExecutor(image=sandbox_image, work_dir=tmp_path / "work", timeout=20) as executor:
        seen = run(executor, HARDENING).output
        kernel = run(executor, "import os\nos.getpid() != 1, os.getuid()").output  # the kernel, not the runner
        shell = run(executor, "touch /etc/escape 2>&1; id -u", "sh").output
    assert f"uid {sandbox_owner()[0]}\n" in seen and sandbox_owner()[0] != 0
    assert "root: Read-only file system" in seen and "network: Network is unreachable" in seen
    assert "interfaces ['lo']" in seen
    assert kernel == f"(True, {sandbox_owner()[0]})\n"
    assert "Read-only file system" in shell and shell.rstrip().endswith(str(sandbox_owner()[0]))
    assert containers(executor) == []


def test_stop_and_interpreter_exit_remove_the_container(sandbox_image: str, tmp_path: Path) -> None:
    executor = SandboxKernelExecutor(image=sandbox_image, work_dir=tmp_path / "work")
    run(executor, "x = 1")
    assert len(containers(executor)) == 1
    executor.stop()
    assert containers(executor) == [] and (tmp_path / "work").is_dir()  # a work_dir given is the caller's
    code = ("from agents.sandbox.ag2_kernel_executor import SandboxKernelExecutor\nfrom autogen.coding import "
            f"CodeBlock\nex = SandboxKernelExecutor(image={sandbox_image!r})\n"
            "r = ex.execute_code_blocks([CodeBlock(code='x = 6 * 7\\nx', language='python')])\n"
            "print(ex.run_id, ex.work_dir, r.output.strip())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    run_id, folder, value = done.stdout.split()
    assert done.returncode == 0 and value == "42"
    left = docker.from_env().containers.list(all=True, filters={"label": f"{LABEL}={run_id}"}, ignore_removed=True)
    assert left == [] and not Path(folder).exists()


HOLDER = """
import sys, time
from autogen.coding import CodeBlock
from agents.sandbox.ag2_kernel_executor import SandboxKernelExecutor
ex = SandboxKernelExecutor(image=sys.argv[1])
ex.execute_code_blocks([CodeBlock(code="data = list(range(10))", language="python")])
print(ex.run_id, ex.work_dir, flush=True)
time.sleep(600)
"""


def test_kill_9_of_the_holder_leaves_no_container(sandbox_image: str) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, sandbox_image], stdout=subprocess.PIPE, text=True,
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout is not None
        run_id, folder = holder.stdout.readline().split()
    finally:
        holder.kill()  # SIGKILL: no atexit, no stop(); the watchdog removes the container and the work_dir
        holder.wait()
    client = docker.from_env()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (Path(folder).exists() or client.containers.list(
            all=True, filters={"label": f"{LABEL}={run_id}"}, ignore_removed=True)):
        time.sleep(0.25)
    assert client.containers.list(all=True, filters={"label": f"{LABEL}={run_id}"}, ignore_removed=True) == []
    assert not Path(folder).exists()


def test_a_c_block_runs_as_a_process_between_two_kernel_blocks(tmp_path: Path) -> None:
    from tests.helpers import toolchains_image

    with SandboxKernelExecutor(image=toolchains_image(), languages=["c"], work_dir=tmp_path / "work") as executor:
        proxy = UserProxyAgent("proxy", human_input_mode="NEVER", code_execution_config={"executor": executor})
        reply = ask(proxy, "```python\nx = 41\n```\n```c\n#include <stdio.h>\nint main(void) { puts(\"from C\"); }\n```"
                           "\n```python\nx + 1\n```")
    assert reply == "exitcode: 0 (execution succeeded)\nCode output: from C\n42\n"


def test_a_bad_argument_is_one_line_naming_this_executor(sandbox_image: str) -> None:
    with pytest.raises(BadInputError, match=r"^SandboxKernelExecutor: memory: 'lots' is not a size like 512m"):
        SandboxKernelExecutor(image=sandbox_image, memory="lots")
    with pytest.raises(BadInputError, match=r"^SandboxKernelExecutor: execution_policies: 'cobol' is not a language"):
        SandboxKernelExecutor(image=sandbox_image, execution_policies={"cobol": True})


# -- AG2's own Jupyter executor tests (ag2 repository, test/coding/test_embedded_ipython_code_executor.py), the
# cases that apply to a sandbox with no network and no IPython, run against ours; where ours differs, the test
# asserts the difference (docs/SESSIONS.md lists them)
def test_ag2_jupyter_cases(sandbox_image: str, tmp_path: Path) -> None:
    from autogen.coding.factory import CodeExecutorFactory

    with SandboxKernelExecutor(image=sandbox_image, work_dir=tmp_path / "work", timeout=1) as executor:
        # test_timeout_preserves_kernel_state (and test_timeout)
        assert run(executor, "x = 123").output.strip() == ""
        slept = run(executor, "import time; time.sleep(10)")
        assert slept.exit_code != 0 and "Timeout" in slept.output
        assert "123" in run(executor, "print(x)").output
    with SandboxKernelExecutor(image=sandbox_image, work_dir=tmp_path / "work1") as executor:
        assert CodeExecutorFactory.create({"executor": executor}) is executor  # test_create
        single = executor.execute_code_blocks([CodeBlock(code="import sys\nprint('hello world!')", language="python")])
        assert single.exit_code == 0 and "hello world!" in single.output  # test_execute_code_single_code_block
        multiple = executor.execute_code_blocks([CodeBlock(code="import sys\na = 123 + 123\n", language="python"),
                                                 CodeBlock(code="print(a)", language="python")])
        assert multiple.exit_code == 0 and "246" in multiple.output  # test_execute_code_multiple_code_blocks
        function = executor.execute_code_blocks([CodeBlock(code="def test_function(a, b):\n    return a + b\n",
                                                           language="python"),
                                                 CodeBlock(code="test_function(431, 423)", language="python")])
        assert function.exit_code == 0 and "854" in function.output
        # test_save_image, without its `!pip install matplotlib` (matplotlib is in the image; see below)
        image = run(executor, "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3, 4])\nplt.show()")
        assert image.exit_code == 0 and os.path.exists(image.output_files[0])
        assert f"Image data saved to {image.output_files[0]}" in image.output
        # test_restart
        assert run(executor, "x = 123").output.strip() == ""
        executor.restart()
        restarted = run(executor, "print(x)")
        assert restarted.exit_code and "NameError" in restarted.output
        # differs: not IPython, so `!command` lines (test_execute_code_bash_script, test_silent_pip_install) are not
        # shell escapes: in a bash block bash says so, in a Python block it is a SyntaxError
        assert run(executor, '!echo "hello world!"', "bash").exit_code == 127
        bang = run(executor, "!pip install matplotlib numpy")
        assert bang.exit_code == 1 and "SyntaxError" in bang.output
        # differs: no IPython in the image, so no rich display (test_save_html)
        html = run(executor, "from IPython.display import HTML\nHTML('<h1>Hello, world!</h1>')")
        assert html.exit_code == 1 and "No module named 'IPython'" in html.output and html.output_files == []
    with pytest.raises(TypeError, match="kernel_name"):  # differs (test_init): work_dir is where images go
        SandboxKernelExecutor(timeout=10, kernel_name="python3", output_dir=".")
    # test_conversable_agent_code_execution
    with SandboxKernelExecutor(image=sandbox_image, work_dir=tmp_path / "work2") as executor:
        agent = ConversableAgent("user_proxy", llm_config=False, code_execution_config={"executor": executor})
        msg = ("Run this code:\n```python\ndef test_function(a, b):\n    return a * b\n```\nAnd then this:\n"
               "```python\nprint(test_function(123, 4))\n```\n")
        assert "492" in ask(agent, msg)
