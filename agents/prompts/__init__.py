"""Prompt and feedback templates, kept as files next to this module."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from string import Template

HERE = Path(__file__).parent
PROMPT_VERSION = "v8"
"""The prompts' version, recorded in every transcript.
- v8: in a task about Python files, a report whose checks failed asks for the whole corrected file, also after a
  reply that only ran the tests or a shell command (it asked for "the corrected commands"); the system prompts are
  unchanged.
- v7: shell blocks run; a report names the blocks that did not run (not_run) and the one for a reply with nothing
  to run says which blocks run here (unsupported); the system prompts are unchanged.
- v6: with checks, every report gives their verdict first ("these decide success") and the model's own run as
  information; a command-line tool run bare is reported as printing its usage, not as a failure; file previews put
  the path alone on its line.
- v5: for a task about Python files the system prompt teaches `# filename:` (a block saves a file), feedback lists
  the files a reply changed and, when a check fails, shows the files it saved.
- v4: a prose-only reply is kept and the code it describes asked for (prose_followup).
- v3: repair feedback asks for one sentence on the faulty line before the script.
- v2: closest output line for failed stdout checks, repeat and cut-reply re-asks, fresh-attempt task (strategy)."""


@lru_cache(maxsize=None)
def template(name: str, folder: Path = HERE) -> Template:
    """Load `name.md` (from this folder, or another one's: the benchmarks keep theirs) as a string.Template."""
    return Template((folder / f"{name}.md").read_text(encoding="utf-8"))


def render(name: str, **values: object) -> str:
    """Fill a template; unknown placeholders are left as they are."""
    return render_from(HERE, name, **values)


def render_from(folder: Path, name: str, **values: object) -> str:
    """Fill the template `name.md` of `folder` (the same $var rules as the product's prompts)."""
    return template(name, folder).safe_substitute({k: str(v) for k, v in values.items()}).strip()


def system_message(files: bool = False) -> str:
    """The default self-debug system message for small local models: for a task about Python files (`files`), the
    one that also teaches `# filename:` (system_files.md); otherwise the script prompt, unchanged since v4, since
    the file rules changed the 1.5B model's greedy script for clean_emails from right to wrong."""
    return render("system_files" if files else "system")


SYSTEM_MESSAGES = {"ag2.default": "autogen:AssistantAgent.DEFAULT_SYSTEM_MESSAGE"}
"""System messages a scenario may name (`assistant.system_message: {from: ag2.default}`) instead of copying them:
AG2's own AssistantAgent prompt, read from the installed AG2. A dotted path to any string (`pkg.mod:NAME`) works
too."""


def named_system_message(name: str) -> str:
    """The text a system-message name (or dotted path) stands for; ValueError (one line) when there is none."""
    from agents.errors import BadInputError
    from agents.registry import import_dotted

    if name not in SYSTEM_MESSAGES and ":" not in name:  # `ag2.nope` is a name mistyped, not a module path
        raise ValueError(f"unknown system message '{name}' (known: {', '.join(sorted(SYSTEM_MESSAGES))}, or a dotted "
                         "path like package.module:NAME)")
    try:
        text = import_dotted(SYSTEM_MESSAGES.get(name, name), "system message")
    except BadInputError as exc:
        raise ValueError(str(exc)) from None
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"system message '{name}' is not a text (it is a {type(text).__name__})")
    return text
