"""Rendering a run in the terminal with rich: streamed tokens, highlighted code, execution results."""

from __future__ import annotations

from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, ContextManager, Iterator

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.panel import Panel
from rich.spinner import Spinner
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from agents.feedback.figures import describe
from agents.loop.codeblocks import segments
from agents.loop.roles import ASSISTANT, DEVELOPER, ROLES
from agents.record.run_folder import LIVE_FILE
from agents.sandbox.servers import server_line

STYLE = {"task": "cyan", ASSISTANT: DEVELOPER.style,
         **{role.name: role.style for role in ROLES if role is not DEVELOPER},
         "execution": "yellow", "human": "magenta", "user_proxy": "blue"}


class NullDisplay:
    """Shows no conversation (--json, batch workers, benchmarks); notices still go to stderr."""

    console: Console | None = None
    """No console of its own: a model pull started by the run shows its progress on stderr."""

    def info(self, line: str) -> None:
        """One notice (e.g. an orphaned container removed), on stderr so stdout stays machine-readable."""
        Console(stderr=True, highlight=False).print(line, soft_wrap=True)

    def run_started(self, scenario: Any, model: dict[str, Any], run_dir: Path) -> None: ...
    def run_finished(self, status: str, reason: str, run_dir: Path) -> None: ...
    def on_token(self, text: str) -> None: ...
    def on_message(self, event: dict[str, Any]) -> None: ...
    def generation_started(self, name: str) -> None: ...
    def stop_live(self) -> None: ...

    def executing(self, n: int, total: int) -> ContextManager[None]:
        """No spinner."""
        return nullcontext()


def run_label(e: dict[str, Any]) -> str:
    """What an execution is called: a shell block by its command (`$ python hello.py (block02.sh)`), any other
    block by its file."""
    name = e.get("filename") or "block"
    return f"$ {e['command']} ({name})" if e.get("command") else name


def outcome_text(outcome: dict[str, Any]) -> Text:
    """One line per execution and check: exit code, time, flags; then the blocks that did not run."""
    text = Text()
    for e in outcome.get("executions", []):
        # a command-line tool run bare printed its usage; a server was stopped as servers are
        ok = e.get("exit_code") == 0 or bool(e.get("usage")) or bool(e.get("server"))
        flags = [f for f in ("timed_out", "truncated", "oom_killed", "disk_full", "sandbox_lost", "usage")
                 if e.get(f)]
        text.append(f"{'✔' if ok else '✘'} {run_label(e)} exit={e.get('exit_code')} "
                    f"{e.get('duration_s', 0):.2f}s {' '.join(flags)}\n", style="green" if ok else "red")
        if e.get("server"):
            text.append(f"  ⇄ {server_line(e['server'])}\n", style="cyan")
        table = e.get("table") or {}
        if table.get("shape"):
            text.append(f"  ▦ {table.get('kind', 'table')} {table['shape'][0]} × {table['shape'][1]}\n", style="cyan")
        for figure in e.get("figures") or []:
            text.append(f"  🖼 figure {describe(figure)}\n", style="cyan")
    for c in outcome.get("checks", []):
        text.append(f"{'✔' if c['passed'] else '✘'} check {c['name']}\n", style="green" if c["passed"] else "red")
        for figure in c.get("figures") or []:  # a page check's screenshot
            text.append(f"  🖼 screenshot {describe(figure)}\n", style="cyan")
    for lang in outcome.get("not_run", []):
        text.append(f"· ```{lang} block not run (not a language the sandbox runs)\n", style="yellow")
    return text


def message_body(content: str) -> list[RenderableType]:
    """Prose as written (its line breaks kept) and code highlighted between its fences, never re-flowed: a long
    code line is cropped at the edge, so what is shown is the code as it runs. The blocks are those
    agents/loop/codeblocks.py finds (`segments`): a fence shown as code is one that runs, is saved or is
    reported."""
    parts: list[RenderableType] = []
    for s in segments(content or "(empty)"):
        if not s.fence:
            if s.text.strip("\n"):
                parts.append(Text(s.text.strip("\n")))
            continue
        parts.append(Text(s.fence, style="dim", no_wrap=True, overflow="crop"))
        parts.append(Syntax(s.text.rstrip("\n"), s.language or "python", theme="monokai", word_wrap=False,
                            background_color="default"))
        if s.closed:
            parts.append(Text("```", style="dim"))
    return parts


QA_REPORT = "\n\nQA report ("
"""Where a team's QA report starts inside an execution report (agents/feedback/prompts/team_qa_report.md)."""


def message_title(event: dict[str, Any], time: str | None = None) -> tuple[str, str]:
    """'sender · role · time', and the usage line ('prompt_tokens=... seconds=...')."""
    usage = event.get("usage") or {}
    subtitle = " ".join(f"{k}={v}" for k, v in usage.items()
                        if k in ("prompt_tokens", "completion_tokens", "seconds", "first_token_s"))
    return f"{event.get('sender', '?')} · {event.get('role', 'user_proxy')}" + (f" · {time}" if time else ""), subtitle


def shown_content(event: dict[str, Any]) -> str:
    """What a message shows: its content; an execution report without the QA report it carries, which the team's
    QA message right after it shows (the transcript keeps the whole text the developer read)."""
    content = event.get("content") or ""
    cut = content.find(QA_REPORT) if event.get("outcome") else -1
    return content[:cut].rstrip() if cut > 0 else content


def message_panel(event: dict[str, Any], time: str | None = None) -> Panel:
    """A panel for one transcript message (used live and by replay)."""
    role = event.get("role", "user_proxy")
    parts = message_body(shown_content(event))
    if event.get("outcome"):
        parts.insert(0, outcome_text(event["outcome"]))
    title, subtitle = message_title(event, time)
    return Panel(Group(*parts), title=title, title_align="left", subtitle=subtitle or None,
                 border_style=STYLE.get(role, "white"))


def show_message(console: Console, event: dict[str, Any], time: str | None = None) -> None:
    """One message: a panel in a terminal; with no terminal (a pipe, a file, CI), plain text with no boxes, the
    content exactly as sent, so code copied from it runs."""
    if console.is_terminal:
        console.print(message_panel(event, time))
        return
    title, subtitle = message_title(event, time)
    console.print(Text(f"--- {title}" + (f" ({subtitle})" if subtitle else "")), soft_wrap=True)
    if event.get("outcome"):
        console.print(outcome_text(event["outcome"]), end="", soft_wrap=True)
    console.print(Text(shown_content(event) or "(empty)"), soft_wrap=True)


def heading(console: Console, text: str, style: str = "") -> None:
    """A section or status line that is never cut: a rule with the text when it fits the terminal, else (and with
    no terminal) the text on its own line, wrapped by the terminal if need be. `text` may hold rich markup."""
    plain = Text.from_markup(text).plain
    if console.is_terminal and len(plain) + 6 <= console.width:
        console.rule(text, style=style or "rule.line")
        return
    console.print(text if console.is_terminal else Text(plain), soft_wrap=True)


def show_table(console: Console, table: Table, optional: tuple[str, ...] = ()) -> None:
    """A table whose no_wrap columns (ids, paths, statuses) are never cut. In a narrow terminal the `optional`
    columns are left out, in that order, until it fits; if it still does not, it is printed as wide as it needs
    (the terminal wraps its lines, whole). With no terminal: plain columns, no box, nothing left out."""
    def minimum() -> int:
        return table.__rich_measure__(console, console.options.update(width=10_000)).minimum

    if not console.is_terminal:
        table.box, table.show_edge, table.title_style = None, False, ""
    else:
        for name in optional:
            if minimum() <= console.width:
                break
            table.columns[:] = [c for c in table.columns if c.header != name]
        if minimum() > console.width:
            table.pad_edge = False
    prior = console.width
    console.width = max(prior, minimum()) if console.is_terminal else \
        table.__rich_measure__(console, console.options.update(width=10_000)).maximum
    try:
        console.print(table)
    finally:
        console.width = prior


LIVE_ENV = "CODEDUET_LIVE_REPLY"
"""Set (by `codeduet ui`): a --json run also writes the reply being generated to LIVE_FILE in its run folder (a
run in a terminal always does)."""


class FileDisplay(NullDisplay):
    """No terminal view; the reply being generated is kept in the run folder's LIVE_FILE, token by token, for a page
    that follows the run (`codeduet ui`); it is emptied when the message is complete."""

    def __init__(self) -> None:
        self.path: Path | None = None

    def run_started(self, scenario: Any, model: dict[str, Any], run_dir: Path) -> None:
        self.path = Path(run_dir) / LIVE_FILE

    def generation_started(self, name: str) -> None:
        if self.path is not None:
            try:
                self.path.write_text("", encoding="utf-8")
            except OSError:  # a full disk: only this view misses it; the next event says so and ends the run
                pass

    def on_token(self, text: str) -> None:
        if text and self.path is not None:  # an empty piece is a heartbeat (agents/loop/protocols.py TokenSink)
            try:
                with open(self.path, "a", encoding="utf-8") as fh:
                    fh.write(text)
            except OSError:
                pass

    def on_message(self, event: dict[str, Any]) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)

    def run_finished(self, status: str, reason: str, run_dir: Path) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)


class ConsoleDisplay(FileDisplay):
    """Live terminal view: a spinner while the model thinks, tokens as they stream, panels per message; the reply
    being generated is also kept in the run folder for a page following the run (FileDisplay)."""

    def __init__(self, console: Console | None = None):
        super().__init__()
        self.console: Console = console or Console()
        self.live: Live | None = None
        self.buffer = ""
        self.name = "assistant"

    def info(self, line: str) -> None:
        """One informational line."""
        self.console.print(line)

    def run_started(self, scenario: Any, model: dict[str, Any], run_dir: Path) -> None:
        """Header line."""
        super().run_started(scenario, model, run_dir)
        heading(self.console, f"[bold]{escape(scenario.name or '')}[/] · model {model.get('name')} "
                              f"({model.get('provider')}) · sandbox {scenario.sandbox.kind}"
                              + (f" [bold yellow]network {scenario.sandbox.network}[/]"
                                 if scenario.sandbox.network != "none" else ""))

    def run_finished(self, status: str, reason: str, run_dir: Path) -> None:
        """Footer line."""
        super().run_finished(status, reason, run_dir)
        color = "green" if status == "success" else "red"
        heading(self.console, f"[{color}]{status}[/] · {escape(reason)}")

    def generation_started(self, name: str) -> None:
        """Spinner until the first token arrives."""
        super().generation_started(name)
        self.stop_live()
        self.name, self.buffer = name, ""
        if self.console.is_terminal:
            self.live = Live(Spinner("dots", text=f"{name} is generating…"), console=self.console,
                             refresh_per_second=10, transient=True)
            self.live.start()

    def on_token(self, text: str) -> None:
        """Show the reply as it streams (last lines only)."""
        if not text:  # a heartbeat (agents/loop/protocols.py TokenSink)
            return
        super().on_token(text)
        self.buffer += text
        if self.live is not None:
            tail = "\n".join(self.buffer.splitlines()[-15:])
            self.live.update(Panel(Text(tail, no_wrap=True, overflow="crop"), title=f"{self.name} · streaming",
                                   title_align="left",
                                   border_style="dim"))

    def stop_live(self) -> None:
        """End the live area."""
        if self.live is not None:
            self.live.stop()
            self.live = None

    def on_message(self, event: dict[str, Any]) -> None:
        """Print the final message."""
        super().on_message(event)
        self.stop_live()
        show_message(self.console, event)

    @contextmanager
    def executing(self, n: int, total: int) -> Iterator[None]:
        """Spinner while a block runs in the sandbox."""
        with self.console.status(f"running block {n}/{total} in the sandbox…", spinner="dots"):
            yield
