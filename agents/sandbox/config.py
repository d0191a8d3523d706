"""The scenario's `sandbox:` block: where and how code runs, and the sizes it takes (512m, 1g)."""

from __future__ import annotations

import hashlib
import re
from typing import Callable, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from agents.loop.defaults import COMMAND, SANDBOX_IMAGE
from agents.sandbox.languages import normalize
from agents.sandbox.presets import PRESET_DEFAULTS, PRESETS, preset_debian
from agents.scenario.schema import Strict

COMPILED_DEFAULTS = {"memory": "2g", "timeout": 60.0, "pids": 256, "tmpfs_size": "1g", "disk": "512m"}
"""The limits a sandbox with languages gets where the scenario sets none: measured so that rustc, cargo test, `go
build` and a C++ build with CMake and Catch2 succeed on one CPU (docs/BENCHMARKS.md, "Toolchains")."""


DEBIAN_NAME = re.compile(r"[a-z0-9][a-z0-9+.-]+")
"""A Debian package name (Debian policy 5.6.1)."""
PYTHON_REQUIREMENT = re.compile(r"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?:\s*==\s*([A-Za-z0-9.!+_-]+))?")
"""A PyPI requirement as a scenario declares it: a name, or a name pinned with ==."""
CRATE = re.compile(r"([A-Za-z][A-Za-z0-9_-]*(?:\[[A-Za-z0-9_,+-]+\])?)(?:\s*==\s*([0-9][0-9A-Za-z.+-]*))?")
"""A crate as a scenario declares it: a name, or a name pinned with ==; features in brackets (serde[derive])."""


def python_name(name: str) -> str:
    """A PyPI project name in its normal form (PEP 503): Scikit_Learn -> scikit-learn."""
    return re.sub(r"[-_.]+", "-", name).lower()


class Packages(Strict):
    """Packages a scenario's code needs besides the image's: installed when the image is built (`codeduet sandbox
    build SCENARIO.yaml`), never at run time (the sandbox has no network)."""

    debian: list[str] = Field(default_factory=list)
    """Debian packages of the image's suite (trixie with languages or a preset, else bookworm), e.g. [sqlite3,
    node-lodash]: the only way to JavaScript modules (Debian's node-* packages)."""
    python: list[str] = Field(default_factory=list)
    """PyPI packages, a name or name==version (e.g. ["scikit-learn==1.5.2", tabulate]): their wheels are downloaded
    by `sandbox build` and installed offline into the image, each pinned with its version and sha256."""
    rust: list[str] = Field(default_factory=list)
    """Crates, a name or name==version, features in brackets (e.g. ["serde[derive]==1.0.210", rand]): `sandbox
    build` fetches them with cargo on this machine and vendors them into the image, with the crates those features
    need, so a Cargo project in the sandbox builds with them offline (adds rust to the languages)."""
    javascript: list[str] = Field(default_factory=list)
    """Not supported: the npm registry is not reachable from here; declare Debian's node-* packages in `debian`."""

    @field_validator("debian")
    @classmethod
    def _debian(cls, v: list[str]) -> list[str]:
        bad = [name for name in v if not DEBIAN_NAME.fullmatch(str(name))]
        if bad:
            raise ValueError(f"'{bad[0]}' is not a Debian package name (lower case, like python3-flask)")
        return sorted(set(v))

    @field_validator("python")
    @classmethod
    def _python(cls, v: list[str]) -> list[str]:
        return pinnable(v, PYTHON_REQUIREMENT, python_name, "is not a PyPI requirement: use a name or name==version "
                        "(e.g. scikit-learn==1.5.2)")

    @field_validator("rust")
    @classmethod
    def _rust(cls, v: list[str]) -> list[str]:
        return pinnable(v, CRATE, str, "is not a crate: use a name or name==version (e.g. serde[derive]==1.0.210)")

    @field_validator("javascript")
    @classmethod
    def _javascript(cls, v: list[str]) -> list[str]:
        if v:
            raise ValueError("packages.javascript is not supported: the npm registry is not reachable; declare "
                             f"Debian's package instead (packages.debian: [node-{str(v[0]).lstrip('@')}])")
        return v


def pinnable(values: list[str], pattern: re.Pattern[str], name: Callable[[str], str], problem: str) -> list[str]:
    """Declared packages as `name` or `name==version` (each name once, the last declaration winning), sorted; a
    value the pattern does not read is a ValueError saying `problem`."""
    out = {}
    for value in values:
        match = pattern.fullmatch(str(value).strip())
        if not match:
            raise ValueError(f"'{value}' {problem}")
        key = name(match[1])
        out[key] = f"{key}=={match[2]}" if match[2] else key
    return sorted(out.values())


class SandboxConfig(Strict):
    """Where and how code runs."""

    kind: str = "docker"
    """docker (default, hardened container) | local (opt-in subprocess, no isolation) | a dotted path."""
    image: str = SANDBOX_IMAGE
    """Docker image, built locally by `codeduet sandbox build`; with `languages`, the image built for them
    (`codeduet sandbox build --languages c,go`)."""
    languages: list[str] = Field(default_factory=list)
    """Languages besides Python the code may use: c, cpp, go, rust, javascript (agents/sandbox/languages.py). Their
    blocks
    are built and run, and the image has their toolchains; Python is always there."""
    preset: Literal["backend", "frontend", "web"] | None = None
    """A kind of task (agents/sandbox/presets.py): backend (Go, JavaScript; Flask, FastAPI with uvicorn, httpx,
    requests, express, supertest), frontend (JavaScript; headless Chromium, jsdom, React) or web (both). It adds its
    languages and Debian packages to the image, and larger limits (memory 2g, pids 1024, timeout 60) where the
    scenario sets none."""
    packages: Packages = Field(default_factory=Packages)
    """Packages installed when the image is built (`codeduet sandbox build SCENARIO.yaml`); a run whose image lacks
    them stops before it starts, with the build command."""
    session: Literal["process", "kernel"] = "process"
    """process: every block runs in a fresh interpreter (a script, as `python3 file.py`). kernel: the Python blocks of
    an attempt run in one long-lived interpreter in the same hardened container, so variables, imports and loaded
    data persist between blocks and turns, and a block's last expression shows its value, as in a notebook
    (agents/sandbox/kernel.py); a shell block still runs in its own process. Docker sandboxes only."""
    sanitize: bool = True
    """C and C++ blocks are built with AddressSanitizer and UndefinedBehaviorSanitizer (a bad access stops the
    program and names its line); false builds them plain (faster, and what a memory bug does unchecked)."""
    timeout: float = Field(default=30, gt=0, le=3600)
    """Seconds per code block; the whole process tree is killed at the limit."""
    server_seconds: float = Field(default=3, gt=0, le=600)
    """A block that starts a server (listens on a new TCP port) is stopped once it has listened and printed nothing
    for this many seconds, and reported as a server (its port, how long it took to listen, its log), not as a
    time-out. The `http:` check starts its server itself and is not cut by this."""
    memory: str = "512m"
    """Memory limit (docker syntax: 256m, 1g)."""
    cpus: float = Field(default=1.0, gt=0, le=64)
    """CPU limit."""
    pids: int = Field(default=128, ge=8, le=100000)
    """Process/thread limit (fork bombs stop here)."""
    network: Literal["none", "bridge"] = "none"
    """Container network; none unless you really need it."""
    output_limit: int = Field(default=20000, ge=100, le=10_000_000)
    """Characters of output kept per execution; the rest is cut with a marker."""
    tmpfs_size: str = "64m"
    """Size of the writable /tmp tmpfs."""
    error_locals: bool = True
    """On an uncaught exception, print under the traceback the values of the variables of the script's failing
    line (agents/sandbox/error_locals.py), so the model sees the data that broke its code."""
    disk: str = "256m"
    """Size of /workspace: a tmpfs inside the container (no host folder is mounted). A write past it fails with
    ENOSPC, the run goes on and the execution says the disk limit was hit. It lives in RAM and counts toward
    `memory`. After each block the files the code wrote are copied back to the run folder (at most this much)."""
    copy_back_max: str = "16m"
    """The largest file copied back from the sandbox to the run folder after a block; a bigger one stays in the
    sandbox (the next blocks of the attempt still see it) and the execution lists it by name and size."""

    @field_validator("languages", mode="before")
    @classmethod
    def _languages(cls, v: object) -> list[str]:
        if isinstance(v, str):
            v = [part for part in v.replace(",", " ").split() if part]
        if not isinstance(v, (list, tuple)):
            raise ValueError("languages is a list such as [c, go]")
        return list(normalize(v))

    @model_validator(mode="after")
    def _kernel_in_docker(self) -> "SandboxConfig":
        if self.session == "kernel" and self.kind == "local":
            raise ValueError("session: kernel needs the docker sandbox (kind: docker); the local executor runs "
                             "each block as a process")
        return self

    @model_validator(mode="after")
    def _language_defaults(self) -> "SandboxConfig":
        """With languages (a preset's too): their image, and limits a compiler (a server, a browser) fits in, where
        the scenario names none; with packages, the image named by them."""
        needs = [*(PRESETS[self.preset].languages if self.preset else ()), *(["rust"] if self.packages.rust else [])]
        if needs:
            object.__setattr__(self, "languages", list(normalize([*self.languages, *needs])))
        defaults = {**(COMPILED_DEFAULTS if self.languages else {}), **(PRESET_DEFAULTS if self.preset else {})}
        unset = {k: v for k, v in defaults.items() if k not in self.model_fields_set}
        if "image" not in self.model_fields_set:
            unset["image"] = image_tag(self.languages, self.debian_packages, self.packages.python,
                                       self.packages.rust)
        for key, value in unset.items():
            object.__setattr__(self, key, value)  # defaults only: validate_assignment stays off
        return self

    @property
    def debian_packages(self) -> tuple[str, ...]:
        """The Debian packages the image needs besides Python's and the languages' own: the preset's and the
        declared ones, sorted."""
        return tuple(sorted({*preset_debian(self.preset), *self.packages.debian}))

    @property
    def installed(self) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """What the image adds for the code to use (the system prompt names it): Debian's, PyPI's and the crates."""
        return self.debian_packages, tuple(self.packages.python), tuple(self.packages.rust)

    @property
    def build_command(self) -> str:
        """The `sandbox build` command line that makes this sandbox's image (without a scenario file)."""
        parts = [f"{COMMAND} sandbox build"]
        if self.languages:
            parts.append(f"--languages {','.join(sorted(self.languages))}")
        if self.preset:
            parts.append(f"--preset {self.preset}")
        if self.packages.debian:
            parts.append(f"--debian {','.join(self.packages.debian)}")
        if self.packages.python:
            parts.append(f"--python {','.join(self.packages.python)}")
        if self.packages.rust:
            parts.append(f"--rust {','.join(self.packages.rust)}")
        return " ".join(parts)

    @field_validator("memory", "tmpfs_size", "disk", "copy_back_max")
    @classmethod
    def _size(cls, v: str, info: ValidationInfo) -> str:
        if not re.fullmatch(r"\d+(\.\d+)?[bkmg]?", str(v).lower()):
            raise ValueError(f"'{v}' is not a size like 512m or 1g")
        low = "32m" if info.field_name == "memory" else "1m"  # 0 would mean "no limit" to docker
        if not parse_size(low) <= parse_size(str(v)) <= 1024**4:
            raise ValueError(f"'{v}' is out of range: use a size between {low} and 1024g, like 512m or 1g")
        return str(v).lower()

    @property
    def disk_bytes(self) -> int:
        """The workspace size in bytes."""
        return parse_size(self.disk)

    @property
    def copy_back_bytes(self) -> int:
        """copy_back_max in bytes."""
        return parse_size(self.copy_back_max)


def parse_size(v: str) -> int:
    """'512m' -> bytes."""
    units = {"b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
    v = v.lower()
    if v[-1] in units:
        return int(float(v[:-1]) * units[v[-1]])
    return int(v)


def package_hash(debian: tuple[str, ...] | list[str] = (), python: tuple[str, ...] | list[str] = (),
                 rust: tuple[str, ...] | list[str] = ()) -> str:
    """Eight hex digits naming a package set (Debian's besides the base and languages', PyPI's requirements,
    crates)."""
    text = f"debian:{','.join(sorted(set(debian)))}\npython:{','.join(sorted(set(python)))}\n"
    text += f"rust:{','.join(sorted(set(rust)))}\n" if rust else ""  # the names of sets without crates stay
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def image_tag(languages: list[str] | tuple[str, ...], debian: tuple[str, ...] | list[str] = (),
              python: tuple[str, ...] | list[str] = (), rust: tuple[str, ...] | list[str] = (),
              base: str = SANDBOX_IMAGE) -> str:
    """The image tag of a language set with packages: the languages' tag with the package set's hash
    (`codeduet-sandbox:go-javascript-p1a2b3c4d`, `codeduet-sandbox:python-p...` without languages); without
    packages, language_image's."""
    tag = language_image(languages, base)
    if not debian and not python and not rust:
        return tag
    repo = tag.rpartition(":")[0]
    return f"{repo}:{'-'.join(sorted(languages)) or 'python'}-p{package_hash(debian, python, rust)}"


def language_image(languages: list[str] | tuple[str, ...], base: str = SANDBOX_IMAGE) -> str:
    """The image tag of a language set: the default image's repository tagged with the languages (`:c-go`); Python
    alone: `base`."""
    if not languages:
        return base
    repo = base.rpartition(":")[0] if ":" in base.rpartition("/")[2] else base
    return f"{repo}:{'-'.join(sorted(languages))}"
