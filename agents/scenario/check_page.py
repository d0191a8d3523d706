"""The `page:` check: a page (a workspace file, or a path on a server the check starts) loaded in a headless
Chromium inside the sandbox, its steps run in order (a selector exists, its text, how many are shown, a click, typed
text), and a screenshot saved under figures/, shown as a figure is. The browser is driven by
agents/sandbox/incontainer/page_check.py, a standard-library script written fresh into the checks folder before
each run; it prints one JSON line, read here into the report the model gets."""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import Field, PrivateAttr, field_validator, model_validator

from agents.feedback.figures import png_info
from agents.loop.protocols import ExecResult, Executor
from agents.sandbox import incontainer
from agents.sandbox.config import SandboxConfig
from agents.sandbox.filenames import CHECKS_DIR
from agents.sandbox.incontainer.page_check import MARKER
from agents.sandbox.safe_write import write_new_file
from agents.scenario.check_kinds import CHECKS, CheckKind
from agents.scenario.schema import Kinds, Strict

DRIVER = [Path(incontainer.__file__).with_name(name) for name in ("cdp.py", "page_steps.py", "page_check.py")]
"""The sandbox side: the DevTools client, the steps, then the script that is run."""
SCREENSHOT = "figures/page-{n}-{k}.png"
"""Where the n-th page check of a scenario saves its screenshot in the workspace the k-th time it runs there (once
per reply): each reply's screenshot is kept, so each turn of a run shows its own page."""
STEPS = Kinds()
"""Every step kind of a page check by its key."""
Selector = str


class TextMatch(Strict):
    """The text of the first element a selector matches (an input's value), white space collapsed."""

    selector: Selector = Field(min_length=1)
    """A CSS selector."""
    equals: str | None = None
    """The whole text."""
    contains: str | None = None
    """A part of the text."""

    @model_validator(mode="after")
    def _one(self) -> TextMatch:
        if (self.equals is None) == (self.contains is None):
            raise ValueError("a text step needs exactly one of equals: or contains:")
        return self


class CountMatch(Strict):
    """How many elements a selector matches that are shown (display: none and visibility: hidden do not count)."""

    selector: Selector = Field(min_length=1)
    """A CSS selector."""
    equals: int = Field(ge=0)
    """The number shown."""


class TypeText(Strict):
    """Text typed into a field, key by key (keydown, input, keyup), after clearing it; then a change event."""

    selector: Selector = Field(min_length=1)
    """A CSS selector of an input, a textarea or an editable element."""
    text: str
    """What is typed."""


@STEPS.register
class Exists(Strict):
    """At least one element matches the selector."""

    exists: Selector = Field(min_length=1)


@STEPS.register
class Text(Strict):
    """The first match's text equals or contains the given text."""

    text: TextMatch


@STEPS.register
class Count(Strict):
    """So many matches are shown."""

    count: CountMatch


@STEPS.register
class Click(Strict):
    """The first match, shown, is clicked."""

    click: Selector = Field(min_length=1)


@STEPS.register
class Type(Strict):
    """Text is typed into the first match, shown."""

    type: TypeText


Step = STEPS.union("a step")


class PageOptions(Strict):
    """What a page check opens, what it does there, and whether it keeps a screenshot."""

    open: str = Field(min_length=1)
    """A workspace file (index.html, loaded as file://), or with `start` a path on that server (`/`)."""
    start: str | None = None
    """A shell command that starts the page's server first (sh -c, in /workspace); stopped after the check."""
    port: int | None = Field(default=None, ge=1, le=65535)
    """The loopback port the started server must listen on (with `start`)."""
    ready_timeout: float = Field(default=20, gt=0, le=600)
    """Seconds the server may take to listen."""
    viewport: tuple[int, int] = (800, 600)
    """The window's width and height in pixels (the screenshot's size)."""
    steps: list[Step] = Field(default_factory=list)
    """Run in order until one fails; a step that does not hold yet is tried again for two seconds."""
    screenshot: bool = True
    """Save a screenshot of the page after the steps as figures/page-<n>-<k>.png (the n-th page check, its k-th
    run in the workspace)."""
    timeout: float | None = Field(default=None, gt=0, le=3600)
    """Seconds the whole check may take (default: the sandbox's timeout per block)."""

    @field_validator("viewport")
    @classmethod
    def _size(cls, value: tuple[int, int]) -> tuple[int, int]:
        if not all(100 <= n <= 4000 for n in value):
            raise ValueError("viewport: width and height are 100 to 4000 pixels")
        return value

    @model_validator(mode="after")
    def _server(self) -> PageOptions:
        if (self.start is None) != (self.port is None):
            raise ValueError("start: and port: go together (the server's command and the port it listens on)")
        if self.start is None and (PurePosixPath(self.open).is_absolute() or ".." in PurePosixPath(self.open).parts
                                   or "://" in self.open):
            raise ValueError(f"open: {self.open!r} must be a file of the workspace (a relative path), or a path on "
                             "the server that start: starts")
        return self


@CHECKS.register
class PageCheck(CheckKind):
    """A page loaded in a headless browser in the sandbox, its steps run, its screenshot kept."""

    page: PageOptions
    _number: int = PrivateAttr(default=1)

    def label(self) -> str:
        """`page: 'index.html' (6 steps)`."""
        steps = len(self.page.steps)
        return f"page: {self.page.open!r} ({steps} step{'' if steps == 1 else 's'})"

    def numbered(self, n: int) -> None:
        """This is the scenario's n-th page check (its screenshot's name)."""
        self._number = n

    def evaluate(self, last: ExecResult, executor: Executor,
                 base_dir: Path) -> tuple[bool, str, int, int, list[dict[str, Any]]]:
        """Run the driver in the sandbox (whatever the last block's exit code) and read its result line; the steps
        that passed count as tests passed (they rank replies that fail the same page check)."""
        for script in DRIVER:  # fresh each time: the code under test cannot change them
            write_new_file(executor.workspace, f"{CHECKS_DIR}/{script.name}", script.read_text(encoding="utf-8"))
        name = f"{CHECKS_DIR}/{DRIVER[-1].name}"
        shot = next_screenshot(executor.workspace, self._number) if self.page.screenshot else None
        spec = {**self.page.model_dump(exclude_none=True), "screenshot": shot}
        # -I: neither the workspace nor the checks folder can shadow the standard library the script imports
        result = executor.run_command(["python3", "-I", name, json.dumps(spec)], timeout=self.page.timeout)
        found, steps = read_result(result.output), len(self.page.steps)
        if found is None:
            why = "it was stopped at the time limit" if result.timed_out else f"it exited with {result.exit_code}"
            tail = "\n".join(result.output.strip().splitlines()[-10:])[-1200:]
            return False, f"the page check could not run ({why}):\n{tail or '(no output)'}", 0, steps, []
        figures = screenshot_figure(executor.workspace, shot, self.page.open) if shot and found.get("screenshot") \
            else []
        passed = int(found.get("steps_passed") or 0) if isinstance(found.get("steps_passed"), int) else 0
        return bool(found.get("passed")), report(found, self.page), min(passed, steps), steps, figures


def read_result(output: str) -> dict[str, Any] | None:
    """The driver's result (its last MARKER line), or None when it printed none."""
    for line in reversed(output.splitlines()):
        if line.startswith(MARKER):
            try:
                value = json.loads(line[len(MARKER):])
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None


def report(found: dict[str, Any], page: PageOptions) -> str:
    """What the model reads: the failed step (expected against actual) or why the page did not load, then the
    page's errors and, for a started server that failed, its log."""
    lines = []
    if found.get("no_browser"):
        return ("no headless browser in this sandbox: a page check needs Chromium in the image "
                "(`sandbox: {preset: frontend}`, then `codeduet sandbox build`)")
    if found.get("problem"):
        lines.append(str(found["problem"]))
    if found.get("failed"):
        passed, total = int(found.get("steps_passed") or 0), int(found.get("steps") or len(page.steps))
        after = total - passed - 1
        lines.append(str(found["failed"]) + (f" ({passed} step{'' if passed == 1 else 's'} before it passed"
                                             if passed else " (the first step") +
                     (f"; {after} after it not run)" if after else ")"))
    if found.get("load_note"):
        lines.append(str(found["load_note"]))
    if found.get("failed"):  # what the steps before the failed one did to the page
        lines += [str(note) for note in found.get("notes") or []]
    errors = [str(e) for e in found.get("errors") or []]
    if errors and (lines or not found.get("passed")):
        lines.append("the page's errors (uncaught exceptions, console errors, failed loads) and dialogs:")
        lines += [f"- {e}" for e in errors]
    if found.get("server_log") and (found.get("problem") or found.get("failed")):
        lines.append(f"the server's log (`{page.start}`), its end:\n{str(found['server_log']).strip()[-1000:]}")
    if found.get("browser_log"):
        lines.append(f"the browser's log, its end:\n{str(found['browser_log']).strip()}")
    return "\n".join(lines) if not found.get("passed") or lines else ""


def next_screenshot(workspace: Path, n: int) -> str:
    """The workspace path of the n-th page check's next screenshot (figures/page-1-3.png after page-1-2.png)."""
    taken = [int(m.group(1)) for p in (workspace / "figures").glob(f"page-{n}-*.png")
             if (m := re.fullmatch(rf"page-{n}-(\d+)\.png", p.name))]
    return SCREENSHOT.format(n=n, k=max(taken, default=0) + 1)


def screenshot_figure(workspace: Path, shot: str, opened: str) -> list[dict[str, Any]]:
    """The screenshot as a figure ({path, size, width, height, title}), [] when none was saved."""
    path = workspace / shot
    if not path.is_file() or path.is_symlink():
        return []
    return [{"path": shot, "size": path.stat().st_size, **png_info(path), "title": f"page {opened}"}]


BROWSER_PACKAGES = {"chromium-headless-shell", "chromium"}
"""Debian packages that put a browser the page check finds into the image (the frontend and web presets' is the
first)."""


def no_browser(sandbox: SandboxConfig) -> bool:
    """Whether a Docker sandbox's image is made without a browser: no frontend or web preset, no Chromium declared,
    and no image of the scenario's own (that one may have it)."""
    return (sandbox.kind == "docker" and "image" not in sandbox.model_fields_set
            and not BROWSER_PACKAGES & set(sandbox.debian_packages))


def number_pages(checks: list[Any]) -> None:
    """Number a scenario's page checks in order (their screenshots: figures/page-1-k.png, page-2-k.png, ...)."""
    for n, check in enumerate((c for c in checks if isinstance(c, PageCheck)), 1):
        check.numbered(n)
