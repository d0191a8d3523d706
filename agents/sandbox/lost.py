"""A sandbox container that went away under a run (`docker rm -f`, `docker kill`, `docker pause`, a daemon restart):
what happened to it, in words, and the lines a block's output carries about it (agents/sandbox/docker_executor.py
replaces it with a fresh one)."""

from __future__ import annotations

from typing import Any

from agents.loop.errors import SandboxLost

LOST_MAX = 3
"""Containers one executor may lose before the run stops (something on the machine keeps removing them)."""


def lost_state(api: Any, container_id: str, memory: str) -> str | None:
    """What happened to the container, in words, when it can no longer run blocks (removed, stopped or paused from
    outside, or the daemon is gone); None when it runs."""
    from docker.errors import NotFound

    try:
        state = api.inspect_container(container_id).get("State") or {}
    except NotFound:
        return "removed from outside (docker rm -f, or a cleanup job)"
    except Exception as exc:
        return f"out of reach (the Docker daemon did not answer: {str(exc).splitlines()[0][:200]})"
    if state.get("Paused"):
        return "paused from outside (docker pause) and did not answer within the block's time limit"
    if state.get("Running") and not state.get("Restarting"):
        return None
    if state.get("OOMKilled"):
        return f"stopped: its first process was killed at the memory limit ({memory})"
    return (f"stopped from outside (exit code {state.get('ExitCode')}: docker kill, docker rm -f, docker stop or a "
            "daemon restart)")


def remove_lost(container: Any) -> None:
    """Remove it with its volume; a paused one is unpaused first, so that nothing is left frozen."""
    for step in (container.unpause, lambda: container.remove(force=True, v=True)):
        try:
            step()
        except Exception:  # not paused, or already gone
            pass


def between_blocks(lost: str) -> str:
    """The line above the output of a block that found its container gone and ran in a fresh one."""
    return (f"[codeduet: the sandbox container was {lost} while no block was running; this block runs in a fresh "
            "container holding the workspace's files as the last block left them]\n")


def under_block(lost: str) -> str:
    """The line under the output of a block whose container went away while it ran."""
    return (f"\n[codeduet: the sandbox container was {lost} while this block ran; what the block wrote is lost, and "
            "the next block runs in a fresh container holding the workspace's files as the last finished block left "
            "them]")


def check_count(count: int, lost: str) -> None:
    """SandboxLost once an executor has lost LOST_MAX containers."""
    if count >= LOST_MAX:
        raise SandboxLost(f"the sandbox container was lost {count} times in this attempt (last: {lost}); something on "
                          "this machine removes or stops codeduet's containers: stop it and re-run")
