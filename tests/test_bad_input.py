"""Every bad input gets one line naming the cause and the fix, and exit code 2 (input) or 3 (environment)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.loop.conversation import RunOptions, run_scenario
from agents.loop.errors import EXIT_BAD_INPUT, TranscriptError
from agents.record.transcript import FORMAT, JsonlRecorder, load_transcript
from agents.scenario.spec import load_scenario
from tests.conftest import IMAGE, py
from tests.helpers import ROOT, containers_under, run_cli

SCRIPTED = 'model: {provider: scripted, replies: ["```python\\nprint(1)\\n```"]}\n'


def error_line(proc) -> str:
    """The single error line on stderr."""
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, proc.stderr
    return lines[0].removeprefix("error: ")


def run_yaml(tmp_path: Path, text: str, *args: str, env: dict[str, str] | None = None, name: str = "bad"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    ws = tmp_path / "ws"
    proc = run_cli("run", str(path), "--workspace", str(ws), *args, env=env)
    return proc, path, ws


def no_run_folder(ws: Path) -> bool:
    return not ws.exists() or not any(ws.rglob("events.jsonl"))


# -- scenario YAML -------------------------------------------------------------------------------

YAML_CASES = {
    "syntax-unclosed-quote": ('name: s\ntask: "do it\nmodel: scripted\n',
                              "{f}:4: YAML syntax error: found unexpected end of stream "
                              "(while scanning a quoted scalar that starts at line 2)"),
    "syntax-indentation": ("task: x\nsandbox:\n  timeout: 5\n   memory: 1g\n",
                           "{f}:4: YAML syntax error: mapping values are not allowed here"),
    "unknown-key": (f"task: x\n{SCRIPTED}sandbox:\n  timout: 5\n",
                    "{f}:4: sandbox.timout: unknown key 'timout'"),
    "unknown-top-level-key": (f"task: x\n{SCRIPTED}max_turns: 3\n", "{f}:3: max_turns: unknown key 'max_turns'"),
    "wrong-type": (f"task: x\n{SCRIPTED}user_proxy:\n  max_consecutive_auto_reply: lots\n",
                   "{f}:4: user_proxy.max_consecutive_auto_reply: Input should be a valid integer"),
    "missing-task": (f"description: no task here\n{SCRIPTED}", "{f}:1: task: required key is missing"),
    "negative-timeout": (f"task: x\n{SCRIPTED}sandbox:\n  timeout: -5\n",
                         "{f}:4: sandbox.timeout: Input should be greater than 0"),
    "absurd-timeout": (f"task: x\n{SCRIPTED}sandbox:\n  timeout: 99999999\n",
                       "{f}:4: sandbox.timeout: Input should be less than or equal to 3600"),
    "absurd-memory": (f"task: x\n{SCRIPTED}sandbox:\n  memory: 5000000g\n",
                      "{f}:4: sandbox.memory: '5000000g' is out of range: use a size between 32m and 1024g"),
    "zero-memory-means-unlimited": (f"task: x\n{SCRIPTED}sandbox:\n  memory: '0'\n",
                                    "{f}:4: sandbox.memory: '0' is out of range: use a size between 32m and 1024g"),
    "tiny-tmpfs": (f"task: x\n{SCRIPTED}sandbox:\n  tmpfs_size: 0k\n",
                   "{f}:4: sandbox.tmpfs_size: '0k' is out of range: use a size between 1m and 1024g"),
    "tiny-pids": (f"task: x\n{SCRIPTED}sandbox:\n  pids: 1\n",
                  "{f}:4: sandbox.pids: Input should be greater than or equal to 8"),
    "negative-max-replies": (f"task: x\n{SCRIPTED}user_proxy:\n  max_consecutive_auto_reply: -1\n",
                             "{f}:4: user_proxy.max_consecutive_auto_reply: "
                             "Input should be greater than or equal to 0"),
    "unknown-predicate": (f"task: x\n{SCRIPTED}termination:\n  any:\n    - contains: DONE\n    - startswith: ok\n",
                          "{f}:6: termination.any.1.startswith: unknown predicate kind 'startswith' "
                          "(known: all, any, callable, contains, endswith, regex, success)"),
    "callable-module-missing": (f"task: x\n{SCRIPTED}termination:\n  callable: no_such_pkg.preds:done\n",
                                "{f}:4: termination.callable: termination callable 'no_such_pkg.preds:done': "
                                "cannot import module 'no_such_pkg.preds' (No module named 'no_such_pkg'); "
                                "fix the path or make the module importable (PYTHONPATH)"),
    "callable-attribute-missing": (f"task: x\n{SCRIPTED}termination:\n  all:\n    - callable: json:no_such_fn\n",
                                   "{f}:5: termination.all.0.callable: termination callable 'json:no_such_fn': "
                                   "module 'json' has no attribute 'no_such_fn'"),
    "zero-candidates": (f"task: x\n{SCRIPTED}strategy:\n  candidates: 0\n",
                        "{f}:4: strategy.candidates: 0 is not a number of candidates: use a count from 1 to 16, "
                        "or auto"),
    "file-outside-workspace": (f"task: x\n{SCRIPTED}files:\n  /etc/evil.conf: x\n",
                               "{f}:3: files: file name '/etc/evil.conf' must be a relative path inside the "
                               "workspace (no '..')"),
}


@pytest.mark.parametrize("case", list(YAML_CASES))
def test_bad_scenario_yaml(tmp_path, case):
    text, expected = YAML_CASES[case]
    proc, path, ws = run_yaml(tmp_path, text)
    assert proc.returncode == EXIT_BAD_INPUT, proc.stderr
    assert error_line(proc).startswith(expected.format(f=path)), error_line(proc)
    assert no_run_folder(ws)  # nothing was created


def test_bench_llm_parallel_counts_are_checked_before_the_model_loads():
    proc = run_cli("bench", "llm", "--parallel", "2,x")
    assert proc.returncode == EXIT_BAD_INPUT and error_line(proc) == "--parallel '2,x': give counts like 1,2,4,8"


def test_missing_scenario_file(tmp_path):
    proc = run_cli("run", str(tmp_path / "nope.yaml"))
    assert proc.returncode == EXIT_BAD_INPUT
    assert error_line(proc) == f"{tmp_path / 'nope.yaml'}: file not found"


# -- environment ---------------------------------------------------------------------------------

OK_SCENARIO = f"task: x\n{SCRIPTED}sandbox: {{image: '{IMAGE}'}}\n"


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_docker_daemon_unreachable(tmp_path):
    sock = tmp_path / "no-docker.sock"
    proc, _, ws = run_yaml(tmp_path, OK_SCENARIO, env={"DOCKER_HOST": f"unix://{sock}"})
    assert proc.returncode == 3, proc.stderr
    assert error_line(proc) == (f"Docker daemon not reachable at unix://{sock}: start it "
                                "(e.g. `sudo systemctl start docker`) or set DOCKER_HOST")
    assert no_run_folder(ws)


@pytest.mark.docker
def test_sandbox_image_missing(tmp_path):
    text = f"task: x\n{SCRIPTED}sandbox: {{image: 'codeduet-no-such-image:v0'}}\n"
    proc, _, ws = run_yaml(tmp_path, text)
    assert proc.returncode == 3, proc.stderr
    assert error_line(proc) == ("sandbox image codeduet-no-such-image:v0 not found: "
                                "run `codeduet sandbox build --image codeduet-no-such-image:v0`")
    assert no_run_folder(ws)


def _llama_cpp_installed() -> bool:
    try:
        import llama_cpp  # noqa: F401  (only whether it imports)
    except ImportError:
        return False
    return True


needs_llama = pytest.mark.skipif(not _llama_cpp_installed(), reason="llama-cpp-python not installed")


@needs_llama
@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_model_file_missing(tmp_path):
    model = tmp_path / "missing.gguf"
    proc, _, ws = run_yaml(tmp_path,
                           f"task: x\nmodel: {{provider: llama_cpp, model_path: '{model}', auto_pull: false}}\n")
    assert proc.returncode == 3, proc.stderr
    assert error_line(proc) == f"model file {model} missing: run `codeduet model pull`"
    assert no_run_folder(ws)


@needs_llama
@pytest.mark.docker
def test_model_file_corrupt(tmp_path, sandbox_image):
    model = tmp_path / "garbage.gguf"
    model.write_bytes(b"GGUF" + bytes(range(256)) * 64)
    text = (f"task: x\nmodel: {{provider: llama_cpp, model_path: '{model}', auto_pull: false}}\n"
            f"sandbox: {{image: '{IMAGE}'}}\n")
    proc, _, ws = run_yaml(tmp_path, text)
    assert proc.returncode == 3, proc.stderr
    line = error_line(proc)
    assert line.startswith(f"llama.cpp cannot load {model} (")
    assert line.endswith("check the file with `codeduet model status` or pull it again")
    transcript = json.loads(next(ws.rglob("transcript.json")).read_text())
    assert transcript["status"] == "error" and "cannot load" in transcript["reason"]


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_model_file_not_gguf_fails_before_any_container(tmp_path):
    model = tmp_path / "notes.gguf"
    model.write_text("this is not a model")
    text = f"task: x\nmodel: {{provider: llama_cpp, model_path: '{model}', auto_pull: false}}\n"
    proc, _, ws = run_yaml(tmp_path, text)
    assert proc.returncode == 3, proc.stderr
    assert error_line(proc) == (f"model file {model} is not a GGUF file (corrupt or wrong file): "
                                "run `codeduet model pull` or fix model_path")
    assert no_run_folder(ws)


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_unknown_model_name(tmp_path):
    proc, _, ws = run_yaml(tmp_path, OK_SCENARIO, "--model", "no-such-model")
    assert proc.returncode == EXIT_BAD_INPUT, proc.stderr
    assert error_line(proc) == (f"unknown model 'no-such-model': {ROOT / 'configs' / 'llm.yaml'} defines "
                                "ag2, llamacpp-server, local, ollama, openai, scripted, vllm")
    assert no_run_folder(ws)


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_hosted_model_without_key_fails_before_any_container(tmp_path):
    # An empty value also wins over a key in the project's .env (load_dotenv never overrides).
    proc, _, ws = run_yaml(tmp_path, OK_SCENARIO, "--model", "openai", env={"OPENAI_API_KEY": ""})
    assert proc.returncode == 3, proc.stderr
    assert error_line(proc) == ("model 'openai' needs OPENAI_API_KEY: put it in .env (see configs/.env.example) "
                                "or export it")
    assert no_run_folder(ws)  # the run folder (and so the container) comes only after this check
    assert containers_under(tmp_path) == []


# -- LLM replies ---------------------------------------------------------------------------------

def _messages(result) -> list[dict]:
    return load_transcript(result.run_dir)["messages"]


@pytest.mark.docker
def test_replies_without_runnable_code_are_answered_and_the_loop_goes_on(sandbox_image, workspaces, scenario_file):
    replies = ["", "I would compute it in my head: 42.", "```javascript\nconsole.log(42)\n```",
               "```ruby\nputs 42\n```", py("print(42)")]
    result = run_scenario(load_scenario(scenario_file(replies, user_proxy={"max_consecutive_auto_reply": 8},
                                                      strategy={"max_resamples": 0})), RunOptions())
    assert result.status == "success"
    msgs = _messages(result)
    assert [m["role"] for m in msgs] == ["task"] + ["assistant", "user_proxy"] * 4 + ["assistant", "execution"]
    kinds = [m["outcome"]["kind"] for m in msgs if m["role"] in ("user_proxy", "execution")]
    assert kinds == ["empty", "no_code", "unsupported", "unsupported", "executed"]
    assert msgs[1]["content"] == "" and msgs[2]["content"].startswith("Your reply was empty.")
    assert msgs[4]["content"].startswith("I found no code block to run in your reply.")
    assert "your reply had a ```javascript block" in msgs[6]["content"]
    assert "your reply had a ```ruby block" in msgs[8]["content"]  # (a ```bash block runs: tests/test_shell_blocks.py)
    assert result.totals["executions"] == 1


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_reply_far_beyond_the_context_is_recorded_and_answered(workspaces, loop_file):
    # ~200 kB, ~50k tokens: far beyond an 8k context (the scripted model stands in for a runaway LLM)
    huge = "Let me think step by step. " + "blah " * 40_000 + "\n```python\nprint('start')\nvalues = [1, 2,"
    replies = [huge, py("print('short and complete')")]
    # re-asks allowed (the default): the cut reply is recorded whole as a rejected reply and asked again
    result = run_scenario(load_scenario(loop_file(replies)), RunOptions())
    assert result.status == "success"
    t = load_transcript(result.run_dir)
    assert t["rejected_replies"][0]["reason"] == "cut" and len(t["rejected_replies"][0]["content"]) == len(huge)
    assert "short and complete" in t["messages"][2]["content"] and result.totals["executions"] == 1
    # no re-asks: the cut reply reaches the proxy, is recorded whole, and answered without running it
    result = run_scenario(load_scenario(loop_file(replies, name="t2", strategy={"attempts": 1,
                                                                               "max_resamples": 0})), RunOptions())
    assert result.status == "success"
    msgs = _messages(result)
    assert len(msgs[1]["content"]) == len(huge)  # recorded whole
    report = msgs[2]
    assert report["role"] == "user_proxy" and report["outcome"]["kind"] == "unclosed"
    assert "cut off" in report["content"] and not report["outcome"]["executions"]
    assert "short and complete" in msgs[4]["content"]


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_endless_huge_replies_end_with_a_clear_status(workspaces, loop_file):
    huge = "word " * 40_000
    path = loop_file([huge] * 6, user_proxy={"max_consecutive_auto_reply": 2})
    result = run_scenario(load_scenario(path), RunOptions())
    # re-asked, nudged, then the same huge text again: the conversation ends as a prose loop
    assert result.status == "failed"
    assert result.reason == "the model kept answering without code, the same text again after a nudge"
    assert load_transcript(result.run_dir)["status"] == "failed"


# -- transcripts ---------------------------------------------------------------------------------

def recorded_run(tmp_path: Path) -> Path:
    """A real run folder written by the Recorder (no sandbox needed for this)."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    rec = JsonlRecorder(run_dir, {"run_id": "r1", "scenario": {"name": "t"}})
    rec.event("message", role="task", sender="user_proxy", recipient="assistant", content="Print 42.")
    rec.event("message", role="assistant", sender="assistant", recipient="user_proxy", content=py("print(42)"))
    rec.finish("success", "done")
    return run_dir


def test_truncated_transcript_falls_back_to_events(tmp_path):
    run_dir = recorded_run(tmp_path)
    path = run_dir / "transcript.json"
    path.write_text(path.read_text()[:200])
    warnings = []
    data = load_transcript(run_dir, warn=warnings.append)
    assert data["recovered_from_events"] is True and data["status"] == "success"
    assert [m["role"] for m in data["messages"]] == ["task", "assistant"]
    assert warnings == [f"{path}: not valid JSON (truncated?); recovered 2 messages from {run_dir / 'events.jsonl'}"]


def test_events_cut_mid_line_keep_everything_before(tmp_path):
    run_dir = recorded_run(tmp_path)
    (run_dir / "transcript.json").unlink()
    events = run_dir / "events.jsonl"
    lines = events.read_text().splitlines(keepends=True)
    events.write_text("".join(lines[:-1]) + lines[-1][:25])  # the end event cut by a kill
    data = load_transcript(run_dir)
    assert data["status"] == "interrupted" and len(data["messages"]) == 2


@pytest.mark.parametrize("content", [b'{"format": "codeduet.transcript/1", "messages": [', b"\x89PNG\r\n\x1a\n\x00\xff",
                                     b"not json at all"], ids=["truncated", "binary", "text"])
def test_unreadable_transcript_without_events(tmp_path, content):
    path = tmp_path / "transcript.json"
    path.write_bytes(content)
    with pytest.raises(TranscriptError) as err:
        load_transcript(path)
    assert str(err.value) == (f"{path}: not valid JSON (truncated?) and there is no events.jsonl to recover from: "
                              "re-run the scenario")
    assert err.value.exit_code == EXIT_BAD_INPUT
    proc = run_cli("replay", str(path))
    assert proc.returncode == EXIT_BAD_INPUT and str(err.value) in proc.stderr.replace("\n", "")


def test_transcript_of_a_future_format(tmp_path):
    run_dir = recorded_run(tmp_path)
    for name in ("transcript.json", "events.jsonl"):  # a newer codeduet wrote both
        p = run_dir / name
        p.write_text(p.read_text().replace(FORMAT, "codeduet.transcript/7"))
    with pytest.raises(TranscriptError) as err:
        load_transcript(run_dir)
    assert str(err.value) == (f"{run_dir / 'transcript.json'}: format 'codeduet.transcript/7' is not '{FORMAT}': "
                              "it was written by a newer codeduet; upgrade codeduet to read it")
    proc = run_cli("replay", str(run_dir))
    assert proc.returncode == EXIT_BAD_INPUT
    assert "upgrade codeduet to read it" in proc.stderr


def test_json_that_is_not_a_transcript(tmp_path):
    path = tmp_path / "transcript.json"
    path.write_text(json.dumps({"hello": "world"}))
    with pytest.raises(TranscriptError, match="format None is not 'codeduet.transcript/2': not a codeduet transcript"):
        load_transcript(path)


# -- issue 20 item 13: smaller items seen on a new user's first hour --------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("name: s\ntask: a\ntask: b\n", "{f}:3: task: duplicate key (also at line 2); keep one"),
    ("task: a\nsandbox:\n  timeout: 5\n  timeout: 9\n",
     "{f}:4: sandbox.timeout: duplicate key (also at line 3); keep one"),
    ("task: a\nmodel:\n  provider: scripted\n  replys: ['x']\n", "{f}:4: model.replys: unknown key 'replys'"),
    ("task: a\nmodel:\n  provider: scripted\n  replies: []\n",
     "{f}:4: model.replies: a scripted model needs at least one reply"),
], ids=["duplicate-top-level", "duplicate-nested", "inline-model-typo", "no-replies"])
def test_small_yaml_mistakes_are_one_line_with_file_and_line(tmp_path, text, expected):
    proc, path, ws = run_yaml(tmp_path, text)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert error_line(proc) == expected.format(f=path)
    assert no_run_folder(ws) and proc.stdout == ""


@pytest.mark.parametrize("flags,says", [
    (["--attempts", "0"], "Invalid value for '--attempts'"),
    (["--jobs", "-1"], "Invalid value for '--jobs'"),
    (["--max-seconds", "0"], "Invalid value for '--max-seconds'"),
    (["--no-such-flag"], "No such option: --no-such-flag"),
])
def test_a_bad_flag_is_one_line_not_a_box(tmp_path, flags, says):
    proc, path, ws = run_yaml(tmp_path, "task: a\nmodel: scripted\n", *flags)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"error: {says}"), proc.stderr
    assert proc.stderr.rstrip().endswith("(see `run.py run --help`)") and no_run_folder(ws)
