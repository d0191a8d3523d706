"""The languages a sandbox can run besides Python: their fence tags, the Debian packages of their toolchain, and
how a block of each is built and run. A scenario names the ones it needs (`sandbox.languages: [c, go]`); its image
is built for that set (agents/sandbox/image.py) and its blocks run as below (agents/sandbox/filenames.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable

SANITIZE = ("-g -O1 -fsanitize=address,undefined -fno-sanitize=object-size -fno-omit-frame-pointer "
            "-fno-sanitize-recover=undefined")
"""How a C or C++ block is compiled: with AddressSanitizer and UndefinedBehaviorSanitizer, so a bad access or an
overflow stops the program at its line instead of corrupting memory silently. UBSan's object-size check is left to
ASan, whose report of the same access names the allocation too (docs/LANGUAGES.md)."""
BIN = "/tmp/codeduet-bin"
"""Where a block's executable is built (a tmpfs of the container: nothing is copied back)."""


@dataclass(frozen=True)
class Language:
    """One language: what a block is tagged, what the image needs, and how a file of it runs."""

    name: str
    """The name a scenario uses (`sandbox.languages`)."""
    title: str
    """How the prompts name it."""
    tags: tuple[str, ...]
    """Fence tags that mean it (```c, ```c++ ...); lower case."""
    suffix: str
    """The file suffix of a block saved without a name (block03.c)."""
    packages: tuple[str, ...]
    """Debian packages of its toolchain (the sandbox image gets them)."""
    run: str
    """The `sh -c` script that builds and runs the file "$1" (its stem in "$2"); a build failure is the exit code."""
    program: Callable[[str], bool]
    """Whether a saved file of it is a whole program (it has a main): then saving it also builds and runs it."""
    tools: str
    """The toolchain commands the system prompt names."""
    built: str
    """One sentence on how its files are built and run, in the languages' system prompt."""


def _has(*patterns: str) -> Callable[[str], bool]:
    """A test that the text has a line matching every pattern."""
    regexes = [re.compile(p, re.MULTILINE) for p in patterns]
    return lambda text: all(r.search(text) for r in regexes)


def _script(text: str) -> bool:
    """A JavaScript file that is a script, not a module (no `export`, no `module.exports`): node runs it."""
    return re.search(r"^\s*export\s|\bmodule\.exports\b|^\s*exports\.", text, re.MULTILINE) is None


C_MAIN = r"^\s*(int|void)\s+main\s*\("
BUILD = f'b={BIN}/$1; shift; mkdir -p {BIN} && '
"""Every build script starts so: "$1" is the program's name, the rest are its source files."""
LINE_BUFFERED = (f"[ -f {BIN}/line_buffered.h ] || printf '%s\\n' '#include <stdio.h>' "
                 "'__attribute__((constructor)) static void codeduet_line_buffered(void) "
                 f"{{ setvbuf(stdout, 0, _IOLBF, 0); }}' > {BIN}/line_buffered.h && ")
"""C and C++ programs built from blocks flush stdout at every line: into a pipe it is otherwise block-buffered, and
a sanitizer's abort threw away everything the program had printed before the bad access."""
C_FLAGS = f"{SANITIZE} -include {BIN}/line_buffered.h"
LANGUAGES: dict[str, Language] = {lang.name: lang for lang in (
    Language("c", "C", ("c",), ".c", ("gcc", "libc6-dev", "make"),
             BUILD + LINE_BUFFERED + f'cc -std=gnu17 -Wall {C_FLAGS} -o "$b" "$@" -lm && exec "$b"',
             _has(C_MAIN), "gcc (cc), make",
             "C is compiled with `cc -g -fsanitize=address,undefined`: a bad memory access stops the program and "
             "names its line."),
    Language("cpp", "C++", ("cpp", "c++", "cxx", "cc"), ".cpp", ("g++", "make", "cmake", "catch2"),
             BUILD + LINE_BUFFERED + f'c++ -std=c++20 -Wall {C_FLAGS} -o "$b" "$@" && exec "$b"',
             _has(C_MAIN), "g++ (c++), make, cmake, Catch2",
             "C++ is compiled with `c++ -std=c++20 -g -fsanitize=address,undefined`."),
    Language("go", "Go", ("go", "golang"), ".go", ("golang-go",),
             'shift; exec go run "$@"', _has(r"^package main\b", r"^func main\(\)"),
             "go (go run, go build, go test)",
             "Go: `go run main.go`; tests with `go test ./...` need a go.mod (`go mod init NAME`)."),
    Language("rust", "Rust", ("rust", "rs"), ".rs", ("rustc", "cargo"),
             BUILD + 'rustc --edition 2021 -g -o "$b" "$1" && exec "$b"',
             _has(r"^\s*(pub\s+)?fn\s+main\s*\("), "rustc, cargo (offline: no crates.io)",
             "Rust: a single file is compiled with `rustc --edition 2021`; a cargo project (Cargo.toml, src/) is "
             "built with `cargo run` or `cargo test` (no crates from crates.io)."),
    Language("javascript", "JavaScript", ("javascript", "js", "node", "nodejs", "mjs", "cjs"), ".js",
             ("nodejs", "jest", "node-babel7"), 'shift; exec node "$1"', _script,
             "node (node --test or jest for tests)",
             "JavaScript runs with `node file.js` (CommonJS: require/module.exports)."),
)}
"""Every language besides Python, by name."""
NAMES = tuple(LANGUAGES)
BY_TAG = {tag: lang for lang in LANGUAGES.values() for tag in lang.tags}
BY_SUFFIX = {lang.suffix: lang for lang in LANGUAGES.values()} | {".mjs": LANGUAGES["javascript"],
                                                                   ".cjs": LANGUAGES["javascript"],
                                                                   ".cc": LANGUAGES["cpp"], ".cxx": LANGUAGES["cpp"],
                                                                   ".h": LANGUAGES["c"], ".hpp": LANGUAGES["cpp"],
                                                                   ".hh": LANGUAGES["cpp"]}
"""A file's language by its suffix (headers too: their `// filename:` line is kept, and they never run)."""


BLOCKS_DIR = ".codeduet_blocks"
"""Where a Go block without a file name is saved: all .go files of a folder are one package, so a throwaway
block01.go beside the project's wrap.go broke `go test` (redeclared), and Go skips dot folders in `./...`."""


def block_name(language: str, number: int) -> str:
    """The throwaway file a block without `// filename:` is saved as: block03.c, .codeduet_blocks/block04.go; a
    block of another tag only saved (the AG2 executor's html) as block05.html."""
    lang = LANGUAGES.get(language)
    suffix = lang.suffix if lang else ".py" if language == "python" else ".sh" if language in ("sh", "bash") \
        else f".{language}"
    return f"{BLOCKS_DIR + '/' if language == 'go' else ''}block{number:02d}{suffix}"


def not_a_program(language: str, code: str) -> str | None:
    """Why a block without a file name cannot run as a program of its language (no main: a file sent without its
    `// filename:` line), said to the model; None when it can."""
    lang = LANGUAGES.get(language)
    if lang is None or lang.program(code):
        return None
    main = {"go": "`package main` with `func main()`", "javascript": "a script, not a module (no export)"}
    return (f"[codeduet: not run: this ```{lang.tags[0]} block is not a whole program (it needs "
            f"{main.get(lang.name, 'a main function')}). To save it as a file of the project, send it again "
            f"whole with the first line `// filename: <its path>`]")


def language_of_tag(tag: str) -> Language | None:
    """The language a fence tag names (```c++ -> cpp), None for Python, shells and anything else."""
    return BY_TAG.get(tag.lower())


def language_of_path(path: str) -> Language | None:
    """The language of a saved file by its suffix (main.go -> go), None for others."""
    dot = path.rfind(".")
    return BY_SUFFIX.get(path[dot:].lower()) if dot > path.rfind("/") else None


def packages(names: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The Debian packages of a set of languages, in a stable order."""
    return tuple(dict.fromkeys(p for name in sorted(names) for p in LANGUAGES[name].packages))


def normalize(names: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """A language list as a sorted set of names (aliases such as c++ or js accepted); ValueError on an unknown one."""
    out = set()
    for raw in names:
        name = str(raw).strip().lower()
        if name == "python":
            continue  # always there
        lang = LANGUAGES.get(name) or BY_TAG.get(name)
        if lang is None:
            raise ValueError(f"unknown language {raw!r} (known: python, {', '.join(NAMES)})")
        out.add(lang.name)
    return tuple(sorted(out))


def run_argv(lang: Language, workspace: Path, path: str, sanitize: bool = True) -> list[str]:
    """How the file `path` of the workspace is built and run: its language's script with the program's name and
    its sources, which are the file and, for C, C++ and Go, the files of its language beside it that are not
    programs themselves (util.c beside main.c; the other files of Go's package main), as a developer builds them.
    `sanitize` False builds C and C++ without the sanitizers."""
    folder = PurePosixPath(path).parent
    sources = [path]
    if lang.name in ("c", "cpp", "go"):
        for other in sorted((workspace / folder).glob(f"*{lang.suffix}")):
            rel = str(folder / other.name) if str(folder) != "." else other.name
            if rel != path and other.is_file() and not other.is_symlink() and _library(lang, other):
                sources.append(rel)
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", PurePosixPath(path).stem) or "program"
    script = lang.run if sanitize else lang.run.replace(SANITIZE, "-g -O1")
    return ["sh", "-c", script, "sh", name, *sources]


def _library(lang: Language, file: Path) -> bool:
    """A source file that goes into the build of its neighbour: not a program of its own, and for Go not a test."""
    try:
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    if lang.name == "go":
        return not file.name.endswith("_test.go") and re.search(r"^package main\b", text, re.MULTILINE) is not None \
            and not lang.program(text)
    return not lang.program(text)


def in_cargo_project(workspace: Path, path: str) -> bool:
    """A .rs file under a folder with a Cargo.toml: cargo builds it (`cargo run`, `cargo test`), not rustc alone."""
    folder = PurePosixPath(path).parent
    while True:
        if (workspace / folder / "Cargo.toml").is_file():
            return True
        if str(folder) in (".", ""):
            return False
        folder = folder.parent


def resent_file(lang: Language, workspace: Path, code: str, limit: int = 200) -> str | None:
    """The project file of `lang` that a block without a file name is a new version of: at least half of that
    file's lines (3 or more) are in the block, and no other such file comes close. Small models send a given file
    back changed but without its `// filename:` line (the 1.5B did so for stats.c, wrap.go and slugify.js); None
    when no single file fits."""
    lines = {ln.strip() for ln in code.splitlines() if ln.strip()}
    scores = []
    for path in sorted(workspace.rglob(f"*{lang.suffix}"))[:limit]:
        rel = path.relative_to(workspace).as_posix()
        if rel.startswith(".") or "/." in rel or re.fullmatch(r"block\d+\.\w+", rel) or not path.is_file():
            continue
        try:
            own = [ln.strip() for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
        except OSError:
            continue
        if len(own) >= 3:
            scores.append((sum(ln in lines for ln in own) / len(own), rel))
    scores.sort(reverse=True)
    if not scores or scores[0][0] < 0.5 or (len(scores) > 1 and scores[1][0] > scores[0][0] - 0.2):
        return None
    return scores[0][1]
