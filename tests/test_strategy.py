"""The self-debug strategy with real AG2 conversations and the real sandbox (scripted model): repeats are
re-asked and never re-executed, fresh attempts live in one run folder, replay understands them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.loop.attempt import install_turns
from agents.loop.briefing import briefed_task, file_preview
from agents.loop.conversation import RunOptions, run_scenario
from agents.loop.repeats import RepeatMemory, normalize_code
from agents.loop.strategy import SamplingPolicy, compact, reask_messages
from agents.loop.turn_policy import TurnPolicy
from agents.record.transcript import load_transcript
from agents.scenario.spec import load_scenario
from agents.scenario.strategy_config import StrategyConfig
from tests.conftest import ROOT, py
from tests.helpers import run_cli

RUN_PY = str(ROOT / "run.py")
BAD = "values = [3, 1, 2]\nprint(sorted(values)[3])"
BAD_REFORMATTED = "# the largest value\nvalues = [3,1,2]\n\nprint( sorted(values)[3] )  # index 3"
GOOD = "values = [3, 1, 2]\nprint(sorted(values)[-1])"




def events(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]


# -- pure parts --------------------------------------------------------------------------------------

def test_normalized_code_ignores_comments_and_formatting_but_not_changes():
    assert normalize_code(BAD) == normalize_code(BAD_REFORMATTED)
    assert normalize_code(BAD) != normalize_code(GOOD)
    assert normalize_code("print(1\n") == normalize_code("  print(1\n\n")  # not Python: stripped lines


def test_memory_finds_a_repeat_of_any_earlier_execution():
    memory = RepeatMemory()
    memory.remember(py(BAD), attempt=1, turn=1, summary="it failed with exit code 1: IndexError")
    seen = memory.find(py(BAD_REFORMATTED))
    assert seen is not None and (seen.attempt, seen.turn) == (1, 1) and "IndexError" in seen.summary
    assert memory.find(py(GOOD)) is None and memory.find("no code here") is None


def test_policy_first_turn_greedy_repairs_sampled_reasks_hotter_with_new_seeds():
    cfg = StrategyConfig(repair_temperature=0.6, attempt_temperature=0.8, resample_step=0.2, seed=5)
    first, second = SamplingPolicy(cfg, attempt=1), SamplingPolicy(cfg, attempt=2)
    assert first.sampling(1, 0).temperature is None  # the model entry's own (greedy) setting
    assert first.sampling(2, 0).temperature == 0.6
    assert second.sampling(1, 0).temperature == 0.8
    hotter = [first.sampling(2, k).temperature for k in range(4)]
    assert hotter == sorted(hotter) and hotter[-1] == pytest.approx(1.0)
    seeds = {p.sampling(t, k).seed for p in (first, second) for t in (1, 2, 3) for k in range(3)}
    assert len(seeds) == 18  # every call its own seed: reproducible, never the same sample twice
    assert first.sampling(1, 1).temperature == 0.6  # a repeated greedy reply is re-asked sampled
    greedy_repairs = SamplingPolicy(StrategyConfig(repair_temperature=0), attempt=1)
    assert greedy_repairs.sampling(2, 0).temperature is None


# -- real conversations ------------------------------------------------------------------------------







def test_a_looping_reply_is_recognised_so_generation_can_stop_early():
    from agents.models.loops import looping

    assert looping("x = re.match(r'" + "\\d{3} " * 60)
    assert not looping("print('=' * 40)\nrow = [0, 0, 0, 0, 0, 0]\n" + "for i in range(3):\n    print(i)\n" * 3)


def attempts_run(factory) -> Path:
    """Attempt 1 fails twice and hits its reply limit; attempt 2 passes at once (of 3 allowed)."""
    wrong = "print(sum(range(10)) + 1)"
    path = factory([py(BAD), py(wrong), py("open('out.txt', 'w').write('45')\nprint(sum(range(10)))")],
                   name="attempts", checks=[{"stdout_contains": "45"}, {"file_exists": "out.txt"}],
                   user_proxy={"max_consecutive_auto_reply": 1}, strategy={"attempts": 3})
    return run_scenario(load_scenario(path), RunOptions()).run_dir


@pytest.fixture
def two_attempt_run(workspaces, loop_file) -> Path:
    return attempts_run(loop_file)


@pytest.fixture
def two_attempt_run_in_docker(sandbox_image, workspaces, scenario_file) -> Path:
    return attempts_run(scenario_file)


def test_attempt_two_passes_and_the_run_ends_there_with_both_in_one_transcript(two_attempt_run):
    t = load_transcript(two_attempt_run)
    assert t["status"] == "success" and t["reason"].startswith("attempt 2 of 3")
    assert t["chosen_attempt"] == 2 and [a["attempt"] for a in t["attempts"]] == [1, 2]
    assert t["attempts"][0]["status"] == "max_replies" and t["attempts"][1]["success"]
    assert [(m["attempt"], m["role"]) for m in t["messages"]] == [
        (1, "task"), (1, "assistant"), (1, "execution"), (1, "assistant"), (1, "execution"),
        (2, "task"), (2, "assistant"), (2, "execution")]
    assert "Earlier attempts at this task failed" in t["messages"][5]["content"]
    assert "checks failed" in t["messages"][5]["content"]  # the one-line summary of attempt 1
    assert t["totals"]["attempts"] == 2 and t["totals"]["executions"] == 3
    # each attempt has its own fresh workspace: attempt 1's files cannot satisfy attempt 2's checks
    assert (two_attempt_run / "workspace" / "block01.py").is_file()
    assert (two_attempt_run / "workspace-2" / "out.txt").read_text() == "45"
    assert not (two_attempt_run / "workspace" / "out.txt").exists()
    assert [e["attempt"] for e in events(two_attempt_run) if e["type"] == "attempt"] == [1, 2]
    listing = run_cli("runs", "--workspace", str(two_attempt_run.parent.parent))
    assert "2 (kept 2)" in listing.stdout, listing.stdout
    shown = run_cli("replay", str(two_attempt_run))
    assert "attempt 1 · max_replies" in shown.stdout and "attempt 2 · success" in shown.stdout
    assert "(kept)" in shown.stdout


@pytest.mark.docker
def test_replay_execute_reruns_each_attempt_in_its_own_fresh_sandbox(two_attempt_run_in_docker):
    proc = run_cli("replay", str(two_attempt_run_in_docker), "--execute")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 block(s): 3 match, 0 diverged" in proc.stdout
    assert "block01.py (attempt 2, message 7)" in proc.stdout  # numbering restarts in the fresh workspace


def test_html_shows_attempts_and_rejected_repeats(two_attempt_run, tmp_path):
    page = tmp_path / "run.html"
    assert run_cli("replay", str(two_attempt_run), "--html", str(page)).returncode == 0
    text = page.read_text()
    assert text.count('<h2 class="attempt"') == 2 and "attempt 2 · success" in text and "(kept)" in text


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_resume_of_a_multi_attempt_run_goes_on_from_the_kept_attempt(two_attempt_run):
    proc = run_cli("replay", str(two_attempt_run), "--resume", "--message", "Also print the count.",
               "--max-auto-reply", "1")
    assert proc.returncode in (0, 1), proc.stderr
    child = next(p for p in two_attempt_run.parent.iterdir() if p != two_attempt_run)
    t = load_transcript(child)
    assert t["parent"]["run_dir"] == str(two_attempt_run)
    assert t["parent"]["messages"] == 3  # the kept attempt's task, reply and execution, not attempt 1's
    assert len(t["attempts"]) == 1  # a resumed conversation goes on with its follow-up: no fresh attempt
    assert (child / "workspace" / "out.txt").read_text() == "45"  # seeded from the kept attempt's workspace


def test_no_fresh_attempt_after_the_person_ends_the_run(workspaces, loop_file):
    path = loop_file([py(BAD), py(GOOD)], strategy={"attempts": 3})
    result = run_scenario(load_scenario(path), RunOptions(human="always"), human=lambda prompt, proxy: "exit")
    assert result.status == "failed" and len(result.attempts) == 1


def test_a_person_steering_gets_no_fresh_attempt_whatever_they_type(workspaces, loop_file):
    answers = iter(["", "exit"])
    path = loop_file([py(BAD), py("print([3, 1, 2][5])"), py(GOOD)], strategy={"attempts": 3},
                         user_proxy={"max_consecutive_auto_reply": 1})
    result = run_scenario(load_scenario(path), RunOptions(human="always"), human=lambda prompt, proxy: next(answers))
    assert result.status == "failed" and len(result.attempts) == 1


def test_a_killed_multi_attempt_run_is_recovered_with_its_attempts(two_attempt_run):
    events_file = two_attempt_run / "events.jsonl"
    lines = events_file.read_text().splitlines()
    events_file.write_text("\n".join(ln for ln in lines if json.loads(ln)["type"] not in ("end", "attempt")) + "\n")
    (two_attempt_run / "transcript.json").unlink()  # as after kill -9 in attempt 2
    t = load_transcript(two_attempt_run)
    assert t["recovered_from_events"] and t["status"] == "interrupted"
    assert t["totals"]["attempts"] == 2 and t["chosen_attempt"] == 2
    from agents.replay.resume import kept_messages

    assert {m["attempt"] for m in kept_messages(t)} == {2}


def test_a_version_1_transcript_still_loads_and_shows(tmp_path):
    run = tmp_path / "old"
    run.mkdir()
    old = {"format": "codeduet.transcript/1", "run_id": "x", "status": "success", "reason": "ok",
           "scenario": {"name": "old"}, "messages": [
               {"index": 0, "role": "task", "sender": "user_proxy", "content": "Print 1."},
               {"index": 1, "role": "assistant", "sender": "assistant", "content": py("print(1)")}],
           "totals": {"turns": 1}}
    (run / "transcript.json").write_text(json.dumps(old))
    assert load_transcript(run)["format"] == "codeduet.transcript/1"
    shown = run_cli("replay", str(run))
    assert shown.returncode == 0 and "Print 1." in shown.stdout and "attempt" not in shown.stdout


def test_a_bad_strategy_key_is_a_one_line_error_with_file_and_line(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("task: x\nmodel: {provider: scripted}\nstrategy:\n  attempts: 2\n  atempts_typo: 3\n")
    proc = run_cli("run", str(path))
    assert proc.returncode == 2
    line = proc.stderr.strip().splitlines()[-1]
    assert line == f"error: {path}:5: strategy.atempts_typo: unknown key 'atempts_typo'", line
    path.write_text("task: x\nmodel: {provider: scripted}\nstrategy:\n  attempts: 0\n")
    proc = run_cli("run", str(path))
    assert proc.returncode == 2 and f"{path}:4: strategy.attempts" in proc.stderr, proc.stderr


def test_failed_checks_show_expected_and_the_closest_output_line():
    from agents.feedback.feedback import first_line
    from agents.scenario.checks import closest_line

    output = "Total rows: 14\nSouth: 1127.3000000001\nNorth: 786.34\n"
    assert closest_line(output, "South 1127.30") == "; the closest output line is 'South: 1127.3000000001'"
    assert closest_line("", "x") == "; the output was empty"
    pytest_detail = (">       assert got == EXPECTED\n"
                     "E       AssertionError: rows are [('North', 786.34)], expected [...]")
    assert first_line(pytest_detail).startswith("AssertionError: rows are [('North', 786.34)]")
    examples = ("E       AssertionError: 1 of 2 examples from the docstring failed:\n"
                "E         f(3) returned 4, expected 6\nE         Find the mistake")
    assert first_line(examples) == ("AssertionError: 1 of 2 examples from the docstring failed: "
                                    "f(3) returned 4, expected 6")
    build = "it exited with 1:\n# wrap\n./wrap.go:10:9: undefined: currentLine\n"  # a command check's build error
    assert first_line(build) == "it exited with 1: ./wrap.go:10:9: undefined: currentLine"
    assert first_line("it exited with 1:\nno such file\n") == "it exited with 1: no such file"


def test_file_preview_shows_the_head_of_each_file_within_its_budget():
    files = {"data.csv": "".join(f"row{i},{i}\n" for i in range(1, 51)), "notes.md": "```\ncode\n```\n"}
    text = briefed_task("Sum the rows.", files, 3)
    # the path alone on its line (copied after `# filename:` it is exactly the path), what was cut said after the fence
    assert text.startswith("Sum the rows.\n\n") and "\ndata.csv\n```\nrow1,1\nrow2,2\nrow3,3\n```\n" in text
    assert "```\n(the first 3 of 50 lines shown)" in text and "row4,4" not in text
    assert "\nnotes.md\n````\n```\ncode\n```\n````" in text  # a fence in the data cannot close the preview
    assert briefed_task("Sum the rows.", files, 0) == "Sum the rows." == briefed_task("Sum the rows.", {}, 30)
    capped = file_preview({"big.txt": "x" * 90 + "\n" + "y" * 90, "more.txt": "z" * 50}, 10, chars=100)
    assert "x" * 90 in capped and "yyy" not in capped and "```\n(the first 1 of 2 lines shown)" in capped
    assert "(not shown, to keep this message short: more.txt)" in capped and "zzz" not in capped


def test_every_attempt_starts_with_the_task_and_a_preview_of_the_scenario_files(workspaces, loop_file):
    path = loop_file([py("print(open('prices.csv').read().count('\\n'))"), py("print(2)")],
                     files={"prices.csv": "item,price\napple,3\n"}, checks=[{"stdout_contains": "2"}],
                         user_proxy={"max_consecutive_auto_reply": 0}, strategy={"attempts": 2, "file_preview": 1})
    result = run_scenario(load_scenario(path), RunOptions())
    t = load_transcript(result.run_dir)
    tasks = [m["content"] for m in t["messages"] if m["role"] == "task"]
    assert result.status == "success" and len(tasks) == 1, result.reason  # the file has 2 lines: attempt 1 passes
    assert "\nprices.csv\n```\nitem,price\n```\n(the first 1 of 2 lines shown)" in tasks[0]
    assert t["scenario"]["strategy"]["file_preview"] == 1


def test_a_last_context_repair_turn_sees_the_task_the_last_reply_and_its_feedback_only():
    history = [{"role": "user", "content": c} for c in ("task", "code 1", "error 1", "code 2", "error 2")]
    assert [m["content"] for m in compact(history, "last")] == ["task", "code 2", "error 2"]
    assert compact(history, "full") == history and compact(history[:3], "last") == history[:3]


def test_a_reask_keeps_a_prose_reply_and_asks_for_its_code_shows_a_repeat_and_drops_a_cut_reply():
    history = [{"role": "user", "content": "task"}]
    prose = "The loop stops one item early; I will use range(n + 1)."
    kept = reask_messages(history, "no_code", prose, None, StrategyConfig())
    assert kept[:2] == [*history, {"role": "assistant", "content": prose}]
    assert kept[2]["role"] == "user" and "```python" in kept[2]["content"] and "applying what you just wrote" in \
        kept[2]["content"]
    assert reask_messages(history, "no_code", prose, None, StrategyConfig(prose_reply="reask")) is history
    assert reask_messages(history, "cut", "```python\nprint(1", None, StrategyConfig()) is history
    seen = RepeatMemory()
    seen.remember(py(BAD), attempt=1, turn=1, summary="it failed with exit code 1: IndexError")
    repeat = reask_messages(history, "repeat", py(BAD), seen.find(py(BAD)), StrategyConfig())
    assert repeat[1]["content"] == py(BAD) and "attempt 1, turn 1" in repeat[2]["content"]


@pytest.mark.parametrize("prose_reply", ["keep", "reask"])
def test_the_model_is_asked_with_its_prose_kept_or_from_the_clean_prompt(tmp_path, prose_reply):
    from autogen import AssistantAgent, UserProxyAgent

    from agents.models.config import build_provider
    from agents.record.display import NullDisplay
    from agents.record.transcript import JsonlRecorder

    prose = "The loop stops one item early; I will use range(n + 1)."
    provider = build_provider({"provider": "scripted", "replies": [prose, py(GOOD)]}, origin="test")
    assistant = AssistantAgent("assistant", llm_config=provider.llm_config(), system_message="Write Python.")
    provider.attach(assistant)
    policy = TurnPolicy(StrategyConfig(prose_reply=prose_reply), 1, "NEVER", RepeatMemory(), lambda m: False)
    install_turns(assistant, policy, provider, JsonlRecorder(tmp_path, {}), NullDisplay())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    reply = assistant.generate_reply(messages=[{"role": "user", "content": "task"}], sender=user)
    assert (reply.get("content") if isinstance(reply, dict) else reply) == py(GOOD)
    first, second = provider.requests
    assert first[-1]["content"] == "task"
    if prose_reply == "keep":  # the second request carries the prose and asks for its code
        assert second[:len(first)] == first and second[-2] == {"role": "assistant", "content": prose}
        assert second[-1]["role"] == "user" and "applying what you just wrote" in second[-1]["content"]
    else:
        assert second == first




