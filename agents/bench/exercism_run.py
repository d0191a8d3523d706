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

from agents.bench.common import git_commit, machine
from agents.bench.exercism import (
    IMAGE,
    MAX_AUTO_REPLY,
    PROTOCOL,
    PROTOCOLS,
    SPECS,
    Exercise,
    build_scenario,
    discover,
    registry_crates,
)
from agents.bench.exercism_summary import summarize, summary_table
from agents.bench.exercism_toolchain import image_versions, manifest_needs, newer_compiler
from agents.loop.conversation import RunOptions, run_scenario
from agents.loop.errors import BadInputError, DockerUnavailable, EnvironmentProblem
from agents.record.transcript import load_transcript

REPLIES = ("model", "example", "stub")
START_RETRIES = (10.0, 30.0)
"""Pauses before an exercise runs again when its container could not start (seen on a loaded 2-core machine)."""
CODEDUET_SECONDS = 600.0
"""The time budget of one exercise under codeduet's protocol when --max-seconds gives none (its attempts go on until
a pass or the budget: without one a failing exercise would run the product's 50 attempts)."""
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


def first_checks(messages: list[dict[str, Any]]) -> str:
    """The checks' details of the first execution (the first reply's hidden-test output)."""
    first = next((m for m in messages if m.get("role") == "execution" and isinstance(m.get("outcome"), dict)), None)
    return "\n".join(c.get("detail") or "" for c in (first or {}).get("outcome", {}).get("checks") or [])


def run_exercise(ex: Exercise, root: Path, reply: str, model: str | None, max_seconds: float | None,
                 image: str, versions: dict[str, str] | None = None, protocol: str = "aider") -> dict[str, Any]:
    """Build, run and score one exercise under one protocol; its JSONL record. An example solution that fails on
    the compiler's age (exercism_toolchain.newer_compiler) says so in `needs_newer_compiler`."""
    scenario = build_scenario(ex, root / "scenarios" / protocol / ex.slug / ex.name, reply_for(ex, reply), image,
                              versions, protocol)
    if protocol == "codeduet" and max_seconds is None:
        max_seconds = CODEDUET_SECONDS
    started = time.perf_counter()
    result = run_scenario(scenario, RunOptions(model=model if reply == "model" else None, human="never",
                                               workspaces=root / "runs" / protocol, max_seconds=max_seconds))
    seconds = time.perf_counter() - started
    if isinstance(result.error, EnvironmentProblem):
        raise result.error
    transcript = load_transcript(result.run_dir)
    outcome = tries(transcript.get("messages") or [])
    totals = result.totals or {}
    too_old = newer_compiler(first_checks(transcript.get("messages") or []), versions or {}, ex.adapted) \
        if reply == "example" and result.status != "success" else None
    return {"protocol": protocol, "language": ex.slug, "exercise": ex.name, "status": result.status,
            "reason": result.reason,
            "passed_1": bool(outcome and outcome[0]), "passed_2": result.status == "success",
            "replies": len(outcome), "rejected_replies": len(transcript.get("rejected_replies") or []),
            "seconds": round(seconds, 2), "prompt_tokens": totals.get("prompt_tokens") or None,
            "completion_tokens": totals.get("completion_tokens") or None, "run_dir": str(result.run_dir),
            "attempts": len({m.get("attempt") or 1 for m in transcript.get("messages") or []}),
            **({"adapted": ex.adapted} if ex.adapted else {}),
            **({"needs_newer_compiler": too_old} if too_old else {}),
            **({"note": note} if (note := reply_note(ex, reply)) else {})}


def _append(path: Path, record: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def run_bench(console: Console, track: Path, *, languages: list[str] | None = None, only: list[str] | None = None,
              limit: int | None = None, sample: int | None = None, model: str | None = None,
              reply: str = "model", out: Path | None = None, max_seconds: float | None = None,
              image: str = IMAGE, root: Path | None = None, protocol: str = "aider") -> dict[str, Any]:
    """Run the selected exercises one after the other, under one protocol or both (aider's first); returns the
    summary (also in root/summary.json and --out). The image's compilers are asked their versions once: a newer
    go.mod directive is lowered to its Go, and an exercise whose example needs a newer compiler (its manifest, or
    the compiler's error on the example reply) is listed apart, not counted."""
    if reply not in REPLIES:
        raise BadInputError(f"--reply {reply!r}: use one of {', '.join(REPLIES)}")
    if model is not None and reply != "model":
        raise BadInputError(f"--model {model}: only with --reply model (--reply {reply} is the scripted model)")
    protocols = list(PROTOCOLS) if protocol == "both" else [protocol]
    if protocol != "both" and protocol not in PROTOCOLS:
        raise BadInputError(f"--protocol {protocol!r}: use aider, codeduet or both")
    exercises = discover(track, languages, only, limit, sample)
    versions = image_versions(image)
    root = root or Path.cwd() / "bench-out" / f"exercism-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    root.mkdir(parents=True, exist_ok=True)
    meta = {"track": str(track.resolve()), "reply": reply, "model": model, "languages": languages, "only": only,
            "limit": limit, "sample": sample, "max_seconds": max_seconds, "image": image, "compilers": versions,
            "protocols": protocols, "protocol": {"strategy": PROTOCOL, "max_consecutive_auto_reply": MAX_AUTO_REPLY},
            "codeduet_max_seconds": max_seconds or CODEDUET_SECONDS if "codeduet" in protocols else None,
            "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commit": git_commit(),
            "machine": machine()}
    skipped = [{"language": e.slug, "exercise": e.name, "skipped": e.skip} for e in exercises if e.skip]
    too_old = [{"language": e.slug, "exercise": e.name, "reason": why, "found": "manifest"}
               for e in exercises if not e.skip and (why := manifest_needs(e.path, versions))]
    todo = [e for e in exercises if not e.skip and not manifest_needs(e.path, versions)]
    console.print(f"Exercism: {len(todo)} exercises to run ({', '.join(protocols)}), {len(skipped)} skipped, "
                  f"{len(too_old)} need a newer compiler, --reply {reply}; compilers {versions or '?'}; output in "
                  f"{root}", soft_wrap=True)
    records: list[dict[str, Any]] = []
    try:
        for i, ex in enumerate(todo, 1):
            if reply != "example" and (why := example_needs(console, ex, root, image, versions)):
                too_old.append({"language": ex.slug, "exercise": ex.name, "reason": why, "found": "example run"})
                console.print(f"[{i}/{len(todo)}] {ex.key}: skipped, its example {why}", soft_wrap=True,
                              highlight=False)
                continue
            for proto in protocols:
                record = run_retried(console, ex, root, reply, model, max_seconds, image, versions, proto)
                _append(root / "results.jsonl", record)
                _progress(console, f"[{i}/{len(todo)}]", ex, record)
                if record.get("needs_newer_compiler"):
                    too_old.append({"language": ex.slug, "exercise": ex.name, "reason":
                                    record["needs_newer_compiler"], "found": "example run", "run_dir":
                                    record["run_dir"]})
                    break
                records.append(record)
    finally:
        summary = {"meta": {**meta, "ended_at": datetime.now(timezone.utc).isoformat(timespec="seconds")},
                   **summarize(records, skipped, too_old, protocols), "exercises": records, "skipped": skipped,
                   "newer_compiler": too_old}
        for path in [root / "summary.json", *([out] if out else [])]:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(summary, indent=2, ensure_ascii=False), encoding="utf-8")
    for proto in protocols:
        console.print(summary_table(summary["protocols"][proto], reply, proto))
    for s in skipped:
        console.print(f"skipped {s['language']}/{s['exercise']}: {s['skipped']}", soft_wrap=True, highlight=False)
    for s in too_old:
        console.print(f"skipped {s['language']}/{s['exercise']}, needs a newer compiler: {s['reason']}",
                      soft_wrap=True, highlight=False)
    console.print(f"results: {root / 'results.jsonl'}\nsummary: {out or root / 'summary.json'}", soft_wrap=True)
    return summary


def run_retried(console: Console, ex: Exercise, *args: Any) -> dict[str, Any]:
    """run_exercise, again after a pause when its sandbox container could not start (the daemon refusing under
    load: "failed to create shim task", runc killed), said on the console. Any other problem of the machine, or a
    third refusal, ends the bench."""
    for pause in (*START_RETRIES, None):
        try:
            return run_exercise(ex, *args)
        except DockerUnavailable as exc:
            if pause is None or "could not start the sandbox container" not in str(exc):
                raise
            console.print(f"{ex.key}: {exc}; again in {pause:.0f} s", soft_wrap=True, highlight=False)
            time.sleep(pause)
    raise AssertionError("unreachable")


def example_needs(console: Console, ex: Exercise, root: Path, image: str, versions: dict[str, str]) -> str | None:
    """Whether the exercise's example solution needs a newer compiler than the image's, found by running it (the
    scripted model, aider's protocol, under root/example-probe/) before the model or the stubs are measured."""
    try:
        record = run_retried(console, ex, root / "example-probe", "example", None, None, image, versions, "aider")
    except BadInputError:  # an example that matches no solution file: nothing to learn from it
        return None
    return record.get("needs_newer_compiler")


def _progress(console: Console, count: str, ex: Exercise, record: dict[str, Any]) -> None:
    """One line per exercise and protocol as it ends."""
    first, end = ("try 1", "try 2") if record["protocol"] == "aider" else ("first turn", "passed")
    mark = "[yellow]newer compiler[/]" if record.get("needs_newer_compiler") else f"[green]{first}[/]" \
        if record["passed_1"] else f"[green]{end}[/]" if record["passed_2"] else "[red]failed[/]"
    extra = [record.get("needs_newer_compiler"), *record.get("adapted", []), record.get("note")]
    note = "".join(f"  ({x})" for x in extra if x)
    console.print(f"{count} {record['protocol']:<8} {ex.key:<36} {mark}  {record['seconds']:.1f}s  "
                  f"{record['run_dir']}{note}", soft_wrap=True, highlight=False)


def main(console: Console, track: Path, languages: str | None, only: str | None, limit: int | None,
         sample: int | None, model: str | None, reply: str, out: Path | None, max_seconds: float | None,
         protocol: str = "aider") -> int:
    """CLI entry: 0 when every selected exercise ran (passed or not)."""
    run_bench(console, track, languages=names(languages, ALIASES), only=names(only), limit=limit, sample=sample,
              model=model, reply=reply, out=out, max_seconds=max_seconds, protocol=protocol)
    return 0
