"""Scoring a HumanEval run after it ended, in a fresh sandbox container: the docstring examples and a plain run
(used to pick the loop's final candidate), then the hidden check() (used only to score). Nothing here is ever
shown to the assistant."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.bench.humaneval import runner
from agents.bench.humaneval.visible import runner_source
from agents.loop.codeblocks import CodeBlock
from agents.sandbox import make_executor
from agents.sandbox.config import SandboxConfig

VISIBLE_SCRIPT = """
import json, sys
source = open(sys.argv[1], encoding="utf-8").read()
examples = json.load(open(sys.argv[2], encoding="utf-8"))
ns, error = load_solution(source)
if ns is None:
    print("@@VISIBLE@@" + json.dumps({"passed": 0, "total": len(examples), "failures": [error]}))
else:
    passed, failures = run_examples(ns, examples)
    print("@@VISIBLE@@" + json.dumps({"passed": passed, "total": passed + len(failures), "failures": failures[:5]}))
"""


def python_blocks(messages: list[dict[str, Any]]) -> list[str]:
    """Runnable python blocks of the assistant messages of a transcript, oldest first."""
    return [b["code"] for m in messages if m.get("role") == "assistant" for b in m.get("code_blocks") or []
            if CodeBlock(b.get("language") or "", b.get("code") or "").runnable_as == "python"]


@dataclass
class Candidate:
    """One candidate solution: the blocks it was built from, the source scored, the code as written."""

    label: str
    blocks: list[str]
    source: str | None = None
    raw: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(cls, label: str, blocks: list[str], problem: dict[str, Any]) -> "Candidate":
        """Apply the harness's extraction rule (runner.build_candidate)."""
        source, raw = runner.build_candidate(blocks, problem["prompt"], problem["entry_point"])
        return cls(label, blocks, source, raw if raw is not None else (blocks[-1] if blocks else None))


def _last_line(output: str) -> str:
    lines = [ln for ln in output.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


class Scorer:
    """One fresh sandbox container per problem; files under its own folder, never a run's workspace."""

    def __init__(self, problem: dict[str, Any], examples: list[dict[str, str]], workspace: Path,
                 sandbox: SandboxConfig, run_id: str):
        self.problem, self.examples = problem, examples
        self.workspace = workspace
        workspace.mkdir(parents=True, exist_ok=True)
        (workspace / "examples.json").write_text(json.dumps(examples), encoding="utf-8")
        (workspace / "visible.py").write_text(runner_source() + VISIBLE_SCRIPT, encoding="utf-8")
        self.executor = make_executor(sandbox, workspace, run_id)

    def __enter__(self) -> "Scorer":
        self.executor.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.executor.stop()

    def _write(self, name: str, text: str) -> str:
        path = self.workspace / name
        path.write_text(text, encoding="utf-8")
        path.chmod(0o644)
        return name

    def check_visible(self, c: Candidate) -> Candidate:
        """The candidate's plain run (ESR) and its docstring examples: what the loop may choose by."""
        if c.raw is None:
            c.facts.update(exec="no_code", runs_ok=False, exec_error=None)
        else:
            r = self.executor.run_command(["python3", self._write(f"{c.label}_raw.py", c.raw)])
            c.facts.update(exec="timeout" if r.timed_out else "ok" if r.exit_code == 0 else "error",
                           runs_ok=r.exit_code == 0, exec_error=None if r.exit_code == 0 else _last_line(r.output))
        total = len(self.examples)
        if c.source is None:
            c.facts.update(visible_passed=0, visible_total=total, visible_failures=["no function found"])
        elif total:
            name = self._write(f"{c.label}_solution.py", c.source)
            v = self.executor.run_command(["python3", "visible.py", name, "examples.json"])
            marker = v.output.rfind("@@VISIBLE@@")
            data = json.loads(v.output[marker + 11:].splitlines()[0]) if marker >= 0 else {}
            c.facts.update(visible_passed=data.get("passed", 0), visible_total=total,
                           visible_failures=data.get("failures")
                           or ([] if marker >= 0 else ["the examples did not run"]))
        else:
            c.facts.update(visible_passed=0, visible_total=0, visible_failures=[])
        c.facts["visible_ok"] = c.source is not None and c.facts["visible_passed"] == total
        return c

    def check_hidden(self, c: Candidate) -> Candidate:
        """The hidden check(candidate): scoring only."""
        if c.source is None:
            c.facts.update(passed=False, hidden="no_function")
            return c
        entry = self.problem["entry_point"]
        name = self._write(f"{c.label}_hidden.py", f"{c.source}\n\n{self.problem['test']}\n\ncheck({entry})\n")
        h = self.executor.run_command(["python3", name])
        c.facts["passed"] = h.exit_code == 0
        c.facts["hidden"] = "passed" if h.exit_code == 0 else (
            "timeout" if h.timed_out else "wrong_answer" if "AssertionError" in h.output else "exception")
        return c


def choose(candidates: list[Candidate]) -> Candidate:
    """The loop's answer, by visible evidence only: the first that runs and passes every docstring example,
    else the latest with the most examples passed (running code preferred)."""
    for c in candidates:
        if c.facts.get("visible_ok") and c.facts.get("runs_ok"):
            return c
    best = max(range(len(candidates)), key=lambda i: (candidates[i].facts.get("visible_passed", 0),
                                                      bool(candidates[i].facts.get("runs_ok")), i))
    return candidates[best]
