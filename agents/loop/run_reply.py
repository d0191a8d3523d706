"""Running one assistant reply in a sandbox: its blocks in order, then the checks, then the report.

The proxy runs every kept reply through here in the attempt's own sandbox; candidates (agents/loop/candidates.py) run
through the same function, each in a fresh sandbox on a copy of the workspace.
"""

from __future__ import annotations

import re
from contextlib import nullcontext
from typing import Callable

from agents.feedback.dropped_defs import with_needed
from agents.feedback.feedback import Outcome, code_ask, execution_feedback, rewrite_in, runs_here
from agents.feedback.figures import figures_of, table_of
from agents.feedback.prompts import render
from agents.feedback.usage_exit import is_usage_exit
from agents.feedback.workspace_view import changes, hidden, redefined_modules, snapshot
from agents.loop.budget import TimeBudget
from agents.loop.codeblocks import SHELLS, CodeBlock, classify_reply, extract_code_blocks, first_command
from agents.loop.protocols import Display, Executor
from agents.sandbox.filenames import TASK_FILE, TASK_PAGE, TASK_SOURCE, task_filename
from agents.scenario.checks import run_checks
from agents.scenario.spec import Scenario

MARKUP = {"html": "<!-- filename: index.html -->", "css": "/* filename: style.css */", "jsx": "// filename: App.jsx",
          "svg": "<!-- filename: image.svg -->"}
"""Block tags of a page's files, which are saved under the name their first line gives and never run: how that line
is written."""
COMMENT_OPENER = re.compile(r"<!--|//|/\*|#")
COMMENT_CLOSER = {"<!--": " -->", "/*": " */"}
"""A first-line comment a block is named by (TASK_FILE, TASK_PAGE, TASK_SOURCE), and how the `filename:` line in its
form ends."""


def run_reply(content: str, scenario: Scenario, executor: Executor, *, display: Display | None = None,
              budget: TimeBudget | None = None,
              seen: Callable[[str], Outcome | None] | None = None) -> Outcome:
    """Save and run the reply's blocks in order (a Python or shell block runs; a `# filename:` block saves its file,
    and runs it when it is Python or a shell block's script), stopping at the first failure; then the checks,
    whatever the exit code, unless nothing was saved or run (a refused file). A block of another language is named
    in the report as not run. seen(content) answers a reply that must not run (code that already ran) instead."""
    kind = classify_reply(content)  # an unclosed block (cut off) is incomplete code: never run it
    languages = scenario.sandbox.languages
    if kind in ("empty", "unclosed", "no_code"):
        return Outcome(kind, feedback=render(kind, what=code_ask(content, languages, kind)))
    blocks = [named_by_task(b, scenario) for b in extract_code_blocks(content)]
    # Python, shell and the sandbox's languages to run, and files to save (`# filename:`)
    runnable = [b for b in blocks if b.runs_in(languages) or b.filename is not None]
    not_run = [b.language for b in blocks if b not in runnable and not b.shown_only]  # said, never dropped silently
    markup = next((lang for lang in not_run if lang in MARKUP), None)
    if not runnable and markup:  # a page's files are saved, never run: they need their name
        return Outcome("unsupported", not_run=not_run, feedback=render("unsaved_markup", language=markup,
                                                                      example=MARKUP[markup]))
    if not runnable:
        return Outcome("unsupported", not_run=not_run, feedback=render(
            "unsupported", language=(not_run or [blocks[0].language])[0], runs=runs_here(languages),
            rewrite=rewrite_in(languages)))
    answered = seen(content) if seen is not None else None
    if answered is not None:
        return answered
    budget = budget or TimeBudget(None)
    outcome = Outcome("executed", not_run=not_run)
    workspace = executor.workspace
    start = before = snapshot(workspace)
    for i, block in enumerate(runnable):
        named = block.filename is not None
        showing = display.executing(len(outcome.results) + 1, len(runnable)) if display else nullcontext()
        script, kept = with_needed(block.script, workspace) if named else (block.script, None)
        # a source file the reply's shell block builds afterwards is only saved (not built and run twice)
        built_later = named and any(b.runnable_as in SHELLS for b in runnable[i + 1:])
        with showing, budget.capped(executor):
            result = executor.execute(script, block.runnable_as or "python", run=not built_later)
        if kept is not None and not result.refused:
            # what the reply dropped but the code still needs (agents/feedback/dropped_defs.py)
            outcome.kept.append(kept)
        if result.language in SHELLS and not named:
            result.command = first_command(block.script)
        after = snapshot(workspace)
        result.files, before = changes(before, after), after
        result.figures, result.table = figures_of(workspace, result.files), table_of(workspace, result.filename)
        if named and not result.refused and result.filename and not hidden(result.filename):
            outcome.written.append(result.filename)  # (a script named as a data file ran as blockNN.py)
            result.usage = is_usage_exit(result, block.code)  # a command-line tool run bare: not a crash
        outcome.results.append(result)
        saved_module = named and result.filename and block is not runnable[-1]
        if result.exit_code != 0 and not result.server and not saved_module:
            break  # a saved module's own run may fail (a CLI without its arguments): the blocks after it test it; a
            # server stopped as servers are is no failure
    outcome.files = changes(start, before)
    ran = [b.code for b, r in zip(runnable, outcome.results)
           if b.filename is None and b.runnable_as == "python" and not r.refused]
    outcome.redefined = redefined_modules(workspace, ran, set(outcome.written))
    if scenario.checks and not all(r.refused for r in outcome.results):  # they judge, whatever the exit code
        with budget.capped(executor):
            outcome.checks = run_checks(scenario.checks, scenario.base_dir, executor, outcome.results[-1])
    outcome.feedback = execution_feedback(outcome, workspace, scenario.about_files(), languages,
                                          executor.session_files() is not None)  # state lives on: a kernel
    return outcome


def named_by_task(block: CodeBlock, scenario: Scenario) -> CodeBlock:
    """A Python block headed by a comment that names a file the task or a check names (`# app.py: Flask web
    service`) is that file, as `# filename: app.py` would make it: saved there, then run. So is a block that does
    not run (```html) headed `// index.html: a counter page` or `<!-- index.html -->`: saved as the page; and a
    block of another language (```javascript headed `// Accordion.jsx`, `// server.js: the API`): saved as that
    file, and run as a saved file of its language is (a .jsx component is only saved)."""
    if block.filename is not None or block.runnable_as in SHELLS:
        return block
    pattern = {"python": TASK_FILE, None: TASK_PAGE}.get(block.runnable_as, TASK_SOURCE)
    named = scenario.task + "\n" + "\n".join(c.label() for c in scenario.checks)
    name = task_filename(block.code, named, pattern)
    if name is None:
        return block
    first, _, rest = block.code.lstrip("\n").partition("\n")
    opener = COMMENT_OPENER.match(first.strip()).group(0)  # the model's own comment form: `// index.html: ...`
    return CodeBlock(block.language, f"{opener} filename: {name}{COMMENT_CLOSER.get(opener, '')}\n{rest}")
