"""`bench exercism`'s summary: counts and rates per protocol and language (rates over the exercises run; those
skipped, and those whose example needs a newer compiler than the image's, listed apart), and the table printed."""

from __future__ import annotations

from typing import Any

from rich.table import Table

HEADERS = {"aider": ("try 1", "by try 2"), "codeduet": ("first turn", "passed")}
"""What the two pass columns mean under each protocol: aider's first reply and its one repair; codeduet's first
turn (its candidates) and the run's end (attempts and repairs within the budget)."""


def block(rows: list[dict[str, Any]], skips: list[dict[str, Any]], too_old: list[dict[str, Any]]) -> dict[str, Any]:
    """One language's (or the total's) counts: run, passed on the first reply and in the end, rates over those run,
    wall time, tokens, and the two kinds of skipped exercises with their reasons."""
    n = len(rows)
    p1, p2 = sum(r["passed_1"] for r in rows), sum(r["passed_2"] for r in rows)
    tokens = [r for r in rows if r.get("completion_tokens")]
    return {"exercises": n + len(skips) + len(too_old), "run": n, "passed_1": p1, "passed_2": p2,
            "rate_1": round(100 * p1 / n, 1) if n else None, "rate_2": round(100 * p2 / n, 1) if n else None,
            "seconds": round(sum(r["seconds"] for r in rows), 1),
            "prompt_tokens": sum(r.get("prompt_tokens") or 0 for r in tokens) if tokens else None,
            "completion_tokens": sum(r["completion_tokens"] for r in tokens) if tokens else None,
            "lowered": sum(bool(r.get("adapted")) for r in rows),
            "skipped": len(skips), "skipped_exercises": [{"exercise": s["exercise"], "reason": s["skipped"]}
                                                         for s in skips],
            "newer_compiler": len(too_old), "newer_compiler_exercises": [{"exercise": s["exercise"],
                                                                          "reason": s["reason"]} for s in too_old]}


def summarize(records: list[dict[str, Any]], skipped: list[dict[str, Any]], too_old: list[dict[str, Any]] | None = None,
              protocols: list[str] | None = None) -> dict[str, Any]:
    """{languages, total} of the first protocol (aider's when it ran) and {protocols: {name: {languages, total}}}."""
    too_old = too_old or []
    protocols = protocols or sorted({r.get("protocol", "aider") for r in records}) or ["aider"]
    langs = sorted({r["language"] for r in [*records, *skipped, *too_old]})

    def one(proto: str) -> dict[str, Any]:
        rows = [r for r in records if r.get("protocol", "aider") == proto]
        per = {lang: block([r for r in rows if r["language"] == lang], [s for s in skipped if s["language"] == lang],
                           [s for s in too_old if s["language"] == lang]) for lang in langs}
        return {"languages": per, "total": block(rows, skipped, too_old)}

    by = {proto: one(proto) for proto in protocols}
    return {**by[protocols[0]], "protocols": by}


def summary_table(summary: dict[str, Any], reply: str, protocol: str = "aider") -> Table:
    """One row per language and a total: run, the two pass counts (with rates), skipped (offline or unsupported),
    needing a newer compiler, go.mod directives lowered, wall time."""
    title = "aider's two tries" if protocol == "aider" else "codeduet's loop"
    table = Table(title=f"Exercism, {title} (--reply {reply})")
    for col in ("language", "run", *HEADERS[protocol], "skipped", "newer compiler", "lowered", "wall s"):
        table.add_column(col, justify="left" if col == "language" else "right")

    def pct(k: int, rate: float | None) -> str:
        return f"{k} ({rate:.1f}%)" if rate is not None else "-"

    rows = [*summary["languages"].items(), ("total", summary["total"])]
    for lang, s in rows:
        table.add_row(lang, str(s["run"]), pct(s["passed_1"], s["rate_1"]), pct(s["passed_2"], s["rate_2"]),
                      str(s["skipped"]), str(s["newer_compiler"]), str(s["lowered"]), f"{s['seconds']:.0f}",
                      end_section=lang == rows[-2][0])
    return table
