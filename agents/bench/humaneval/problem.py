"""One HumanEval problem in one mode: run its scenario through the product's strategy, pick the answer by visible
evidence, score it with the hidden tests, and return its JSONL record."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any, Callable

from agents.bench.humaneval.scenario import build_scenario, problem_number, scoring_sandbox, slug
from agents.bench.humaneval.score import Candidate, Scorer, choose, python_blocks
from agents.loop.conversation import RunOptions, run_scenario
from agents.loop.errors import EnvironmentProblem
from agents.record.metrics import run_facts
from agents.record.transcript import load_transcript

ModelFor = Callable[[dict[str, Any], str], "str | dict[str, Any] | None"]
"""model_for(problem, mode) -> a model name or inline entry for that problem's run (tests: scripted)."""


def bench_strategy(mode: str, attempts: int | None, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The scenario's `strategy:` block: the product's defaults (agents.scenario.strategy_config.StrategyConfig), one
    attempt for
    single pass, and the bench's --attempts (and any other override) on top."""
    if mode == "single":
        return {"attempts": 1, "max_resamples": 0, "candidates": 1}
    return {**(overrides or {}), **({"attempts": attempts} if attempts is not None else {})}


def _ended_by(status: str, messages: list[dict[str, Any]], has_examples: bool) -> str:
    if status == "success":
        return "visible_pass" if has_examples else "ran_ok"
    last = next((m for m in reversed(messages) if m.get("role") == "assistant"), {})
    if status == "failed" and "TERMINATE" in (last.get("content") or "") and not last.get("code_blocks"):
        return "terminate"
    return status


def _turn_candidates(messages: list[dict[str, Any]], problem: dict[str, Any]) -> list[Candidate]:
    """One candidate per assistant turn with code, labelled a<attempt>_t<turn>: the extraction rule over the blocks
    its attempt has written so far."""
    out, seen = [], {}
    for m in messages:
        if m.get("role") == "assistant" and python_blocks([m]):
            attempt = m.get("attempt") or 1
            seen.setdefault(attempt, []).append(m)
            out.append(Candidate.build(f"a{attempt}_t{len(seen[attempt])}", python_blocks(seen[attempt]), problem))
    return out


def _first_reply(messages: list[dict[str, Any]], transcript: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The greedy first reply: the kept one, or the one the strategy rejected (cut off or a repeat) and re-asked,
    so the single-pass answer is never a sampled re-ask."""
    for r in (transcript or {}).get("rejected_replies") or []:
        if (r.get("attempt"), r.get("turn"), r.get("resample")) == (1, 1, 0):
            return r
    return next((m for m in messages if m.get("role") == "assistant"), None)


class _Scoring:
    """The problem's scorer plus a cache: the same code is checked once, whichever turn wrote it."""

    def __init__(self, scorer: Scorer):
        self.scorer = scorer
        self.seen: dict[Any, Candidate] = {}

    def visible(self, c: Candidate) -> Candidate:
        twin = self.seen.get((c.source, c.raw))
        if twin is None:
            self.seen[(c.source, c.raw)] = self.scorer.check_visible(c)
        else:
            c.facts.update({k: v for k, v in twin.facts.items() if k not in ("passed", "hidden")})
        return c

    def hidden(self, c: Candidate) -> Candidate:
        twin = self.seen.get((c.source, c.raw))
        if twin is not None and "passed" in twin.facts:
            c.facts.update(passed=twin.facts["passed"], hidden=twin.facts["hidden"])
        else:
            self.scorer.check_hidden(c)
            if twin is not None:
                twin.facts.update(passed=c.facts["passed"], hidden=c.facts["hidden"])
        return c


def run_mode(problem: dict[str, Any], examples: dict[str, Any], mode: str, max_auto_reply: int, out: Path,
             model: str | None, model_for: ModelFor | None = None, with_single: bool = False,
             attempts: int | None = None, strategy: dict[str, Any] | None = None,
             team: bool = False) -> list[dict[str, Any]]:
    """Run, choose, score: the records of one (problem, mode).

    The loop is the product's own strategy (agents/loop/strategy.py) set by the scenario's `strategy:` block: greedy
    first
    reply, sampled repair turns, repeats re-asked, fresh attempts until the docstring examples pass.
    with_single (loop only): also return the single-pass record, scored from the loop's first reply. The first
    request is the same as a single run's (same system message, task and model; greedy decoding), so this is
    the single-pass answer without generating it twice. Not when the first turn had several candidates: decoded
    in a batch, its greedy one is not bit-identical to a lone greedy reply, so no single record is returned and
    the caller runs the single pass on its own."""
    folder = out / "scenarios" / slug(problem["task_id"])
    visible = examples["examples"]
    limit = 0 if mode == "single" else max_auto_reply
    inline = model_for(problem, mode) if model_for else None
    scenario = build_scenario(problem, visible, folder, max_auto_reply=limit, model=inline, variant=mode,
                              strategy=bench_strategy(mode, attempts, strategy))
    with Scorer(problem, visible, out / "scoring" / slug(problem["task_id"]) / mode, scoring_sandbox(),
                f"he-score-{os.getpid()}-{time.time_ns() % 10**8}") as scorer:
        scoring = _Scoring(scorer)
        started = time.perf_counter()
        result = run_scenario(scenario, RunOptions(model=None if inline is not None else model,
                                                   max_auto_reply=limit, human="never", team=team,
                                                   workspaces=out / "runs" / mode))
        run_seconds = time.perf_counter() - started
        if isinstance(result.error, EnvironmentProblem):
            raise result.error
        transcript = load_transcript(result.run_dir)
        messages = transcript["messages"]
        started_score = time.perf_counter()
        if mode == "single":  # scored as is: the first reply's code, whatever it is
            candidates = [scoring.visible(Candidate.build("single", python_blocks(messages), problem))]
        else:
            candidates = [scoring.visible(c) for c in _turn_candidates(messages, problem)] or \
                [scoring.visible(Candidate.build("none", [], problem))]
        final = scoring.hidden(choose(candidates))
        first = scoring.hidden(candidates[0])
        greedy = [c for c in candidates if c.label.startswith("a1_")]
        greedy_final = scoring.hidden(choose(greedy)) if greedy and len(result.attempts) > 1 else None
        greedy_none = not greedy and len(result.attempts) > 1  # attempt 1 wrote no code: it solved nothing
        single = None
        batched_first = any((c.get("attempt"), c.get("turn"), c.get("resample")) == (1, 1, None)
                            for c in transcript.get("candidates") or [])
        if with_single and mode == "loop" and not batched_first:  # (several candidates: the caller runs single)
            reply = _first_reply(messages, transcript)
            single = scoring.hidden(scoring.visible(Candidate.build("single", python_blocks([reply] if reply else []),
                                                                    problem)))
        score_seconds = time.perf_counter() - started_score
    run = {"result": result, "messages": messages, "transcript": transcript}
    record = _record(problem, mode, final, first, run, examples, candidates, run_seconds, score_seconds)
    record["greedy_passed"] = False if greedy_none else (
        greedy_final.facts["passed"] if greedy_final is not None else final.facts["passed"])
    record["greedy_chosen"] = "none" if greedy_none else (greedy_final.label if greedy_final is not None
                                                          else final.label)
    if single is None:
        return [record]
    return [record, _single_record(problem, single, run, examples, score_seconds)]


def _facts(c: Candidate) -> dict[str, Any]:
    f = c.facts
    return {"passed": f["passed"], "hidden": f["hidden"], "visible_passed": f["visible_passed"],
            "visible_total": f["visible_total"], "visible_ok": f["visible_ok"],
            "visible_failures": f.get("visible_failures") or [], "runs_ok": f["runs_ok"], "exec": f["exec"],
            "exec_error": f.get("exec_error")}


def _sha(message: dict[str, Any] | None) -> str | None:
    return hashlib.sha256((message.get("content") or "").encode()).hexdigest()[:16] if message else None


def _record(problem: dict[str, Any], mode: str, final: Candidate, first: Candidate, run: dict[str, Any],
            examples: dict[str, Any], candidates: list[Candidate], seconds: float,
            score_seconds: float) -> dict[str, Any]:
    messages, result, transcript = run["messages"], run["result"], run["transcript"]
    assistant = [m for m in messages if m.get("role") == "assistant"]
    usage = [m.get("usage") or {} for m in [*assistant, *(transcript.get("rejected_replies") or [])]]
    code_turns = sum(1 for m in assistant if python_blocks([m]))
    sources = [c.source for c in candidates if c.source is not None]
    visible = examples["examples"]
    totals = result.totals
    return {
        "task_id": problem["task_id"], "index": problem_number(problem), "mode": mode,
        **_facts(final), "turns": len(assistant), "code_turns": code_turns,
        "repair_iterations": max(0, code_turns - 1), "attempts": len(result.attempts) or 1,
        "chosen": final.label, "repeated_turns": sum(1 for i, s in enumerate(sources) if s in sources[:i]),
        "rejected_repeats": totals.get("rejected_repeats", 0), "rejected_cut": totals.get("rejected_cut", 0),
        "rejected_no_code": totals.get("rejected_no_code", 0),
        "blocked_repeats": totals.get("blocked_repeats", 0),
        "first_passed": first.facts.get("passed"), "first_visible_ok": first.facts.get("visible_ok"),
        "tokens_in": totals.get("prompt_tokens", 0), "tokens_out": totals.get("completion_tokens", 0),
        "tokens_in_evaluated": sum((u.get("extra") or {}).get("prompt_eval_tokens") or 0 for u in usage),
        "max_prompt_tokens": max([u.get("prompt_tokens") or 0 for u in usage], default=0),
        "seconds": round(seconds, 3), "score_seconds": round(score_seconds, 3),
        "status": result.status, "reason": result.reason,
        "ended_by": "single" if mode == "single" else _ended_by(result.status, messages, bool(visible)),
        "first_reply_sha": _sha(_first_reply(messages, transcript)),
        "examples": len(visible), "examples_dropped": len(examples.get("dropped") or []),
        "run_dir": str(result.run_dir), "metrics": run_facts(transcript),
    }


def _single_record(problem: dict[str, Any], single: Candidate, run: dict[str, Any], examples: dict[str, Any],
                   score_seconds: float) -> dict[str, Any]:
    """The single-pass record taken from the loop's first reply (seconds: that reply's generation time)."""
    reply = _first_reply(run["messages"], run["transcript"])
    usage = (reply or {}).get("usage") or {}
    return {
        "task_id": problem["task_id"], "index": problem_number(problem), "mode": "single",
        **_facts(single), "turns": 1 if reply else 0, "code_turns": 1 if reply and python_blocks([reply]) else 0,
        "repair_iterations": 0, "attempts": 1, "chosen": "single", "repeated_turns": 0,
        "first_passed": single.facts["passed"], "first_visible_ok": single.facts["visible_ok"],
        "tokens_in": usage.get("prompt_tokens") or 0, "tokens_out": usage.get("completion_tokens") or 0,
        "tokens_in_evaluated": (usage.get("extra") or {}).get("prompt_eval_tokens") or 0,
        "max_prompt_tokens": usage.get("prompt_tokens") or 0,
        "seconds": round(usage.get("seconds") or 0.0, 3), "score_seconds": round(score_seconds, 3),
        "status": "single_turn", "reason": "the loop's first reply, scored as is", "ended_by": "single",
        "first_reply_sha": _sha(reply), "shared_first_turn": True,
        "examples": len(examples["examples"]), "examples_dropped": len(examples.get("dropped") or []),
        "run_dir": str(run["result"].run_dir),
    }
