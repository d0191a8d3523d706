"""How often a whole-file reply drops what the module had: top-level functions, classes or imports.

    python -m benchmarks.dropped_defs RUN_FOLDER_OR_ROOT [...]

For every `# filename:` block of a Python file that already existed (a starting file, or one saved earlier in the
same attempt), the names the old text defined at the top level are compared with the new text's. Candidates are
counted too (each against the workspace its turn started from). It says, too, which of the dropped definitions the
code still needed, which the proxy now keeps (agents/feedback/dropped_defs.py). It changes nothing.
"""

from __future__ import annotations

import ast
import sys
import tempfile
from pathlib import Path
from typing import Any

from agents.feedback.dropped_defs import keep_needed
from agents.loop.codeblocks import extract_code_blocks
from agents.record.transcript import load_transcript
from agents.sandbox.filenames import declared_filename


def top_names(code: str) -> dict[str, set[str]] | None:
    """{'defs': functions and classes, 'imports': imported names} at the top level; None when it does not parse."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    defs = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    imports = {a.asname or a.name for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    return {"defs": defs, "imports": imports}


def file_blocks(content: str | None) -> list[tuple[str, str]]:
    """(path, code) of the reply's Python `# filename:` blocks."""
    out = []
    for b in extract_code_blocks(content):
        path = declared_filename(b.code)
        if path and path.endswith(".py"):
            out.append((path.strip(), b.code.split("\n", 1)[1] if "\n" in b.code else ""))
    return out


def compare(files: dict[str, str], content: str | None) -> list[dict[str, Any]]:
    """One row per block that rewrites an existing module: what it dropped, and what of that the product now keeps
    because the code still needs it (agents/feedback/dropped_defs.py, on a copy of the files as they were)."""
    rows = []
    for path, code in file_blocks(content):
        if path not in files:
            continue
        old, new = top_names(files[path]), top_names(code)
        if old is None or new is None:
            continue
        dropped = {k: sorted(old[k] - new[k]) for k in old}
        rows.append({"path": path, "dropped_defs": dropped["defs"], "dropped_imports": dropped["imports"],
                     "kept_defs": len(old["defs"] & new["defs"]), "old_defs": len(old["defs"]),
                     "needed": needed(files, path, code) if dropped["defs"] else []})
    return rows


def needed(files: dict[str, str], path: str, code: str) -> list[str]:
    """What the product keeps of what this rewrite dropped, given the other files of the workspace."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, text in files.items():
            target = root / name
            if ".." in Path(name).parts or Path(name).is_absolute():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        kept = keep_needed(path, f"# filename: {path}\n{code}", root)[1]
    return kept.names if kept else []


def scan(run_dir: Path) -> list[dict[str, Any]]:
    """Every rewrite of an existing module in one run (messages and candidates)."""
    t = load_transcript(run_dir)
    start = {k: v for k, v in ((t.get("scenario") or {}).get("files") or {}).items() if isinstance(v, str)}
    rows: list[dict[str, Any]] = []
    files: dict[str, str] = {}
    attempt = None
    states: dict[int, dict[str, str]] = {}  # the files before each message index, for the candidates
    for m in t.get("messages") or []:
        if m.get("attempt") != attempt:
            attempt, files = m.get("attempt"), dict(start)
        states[m.get("index", 0)] = dict(files)
        if m.get("role") == "assistant":
            for row in compare(files, m.get("content")):
                rows.append({**row, "run": run_dir.name, "kind": "reply"})
            files.update(file_blocks(m.get("content")))
    for c in t.get("candidates") or []:
        before = states.get(int(c.get("before_message", 0)), start)
        for row in compare(before, c.get("content")):
            rows.append({**row, "run": run_dir.name, "kind": "candidate"})
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print the counts over every run folder under the given paths."""
    paths = [Path(a) for a in (argv if argv is not None else sys.argv[1:])]
    runs = sorted({p.parent for root in paths for p in root.rglob("events.jsonl")})
    rows = [r for run in runs for r in scan(run)]
    dropping = [r for r in rows if r["dropped_defs"]]
    imports = [r for r in rows if r["dropped_imports"]]
    print(f"{len(runs)} runs, {len(rows)} rewrites of an existing module: {len(dropping)} dropped a top-level "
          f"function or class ({sum(1 for r in dropping if r['needed'])} of them one the code still needed, "
          f"which the proxy now keeps), {len(imports)} dropped an import")
    for r in dropping:
        still = f"; still needed, kept now: {', '.join(r['needed'])}" if r["needed"] else ""
        print(f"  {r['run']} {r['kind']} {r['path']}: dropped {', '.join(r['dropped_defs'])} "
              f"(kept {r['kept_defs']} of {r['old_defs']}){still}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
