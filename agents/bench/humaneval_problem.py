"""One HumanEval problem in one mode: run the scenario (and, for the loop, sampled restarts), pick the answer by
visible evidence, score it with the hidden tests, and return its JSONL record."""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from agents.bench.humaneval_scenario import build_scenario, scoring_sandbox, slug
from agents.bench.humaneval_score import Candidate, Scorer, choose, python_blocks
from agents.conversation import RunOptions, run_scenario
from agents.errors import EnvironmentProblem
from agents.transcript import load_transcript

ModelFor = Callable[[dict[str, Any], str, int], "str | dict[str, Any] | None"]
"""model_for(problem, mode, attempt) -> a model name or inline entry for that scenario (tests: scripted)."""


@dataclass
class Strategy:
    """How the loop mode spends its budget."""

    max_auto_reply: int = 3
    """Feedback rounds per conversation."""
    restarts: int = 0
    """Fresh conversations with a sampled model after the greedy one fails its docstring examples."""
    temperature: float = 0.7
    """Sampling temperature of the restarts."""
    top_p: float = 0.95
    """Nucleus cut-off of the restarts."""


def sampled_entry(name: str | None, attempt: int, strategy: Strategy) -> dict[str, Any] | None:
    """An inline copy of the configs/llm.yaml entry with sampling on and its own seed (None: cannot sample)."""
    from agents.models import provider_class
    from agents.models.config import load_models_file

    models, _, _ = load_models_file()
    entry = dict(models.models.get(name or models.default) or {})
    if not entry:
        return None
    fields = provider_class(str(entry.get("provider"))).Config.model_fields
    if "temperature" not in fields:
        return None
    entry["temperature"] = strategy.temperature
    if "top_p" in fields:
        entry["top_p"] = strategy.top_p
    if "seed" in fields:
        entry["seed"] = attempt
    return {"name": f"{name or models.default}-sample{attempt}", **entry}


def _ended_by(status: str, messages: list[dict[str, Any]], has_examples: bool) -> str:
    if status == "success":
        return "visible_pass" if has_examples else "ran_ok"
    last = next((m for m in reversed(messages) if m.get("role") == "assistant"), {})
    if status == "failed" and "TERMINATE" in (last.get("content") or "") and not last.get("code_blocks"):
        return "terminate"
    return status


def _turn_candidates(label: str, messages: list[dict[str, Any]], problem: dict[str, Any]) -> list[Candidate]:
    """One candidate per assistant turn with code: the extraction rule over the blocks written so far."""
    out, seen = [], []
    for m in messages:
        if m.get("role") == "assistant" and python_blocks([m]):
            seen.append(m)
            out.append(Candidate.build(f"{label}_t{len(seen)}", python_blocks(seen), problem))
    return out


def run_mode(problem: dict[str, Any], examples: dict[str, Any], mode: str, strategy: Strategy, out: Path,
             model: str | None, model_for: ModelFor | None = None) -> dict[str, Any]:
    """Run, choose, score; the record of one (problem, mode)."""
    folder = out / "scenarios" / slug(problem["task_id"])
    visible = examples["examples"]
    limit = 0 if mode == "single" else strategy.max_auto_reply
    attempts = 1 if mode == "single" else 1 + strategy.restarts
    started = time.perf_counter()
    runs: list[dict[str, Any]] = []
    candidates: list[Candidate] = []
    for attempt in range(attempts):
        inline = model_for(problem, mode, attempt) if model_for else (
            None if attempt == 0 else sampled_entry(model, attempt, strategy))
        if attempt > 0 and inline is None and model_for is None:
            break  # this model cannot sample: no restarts
        scenario = build_scenario(problem, visible, folder, max_auto_reply=limit, model=inline,
                                  variant=mode if attempt == 0 else f"{mode}-sample{attempt}")
        result = run_scenario(scenario, RunOptions(model=None if inline is not None else model,
                                                   max_auto_reply=limit, human="never",
                                                   workspaces=out / "runs" / mode))
        if isinstance(result.error, EnvironmentProblem):
            raise result.error
        messages = load_transcript(result.run_dir)["messages"]
        runs.append({"result": result, "messages": messages, "attempt": attempt})
        candidates += _turn_candidates(f"a{attempt}", messages, problem)
        if result.status == "success":
            break
    seconds = time.perf_counter() - started
    started_score = time.perf_counter()
    if mode == "single":  # scored as is: the first reply's code, whatever it is
        candidates = [Candidate.build("single", python_blocks(runs[0]["messages"]), problem)]
    elif not candidates:
        candidates = [Candidate.build("none", [], problem)]
    with Scorer(problem, visible, out / "scoring" / slug(problem["task_id"]) / mode, scoring_sandbox(),
                f"he-score-{os.getpid()}-{time.time_ns() % 10**8}") as scorer:
        by_source: dict[Any, Candidate] = {}
        for c in candidates:
            twin = by_source.get((c.source, c.raw))
            if twin is not None:
                c.facts = dict(twin.facts)
            else:
                by_source[(c.source, c.raw)] = scorer.check_visible(c)
        final = choose(candidates)
        scorer.check_hidden(final)
        first = candidates[0]
        if (first.source, first.raw) == (final.source, final.raw):
            first.facts.update(passed=final.facts["passed"], hidden=final.facts["hidden"])
        else:
            scorer.check_hidden(first)
    assistant = [m for r in runs for m in r["messages"] if m.get("role") == "assistant"]
    usage = [m.get("usage") or {} for m in assistant]
    code_turns = sum(1 for m in assistant if python_blocks([m]))
    sources = [c.source for c in candidates if c.source is not None]
    last = runs[-1]
    f = final.facts
    return {
        "task_id": problem["task_id"], "index": int(problem["task_id"].split("/")[-1]), "mode": mode,
        "passed": f["passed"], "hidden": f["hidden"], "visible_passed": f["visible_passed"],
        "visible_total": f["visible_total"], "visible_ok": f["visible_ok"],
        "visible_failures": f.get("visible_failures") or [], "runs_ok": f["runs_ok"], "exec": f["exec"],
        "exec_error": f.get("exec_error"), "turns": len(assistant), "code_turns": code_turns,
        "repair_iterations": max(0, code_turns - 1), "attempts": len(runs),
        "chosen": final.label, "repeated_turns": sum(1 for i, s in enumerate(sources) if s in sources[:i]),
        "first_passed": first.facts.get("passed"), "first_visible_ok": first.facts.get("visible_ok"),
        "tokens_in": sum(r["result"].totals.get("prompt_tokens", 0) for r in runs),
        "tokens_out": sum(r["result"].totals.get("completion_tokens", 0) for r in runs),
        "tokens_in_evaluated": sum((u.get("extra") or {}).get("prompt_eval_tokens") or 0 for u in usage),
        "max_prompt_tokens": max([u.get("prompt_tokens") or 0 for u in usage], default=0),
        "seconds": round(seconds, 3), "score_seconds": round(time.perf_counter() - started_score, 3),
        "status": last["result"].status, "reason": last["result"].reason,
        "ended_by": "single" if mode == "single" else _ended_by(last["result"].status, last["messages"], bool(visible)),
        "first_reply_sha": hashlib.sha256((assistant[0].get("content") or "").encode()).hexdigest()[:16]
        if assistant else None,
        "examples": len(visible), "examples_dropped": len(examples.get("dropped") or []),
        "run_dir": str(runs[0]["result"].run_dir), "run_dirs": [str(r["result"].run_dir) for r in runs],
    }
