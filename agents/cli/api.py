"""The Python API: `run()` a scenario (a path, YAML text, a dict) with the CLI's overrides; `load_run()` a run folder.

Quiet by default (nothing printed; notices go to the `codeduet` logger; `verbose=True` shows the run as `codeduet
run` does). Bad input and a missing
Docker daemon, image or model raise the CodeduetError the CLI would print as one line (agents/loop/errors.py).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agents.loop.errors import BadInputError, CodeduetError, ScenarioError, exit_code_for
from agents.record.display import ConsoleDisplay, NullDisplay
from agents.scenario.yamlio import parse_yaml, validate

if TYPE_CHECKING:
    from agents.scenario.spec import Scenario

LOG = logging.getLogger("codeduet")
"""Where a quiet run's notices go (a fresh attempt, a sandbox warning): silent unless the program sets up logging."""
INLINE_NAME = "inline"
"""The run folder's scenario name (workspaces/inline/...) for YAML text or a dict that names none."""


@dataclass
class Run:
    """A saved run: what run() returns and load_run() reads back from its folder."""

    run_dir: Path
    status: str
    """success | failed | max_replies | timeout | interrupted | error (agents/loop/status.py STATUSES)."""
    reason: str
    exit_code: int
    """What `codeduet run` exits with for this status: 0 success, 1 did not succeed, 130 interrupted."""
    attempts: int
    chosen_attempt: int | None
    turns: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float | None
    final_message: str | None
    """The last assistant message of the kept attempt."""
    changed_files: list[dict[str, Any]] = field(default_factory=list)
    transcript: dict[str, Any] = field(default_factory=dict, repr=False)
    """The whole transcript.json (agents/record/transcript.py load_transcript; rebuilt from events.jsonl after kill
    -9)."""

    @property
    def ok(self) -> bool:
        """Whether the run succeeded."""
        return self.status == "success"

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens of every model call (the `--json` summary's `tokens`)."""
        return self.prompt_tokens + self.completion_tokens

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation: task, assistant, execution, user_proxy and human messages, each with its attempt."""
        return self.transcript.get("messages") or []

    def events(self) -> list[dict[str, Any]]:
        """events.jsonl as written, one dict per line (lines cut by a kill -9 skipped)."""
        out = []
        path = self.run_dir / "events.jsonl"
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if path.is_file() else []:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return out


def load_run(target: str | Path, workspace: str | Path | None = None) -> Run:
    """Read a run: its folder or transcript.json, or what `codeduet replay` takes (a run id or prefix, `latest`,
    a scenario's name), looked up under `workspace` (default ./workspaces)."""
    from agents.record.paths import default_workspaces
    from agents.record.transcript import load_transcript
    from agents.replay.find import resolve_run

    run_dir = resolve_run(target, Path(workspace) if workspace else default_workspaces())
    t = load_transcript(run_dir)
    totals = t.get("totals") or {}
    chosen = t.get("chosen_attempt")
    replies = [m for m in t.get("messages") or [] if m.get("role") == "assistant"]
    kept = [m for m in replies if (m.get("attempt") or 1) == (chosen or 1)] or replies
    return Run(run_dir=run_dir.resolve(), status=t.get("status", "error"), reason=t.get("reason", ""),
               exit_code=exit_code_for(t.get("status", "error")), attempts=totals.get("attempts") or 1,
               chosen_attempt=chosen, turns=totals.get("turns") or 0,
               prompt_tokens=totals.get("prompt_tokens") or 0, completion_tokens=totals.get("completion_tokens") or 0,
               seconds=totals.get("seconds"), final_message=kept[-1].get("content") if kept else None,
               changed_files=t.get("changed_files") or [], transcript=t)


class LogDisplay(NullDisplay):
    """A quiet run's display: no conversation, and its notices to the `codeduet` logger instead of stderr."""

    def info(self, line: str) -> None:
        """One notice, its rich markup removed, at level INFO."""
        from rich.text import Text

        LOG.info(Text.from_markup(line).plain)


class Overrides(BaseModel):
    """run()'s keyword arguments: the flags of `codeduet run`, checked as strictly."""

    model_config = ConfigDict(extra="forbid")
    model: str | dict[str, Any] | None = None
    """A name in the model table, `oai:ENV_OR_FILE[?key=value]` (docs/MODELS.md), or an inline entry (a dict)."""
    max_auto_reply: int | None = Field(default=None, ge=0)
    """--max-auto-reply: the user proxy's max_consecutive_auto_reply."""
    human: Literal["always", "terminate", "never"] | None = None
    """--human: human_input_mode; a person is then asked at this terminal."""
    attempts: int | None = Field(default=None, ge=1)
    """--attempts: strategy.attempts."""
    max_seconds: float | None = Field(default=None, ge=1)
    """--max-seconds: the run's wall-clock budget."""
    workspace: Path | None = None
    """--workspace: the root of run folders (default $CODEDUET_WORKSPACES, else ./workspaces)."""

    @field_validator("human", mode="before")
    @classmethod
    def _lower(cls, v: Any) -> Any:
        return v.lower() if isinstance(v, str) else v


def as_scenario(scenario: str | Path | dict[str, Any] | Scenario) -> Scenario:
    """A Scenario from a path (a Path, or a str naming a file or ending in .yaml/.yml), YAML text or a dict."""
    from agents.scenario.spec import Scenario, load_scenario, scenario_from_data

    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, Path) or (isinstance(scenario, str) and "\n" not in scenario and (
            scenario.strip().endswith((".yaml", ".yml")) or Path(scenario).is_file())):
        return load_scenario(scenario)
    if isinstance(scenario, str):
        data, lines, origin = *parse_yaml(scenario, "<yaml>", ScenarioError), "<yaml>"
    elif isinstance(scenario, dict):
        data, lines, origin = scenario, {}, "<dict>"
    else:
        raise ScenarioError(f"run(): a scenario is a path, YAML text or a dict, not {type(scenario).__name__}")
    named = isinstance(data, dict) and data.get("name") is not None
    loaded = scenario_from_data(data, lines, origin, None)
    if not named:
        loaded.name = INLINE_NAME
    return loaded


def run(scenario: str | Path | dict[str, Any] | Scenario, *, model: str | dict[str, Any] | None = None,
        max_auto_reply: int | None = None, human: str | None = None, attempts: int | None = None,
        max_seconds: float | None = None, workspace: str | Path | None = None, verbose: bool = False) -> Run:
    """Run a scenario as `codeduet run` does and return the saved Run; raise CodeduetError where the CLI exits 2 or
    3 (a run that started and then hit such an error carries it as `err.run`). Ctrl-C raises KeyboardInterrupt."""
    given = dict(model=model, max_auto_reply=max_auto_reply, human=human, attempts=attempts, max_seconds=max_seconds,
                 workspace=workspace)
    opts = validate(Overrides, {k: v for k, v in given.items() if v is not None}, "run()", {})
    loaded = as_scenario(scenario)  # bad input is raised before AG2 is imported
    from agents.cli.common import console
    from agents.loop.conversation import RunOptions, run_scenario
    from agents.loop.hitl import human_for_mode, normalize_mode

    result = run_scenario(loaded, RunOptions(model=opts.model, max_auto_reply=opts.max_auto_reply,
                                             human=normalize_mode(opts.human), workspaces=opts.workspace,
                                             attempts=opts.attempts, max_seconds=opts.max_seconds),
                          display=ConsoleDisplay(console) if verbose else LogDisplay(),
                          human=human_for_mode(console))
    saved = load_run(result.run_dir)
    if verbose:
        console.print(f"run: {result.run_dir} status={result.status}", soft_wrap=True)
    if result.error is not None:
        error: CodeduetError = result.error
        error.run = saved  # type: ignore[attr-defined]
        raise error
    return saved


__all__ = ["Run", "run", "load_run", "as_scenario", "BadInputError", "CodeduetError"]
