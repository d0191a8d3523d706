"""`bench exercism` against the image's own compilers: their versions read from the image once per bench, a Go module
directive newer than its Go lowered to that Go's version (said per exercise), and an example solution that needs a
newer compiler than the image's told apart from a failure, by the manifest (Cargo.toml's `rust-version`) before the
run or by the compiler's own error after it (rustc's E0658, Go's "requires go1.N or later")."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

VERSION_PROBE = "go env GOVERSION 2>/dev/null; rustc --version 2>/dev/null"
"""What the image is asked, in a container with no network: Go's version (`go1.24.4`), rustc's (`rustc 1.85.1 ...`)."""


def parse_versions(text: str) -> dict[str, str]:
    """{'go': '1.24', 'rustc': '1.85'} (major.minor) from the probe's output; a compiler the image lacks is absent."""
    out = {}
    if m := re.search(r"^go(\d+\.\d+)", text, re.MULTILINE):
        out["go"] = m[1]
    if m := re.search(r"^rustc (\d+\.\d+)", text, re.MULTILINE):
        out["rustc"] = m[1]
    return out


@lru_cache(maxsize=8)
def image_versions(image: str) -> dict[str, str]:
    """The compilers' versions as the image itself reports them (the built image that serves `image`, as a run
    resolves it); {} when Docker or the image is not there (then nothing is lowered and the run says why)."""
    try:
        from agents.sandbox.image import docker_client, resolve_image

        client = docker_client()
        out = client.containers.run(resolve_image(image, client=client), ["sh", "-c", VERSION_PROBE],
                                    network_mode="none", remove=True)
    except Exception:  # no daemon, no image: the run itself reports it in one line
        return {}
    return parse_versions(out.decode("utf-8", "replace"))


def newer(wanted: str, have: str) -> bool:
    """Whether version `wanted` (1.26, 1.87.0) is newer than `have` (1.24), by major.minor."""
    def key(v: str) -> tuple[int, ...]:
        return tuple(int(p) for p in re.findall(r"\d+", v)[:2])

    return key(wanted) > key(have)


GO_DIRECTIVE = re.compile(r"^(go[ \t]+)(\d+\.\d+(?:\.\d+)?)[ \t]*$", re.MULTILINE)


def lower_go_mod(text: str, go: str | None) -> tuple[str, str | None]:
    """go.mod with its `go` directive lowered to the image's Go when it names a newer one (Go with GOTOOLCHAIN=local
    refuses such a module before compiling anything); the note says so. The language the code uses is then the
    older one: code that needs the newer language fails to compile with "requires go1.N or later", which
    `newer_compiler` tells apart."""
    m = GO_DIRECTIVE.search(text)
    if not go or not m or not newer(m[2], go):
        return text, None
    lowered = text[:m.start()] + m[1] + go + text[m.end():]
    return re.sub(r"^toolchain[ \t]+\S+[ \t]*\n", "", lowered, flags=re.MULTILINE), \
        f"go.mod directive lowered {m[2]} -> {go}"


def adapt_files(files: dict[str, str], versions: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """The workspace files as the image's compilers take them, and what was changed (one note each)."""
    out, notes = dict(files), []
    for rel, text in files.items():
        if Path(rel).name == "go.mod":
            out[rel], note = lower_go_mod(text, versions.get("go"))
            notes += [note] if note else []
    return out, notes


def manifest_needs(folder: Path, versions: dict[str, str]) -> str | None:
    """Why an exercise cannot build with the image's compiler, from its manifest alone: a Cargo.toml `rust-version`
    newer than the image's rustc (cargo refuses the package)."""
    cargo = folder / "Cargo.toml"
    if "rustc" in versions and cargo.is_file():
        m = re.search(r"^\s*rust-version\s*=\s*[\"']([\d.]+)[\"']", cargo.read_text(encoding="utf-8", errors="replace"),
                      re.MULTILINE)
        if m and newer(m[1], versions["rustc"]):
            return f"needs rustc >= {m[1]} (Cargo.toml rust-version; the image has rustc {versions['rustc']})"
    return None


def newer_compiler(output: str, versions: dict[str, str], adapted: list[str] | None = None) -> str | None:
    """Why an example solution failed for the compiler's age, not the code's fault, from the compiler's own error;
    None when the output shows no such error. rustc: E0658 (an unstable feature: stable in a later release) and
    cargo's `rust-version` refusal; Go: "requires go1.N or later" beyond the image's Go, a go.mod it refuses as too
    new, and a build error once the directive was lowered (`adapted`): the code needs the newer Go (a newer
    standard library or language), so the directive could not be lowered."""
    rustc, go = versions.get("rustc", "?"), versions.get("go", "?")
    lowered = next((m for note in adapted or [] if (m := re.search(r"lowered (\S+) -> (\S+)", note))), None)
    build = re.search(r"^\s*(\S+?\.go:\d+):\d+: (.+)", output, re.MULTILINE)
    if lowered and build:
        return (f"needs go >= {lowered[1]}: the example and its tests do not build with go.mod lowered to {lowered[2]} "
                f"({build[2].strip()} at {build[1]})")
    if m := re.search(r"requires rustc ([\d.]+) or newer", output):
        return f"needs rustc >= {m[1]} (the image has rustc {rustc})"
    if m := re.search(r"error\[E0658\]: (.+)", output):
        return f"needs a rustc newer than {rustc}: {m[1].strip()}{_under_caret(output[m.end():])}"
    if m := re.search(r"^(?:\s*(\S+?\.go:\d+):\d+:)?\s*(.*?)\s*requires go(\d+\.\d+)[.\d]* or later", output,
                      re.MULTILINE):
        if go == "?" or newer(m[3], go):
            return f"needs go >= {m[3]}: {m[2]}{f' (at {m[1]})' if m[1] else ''} (the image has go {go})"
    if m := re.search(r"go\.mod requires go >= ([\d.]+)", output):
        return f"needs go >= {m[1]} (go.mod; the image has go {go})"
    return None


def _under_caret(after: str) -> str:
    """` (u32 ... `is_multiple_of` at src/lib.rs:3)`: the code rustc's first caret points at, and where."""
    where = re.search(r"-->\s*(\S+?):(\d+):\d+", after)
    lines = after.splitlines()
    for i, line in enumerate(lines[1:], 1):
        caret = re.match(r"\s*\|(\s*)(\^+)", line)
        code = re.match(r"\s*\d+\s*\|(.*)", lines[i - 1])
        if caret and code:
            start = len(caret[1])
            text = code[1][start:start + len(caret[2])].strip()
            return f" (`{text}` at {where[1]}:{where[2]})" if where and text else ""
    return ""
