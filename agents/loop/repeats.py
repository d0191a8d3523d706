"""Recognising code that was already executed in this run, so a repeat is re-asked instead of re-run."""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from agents.feedback.prompts import PAGES, render, resend_files
from agents.loop.codeblocks import extract_code_blocks
from agents.sandbox.filenames import UnsafeFilename, clean_path
from agents.sandbox.languages import LANGUAGES


def normalize_code(code: str) -> str:
    """The AST dump of the code (comments, docstrings, blank lines and formatting do not count), else its stripped
    lines."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return "\n".join(line.strip() for line in code.splitlines() if line.strip())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def reply_language(content: str | None) -> str:
    """The language a reply's code is in: its first block's that runs as a language (c, go ...), else a page's tag
    when every block is a page or style sheet (html, css: PAGES), else python."""
    blocks = extract_code_blocks(content)
    for block in blocks:
        if block.runnable_as in LANGUAGES:
            return block.runnable_as
    tags = [b.language.lower() for b in blocks]
    return tags[0] if tags and set(tags) <= set(PAGES) else "python"


def reply_code(content: str | None) -> str | None:
    """The runnable Python of a reply as the proxy would run it (its blocks joined), or None when there is none."""
    blocks = [b.code for b in extract_code_blocks(content) if b.runnable_as == "python"]
    return "\n\n".join(blocks) if blocks else None


def fingerprint(code: str) -> str:
    """A short stable id of the normalized code."""
    return hashlib.sha256(normalize_code(code).encode("utf-8")).hexdigest()[:16]


def normalize_file(path: str, code: str) -> str:
    """A saved file's content as compared: the AST of a .py file, else its stripped lines without the filename line."""
    if path.lower().endswith(".py"):
        return normalize_code(code)
    lines = [line.strip() for line in code.splitlines()[1:] if line.strip()]
    return "\n".join(lines)


def _clean(raw: str) -> str:
    """The path a `# filename:` line names, as the executor would write it (raw when it would refuse it)."""
    try:
        return clean_path(raw)
    except UnsafeFilename:
        return raw


@dataclass
class Seen:
    """Where a piece of code was executed first, and what it did then."""

    attempt: int
    turn: int
    summary: str
    note: str | None = None
    """Said instead of where it ran (a reply whose files already hold its content)."""
    files: bool = False
    """The repeating reply saves files (`# filename:`): the whole corrected file is asked for, not a script."""
    language: str = "python"
    """The language of the repeating reply's code (its first block's): what it is asked again in."""

    @property
    def where(self) -> str:
        """'attempt 1, turn 2', or 'in the earlier run' for code the resumed run executed."""
        if self.note:
            return self.note
        return f"attempt {self.attempt}, turn {self.turn}" if self.attempt else "in the earlier run"

    def feedback(self, reask: bool) -> str:
        """What the model is told instead of running it again: the proxy's report, or the strategy's re-ask."""
        if self.note:
            return render("unchanged", note=self.note, summary=self.summary)
        script = "the complete new script" if reask else "a different, corrected complete script"
        lang = LANGUAGES.get(self.language)
        tag = lang.tags[0] if lang else self.language  # python, or a page's tag (reply_language)
        resend = resend_files(self.language) if self.files else f"{script} in one ```{tag} block"
        return render("repeat_reask" if reask else "repeat", where=self.where, summary=self.summary, resend=resend)


@dataclass
class RepeatMemory:
    """Every reply that ran in this run (across attempts), keyed by its normalized scripts (Python and shell) and by
    the content of the files it saved (`# filename:`) on top of the files the attempt's earlier replies saved."""

    seen: dict[str, Seen] = field(default_factory=dict)
    workspace: Path | None = None
    """The current attempt's workspace: a file block is compared with the file there."""
    saved: dict[str, str] = field(default_factory=dict)
    """Normalized content of the files this attempt's replies saved, by path."""
    files_task: bool = False
    """The task is about Python files (agents/loop/briefing.py works_on_files): a repeat is asked for the whole
    corrected
    file, whatever the repeating reply held (a repeated run of the tests is not where the fix goes)."""
    last: str = ""
    """What the attempt's last execution did ('' before its first: the starting files were never run nor checked,
    so sending one back unchanged runs, and its checks show the model what fails)."""

    def begin(self, workspace: Path, files_task: bool = False) -> None:
        """A fresh attempt starts in `workspace`: the files saved so far belong to the one before."""
        self.workspace, self.saved, self.last, self.files_task = workspace, {}, "", files_task

    def _parts(self, content: str | None) -> tuple[dict[str, str], list[str]] | None:
        """(files the reply saves -> normalized content, its scripts), or None when it holds nothing to act on."""
        blocks = [b for b in extract_code_blocks(content) if b.actionable]
        if not blocks:
            return None
        files: dict[str, str] = {}
        scripts: list[str] = []
        for block in blocks:
            name = block.filename
            if name is None:  # a shell script is marked as one: `ls` in sh is not the Python expression `ls`
                shell = block.runnable_as != "python"
                scripts.append(f"$ {block.runnable_as}\n{block.script}" if shell else block.code)
            else:
                files[_clean(name)] = normalize_file(_clean(name), block.code)
        return files, scripts

    def _key(self, files: dict[str, str], scripts: list[str]) -> str:
        """A reply of scripts alone, in an attempt that saved no file, keeps the key it always had."""
        state = {**self.saved, **files}
        if not state:
            return fingerprint("\n\n".join(scripts))
        data = json.dumps([sorted(state.items()), [normalize_code(s) for s in scripts]])
        return hashlib.sha256(data.encode("utf-8")).hexdigest()[:16]

    def find(self, content: str | None) -> Seen | None:
        """The earlier execution this reply repeats, or None. A reply that only saves files, each already holding
        exactly that content, repeats too: nothing would change."""
        parts = self._parts(content)
        if parts is None:
            return None
        files, scripts = parts
        earlier = self.seen.get(self._key(files, scripts))
        if earlier is not None:
            return replace(earlier, files=bool(files) or self.files_task, language=reply_language(content))
        if scripts or not self.last or not self._echoes(files):
            return None
        names = ", ".join(sorted(files))
        return Seen(0, 0, self.last, note=f"{names} already {'holds' if len(files) == 1 else 'hold'} exactly "
                                              "this content, so nothing would change")

    def echoes(self, content: str | None) -> list[str]:
        """The files the reply saves when each already holds exactly that content in the workspace (the model sent
        them back unchanged: its scripts, if any, only run what was there), else []."""
        parts = self._parts(content)
        return self._echoes(parts[0]) if parts is not None else []

    def _echoes(self, files: dict[str, str]) -> list[str]:
        """echoes() of a reply's saved files (path -> normalized content)."""
        if not files or self.workspace is None:
            return []
        return sorted(files) if all(self._current(path) == text for path, text in files.items()) else []

    def _current(self, path: str) -> str | None:
        """The normalized content of a workspace file now (None: missing or unreadable)."""
        assert self.workspace is not None
        try:
            text = (self.workspace / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        return normalize_code(text) if path.lower().endswith(".py") else "\n".join(
            line.strip() for line in text.splitlines() if line.strip())

    def remember(self, content: str | None, attempt: int, turn: int, summary: str,
                 written: list[str] | None = None) -> None:
        """Note a reply that was just executed (the first execution wins); `written`: the files it saved."""
        parts = self._parts(content)
        if parts is None:
            return
        files, scripts = parts
        self.seen.setdefault(self._key(files, scripts), Seen(attempt, turn, summary))
        for path in written if written is not None else list(files):
            if path in files:
                self.saved[path] = files[path]
        self.last = summary
