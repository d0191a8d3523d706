"""Candidates: several replies for a turn, each run in its own fresh sandbox, the best one kept
(agents/loop/candidates.py).
Real AG2 conversations with the scripted model (which returns its next N replies for N candidates); the loop on the
local executor, and the isolation between candidates in real Docker containers."""

from __future__ import annotations

import json

import pytest

from agents.feedback.feedback import Outcome
from agents.loop.candidates import Candidate, choose, count_agreement, output_key
from agents.loop.conversation import RunOptions, run_scenario
from agents.loop.protocols import ExecResult
from agents.models.config import build_provider
from agents.record.transcript import load_transcript
from agents.scenario.spec import load_scenario
from tests.conftest import py


def events(run_dir, kind: str) -> list[dict]:
    """The run's events of one kind, from events.jsonl."""
    lines = (run_dir / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("type") == kind]


def test_the_candidate_that_passes_the_checks_continues_the_conversation(loop_file, workspaces):
    wrong, crash, right = py("print(6 * 7 + 1)"), py("print(1 / 0)"), py("print(6 * 7)")
    path = loop_file([wrong, crash, right, "never asked"], checks=[{"stdout_contains": "42"}],
                     strategy={"candidates": 3})
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    t = load_transcript(result.run_dir)
    assert [m["role"] for m in t["messages"]] == ["task", "assistant", "execution"]
    assert t["messages"][1]["content"] == right  # the third candidate is what the conversation continues with
    assert t["messages"][1]["sampling"]["candidate"] == 3
    found = events(result.run_dir, "candidate")
    assert [(c["index"], c["chosen"]) for c in found] == [(1, False), (2, False), (3, True)]
    assert [c["score"]["checks_passed"] for c in found] == [0, 0, 1]
    assert found[1]["outcome"]["executions"][0]["exit_code"] == 1
    for c in found:  # each ran in its own copy of the workspace, kept in the run folder
        assert (result.run_dir / c["workspace"]).is_dir()
    assert t["candidates"] and len(t["candidates"]) == 3  # the transcript keeps them too


def test_replay_and_the_html_page_show_every_candidate_collapsed_before_the_chosen_reply(loop_file, workspaces):
    import io
    import re

    from rich.console import Console

    from agents.replay.html import render_html
    from agents.replay.show import show_run

    wrong, right = py("print(41)"), py("print(42)")
    path = loop_file([wrong, right, "never asked"], checks=[{"stdout_contains": "42"}], strategy={"candidates": 2})
    t = load_transcript(run_scenario(load_scenario(path), RunOptions()).run_dir)
    out = io.StringIO()
    show_run(Console(file=out, width=200, no_color=True), t)
    text = out.getvalue()
    assert "2 candidates for attempt 1 turn 1: candidate 2 chosen" in text
    assert "candidate 1 (greedy): 0/1 checks passed" in text
    assert ("candidate 2 (temperature 0.70, seed 10151): 1/1 checks passed, it ran and every check passed "
            "(chosen)") in text
    assert text.index("candidate 2 chosen") < text.index("print(42)")  # listed before the reply that goes on
    page = render_html(t)
    group = re.search(r'<details class="candidates".*?</details></details>', page, re.DOTALL).group(0)
    assert group.count('data-role="candidate"') == 2 and 'data-chosen="True"' in group
    assert "class=\"mi\">41<" in group and "<pre class=\"output\">41" in group  # each one's code and output


def test_when_the_first_candidate_passes_every_check_the_others_are_never_generated(loop_file, workspaces):
    import io

    from rich.console import Console

    from agents.replay.show import show_run

    right, other = py("print(6 * 7)"), py("print(42)")
    path = loop_file([right, other, "TERMINATE"], checks=[{"stdout_contains": "42"}], strategy={"candidates": 4})
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    found = events(result.run_dir, "candidate")
    assert [(c["index"], c["chosen"], c["candidates"]) for c in found] == [(1, True, 4)]
    assert not (result.run_dir / "candidates" / "a1-t1-c2").exists()  # nothing else was generated or run
    out = io.StringIO()
    show_run(Console(file=out, width=200, no_color=True), load_transcript(result.run_dir))
    assert ("1 of 4 candidates for attempt 1 turn 1: candidate 1 chosen; the first passed every check, the others "
            "were not generated") in out.getvalue()


def test_without_early_stop_every_candidate_is_generated_and_agreement_chooses_among_those_that_pass(
        loop_file, workspaces):
    lone, same, same_again = py("print('42 a')"), py("print('42 b')"), py("print('42 ' + 'b')")
    path = loop_file([lone, same, same_again, "TERMINATE"], checks=[{"stdout_contains": "42"}],
                     strategy={"candidates": 3, "candidates_early_stop": False})
    result = run_scenario(load_scenario(path), RunOptions())
    found = events(result.run_dir, "candidate")
    assert [c["score"]["solved"] for c in found] == [1, 1, 1]
    assert [c["index"] for c in found if c["chosen"]] == [2]  # all pass; two printed the same: the larger cluster
    assert load_transcript(result.run_dir)["messages"][1]["content"] == same


def test_when_no_check_decides_the_largest_cluster_of_equal_outputs_wins(loop_file, workspaces):
    five, six, six_again = py("print(5)"), py("print(3 * 2)"), py("print(6)")
    path = loop_file([five, six, six_again, "TERMINATE"], strategy={"candidates": 3, "attempts": 1})
    result = run_scenario(load_scenario(path), RunOptions())
    assert load_transcript(result.run_dir)["messages"][1]["content"] == six  # 2 agree on 6; the earlier of them
    assert [c["score"]["agree"] for c in events(result.run_dir, "candidate")] == [1, 2, 2]


def test_a_candidate_that_repeats_code_that_ran_is_set_aside_without_running(loop_file, workspaces):
    first, other, again, fixed = py("print(1)"), py("print(2)"), py("print( 1 )"), py("print(42)")
    # attempt 1: two candidates fail the check, the first continues and the model gives up; attempt 2's first turn
    # has two candidates: the code attempt 1 ran, written again (set aside), and `fixed`
    path = loop_file([first, other, "TERMINATE", again, fixed, "never asked"], checks=[{"stdout_contains": "42"}],
                     strategy={"candidates": 2, "attempts": 2})
    result = run_scenario(load_scenario(path), RunOptions())
    found = [c for c in events(result.run_dir, "candidate") if c["attempt"] == 2]
    assert found[0]["rejected"] == "repeat" and "outcome" not in found[0]
    assert found[1]["chosen"] and result.status == "success", result.reason


def test_a_person_steering_gets_one_reply_a_turn(loop_file, workspaces):
    path = loop_file([py("print(42)"), py("print(43)"), "TERMINATE"], strategy={"candidates": 3},
                     checks=[{"stdout_contains": "42"}])
    answers = iter(["", "exit"])
    result = run_scenario(load_scenario(path), RunOptions(human="ALWAYS"), human=lambda prompt, proxy: next(answers))
    assert not events(result.run_dir, "candidate")  # nothing runs that the person did not approve


HIDDEN = """from sol import f


def test_one():
    assert f(1) == 1


def test_two():
    assert f(2) == 4


def test_three():
    assert f(3) == 9
"""


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_among_candidates_that_fail_the_same_pytest_check_the_one_passing_most_of_its_tests_wins(
        loop_file, workspaces, tmp_path):
    (tmp_path / "test_hidden.py").write_text(HIDDEN)

    def sol(body: str) -> str:
        return py(f"# filename: sol.py\ndef f(x):\n    return {body}\n")

    one, two, none = sol("x"), sol("x * x if x < 3 else 0"), sol("-1")  # 1, 2 and 0 of the 3 tests pass
    path = loop_file([one, two, none, "TERMINATE"], checks=[{"pytest": "test_hidden.py"}],
                     strategy={"candidates": 3}, user_proxy={"max_consecutive_auto_reply": 1})
    result = run_scenario(load_scenario(path), RunOptions())
    found = events(result.run_dir, "candidate")
    assert [(c["score"]["checks_passed"], c["score"]["tests_passed"], c["score"]["tests"]) for c in found] == \
        [(0, 1, 3), (0, 2, 3), (0, 0, 3)]
    assert [c["chosen"] for c in found] == [False, True, False]  # same checks passed: the most tests wins
    t = load_transcript(result.run_dir)
    assert t["messages"][1]["content"] == two
    report = t["messages"][2]["content"]  # every failing test is named, with why
    assert "1 of 3 tests failed: test_three\ntest_three:\n" in report and "assert 0 == 9" in report


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_first_reply_that_sends_the_given_file_back_unchanged_moves_the_candidates_to_the_next_turn(
        loop_file, workspaces, tmp_path):
    """The 1.5B model sends the given files back unchanged in about half its first replies to a fix-this-file task
    (fix_median: 2 of 4 candidates, logsum_level_option: 4 of 4). Candidates asked with that same prompt mostly
    echo too, so after an echo they are asked at turn 2, where the report says what the checks found."""
    import io

    from rich.console import Console

    from agents.replay.html import render_html
    from agents.replay.show import show_run

    (tmp_path / "test_hidden.py").write_text("from sol import f\n\n\ndef test_f():\n    assert f(4) == 16\n")
    given = "def f(x):\n    return x + x\n"

    def sol(body: str) -> str:
        return py(f"# filename: sol.py\ndef f(x):\n    return {body}\n")

    echo, wrong, right = sol("x + x"), sol("x * 3"), sol("x * x")
    path = loop_file([echo, wrong, right, "never asked"], files={"sol.py": given},
                     task="Fix f() in sol.py: f(x) must be x squared.", checks=[{"pytest": "test_hidden.py"}],
                     strategy={"candidates": 2})
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    found = events(result.run_dir, "candidate")
    assert [(c["turn"], c["index"], c.get("deferred"), c["chosen"]) for c in found] == [
        (1, 1, 2, True), (2, 1, None, False), (2, 2, None, True)]
    t = load_transcript(result.run_dir)
    assert [m["role"] for m in t["messages"]] == ["task", "assistant", "execution", "assistant", "execution"]
    assert t["messages"][1]["content"] == echo and t["messages"][3]["content"] == right
    assert "assert 8 == 16" in t["messages"][2]["content"]  # turn 2 is asked with what the checks say of the given f
    out = io.StringIO()
    show_run(Console(file=out, width=220, no_color=True), t)
    label = ("1 of 2 candidates for attempt 1 turn 1: candidate 1 chosen; the first sent the given files back "
             "unchanged, so turn 2 got the candidates instead, after its report")
    assert label in out.getvalue() and label in render_html(t)
    assert found[1]["sampling"]["temperature"] == 0.7  # turn 2's own reply is a repair turn's: sampled
    # with the reply limit at 0 there is no turn 2: the candidates stay on turn 1
    path = loop_file([echo, right, "never asked"], name="limit0", files={"sol.py": given},
                     task="Fix f() in sol.py: f(x) must be x squared.", checks=[{"pytest": "test_hidden.py"}],
                     strategy={"candidates": 2}, user_proxy={"max_consecutive_auto_reply": 0})
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    assert [(c["turn"], c["index"], c.get("deferred")) for c in events(result.run_dir, "candidate")] == [
        (1, 1, None), (1, 2, None)]


def test_an_echo_is_a_reply_that_saves_files_each_already_holding_that_content(tmp_path):
    from agents.loop.repeats import RepeatMemory

    (tmp_path / "sol.py").write_text('"""Doc."""\ndef f(x):\n    return x + x\n')
    memory = RepeatMemory()
    memory.begin(tmp_path)
    same = "```python\n# filename: sol.py\n# a comment and no docstring\ndef f(x):\n    return x+x\n```"
    assert memory.echoes(same) == ["sol.py"]
    assert memory.echoes(same + "\n```sh\npython -m pytest -q\n```") == ["sol.py"]  # it only runs what was there
    assert memory.echoes(same.replace("x+x", "x*x")) == []
    assert memory.echoes(same + "\n```python\n# filename: new.py\nprint(1)\n```") == []  # a new file changes
    assert memory.echoes(py("print(1)")) == [] and memory.echoes("no code") == []
    assert memory.find(same) is None  # nothing ran yet: the given files were never checked, so it runs
    run_tests = "```sh\npython -m pytest -q\n```"  # in a task about files, a repeated test run is asked for the file
    for files_task, asked in ((False, "the complete new script in one ```python block"),
                              (True, "the whole corrected file in a ```python block whose first line is `# filename:")):
        memory.begin(tmp_path, files_task)
        memory.remember(run_tests, 1, 2, "it ran, but 1 of 1 checks failed")
        assert asked in memory.find(run_tests).feedback(reask=True)


def test_a_reply_that_repeats_is_asked_again_as_several_candidates_and_the_best_one_goes_on(loop_file, workspaces):
    import io

    from rich.console import Console

    from agents.replay.show import show_run

    one, two, right = py("print(1)"), py("print(2)"), py("print(42)")
    path = loop_file([one, one, one, two, right, "never asked"], checks=[{"stdout_contains": "42"}],
                     strategy={"candidates": 1, "reask_candidates": 3, "repeat_reasks": 1})
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    t = load_transcript(result.run_dir)
    (rejected,) = t["rejected_replies"]  # turn 2 repeated turn 1: the re-ask is three candidates
    assert rejected["reason"] == "repeat" and rejected["turn"] == 2
    found = events(result.run_dir, "candidate")
    assert [(c["turn"], c["resample"], c["index"], c.get("rejected"), c["chosen"]) for c in found] == \
        [(2, 1, 1, "repeat", False), (2, 1, 2, None, False), (2, 1, 3, None, True)]
    assert t["messages"][3]["content"] == right and t["messages"][3]["sampling"]["resample"] == 1
    assert len({c["sampling"]["seed"] for c in found}) == 3
    assert sorted(p.name for p in (result.run_dir / "candidates").iterdir()) == ["a1-t2-r1-c2", "a1-t2-r1-c3"]
    out = io.StringIO()
    show_run(Console(file=out, width=200, no_color=True), t)
    text = out.getvalue()
    assert "3 candidates for attempt 1 turn 2 (re-ask 1): candidate 3 chosen (1 set aside)" in text
    assert text.index("rejected repeat") < text.index("(re-ask 1)")  # in the order they happened


def test_replay_shows_each_reask_and_its_candidates_in_the_order_they_happened(loop_file, workspaces):
    from agents.replay.timeline import timeline

    one, right = py("print(1)"), py("print(42)")
    path = loop_file([one, one, one, one, right, "never asked"], checks=[{"stdout_contains": "42"}],
                     strategy={"candidates": 1, "reask_candidates": 2, "repeat_reasks": 2})
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    order = [(kind, item.get("resample") or 0) for kind, item in timeline(load_transcript(result.run_dir))
             if kind in ("candidates", "rejected")]
    assert order == [("rejected", 0), ("candidates", 1), ("rejected", 1), ("candidates", 2)]
    seeds = [c["sampling"]["seed"] for c in events(result.run_dir, "candidate")]
    assert len(seeds) == len(set(seeds)) == 3  # re-ask 1's two and re-ask 2's first, each its own seed


def test_auto_means_one_candidate_for_the_scripted_model_and_four_for_the_embedded_one(loop_file, workspaces):
    path = loop_file([py("print(42)"), "TERMINATE"], checks=[{"stdout_contains": "42"}])
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success" and not events(result.run_dir, "candidate")
    assert build_provider({"provider": "scripted", "replies": ["x"]}).default_candidates() == 1
    assert build_provider({"provider": "llama_cpp"}).default_candidates() == 4
    assert build_provider({"provider": "openai", "model": "m", "api_key_optional": True}).default_candidates() == 1


def test_choice_order_checks_then_a_clean_run_then_agreement_then_the_earlier():
    def cand(index: int, exit_code: int, output: str, passed: list[bool]) -> Candidate:
        from agents.scenario.checks import CheckResult

        outcome = Outcome("executed", results=[ExecResult(exit_code, output, 0.1)],
                          checks=[CheckResult(f"c{i}", p) for i, p in enumerate(passed)])
        return Candidate(index, f"reply {index}", {}, outcome=outcome)

    field = [cand(1, 0, "7", [True, False]), cand(2, 1, "boom", [True, True]), cand(3, 0, "7", [False, False])]
    count_agreement(field)
    assert choose(field).index == 2  # every check passed, even though its own run crashed
    field = [cand(1, 1, "x", [True, False]), cand(2, 0, "y", [True, False]), cand(3, 0, "z", [False, False])]
    count_agreement(field)
    assert choose(field).index == 2  # same checks passed: the clean run wins
    field = [cand(1, 0, "1", []), cand(2, 0, "2 ", []), cand(3, 0, "2", [])]
    count_agreement(field)
    assert choose(field).index == 2 and output_key(field[1].outcome) == output_key(field[2].outcome)
    lone = [Candidate(1, "prose", {}, rejected="no_code"), Candidate(2, "cut", {}, rejected="cut")]
    assert choose(lone).index == 1  # nothing ran: the turn's own reply goes on to be re-asked as usual


@pytest.mark.docker
def test_each_candidate_runs_in_its_own_fresh_container(scenario_file, workspaces, sandbox_image):
    # the first candidate leaves a file and a process-wide marker behind; the second must see neither
    leave = py("open('left.txt', 'w').write('x')\nimport os\nprint('left', os.getpid())")
    look = py("import os\nprint('sees left.txt' if os.path.exists('left.txt') else 'clean workspace')")
    path = scenario_file([leave, look, "TERMINATE"], files={"data.txt": "d"}, strategy={"candidates": 2,
                         "attempts": 1}, checks=[{"stdout_contains": "clean workspace"}])
    result = run_scenario(load_scenario(path), RunOptions())
    found = events(result.run_dir, "candidate")
    assert "clean workspace" in found[1]["outcome"]["executions"][0]["output"]
    assert found[1]["chosen"] and result.status == "success", result.reason
    assert (result.run_dir / found[0]["workspace"] / "left.txt").is_file()
    assert not (result.run_dir / found[1]["workspace"] / "left.txt").exists()
    assert (result.run_dir / found[1]["workspace"] / "data.txt").read_text() == "d"  # a copy of the workspace
