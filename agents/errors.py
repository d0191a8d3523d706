"""One error hierarchy; the CLI turns each into one line (cause and fix) and an exit code (agents/status.py)."""

from __future__ import annotations

import errno

from agents.status import EXIT_BAD_INPUT, EXIT_ENVIRONMENT, EXIT_FAILED


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
