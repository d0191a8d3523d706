"""The docs match the code: every module the architecture page names exists, the README stays short, and the
transcript keys the docs name are keys a real transcript has."""

from __future__ import annotations

import json
import re

from agents.conversation import RunOptions, run_scenario
from agents.scenario import load_scenario
from tests.conftest import ROOT, py

ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"


def test_every_module_the_architecture_page_names_exists():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    named = set(re.findall(r"agents/[\w/]*\w(?:\.py)?/?", text))
    assert len(named) > 20, named
    missing = sorted(n for n in named if not (ROOT / n).exists())
    assert not missing, f"docs/ARCHITECTURE.md names modules that do not exist: {missing}"
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "agents").glob("*.py") if p.name != "__init__.py"}
    unnamed = sorted(m for m in modules if m not in text and m.split("/")[-1] not in text)
    assert len(unnamed) < len(modules) / 2, f"most top-level modules should appear on the page: {unnamed}"


def test_the_readme_is_short_and_links_what_it_moved_out():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 210
    for page in re.findall(r"\]\((docs/[\w./-]+)\)", readme):
        assert (ROOT / page).is_file(), page
    for page in ("ARCHITECTURE", "STRATEGY", "BENCHMARKS", "FILES", "SANDBOX", "MODELS", "SECURITY", "SCALING"):
        assert f"docs/{page}.md" in readme, page


def test_the_transcript_keys_the_docs_name_exist(workspaces, loop_file):
    result = run_scenario(load_scenario(loop_file([py("print(1)")])), RunOptions())
    t = json.loads((result.run_dir / "transcript.json").read_text())
    text = ARCHITECTURE.read_text(encoding="utf-8")
    listed = text[text.index("`transcript.json` holds:"):text.index("When `transcript.json` is missing")]
    keys = set(t) | set(t["totals"]) | {k for m in t["messages"] for k in m} | {k for a in t["attempts"] for k in a}
    named = set(re.findall(r"`([a-z_]+)`", listed)) - {"success", "failed", "max_replies", "timeout", "interrupted",
                                                        "error", "repeat", "cut", "no_code", "task", "assistant",
                                                        "execution", "user_proxy", "human"}
    assert named and not named - keys, f"not in a transcript: {sorted(named - keys)}"
