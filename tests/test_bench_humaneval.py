"""The HumanEval harness end to end: scripted model, real Docker sandbox, hidden tests kept hidden."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from agents.bench.humaneval import runner
from agents.bench.humaneval.run import BenchConfig, read_records, run_bench
from agents.bench.humaneval.scenario import load_problems
from agents.bench.humaneval.stats import mcnemar_exact, paired_bootstrap, summarize, wilson
from agents.bench.humaneval.visible import extract_examples, validated_examples
from agents.loop.errors import BadInputError
from agents.record.transcript import load_transcript
from agents.sandbox import make_executor
from agents.sandbox.config import SandboxConfig
from tests.conftest import IMAGE
from tests.helpers import run_cli

PROBLEMS = {p["task_id"]: p for p in load_problems()}
QUIET = Console(file=io.StringIO())

GOOD_0 = '''Here it is:
```python
from typing import List


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    for i, a in enumerate(numbers):
        for b in numbers[i + 1:]:
            if abs(a - b) < threshold:
                return True
    return False


print(has_close_elements([1.0, 2.0, 3.0], 0.5))
assert has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)
```'''
WRONG_2 = "```python\ndef truncate_number(number: float) -> float:\n    return number\n```"
GOOD_2 = "```python\ndef truncate_number(number: float) -> float:\n    return number % 1.0\n```"
CRASH_4 = ("```python\ndef mean_absolute_deviation(numbers):\n    return 1 / 0\n\n"
           "print(mean_absolute_deviation([1.0, 2.0]))\n```")
WRONG_2B = "```python\ndef truncate_number(number: float) -> float:\n    return number * 1\n```"
CRASH_2 = "```python\ndef truncate_number(number: float) -> float:\n    return number / 0\n```"
ANSWERS = {"HumanEval/0": [GOOD_0], "HumanEval/2": [WRONG_2, GOOD_2],
           "HumanEval/4": [CRASH_4, CRASH_4.replace("1 / 0", "2 / 0"), CRASH_4.replace("1 / 0", "3 / 0")]}


def _problems(*ids: str) -> list[dict]:
    return [PROBLEMS[i] for i in ids]


# -- no Docker -------------------------------------------------------------------------------

def test_extracts_examples_in_the_docstring_styles():
    assert extract_examples(PROBLEMS["HumanEval/0"]["prompt"], "has_close_elements") == [
        {"call": "has_close_elements([1.0, 2.0, 3.0], 0.5)", "expected": "False"},
        {"call": "has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)", "expected": "True"}]
    assert {"call": "iscube(64)", "expected": "True"} in extract_examples(PROBLEMS["HumanEval/77"]["prompt"], "iscube")
    assert {"call": "solve(150)", "expected": "'110'"} in extract_examples(PROBLEMS["HumanEval/84"]["prompt"], "solve")
    assert {"call": "maximum([4, -4, 4], 2)", "expected": "[4, 4]"} in \
        extract_examples(PROBLEMS["HumanEval/120"]["prompt"], "maximum")
    assert extract_examples(PROBLEMS["HumanEval/41"]["prompt"], "car_race_collision") == []


def test_candidate_keeps_the_function_and_drops_test_code():
    prompt, entry = PROBLEMS["HumanEval/0"]["prompt"], "has_close_elements"
    code = GOOD_0.split("```python\n")[1].split("```")[0]
    source, raw = runner.build_candidate([code], prompt, entry)
    assert raw == code
    assert "print(" not in source and "assert" not in source and "def has_close_elements" in source
    assert source.startswith("from typing import List")


def test_candidate_from_a_body_only_reply_and_prompt_helpers():
    source, _ = runner.build_candidate(["    return number % 1.0\n"], PROBLEMS["HumanEval/2"]["prompt"],
                                       "truncate_number")
    ns, error = runner.load_solution(source)
    assert error is None and ns["truncate_number"](3.5) == 0.5
    p10 = PROBLEMS["HumanEval/10"]
    source, _ = runner.build_candidate(["def make_palindrome(string):\n    return string if is_palindrome(string) "
                                        "else string + string[::-1][1:]\n"], p10["prompt"], p10["entry_point"])
    assert "def is_palindrome" in source  # the prompt's helper is supplied
    assert runner.build_candidate(["print('no function')"], p10["prompt"], p10["entry_point"]) == (None, None)


def test_stats_helpers():
    lo, hi = wilson(7, 10)
    assert 0.39 < lo < 0.40 and 0.89 < hi < 0.90
    assert paired_bootstrap([1] * 10) == (1.0, 1.0)
    lo, hi = paired_bootstrap([1, 0, 0, -1, 1, 0, 1, 0, 0, 0])
    assert lo < 0.2 < hi
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(8, 0) == pytest.approx(2 / 256)
    rows = [{"task_id": f"t{i}", "mode": m, "passed": p, "runs_ok": True, "visible_ok": p, "repair_iterations": 1,
             "turns": 2, "seconds": 1.0, "exec": "ok", "hidden": "passed" if p else "wrong_answer"}
            for i, (m, p) in enumerate([("single", False), ("loop", True)])]
    rows[1]["task_id"] = "t0"
    s = summarize(rows)
    assert s["paired"]["fixed_by_loop"] == ["t0"] and s["paired"]["difference"] == 1.0


# -- real sandbox ----------------------------------------------------------------------------

@pytest.mark.docker
def test_docstring_examples_agree_with_reference_solutions(sandbox_image, tmp_path):
    problems = list(PROBLEMS.values())
    executor = make_executor(SandboxConfig(image=sandbox_image, timeout=60), tmp_path, "he-validate-test")
    try:
        executor.start()
        verdicts = validated_examples(problems, executor)
    finally:
        executor.stop()
    kept = sum(len(v["examples"]) for v in verdicts.values())
    with_examples = sum(1 for v in verdicts.values() if v["examples"])
    assert kept >= 400 and with_examples >= 150
    assert verdicts["HumanEval/47"]["dropped"]  # its docstring's median example is wrong: never fed back


@pytest.fixture
def bench_out(tmp_path: Path) -> Path:
    return tmp_path / "bench"


def _scripted(problem: dict, mode: str) -> dict:
    replies = ANSWERS[problem["task_id"]]
    return {"provider": "scripted", "replies": replies[:1] if mode == "single" else replies}


@pytest.mark.docker
def test_both_modes_score_pass_fail_and_crash(sandbox_image, bench_out):
    cfg = BenchConfig(mode="both", max_auto_reply=2, out=bench_out, separate_single=True, attempts=1)
    summary = run_bench(QUIET, cfg, model_for=_scripted,
                        problems=_problems("HumanEval/0", "HumanEval/2", "HumanEval/4"))
    rec = {(r["task_id"], r["mode"]): r for r in read_records(bench_out)}
    assert len(rec) == 6

    good = rec["HumanEval/0", "single"]
    assert good["passed"] and good["runs_ok"] and good["visible_ok"] and good["turns"] == 1
    wrong = rec["HumanEval/2", "single"]
    assert not wrong["passed"] and wrong["hidden"] == "wrong_answer" and wrong["runs_ok"]
    assert wrong["visible_passed"] == 0 and wrong["visible_total"] == 1
    crash = rec["HumanEval/4", "single"]
    assert not crash["passed"] and crash["exec"] == "error" and not crash["runs_ok"]
    assert "ZeroDivisionError" in crash["exec_error"] and crash["hidden"] == "exception"

    fixed = rec["HumanEval/2", "loop"]
    assert fixed["passed"] and fixed["turns"] == 2 and fixed["repair_iterations"] == 1
    assert fixed["ended_by"] == "visible_pass" and fixed["first_passed"] is False
    still = rec["HumanEval/4", "loop"]
    assert not still["passed"] and still["status"] == "max_replies" and still["turns"] == 3
    assert rec["HumanEval/0", "loop"]["turns"] == 1  # the examples passed at once: no extra turn

    # single really is one assistant turn: its code runs, but the model is never asked again
    single = load_transcript(good["run_dir"])["messages"]
    assert [m["role"] for m in single] == ["task", "assistant", "execution"]

    p = summary["paired"]
    assert p["n"] == 3 and p["fixed_by_loop"] == ["HumanEval/2"] and p["broken_by_loop"] == []
    assert summary["single"]["pass_at_1"] == pytest.approx(1 / 3, abs=1e-3)
    assert summary["loop"]["pass_at_1"] == pytest.approx(2 / 3, abs=1e-3)
    assert summary["single"]["esr"] == pytest.approx(2 / 3, abs=1e-3)
    assert summary["loop"]["ari"] == pytest.approx(0.5)
    assert json.loads((bench_out / "summary.json").read_text())["paired"]["n"] == 3


@pytest.mark.docker
def test_hidden_tests_never_reach_the_assistant(sandbox_image, bench_out):
    cfg = BenchConfig(mode="loop", max_auto_reply=2, out=bench_out)
    run_bench(QUIET, cfg, model_for=_scripted, problems=_problems("HumanEval/2", "HumanEval/4"))
    for record in read_records(bench_out):
        problem = PROBLEMS[record["task_id"]]
        messages = load_transcript(record["run_dir"])["messages"]
        assert any(m["role"] == "execution" for m in messages)  # feedback was given
        text = "\n".join(m.get("content") or "" for m in messages)
        asserts = [ln.strip() for ln in problem["test"].splitlines() if "assert" in ln]
        assert asserts
        for line in asserts:
            assert line not in text
            for args in re.findall(r"candidate\((.*)\)", line):
                if args not in problem["prompt"]:
                    assert args not in text, f"hidden input {args!r} reached the conversation"
        assert "def check(" not in text and "METADATA" not in text
        run_files = [p for p in Path(record["run_dir"]).rglob("*.py")]
        assert not any("def check(candidate)" in p.read_text() for p in run_files)


@pytest.mark.docker
def test_a_fresh_attempt_is_chosen_by_the_visible_examples(sandbox_image, bench_out):
    # one scripted model for the whole run: attempt 1 (2 turns), attempt 2 (2 turns), attempt 3 (1 turn)
    replies = [WRONG_2, WRONG_2B, CRASH_2, CRASH_2.replace("/ 0", "/ 0.0 / 0"), GOOD_2]
    cfg = BenchConfig(mode="loop", max_auto_reply=1, attempts=3, out=bench_out)
    run_bench(QUIET, cfg, model_for=lambda p, m: {"provider": "scripted", "replies": replies},
              problems=_problems("HumanEval/2"))
    (record,) = read_records(bench_out)
    assert record["passed"] and record["attempts"] == 3 and record["chosen"] == "a3_t1"
    assert record["turns"] == 2 + 2 + 1 and record["repeated_turns"] == 0
    assert record["first_passed"] is False and record["greedy_passed"] is False
    t = load_transcript(record["run_dir"])
    assert t["chosen_attempt"] == 3 and [a["status"] for a in t["attempts"]] == ["max_replies", "max_replies",
                                                                                   "success"]


@pytest.mark.docker
def test_a_resent_function_is_reasked_not_rerun(sandbox_image, bench_out):
    cfg = BenchConfig(mode="loop", max_auto_reply=2, attempts=1, out=bench_out, strategy={"repeat_reasks": 1})
    run_bench(QUIET, cfg, model_for=lambda p, m: {"provider": "scripted", "replies": [WRONG_2, WRONG_2, GOOD_2]},
              problems=_problems("HumanEval/2"))
    (record,) = read_records(bench_out)
    assert record["passed"] and record["rejected_repeats"] == 1 and record["turns"] == 2
    feedback = [m["content"] for m in load_transcript(record["run_dir"])["messages"] if m["role"] == "execution"]
    assert len(feedback) == 2 and "Find the mistake" in feedback[0] and "print(" not in feedback[0]


@pytest.mark.docker
def test_shared_single_is_the_loops_first_reply_and_fresh_attempts_are_scored_apart(sandbox_image, bench_out):
    replies = [WRONG_2, WRONG_2B, CRASH_2, CRASH_2.replace("/ 0", "/ 0.0 / 0"), GOOD_2]
    calls = []

    def model_for(problem, mode):
        calls.append(mode)
        return {"provider": "scripted", "replies": replies}

    cfg = BenchConfig(mode="both", max_auto_reply=1, attempts=3, out=bench_out)
    summary = run_bench(QUIET, cfg, model_for=model_for, problems=_problems("HumanEval/2"))
    assert calls == ["loop"]  # the single pass is not generated a second time
    rec = {r["mode"]: r for r in read_records(bench_out)}
    single, loop = rec["single"], rec["loop"]
    assert single["shared_first_turn"] and single["turns"] == 1 and not single["passed"]
    assert single["hidden"] == "wrong_answer" and single["first_reply_sha"] == loop["first_reply_sha"]
    assert loop["passed"] and loop["attempts"] == 3 and loop["chosen"] == "a3_t1"
    assert loop["greedy_passed"] is False and loop["greedy_chosen"].startswith("a1_")
    p = summary["paired"]
    assert p["single_from_loop_first_reply"] and p["fixed_by_loop"] == ["HumanEval/2"]
    assert p["first_attempt_pass_at_1"] == 0 and p["fresh_attempts_fixed"] == 1 and p["fresh_attempts_broke"] == 0
    assert p["first_attempt_minus_single"] == 0


@pytest.mark.docker
def test_with_candidates_the_single_pass_is_generated_on_its_own_and_the_loop_keeps_the_best(sandbox_image, bench_out):
    calls = []

    def model_for(problem, mode):
        calls.append(mode)
        return {"provider": "scripted", "replies": [WRONG_2, GOOD_2] if mode == "loop" else [WRONG_2]}

    cfg = BenchConfig(mode="both", max_auto_reply=1, attempts=1, out=bench_out, strategy={"candidates": 2})
    run_bench(QUIET, cfg, model_for=model_for, problems=_problems("HumanEval/2"))
    assert calls == ["loop", "single"]  # the batched greedy candidate is not passed off as the single pass
    rec = {r["mode"]: r for r in read_records(bench_out)}
    assert rec["loop"]["passed"] and rec["loop"]["turns"] == 1  # the second candidate passed the examples
    assert not rec["single"]["passed"] and not rec["single"].get("shared_first_turn")


@pytest.mark.docker
def test_shared_single_is_the_greedy_reply_even_when_it_was_cut_and_reasked(sandbox_image, bench_out):
    cut_wrong = "```python\ndef truncate_number(number: float) -> float:\n    return number"
    cfg = BenchConfig(mode="both", max_auto_reply=1, attempts=1, out=bench_out)
    run_bench(QUIET, cfg, model_for=lambda p, m: {"provider": "scripted", "replies": [cut_wrong, GOOD_2]},
              problems=_problems("HumanEval/2"))
    rec = {r["mode"]: r for r in read_records(bench_out)}
    assert not rec["single"]["passed"] and rec["loop"]["passed"]  # the sampled re-ask is not the single pass
    assert rec["loop"]["rejected_cut"] == 1


@pytest.mark.docker
def test_the_team_runs_the_loop_and_its_roles_and_metrics_are_recorded(sandbox_image, bench_out):
    plan = "1. Return the decimal part of the number."
    cfg = BenchConfig(mode="loop", max_auto_reply=2, out=bench_out, attempts=1, team=True)
    summary = run_bench(QUIET, cfg, problems=_problems("HumanEval/2"), model_for=lambda p, m: {
        "provider": "scripted", "replies": [plan, WRONG_2, "It returns the whole number.", GOOD_2]})
    [record] = read_records(bench_out)
    assert record["passed"] and record["turns"] == 2 and record["repair_iterations"] == 1  # the developer's turns
    assert record["metrics"]["setup"] == "team" and record["metrics"]["refinements"] == 1
    t = load_transcript(record["run_dir"])
    assert [m["role"] for m in t["messages"]] == ["planner", "task", "assistant", "execution", "qa", "assistant",
                                                 "execution"]
    assert "- hypothesis: It returns the whole number." in t["messages"][4]["content"]
    assert json.loads((bench_out / "meta.json").read_text())["team"] is True
    assert summary["loop"]["metrics"]["execution_success_rate"] == 1.0
    with pytest.raises(BadInputError, match="--team with --mode both"):
        run_bench(QUIET, BenchConfig(mode="both", out=bench_out, team=True))
    with pytest.raises(BadInputError, match="team=True"):  # a pair run may not resume into the team's results
        run_bench(QUIET, BenchConfig(mode="loop", max_auto_reply=2, out=bench_out, attempts=1, resume=True),
                  problems=_problems("HumanEval/2"))


def test_choose_prefers_a_candidate_that_passes_the_examples():
    from agents.bench.humaneval.score import Candidate, choose

    a = Candidate("a", ["x"], "s1", "x", {"visible_ok": False, "visible_passed": 1, "runs_ok": True})
    b = Candidate("b", ["y"], "s2", "y", {"visible_ok": True, "visible_passed": 2, "runs_ok": True})
    c = Candidate("c", ["z"], "s3", "z", {"visible_ok": False, "visible_passed": 1, "runs_ok": True})
    assert choose([a, b, c]) is b
    assert choose([a, c]) is c  # a tie goes to the later (more repaired) candidate


@pytest.mark.docker
def test_resume_skips_finished_problems(sandbox_image, bench_out):
    cfg = BenchConfig(limit=1, offset=0, mode="single", out=bench_out)
    answers = {"provider": "scripted", "replies": [GOOD_0]}
    run_bench(QUIET, cfg, model_for=lambda p, m: answers)
    with pytest.raises(BadInputError):
        run_bench(QUIET, cfg, model_for=lambda p, m: answers)
    cfg.resume = True
    run_bench(QUIET, cfg, model_for=lambda p, m: answers)
    assert len(read_records(bench_out)) == 1
    cfg.max_auto_reply = 5
    cfg.mode = "loop"
    with pytest.raises(BadInputError):
        run_bench(QUIET, cfg, model_for=lambda p, m: answers)


def bench_cli(tmp_path: Path, reply: str) -> Any:
    """`run.py bench humaneval ARGS` as a subprocess, with a configs/llm.yaml whose default model `good` is scripted
    to send `reply`."""
    import yaml

    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "llm.yaml").write_text(yaml.safe_dump({"default": "good", "models": {
        "good": {"provider": "scripted", "replies": [reply]}}}))
    env = {"CODEDUET_CONFIGS": str(configs), "CODEDUET_WORKSPACES": str(tmp_path / "ws")}
    return lambda *args: run_cli("bench", "humaneval", *args, env=env)


@pytest.mark.docker
def test_cli_runs_a_named_model(sandbox_image, tmp_path):
    out = tmp_path / "out"
    proc = bench_cli(tmp_path, GOOD_0)("--limit", "1", "--mode", "both", "--model", "good", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "pass@1" in proc.stdout
    records = read_records(out)
    assert sorted(r["mode"] for r in records) == ["loop", "single"] and all(r["passed"] for r in records)
    assert json.loads((out / "meta.json").read_text())["model"] == "good"
    assert IMAGE  # the scenario used the default, locally built image


@pytest.mark.docker
def test_cli_only_and_strategy_overrides(sandbox_image, tmp_path):
    bench = bench_cli(tmp_path, GOOD_2)
    out = tmp_path / "out"
    proc = bench("--only", "2", "--mode", "loop", "--strategy", "prose_reply=reask", "--strategy", "attempts=2",
                 "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert [r["task_id"] for r in read_records(out)] == ["HumanEval/2"]
    meta = json.loads((out / "meta.json").read_text())
    assert meta["only"] == [2] and meta["loop_strategy"]["prose_reply"] == "reask"
    assert meta["loop_strategy"]["attempts"] == 2
    bad = bench("--only", "2", "--strategy", "prose_reply=maybe", "--out", str(tmp_path / "bad"))
    assert bad.returncode == 2 and "strategy.prose_reply" in bad.stderr, bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    assert bench("--only", "two", "--out", str(tmp_path / "bad2")).returncode == 2
    outside = bench("--only", "2", "--offset", "3", "--out", str(tmp_path / "bad3"))
    assert outside.returncode == 2 and "--only 2: not among the selected problems" in outside.stderr, outside.stderr
    assert not (tmp_path / "bad").exists() and not (tmp_path / "bad3").exists()  # no output folder left behind
