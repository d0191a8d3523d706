"""Finding fenced code blocks in an LLM reply: the one fence grammar for what runs and what is shown (the terminal
view and the HTML page cut a message with `segments`, so a block shown as code is a block found here)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from agents.sandbox.filenames import declared_filename
from agents.sandbox.languages import BY_TAG, language_of_path

FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)```", re.DOTALL)
OPEN_FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n")
"""Only backtick fences: a `~~~` fence is prose (neither run nor shown as code)."""

PYTHON = {"python", "py", "python3", ""}
SHELL = {"sh": "sh", "shell": "sh", "console": "sh", "bash": "bash"}
"""Shell tags and the shell that runs them, as AG2's command-line executors do (`sh`, `shell` -> sh, `bash` -> bash);
a `console` block runs the commands of its `$ ` prompt lines (console_commands)."""
ALIASES = {**{k: "python" for k in PYTHON}, **SHELL, **{tag: lang.name for tag, lang in BY_TAG.items()}}
"""Every fence tag that runs, and what runs it: python, a shell, or a language of agents/sandbox/languages.py (which
runs
only in a sandbox that has it: `runs_in`)."""
SHELLS = frozenset(SHELL.values())
"""The shells a block runs with (also ExecResult.language of a shell block's run)."""
SHOWN_ONLY = {"text", "txt", "plain", "plaintext", "output", "stdout", "log", "console"}
"""Tags of blocks that show text (expected output, a log) rather than code: not run, and not reported as not run.
A console block is one when none of its lines is a `$ ` command."""
PROMPT = re.compile(r"^\s*\$\s+(?=\S)")
"""A console line that is a command: `$ ` then the command."""
REPORT_LINE = re.compile(r"\(no output\)|\[codeduet: .*\]|\[\.\.\. output truncated: .*\]"
                         r"|(\.\.\. )?\((the first \d+ of \d+ lines shown|only its start shown"
                         r"|\d+ more lines not shown|\d+ lines? more)\)")
"""Lines codeduet's own reports print in or under their fences: the empty-output marker, its notes, the output-cut
marker, what a preview cut."""
TRACEBACK = "Traceback (most recent call last):"


@dataclass
class CodeBlock:
    """One fenced block: its language tag as written and its code."""

    language: str
    code: str

    @property
    def runnable_as(self) -> str | None:
        """'python', 'sh', 'bash', a language's name ('c', 'go', ...), or None when no sandbox runs this tag (nor a
        console block of output)."""
        if self.language.lower() == "console" and not console_commands(self.code):
            return None
        return ALIASES.get(self.language.lower())

    def runs_in(self, languages: tuple[str, ...] | list[str]) -> bool:
        """Whether it runs in a sandbox with these languages (Python and the shells run everywhere)."""
        runner = self.runnable_as
        return runner is not None and (runner == "python" or runner in SHELLS or runner in languages)

    @property
    def script(self) -> str:
        """What runs: the code, or for a console block the commands of its `$ ` lines without the prompt (a console
        block that names a file is that file's content, as written)."""
        console = self.language.lower() == "console" and self.filename is None
        return console_commands(self.code) if console else self.code

    @property
    def filename(self) -> str | None:
        """The path its first line names (`# filename: path`, AG2's convention; '' for an empty one), else None."""
        return declared_filename(self.code)

    @property
    def actionable(self) -> bool:
        """The proxy acts on it: a Python or shell block runs, a block that names a file (any language) is saved."""
        return self.runnable_as is not None or self.filename is not None

    @property
    def shown_only(self) -> bool:
        """It shows text (expected output, a log, a console session without commands): neither run nor reported."""
        return not self.actionable and self.language.lower() in SHOWN_ONLY

    def to_dict(self) -> dict[str, str]:
        """Plain dict for transcripts."""
        return asdict(self)


@dataclass(frozen=True)
class Segment:
    """A piece of a message: prose (`fence` '') or a fenced block (its opening line as written, its language tag
    and its code; `closed` False for a final unclosed block)."""

    text: str
    fence: str = ""
    language: str = ""
    closed: bool = True


def with_opening_fence(text: str) -> str:
    """A reply that forgot the opening fence of its first block, given it back: the code starts with a line naming
    its file (`// filename: src/lib.rs`), and the bare ``` after it closes nothing (the 1.5B wrote Exercism's
    rust/accumulate so, and was told its reply was cut off), or a reply with no fence at all that is the file from
    its first line (go/paasio: told there was no code). Any other text is returned as it is."""
    fences = text.count("```")
    if fences > 1:
        return text
    first = text.find("```") if fences else len(text)
    if text[first + 3:].split("\n", 1)[0].strip():  # the first fence has a tag: it opens a block
        return text
    lines = text[:first].split("\n")
    start = next((i for i, line in enumerate(lines) if declared_filename(line) is not None), None)
    if start is None or not "".join(lines[start + 1:]).strip():  # a file line, then the code, then the fence
        return text
    if not fences and "".join(lines[:start]).strip():  # no fence at all: only a reply that is the file from its
        return text                                       # first line (no prose before it)
    name = declared_filename(lines[start]) or ""
    lang = language_of_path(name)
    tag = lang.tags[0] if lang else "python" if name.endswith(".py") else ""
    body = "\n".join(lines[:start] + [f"```{tag}"] + lines[start:])
    return body + text[first:] if fences else body.rstrip("\n") + "\n```\n"


def segments(text: str | None) -> list[Segment]:
    """A message cut into prose and fenced blocks, in order: the closed ``` blocks, then a final unclosed one (a
    cut-off reply) when code follows its opening line; everything else is prose."""
    out: list[Segment] = []
    text, pos = with_opening_fence(text or ""), 0
    for m in FENCE.finditer(text):
        if m.start() > pos:
            out.append(Segment(text[pos:m.start()]))
        out.append(Segment(m.group(2), text[m.start():m.start(2)].rstrip("\n"), m.group(1).strip().lower()))
        pos = m.end()
    tail = OPEN_FENCE.search(text, pos)
    if tail and text.count("```", pos) % 2 == 1 and text[tail.end():].strip():
        if tail.start() > pos:
            out.append(Segment(text[pos:tail.start()]))
        out.append(Segment(text[tail.end():], tail.group(0).rstrip("\n"), tail.group(1).strip().lower(), False))
    elif pos < len(text):
        out.append(Segment(text[pos:]))
    return out


def extract_code_blocks(text: str | None) -> list[CodeBlock]:
    """All closed ``` blocks, in order; a final unclosed block (a cut-off reply) is included too (`segments`). A
    block that starts with a `# filename:` line and holds more of them is several files in one fence: one each."""
    blocks = [CodeBlock(s.language, s.text) for s in segments(text) if s.fence]
    return [part for b in blocks if b.code.strip() and not echoes_report(b.code) for part in split_files(b)]


def echoes_report(code: str) -> bool:
    """Whether a fence holds only text our reports print, copied back by the model: markers such as `(no output)`,
    or a traceback (no Python starts so). It is not code: it is neither run nor saved."""
    lines = [ln.strip() for ln in code.splitlines() if ln.strip()]
    return bool(lines) and (lines[0] == TRACEBACK or all(REPORT_LINE.fullmatch(ln) for ln in lines))


def split_files(block: CodeBlock) -> list[CodeBlock]:
    """A file block whose later lines name other files (`# filename: b.py` at the start of a line), as one block
    per file; any other block as it is."""
    if declared_filename(block.code) is None:
        return [block]
    parts: list[list[str]] = []
    for line in block.code.lstrip("\n").split("\n"):
        if not parts or (declared_filename(line) and line[:1] in "#/<"):
            parts.append([])
        parts[-1].append(line)
    if len(parts) == 1:
        return [block]
    return [CodeBlock(block.language, "\n".join(p).rstrip("\n") + "\n") for p in parts if "\n".join(p).strip()]


def console_commands(code: str) -> str:
    """The commands of a console session: its `$ ` lines without the prompt, with the lines a trailing `\\`
    continues (a leading `> ` dropped); the other lines are output and do not run. '' when it has none."""
    commands: list[str] = []
    more = False
    for line in code.splitlines():
        if more:
            commands.append(line[2:] if line.startswith("> ") else line)
        elif PROMPT.match(line):
            commands.append(PROMPT.sub("", line, count=1))
        else:
            continue
        more = commands[-1].rstrip().endswith("\\")
    return "\n".join(commands) + "\n" if commands else ""


def first_command(script: str, limit: int = 80) -> str:
    """How a shell block's run is shown: its first command line (comments skipped), with ` …` when more follows."""
    lines = [ln.strip() for ln in script.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    if not lines:
        return "(no command)"
    line = lines[0] if len(lines[0]) <= limit else lines[0][:limit] + "…"
    return line + (" …" if len(lines) > 1 and not line.endswith("…") else "")


def is_unclosed(text: str | None) -> bool:
    """True when the reply ends inside an open code fence (usually a reply cut at max_tokens)."""
    return bool(text) and with_opening_fence(text).count("```") % 2 == 1


def classify_reply(text: Any) -> str:
    """What a reply holds, as both the strategy (before the proxy sees it) and the proxy (answering it) judge it:
    empty (also content that is not text) | unclosed (cut off inside a code block) | no_code | unsupported (blocks,
    none of them Python or shell nor naming a file) | python (something to run or save, Python or shell)."""
    if not isinstance(text, str) or not text.strip():
        return "empty"
    if is_unclosed(text):
        return "unclosed"
    blocks = extract_code_blocks(text)
    if not blocks:
        return "no_code"
    return "python" if any(b.actionable for b in blocks) else "unsupported"
