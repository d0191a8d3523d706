"""A run's statuses in one place: how a run or an attempt ended and why its conversation stopped. The transcript,
the terminal, the web UI and the batch table take them from here; the exit code of each is in agents/loop/errors.py, and
how an attempt ended and which attempt a run keeps in agents/loop/attempt_summary.py."""

from __future__ import annotations

from typing import Literal, get_args

Status = Literal["success", "failed", "max_replies", "timeout", "interrupted", "error"]
"""How a run (transcript.json's `status`) or an attempt ended."""
STATUSES: tuple[str, ...] = get_args(Status)
"""Every Status, in this order; the web UI adds `running` (a run not finished yet) on top."""
StopReason = Literal["predicate", "max_replies", "human_exit", "stuck", "prose_loop", "timeout"]
"""Why an attempt's conversation ended (the transcript's `stop_reason`)."""
