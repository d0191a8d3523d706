"""The turn policy (agents/loop/turn_policy.py): a repeat, a cut reply or a prose reply is re-asked, never run; a repeat
past its re-asks is answered without running; the same prose after a nudge ends the attempt. Real AG2
conversations with the scripted model on the local executor."""

from __future__ import annotations

import pytest

from agents.loop.conversation import RunOptions, run_scenario
from agents.record.transcript import load_transcript
from agents.scenario.spec import load_scenario
from tests.conftest import py
from tests.helpers import run_cli
from tests.test_strategy import BAD, BAD_REFORMATTED, GOOD, events


def test_a_resent_code_is_reasked_not_reexecuted(workspaces, loop_file):
    path = loop_file([py(BAD), py(BAD_REFORMATTED), py(GOOD)], checks=[{"stdout_contains": "3"}],
                         strategy={"attempts": 1, "repeat_reasks": 2})
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    t = load_transcript(result.run_dir)
    execs = [e for m in t["messages"] for e in (m.get("outcome") or {}).get("executions", [])]
    assert [e["exit_code"] for e in execs] == [1, 0]  # the repeat never ran
    assert t["totals"]["rejected_repeats"] == 1 and t["totals"]["blocked_repeats"] == 0
    rejected = t["rejected_replies"][0]
    assert rejected["reason"] == "repeat"
    assert rejected["content"] == py(BAD_REFORMATTED) and rejected["repeats"]["turn"] == 1
    assert rejected["turn"] == 2 and rejected["resample"] == 0
    assert [m["role"] for m in t["messages"]] == ["task", "assistant", "execution", "assistant", "execution"]
    assert GOOD in t["messages"][3]["content"]
    assert t["messages"][3]["sampling"]["resample"] == 1  # the kept reply was the re-ask
    assert any(e["type"] == "reply_rejected" for e in events(result.run_dir))  # persisted as it happened
    shown = run_cli("replay", str(result.run_dir))
    assert shown.returncode == 0 and "rejected repeat: attempt 1 turn 2" in shown.stdout, shown.stdout


def test_a_repeat_past_the_reask_budget_is_answered_without_running_and_ends_the_attempt(workspaces,
                                                                                         loop_file):
    path = loop_file([py(BAD), py(BAD), py(BAD), py(GOOD)], strategy={"attempts": 2, "repeat_reasks": 1},
                         user_proxy={"max_consecutive_auto_reply": 3})
    result = run_scenario(load_scenario(path), RunOptions())
    t = load_transcript(result.run_dir)
    repeat = t["messages"][4]
    assert repeat["role"] == "user_proxy" and repeat["outcome"]["kind"] == "repeat" \
        and not repeat["outcome"]["executions"]
    assert "not run again" in repeat["content"] and "IndexError" in repeat["content"]
    # the stuck conversation ends there; the fresh attempt succeeds
    assert t["attempts"][0]["status"] == "failed" and t["attempts"][0]["stop_reason"] == "stuck"
    assert [m["attempt"] for m in t["messages"]] == [1, 1, 1, 1, 1, 2, 2, 2]
    assert result.status == "success" and t["totals"]["executions"] == 2
    assert t["totals"]["rejected_repeats"] == 1 and t["totals"]["blocked_repeats"] == 1


def test_by_default_a_repeat_is_not_reasked_a_fresh_attempt_takes_over_at_once(workspaces, loop_file):
    # re-asking a repeat did not pay with the embedded model (docs/BENCHMARKS.md): repeat_reasks is 0
    path = loop_file([py(BAD), py(BAD_REFORMATTED), py(GOOD), "never asked"], strategy={"attempts": 2},
                     user_proxy={"max_consecutive_auto_reply": 3})
    result = run_scenario(load_scenario(path), RunOptions())
    t = load_transcript(result.run_dir)
    assert not t.get("rejected_replies")  # the repeat was not asked again
    repeat = t["messages"][4]
    assert repeat["role"] == "user_proxy" and repeat["outcome"]["kind"] == "repeat" \
        and not repeat["outcome"]["executions"]
    assert t["attempts"][0]["stop_reason"] == "stuck" and t["attempts"][0]["turns"] == 2
    assert t["attempts"][0]["reason"] == "the model sent again code that had already run (code is never run twice)"
    assert result.status == "success" and result.chosen_attempt == 2, result.reason
    assert t["totals"]["blocked_repeats"] == 1 and t["totals"]["executions"] == 2


def test_a_reply_cut_inside_its_code_block_is_reasked_from_the_clean_prompt(workspaces, loop_file):
    looping = "```python\nvalues = [3, 1, 2]\nprint(" + "values, " * 200
    path = loop_file([looping, py(GOOD)], strategy={"attempts": 1})
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    t = load_transcript(result.run_dir)
    (rejected,) = t["rejected_replies"]
    assert rejected["reason"] == "cut" and rejected["content"] == looping and "repeats" not in rejected
    assert t["totals"]["rejected_cut"] == 1 and t["totals"]["executions"] == 1
    assert "rejected cut reply" in run_cli("replay", str(result.run_dir)).stdout


@pytest.mark.parametrize("prose_reply", ["keep", "reask"])
def test_a_prose_only_reply_is_reasked_unless_a_person_steers(workspaces, loop_file, prose_reply):
    prose = "The fix is to print the largest value instead."
    path = loop_file([prose, py(GOOD)], checks=[{"stdout_contains": "3"}], strategy={"prose_reply": prose_reply})
    result = run_scenario(load_scenario(path), RunOptions())
    t = load_transcript(result.run_dir)
    assert result.status == "success" and [m["role"] for m in t["messages"]] == ["task", "assistant", "execution"]
    assert t["rejected_replies"][0]["reason"] == "no_code" and t["rejected_replies"][0]["content"] == prose
    assert t["totals"]["rejected_no_code"] == 1 and t["totals"]["rejected_repeats"] == 0
    shown = run_cli("replay", str(result.run_dir)).stdout
    assert "rejected prose reply: attempt 1 turn 1" in shown
    if prose_reply == "keep":  # the prose was kept in the re-ask, and the follow-up is on record
        assert "applying what you just wrote" in t["rejected_replies"][0]["follow_up"]
        assert "kept, and the code it describes asked for" in shown
    else:
        assert "follow_up" not in t["rejected_replies"][0] and "asked again" in shown
    steered = loop_file([prose, py(GOOD)], name="steered", checks=[{"stdout_contains": "3"}],
                            user_proxy={"human_input_mode": "TERMINATE"})
    kept = run_scenario(load_scenario(steered), RunOptions(), human=lambda prompt, proxy: "exit")
    assert not load_transcript(kept.run_dir).get("rejected_replies")  # a person may have asked for prose


def test_the_same_prose_again_after_a_nudge_ends_the_attempt_and_a_fresh_one_starts(workspaces, loop_file):
    prose = "The route printing is wrong; I will print the whole route."
    path = loop_file([prose, prose, prose, prose, py(GOOD)], checks=[{"stdout_contains": "3"}],
                         strategy={"attempts": 2, "max_resamples": 1})
    result = run_scenario(load_scenario(path), RunOptions())
    t = load_transcript(result.run_dir)
    assert result.status == "success" and result.reason.startswith("attempt 2 of 2"), result.reason
    first = t["attempts"][0]
    assert first["status"] == "failed" and first["stop_reason"] == "prose_loop", first
    assert first["reason"] == "the model kept answering without code, the same text again after a nudge"
    kinds = [(m["outcome"] or {}).get("kind") for m in t["messages"] if m["attempt"] == 1 and m.get("outcome")]
    assert kinds == ["no_code", "no_code"]  # one nudge, then the same text again: no third round
