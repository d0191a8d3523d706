"""The Scenario: a YAML file that sets the task, model, agents, predicate, sandbox and checks."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from agents.defaults import SANDBOX_IMAGE
from agents.errors import BadInputError, ScenarioError
from agents.project_files import as_text, check_overlap, read_folder
from agents.yamlio import Loc, line_of, load_yaml, shown_key, validate


class Strict(BaseModel):
    """Base for every config block: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


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
        from agents.prompts import named_system_message

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
    None uses the project's own self-debug prompt (agents/prompts/system.md)."""
    name: str = "assistant"
    """Agent name shown in transcripts."""

    @property
    def system_text(self) -> str | None:
        """The system message as the model gets it (None: the project's own)."""
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


# -- termination predicates --------------------------------------------------------------------

class Contains(Strict):
    """The last message contains this text."""

    contains: str


class EndsWith(Strict):
    """The last message, stripped, ends with this text."""

    endswith: str


def _compiles(pattern: str) -> str:
    """Reject a regular expression that does not compile."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression: {exc}") from None
    return pattern


Pattern = Annotated[str, AfterValidator(_compiles)]


class Regex(Strict):
    """The last message matches this regular expression (re.search)."""

    regex: Pattern


class Success(Strict):
    """The last execution succeeded (or the opposite with `false`): every check passed when the scenario has
    checks, else its last block exited 0."""

    success: bool = True


class CallablePredicate(Strict):
    """Escape hatch: `pkg.mod:fn(message, context) -> bool`."""

    callable: str


class AnyOf(Strict):
    """True when any sub-predicate holds."""

    any: list["Predicate"] = Field(min_length=1)


class AllOf(Strict):
    """True when all sub-predicates hold."""

    all: list["Predicate"] = Field(min_length=1)


def _single_key(value: Any) -> str | None:
    """Discriminator: a predicate or check is a mapping with exactly one key, which names its kind."""
    if isinstance(value, dict) and len(value) == 1:
        return next(iter(value))
    if isinstance(value, BaseModel):
        return next(iter(type(value).model_fields))
    return None


Predicate = Annotated[
    Union[Annotated[Contains, Tag("contains")], Annotated[EndsWith, Tag("endswith")], Annotated[Regex, Tag("regex")],
          Annotated[Success, Tag("success")], Annotated[CallablePredicate, Tag("callable")],
          Annotated["AnyOf", Tag("any")], Annotated["AllOf", Tag("all")]],
    Discriminator(_single_key)]
AnyOf.model_rebuild()
AllOf.model_rebuild()

PREDICATE_KEYS = {"contains", "endswith", "regex", "success", "callable", "any", "all"}


def default_termination() -> AnyOf:
    """TERMINATE in a message, or a successful execution (every check passed; no checks: exit code 0)."""
    return AnyOf(any=[Contains(contains="TERMINATE"), Success(success=True)])


# -- sandbox and checks ------------------------------------------------------------------------

class SandboxConfig(Strict):
    """Where and how code runs."""

    kind: str = "docker"
    """docker (default, hardened container) | local (opt-in subprocess, no isolation) | a dotted path."""
    image: str = SANDBOX_IMAGE
    """Docker image, built locally by `codeduet sandbox build`."""
    timeout: float = Field(default=30, gt=0, le=3600)
    """Seconds per code block; the whole process tree is killed at the limit."""
    memory: str = "512m"
    """Memory limit (docker syntax: 256m, 1g)."""
    cpus: float = Field(default=1.0, gt=0, le=64)
    """CPU limit."""
    pids: int = Field(default=128, ge=8, le=100000)
    """Process/thread limit (fork bombs stop here)."""
    network: Literal["none", "bridge"] = "none"
    """Container network; none unless you really need it."""
    output_limit: int = Field(default=20000, ge=100, le=10_000_000)
    """Characters of output kept per execution; the rest is cut with a marker."""
    tmpfs_size: str = "64m"
    """Size of the writable /tmp tmpfs."""
    error_locals: bool = True
    """On an uncaught exception, print under the traceback the values of the variables of the script's failing
    line (agents/sandbox/error_locals.py), so the model sees the data that broke its code."""
    disk: str = "256m"
    """Size of /workspace: a tmpfs inside the container (no host folder is mounted). A write past it fails with
    ENOSPC, the run goes on and the execution says the disk limit was hit. It lives in RAM and counts toward
    `memory`. After each block the files the code wrote are copied back to the run folder (at most this much)."""
    copy_back_max: str = "16m"
    """The largest file copied back from the sandbox to the run folder after a block; a bigger one stays in the
    sandbox (the next blocks of the attempt still see it) and the execution lists it by name and size."""

    @field_validator("memory", "tmpfs_size", "disk", "copy_back_max")
    @classmethod
    def _size(cls, v: str, info: ValidationInfo) -> str:
        if not re.fullmatch(r"\d+(\.\d+)?[bkmg]?", str(v).lower()):
            raise ValueError(f"'{v}' is not a size like 512m or 1g")
        low = "32m" if info.field_name == "memory" else "1m"  # 0 would mean "no limit" to docker
        if not parse_size(low) <= parse_size(str(v)) <= 1024**4:
            raise ValueError(f"'{v}' is out of range: use a size between {low} and 1024g, like 512m or 1g")
        return str(v).lower()

    @property
    def disk_bytes(self) -> int:
        """The workspace size in bytes."""
        return parse_size(self.disk)

    @property
    def copy_back_bytes(self) -> int:
        """copy_back_max in bytes."""
        return parse_size(self.copy_back_max)


def parse_size(v: str) -> int:
    """'512m' -> bytes."""
    units = {"b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
    v = v.lower()
    if v[-1] in units:
        return int(float(v[:-1]) * units[v[-1]])
    return int(v)


class StdoutContains(Strict):
    """stdout of the last execution contains this text."""

    stdout_contains: str


class StdoutRegex(Strict):
    """stdout of the last execution matches this regex."""

    stdout_regex: Pattern


class FileExists(Strict):
    """A file exists in the run's workspace (path relative to it)."""

    file_exists: str


class PytestCheck(Strict):
    """A pytest file (relative to the scenario file) run inside the sandbox against the workspace."""

    pytest: str


Check = Annotated[
    Union[Annotated[StdoutContains, Tag("stdout_contains")], Annotated[StdoutRegex, Tag("stdout_regex")],
          Annotated[FileExists, Tag("file_exists")], Annotated[PytestCheck, Tag("pytest")]],
    Discriminator(_single_key)]
CHECK_KEYS = {"stdout_contains", "stdout_regex", "file_exists", "pytest"}


class StrategyConfig(Strict):
    """How the loop spends its budget: sampled repair turns, rejected repeats and fresh attempts."""

    attempts: int = Field(default=3, ge=1, le=50)
    """Fresh conversations at most; the run ends at the first whose execution passes every check."""
    repair_temperature: float = Field(default=0.7, ge=0, le=2)
    """Sampling temperature of repair turns (0: greedy). The first turn of the first attempt is always greedy."""
    attempt_temperature: float = Field(default=0.7, ge=0, le=2)
    """Sampling temperature of the first turn of attempts 2..N."""
    max_resamples: int = Field(default=1, ge=0, le=20)
    """Re-asks of a turn whose code repeats an earlier execution (or was cut off), each with a new seed and, from
    the second on, hotter. When every re-ask repeats too, the conversation is stuck and a fresh attempt starts."""
    resample_step: float = Field(default=0.2, ge=0, le=1)
    """How much hotter each re-ask is (capped at 1.5)."""
    seed: int = Field(default=0, ge=0)
    """Base seed: every sampled call gets its own seed from it, so a run is reproducible."""
    summary: bool = True
    """Start a fresh attempt with one line on what failed before."""
    top_p: float = Field(default=0.95, gt=0, le=1)
    """Nucleus cut-off of sampled turns."""
    repair_context: Literal["full", "last"] = "full"
    """What a repair turn sees: the whole conversation, or only the task, the last reply and the feedback on it."""
    prose_reply: Literal["keep", "reask"] = "keep"
    """A reply with neither code nor TERMINATE (unattended runs): `keep` re-asks with that reply kept and a request
    for the script it describes (a diagnosis or a plan is built on, the self-debugging pattern); `reask` asks again
    from the clean prompt, as if the reply had not been given."""
    max_seconds: float | None = Field(default=None, gt=0, le=7 * 24 * 3600)
    """Wall-clock budget of the whole run, in seconds (None: none; `--max-seconds` overrides). When it is spent, the
    generation or block under way stops, the run ends with the status `timeout`, and everything is saved."""
    candidates: int | Literal["auto"] = "auto"
    """Replies generated together for the first turn of every attempt, each run in its own fresh sandbox on a copy
    of the workspace and scored by the checks (agents/candidates.py); the best one continues the conversation. The
    first stays greedy, the others are sampled with their own seeds. `auto`: 4 with the embedded llama.cpp model
    (decoded in one batch), 1 with any other (each candidate is a paid request; the scripted model replays its
    list). Only unattended runs (human_input_mode NEVER): a person approves what runs."""
    repair_candidates: int = Field(default=1, ge=1, le=16)
    """Replies generated together for each repair turn (1: one, as before)."""
    candidates_early_stop: bool = True
    """The turn's own reply (candidate 1) runs first; when it passes every check, the other candidates are not
    generated (a first-turn success costs what it cost without candidates). false: all N are always generated, so
    agreement can choose among several that pass every visible check (scenarios with no checks always get all N)."""

    @field_validator("candidates", mode="before")
    @classmethod
    def _count_or_auto(cls, v: Any) -> Any:
        if v == "auto" or (isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 16):
            return v
        raise ValueError(f"{v!r} is not a number of candidates: use a count from 1 to 16, or auto")
    file_preview: int = Field(default=30, ge=0, le=10_000)
    """Lines of each `files:` entry shown under the task in every attempt's first message (0: none), so the model
    sees the data it must handle instead of guessing its format (at most 4,000 characters in all)."""


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """`--strategy KEY=VALUE` flags -> {key: value} for StrategyConfig (values read as YAML):
    ['repair_context=last', 'attempts=4'] -> {'repair_context': 'last', 'attempts': 4}."""
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise BadInputError(f"--strategy {item!r}: use KEY=VALUE, like repair_context=last")
        pairs[key.strip()] = yaml.safe_load(value)
    return pairs


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
    """Sampled repairs, repeat rejection and fresh attempts (agents/strategy.py)."""
    files: dict[str, str] = Field(default_factory=dict)
    """Files written into the workspace before the run (name -> content)."""
    files_from: str | FilesFromRecord | None = None
    """A folder (relative to the scenario file) copied into every attempt's workspace before the run, beside
    `files:` (which wins for the same path); caps and skipped folders in agents/project_files.py. A transcript
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

    @model_validator(mode="after")
    def _names(self) -> "Scenario":
        if self.name is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", self.name):
            raise ValueError(f"name '{self.name}' must be letters, digits, '-', '_' or '.'")
        return self

    @property
    def base_dir(self) -> Path:
        """Folder that relative paths (pytest checks) resolve against."""
        return self.path.parent if self.path else Path.cwd()

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
                                f"{', '.join(sorted(PREDICATE_KEYS))}")
        (key, value), = node.items()
        if key not in PREDICATE_KEYS:
            raise ScenarioError(f"{origin}:{line_of(lines, loc + (key,))}: {named(loc + (key,))}: unknown "
                                f"predicate kind {str(key)!r} (known: {', '.join(sorted(PREDICATE_KEYS))})")
        if key in ("any", "all") and isinstance(value, list):
            for i, sub in enumerate(value):
                walk_pred(sub, loc + (key, i))

    if "termination" in data:
        walk_pred(data["termination"], ("termination",))
        _check_callables(data["termination"], ("termination",), lines, origin)
    checks = data.get("checks")
    for i, check in enumerate(checks if isinstance(checks, list) else []):  # not a list: pydantic says so
        loc = ("checks", i)
        if not isinstance(check, dict) or len(check) != 1 or next(iter(check)) not in CHECK_KEYS:
            key = next(iter(check)) if isinstance(check, dict) and check else ""
            raise ScenarioError(f"{origin}:{line_of(lines, loc + (key,))}: checks.{i}: "
                                f"unknown check {str(key)!r} (known: {', '.join(sorted(CHECK_KEYS))})")


def _check_callables(node: Any, loc: Loc, lines: dict[Loc, int], origin: str) -> None:
    """A `callable:` predicate must import now, not after the sandbox has started."""
    from agents.errors import BadInputError
    from agents.registry import import_dotted

    (key, value), = node.items()
    if key in ("any", "all") and isinstance(value, list):
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
