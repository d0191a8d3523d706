"""Short summaries of what failed in a C, C++, Go, Rust or JavaScript build or run: compiler diagnostics, linker
errors, sanitizer reports and runtime panics, cut to what a small model must fix (the program's own output before
the failure is kept)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

SIGNALS = {4: "illegal instruction (SIGILL)", 6: "aborted (SIGABRT)", 7: "bus error (SIGBUS)", 9: "killed (SIGKILL)",
           8: "floating-point exception (SIGFPE)", 11: "segmentation fault (SIGSEGV)", 13: "broken pipe (SIGPIPE)",
           15: "terminated (SIGTERM)", 24: "CPU time limit exceeded (SIGXCPU)", 31: "bad system call (SIGSYS)"}
CONTEXT = 10  # lines of the program's own output kept from before the failure
FRAMES = 3  # stack frames in the user's own files kept (2 for where memory was allocated, freed or leaked)

NOT_USER = re.compile(r"^(/usr/|/lib|/rustc/|/opt/|/build/|~/\.cargo/|/root/\.cargo/|/home/[^/]+/\.cargo/|\.\./|"
                      r"node:|<anonymous|internal/|\?\?)|/go/pkg/mod/|/\.cargo/registry/|node_modules/")
NOISE = re.compile(
    r"^\S.*: (In (member |static member )?(function|instantiation|constructor|destructor|lambda function|"
    r"substitution)\b.*|At (global|top level) scope):$|^In file included from |^\s+from \S+[:,]$|"
    r"^\S+:\d+:\d+:\s+(required|recursively required|in (constexpr )?expansion)\b|^compilation terminated\.$|"
    r"^cc1\w*: (all |some )?warnings being treated as errors$|^\d+ (warnings?|errors?)( and \d+ errors?)? generated|"
    r"^exit status \d+$|^error: (aborting due to|could not compile)|^warning: .* generated \d+ warnings?|"
    r"^(For more information about|Some errors have detailed explanations)|^Node\.js v\d+|^\(Use `node --trace-|"
    r"^ {2,}(Compiling|Checking|Finished|Running|Blocking|Locking|Updating|Adding|Downloaded|Fresh) \S|"
    r"^AddressSanitizer:DEADLYSIGNAL$|^={30,}$|^==\d+==ABORTING$")
GCC = re.compile(r"^(?P<file>[^\s:][^:]*?):\d+(:\d+)?: (?P<sev>fatal error|error|warning|note): (?P<msg>.*)$")
GUTTER = re.compile(r"^ +(\d+|\+\+\+)? *\|")  # gcc's `    7 |     return total;` and `      |            ^~~~~`
LD = re.compile(r"^((/\S+/)?ld(\.\w+)?: |collect2: error: |\S+: (undefined reference to|multiple definition of) |"
                r"\S+\.o: in function |clang\S*: error: linker command failed)")
GO = re.compile(r"^(?P<file>\S+\.go):\d+(:\d+)?: .*$")
GO_PANIC = re.compile(r"^(panic|fatal error): ")
GO_AT = re.compile(r"^\t(?P<file>\S+):(?P<line>\d+)( \+0x[0-9a-f]+)?$")
RUST = re.compile(r"^(?P<sev>error|warning)(\[\w+\])?: ")
RUST_PANIC = re.compile(r"^thread '[^']*'( \(\d+\))? panicked at (?P<rest>.*)$")
NODE_HEAD = re.compile(r"^(?P<file>\S+?):\d+$")
NODE_ERROR = re.compile(r"^(Uncaught )?([A-Z]\w*)?(Error|Exception)\b")
NODE_AT = re.compile(r"^\s+at (.*?\()?(?P<file>[^\s()]+?):\d+:\d+\)?( \{)?$")
SAN = re.compile(r"^==\d+==ERROR: (?P<tool>\w+Sanitizer): (?P<desc>.*)$")
SAN_FRAME = re.compile(r"^\s+#\d+ 0x[0-9a-f]+ in (?P<fn>.+?) (?P<file>[^\s()]+):(?P<line>\d+)(:\d+)?$")
SAN_KEEP = re.compile(r"^((READ|WRITE) of size|0x[0-9a-f]+ is located|(allocated|freed|previously allocated) by |"
                      r"(Direct|Indirect) leak of|SUMMARY: |Address 0x|\s+This frame has|\s+\[\d+, \d+\) |"
                      r"==\d+==(The signal|Hint))")
SHORT = re.compile(r"^(file://)?(/workspace/|\./)")  # a user's path as the model wrote it: main.c
FATAL = re.compile(r"^(terminate called |thread '[^']*'( \(\d+\))? has overflowed its stack$|fatal runtime error: )")
UBSAN = re.compile(r"^(?P<file>\S+):\d+:\d+: runtime error: ")


@dataclass
class Block:
    """One diagnostic found in the output: what it is, its summarized lines and its one-line form."""

    kind: str  # "error", "warning" or "noise"
    lines: list[str]
    headline: str = ""


def signal_name(exit_code: int) -> str | None:
    """What killed a process that exited with 128+N (or -N, as Python reports it), None for an ordinary code."""
    number = -exit_code if exit_code < 0 else exit_code - 128
    return SIGNALS.get(number) if exit_code < 0 or exit_code > 128 else None


def is_user_file(path: str) -> bool:
    """Whether a path is the user's own file (relative or under /workspace), not a toolchain's or a library's."""
    return bool(path) and not NOT_USER.search(path)


def _name(function: str) -> str:
    """A function name without its argument list (total(std::vector<int> const&) -> total)."""
    bare = re.sub(r"\([^()]*\)$", "", function)
    return bare if bare and bare.count("(") == bare.count(")") else function


def _frames(frames: list[tuple[str, str]], keep: int) -> list[str]:
    """The first `keep` of (location, function) frames in the user's files, repeats dropped, as `main.c:7 in main`."""
    mine = (f"    {SHORT.sub('', where)} in {_name(fn)}" for where, fn in frames if is_user_file(where.removeprefix("file://")))
    return (list(dict.fromkeys(mine)) or [f"    {where} in {_name(fn)}" for where, fn in frames[:1]])[:keep]


def _skip(lines: list[str], j: int, test: Callable[[str], object]) -> int:
    """The index of the first line from j on that fails the test."""
    while j < len(lines) and test(lines[j]):
        j += 1
    return j


def _gcc(lines: list[str], i: int) -> tuple[int, Block] | None:
    """A gcc/clang `file:line:col: error: message` with its source and caret (and the user's `required from here`)."""
    m = GCC.match(lines[i])
    if not m:
        return None
    j = _skip(lines, i + 1, GUTTER.match)
    kind = {"note": "noise", "warning": "warning"}.get(m["sev"], "error")
    above = lines[i - 1] if i and kind == "error" and not is_user_file(m["file"]) else ""
    here = above if re.search(r":\s+required from here$", above) and is_user_file(above.split(":")[0]) else ""
    headline = f"{here.split(':   ')[0]}: {m['sev']}: {m['msg']}" if here else lines[i]
    return j, Block(kind, [here] * bool(here) + lines[i:min(j, i + 7)], headline)


def _ld(lines: list[str], i: int) -> tuple[int, Block] | None:
    """A run of linker errors (undefined reference, multiple definition, `ld returned 1 exit status`)."""
    j = _skip(lines, i, LD.match)
    if j == i:
        return None
    clean = [re.sub(r"/tmp/[\w.-]+\.o:|^(/\S+/)?ld(\.\w+)?: ", "", s).replace("/workspace/", "").strip()
             for s in lines[i:j] if "__odr_asan" not in s]
    main = [s for s in clean if re.search(r"undefined reference|multiple definition|cannot find|error:", s)]
    return j, Block("error", clean[:7] + clean[-1:] * (len(clean) > 7), main[0] if main else clean[0])


def _go(lines: list[str], i: int) -> tuple[int, Block] | None:
    """A `go build`/`go vet` error `./main.go:5:2: message` (its tab-indented detail kept), or the `# pkg` header."""
    if re.match(r"^# \S+$", lines[i]) and i + 1 < len(lines) and GO.match(lines[i + 1]):
        return i + 1, Block("noise", [lines[i]])
    m = GO.match(lines[i])
    if not m:
        return None
    j = _skip(lines, i + 1, lambda s: s.startswith("\t"))
    return j, Block("error", lines[i:min(j, i + 5)], lines[i])


def _go_panic(lines: list[str], i: int) -> tuple[int, Block] | None:
    """A Go runtime panic or fatal error and its goroutine trace, cut to the message and the user's frames."""
    if not GO_PANIC.match(lines[i]):
        return None
    message, frames, j = [lines[i]], [], i + 1
    while j < len(lines):
        s, at = lines[j], GO_AT.match(lines[j + 1]) if j + 1 < len(lines) else None
        if at and not s.startswith("\t"):
            frames.append((f"{at['file']}:{at['line']}", s.removeprefix("created by ").split(" in goroutine")[0]))
            j += 2
        elif s.startswith(("\t", "[signal ")) and not frames:
            message.append(s)
            j += 1
        elif not s.strip() or re.match(r"^(goroutine \d+ |exit status \d+$|\.\.\.)", s):
            j += 1
        else:
            break
    return j, Block("error", message + _frames(frames, FRAMES), lines[i])


def _rust_panic(lines: list[str], i: int) -> tuple[int, Block] | None:
    """A Rust panic `thread 'main' panicked at src/main.rs:4:5:` + message, with the user's backtrace frames."""
    m = RUST_PANIC.match(lines[i])
    if not m:
        return None
    j = _skip(lines, i + 1, lambda s: not re.match(r"^(note: |stack backtrace:|thread ')", s))
    message, frames = lines[i:min(j, i + 20)], []
    while j < len(lines) and re.match(r"^(stack backtrace:|note: |\s+\d+: |\s+at )", lines[j]):
        at = re.match(r"^\s+at (.+?:\d+)(:\d+)?$", lines[j])
        if at and re.match(r"^\s+\d+: ", lines[j - 1]):
            frames.append((at[1] + (at[2] or ""), lines[j - 1].split(": ", 1)[1]))
        j += 1
    where = m["rest"].rstrip(":")
    headline = f"{message[1]} ({where})" if len(message) > 1 and m["rest"].endswith(":") else lines[i]
    return j, Block("error", message + _frames(frames, FRAMES), headline)


def _rust_section(section: list[str], first: bool) -> list[str]:
    """The lines of one part of a rustc diagnostic worth keeping: the error with its snippet, help, not notes."""
    head = section[0]
    if re.match(r"^\s*= help: ", head):
        return [head[:200]]
    if not first and not head.startswith("help: "):
        return []
    foreign = any(re.match(r"^\s*(-->|:::) ", s) and not is_user_file(s.split()[1]) for s in section)
    body = [s for s in section[1:] if not re.match(r"^\s*(\|[\s|]*)?$|^\s*::: ", s)]
    return [head[:200]] + ([] if foreign else body[:8 if first else 4])


def _rust(lines: list[str], i: int) -> tuple[int, Block] | None:
    """A rustc/cargo `error[E0425]: ...` block: location, source lines with markers, `help:` lines."""
    m = RUST.match(lines[i])
    if not m:
        return None
    j = _skip(lines, i + 1, str.strip)
    parts = re.split(r"\n(?=(?:note|help)(?:\[\w+\])?: |\s+= (?:note|help): )", "\n".join(lines[i:j]))
    sections = [part.split("\n") for part in parts]
    kept = [s for n, sec in enumerate(sections) for s in _rust_section(sec, n == 0)]
    where = next((s.split()[1] for s in lines[i + 1:j] if s.lstrip().startswith("--> ")), "")
    return j, Block(m["sev"], kept, f"{lines[i]} ({where})" if where else lines[i])


def _node(lines: list[str], i: int) -> tuple[int, Block] | None:
    """A Node.js uncaught exception or SyntaxError: location, source line and caret, the error, the user's frames."""
    head, j = NODE_HEAD.match(lines[i]), i
    if head and i + 2 < len(lines) and re.match(r"^\s*\^+\s*$", lines[i + 2]):
        j = _skip(lines, i + 3, lambda s: not s.strip())
    elif not (NODE_ERROR.match(lines[i]) and i + 1 < len(lines) and NODE_AT.match(lines[i + 1])):
        return None
    start, j = j, _skip(lines, j, lambda s: s.strip() and not s.lstrip().startswith("at "))
    message, frames = [s for s in lines[start:min(j, start + 6)] if not NOISE.search(s)], []
    while j < len(lines) and lines[j].lstrip().startswith("at "):
        at = NODE_AT.match(lines[j])
        if at and is_user_file(at["file"].removeprefix("file://")) and len(frames) < FRAMES:
            frames.append(lines[j].removesuffix(" {"))
        j += 1
    if lines[j - 1].endswith(" {"):  # the error's own properties, `{ code: 'MODULE_NOT_FOUND', ... }`
        j = _skip(lines, j, lambda s: s != "}") + 1
    source = lines[i:i + 3] if head and not head["file"].startswith("node:") else []
    return (j, Block("error", source + message + frames, message[0])) if message else None


def _sanitizer(lines: list[str], i: int) -> tuple[int, Block] | None:
    """An AddressSanitizer/LeakSanitizer report, cut to the error, the user's frames, the region and the SUMMARY."""
    m = SAN.match(lines[i])
    if not m:
        return None
    end = next((k for k in range(i, len(lines)) if lines[k].startswith("SUMMARY: ")), len(lines) - 1)
    tail = next((k for k in range(end, min(end + 60, len(lines))) if re.match(r"^==\d+==ABORTING", lines[k])), end)
    out = [re.sub(r" (at pc|\(pc) 0x.*$", "", lines[i].split("==", 2)[2])]
    stack: list[tuple[str, str]] = []
    stacks = leaks = 0
    for s in lines[i + 1:end + 1]:
        frame = SAN_FRAME.match(s)
        if re.match(r"^\s+#\d+ 0x", s):
            stack += [(f"{frame['file']}:{frame['line']}", frame["fn"])] if frame else []
            continue
        if stack and leaks <= FRAMES:
            out += _frames(stack, FRAMES if stacks == 0 else 2)
        stack, stacks = [], stacks + bool(stack)
        leaks += bool(re.match(r"^(Direct|Indirect) leak of", s))
        if SAN_KEEP.match(s) and (leaks <= FRAMES or s.startswith("SUMMARY: ")):
            out.append(re.sub(r"^==\d+==", "", s))
    out += _frames(stack, 2) if stack and leaks <= FRAMES else []
    if leaks > FRAMES:
        out.insert(-1, f"({leaks - FRAMES} more leaks)")
    where = next((f" at {f.strip()}" for f in out if f.startswith("    ")), "")
    kind = re.split(r" on address | at pc | \(pc ", m["desc"])[0]
    return tail + 1, Block("error", out, f"{m['tool']}: {kind}{where}")


def _ubsan(lines: list[str], i: int) -> tuple[int, Block] | None:
    """An UndefinedBehaviorSanitizer `main.c:5:12: runtime error: ...` line (with its user frames, if printed)."""
    m = UBSAN.match(lines[i])
    if not m:
        return None
    j = _skip(lines, i + 1, lambda s: SAN_FRAME.match(s) or s.startswith("SUMMARY: UndefinedBehavior"))
    frames = [(f"{f['file']}:{f['line']}", f["fn"]) for f in map(SAN_FRAME.match, lines[i + 1:j]) if f]
    return j, Block("error", [lines[i]] + _frames(frames, FRAMES), lines[i])


def _fatal(lines: list[str], i: int) -> tuple[int, Block] | None:
    """A C++ exception nobody caught (`terminate called after throwing ...` + `what():`) or a Rust stack overflow."""
    if not FATAL.match(lines[i]):
        return None
    j = _skip(lines, i + 1, lambda s: s.startswith(("  what(): ", "fatal runtime error: ")))
    return j, Block("error", lines[i:j], " ".join(s.strip() for s in lines[i:j]))


MATCHERS = (_fatal, _sanitizer, _ubsan, _gcc, _ld, _go, _go_panic, _rust_panic, _rust, _node)


def _parse(output: str) -> tuple[list[str], list[tuple[int, Block]], list[int]]:
    """The output's lines, the diagnostics found in it (by first line) and the indices of the other lines."""
    lines = output.splitlines()
    blocks: list[tuple[int, Block]] = []
    other: list[int] = []
    i = 0
    while i < len(lines):
        noise = (i + 1, Block("noise", [lines[i]])) if NOISE.search(lines[i]) else None
        found = noise or next((hit for match in MATCHERS if (hit := match(lines, i))), None)
        if found:
            blocks.append((i, found[1]))
        else:
            other.append(i)
        i = found[0] if found else i + 1
    return lines, blocks, other


def summarize(output: str, limit: int = 3) -> str | None:
    """The program's output before the failure, then its first `limit` errors cut short; None when there is none."""
    lines, blocks, other = _parse(output)
    errors = [(i, b) for i, b in blocks if b.kind == "error"]
    if not errors:
        return None
    out = "\n".join(lines[k] for k in other if k < errors[0][0]).rstrip().splitlines()[-CONTEXT:]
    out = out[next((n for n, s in enumerate(out) if s.strip()), len(out)):]  # no blank lines first
    for _, block in errors[:limit]:
        out += block.lines
    more = len(errors) - limit
    out += [f"({more} more error{'s' * (more > 1)})"] * (more > 0)
    return "\n".join(out + [lines[k] for k in other if k > errors[0][0] and lines[k].strip()][:CONTEXT])


def first_error_line(output: str) -> str | None:
    """The one line that best names the failure (for one-line summaries), None when no error is found."""
    errors = [b for _, b in _parse(output)[1] if b.kind == "error"]
    return errors[0].headline if errors else None
