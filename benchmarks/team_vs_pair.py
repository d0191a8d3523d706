"""Pair against team on the 21 script and 11 file scenarios (issue 39's measurement), resumable across sessions.

    python -m benchmarks.team_vs_pair --out benchmarks/results/team_vs_pair.jsonl [--only a,b] [--max-seconds 600]
    python -m benchmarks.team_vs_pair --out benchmarks/results/team_vs_pair.jsonl --table

Each scenario runs as a pair, then as the built-in Planner → Developer → QA team, one run at a time, through the
product's own command: `codeduet run scenarios/<s>.yaml [--team] --max-seconds 600 --json`. Each run's `--json`
line, with its setup, commit, CPU and per-role time from the transcript, is appended to a JSON Lines file; a
(scenario, setup) already there is skipped, so a measurement stopped at a session's end goes on where it stopped.
`--table` prints the markdown rows and the team paper's metrics per setup (agents/record/metrics.py) from that file.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from agents.record.paths import PROJECT_ROOT

SCRIPT_SCENARIOS = ["access_log", "changelog_summary", "clean_emails", "cron_next_runs", "dir_sizes", "edit_distance",
                    "fifo_inventory", "friday_13th", "ini_to_json", "line_fit_numpy", "low_stock_json",
                    "markdown_report", "markov_weather", "primes", "rle_roundtrip", "room_free_slots",
                    "sales_by_region", "shortest_path", "student_ranking", "timesheet_hours", "word_frequency"]
FILE_SCENARIOS = ["fix_median", "fix_parse_duration", "inventory_status", "logsum_level_option", "phone_numbers_csv",
                  "quiet_hours_config", "refactor_money_format", "shopkit_coupons", "signup_normalize_email",
                  "textkit_reading_time", "todo_cli"]
SETUPS = ("pair", "team")
SCENARIOS_DIR = PROJECT_ROOT / "scenarios"


def load_rows(path: Path) -> list[dict[str, Any]]:
    """The rows measured so far (none when the file does not exist yet)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def cpu_name() -> str:
    """The CPU's model name and whether it has AVX-512 (the embedded model's speed depends on it)."""
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return "?"
    name = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "?")
    return f"{name}, {'AVX-512' if ' avx512f' in info else 'AVX2 only' if ' avx2' in info else 'no AVX2'}"


def role_seconds(run_dir: str) -> dict[str, float]:
    """Seconds of generation per team member (planner, qa, developer) from the run's transcript totals."""
    try:
        totals = json.loads((Path(run_dir) / "transcript.json").read_text(encoding="utf-8")).get("totals") or {}
    except (OSError, ValueError):
        return {}
    return {str(r.get("role") or name): round(float(r.get("seconds") or 0), 1)
            for name, r in (totals.get("roles") or {}).items()}


def run_one(scenario: str, setup: str, max_seconds: float, workspaces: Path | None,
            folder: Path = SCENARIOS_DIR) -> dict[str, Any]:
    """One run through `codeduet run … --json`; its summary line plus what the table needs."""
    from agents.bench.common import git_commit

    cmd = [sys.executable, "-m", "agents", "run", str(folder / f"{scenario}.yaml"),
           "--max-seconds", str(max_seconds), "--json", *(["--team"] if setup == "team" else []),
           *(["--workspace", str(workspaces)] if workspaces else [])]
    started = time.strftime("%Y-%m-%dT%H:%M:%S")
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=PROJECT_ROOT, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"{scenario} ({setup}): no --json line (exit {done.returncode}): {done.stderr.strip()[-300:]}")
    row = json.loads(lines[-1])
    return {"scenario": scenario, "setup": setup, "started": started, "commit": git_commit(), "cpu": cpu_name(),
            "max_seconds": max_seconds, **row, "ran_as": (row.get("metrics") or {}).get("setup"),
            "role_seconds": role_seconds(row["run_dir"])}


def dash(value: Any) -> str:
    """A count, or "-" where there is none (no execution of that attempt)."""
    return "-" if value is None else str(value)


def markdown(rows: list[dict[str, Any]]) -> str:
    """The table rows (scenario, setup, status, attempts · turns · executions, tokens, seconds, errors, planner/QA
    time) and, per setup, the metrics over the scenarios both setups ran."""
    from agents.record.metrics import batch_metrics

    out = ["| scenario | setup | status | attempts · turns · executions | tokens | seconds | errors first → final "
           "| planner/QA time |", "|---|---|---|---|---|---|---|---|"]
    by = {(r["scenario"], r["setup"]): r for r in rows}
    names = [n for n in dict.fromkeys([*SCRIPT_SCENARIOS, *FILE_SCENARIOS, *(r["scenario"] for r in rows)])
             if any((n, s) in by for s in SETUPS)]
    for name in names:
        won = {s: (by.get((name, s)) or {}).get("status") == "success" for s in SETUPS}
        for setup in SETUPS:
            r = by.get((name, setup))
            if r is None:
                continue
            m = r.get("metrics") or {}
            status = f"**{r['status']}**" if won[setup] and not all(won.values()) else r["status"]
            roles = r.get("role_seconds") or {}
            side = ", ".join(f"{k} {roles[k]:.0f} s" for k in ("planner", "qa") if k in roles)
            out.append(f"| {name} | {setup} | {status} | {r['attempts']} · {r['turns']} · {r['executions']} | "
                       f"{r['tokens']:,} | {r['seconds']:.0f} | {dash(m.get('initial_errors'))} → "
                       f"{dash(m.get('final_errors'))} | {side} |")
    both = [n for n in names if all((n, s) in by for s in SETUPS)]
    out.append("")
    for setup in SETUPS:
        runs = [by[(n, setup)] for n in both]
        wins = sum(r["status"] == "success" for r in runs)
        metrics = batch_metrics([r["metrics"] for r in runs if r.get("metrics")])
        out.append(f"- {setup}: {wins}/{len(runs)} succeeded, {sum(r['tokens'] for r in runs):,} tokens, "
                   f"{sum(r['seconds'] for r in runs):,.0f} s; metrics {json.dumps(metrics)}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Run what is missing from --out (or print its table with --table)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="JSON Lines file of rows; appended to, resumed from")
    parser.add_argument("--only", default="", help="comma-separated scenario names (default: the 32)")
    parser.add_argument("--max-seconds", type=float, default=600.0, help="each run's budget (default 600)")
    parser.add_argument("--workspaces", type=Path, default=None, help="root for run folders (default ./workspaces)")
    parser.add_argument("--scenarios", type=Path, default=SCENARIOS_DIR, help="folder of the scenario files")
    parser.add_argument("--table", action="store_true", help="print the markdown table of --out and stop")
    args = parser.parse_args(argv)
    if args.table:
        print(markdown(load_rows(args.out)))
        return 0
    names = [s for s in args.only.split(",") if s] or [*SCRIPT_SCENARIOS, *FILE_SCENARIOS]
    unknown = [n for n in names if not (args.scenarios / f"{n}.yaml").exists()]
    if unknown:
        print(f"error: no such scenario: {', '.join(unknown)}", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for name in names:
        for setup in SETUPS:
            if any(r["scenario"] == name and r["setup"] == setup for r in load_rows(args.out)):
                continue
            row = run_one(name, setup, args.max_seconds, args.workspaces, args.scenarios)
            with args.out.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row) + "\n")
            print(f"{name} {setup}: {row['status']} {row['seconds']:.0f} s {row['tokens']} tokens", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
