"""The Scenario: a YAML file that sets the task, model, agents, predicate, sandbox and checks, each block's schema
beside its component (agents/loop/termination.py, agents/sandbox/config.py, agents/scenario/checks.py,
agents/scenario/strategy_config.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import ConfigDict, Discriminator, Field, PrivateAttr, Tag, field_validator, model_validator

from agents.feedback.prompts import named_system_message
from agents.loop.briefing import works_on_files
from agents.loop.errors import BadInputError, ScenarioError
from agents.loop.registry import import_dotted
from agents.loop.roles import DEVELOPER, ROLE_NAMES
from agents.loop.termination import PREDICATES, Predicate, default_termination
from agents.sandbox.config import SandboxConfig
from agents.scenario.check_page import PageCheck, no_browser
from agents.scenario.checks import CHECKS, Check, CommandCheck, PytestCheck
from agents.scenario.project_files import as_text, check_overlap, read_folder
from agents.scenario.schema import Strict
from agents.scenario.strategy_config import StrategyConfig
from agents.scenario.yamlio import Loc, line_of, load_yaml, shown_key, validate


class NamedPrompt(Strict):
    """A system message named instead of written: `{from: ag2.default}` is AG2's AssistantAgent.DEFAULT_SYSTEM_MESSAGE,
    read from the installed AG2 when the scenario loads (names: agents/prompts SYSTEM_MESSAGES; or `pkg.mod:NAME`)."""

    model_config = ConfigDict(extra="forbid", serialize_by_alias=True)

    from_: str = Field(alias="from")
    """The name (ag2.default) or a dotted path to a string."""
    text: str | None = None
    """The text the name gave when the scenario loaded; transcripts record it, so a resumed run keeps its prompt."""

    @model_validator(mode="after")
    def _resolve(self) -> "NamedPrompt":
        if self.text is None:
            self.text = named_system_message(self.from_)
        return self


def _text_or_name(value: Any) -> str | None:
    """Discriminator: a system message is a text, or a mapping that names one (tags in <>: not keys of the file)."""
    if isinstance(value, (dict, NamedPrompt)):
        return "<named>"
    return "<text>" if isinstance(value, str) else None


class AssistantConfig(Strict):
    """The AssistantAgent (the LLM that writes code)."""

    system_message: Annotated[Union[Annotated[str, Tag("<text>")], Annotated[NamedPrompt, Tag("<named>")]],
                              Discriminator(_text_or_name, custom_error_type="system_message",
                                            custom_error_message="use a text, or {from: ag2.default}")] | None = None
    """System message: a text, or `{from: ag2.default}` for AG2's own default assistant prompt (NamedPrompt);
    None uses the project's own self-debug prompt (agents/feedback/prompts/system.md)."""
    name: str = "assistant"
    """Agent name shown in transcripts."""

    @property
    def system_text(self) -> str | None:
        """The system message as the model gets it (None: the project's own)."""
        message = self.system_message
        return message.text if isinstance(message, NamedPrompt) else message


class RoleConfig(Strict):
    """One member of a `team:`: its role, the name it speaks under, its system message and its model."""

    role: Literal[ROLE_NAMES]  # type: ignore[valid-type]
    """planner: breaks the task into steps once per attempt; developer: writes the code (the pair's assistant);
    qa: after an execution that did not succeed, one structured report to the developer (agents/loop/roles.py)."""
    name: str | None = None
    """Who speaks in the transcript (default: the role)."""
    system_message: Annotated[Union[Annotated[str, Tag("<text>")], Annotated[NamedPrompt, Tag("<named>")]],
                              Discriminator(_text_or_name, custom_error_type="system_message",
                                            custom_error_message="use a text, or {from: ag2.default}")] | None = None
    """A text, or `{from: ...}` (a name or a dotted path); None: the role's own prompt
    (agents/feedback/prompts/team_*.md;
    the developer: `assistant.system_message`, else the pair's)."""
    model: str | dict[str, Any] | None = None
    """A name in the model table or an inline entry; None: the run's model (the scenario's, or --model) (a small
    fast planner beside a bigger developer)."""

    @model_validator(mode="after")
    def _default_name(self) -> "RoleConfig":
        if self.name is None:
            self.name = self.role
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", self.name):
            raise ValueError(f"name '{self.name}' must be letters, digits, '-' or '_'")
        return self

    @property
    def system_text(self) -> str | None:
        message = self.system_message
        return message.text if isinstance(message, NamedPrompt) else message


class UserProxyConfig(Strict):
    """The UserProxyAgent (runs the code, reports back)."""

    human_input_mode: Literal["ALWAYS", "TERMINATE", "NEVER"] = "NEVER"
    """When a person is asked for input (AG2 semantics)."""
    max_consecutive_auto_reply: int = Field(default=5, ge=0, le=100)
    """How many automatic replies before the run stops (status max_replies)."""
    name: str = "user_proxy"
    """Agent name shown in transcripts."""


class FilesFromRecord(Strict):
    """How a transcript records `files_from:`: the folder's text files went into `files:`; nothing is read again."""

    folder: str
    """The folder the scenario named."""
    binary_files: dict[str, int] = Field(default_factory=dict)
    """Its files that are not text (name -> bytes): listed only, so a replay's workspace lacks them."""


class Scenario(Strict):
    """One scenario file."""

    name: str | None = None
    """Defaults to the file stem; names the folder under workspaces/."""
    description: str = ""
    """One line for listings."""
    task: str = Field(min_length=1)
    """The first message the user proxy sends."""
    model: str | dict[str, Any] | None = None
    """A name from configs/llm.yaml, or an inline entry ({provider: scripted, replies: [...]})."""
    assistant: AssistantConfig = Field(default_factory=AssistantConfig)
    user_proxy: UserProxyConfig = Field(default_factory=UserProxyConfig)
    termination: Predicate = Field(default_factory=default_termination)
    """The termination predicate; any/all nest."""
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    checks: list[Check] = Field(default_factory=list)
    """Acceptance checks, run after every execution of a reply whatever its exit code; they decide success."""
    strategy: StrategyConfig = Field(default_factory=StrategyConfig)
    """Sampled repairs, repeat rejection and fresh attempts (agents/loop/strategy.py)."""
    team: list[RoleConfig] | None = None
    """A Planner → Developer → QA team in place of the single assistant (agents/loop/team.py): `[planner, developer,
    qa]`
    (built-in roles), or a list of {role, name, system_message, model}. Absent: the pair."""
    files: dict[str, str] = Field(default_factory=dict)
    """Files written into the workspace before the run (name -> content)."""
    files_from: str | FilesFromRecord | None = None
    """A folder (relative to the scenario file) copied into every attempt's workspace before the run, beside
    `files:` (which wins for the same path); caps and skipped folders in agents/scenario/project_files.py. A transcript
    records it as a FilesFromRecord, its text files being under `files:`."""

    path: Path | None = Field(default=None, exclude=True)
    """Where the scenario was loaded from (not part of the file)."""
    _tree: dict[str, bytes] = PrivateAttr(default_factory=dict)
    """The `files_from:` folder's files as read at load time (scenario_from_data)."""

    @field_validator("files")
    @classmethod
    def _relative(cls, v: dict[str, str]) -> dict[str, str]:
        for name in v:
            if not name or Path(name).is_absolute() or ".." in Path(name).parts:
                raise ValueError(f"file name '{name}' must be a relative path inside the workspace (no '..')")
        return v

    @field_validator("team", mode="before")
    @classmethod
    def _short_roles(cls, v: Any) -> Any:
        """`team: [planner, developer, qa]`: a role named alone is that role with its defaults."""
        if isinstance(v, list):
            return [{"role": item} if isinstance(item, str) else item for item in v]
        return v

    @field_validator("team")
    @classmethod
    def _team_order(cls, v: list[RoleConfig] | None) -> list[RoleConfig] | None:
        if v is None:
            return v
        roles = [r.role for r in v]
        if roles.count(DEVELOPER.name) != 1 or any(roles.count(r) > 1 for r in ROLE_NAMES):
            raise ValueError("a team has exactly one developer, and at most one planner and one qa")
        if roles != sorted(roles, key=ROLE_NAMES.index):
            raise ValueError(f"list the roles in speaking order: {', '.join(r for r in ROLE_NAMES if r in roles)}")
        names = [r.name for r in v]
        if len(set(names)) != len(names):
            raise ValueError("every member of the team needs its own name")
        return v

    @property
    def developer(self) -> RoleConfig | None:
        """The team's developer (None for the pair)."""
        return next((r for r in self.team or [] if r.role == DEVELOPER.name), None)

    @model_validator(mode="after")
    def _names(self) -> "Scenario":
        if self.name is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", self.name):
            raise ValueError(f"name '{self.name}' must be letters, digits, '-', '_' or '.'")
        return self

    @property
    def base_dir(self) -> Path:
        """Folder that relative paths (pytest checks) resolve against."""
        return self.path.parent if self.path else Path.cwd()

    def about_files(self) -> bool:
        """Whether the task is about Python files (agents/loop/briefing.py works_on_files): the system prompt teaches
        `# filename:`, and failing checks and repeats ask for the whole corrected file."""
        return works_on_files(self.task, self.starting_files())

    def starting_files(self) -> dict[str, bytes]:
        """What every attempt's workspace starts with: the `files_from:` tree, then `files:` over it."""
        return {**self._tree, **{name: text.encode("utf-8") for name, text in self.files.items()}}

    def text_files(self) -> dict[str, str]:
        """The starting files that are text (the `files_from:` tree's and `files:`), for the model's preview."""
        texts = {name: as_text(content) for name, content in self.starting_files().items()}
        return {name: text for name, text in texts.items() if text is not None}

    def snapshot(self) -> dict[str, Any]:
        """JSON-ready copy for the transcript: self-contained, the `files_from:` tree expanded into `files`."""
        data = self.model_dump(mode="json", exclude_none=False)
        data["source"] = str(self.path) if self.path else None
        if isinstance(self.files_from, str):
            texts = {name: as_text(content) for name, content in self._tree.items()}
            data["files"] = {**{n: t for n, t in texts.items() if t is not None}, **self.files}
            data["files_from"] = FilesFromRecord(folder=self.files_from, binary_files={
                n: len(self._tree[n]) for n, t in texts.items() if t is None and n not in self.files}).model_dump()
        return data


def _shape_hint(data: Any, lines: dict[Loc, int], origin: str) -> None:
    """Turn pydantic's union noise into one clear line for predicates and checks."""
    if not isinstance(data, dict):
        raise ScenarioError(f"{origin}:1: the scenario must be a mapping of keys (task:, model:, ...)")

    def named(loc: Loc) -> str:
        return ".".join(shown_key(part) for part in loc)

    def walk_pred(node: Any, loc: Loc) -> None:
        if not isinstance(node, dict) or len(node) != 1:
            raise ScenarioError(f"{origin}:{line_of(lines, loc)}: {named(loc)}: a predicate is one key of "
                                f"{', '.join(sorted(PREDICATES))}")
        (key, value), = node.items()
        if key not in PREDICATES:
            raise ScenarioError(f"{origin}:{line_of(lines, loc + (key,))}: {named(loc + (key,))}: unknown "
                                f"predicate kind {str(key)!r} (known: {', '.join(sorted(PREDICATES))})")
        if PREDICATES[key].nests and isinstance(value, list):
            for i, sub in enumerate(value):
                walk_pred(sub, loc + (key, i))

    if "termination" in data:
        walk_pred(data["termination"], ("termination",))
        _check_callables(data["termination"], ("termination",), lines, origin)
    checks = data.get("checks")
    for i, check in enumerate(checks if isinstance(checks, list) else []):  # not a list: pydantic says so
        loc = ("checks", i)
        if not isinstance(check, dict) or not check or next(iter(check)) not in CHECKS:
            key = next(iter(check)) if isinstance(check, dict) and check else ""
            raise ScenarioError(f"{origin}:{line_of(lines, loc + (key,))}: checks.{i}: "
                                f"unknown check {str(key)!r} (known: {', '.join(sorted(CHECKS))})")


def _check_callables(node: Any, loc: Loc, lines: dict[Loc, int], origin: str) -> None:
    """A `callable:` predicate must import now, not after the sandbox has started."""
    (key, value), = node.items()
    if PREDICATES[key].nests and isinstance(value, list):
        for i, sub in enumerate(value):
            _check_callables(sub, loc + (key, i), lines, origin)
    elif key == "callable" and isinstance(value, str):
        try:
            import_dotted(value, "termination callable")
        except BadInputError as exc:
            raise ScenarioError(f"{origin}:{lines.get(loc + (key,), '?')}: {'.'.join(map(str, loc + (key,)))}: "
                                f"{exc}; fix the path or make the module importable (PYTHONPATH)") from None


def scenario_from_data(data: Any, lines: dict[Loc, int], origin: str, path: Path | None) -> Scenario:
    """Validate parsed YAML into a Scenario with file:line errors."""
    _shape_hint(data, lines, origin)
    scenario = validate(Scenario, data, origin, lines, error=ScenarioError)
    scenario.path = path
    if scenario.name is None:
        scenario.name = path.stem if path else "chat"
    for check in scenario.checks:
        if isinstance(check, PytestCheck) and not (scenario.base_dir / check.pytest).is_file():
            line = lines.get(("checks",), "?")
            raise ScenarioError(f"{origin}:{line}: checks: pytest file '{check.pytest}' not found next to the scenario")
        for source in check.files.values() if isinstance(check, CommandCheck) else ():
            if not (scenario.base_dir / source).exists():
                line = lines.get(("checks",), "?")
                raise ScenarioError(f"{origin}:{line}: checks: command file '{source}' not found next to the scenario")
        if isinstance(check, PageCheck) and no_browser(scenario.sandbox):
            raise ScenarioError(f"{origin}:{lines.get(('checks',), '?')}: checks: a page check needs a browser in the "
                                "sandbox: add `preset: frontend` (or web) to sandbox:")
    if isinstance(scenario.model, dict):  # an inline model entry: checked now, with its file:line
        from agents.models.config import build_provider

        build_provider(scenario.model, origin=origin, lines=lines)
    if isinstance(scenario.files_from, str):
        where = f"{origin}:{lines.get(('files_from',), '?')}: files_from"
        scenario._tree = read_folder(scenario.base_dir / scenario.files_from, where)
        check_overlap(scenario._tree, scenario.files, where)
    return scenario


def load_scenario(path: str | Path) -> Scenario:
    """Load and validate a scenario file."""
    path = Path(path)
    data, lines = load_yaml(path, ScenarioError)
    return scenario_from_data(data, lines, str(path), path.resolve())
