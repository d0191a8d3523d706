"""The scenario's `sandbox:` block: where and how code runs, and the sizes it takes (512m, 1g)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from agents.defaults import SANDBOX_IMAGE
from agents.languages import normalize
from agents.schema import Strict

COMPILED_DEFAULTS = {"memory": "2g", "timeout": 60.0, "pids": 256, "tmpfs_size": "1g", "disk": "512m"}
"""The limits a sandbox with languages gets where the scenario sets none: measured so that rustc, cargo test, `go
build` and a C++ build with CMake and Catch2 succeed on one CPU (docs/BENCHMARKS.md, "Toolchains")."""


class SandboxConfig(Strict):
    """Where and how code runs."""

    kind: str = "docker"
    """docker (default, hardened container) | local (opt-in subprocess, no isolation) | a dotted path."""
    image: str = SANDBOX_IMAGE
    """Docker image, built locally by `codeduet sandbox build`; with `languages`, the image built for them
    (`codeduet sandbox build --languages c,go`)."""
    languages: list[str] = Field(default_factory=list)
    """Languages besides Python the code may use: c, cpp, go, rust, javascript (agents/languages.py). Their blocks
    are built and run, and the image has their toolchains; Python is always there."""
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
        """With languages: their image, and limits a compiler fits in, where the scenario names none."""
        if self.languages:
            unset = {k: v for k, v in COMPILED_DEFAULTS.items() if k not in self.model_fields_set}
            if "image" not in self.model_fields_set:
                unset["image"] = language_image(self.languages)
            for key, value in unset.items():
                object.__setattr__(self, key, value)  # defaults only: validate_assignment stays off
        return self

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


def language_image(languages: list[str] | tuple[str, ...], base: str = SANDBOX_IMAGE) -> str:
    """The image tag of a language set: the default image's repository tagged with the languages (`:c-go`); Python
    alone: `base`."""
    if not languages:
        return base
    repo = base.rpartition(":")[0] if ":" in base.rpartition("/")[2] else base
    return f"{repo}:{'-'.join(sorted(languages))}"
