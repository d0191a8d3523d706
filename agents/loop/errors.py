"""One error hierarchy and the exit codes: the CLI turns each error into one line (cause and fix) and an exit code."""

from __future__ import annotations

import errno
from typing import Any, Iterable, Mapping

EXIT_OK = 0
EXIT_FAILED = 1
"""The run ran but did not succeed (failed, max_replies, timeout), or a plain CodeduetError."""
EXIT_BAD_INPUT = 2
EXIT_ENVIRONMENT = 3
EXIT_INTERRUPTED = 130
"""Ctrl-C or SIGTERM, as a shell reports it."""


def exit_code_for(status: str) -> int:
    """0 success, 130 interrupted, 1 ran but did not succeed."""
    return EXIT_OK if status == "success" else EXIT_INTERRUPTED if status == "interrupted" else EXIT_FAILED


def batch_exit_code(rows: Iterable[Mapping[str, Any]]) -> int:
    """A batch's exit code from its rows (`status`, `exit_code`): the worst bad-input or environment code of any
    row, else 0 when every run succeeded, else 1."""
    rows = list(rows)
    serious = [r["exit_code"] for r in rows if r["exit_code"] in (EXIT_BAD_INPUT, EXIT_ENVIRONMENT)]
    if serious:
        return max(serious)
    return EXIT_OK if all(r["status"] == "success" for r in rows) else EXIT_FAILED


class CodeduetError(Exception):
    """Base error: `str(err)` is the one line shown to the user."""

    exit_code = EXIT_FAILED


class BadInputError(CodeduetError):
    """The user's input (YAML, CLI flags, transcript) is wrong; exit 2."""

    exit_code = EXIT_BAD_INPUT


class ScenarioError(BadInputError):
    """A scenario file does not load or validate."""


class TranscriptError(BadInputError):
    """A transcript cannot be read back."""


class WorkDirTooLarge(BadInputError):
    """The folder given to SandboxCodeExecutor does not fit in the sandbox's /workspace, where it is copied."""


class EnvironmentProblem(CodeduetError):
    """Something on the machine is missing: Docker daemon, image, model, API key; exit 3."""

    exit_code = EXIT_ENVIRONMENT


class DockerUnavailable(EnvironmentProblem):
    """The Docker daemon is not reachable."""


class ImageMissing(EnvironmentProblem):
    """The sandbox image has not been built."""


class ModelUnavailable(EnvironmentProblem):
    """The model file, backend or API key is missing, or its server went away; `partial` is what it had sent of
    the reply it was writing (kept in the transcript)."""

    def __init__(self, message: str, partial: str | None = None):
        super().__init__(message)
        self.partial = partial


class DiskFull(EnvironmentProblem):
    """The disk holding the run folder is full (or over quota): the run stops, what was recorded is kept."""


class SandboxLost(EnvironmentProblem):
    """The sandbox container kept disappearing (removed, killed or paused from outside): the run stops."""


NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


def disk_full(exc: BaseException, where: object) -> DiskFull | None:
    """The one line for an OSError that says the disk holding `where` is full, else None."""
    if not isinstance(exc, OSError) or exc.errno not in NO_SPACE:
        return None
    return DiskFull(f"the disk holding {where} is full ({exc.strerror}): the run stopped there and everything "
                    "recorded before is in its events.jsonl; free space on that disk (or use --workspace on "
                    "another one) and re-run")
