"""Rendering a run in the terminal with rich: streamed tokens, highlighted code, execution results."""

from __future__ import annotations

from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, ContextManager, Iterator

from rich.console import Console, Group
from rich.live import Live
from rich.markdown import Markdown
from rich.panel import Panel
from rich.spinner import Spinner
from rich.text import Text

STYLE = {"task": "cyan", "assistant": "green", "execution": "yellow", "human": "magenta", "user_proxy": "blue"}


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


def outcome_text(outcome: dict[str, Any]) -> Text:
    """One line per execution and check: exit code, time, flags."""
    text = Text()
    for e in outcome.get("executions", []):
        ok = e.get("exit_code") == 0
        flags = [f for f in ("timed_out", "truncated", "oom_killed", "disk_full") if e.get(f)]
        text.append(f"{'✔' if ok else '✘'} {e.get('filename') or 'block'} exit={e.get('exit_code')} "
                    f"{e.get('duration_s', 0):.2f}s {' '.join(flags)}\n", style="green" if ok else "red")
    for c in outcome.get("checks", []):
        text.append(f"{'✔' if c['passed'] else '✘'} check {c['name']}\n", style="green" if c["passed"] else "red")
    return text


def message_panel(event: dict[str, Any], time: str | None = None) -> Panel:
    """A panel for one transcript message (used live and by replay)."""
    role = event.get("role", "user_proxy")
    body: Any = Markdown(event.get("content") or "*(empty)*", code_theme="monokai")
    parts = [body]
    if event.get("outcome"):
        parts.insert(0, outcome_text(event["outcome"]))
    usage = event.get("usage") or {}
    subtitle = " ".join(f"{k}={v}" for k, v in usage.items()
                        if k in ("prompt_tokens", "completion_tokens", "seconds", "first_token_s"))
    title = f"{event.get('sender', '?')} · {role}" + (f" · {time}" if time else "")
    return Panel(Group(*parts), title=title, title_align="left", subtitle=subtitle or None,
                 border_style=STYLE.get(role, "white"))


class ConsoleDisplay(NullDisplay):
    """Live terminal view: a spinner while the model thinks, tokens as they stream, panels per message."""

    def __init__(self, console: Console | None = None):
        self.console: Console = console or Console()
        self.live: Live | None = None
        self.buffer = ""
        self.name = "assistant"

    def info(self, line: str) -> None:
        """One informational line."""
        self.console.print(line)

    def run_started(self, scenario: Any, model: dict[str, Any], run_dir: Path) -> None:
        """Header line."""
        self.console.rule(f"[bold]{scenario.name}[/] · model {model.get('name')} ({model.get('provider')}) · "
                          f"sandbox {scenario.sandbox.kind}")

    def run_finished(self, status: str, reason: str, run_dir: Path) -> None:
        """Footer line."""
        color = "green" if status == "success" else "red"
        self.console.rule(f"[{color}]{status}[/] · {reason}")

    def generation_started(self, name: str) -> None:
        """Spinner until the first token arrives."""
        self.stop_live()
        self.name, self.buffer = name, ""
        if self.console.is_terminal:
            self.live = Live(Spinner("dots", text=f"{name} is generating…"), console=self.console,
                             refresh_per_second=10, transient=True)
            self.live.start()

    def on_token(self, text: str) -> None:
        """Show the reply as it streams (last lines only)."""
        self.buffer += text
        if self.live is not None:
            tail = "\n".join(self.buffer.splitlines()[-15:])
            self.live.update(Panel(Text(tail), title=f"{self.name} · streaming", title_align="left",
                                   border_style="dim"))

    def stop_live(self) -> None:
        """End the live area."""
        if self.live is not None:
            self.live.stop()
            self.live = None

    def on_message(self, event: dict[str, Any]) -> None:
        """Print the final message."""
        self.stop_live()
        self.console.print(message_panel(event))

    @contextmanager
    def executing(self, n: int, total: int) -> Iterator[None]:
        """Spinner while a block runs in the sandbox."""
        with self.console.status(f"running block {n}/{total} in the sandbox…", spinner="dots"):
            yield
