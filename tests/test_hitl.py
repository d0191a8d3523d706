"""Human in the loop, driven through the real CLI in a pseudo-terminal (pexpect) with the scripted model."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pexpect
import pytest
import yaml

from agents.record.transcript import load_transcript
from tests.conftest import ROOT, py
from tests.helpers import run_cli, sandbox_runs, wait_for

RUN_PY = str(ROOT / "run.py")
pytestmark = pytest.mark.docker


def spawn(*args: str, env: dict | None = None) -> pexpect.spawn:
    """run.py in a pseudo-terminal, wide enough that prompts are not wrapped."""
    return pexpect.spawn(sys.executable, [RUN_PY, *args], env={**os.environ, "TERM": "xterm", **(env or {})},
                         encoding="utf-8", timeout=60, dimensions=(50, 220))


def turn(child: pexpect.spawn) -> str:
    """Wait for the human prompt; return what it says Enter will do (output before it: child.shown)."""
    # up to the '·' or the line's end, so a line still arriving (a loaded machine) is never matched half-way
    child.expect(r"your turn(?:\x1b\[[0-9;]*m)* · Enter: ([^·\r\n]+?)(?:\x1b\[[0-9;]*m)*[ \t]*(?:·|\r?\n)")
    meaning, child.shown = child.match.group(1).strip(), child.before
    child.expect_exact("> ")
    return meaning


def finish(child: pexpect.spawn, timeout: float = 60) -> int:
    child.expect(pexpect.EOF, timeout=timeout)
    child.close()
    return child.exitstatus


def only_run(root: Path, name: str) -> Path:
    runs = list((root / name).iterdir())
    assert len(runs) == 1
    return runs[0]


def containers_of(run_dir: Path) -> list:
    import docker

    return docker.from_env().containers.list(all=True, filters={"label": f"org.codeduet.run={run_dir.name}"})




# -- steering a run ---------------------------------------------------------------------------------
def test_feedback_and_terminate_needing_enter_with_always(sandbox_image, workspaces, scenario_file):
    path = scenario_file([py("print(41)"), py("print(42)"), "All done. TERMINATE", py("print('after')")],
                         name="always", termination={"contains": "TERMINATE"},
                         user_proxy={"human_input_mode": "ALWAYS"})
    child = spawn("run", str(path))
    assert turn(child) == "execute the proposed code in the sandbox"
    child.sendline("")
    assert turn(child) == "execute the proposed code in the sandbox"
    child.sendline("please explain first")  # free text replaces running print(42)
    # AG2 pitfall: with ALWAYS a TERMINATE does not end the run by itself; the prompt says Enter will
    assert turn(child) == "end the conversation (the assistant says it is done)"
    child.sendline("skip")
    child.expect("there is no proposed code to skip")
    child.sendline("one more thing: print after")
    assert turn(child) == "execute the proposed code in the sandbox"
    child.sendline("")
    assert turn(child).startswith("end the conversation")  # the scripted model is out of replies: TERMINATE
    child.sendline("")
    assert finish(child) == 0
    run_dir = only_run(workspaces, "always")
    t = load_transcript(run_dir)
    assert [m["role"] for m in t["messages"]] == ["task", "assistant", "execution", "assistant", "human",
                                                  "assistant", "human", "assistant", "execution", "assistant"]
    assert t["messages"][4]["content"] == "please explain first"
    assert t["messages"][6]["content"] == "one more thing: print after"
    assert t["status"] == "success" and t["human_input_mode"] == "ALWAYS"
    assert (run_dir / "workspace" / "block02.py").read_text().strip() == "print('after')"  # print(42) never ran


def test_skip_a_block_then_exit(sandbox_image, workspaces, scenario_file):
    path = scenario_file([py("open('x.txt', 'w').write('x')"), py("print('never')")], name="skip")
    child = spawn("run", str(path), "--human", "always")  # overrides the scenario's NEVER
    assert turn(child) == "execute the proposed code in the sandbox"
    child.sendline("skip")
    assert turn(child) == "execute the proposed code in the sandbox"
    child.sendline("exit")
    assert finish(child) == 1
    run_dir = only_run(workspaces, "skip")
    t = load_transcript(run_dir)
    assert [m["role"] for m in t["messages"]] == ["task", "assistant", "human", "assistant"]
    assert "chose not to run this code" in t["messages"][2]["content"]
    assert t["status"] == "failed" and "ended by the user" in t["reason"]
    assert not list((run_dir / "workspace").glob("block*.py")) and not (run_dir / "workspace" / "x.txt").exists()


def test_terminate_mode_asks_only_at_the_end(sandbox_image, workspaces, scenario_file):
    path = scenario_file([py("print('ran without asking')"), "Finished. TERMINATE"], name="term",
                         termination={"contains": "TERMINATE"})
    child = spawn("run", str(path), "--human", "terminate")
    assert turn(child) == "end the conversation"
    assert "block01.py exit=0" in child.shown  # the code ran before anyone was asked
    child.sendline("")
    assert finish(child) == 0
    assert load_transcript(only_run(workspaces, "term"))["status"] == "success"


# -- Ctrl-C anywhere ends the run cleanly ---------------------------------------------------------------
@pytest.mark.parametrize("where", ["prompt", "generation", "execution"])
def test_ctrl_c_ends_cleanly(sandbox_image, workspaces, scenario_file, where):
    replies = {"prompt": [py("print(1)")], "generation": [py("print(1)")],
               "execution": [py("import time\nprint('sleeping', flush=True)\ntime.sleep(60)")]}[where]
    model = {"provider": "scripted", "replies": replies, "delay_s": 60 if where == "generation" else 0}
    path = scenario_file(replies, name=f"ctrlc-{where}", model=model, sandbox={"timeout": 90},
                         user_proxy={"human_input_mode": "ALWAYS" if where == "prompt" else "NEVER"})
    child = spawn("run", str(path))
    if where == "prompt":
        turn(child)
    else:
        child.expect("is generating…" if where == "generation" else "running block 1/1")
        if where == "execution":  # the block has started in the sandbox, not just been sent
            wait_for(lambda: sandbox_runs(workspaces, "block01.py"))
    run_dir = only_run(workspaces, f"ctrlc-{where}")
    assert containers_of(run_dir), "the sandbox container should be running"
    child.sendintr()
    started = time.monotonic()
    assert finish(child, timeout=20) == 130
    assert time.monotonic() - started < 10
    t = load_transcript(run_dir)
    assert t["status"] == "interrupted" and not t.get("recovered_from_events")
    assert not containers_of(run_dir)


def test_second_ctrl_c_forces_the_exit():
    code = ("import time\nfrom agents.cli.common import install_signal_handlers\ninstall_signal_handlers()\n"
            "try:\n    print('ready', flush=True)\n    time.sleep(60)\n"
            "finally:\n    print('slow cleanup', flush=True)\n    time.sleep(60)\n")
    child = pexpect.spawn(sys.executable, ["-c", code], cwd=str(ROOT), encoding="utf-8", timeout=20)
    child.expect("ready")
    child.sendintr()
    child.expect("slow cleanup")
    started = time.monotonic()
    child.sendintr()
    assert finish(child) == 130 and time.monotonic() - started < 5


# -- stdin that is not a terminal ---------------------------------------------------------------------------
def test_never_does_not_prompt_even_with_closed_stdin(sandbox_image, workspaces, scenario_file):
    path = scenario_file([py("print(1)")], name="never", user_proxy={"human_input_mode": "ALWAYS"})
    proc = run_cli("run", str(path), "--human", "never")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "your turn" not in proc.stdout


def test_piped_stdin_drives_the_run(sandbox_image, workspaces, scenario_file):
    path = scenario_file([py("print(1)"), "ok TERMINATE"], name="piped", termination={"contains": "TERMINATE"},
                         user_proxy={"human_input_mode": "ALWAYS"})
    proc = run_cli("run", str(path), stdin="\nthanks, now stop\nexit\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("your turn") == 3
    t = load_transcript(only_run(workspaces, "piped"))
    assert [m["role"] for m in t["messages"]] == ["task", "assistant", "execution", "assistant", "human", "assistant"]


def test_closed_stdin_fails_clearly(sandbox_image, workspaces, scenario_file):
    path = scenario_file([py("print(1)")], name="closed", user_proxy={"human_input_mode": "ALWAYS"})
    proc = run_cli("run", str(path))
    assert proc.returncode == 2
    assert "stdin closed while waiting for human input: use --human never" in proc.stderr
    assert load_transcript(only_run(workspaces, "closed"))["status"] == "error"


def test_bad_human_mode_is_rejected(tmp_path):
    proc = run_cli("run", str(tmp_path / "x.yaml"), "--human", "sometimes")
    assert proc.returncode == 2 and "always|terminate|never" in proc.stderr


# -- chat ------------------------------------------------------------------------------------------
@pytest.fixture
def scripted_configs(tmp_path: Path) -> dict:
    configs = tmp_path / "configs"
    configs.mkdir()
    models = {"default": "s", "models": {"s": {"provider": "scripted", "replies": [py("print(6 * 7)")]}}}
    (configs / "llm.yaml").write_text(yaml.safe_dump(models))
    return {"CODEDUET_CONFIGS": str(configs)}


def test_chat_types_a_task_then_steers_then_goes_on_with_the_next_task(sandbox_image, workspaces, scripted_configs):
    child = spawn("chat", "--model", "s", env=scripted_configs)
    child.expect_exact("task> ")
    child.sendline("Print six times seven.")
    assert turn(child) == "execute the proposed code in the sandbox"
    child.sendline("")
    child.expect("status=success")
    child.expect_exact("task> ")  # the session goes on: a person can type the next task (issue 20 item 13)
    t = load_transcript(only_run(workspaces, "chat"))
    assert t["messages"][0]["content"] == "Print six times seven." and t["messages"][0]["role"] == "task"
    assert t["status"] == "success" and "42" in t["messages"][2]["content"]
    child.sendline("Print it again.")
    assert turn(child) == "execute the proposed code in the sandbox"
    child.sendline("")
    child.expect("status=success")
    child.expect_exact("task> ")
    child.sendline("exit")
    assert finish(child) == 0
    runs = sorted((workspaces / "chat").iterdir(), key=lambda run: load_transcript(run)["started_at"])
    assert len(runs) == 2 and load_transcript(runs[1])["messages"][0]["content"] == "Print it again."


def test_chat_exit_at_the_task_prompt(workspaces, scripted_configs):
    child = spawn("chat", "--model", "s", env=scripted_configs)
    child.expect_exact("task> ")
    child.sendline("exit")
    assert finish(child) == 0
    assert not (workspaces / "chat").exists()


def test_chat_checks_every_task_with_the_acceptance_checks_given(sandbox_image, workspaces, scripted_configs):
    """`chat --expect TEXT --check CMD`: the checks decide the task's success (here the output has 42 but not 43)."""
    child = spawn("chat", "--model", "s", "--human", "never", "--expect", "43", "--check", "true",
                  env=scripted_configs)
    child.expect_exact("every task is checked by: stdout_contains: '43'; command: 'true'")
    child.expect_exact("task> ")
    child.sendline("Print six times seven.")
    child.expect("status=failed")
    child.expect_exact("task> ")
    child.sendline("exit")
    assert finish(child) == 1
    t = load_transcript(only_run(workspaces, "chat"))
    assert [c["passed"] for c in t["messages"][2]["outcome"]["checks"]] == [False, True]
    assert t["scenario"]["sandbox"]["session"] == "kernel"  # Python alone: the live kernel, as before
