"""`bench exercism`: aider's polyglot-benchmark protocol through the product. This module reads a track (an
Exercism track checkout, or Aider-AI/polyglot-benchmark with one folder per language) and turns each practice
exercise into a Scenario: the instructions as the task, the solution stubs and the files the build needs in the
workspace, and the track's own test command as a `command:` check whose test files stay hidden. Running them and
counting aider's two tries is agents/bench/exercism_run.py."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

import yaml

from agents.bench.exercism_toolchain import adapt_files
from agents.loop.errors import BadInputError
from agents.sandbox.config import language_image
from agents.sandbox.languages import NAMES
from agents.scenario.spec import Scenario, load_scenario

T = TypeVar("T")

IMAGE = language_image(NAMES)
"""The sandbox image every exercise runs in: the one with every toolchain (`codeduet sandbox build --languages
c,cpp,go,javascript,rust`), Python included."""
CHECK_TIMEOUT = 180
"""Seconds the hidden tests may take, build included (aider's run_unit_tests allows 3 minutes)."""
PROTOCOL = {"attempts": 1, "candidates": 1, "max_resamples": 0, "repeat_reasks": 0, "file_preview": 10_000}
"""The strategy of aider's two tries: one conversation, one reply per turn, no re-ask of a cut-off or prose reply
(so a try is one model reply), the whole stubs shown. With max_consecutive_auto_reply 1 the model replies twice:
the first try, then one repair turn that sees the hidden tests' output."""
MAX_AUTO_REPLY = 1
PROTOCOLS = {"aider": "aider's polyglot protocol: two tries",
             "codeduet": "codeduet's own loop: candidates, attempts and repairs within the time budget"}
"""The protocols the bench measures: aider's exact one (PROTOCOL) and the product's defaults, on the same exercises
(the stubs shown whole in both)."""
TASK_TAIL = """
####

Use the instructions above to change the files you were given: {files}
Keep the names of the existing functions and classes: other code, such as the unit tests, refers to them.
Use only the standard library; do not install any packages.
Send each file you change whole, in a ```{fence} block whose first line is `{comment} filename: <path>`.
The exercise's tests (not shown to you) are then run with `{command}`."""
"""What follows the exercise's instructions: what aider's addendum says (benchmark/prompts.py), and one line on how
to send files and what runs them."""


@dataclass(frozen=True)
class TrackSpec:
    """How one language's exercises are tested here, or why they cannot be."""

    slug: str
    sandbox: tuple[str, ...]
    """The scenario's `sandbox.languages`."""
    fence: str
    command: str
    """The test command, run in /workspace; {name} is the exercise's folder name, {tests} its test files."""
    shown: str = ""
    """The test command as the task names it (default: `command`)."""
    unsupported: str | None = None


CPP_TEST = ("d=/tmp/x/{name}; rm -rf /tmp/x && mkdir -p /tmp/x && cp -r . \"$d\" && cmake -S \"$d\" -B /tmp/x/build "
            "-Wno-dev -Wno-deprecated -DEXERCISM_RUN_ALL_TESTS=1 >/dev/null && make -s -C /tmp/x/build")
"""The track's CMakeLists.txt names the program after its folder, so the build runs on a copy in a folder of the
exercise's name; EXERCISM_RUN_ALL_TESTS compiles every test case in (else only the first runs); `make` builds the
tests and runs them (the CMakeLists' test_<name> target)."""
NODE_MODULES = "/usr/share/nodejs"
JEST_CONFIG = json.dumps({"transform": {r"\.js$": [f"{NODE_MODULES}/babel-jest", {
    "configFile": False, "babelrc": False,
    "presets": [[f"{NODE_MODULES}/@babel/preset-env", {"targets": {"node": "current"}}]]}]}})
JEST_TEST = ("jest --ci --no-watchman --rootDir . --config "
             + shlex.quote(JEST_CONFIG).replace("{", "{{").replace("}", "}}") + " {tests}")
"""The track's tests run under Debian's jest with its babel (the image's jest and node-babel7 packages, found by
their path in /usr/share/nodejs: jest resolves a transform from the project): the exercise's own babel.config.js
names Exercism's preset from npm, so the transform is given here, ES modules to CommonJS for the running node."""
SPECS = {s.slug: s for s in (
    TrackSpec("go", ("go",), "go", "go test ./..."),
    TrackSpec("rust", ("rust",), "rust", "CARGO_TARGET_DIR=/tmp/cargo-target cargo test -- --include-ignored",
              "cargo test -- --include-ignored"),
    TrackSpec("cpp", ("cpp",), "cpp", CPP_TEST, "cmake -DEXERCISM_RUN_ALL_TESTS=1 and make, in a build folder"),
    TrackSpec("python", (), "python", "python3 -m pytest -q -p no:cacheprovider {tests}"),
    TrackSpec("javascript", ("javascript",), "javascript", JEST_TEST, "jest (its tests through babel)"),
    TrackSpec("java", (), "java", "./gradlew test", unsupported=(
        "its tests run under Gradle with JUnit and AssertJ downloaded from Maven Central; the sandbox is offline "
        "and has no JDK")),
)}
"""Every track slug this bench knows, runnable or not."""
C_LIKE = ("go", "rust", "cpp", "javascript")
"""Tracks whose files take a `// filename:` line (the others `# filename:`)."""
SUFFIX_SLUG = {".go": "go", ".rs": "rust", ".cpp": "cpp", ".h": "cpp", ".py": "python", ".js": "javascript",
               ".java": "java"}


@dataclass
class Exercise:
    """One practice exercise as its .meta/config.json describes it."""

    slug: str
    """The track: go, rust, cpp, python, javascript, java."""
    name: str
    path: Path
    solution: list[str]
    tests: list[str]
    example: list[str]
    editor: list[str] = field(default_factory=list)
    skip: str | None = None
    """Why it cannot run here (None: it can)."""
    adapted: list[str] = field(default_factory=list)
    """What its files were changed in for the image's compilers (build_scenario: "go.mod directive lowered ...")."""

    @property
    def key(self) -> str:
        """go/alphametics."""
        return f"{self.slug}/{self.name}"

    def instructions(self) -> str:
        """What aider sends first: .docs/introduction.md, instructions.md and instructions.append.md, joined."""
        docs = self.path / ".docs"
        return "".join((docs / n).read_text(encoding="utf-8") for n in ("introduction.md", "instructions.md",
                                                                          "instructions.append.md")
                       if (docs / n).is_file())

    def hidden(self) -> list[str]:
        """The workspace paths the tests bring (files, or folders such as Rust's tests/ and C++'s test/); never in
        the workspace the model sees."""
        paths = list(self.tests)
        if self.slug == "go":
            paths += [p.name for p in sorted(self.path.glob("*_test.go")) if p.name not in self.editor]
        if self.slug in ("rust", "cpp"):
            folder = "tests" if self.slug == "rust" else "test"
            paths = [p for p in paths if not p.startswith(folder + "/")]
            paths += [folder] if (self.path / folder).is_dir() else []
        return list(dict.fromkeys(paths))

    def support(self) -> list[str]:
        """The other files the build needs (go.mod, Cargo.toml, CMakeLists.txt, editor files such as cases_test.go):
        every file outside the dot folders that is neither a solution file nor hidden."""
        hidden = self.hidden()
        out = []
        for path in sorted(p for p in self.path.rglob("*") if p.is_file()):
            rel = path.relative_to(self.path).as_posix()
            if any(part.startswith(".") for part in PurePosixPath(rel).parts) or rel in self.solution:
                continue
            if any(rel == h or rel.startswith(h + "/") for h in hidden):
                continue
            out.append(rel)
        return out


def find_tracks(track: Path) -> dict[str, Path]:
    """{slug: track folder}: one Exercism track checkout (exercises/practice/ in it) or a polyglot-benchmark
    checkout (cpp/, go/, ... each with exercises/practice/)."""
    if not track.is_dir():
        raise BadInputError(f"--track {track}: no such folder; give an Exercism track checkout or a "
                            "polyglot-benchmark checkout")
    if (track / "exercises" / "practice").is_dir():
        return {track_slug(track): track}
    found = {d.name: d for d in sorted(track.iterdir()) if (d / "exercises" / "practice").is_dir()}
    if not found:
        raise BadInputError(f"--track {track}: neither an Exercism track (exercises/practice/) nor a "
                            "polyglot-benchmark checkout (cpp/, go/, rust/ ... each with exercises/practice/)")
    unknown = sorted(set(found) - set(SPECS))
    if unknown:
        raise BadInputError(f"--track {track}: unknown language folder(s) {', '.join(unknown)} "
                            f"(known: {', '.join(SPECS)})")
    return found


def track_slug(track: Path) -> str:
    """The language of one track checkout: its config.json's slug, its folder's name, or its stubs' suffix."""
    config = track / "config.json"
    if config.is_file():
        try:
            slug = json.loads(config.read_text(encoding="utf-8")).get("slug")
        except (ValueError, AttributeError):
            slug = None
        if slug in SPECS:
            return slug
    name = track.resolve().name.lower().removeprefix("exercism-")
    if name in SPECS:
        return name
    for meta in sorted((track / "exercises" / "practice").glob("*/.meta/config.json")):
        for sol in json.loads(meta.read_text(encoding="utf-8")).get("files", {}).get("solution", []):
            if PurePosixPath(sol).suffix in SUFFIX_SLUG:
                return SUFFIX_SLUG[PurePosixPath(sol).suffix]
    raise BadInputError(f"--track {track}: cannot tell its language (no config.json slug, folder name or known "
                        f"stub suffix); known: {', '.join(SPECS)}")


def read_exercise(slug: str, folder: Path) -> Exercise:
    """An exercise from its .meta/config.json, with the reason it is skipped when it cannot run offline."""
    try:
        files = json.loads((folder / ".meta" / "config.json").read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return Exercise(slug, folder.name, folder, [], [], [], skip=f"no readable .meta/config.json ({exc})")
    ex = Exercise(slug, folder.name, folder, list(files.get("solution") or []), list(files.get("test") or []),
                  list(files.get("example") or []), list(files.get("editor") or []))
    ex.skip = SPECS[slug].unsupported or offline_problem(ex)
    return ex


def offline_problem(ex: Exercise) -> str | None:
    """Why an exercise cannot be built here (a crate or Go module to download, a C++ library the image lacks, a
    missing file), else None."""
    missing = [p for p in [*ex.solution, *ex.tests, *ex.example] if not (ex.path / p).exists()]
    if missing:
        return f"listed in .meta/config.json but missing: {', '.join(missing)}"
    if not ex.tests or not ex.solution:
        return ".meta/config.json lists no test or no solution file"
    if not (ex.path / ".docs" / "instructions.md").is_file():
        return "no .docs/instructions.md"
    if ex.slug == "rust" and (ex.path / "Cargo.toml").is_file():
        crates = registry_crates((ex.path / "Cargo.toml").read_text(encoding="utf-8", errors="replace"))
        if crates:
            return f"needs crates from crates.io ({', '.join(crates)}); the sandbox is offline"
    if ex.slug == "cpp" and (ex.path / "CMakeLists.txt").is_file():
        text = (ex.path / "CMakeLists.txt").read_text(encoding="utf-8", errors="replace")
        needs = [m.group(1) for m in re.finditer(r"find_package\(\s*(\w+)[^)]*\bREQUIRED\b", text)
                 if m.group(1) not in ("Threads", "Catch2")]
        if needs:
            return (f"its CMakeLists.txt requires {', '.join(needs)} (find_package), which the sandbox image does not "
                    f"have{' (Debian: libboost-date-time-dev)' if 'Boost' in needs else ''}")
    if ex.slug == "go" and (ex.path / "go.mod").is_file():
        if re.search(r"^\s*require\b", (ex.path / "go.mod").read_text(encoding="utf-8"), re.MULTILINE):
            return "go.mod requires modules from the Go proxy; the sandbox is offline"
    return None


DEP_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")


def registry_crates(cargo_toml: str) -> list[str]:
    """The dependencies of a Cargo.toml that come from a registry (`rand = "0.8"`), not from a path: what an
    offline cargo cannot build. Reads `[dependencies]` and `[dependencies.NAME]` tables (dev and build too)."""
    deps: dict[str, str] = {}
    table, current = None, None
    for line in cargo_toml.splitlines():
        text = line.split("#", 1)[0].strip()
        header = re.fullmatch(r"\[\s*([^\]]+?)\s*\]", text)
        if header:
            parts = [p.strip().strip("'\"") for p in header.group(1).split(".")]
            table = parts[0] if parts[0] in DEP_TABLES else None
            current = parts[1] if table and len(parts) > 1 else None
            if current:
                deps.setdefault(current, "")
            continue
        if table and "=" in text:
            key, value = (part.strip() for part in text.split("=", 1))
            if current:
                deps[current] += f" {key} = {value}"
            else:
                deps[key.strip("'\"")] = value
    return [f"{name} = {value.strip()}" if value.strip().startswith(('"', "'")) else name
            for name, value in deps.items() if not re.search(r"\bpath\s*=", value)]


def spread(items: list[T], n: int) -> list[T]:
    """n items evenly spaced over the list (all of it when n covers it): a slice that is not biased to the letter
    a, as the first n by name are."""
    if n >= len(items):
        return items
    return [items[i * len(items) // n] for i in range(n)]


def discover(track: Path, languages: list[str] | None = None, only: list[str] | None = None,
             limit: int | None = None, sample: int | None = None) -> list[Exercise]:
    """The exercises of the track, by language then name: --languages, then --only (names, or slug/name), then
    --sample (n evenly spaced) and --limit per language. Skipped ones are kept (with their reason), so they are
    listed, never dropped."""
    tracks = find_tracks(track)
    if languages:
        unknown = sorted(set(languages) - set(SPECS))
        if unknown:
            raise BadInputError(f"--languages: unknown {', '.join(unknown)} (known: {', '.join(SPECS)})")
        absent = sorted(set(languages) - set(tracks))
        if absent:
            raise BadInputError(f"--languages {','.join(absent)}: not in {track} (it has {', '.join(tracks)})")
        tracks = {slug: path for slug, path in tracks.items() if slug in languages}
    out: list[Exercise] = []
    for slug, root in tracks.items():
        exercises = [read_exercise(slug, d) for d in sorted((root / "exercises" / "practice").iterdir())
                     if d.is_dir() and not d.name.startswith(".")]
        if only:
            exercises = [e for e in exercises if e.name in only or e.key in only]
        if sample is not None:
            exercises = spread(exercises, sample)
        out += exercises[:limit] if limit is not None else exercises
    if only:
        missing = sorted(set(only) - {e.name for e in out} - {e.key for e in out})
        if missing:
            raise BadInputError(f"--only {','.join(missing)}: no such exercise in the selected languages")
    return out


def unskip(path: str, text: str) -> str:
    """Tests as aider runs them: JavaScript's skipped tests (xtest, xit) un-skipped. Rust's #[ignore] and C++'s
    EXERCISM_RUN_ALL_TESTS are handled by the test command."""
    if path.endswith(".js"):
        return re.sub(r"\bx(test|it)\(", r"\1(", text)
    return text


def build_scenario(ex: Exercise, folder: Path, replies: list[str] | None = None, image: str = IMAGE,
                   versions: dict[str, str] | None = None, protocol: str = "aider") -> Scenario:
    """Write the exercise's scenario.yaml and its hidden tests (under hidden/) into folder, and load it back.
    `replies`: a scripted model's, in order (None: the model of the run's options answers). `versions`: the
    image's compilers (exercism_toolchain.image_versions), which a newer go.mod directive is lowered to.
    `protocol`: aider (two tries, PROTOCOL) or codeduet (the product's own strategy: candidates, attempts, repairs
    while the run's time budget lasts)."""
    spec = SPECS[ex.slug]
    folder.mkdir(parents=True, exist_ok=True)
    hidden = ex.hidden()
    for rel in hidden:
        source = ex.path / rel
        for path in sorted(source.rglob("*")) if source.is_dir() else [source]:
            if path.is_file():
                inner = path.relative_to(ex.path).as_posix()
                dest = folder / "hidden" / inner
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(unskip(inner, path.read_text(encoding="utf-8", errors="replace")), encoding="utf-8")
    command = spec.command.format(name=shlex.quote(ex.name), tests=" ".join(shlex.quote(t) for t in ex.tests))
    edit = list(ex.solution)
    files, ex.adapted = adapt_files({rel: (ex.path / rel).read_text(encoding="utf-8", errors="replace")
                                     for rel in [*edit, *ex.support()]}, versions or {})
    tail = TASK_TAIL.format(files=" ".join(edit), fence=spec.fence, comment="//" if spec.fence in C_LIKE else "#",
                            command=(spec.shown or spec.command).format(name=ex.name, tests=" ".join(ex.tests)))
    data: dict[str, Any] = {
        "name": f"exercism-{ex.slug}-{ex.name}",
        "description": f"Exercism {ex.key} ({PROTOCOLS[protocol]})",
        "task": ex.instructions().rstrip() + "\n" + tail,
        "user_proxy": {"human_input_mode": "NEVER",
                       **({"max_consecutive_auto_reply": MAX_AUTO_REPLY} if protocol == "aider" else {})},
        "sandbox": {"languages": list(spec.sandbox), "image": image},
        "strategy": dict(PROTOCOL) if protocol == "aider" else {"file_preview": PROTOCOL["file_preview"]},
        "files": files,
        "checks": [{"command": command, "files": {rel: f"hidden/{rel}" for rel in hidden}, "timeout": CHECK_TIMEOUT}],
    }
    if replies is not None:
        data["model"] = {"provider": "scripted", "replies": replies}
    path = folder / "scenario.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120), encoding="utf-8")
    return load_scenario(path)

