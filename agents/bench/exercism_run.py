"""`bench exercism`: each exercise's scenario (agents/bench/exercism.py) run by the product's own run_scenario, and
aider's two tries counted from its transcript: passed on the first reply, passed by the repair turn that saw the
hidden tests' output. Results go to results.jsonl as they come, then a summary per language (summary.json, --out)."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Any

from rich.console import Console
from rich.table import Table

from agents.bench.common import git_commit, machine
from agents.bench.exercism import (
    IMAGE,
    MAX_AUTO_REPLY,
    PROTOCOL,
    SPECS,
    Exercise,
    build_scenario,
    discover,
    registry_crates,
)
from agents.conversation import RunOptions, run_scenario
from agents.errors import BadInputError, EnvironmentProblem
from agents.transcript import load_transcript

REPLIES = ("model", "example", "stub")
ALIASES = {"c++": "cpp", "js": "javascript", "node": "javascript", "golang": "go", "rs": "rust", "py": "python"}


def names(text: str | None, aliases: dict[str, str] | None = None) -> list[str] | None:
    """'go, rust' -> ['go', 'rust'] (aliases resolved); None for None."""
    if text is None:
        return None
    parts = [p.strip().lower() for p in text.replace(" ", ",").split(",") if p.strip()]
    return [(aliases or {}).get(p, p) for p in parts] or None


def comment_for(path: str) -> str:
    """The comment a `filename:` line uses for this file: `//` in C-like files, `#` elsewhere."""
    return "//" if PurePosixPath(path).suffix in (".go", ".rs", ".cpp", ".h", ".hpp", ".cc", ".js") else "#"


def fence_for(path: str, default: str) -> str:
    """The fence tag of a file: toml for Cargo.toml, cpp for a header, the track's otherwise."""
    suffix = PurePosixPath(path).suffix
    return {".toml": "toml", ".h": "cpp", ".hpp": "cpp", ".txt": "cmake", ".mod": "text"}.get(suffix, default)


def file_reply(files: dict[str, str], default_fence: str) -> str:
    """A reply that sends files whole, each in a block whose first line names it."""
    blocks = [f"```{fence_for(p, default_fence)}\n{comment_for(p)} filename: {p}\n{text.rstrip()}\n```"
              for p, text in files.items()]
    return "Here are the files.\n\n" + "\n\n".join(blocks) + "\n"


def example_files(ex: Exercise) -> dict[str, str]:
    """The exercise's example solution, each example file under the solution file it stands for (same suffix;
    Rust's example.rs is src/lib.rs). A C++ exercise whose example is only the header keeps its .cpp stub."""
    targets = [s for s in ex.solution if PurePosixPath(s).name != "Cargo.toml"]
    out = {}
    for example in ex.example:
        if PurePosixPath(example).name == "Cargo-example.toml":  # the example's own manifest (its crates)
            out["Cargo.toml"] = (ex.path / example).read_text(encoding="utf-8")
            continue
        suffix = PurePosixPath(example).suffix
        same = [t for t in targets if PurePosixPath(t).suffix == suffix]
        if not same:
            raise BadInputError(f"{ex.key}: example {example} matches no solution file ({', '.join(ex.solution)})")
        out[same[0]] = (ex.path / example).read_text(encoding="utf-8")
        targets.remove(same[0])
    return out


def reply_for(ex: Exercise, reply: str) -> list[str] | None:
    """The scripted model's replies for --reply example|stub (None: the real model answers)."""
    if reply == "model":
        return None
    if reply == "example":
        return [file_reply(example_files(ex), SPECS[ex.slug].fence)]
    if reply == "stub":
        return [file_reply({s: (ex.path / s).read_text(encoding="utf-8") for s in ex.solution}, SPECS[ex.slug].fence)]
    raise BadInputError(f"--reply {reply!r}: use model, example or stub")


def reply_note(ex: Exercise, reply: str) -> str | None:
    """Why a scripted reply cannot pass whatever the harness does (said next to its result): an example solution
    that uses crates only its .meta/Cargo-example.toml declares (crates.io is out of reach), or a file holding a
    ``` fence, which ends the reply's code block early."""
    if reply == "model":
        return None
    files = example_files(ex) if reply == "example" else {s: (ex.path / s).read_text(encoding="utf-8")
                                                          for s in ex.solution}
    fenced = [path for path, text in files.items() if "```" in text]
    if fenced:
        return f"{', '.join(fenced)} holds ``` (a doc-test fence), which ends the reply's code block early"
    cargo = ex.path / ".meta" / "Cargo-example.toml"
    crates = registry_crates(cargo.read_text(encoding="utf-8")) if reply == "example" and cargo.is_file() else []
    return f"the example uses crates from crates.io ({', '.join(crates)})" if crates else None


def tries(messages: list[dict[str, Any]]) -> list[bool]:
    """For each model reply of the first attempt, in order: whether the checks passed on what it ran (a reply
    that ran nothing, a repeat or prose, did not pass)."""
    out: list[bool] = []
    for m in messages:
        if (m.get("attempt") or 1) != 1:
            continue
        if m.get("role") == "assistant":
            out.append(False)
        elif out and isinstance(m.get("outcome"), dict) and m["outcome"].get("success"):
            out[-1] = True
    return out


def run_exercise(ex: Exercise, root: Path, reply: str, model: str | None, max_seconds: float | None,
                 image: str) -> dict[str, Any]:
    """Build, run and score one exercise; its JSONL record."""
    scenario = build_scenario(ex, root / "scenarios" / ex.slug / ex.name, reply_for(ex, reply), image)
    started = time.perf_counter()
    result = run_scenario(scenario, RunOptions(model=model if reply == "model" else None, human="never",
                                               workspaces=root / "runs", max_seconds=max_seconds))
    seconds = time.perf_counter() - started
    if isinstance(result.error, EnvironmentProblem):
        raise result.error
    transcript = load_transcript(result.run_dir)
    outcome = tries(transcript.get("messages") or [])
    totals = result.totals or {}
    return {"language": ex.slug, "exercise": ex.name, "status": result.status, "reason": result.reason,
            "passed_1": bool(outcome and outcome[0]), "passed_2": result.status == "success",
            "replies": len(outcome), "rejected_replies": len(transcript.get("rejected_replies") or []),
            "seconds": round(seconds, 2), "prompt_tokens": totals.get("prompt_tokens") or None,
            "completion_tokens": totals.get("completion_tokens") or None, "run_dir": str(result.run_dir),
            **({"note": note} if (note := reply_note(ex, reply)) else {})}


def summarize(records: list[dict[str, Any]], skipped: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts and rates per language and in all (rates over the exercises run; skipped ones listed apart)."""
    langs = sorted({r["language"] for r in [*records, *skipped]})

    def block(rows: list[dict[str, Any]], skips: list[dict[str, Any]]) -> dict[str, Any]:
        n = len(rows)
        p1, p2 = sum(r["passed_1"] for r in rows), sum(r["passed_2"] for r in rows)
        tokens = [r for r in rows if r.get("completion_tokens")]
        return {"exercises": n + len(skips), "run": n, "passed_1": p1, "passed_2": p2,
                "rate_1": round(100 * p1 / n, 1) if n else None, "rate_2": round(100 * p2 / n, 1) if n else None,
                "seconds": round(sum(r["seconds"] for r in rows), 1),
                "prompt_tokens": sum(r.get("prompt_tokens") or 0 for r in tokens) if tokens else None,
                "completion_tokens": sum(r["completion_tokens"] for r in tokens) if tokens else None,
                "skipped": len(skips), "skipped_exercises": [{"exercise": s["exercise"], "reason": s["skipped"]}
                                                             for s in skips]}

    per = {lang: block([r for r in records if r["language"] == lang], [s for s in skipped if s["language"] == lang])
           for lang in langs}
    return {"languages": per, "total": block(records, skipped)}


def summary_table(summary: dict[str, Any], reply: str) -> Table:
    """One row per language and a total: run, passed on try 1 and by try 2 (with rates), skipped, wall time."""
    table = Table(title=f"Exercism, aider's two tries (--reply {reply})")
    for col in ("language", "run", "try 1", "by try 2", "skipped", "wall s"):
        table.add_column(col, justify="left" if col == "language" else "right")

    def pct(k: int, rate: float | None) -> str:
        return f"{k} ({rate:.1f}%)" if rate is not None else "-"

    rows = [*summary["languages"].items(), ("total", summary["total"])]
    for lang, s in rows:
        table.add_row(lang, str(s["run"]), pct(s["passed_1"], s["rate_1"]), pct(s["passed_2"], s["rate_2"]),
                      str(s["skipped"]), f"{s['seconds']:.0f}", end_section=lang == rows[-2][0])
    return table


def _append(path: Path, record: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def run_bench(console: Console, track: Path, *, languages: list[str] | None = None, only: list[str] | None = None,
              limit: int | None = None, sample: int | None = None, model: str | None = None,
              reply: str = "model", out: Path | None = None,
              max_seconds: float | None = None, image: str = IMAGE, root: Path | None = None) -> dict[str, Any]:
    """Run the selected exercises one after the other; returns the summary (also in root/summary.json and --out)."""
    if reply not in REPLIES:
        raise BadInputError(f"--reply {reply!r}: use one of {', '.join(REPLIES)}")
    if model is not None and reply != "model":
        raise BadInputError(f"--model {model}: only with --reply model (--reply {reply} is the scripted model)")
    exercises = discover(track, languages, only, limit, sample)
    root = root or Path.cwd() / "bench-out" / f"exercism-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    root.mkdir(parents=True, exist_ok=True)
    meta = {"track": str(track.resolve()), "reply": reply, "model": model, "languages": languages, "only": only,
            "limit": limit, "sample": sample, "max_seconds": max_seconds, "image": image,
            "protocol": {"strategy": PROTOCOL, "max_consecutive_auto_reply": MAX_AUTO_REPLY},
            "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commit": git_commit(),
            "machine": machine()}
    skipped = [{"language": e.slug, "exercise": e.name, "skipped": e.skip} for e in exercises if e.skip]
    todo = [e for e in exercises if not e.skip]
    console.print(f"Exercism: {len(todo)} exercises to run, {len(skipped)} skipped, --reply {reply}; output in {root}",
                  soft_wrap=True)
    records: list[dict[str, Any]] = []
    try:
        for i, ex in enumerate(todo, 1):
            record = run_exercise(ex, root, reply, model, max_seconds, image)
            records.append(record)
            _append(root / "results.jsonl", record)
            mark = "[green]try 1[/]" if record["passed_1"] else "[green]try 2[/]" if record["passed_2"] \
                else "[red]failed[/]"
            note = f"  ({record['note']})" if record.get("note") else ""
            console.print(f"[{i}/{len(todo)}] {ex.key:<36} {mark}  {record['seconds']:.1f}s  {record['run_dir']}{note}",
                          soft_wrap=True, highlight=False)
    finally:
        summary = {"meta": {**meta, "ended_at": datetime.now(timezone.utc).isoformat(timespec="seconds")},
                   **summarize(records, skipped), "exercises": records, "skipped": skipped}
        for path in [root / "summary.json", *([out] if out else [])]:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(summary, indent=2, ensure_ascii=False), encoding="utf-8")
    console.print(summary_table(summary, reply))
    for s in skipped:
        console.print(f"skipped {s['language']}/{s['exercise']}: {s['skipped']}", soft_wrap=True, highlight=False)
    console.print(f"results: {root / 'results.jsonl'}\nsummary: {out or root / 'summary.json'}", soft_wrap=True)
    return summary


def main(console: Console, track: Path, languages: str | None, only: str | None, limit: int | None,
         sample: int | None, model: str | None, reply: str, out: Path | None, max_seconds: float | None) -> int:
    """CLI entry: 0 when every selected exercise ran (passed or not)."""
    run_bench(console, track, languages=names(languages, ALIASES), only=names(only), limit=limit, sample=sample,
              model=model, reply=reply, out=out, max_seconds=max_seconds)
    return 0
