"""A block that starts a server: what the sandbox saw (agents/sandbox/incontainer/listening.py), turned into the
ExecResult's `server` and the one line the terminal, the replay and the page show."""

from __future__ import annotations

from typing import Any


def served(seen: dict[str, Any] | None, timed_out: bool, duration: float) -> dict[str, Any] | None:
    """The server a block started, for ExecResult.server: stopped after its quiet grace (or when the block ended and
    left it running), or stopped at the time limit; None when the block listened on no new port, or listened and
    then ended by itself (a script that tested its own server)."""
    if not isinstance(seen, dict) or not isinstance(seen.get("port"), int):
        return None
    base = {"port": seen["port"], "listen_s": seen.get("listen_s"), "grace_s": seen.get("grace_s"),
            "left": bool(seen.get("left"))}
    if seen.get("stopped_s") is not None:
        return {**base, "stopped_s": seen["stopped_s"], "at_limit": False}
    if timed_out:
        return {**base, "stopped_s": round(duration, 2), "at_limit": True}
    return None


def server_line(server: dict[str, Any]) -> str:
    """'server on :8000 after 0.4 s, stopped after 3.4 s' (or '... stopped at the time limit, after 30.0 s', or
    '... left running in the background, stopped with its block after 1.0 s')."""
    stop = "stopped at the time limit, after" if server.get("at_limit") else \
        "left running in the background, stopped with its block after" if server.get("left") else "stopped after"
    return f"server on :{server.get('port')} after {seconds(server.get('listen_s'))} s, {stop} " \
           f"{seconds(server.get('stopped_s'))} s"


def seconds(value: Any) -> str:
    """0.43 -> '0.4', 3 -> '3.0' (a timing `replay --execute` reads as one)."""
    try:
        return f"{float(value):.1f}"
    except (TypeError, ValueError):
        return "?"
