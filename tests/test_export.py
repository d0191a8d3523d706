"""`codeduet export`: real runs of the scripted model (the local executor: no Docker) written as an Inspect eval log
read back with inspect-ai's own reader, as chat-format JSONL read back with json, and as a folder of the final code;
through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.loop.conversation import RunOptions, run_scenario
from agents.scenario.spec import load_scenario
from tests.conftest import ROOT, py
from tests.helpers import run_cli

CHECK = {"checks": [{"stdout_contains": "42"}]}


@pytest.fixture
def batch(workspaces: Path, loop_file) -> dict[str, Path]:
    """Three runs under `workspaces`: solved at once, solved after a repair, and failed (41 and 43, never 42)."""
    runs = {}
    for name, replies in (("first", [py("print(42)")]), ("repaired", [py("print(41)"), py("print(42)")]),
                          ("failed", [py("print(41)"), py("print(43)")])):
        scenario = load_scenario(loop_file(replies, name=name, user_proxy={"max_consecutive_auto_reply": 2}, **CHECK))
        runs[name] = run_scenario(scenario, RunOptions()).run_dir
    return runs


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_an_inspect_log_of_a_batch_reads_back_with_inspect_ais_reader(batch, workspaces, tmp_path):
    from inspect_ai.log import read_eval_log

    out = tmp_path / "batch.eval"
    proc = run_cli("export", str(workspaces), "--format", "inspect", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out}: 3 run(s), 2 successful (inspect)" in proc.stdout and "dropped: " in proc.stdout
    log = read_eval_log(str(out))
    assert log.status == "success" and log.eval.model == "scripted/scripted" and log.eval.task == "codeduet"
    assert log.results.total_samples == 3 and abs(log.results.scores[0].metrics["accuracy"].value - 2 / 3) < 1e-9
    samples = {s.metadata["scenario"]: s for s in log.samples}
    assert {k: s.scores["success"].value for k, s in samples.items()} == {"first": "C", "repaired": "C", "failed": "I"}
    assert samples["failed"].scores["checks"].value == 0 and "FAIL stdout_contains" in \
        samples["failed"].scores["success"].explanation
    repaired = samples["repaired"]
    assert repaired.id == batch["repaired"].name and repaired.input[0].text == "Print the answer."
    assert repaired.target == ["stdout_contains: 42"]
    roles = [m.role for m in repaired.messages]
    assert roles == ["system", "user", "assistant", "tool", "user", "assistant", "tool", "user"], roles
    assert "Python" in repaired.messages[0].text  # the developer's system message, as recorded
    call = repaired.messages[2].tool_calls[0]
    assert call.function == "sandbox_exec" and call.arguments["code"] == "print(41)\n" and \
        call.arguments["language"] == "python"
    tool = repaired.messages[3]
    assert tool.tool_call_id == call.id and tool.text == "exit code 0\n41"
    assert "1 of 1 failed" in repaired.messages[4].text  # the report the model read
    assert repaired.messages[6].text == "exit code 0\n42" and repaired.output.completion.endswith("```")
    assert "scripted/scripted" in repaired.model_usage and repaired.total_time > 0 and repaired.started_at
    assert log.stats.model_usage and log.stats.started_at <= log.stats.completed_at
    kinds = [e.event for e in repaired.events]  # the viewer's Transcript tab: a model call per reply, a tool per block
    assert kinds == ["model", "tool", "model", "tool"], kinds
    assert [m.role for m in repaired.events[2].input] == roles[:5] and repaired.events[3].result == "exit code 0\n42"
    assert repaired.events[0].timestamp <= repaired.events[1].timestamp <= repaired.events[2].timestamp


def test_chat_jsonl_of_the_successful_runs_loads_with_json(batch, workspaces, tmp_path):
    out = tmp_path / "chat.jsonl"
    proc = run_cli("export", str(workspaces), "--format", "chat", "--status", "success", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "2 run(s), 2 successful (chat)" in proc.stdout and "dropped: attempts other than the kept one" in \
        proc.stdout
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["metadata"]["scenario"] for r in lines) == ["first", "repaired"]
    repaired = next(r for r in lines if r["metadata"]["scenario"] == "repaired")
    roles = [m["role"] for m in repaired["messages"]]
    assert roles == ["system", "user", "assistant", "user", "assistant"], roles  # ends on the model's reply
    assert set(repaired["messages"][0]) == {"role", "content"}
    assert "print(41)" in repaired["messages"][2]["content"] and "1 of 1 failed" in repaired["messages"][3]["content"]
    assert repaired["metadata"]["status"] == "success" and repaired["metadata"]["checks_passed"] == 1
    assert repaired["metadata"]["dropped"] == []


def test_every_run_and_a_failed_one_alone(batch, workspaces, tmp_path):
    """Without --status every run is a line; a run id picks one run; --status failed keeps the failed one."""
    out = tmp_path / "all.jsonl"
    assert run_cli("export", str(workspaces), "--format", "chat", "-o", str(out)).returncode == 0
    assert len(out.read_text().splitlines()) == 3
    one = tmp_path / "one.jsonl"
    proc = run_cli("export", batch["failed"].name, "--format", "chat", "--status", "failed", "-o", str(one),
                   "--workspace", str(workspaces))
    assert proc.returncode == 0, proc.stderr
    (record,) = [json.loads(line) for line in one.read_text().splitlines()]
    assert record["metadata"]["status"] == "failed" and record["metadata"]["run_id"] == batch["failed"].name


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_scenario_folder_gives_all_its_runs(workspaces, loop_file, tmp_path):
    scenario = load_scenario(loop_file([py("print(42)")], name="twice", **CHECK))
    for _ in range(2):
        run_scenario(scenario, RunOptions())
    out = tmp_path / "twice.eval"
    assert run_cli("export", str(workspaces / "twice"), "--format", "inspect", "-o", str(out)).returncode == 0
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(out))
    assert len(log.samples) == 2 and log.eval.task == "twice"


def test_a_run_of_two_attempts(workspaces, loop_file, tmp_path):
    """Inspect logs both attempts (each from its own system message); chat keeps the kept attempt and says so."""
    from agents.record.transcript import load_transcript
    from agents.replay.export.chat import chat_record
    from agents.replay.export.inspect_log import sample

    scenario = load_scenario(loop_file([py("print(41)"), py("print(42)")], name="two",
                                       user_proxy={"max_consecutive_auto_reply": 0}, strategy={"attempts": 2},
                                       **CHECK))
    t = load_transcript(run_scenario(scenario, RunOptions()).run_dir)
    assert t["status"] == "success" and t["chosen_attempt"] == 2, (t["status"], t.get("chosen_attempt"))
    messages = sample(t).messages
    assert [m.role for m in messages].count("system") == 2
    assert {(m.metadata or {}).get("attempt") for m in messages} == {1, 2}
    record = chat_record(t)
    assert record["metadata"]["kept_attempt"] == 2 and "attempts other than the kept one" in \
        record["metadata"]["dropped"]
    assert "print(42)" in record["messages"][-1]["content"] and "print(41)" not in json.dumps(record["messages"])


def test_files_holds_each_runs_final_code_and_its_facts(batch, workspaces, tmp_path):
    out = tmp_path / "code"
    proc = run_cli("export", str(workspaces), "--format", "files", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    folder = out / "repaired" / batch["repaired"].name
    assert sorted(p.name for p in folder.iterdir()) == ["block01.py", "block02.py", "codeduet-run.json"]
    assert (folder / "block02.py").read_text() == "print(42)\n"
    facts = json.loads((folder / "codeduet-run.json").read_text())
    assert facts["status"] == "success" and facts["checks_detail"][0]["passed"] is True


@pytest.mark.parametrize("args, says", [
    (["--format", "yaml"], "--format yaml: not an export format (one of inspect, chat, files)"),
    (["--format", "chat", "--status", "done"], "--status done: not a run status"),
    (["--format", "chat", "--status", "timeout"], "none of the 3 run(s) has status timeout"),
    (["--format", "inspect"], "Inspect reads a log named .eval (or .json, its JSON form)"),
])
@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_bad_choices_are_one_line(batch, workspaces, tmp_path, args, says):
    proc = run_cli("export", str(workspaces), *args, "-o", str(tmp_path / "x"))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert says in proc.stderr and not (tmp_path / "x").exists()


def test_a_folder_without_runs_is_one_line(tmp_path):
    proc = run_cli("export", str(tmp_path), "--format", "chat", "-o", str(tmp_path / "x.jsonl"))
    assert proc.returncode == 2 and "no saved run in this folder" in proc.stderr, proc.stderr


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_run_recovered_from_its_events_exports_and_no_environment_is_written(batch, workspaces, tmp_path):
    """A run whose transcript.json is gone (kill -9) is read from events.jsonl (a warning on stderr); a key in the
    environment of the export is in none of the files it writes."""
    (batch["repaired"] / "transcript.json").unlink()
    secret = "sk-export-test-0123456789"
    out = tmp_path / "chat.jsonl"
    proc = run_cli("export", str(batch["repaired"]), "--format", "chat", "-o", str(out),
                   env={"OPENAI_API_KEY": secret, "CODEDUET_API_KEY": secret})
    assert proc.returncode == 0 and "recovered" in proc.stderr, proc.stderr
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert [m["role"] for m in record["messages"]] == ["system", "user", "assistant", "user", "assistant"]
    log = tmp_path / "r.eval"
    assert run_cli("export", str(batch["repaired"]), "--format", "inspect", "-o", str(log),
                   env={"OPENAI_API_KEY": secret}).returncode == 0
    from inspect_ai.log import read_eval_log

    assert secret not in out.read_text() and secret not in read_eval_log(str(log)).model_dump_json()


def test_a_block_in_a_language_the_sandbox_lacks_is_no_tool_call():
    from agents.replay.export.inspect_log import ran_blocks

    reply = {"code_blocks": [{"language": "ruby", "code": "puts 1"}, {"language": "python", "code": "print(1)"}]}
    assert ran_blocks(reply, {"outcome": {"not_run": ["ruby"]}}) == [reply["code_blocks"][1]]
    assert ran_blocks(reply, {}) == reply["code_blocks"]


@pytest.mark.docker
def test_a_c_run_in_the_docker_sandbox_is_a_c_tool_call_per_turn(workspaces, tmp_path):
    """scenarios/c_scripted.yaml in the real sandbox: AddressSanitizer's report, then the fix, as two sandbox_exec
    calls with their C code and outputs."""
    from inspect_ai.log import read_eval_log

    run_dir = run_scenario(load_scenario(ROOT / "scenarios" / "c_scripted.yaml"), RunOptions()).run_dir
    out = tmp_path / "c.eval"
    assert run_cli("export", str(run_dir), "--format", "inspect", "-o", str(out)).returncode == 0
    (sample,) = read_eval_log(str(out)).samples
    calls = [c for m in sample.messages if m.role == "assistant" for c in m.tool_calls or []]
    assert [c.arguments["language"] for c in calls] == ["c", "c"] and "squares[i]" in calls[0].arguments["code"]
    outputs = [m.text for m in sample.messages if m.role == "tool"]
    assert "AddressSanitizer" in outputs[0] and outputs[1] == "exit code 0\nsum=385"
    assert sample.scores["success"].value == "C" and "You are a careful programmer" in sample.messages[0].text


def test_a_team_run_the_developers_conversation_once(workspaces, loop_file):
    """Planner → Developer → QA: the plan is in the task and QA's report in the run's report, so the chat line has
    each once; the Inspect sample keeps the planner's and QA's messages as theirs, outside the developer's calls."""
    from agents.record.transcript import load_transcript
    from agents.replay.export.chat import chat_record
    from agents.replay.export.inspect_log import sample

    plan, hypothesis = "1. List the primes below 100.\n2. Print their count.", "The print divides by zero."
    replies = [plan, py("print(25 / 0)"), hypothesis, py("print(25)")]
    path = loop_file(replies, name="team", team=["planner", "developer", "qa"], checks=[{"stdout_contains": "25"}])
    t = load_transcript(run_scenario(load_scenario(path), RunOptions()).run_dir)
    assert t["status"] == "success", t["reason"]
    record = chat_record(t)
    assert [m["role"] for m in record["messages"]] == ["system", "user", "assistant", "user", "assistant"]
    text = json.dumps(record["messages"])
    assert text.count("List the primes below 100") == 1 and text.count(hypothesis[:-1]) == 1
    s = sample(t)
    assert [(m.metadata or {}).get("role") for m in s.messages if m.role == "assistant"] == \
        ["planner", "assistant", "qa", "assistant"]
    calls = [e for e in s.events if e.event == "model"]
    assert len(calls) == 2 and not any((m.metadata or {}).get("role") in ("planner", "qa") for m in calls[1].input)


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_resumed_run_says_it_holds_only_its_own_messages(workspaces, loop_file, tmp_path):
    parent = run_scenario(load_scenario(loop_file([py("print(1)"), py("print(2)")], name="rs")), RunOptions())
    proc = run_cli("replay", str(parent.run_dir), "--resume", "--json", "--message", "Now print 2.")
    assert proc.returncode == 0, proc.stderr
    child = Path(json.loads(proc.stdout)["run_dir"])
    out = tmp_path / "child.jsonl"
    assert run_cli("export", str(child), "--format", "chat", "-o", str(out)).returncode == 0
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert any("of the run it resumes" in d and str(parent.run_dir) in d for d in record["metadata"]["dropped"])
