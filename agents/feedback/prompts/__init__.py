"""Prompt and feedback templates, kept as files next to this module."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from string import Template

HERE = Path(__file__).parent
PROMPT_VERSION = "v11"
"""The prompts' version, recorded in every transcript.
- v11: web tasks. A block that starts a server is reported as a server (its port, how long it took to listen, its
  log; stopped as servers are, not an error), an `http:` or `page:` check's report names each request or step with
  expected against actual; a program that reads a missing file is told the path and the files that are there (or
  to use the task's text); a check that runs a file the reply's code was never saved as says how to save it; a
  missing import names the declaration that provides the package. The system prompts are unchanged.
- v10: a model's own run that failed with the error a failed check already reports (the same sanitizer report) is
  said in one line (run_failed_same), not shown twice; a failed check's one-line summary names the compiler's
  first error; the frames of a sanitizer report or a panic quote their source line; a project of one language
  other than Python is asked for its file in that language; a cut-off reply in a sandbox with languages is asked
  for its file or program in its language, as is an empty reply or one with no code (Python's asks are
  unchanged); a reply that names its file and closes its block but forgot the opening fence is read as that file.
  The system prompts are unchanged.
- v9: a sandbox with languages (C, C++, Go, Rust, JavaScript) gets system_languages.md, which names its toolchains
  and how a file is named, built and tested; the reports name the blocks that run there. Python-only prompts are
  unchanged.
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


def system_message(files: bool = False, languages: list[str] | tuple[str, ...] = (), kernel: bool = False,
                   packages: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] = ((), (), ())) -> str:
    """The default self-debug system message (`base_system_message`), and when the sandbox has packages beyond the
    base image's (a preset's, or declared: Debian's, PyPI's, crates; `packages`), one more line that names them, so
    a small model uses the Flask or the crate that is there instead of the standard library's or a missing one."""
    base = base_system_message(files, languages, kernel)
    line = installed_line(*packages)
    if line and "rust" in languages and packages[2]:
        base = base.replace("(no crates from crates.io)", "(only the crates named below, offline)")
    return f"{base}\n\n{line}" if line else base


def installed_line(debian: tuple[str, ...] = (), python: tuple[str, ...] = (), rust: tuple[str, ...] = ()) -> str:
    """'Installed in the sandbox: ...' for the packages a preset or a scenario adds ('' for none)."""
    py = [d.removeprefix("python3-") for d in debian if d.startswith("python3-")] + [r.split("==")[0] for r in python]
    node = [d.removeprefix("node-") for d in debian if d.startswith("node-")]
    parts = [f"Python packages {', '.join(py)}"] if py else []
    parts += [f"Node modules {', '.join(node)} (require them by name)"] if node else []
    parts += [f"Rust crates {', '.join(rust)} (list them in Cargo.toml at these versions)"] if rust else []
    parts += ["a headless Chromium (the checks open your pages in it)"] if any("chromium" in d for d in debian) else []
    return render("installed", packages="; ".join(parts)) if parts else ""


def base_system_message(files: bool = False, languages: list[str] | tuple[str, ...] = (), kernel: bool = False) -> str:
    """The default self-debug system message for small local models: for a task about Python files (`files`), the
    one that also teaches `# filename:` (system_files.md); otherwise the script prompt, unchanged since v4, since
    the file rules changed the 1.5B model's greedy script for clean_emails from right to wrong. A sandbox with
    other languages gets the prompt that names their toolchains and how a file is named and built. A kernel session
    (`kernel`: sandbox.session kernel) without either gets the notebook prompt: state persists, one step a block."""
    if kernel and not files and not languages:
        return render("system_kernel")
    if languages:
        from agents.sandbox.languages import LANGUAGES

        langs = [LANGUAGES[name] for name in languages]
        how = " ".join(lang.built for lang in langs)
        return render("system_languages", toolchains="; ".join(f"{lang.title}: {lang.tools}" for lang in langs),
                      tags=", ".join(f"```{lang.tags[0]}" for lang in langs) + ", ```python, ```sh", how=how)
    return render("system_files" if files else "system")


PAGES = {"html": "<!-- filename: <its path> -->", "css": "/* filename: <its path> */",
         "svg": "<!-- filename: <its path> -->"}
"""Files that are saved and not run (a page, its style sheet), by their fence tag: the first line that names one.
Asked for as ```python with `# filename:`, the 1.5B sent a page's script as Python, which then ran and failed."""


def resend_files(language: str = "python") -> str:
    """How the whole corrected file is asked for in `language`: ```python with `# filename:`, ```c with
    `// filename:` and so on for the languages of agents/sandbox/languages.py; a page (PAGES) in its own tag and
    comment."""
    from agents.sandbox.languages import LANGUAGES

    if language in PAGES:
        return render("resend_files", tag=language, first=PAGES[language])
    lang = LANGUAGES.get(language)
    return render("resend_files", tag=lang.tags[0] if lang else "python",
                  first=f"{'//' if lang else '#'} filename: <its path>")


SYSTEM_MESSAGES = {"ag2.default": "autogen:AssistantAgent.DEFAULT_SYSTEM_MESSAGE"}
"""System messages a scenario may name (`assistant.system_message: {from: ag2.default}`) instead of copying them:
AG2's own AssistantAgent prompt, read from the installed AG2. A dotted path to any string (`pkg.mod:NAME`) works
too."""


def named_system_message(name: str) -> str:
    """The text a system-message name (or dotted path) stands for; ValueError (one line) when there is none."""
    from agents.loop.errors import BadInputError
    from agents.loop.registry import import_dotted

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
