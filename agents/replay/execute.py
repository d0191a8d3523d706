"""Re-running every recorded block in a fresh sandbox and reporting, block by block, match or diverged."""

from __future__ import annotations

import difflib
import re
import secrets
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from agents.loop.codeblocks import SHELLS, CodeBlock, extract_code_blocks
from agents.loop.errors import TranscriptError
from agents.sandbox import make_executor
from agents.sandbox.config import SandboxConfig
from agents.sandbox.languages import language_of_tag

DIFF_LINES = 14
TIMING = re.compile(r"\b\d+\.\d+\s?(?:s|ms|µs|us|sec|secs|seconds)\b|\b\d+\s?(?:ms|µs|us)\b")
TMP_NAME = re.compile(r"/tmp/(?:tmp|codeduet-)[\w.-]*")
ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")


@dataclass
class RecordedBlock:
    """One block that ran in the original run, with what it did then."""

    message_index: int
    code: str
    language: str
    filename: str | None
    exit_code: int | None
    output: str
    checks: list[dict[str, Any]] = field(default_factory=list)
    """The turn's check verdicts, on the turn's last block only."""
    attempt: int = 1
    """The attempt it belongs to: each attempt re-runs in its own fresh sandbox, as it ran."""
    saved_only: bool = False
    """It saved its file and nothing ran (a source file the reply's shell block built): saved again only."""


@dataclass
class BlockReport:
    """The verdict for one re-executed block."""

    block: RecordedBlock
    exit_code: int | None
    output: str
    problems: list[str] = field(default_factory=list)
    diff: list[str] = field(default_factory=list)

    @property
    def matches(self) -> bool:
        """Same exit code, same normalized output, same check verdicts."""
        return not self.problems


def runnable(message: dict[str, Any]) -> list[CodeBlock]:
    """The blocks of an assistant message the proxy acted on, in order: Python and shell to run and files to save
    (`# filename:`), recorded, else re-extracted."""
    raw = message.get("code_blocks")
    blocks = [CodeBlock(b.get("language", ""), b.get("code", "")) for b in raw] if raw is not None \
        else extract_code_blocks(message.get("content"))
    return [b for b in blocks if b.actionable]


def paired(proposed: list[CodeBlock], executions: list[dict[str, Any]]) -> list[CodeBlock]:
    """The block behind each execution, in order. A run recorded before shell blocks ran has executions only for
    its Python blocks and files: its unnamed shell blocks are passed over when the execution is not a shell's."""
    queue, out = list(proposed), []
    for e in executions:
        while queue and queue[0].filename is None and queue[0].runnable_as in SHELLS \
                and (e.get("language") or "python") not in SHELLS:
            queue.pop(0)
        if queue:
            out.append(queue.pop(0))
    return out


def recorded_blocks(t: dict[str, Any]) -> list[RecordedBlock]:
    """Every executed block in order, paired with the recorded exit code and output."""
    out: list[RecordedBlock] = []
    proposed: list[CodeBlock] = []
    for m in t.get("messages") or []:
        if m.get("role") == "assistant":
            proposed = runnable(m)
            continue
        executions = (m.get("outcome") or {}).get("executions") or []
        if not executions:
            continue
        blocks = paired(proposed, executions)
        if len(executions) > len(blocks):
            raise TranscriptError(f"message {m.get('index')}: {len(executions)} executions but only "
                                  f"{len(blocks)} recorded code blocks before it")
        for block, e in zip(blocks, executions):
            out.append(RecordedBlock(m.get("index", -1), block.script, e.get("language") or "python",
                                     e.get("filename"), e.get("exit_code"), e.get("output") or "",
                                     attempt=m.get("attempt") or 1, saved_only=bool(e.get("saved_only"))))
        out[-1].checks = (m.get("outcome") or {}).get("checks") or []
        proposed = []
    return out


def normalize(text: str, paths: list[str]) -> list[str]:
    """Output lines without run-specific noise: paths, tmp names, addresses, timings, trailing space."""
    for p in sorted({p for p in paths if p}, key=len, reverse=True):
        text = text.replace(p, "<run>")
    text = TMP_NAME.sub("<tmp>", text)
    text = ADDRESS.sub("0x…", text)
    text = TIMING.sub("<time>", text)
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def compare(block: RecordedBlock, exit_code: int | None, output: str, paths: list[str],
            checks: list[dict[str, Any]] | None) -> BlockReport:
    """Exit code, normalized output and (when recorded) check verdicts, old against new."""
    report = BlockReport(block, exit_code, output)
    if exit_code != block.exit_code:
        report.problems.append(f"exit code {block.exit_code} -> {exit_code}")
    old, new = normalize(block.output, paths), normalize(output, paths)
    if old != new:
        report.problems.append("output differs")
        diff = list(difflib.unified_diff(old, new, "recorded", "replayed", n=1, lineterm=""))
        report.diff = diff[:DIFF_LINES] + ([f"… {len(diff) - DIFF_LINES} more diff lines"]
                                          if len(diff) > DIFF_LINES else [])
    if checks is not None:
        was = [(c.get("name"), bool(c.get("passed"))) for c in block.checks]
        now = [(c.get("name"), bool(c.get("passed"))) for c in checks]
        if was != now:
            flip = [f"{n}: {'pass' if a else 'fail'} -> {'pass' if b else 'fail'}"
                    for (n, a), (_, b) in zip(was, now) if a != b]
            report.problems.append("checks " + ("; ".join(flip) or "differ"))
    return report


def _scenario_for_checks(t: dict[str, Any]) -> Any:
    """The recorded scenario (for re-running its checks), or None when it cannot be rebuilt here."""
    from agents.scenario.checks import CommandCheck, PytestCheck
    from agents.scenario.spec import Scenario

    snap = dict(t.get("scenario") or {})
    source = snap.pop("source", None)
    try:
        scenario = Scenario.model_validate(snap)
    except Exception:
        return None
    scenario.path = Path(source) if source else None
    if any(isinstance(c, PytestCheck) and not (scenario.base_dir / c.pytest).is_file() for c in scenario.checks):
        return None  # the scenario's pytest file is gone: the checks cannot be re-run faithfully
    if any(isinstance(c, CommandCheck) and not all((scenario.base_dir / f).exists() for f in c.files.values())
           for c in scenario.checks):
        return None  # likewise a command check's hidden files
    return scenario


def run_language(tag: str) -> str:
    """How a recorded block runs again: its shell, its language (```c++ -> cpp), or Python."""
    if tag in SHELLS:
        return tag
    lang = language_of_tag(tag)
    return lang.name if lang is not None else "python"


def fresh_workspace(t: dict[str, Any]) -> Path:
    """A new temporary folder holding the scenario's `files:` as they were when the run started."""
    root = Path(tempfile.mkdtemp(prefix="codeduet-replay-"))
    for name, content in ((t.get("scenario") or {}).get("files") or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    return root


def replay_blocks(t: dict[str, Any], cfg: SandboxConfig, on_block: Any = None) -> list[BlockReport]:
    """Run the recorded blocks in order, each attempt in its own fresh sandbox; compare each with the record."""
    blocks = recorded_blocks(t)
    scenario = _scenario_for_checks(t) if any(b.checks for b in blocks) else None
    reports: list[BlockReport] = []
    for attempt in sorted({b.attempt for b in blocks}):
        reports += _replay_attempt(t, cfg, [b for b in blocks if b.attempt == attempt], scenario, on_block)
    return reports


def _replay_attempt(t: dict[str, Any], cfg: SandboxConfig, blocks: list[RecordedBlock], scenario: Any,
                    on_block: Any) -> list[BlockReport]:
    from agents.feedback.dropped_defs import with_needed
    from agents.record.run_folder import workspace_name
    from agents.scenario.checks import run_checks

    workspace = fresh_workspace(t)
    executor = make_executor(cfg, workspace, f"replay-{secrets.token_hex(3)}")
    run_dir = str(t.get("run_dir") or "")
    name = workspace_name(blocks[0].attempt if blocks else 1)
    paths = [str(workspace), str(workspace.resolve()), f"{run_dir}/{name}", run_dir, str(t.get("run_id") or "")]
    reports = []
    try:
        executor.start()
        for block in blocks:
            # a `# filename:` block is saved again where it was (and run when it is a .py), in the recorded order
            code, _ = with_needed(block.code, workspace)  # as the proxy saved it (agents/feedback/dropped_defs.py)
            result = executor.execute(code, run_language(block.language), run=not block.saved_only)
            checks = None  # compared when the checks ran then (after the turn's last block, whatever its exit)
            if block.checks and scenario is not None:
                checks = [c.to_dict() for c in run_checks(scenario.checks, scenario.base_dir, executor, result)]
            report = compare(block, result.exit_code, result.output, paths, checks)
            reports.append(report)
            if on_block:
                on_block(report)
    finally:
        executor.stop()
        shutil.rmtree(workspace, ignore_errors=True)
    return reports


def execute_run(console: Console, t: dict[str, Any], image: str | None = None) -> int:
    """`replay --execute`: print a line per block (and a short diff when it diverged); 0 only if all match."""
    recorded_cfg = dict((t.get("scenario") or {}).get("sandbox") or t.get("sandbox") or {})
    recorded_cfg.setdefault("error_locals", False)  # recorded before the sandbox printed a failing frame's variables
    cfg = SandboxConfig.model_validate(recorded_cfg)
    recorded = cfg.image
    if image:
        cfg = cfg.model_copy(update={"image": image})
    blocks = recorded_blocks(t)
    files = len((t.get("scenario") or {}).get("files") or {})
    console.print(f"re-executing {len(blocks)} recorded block(s) of {t.get('run_dir')}", soft_wrap=True)
    where = f"image {cfg.image}" + (f" (recorded: {recorded})" if cfg.image != recorded else "")
    console.print(f"fresh sandbox: {cfg.kind} {where}; fresh workspace with {files} scenario file(s)", soft_wrap=True)
    if not blocks:
        console.print("no code was executed in this run: nothing to compare")
        return 0

    multi = len({b.attempt for b in blocks}) > 1

    def show(r: BlockReport) -> None:
        name = r.block.filename or "block"
        attempt = f"attempt {r.block.attempt}, " if multi else ""
        where = f"{name} ({attempt}message {r.block.message_index})"
        if r.matches:
            console.print(f"  [green]✔ match[/]     {where} exit {r.exit_code}")
            return
        console.print(f"  [red]✘ diverged[/]  {where}: {'; '.join(r.problems)}")
        for line in r.diff:
            style = "red" if line.startswith("-") else "green" if line.startswith("+") else "dim"
            console.print(f"      [{style}]{escape(line)}[/]", soft_wrap=True)

    if any(b.checks for b in blocks) and _scenario_for_checks(t) is None:
        console.print("[yellow]the scenario's checks cannot be re-run here (its pytest file is missing): "
                      "comparing exit codes and outputs only[/]")
    reports = replay_blocks(t, cfg, on_block=show)
    bad = sum(not r.matches for r in reports)
    color = "green" if not bad else "red"
    console.print(f"[{color}]{len(reports)} block(s): {len(reports) - bad} match, {bad} diverged[/]")
    return 0 if not bad else 1
