"""A saved run in reading order: attempt headers, messages, and the repeats that were rejected and re-asked."""

from __future__ import annotations

from typing import Any, Iterator


def duration(seconds: float | None) -> str:
    """How long a run took, for people: '11.0 s', '6 min 27 s', '2 h 5 min'; '' when unknown."""
    if seconds is None:
        return ""
    if seconds < 59.95:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def timeline(t: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yields ("attempt", summary) before each attempt of a multi-attempt run, ("candidates", {attempt, turn, items})
    before the reply chosen among them, ("rejected", event) before the message that replaced a rejected repeat, and
    ("message", message)."""
    messages = t.get("messages") or []
    summaries = {a.get("attempt"): a for a in t.get("attempts") or []}
    multi = len({m.get("attempt") or 1 for m in messages}) > 1 or len(summaries) > 1
    rejected: dict[int, list[dict[str, Any]]] = {}
    for r in t.get("rejected_replies") or []:
        rejected.setdefault(int(r.get("before_message", len(messages))), []).append(r)
    candidates: dict[int, list[dict[str, Any]]] = {}
    for c in t.get("candidates") or []:
        candidates.setdefault(int(c.get("before_message", len(messages))), []).append(c)

    def before(index: int) -> Iterator[tuple[str, dict[str, Any]]]:
        """What happened before message `index`, in order: per call (the turn, then each re-ask), its candidates,
        then the reply rejected from it."""
        items, turn = candidates.pop(index, []), []
        for resample in sorted({int(c.get("resample") or 0) for c in items}):
            group = [c for c in items if int(c.get("resample") or 0) == resample]
            turn.append((resample, 0, "candidates", {"attempt": group[0].get("attempt"),
                                                     "turn": group[0].get("turn"), "resample": resample,
                                                     "items": group}))
        turn += [(int(r.get("resample") or 0), 1, "rejected", r) for r in rejected.pop(index, [])]
        for _, _, kind, item in sorted(turn, key=lambda x: x[:2]):
            yield kind, item

    current = None
    for i, m in enumerate(messages):
        attempt = m.get("attempt") or 1
        if multi and attempt != current:
            current = attempt
            yield "attempt", summaries.get(attempt) or {"attempt": attempt}
        yield from before(m.get("index", i))
        yield "message", m
    for index in sorted(set(candidates) | set(rejected)):  # after the last message (a run cut short)
        yield from before(index)


def attempt_label(summary: dict[str, Any], chosen: Any = None) -> str:
    """'attempt 2 · success · it ran and every check passed (kept)'."""
    parts = [f"attempt {summary.get('attempt', '?')}"]
    if summary.get("status"):
        parts.append(str(summary["status"]))
    if summary.get("summary"):
        parts.append(str(summary["summary"]))
    label = " · ".join(parts)
    return label + (" (kept)" if chosen is not None and summary.get("attempt") == chosen else "")


def rejected_label(event: dict[str, Any]) -> str:
    """'rejected repeat: attempt 1 turn 2 (temperature 0.70, seed 10201) sent the code of attempt 1 turn 1 again'."""
    rep = event.get("repeats") or {}
    sampling = event.get("sampling") or {}
    temp = sampling.get("temperature")
    how = f"temperature {temp:.2f}, seed {sampling.get('seed')}" if temp is not None else "greedy"
    where = f"attempt {event.get('attempt')} turn {event.get('turn')} ({how})"
    if event.get("reason") == "cut":
        return f"rejected cut reply: {where} was cut off inside its code block; not executed, asked again"
    if event.get("reason") == "no_code":
        kept = "; kept, and the code it describes asked for" if event.get("follow_up") else "; asked again"
        return f"rejected prose reply: {where} held no code block and no TERMINATE{kept}"
    return (f"rejected repeat: {where} sent the code of attempt {rep.get('attempt')} turn {rep.get('turn')} again; "
            "not executed, asked again")


def candidates_label(group: dict[str, Any]) -> str:
    """'4 candidates for attempt 1 turn 1: candidate 3 chosen (2 set aside)'."""
    items = group.get("items") or []
    chosen = next((c.get("index") for c in items if c.get("chosen")), None)
    aside = sum(1 for c in items if c.get("rejected"))
    planned = max([int(c.get("candidates") or 0) for c in items] + [len(items)])
    early = planned > len(items) and bool((items[0].get("score") or {}).get("solved"))
    deferred = items[0].get("deferred") if items else None
    cut = planned > len(items) and bool(items and items[0].get("budget_spent"))
    count = f"{len(items)} of {planned}" if planned > len(items) else f"{len(items)}"
    reask = f" (re-ask {group['resample']})" if group.get("resample") else ""
    return (f"{count} candidates for attempt {group.get('attempt')} turn {group.get('turn')}{reask}: "
            + (f"candidate {chosen} chosen" if chosen is not None else "none chosen")
            + (f" ({aside} set aside)" if aside else "")
            + ("; the first passed every check, the others were not generated" if early else "")
            + (f"; the first sent the given files back unchanged, so turn {deferred} got the candidates instead, "
               "after its report" if deferred else "")
            + ("; the time budget ran out before the others were generated" if cut else ""))


def candidate_label(event: dict[str, Any]) -> str:
    """'candidate 2 (temperature 0.70, seed 10152): 1/2 checks passed, exit 0, same output as 1 other [chosen]'."""
    sampling = event.get("sampling") or {}
    temp = sampling.get("temperature")
    how = f"temperature {temp:.2f}, seed {sampling.get('seed')}" if temp is not None else "greedy"
    head = f"candidate {event.get('index')} ({how})"
    if event.get("rejected"):
        return f"{head}: set aside ({event['rejected']}), not run"
    outcome = event.get("outcome")
    if not outcome:
        return f"{head}: not run"
    score = event.get("score") or {}
    checks = len(outcome.get("checks") or [])
    tests = f" ({score.get('tests_passed', 0)}/{score['tests']} tests)" if (score.get("tests") or 0) > 1 else ""
    parts = [f"{score.get('checks_passed', 0)}/{checks} checks passed{tests}"] if checks else []
    parts.append(outcome.get("summary") or outcome.get("kind", ""))
    if (score.get("agree") or 0) > 1:
        parts.append(f"same output as {score['agree'] - 1} other(s)")
    return f"{head}: " + ", ".join(parts) + (" (chosen)" if event.get("chosen") else "")
