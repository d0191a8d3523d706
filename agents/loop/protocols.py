"""The seams of codeduet: model provider, executor, recorder, display. Each lists exactly what the rest calls."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Protocol, runtime_checkable

if TYPE_CHECKING:
    from rich.console import Console

TokenSink = Callable[[str], None]
"""Receives generated text as it streams (one token or chunk at a time). An empty piece is a heartbeat (a decode
step of a batch whose streamed reply already ended): nothing to show, but a budget guard may stop the generation
there."""


@dataclass
class ExecResult:
    """What one code block did in the sandbox."""

    exit_code: int
    output: str
    duration_s: float
    timed_out: bool = False
    truncated: bool = False
    oom_killed: bool = False
    disk_full: bool = False
    """The workspace's disk limit was hit (ENOSPC) during this execution."""
    sandbox_lost: str | None = None
    """What happened to the sandbox container while this block ran (removed, stopped or paused from outside), in
    words; None when nothing did. The next block runs in a fresh container."""
    filename: str | None = None
    """The file that ran (blockNN.py, or the path a `# filename:` line named), or the file saved."""
    language: str = "python"
    saved_only: bool = False
    """The block saved a file (`# filename:` with a suffix other than .py) and nothing ran."""
    refused: str | None = None
    """Why a `# filename:` block was not written (nothing ran); None when it was not refused."""
    files: list[dict[str, Any]] = field(default_factory=list)
    """Files of the workspace the block created, changed or deleted: {path, change, size}."""
    usage: bool = False
    """A saved command-line tool, run with no arguments, printed its usage and exited non-zero
    (agents/feedback/usage_exit.py):
    what such a tool does, not a failure."""
    server: dict[str, Any] | None = None
    """The block started a server, stopped as servers are (not a failure): {port, listen_s (seconds until it listened),
    stopped_s (seconds when it was stopped), grace_s (the quiet seconds it was given), at_limit (stopped at the time
    limit)}; None when it listened on no new TCP port (agents/sandbox/servers.py)."""
    command: str | None = None
    """A shell block's first command, as its run is shown (`$ python hello.py …`); None for any other block."""
    figures: list[dict[str, Any]] = field(default_factory=list)
    """Images the block made in the workspace (a matplotlib figure shown or left open, or saved with savefig):
    {path, size, width, height, title, axes} (agents/feedback/figures.py)."""
    table: dict[str, Any] | None = None
    """In a kernel session, the block's last expression when it is a DataFrame or a Series: {kind, shape, columns,
    index, rows}, its first rows and columns as text (agents/sandbox/kernel.py)."""

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for transcripts."""
        return asdict(self)


@dataclass
class Usage:
    """Token usage and latency of one model call, where the backend knows them."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float | None = None
    first_token_s: float | None = None
    cached_tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for transcripts, dropping unknowns."""
        d = {k: v for k, v in asdict(self).items() if v not in (None, {})}
        return d


@runtime_checkable
class ModelProvider(Protocol):
    """A named model entry turned into something an AG2 AssistantAgent can talk to."""

    def check_ready(self, console: Console | None = None) -> None:
        """Raise ModelUnavailable (one line, with the fix) if the model cannot be used; before any container.
        A missing local model may be pulled here, its progress shown on `console` (None: stderr)."""

    def llm_config(self) -> dict[str, Any]:
        """The AG2 `llm_config` for the assistant; never contains a secret that could reach a transcript."""

    def attach(self, agent: Any, on_token: TokenSink | None = None) -> None:
        """Register custom model clients on the agent (AG2 `register_model_client`), with optional streaming."""

    def pop_usage(self) -> Usage | None:
        """Usage of the most recent call, then forget it."""

    def sampling_params(self, temperature: float | None, seed: int, top_p: float) -> dict[str, Any]:
        """Keyword arguments for one AG2 create() call sampling at this temperature and seed
        (temperature None: the entry's own setting); {} when the backend cannot sample."""

    def complete_many(self, messages: list[dict[str, Any]], samplings: list[dict[str, Any]],
                      on_token: TokenSink | None = None) -> list[tuple[str, Usage]]:
        """One reply per sampling (`sampling_params` dicts) to the same messages (system message included), as
        cheaply as the backend allows (llama.cpp: one batched decode; a server: `n`); the first streams to on_token
        (None: the sink given to attach)."""

    def default_candidates(self) -> int:
        """What `strategy.candidates: auto` means with this backend (4 where candidates decode together, else 1)."""

    def secrets(self) -> list[str]:
        """Secret values (API keys) the recorder scrubs from everything it writes; [] when there are none."""

    def describe(self) -> dict[str, Any]:
        """name, provider and model id for the transcript (no secrets)."""


@runtime_checkable
class Executor(Protocol):
    """Runs code blocks for one run, in one long-lived sandbox."""

    workspace: Path
    deadline: float | None
    """A time.monotonic() instant: while a run's time budget sets it (TimeBudget.capped), no block or command runs
    past it; None: blocks keep their own timeouts."""

    def start(self) -> None:
        """Create the sandbox (container); idempotent."""

    def execute(self, code: str, language: str = "python", run: bool = True) -> ExecResult:
        """Write the block into the workspace and run it (`language`: python, sh, bash or one of the sandbox's
        languages), with the timeout and output limit applied. A block whose first line is `# filename: path` is
        saved at that path and run only when it is a .py file, a shell block's .sh file, or (`run`) a whole program
        in one of the sandbox's languages (agents/sandbox/filenames.py)."""

    def run_command(self, argv: list[str], timeout: float | None = None) -> ExecResult:
        """Run a command (e.g. pytest for a check) in the sandbox, in /workspace."""

    def session_files(self) -> list[str] | None:
        """The files whose state lives on in this sandbox, in the order they ran (a kernel session's: a variable one
        block made is there for the next); None for an executor that runs every block in a fresh process."""

    def restore(self, files: list[str]) -> None:
        """Run `files` (already in the workspace), their output dropped, so that the state they made is here: another
        sandbox's kernel rebuilt (a candidate's, a resumed run's). Nothing to do where no state lives on."""

    def describe(self) -> dict[str, Any]:
        """Kind, image id and limits, for the transcript."""

    def stop(self) -> None:
        """Remove the sandbox; safe to call twice."""


@runtime_checkable
class Recorder(Protocol):
    """Persists a run as it happens."""

    run_dir: Path

    def event(self, kind: str, /, **data: Any) -> None:
        """Append one event (message, execution, check, status) and flush it to disk."""

    def totals(self) -> dict[str, Any]:
        """Counts and sums over the run so far (turns, executions, tokens, attempts, seconds)."""

    def finish(self, status: str, reason: str, **extra: Any) -> Path:
        """Write transcript.json (called from a finally) with extra top-level keys; return its path."""


@runtime_checkable
class Display(Protocol):
    """What a run shows as it goes (agents/record/display.py: ConsoleDisplay live, NullDisplay for --json and
    benchmarks)."""

    @property
    def console(self) -> Console | None:
        """Where a model pull started by the run shows its progress (None: stderr)."""

    def info(self, line: str) -> None:
        """One notice (rich markup), e.g. a re-asked reply or a fresh attempt."""

    def run_started(self, scenario: Any, model: dict[str, Any], run_dir: Path) -> None:
        """The run begins: its scenario, the model's describe() and its folder."""

    def run_finished(self, status: str, reason: str, run_dir: Path) -> None:
        """The run ended with this status and reason."""

    def generation_started(self, name: str) -> None:
        """The model behind agent `name` starts a reply."""

    def on_token(self, text: str) -> None:
        """A piece of the reply being generated (a TokenSink)."""

    def on_message(self, event: dict[str, Any]) -> None:
        """A message was sent (the recorded event: sender, role, content, outcome, usage)."""

    def executing(self, n: int, total: int) -> ContextManager[Any]:
        """Held while block n of total runs in the sandbox."""

    def stop_live(self) -> None:
        """End any live area (before a person is asked, and when a conversation ends)."""
