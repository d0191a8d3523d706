"""AG2's `# filename:` convention: a code block whose first line names a file is saved there, and run when it is
Python, or a shell script of a shell block (autogen/coding/utils.py `_get_file_name_from_content` is the reference).

One deliberate difference: AG2 matches `# (filename:)?(.+?)`, so any first-line comment (`# compute the sum`)
becomes a file name. Here only the explicit `filename:` form counts, in `#`, `//`, `/* */` and `<!-- -->`
comments (and `// main.go` over a source file); the AG2 executor also takes AG2's bare form when the comment is a
lone file name (`# test.py`, `/* style.css */`: `bare`). Paths are refused, with one line and nothing written,
when they are absolute, hold `..`, go through a symlink, point into the checks folder or are larger than the
workspace.
"""

from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable, Iterable

from agents.loop.protocols import ExecResult
from agents.sandbox.error_locals import python_argv
from agents.sandbox.languages import (
    BY_SUFFIX,
    LANGUAGES,
    in_cargo_project,
    language_of_path,
    not_a_program,
    resent_file,
)
from agents.sandbox.languages import run_argv as language_argv
from agents.sandbox.safe_write import write_new_file

PATTERNS = [
    re.compile(r"^<!--\s*filename:\s*(.*?)\s*-->$", re.IGNORECASE),
    re.compile(r"^/\*\s*filename:\s*(.*?)\s*\*/$", re.IGNORECASE),
    re.compile(r"^//\s*filename:\s*(.*)$", re.IGNORECASE),
    re.compile(r"^#\s*filename:\s*(.*)$", re.IGNORECASE),
]
RUN_SUFFIXES = {".py"}
"""A saved file with one of these suffixes is then run as that file; any other file is saved and not run."""
SHELL_SUFFIXES = {".sh", ".bash"}
"""A shell block (```sh, ```bash) that names a file with one of these suffixes is saved and run with its shell, as
AG2 runs it; saved whole, like a .py file (its `# filename:` line is a comment there)."""
CHECKS_DIR = ".codeduet_checks"
"""Where the scenario's pytest checks are copied before each check run (agents/scenario/checks.py)."""
MAX_PATH, MAX_PART = 1024, 255


class UnsafeFilename(ValueError):
    """A `# filename:` path that is not written: the message is the one line the model is told."""


class ScriptNamedAsData(ValueError):
    """Python code whose first line names a data file (`# filename: contacts.txt` over the script that reads it, as
    small models write): it runs as a script and the data file is left alone; the message says so."""


REPORT_NOTE = re.compile(r"\s*\(\s*[\d.,]+\s*(?:lines?|bytes?|B|KiB|MiB|GiB|TiB|kB|KB|MB|GB)\s*\)\s*:?\s*$",
                         re.IGNORECASE)
"""A size or line count as codeduet's previews and reports print it after a path (`(11 lines)`, `(308 B)`)."""


def declared_filename(code: str, bare: bool = False) -> str | None:
    """The path a block's first line names with an explicit `filename:` comment ('' when it names none), else None.
    A size or line count copied from our previews (`# filename: pkg/cart.py (11 lines)`) and a trailing colon are
    not part of it. `bare`: also AG2's form without `filename:` when the comment is a lone file name (BARE_NAMES)."""
    first = code.lstrip("\n").split("\n", 1)[0].strip()
    lone = next((m for m in (p.match(first) for p in BARE_NAMES) if m), None) if bare else None
    if lone and PurePosixPath(lone.group(1)).suffix.lower() in BARE_SUFFIXES | set(BY_SUFFIX):
        return lone.group(1)
    for pattern in PATTERNS:
        match = pattern.match(first)
        if match:
            name = REPORT_NOTE.sub("", match.group(1).strip()).rstrip(":").strip()
            return name.strip("`'\"").strip()
    bare = BARE_SOURCE.match(first)
    return bare.group(1) if bare and language_of_path(bare.group(1)) is not None else None


TASK_FILE = re.compile(r"^#\s*([\w][\w./-]*\.py)\s*(?:$|[:\u2014\u2013-]\s)")
"""A Python block's first-line comment that starts with a file name, alone or before a description
(`# app.py`, `# app.py: Flask web service`)."""
TASK_PAGE = re.compile(r"^(?:<!--|//|/\*|#)\s*([\w][\w./-]*\.(?:html?|css|js|svg))\s*"
                       r"(?:$|-->|\*/|[:\u2014\u2013-]\s)")
"""The same for a block that does not run (```html, ```css ...), in any of their comment forms: the 1.5B headed eight
of the frontend suite's ten baseline pages `// index.html` or `// index.html: a counter page with ...`."""

TASK_SOURCE = re.compile(r"^(?://|/\*)\s*([\w][\w./-]*\.\w+)\s*(?:$|\*/|[:\u2014\u2013-]\s)")
"""The same for a block of another language that runs (```javascript, ```go ...): the 1.5B wrote both React tasks'
components as ```javascript headed `// Accordion.jsx`, which ran as block01.js, and jest found no Accordion.jsx."""


def task_filename(code: str, named: str, pattern: re.Pattern[str] = TASK_FILE) -> str | None:
    """The file a Python block's first-line comment names when the task or a check names the same file (`named`:
    their text): every candidate the 1.5B wrote for a Flask task headed its app `# app.py: Flask web service`, and
    the check's `python3 app.py` found no app.py. A comment naming a file nobody asked for stays a comment.
    `pattern`: TASK_PAGE for a block that does not run."""
    first = code.lstrip("\n").split("\n", 1)[0].strip()
    match = pattern.match(first)
    if match is None or not re.search(rf"(?<![\w./-]){re.escape(match.group(1))}(?![\w-])", named):
        return None
    return match.group(1)


BARE_SOURCE = re.compile(r"^//\s*([\w][\w./-]*\.\w+)\s*$")
"""A `// src/lib.rs` first line without `filename:`, as models write it over a C, C++, Go, Rust or JavaScript file
(AG2 takes any first-line comment as the name): only a lone path with one of those languages' suffixes counts, so
a comment such as `// compute the sum` stays a comment, and Python's `# x` rule is unchanged."""
LONE = r"([\w][\w./-]*\.\w+)"
BARE_NAMES = [re.compile(rf"^<!--\s*{LONE}\s*-->$"), re.compile(rf"^/\*\s*{LONE}\s*\*/$"),
              re.compile(rf"^(?:#|//)\s*{LONE}$")]
"""AG2's first-line forms without `filename:` (`# test.py`, `// test.js`, `/* test.css */`, `<!-- test.html -->`),
taken by the AG2 executor only (`declared_filename(bare=True)`), and only for a lone path whose suffix is a code or
text file's (BARE_SUFFIXES, the languages' own): `# compute the sum` and `# v1.0` stay comments."""
BARE_SUFFIXES = {".py", ".sh", ".bash", ".html", ".htm", ".css", ".json", ".txt", ".csv", ".md", ".yaml", ".yml",
                 ".toml", ".xml", ".sql", ".ini", ".cfg"}


@dataclass
class FileBlock:
    """A block that saves a file: where, what, and whether it then runs."""

    path: str
    """Relative POSIX path inside the workspace."""
    content: str
    """What is saved: a .py block whole (its first line is a comment), any other file without the filename line."""

    @property
    def runs(self) -> bool:
        """A Python file is executed after it is saved; a package's __init__.py is only saved (it usually imports
        modules the same reply saves next)."""
        name = PurePosixPath(self.path)
        return name.suffix.lower() in RUN_SUFFIXES and name.name != "__init__.py"

    @property
    def size(self) -> int:
        """Bytes written (UTF-8)."""
        return len(self.content.encode("utf-8"))


def clean_path(raw: str) -> str:
    """The declared path as a clean relative POSIX path, or UnsafeFilename saying why it is refused."""
    if not raw:
        raise UnsafeFilename("the `# filename:` line names no file")
    if any(ord(c) < 32 for c in raw):
        raise UnsafeFilename(f"the file name {raw!r} holds control characters")
    if raw.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:[\\/]", raw):
        raise UnsafeFilename(f"{raw} is an absolute path: use a path relative to the current directory")
    parts = [p for p in raw.replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UnsafeFilename(f"{raw} leaves the workspace ('..'): use a path inside the current directory")
    if not parts:
        raise UnsafeFilename(f"{raw!r} names the workspace itself, not a file")
    if parts[0] == CHECKS_DIR:
        raise UnsafeFilename(f"{raw} is in {CHECKS_DIR}/, the acceptance checks' folder, which codeduet rewrites "
                             "before every check")
    if len(raw) > MAX_PATH or any(len(p.encode("utf-8")) > MAX_PART for p in parts):
        raise UnsafeFilename(f"the file name {raw[:80]}… is too long")
    return "/".join(parts)


def through_link(workspace: Path, path: str, sandbox_links: Iterable[str] = ()) -> str | None:
    """The first component of `path` that is a symlink (in the host folder, or known in the sandbox), else None."""
    links = set(sandbox_links)
    parts = path.split("/")
    for i in range(1, len(parts) + 1):
        prefix = "/".join(parts[:i])
        if prefix in links or os.path.islink(workspace / prefix):
            return prefix
    return None


def file_block(code: str, workspace: Path, size_limit: int, size_label: str,
               sandbox_links: Callable[[str], Iterable[str]] | None = None, bare: bool = False) -> FileBlock | None:
    """The file a block saves (None: an ordinary block, run as blockNN.py); UnsafeFilename when it may not.
    `sandbox_links(path)`: the components of path that are symlinks where the code runs, if not in `workspace`;
    `bare`: AG2's bare `# test.py` form names a file too (declared_filename)."""
    raw = declared_filename(code, bare)
    if raw is None:
        return None
    path = clean_path(raw)
    whole = PurePosixPath(path).suffix.lower() in RUN_SUFFIXES | SHELL_SUFFIXES or keeps_first_line(path, code)
    content = code if whole else _without_first_line(code)
    block = FileBlock(path, content.rstrip("\n") + "\n" if content.strip() else content)  # one final newline
    if PurePosixPath(path).suffix.lower() not in RUN_SUFFIXES and is_python_code(block.content):
        raise ScriptNamedAsData(f"[codeduet: the block's first line names {path}, but the block is Python code: it ran "
                                f"as a script and {path} was not changed. To change {path}, send its content; to "
                                f"run code, leave that line out]")
    problem = not_this_format(path, block.content)
    if problem:
        raise UnsafeFilename(f"{path}: {problem}; the file was left as it was. To change {path}, send its whole new "
                             f"content; to run code that edits it, send that code in a block without this line")
    if block.size > size_limit:
        raise UnsafeFilename(f"{path} would be {block.size:,} bytes, over the workspace's size limit ({size_label})")
    in_sandbox = list(sandbox_links(path)) if sandbox_links is not None else []
    link = through_link(workspace, path, in_sandbox)
    if link is not None:
        target = os.path.realpath(workspace / link)
        inside = target == str(workspace) or target.startswith(str(workspace) + os.sep)
        where = " (a link made in the sandbox)" if link in in_sandbox else "" if inside \
            else " out of the workspace"
        raise UnsafeFilename(f"{path} goes through the symlink {link}{where}; write to a plain path instead")
    parts = path.split("/")
    for i in range(1, len(parts)):
        if os.path.lexists(workspace / "/".join(parts[:i])) and not os.path.isdir(workspace / "/".join(parts[:i])):
            raise UnsafeFilename(f"{path}: {'/'.join(parts[:i])} is a file, not a folder")
    if os.path.isdir(workspace / path):
        raise UnsafeFilename(f"{path} is a folder: name a file")
    return block


def keeps_first_line(path: str, code: str) -> bool:
    """A C, C++, Go, Rust or JavaScript file whose `filename:` line is a comment there (`// filename: main.c`, not
    `# filename:`) is saved whole, so the line numbers of its compiler errors are the ones the model sent; but not
    when a `#!` line follows it: a shebang must stay the first line (node refused `#!/usr/bin/env node` on line 2)."""
    lines = code.lstrip("\n").split("\n", 2)
    first, second = lines[0].strip(), (lines[1] if len(lines) > 1 else "")
    return language_of_path(path) is not None and first.startswith(("//", "/*")) and not second.startswith("#!")


def _without_first_line(code: str) -> str:
    """A data file's content: the block without its `filename:` comment line."""
    rest = code.lstrip("\n").split("\n", 1)
    return rest[1] if len(rest) > 1 else ""


def saved_result(block: FileBlock, language: str) -> ExecResult:
    """The report of a file that was saved and not run."""
    return ExecResult(exit_code=0, output=f"saved {block.path} ({block.size:,} bytes)", duration_s=0.0,
                      filename=block.path, language=language, saved_only=True)


def saved_only(workspace: Path, path: str, language: str) -> ExecResult:
    """The report of a placed file kept without running it (AG2's `execution_policies`: this language is saved)."""
    return saved_result(FileBlock(path, (workspace / path).read_text(encoding="utf-8")), language)


def refused_result(reason: str, language: str) -> ExecResult:
    """The report of a refused `# filename:` block: exit code 1 (as AG2 reports a path outside its work dir),
    nothing written, nothing run."""
    return ExecResult(exit_code=1, output=f"[codeduet: not saved: {reason}]", duration_s=0.0, language=language,
                      refused=reason)


def place_block(workspace: Path, code: str, language: str, size_limit: int, size_label: str,
                next_name: Callable[[str], str],
                sandbox_links: Callable[[str], Iterable[str]] | None = None,
                languages: tuple[str, ...] | list[str] = (), bare: bool = False) -> ExecResult | tuple[str, str, str]:
    """Write a block where it goes, never through a link: the path its `# filename:` line names, else the next
    throwaway name. Returns (file to run, language, a note for its output), or the finished report of a file only
    saved or refused. `language`: python, sh, bash or one of the sandbox's `languages` (how the block runs), or any
    other tag of a block only saved. A saved source file of one of `languages` is also built and run when it is a
    whole program (it has a main), unless cargo builds it (a Cargo.toml above it). `bare`: AG2's bare `# test.py`
    form names a file too (declared_filename)."""
    note = ""
    try:
        block = file_block(code, workspace, size_limit, size_label, sandbox_links, bare)
    except UnsafeFilename as exc:
        return refused_result(str(exc), language)
    except ScriptNamedAsData as exc:
        block, note, language = None, str(exc), "python"
    if block is None and language in LANGUAGES and (target := resent_file(LANGUAGES[language], workspace, code)):
        try:  # a given file sent back without its name: saved there, after the same checks as a named one
            named = file_block(f"// filename: {target}\n{code}", workspace, size_limit, size_label, sandbox_links)
        except UnsafeFilename:
            named = None
        if named is not None:
            block = FileBlock(named.path, code.rstrip("\n") + "\n")
            note = (f"[codeduet: this ```{LANGUAGES[language].tags[0]} block has no `// filename:` line, but most "
                    f"of {target} is in it, so it was saved as {target}; name the file you send with that line]")
    if block is None:
        reason = not_a_program(language, code)
        if reason is not None:
            return ExecResult(exit_code=1, output=reason, duration_s=0.0, language=language)
        name = next_name(language)
        write_new_file(workspace, name, code)  # replaces whatever an earlier block planted at that name
        return name, language, note
    write_new_file(workspace, block.path, block.content)
    if block.runs:
        return block.path, "python", ""
    if language in ("sh", "bash") and PurePosixPath(block.path).suffix.lower() in SHELL_SUFFIXES:
        return block.path, language, ""
    own = language_of_path(block.path)
    if own is not None and own.name in languages and own.program(block.content) \
            and not (own.name == "rust" and in_cargo_project(workspace, block.path)):
        return block.path, own.name, note
    saved = saved_result(block, language)
    saved.output = f"{note}\n{saved.output}" if note else saved.output
    return saved


def package_of(workspace: Path, path: str) -> str | None:
    """The dotted package a saved module belongs to (its folder holds __init__.py), so it runs as `python3 -m`
    would run it and its relative and package imports work; None for a file that is not in a package."""
    parts = path[:-3].split("/") if path.endswith(".py") else []
    if len(parts) < 2 or not all(p.isidentifier() for p in parts):
        return None
    init = workspace.joinpath(*parts[:-1], "__init__.py")
    return ".".join(parts[:-1]) if init.is_file() and not init.is_symlink() else None


TEST_FILE = re.compile(r"^(test_.+|.+_test)\.py$")
PYTEST = ["-m", "pytest", "-q", "--tb=short", "-p", "no:cacheprovider"]


def holds_tests(workspace: Path, path: str) -> bool:
    """A saved file named as pytest names test files (test_*.py, *_test.py) that defines tests (a top-level test
    function or Test class) and does not run itself (no `if __name__ == "__main__":`). Run as a script it would
    only define its tests and exit 0, so it is run by pytest."""
    if not TEST_FILE.match(PurePosixPath(path).name):
        return False
    try:
        tree = ast.parse((workspace / path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return False  # run as a script: python reports the syntax error as it does for any file
    tests = any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")
                or isinstance(node, ast.ClassDef) and node.name.startswith("Test") for node in tree.body)
    runs_itself = any(isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) for node in tree.body)
    return tests and not runs_itself


def run_argv(python: str, workspace: Path, filename: str, error_locals: bool) -> tuple[list[str], str]:
    """How a Python file in the workspace is run, and a note for its output: a test file by pytest, a package
    module as `python -m` would, anything else as the file (through the error_locals bootstrap when it is on)."""
    if holds_tests(workspace, filename):
        return [python, "-u", *PYTEST, filename], \
            f"[codeduet: {filename} holds pytest tests, so it ran as `python3 -m pytest -q {filename}`]"
    return python_argv(python, filename, error_locals, package_of(workspace, filename)), ""


def runs_as_script(workspace: Path, filename: str) -> bool:
    """Whether `run_argv` runs the Python file as a plain script (not pytest's, not a package module): what a kernel
    session runs in its kernel instead (agents/sandbox/kernel_executor.py)."""
    return not holds_tests(workspace, filename) and not package_of(workspace, filename)


def command_for(python: str, language: str, workspace: Path, filename: str,
                error_locals: bool, sanitize: bool = True) -> tuple[list[str], str]:
    """The argv that runs a placed file (and a note for its output): Python by `run_argv`'s rules, a shell script
    with its shell, a source file of a language built and run by its script (agents/sandbox/languages.py)."""
    if language == "python":
        return run_argv(python, workspace, filename, error_locals)
    if language in LANGUAGES:
        return language_argv(LANGUAGES[language], workspace, filename, sanitize), ""
    return [language, filename], ""


def not_in_sandbox(code: str, language: str, languages: list[str], bare: bool = False) -> ExecResult | None:
    """The report of a block to run whose language this sandbox lacks (nothing ran), else None; a block that names
    its file (`bare`: in AG2's bare form too) is saved in any sandbox."""
    if language not in LANGUAGES or language in languages or declared_filename(code, bare) is not None:
        return None
    return ExecResult(exit_code=1, language=language, duration_s=0.0, output=(
        f"[codeduet: not run: this sandbox has no {LANGUAGES[language].title} toolchain; a scenario that needs it "
        f"says `sandbox: {{languages: [{language}]}}` (or run with --languages {language})]"))


def ran_as(result: ExecResult, filename: str, language: str, *notes: str) -> ExecResult:
    """A block's report: the file it ran as, its language, and codeduet's notes on how it ran above its output."""
    result.filename, result.language = filename, language
    note = "\n".join(n for n in notes if n)
    result.output = f"{note}\n{result.output}" if note else result.output
    return result


CODE_NODES = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.For,
              ast.While)


def is_python_code(content: str) -> bool:
    """Whether a text is Python code (it parses, and imports, defines or loops), not data that happens to parse."""
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return any(isinstance(node, CODE_NODES) for node in tree.body)


def not_this_format(path: str, content: str) -> str | None:
    """Why content cannot be the data file `path`: a .json file whose content does not parse; None when it may be
    saved."""
    if PurePosixPath(path).suffix.lower() != ".json" or not content.strip():
        return None
    try:
        json.loads(content)
    except ValueError as exc:
        return f"this is not valid JSON ({str(exc).split(':')[0]})"
    return None
