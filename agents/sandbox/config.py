"""The scenario's `sandbox:` block: where and how code runs, and the sizes it takes (512m, 1g)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from agents.config import Strict
from agents.defaults import SANDBOX_IMAGE


class SandboxConfig(Strict):
    """Where and how code runs."""

    kind: str = "docker"
    """docker (default, hardened container) | local (opt-in subprocess, no isolation) | a dotted path."""
    image: str = SANDBOX_IMAGE
    """Docker image, built locally by `codeduet sandbox build`."""
    timeout: float = Field(default=30, gt=0, le=3600)
    """Seconds per code block; the whole process tree is killed at the limit."""
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
