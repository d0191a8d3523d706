"""Behaviour unchanged across a refactor: the scripted-model transcripts a test run leaves, compared once normalised.

    pytest -m "not model" --basetemp=/tmp/before tests/...     # on the commit before
    pytest -m "not model" --basetemp=/tmp/after tests/...      # on the commit after
    python -m tests.transcript_diff /tmp/before /tmp/after
    (or TEST_BASETEMP=/tmp/before make test: each tier's folders under /tmp/before/<tier>)

Each transcript.json under a basetemp is keyed by the test folder that made it (the xdist worker prefix dropped)
and its place among that folder's transcripts; times, ids, paths, ports and addresses are normalised. Prints one
line per difference and exits 1 when there is any.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

VOLATILE_KEYS = re.compile(r"(^|_)(at|seconds|secs|ms|ttft|tok_s|tokens_per_s|elapsed|duration|rss|pid|time|"
                           r"started|ended|took|wall)($|_)|^(run_id|run_dir|container|container_id|id|workspace|"
                           r"host|port|path|dir|parent)$")
SUBS = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?"), "<time>"),
    (re.compile(r"\d{8}-\d{6}(-[0-9a-z]+)*"), "<run>"),
    (re.compile(r"(/tmp|/private/var|/var/folders)[^\s'\"),:]*"), "<path>"),
    (re.compile(r"(/[\w.+-]+)+/(?=(scenarios|benchmarks|tests|agents)/)"), "<checkout>/"),
    (re.compile(r"0x[0-9a-fA-F]{6,}"), "<addr>"),
    (re.compile(r"127\.0\.0\.1:\d+|localhost:\d+"), "<host>"),
    (re.compile(r"codeduet-[0-9a-z-]{6,}"), "codeduet-<id>"),
    (re.compile(r"\b\d+(\.\d+)? ?(s|ms|seconds)\b"), "<dur>"),
    (re.compile(r"\b[0-9a-f]{12,64}\b"), "<hex>"),
]


def normalise(value: Any, key: str = "") -> Any:
    """The transcript with everything that differs between two identical runs replaced by a placeholder."""
    if VOLATILE_KEYS.search(key.lower()):
        return "<volatile>"
    if isinstance(value, dict):
        return {k: normalise(v, k) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, float):
        return "<float>"
    if isinstance(value, str):
        for pattern, repl in SUBS:
            value = pattern.sub(repl, value)
    return value


def collect(base: Path) -> dict[str, list[Any]]:
    """{test folder/scenario: [normalised transcripts]} for every transcript.json under a pytest basetemp (or a
    TEST_BASETEMP of .ci/tests: one folder per tier). pytest cuts a test's folder name to 30 characters, so one key
    may hold several tests' transcripts: `pairs` matches them by their scenario."""
    out: dict[str, list[Any]] = {}
    for path in sorted(base.rglob("transcript.json")):
        rel = path.relative_to(base).parts
        own = [p for p in rel if p.startswith("test_")]  # past the tier's folder and the xdist worker's
        test_dir = own[0] if own else next((p for p in rel if not p.startswith("popen-gw")), rel[0])
        test_dir = test_dir.rstrip("0123456789")  # pytest numbers a parametrized test's folders in its run order
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        scenario = (data.get("scenario") or {}).get("name", "") if isinstance(data, dict) else ""
        out.setdefault(f"{test_dir}/{scenario}", []).append(normalise(data))
    return out


def _scenario(transcript: Any) -> str:
    return json.dumps(transcript.get("scenario") if isinstance(transcript, dict) else None, sort_keys=True)


def pairs(key: str, before: list[Any], after: list[Any]) -> tuple[list[tuple[str, Any, Any]], list[str]]:
    """The transcripts of one key paired: the same scenario first, in order; what is left, in order. Returns
    (key#n, before, after) pairs and the names of those on one side only."""
    left, right = list(range(len(before))), list(range(len(after)))
    matched = []
    for i in list(left):
        j = next((j for j in right if _scenario(after[j]) == _scenario(before[i])), None)
        if j is not None:
            matched.append((i, j))
            left.remove(i)
            right.remove(j)
    matched += list(zip(left, right))
    rest = [f"only before: {key}#{i}" for i in left[len(right):]]
    rest += [f"only after: {key}#{j}" for j in right[len(left):]]
    return [(f"{key}#{i}", before[i], after[j]) for i, j in sorted(matched)], rest


def diff(a: Any, b: Any, where: str = "") -> list[str]:
    """Paths where two normalised transcripts differ."""
    if type(a) is not type(b):
        return [f"{where}: {str(a)[:80]!r} != {str(b)[:80]!r}"]
    if isinstance(a, dict):
        return [d for k in sorted(set(a) | set(b)) for d in
                (diff(a[k], b[k], f"{where}.{k}") if k in a and k in b else [f"{where}.{k}: only on one side"])]
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in diff(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {str(a)[:80]!r} != {str(b)[:80]!r}"]


def main(argv: list[str]) -> int:
    before, after = collect(Path(argv[0])), collect(Path(argv[1]))
    problems = [f"only before: {k}" for k in sorted(set(before) - set(after))]
    problems += [f"only after: {k}" for k in sorted(set(after) - set(before))]
    both = 0
    for key in sorted(set(before) & set(after)):
        matched, rest = pairs(key, before[key], after[key])
        both += len(matched)
        problems += rest + [f"{name}{d}" for name, a, b in matched for d in diff(a, b)[:5]]
    print("\n".join(problems))
    print(f"{both} transcripts in both; {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
