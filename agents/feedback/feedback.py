"""What the user proxy tells the assistant after running its code: phrased for small models."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from agents.feedback.compiler_output import first_error_line, signal_name, summarize
from agents.feedback.dropped_defs import Kept
from agents.feedback.figures import describe
from agents.feedback.missing_files import missing_file_note, unsaved_file_note
from agents.feedback.prompts import PAGES, render, resend_files
from agents.feedback.workspace_view import current_text, files_changed_text, project_files, quote_frames
from agents.loop.codeblocks import SHELLS, segments
from agents.loop.protocols import ExecResult
from agents.sandbox.error_locals import LOCALS_HEADER
from agents.sandbox.languages import BY_TAG, LANGUAGES, language_of_path
from agents.sandbox.offline import missing_package_note
from agents.sandbox.servers import seconds, server_line
from agents.scenario.checks import CheckResult

TRACEBACK = "Traceback (most recent call last):"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
"""A terminal colour or cursor code: noise to a model reading a log."""
FRAME = re.compile(r'^\s*File "([^"]+)", line \d+')


@dataclass
class Outcome:
    """The result of one user-proxy turn: what ran, what the checks said, and the reply text."""

    kind: str
    """executed | no_code | empty | unclosed | unsupported | skipped | repeat"""
    results: list[ExecResult] = field(default_factory=list)
    checks: list[CheckResult] = field(default_factory=list)
    feedback: str = ""
    files: list[dict[str, Any]] = field(default_factory=list)
    """Files of the workspace the reply created, changed or deleted (agents/feedback/workspace_view.py)."""
    written: list[str] = field(default_factory=list)
    """Paths the reply's `# filename:` blocks saved, in order."""
    redefined: list[tuple[str, list[str]]] = field(default_factory=list)
    """Workspace modules whose functions a throwaway script of the reply defined again: (path, names)."""
    not_run: list[str] = field(default_factory=list)
    """Language tags of the reply's blocks that neither ran nor were saved (```javascript): the report names them."""
    kept: list[Kept] = field(default_factory=list)
    """Definitions a whole-file block left out that the code still needs, put back (agents/feedback/dropped_defs.py)."""

    @property
    def success(self) -> bool:
        """With checks, every check passed: they judge the workspace and the output, and the model's own run is
        information (a command-line tool run bare that printed its usage, or a failing script of its own, does not
        undo them). Without checks, the last block exited 0 (a block that fails stops the rest, except a saved
        module's own run, which the blocks after it test)."""
        if self.kind != "executed" or not self.results:
            return False
        if self.checks:
            return all(c.passed for c in self.checks)
        return self.results[-1].exit_code == 0

    @property
    def ran_clean(self) -> bool:
        """The last block exited 0, or was a command-line tool printing its usage when run bare, or a server stopped
        as servers are (not a crash)."""
        return self.kind == "executed" and bool(self.results) and \
            (self.results[-1].exit_code == 0 or self.results[-1].usage or bool(self.results[-1].server))

    @property
    def checks_passed(self) -> int:
        """How many acceptance checks passed."""
        return sum(1 for c in self.checks if c.passed)

    @property
    def tests_passed(self) -> int:
        """How many tests the pytest checks passed, in all: it ranks replies that pass the same checks."""
        return sum(c.tests_passed or 0 for c in self.checks)

    @property
    def tests(self) -> int:
        """How many tests the pytest checks ran, in all."""
        return sum(c.tests or 0 for c in self.checks)

    def summary(self) -> str:
        """One line on what happened: the checks' verdict (when there are checks) and what the last block did."""
        if self.kind != "executed" or not self.results:
            return f"nothing ran ({self.kind})"
        run = run_summary(self.results[-1])
        failed = [c for c in self.checks if not c.passed]
        if not self.checks:
            return run
        if not failed:
            return "it ran and every check passed" if self.ran_clean else f"every check passed ({run})"
        detail = first_line(next((c for c in failed if c.judged), failed[0]).detail)
        verdict = (f"{len(failed)} of {len(self.checks)} checks failed: {_failed_names(failed)}"
                   + (f" ({detail})" if detail else ""))
        return f"it ran, but {verdict}" if self.ran_clean else f"{run}, and {verdict}"

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for transcripts."""
        out = {"kind": self.kind, "success": self.success, "summary": self.summary(),
               "executions": [r.to_dict() for r in self.results], "checks": [c.to_dict() for c in self.checks]}
        if self.files or self.written:
            out.update(files=self.files, written=self.written)
        if self.not_run:
            out["not_run"] = self.not_run
        if self.kept:
            out["kept"] = [k.to_dict() for k in self.kept]
        return out


def run_summary(last: ExecResult) -> str:
    """What the last block did, in a few words: a command-line tool's usage exit is said as such, not as a failure."""
    if last.usage:
        return (f"{last.filename}, run with no arguments, printed its usage (exit {last.exit_code}), as a "
                "command-line tool does")
    if last.server:
        return f"it started a {server_line(last.server)}, as a server is"
    if last.exit_code == 0:
        return "it ran (exit code 0)"
    if last.timed_out:
        return f"it was stopped at the time limit (exit code {last.exit_code})"
    if last.sandbox_lost:
        return f"the sandbox container was {last.sandbox_lost.split(' (')[0]} while it ran"
    if last.oom_killed:
        return "it ran out of memory"
    if last.disk_full:
        return "it filled the workspace disk (No space left on device)"
    if last.refused:
        return f"its file was not saved: {last.refused}"
    crash = signal_name(last.exit_code)
    why = first_error_line(last.output) if TRACEBACK not in last.output else None
    return f"it failed with exit code {last.exit_code}" + (f" ({crash})" if crash else "") + \
        f": {why or error_line(last.output)}"


def first_line(text: str, limit: int = 160) -> str:
    """The first of pytest's 'E' lines (the assertion), else the first non-empty line; shortened. An assertion
    that ends with a colon ("2 of 3 examples failed:", a command check's "it exited with 1:") announces what follows,
    so its next ('E') line is joined."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln[1:].strip() for ln in lines if ln.startswith("E ")]
    line = errors[0] if errors else (lines[0] if lines else "")
    if errors and line.endswith(":") and len(errors) > 1:
        line = f"{line} {errors[1]}"
    elif not errors and line.endswith(":") and len(lines) > 1:  # "it exited with 1:" and the compiler's first error
        rest = "\n".join(lines[1:])
        line = f"{line} {first_error_line(rest) or lines[1]}"
    return line if len(line) <= limit else line[:limit] + "…"


def error_line(output: str, limit: int = 160) -> str:
    """The last line of a traceback (the exception), or the last output line; the variables the sandbox prints
    under a traceback (agents/sandbox/error_locals.py) are not it."""
    cut = output.rfind("\n" + LOCALS_HEADER + " (")
    lines = [ln.strip() for ln in (output if cut < 0 else output[:cut]).strip().splitlines() if ln.strip()]
    line = lines[-1] if lines else "(no output)"
    return line if len(line) <= limit else line[:limit] + "…"


def shorten_traceback(output: str, keep_before: int = 15) -> str:
    """Keep the output before the error, and the traceback frames of the user's own files plus the error."""
    idx = output.rfind(TRACEBACK)
    if idx < 0:
        return output.strip()
    before = output[:idx].rstrip().splitlines()[-keep_before:]
    lines = output[idx:].splitlines()
    kept, i = [lines[0]], 1
    while i < len(lines):
        m = FRAME.match(lines[i])
        if m:
            own = not m.group(1).startswith(("/usr/", "<frozen", "/lib/")) and "site-packages" not in m.group(1)
            frame = [lines[i]]
            while i + 1 < len(lines) and lines[i + 1].startswith("    ") and not FRAME.match(lines[i + 1]):
                i += 1
                frame.append(lines[i])
            if own:
                kept.extend(frame)
        else:
            kept.append(lines[i])
        i += 1
    return "\n".join([*before, *kept]).strip()


def _grouped(checks: list[CheckResult]) -> tuple[list[CheckResult], list[CheckResult]]:
    """The checks to name one by one, and the output checks a crash left unjudged when there are two or more (said
    once: listed one by one, thirteen identical lines came before the traceback that says what to fix)."""
    unjudged = [c for c in checks if not c.judged]
    if len(unjudged) < 2:
        return checks, []
    return [c for c in checks if c.judged], unjudged


def _checks_text(checks: list[CheckResult]) -> str:
    """One line per check (and why it failed), the unjudged output checks in one line."""
    named, unjudged = _grouped(checks)
    lines = [f"- {'PASSED' if c.passed else 'FAILED'} {c.name}" + (f"\n  {c.detail}" if c.detail else "")
             for c in named]
    if unjudged:
        lines.append(f"- FAILED {len(unjudged)} output checks, {unjudged[0].detail}")
    return "\n".join(lines)


def _failed_names(failed: list[CheckResult]) -> str:
    """The failed checks by name, the unjudged output checks counted instead of named."""
    named, unjudged = _grouped(failed)
    return "; ".join([c.name for c in named] + ([f"{len(unjudged)} output checks"] if unjudged else []))


def _failure(last: ExecResult) -> tuple[str, str]:
    """The title over a failed block's output, and the hint on what to do about it."""
    if last.refused:
        return "Not saved", "Use a plain relative path inside the current directory."
    if last.sandbox_lost:
        return ("Output before the sandbox stopped", "The sandbox container was stopped from outside while it ran, "
                "not by your code; the files of earlier blocks are still there and it may be sent again.")
    if last.timed_out:
        return ("Output before it was stopped",
                "It was stopped at the time limit: remove infinite loops or make it faster.")
    if last.oom_killed:
        return "Output before it was killed", "It ran out of memory: use less memory."
    if last.disk_full:
        return "Error", "It filled the workspace disk (its size is limited): write less data, or delete files."
    crash = signal_name(last.exit_code)
    if crash and last.exit_code != 137:
        return (f"Crashed: {crash}", "The program was killed by that signal: find the bad memory access, null "
                "pointer, division or assertion that causes it.")
    return "Error", "Fix the cause of the error."


def condensed(output: str) -> str:
    """A failed block's output as the model reads it: a Python traceback cut to the user's own frames; a compiler's,
    a sanitizer's or a runtime's report led by its first errors (agents/feedback/compiler_output.py); else as it is."""
    output = ANSI.sub("", output)
    if TRACEBACK in output:
        return shorten_traceback(output)
    return summarize(output) or output.strip()


def _output(outcome: Outcome) -> str:
    """Every block's output in order; among several, a command-line tool's usage exit is introduced as such."""
    several = len(outcome.results) > 1
    parts = [(f"[codeduet: {r.filename}, run with no arguments, printed its usage (exit {r.exit_code}), as a "
              f"command-line tool does]\n" if r.usage and several else "") + _log(r) for r in outcome.results]
    return "\n".join(parts).strip() or "(no output)"


def _log(result: ExecResult) -> str:
    """A block's output without terminal colours (Flask's and werkzeug's log is coloured); a server's without the
    sandbox's note on it (the report says it in words)."""
    text = ANSI.sub("", result.output).rstrip()
    note = f"[codeduet: {server_line(result.server)};" if result.server else None
    cut = text.rfind(note) if note else -1
    return text[:cut].rstrip() + text[text.find("]", cut) + 1:] if cut >= 0 else text


def _server_words(server: dict[str, Any]) -> dict[str, str]:
    """The port, how long it took to listen and how it was stopped, for the server reports."""
    stopped = f"stopped at the time limit, after {seconds(server.get('stopped_s'))} s, while it still printed" \
        if server.get("at_limit") else "left running in the background, so it was stopped when the block ended" \
        if server.get("left") else f"stopped after {seconds(server.get('stopped_s'))} s"
    return {"port": str(server.get("port")), "listen_s": seconds(server.get("listen_s")), "stopped": stopped}


REFUSED = ("connection refused", "econnrefused", "connectionrefusederror")
"""How a refused connection reads (in lower case) in Python's, Node's, Go's and curl's errors."""


def server_stopped_note(outcome: Outcome) -> str:
    """When the last block failed on a refused connection to the port a block before it in the reply served on
    (stopped with its block, as servers are): that it was gone, and how a block that talks to it starts it."""
    last = outcome.results[-1]
    served = [r for r in outcome.results[:-1] if r.server]
    if not served or not any(marker in last.output.lower() for marker in REFUSED):
        return ""
    server = served[-1]
    return render("server_stopped", path=server.filename or "app.py", port=server.server.get("port"))


def _your_run(outcome: Outcome) -> str:
    """What the model's own run did, told as information: with checks, they decide success, not this run."""
    last = outcome.results[-1]
    if last.usage:
        return render("run_usage", path=last.filename, exit_code=last.exit_code, output=_output(outcome))
    if last.server:
        return render("run_server", **_server_words(last.server), output=_output(outcome))
    if last.exit_code == 0:
        return render("run_ok", output=_output(outcome))
    output = condensed(last.output) or "(no output)"
    notes = [ln for ln in last.output.splitlines() if ln.startswith("[codeduet: ")]
    if _shown_by_a_check(output, outcome.checks):
        return render("run_failed_same", exit_code=last.exit_code, notes="".join(f"\n{n}" for n in notes))
    return render("run_failed", exit_code=last.exit_code, error_title=_failure(last)[0], output=output)


ADDRESSES = re.compile(r"0x[0-9a-f]+|==\d+==|/workspace/")


def _shown_by_a_check(output: str, checks: list[CheckResult]) -> bool:
    """Whether a failed check's report already holds this error (the check built and ran the same program, as a
    sanitizer's report, say): then it is not shown twice. Addresses and process ids differ between the runs."""
    lines = [ADDRESSES.sub("", ln).strip() for ln in output.splitlines()
             if ln.strip() and not ln.startswith("[codeduet: ")]
    if len(lines) < 2:
        return False
    shown = [ADDRESSES.sub("", c.detail) for c in checks if not c.passed and c.detail]
    return any(all(ln in detail for ln in lines) for detail in shown)


def runs_here(languages: list[str] | tuple[str, ...] = ()) -> str:
    """The blocks that run in a sandbox with these languages, as the reports name them."""
    tags = ["```python", *(f"```{LANGUAGES[name].tags[0]}" for name in languages)]
    return f"{', '.join(tags)} and shell (```sh, ```bash)"


def rewrite_in(languages: list[str] | tuple[str, ...] = ()) -> str:
    """What a reply with nothing to run is asked to be rewritten as."""
    if not languages:
        return "one complete Python script in a ```python block"
    return "complete code in one of those languages, each file in its own block"


def code_ask(content: str, languages: list[str] | tuple[str, ...] = (), kind: str = "unclosed") -> str:
    """What a reply that is cut off, empty or without code is asked to send: a Python script, or, in a sandbox with
    languages, the file or program in the language of the block that was cut (else the sandbox's one language)."""
    cut = next((s.language for s in reversed(segments(content)) if s.fence), "")
    lang = BY_TAG[cut].name if cut in BY_TAG and BY_TAG[cut].name in languages else \
        languages[0] if len(languages) == 1 else None
    if lang is None:
        return "script in one ```python block" if kind == "unclosed" else "Python script in a ```python block"
    return f"file or program in one ```{LANGUAGES[lang].tags[0]} block"


def resend_file(outcome: Outcome, workspace: Path | None = None) -> str:
    """How the whole corrected file is asked for, in the language of the file the reply saved; when it saved none,
    in the project's one language (a JavaScript project whose reply ran a Python script is asked for its .js file
    again, not for Python); else in its last block's: ```python with `# filename:`, ```c with `// filename:` ..."""
    langs = [language_of_path(path) for path in outcome.written]
    lang = next((x.name for x in langs if x is not None), None) or page_kind(outcome.written) or \
        (project_language(workspace) if workspace is not None else None) or outcome.results[-1].language
    return resend_files(lang)


def page_kind(paths: list[str]) -> str | None:
    """When every saved file is a page or style sheet (PAGES: html, css, svg), the first one's tag; else None (a
    Flask app saved with its template is asked for as Python)."""
    kinds = [{"htm": "html"}.get(s, s) for s in (PurePosixPath(p).suffix.lower().lstrip(".") for p in paths)]
    return kinds[0] if kinds and set(kinds) <= set(PAGES) else None


def project_language(workspace: Path) -> str | None:
    """The language of the workspace's source files when they are all of one language other than Python (a Go or
    JavaScript project), else None."""
    paths = [rel for rel, _ in project_files(workspace)]
    found = {lang.name for rel in paths
             if (lang := language_of_path(rel)) is not None and not rel.endswith((".h", ".hh", ".hpp"))}
    python = any(rel.endswith(".py") for rel in paths)
    return found.pop() if len(found) == 1 and not python else None


def not_run_text(not_run: list[str], languages: list[str] | tuple[str, ...] = ()) -> str:
    """The line naming the reply's blocks that did not run (a language the sandbox does not run), and why."""
    tags = [f"```{lang}" for lang in dict.fromkeys(not_run)]
    blocks = f"your {tags[0]} block" if len(not_run) == 1 else \
        f"your {', '.join(tags[:-1])} and {tags[-1]} blocks" if len(tags) > 1 else f"your {tags[0]} blocks"
    return render("not_run", blocks=blocks, runs=runs_here(languages))


def execution_feedback(outcome: Outcome, workspace: Path | None = None, files_task: bool = False,
                       languages: list[str] | tuple[str, ...] = (), kernel: bool = False) -> str:
    """The reply for an executed turn, after a line naming any block that did not run
    (agents/feedback/prompts/not_run.md).
    `files_task`: the task is about Python files (agents/loop/briefing.py works_on_files), so failing checks judge
    them."""
    report = _report(outcome, workspace, files_task, kernel)
    if workspace is not None:
        report = quote_frames(report, workspace)
    return f"{not_run_text(outcome.not_run, languages)}\n\n{report}" if outcome.not_run else report


def _report(outcome: Outcome, workspace: Path | None = None, files_task: bool = False, kernel: bool = False) -> str:
    """The report on what ran. With checks: their verdict first (they decide success), then what the model's own
    run did (information), the files it changed, and (when a check failed) the current text of the files the reply
    wrote, so the model sees whether its change landed. Without checks: what ran. What it asks for next is what the
    failure is in: the file a reply saved; in a task about files whose checks failed, the file too (a reply that
    only ran the tests or a command is not what the checks judge); else the script, or the shell commands."""
    last = outcome.results[-1]
    files = render("files_changed", files=files_changed_text(outcome.files)) + "\n\n" if outcome.files else ""
    figures = [f for r in outcome.results for f in r.figures]
    if figures:  # what was drawn, never the pixels
        files += render("figures_made", figures="\n".join(f"- {describe(f)}" for f in figures)) + "\n\n"
    for path, names in outcome.redefined:  # the fix went into a throwaway script: say so, and how to save it
        files += render("unsaved_module", path=path, names=", ".join(f"{n}()" for n in names[:4])) + "\n\n"
    if outcome.kept:  # a whole-file block left out what the code still needs: it was kept
        files += "\n".join(k.text() for k in outcome.kept) + "\n\n"
    if last.exit_code != 0 and (missing := missing_file_note(last.output, workspace)):
        files += missing + "\n\n"  # a file it asked for is not there: which files are
    if last.exit_code != 0 and (package := missing_package_note(last.output, workspace)):
        files += package + "\n\n"  # a module the image lacks: the declaration that would have provided it
    if last.exit_code != 0 and (stopped := server_stopped_note(outcome)):
        files += stopped + "\n\n"  # a block asked a server an earlier block had started, and it was gone
    failed = [c for c in outcome.checks if not c.passed]
    if unsaved := unsaved_file_note([c.detail for c in failed], last.filename, workspace):
        files += unsaved + "\n\n"  # the check runs a file the reply's code was never saved as
    subject, resend = ("script", "the complete corrected script in one ```python block")
    if kernel:  # a live session: the blocks that worked need not run again
        subject, resend = ("code", "the corrected code in one ```python block (what earlier blocks defined is still "
                                   "there)")
    if outcome.written or (files_task and failed):
        subject, resend = ("file" if outcome.written else "code"), resend_file(outcome, workspace)
    elif last.language in SHELLS:  # a shell block failed: asked again as shell, not as Python
        subject, resend = "commands", f"the corrected commands in one ```{last.language} block"
    elif last.language in LANGUAGES:  # a C, Go, ... program: asked again in its language
        tag = LANGUAGES[last.language].tags[0]
        subject, resend = "program", f"the complete corrected program in one ```{tag} block"
    if outcome.checks:
        if not failed:
            return render("checks_passed", checks=_checks_text(outcome.checks), run=_your_run(outcome), files=files)
        now = current_text(workspace, outcome.written) if workspace is not None and outcome.written else ""
        if now:
            files += render("files_now", files=now) + "\n\n"
        crashed = last.exit_code != 0 and not last.usage and not last.server
        return render("checks_failed", failed=len(failed), total=len(outcome.checks),
                      checks=_checks_text(outcome.checks), run=_your_run(outcome), files=files,
                      hint=_failure(last)[1] + " " if crashed else "", subject=subject, resend=resend)
    if last.usage:
        return render("exec_usage", path=last.filename, exit_code=last.exit_code, output=_output(outcome),
                      files=files)
    if last.server:
        return render("exec_server", **_server_words(last.server), output=_output(outcome), files=files)
    if last.exit_code != 0:
        title, hint = _failure(last)
        return render("exec_failed", exit_code=last.exit_code, error_title=title, files=files, subject=subject,
                      resend=resend, output=condensed(last.output) or "(no output)", hint=hint)
    return render("exec_ok", output=_output(outcome), files=files)
