"""Frontend scenarios through `codeduet run` in the real Docker sandbox of the frontend preset (scripted model):
the reference page passes its page check and its screenshot is in the run folder, the transcript and `replay`; a
wrong page and a reply that writes none fail with a report naming the step; the served table's demo; React with
JSX under jest's jsdom environment through the `command:` check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from agents.feedback.figures import png_info
from agents.record.transcript import load_transcript
from tests.conftest import ROOT
from tests.helpers import run_cli

pytestmark = pytest.mark.docker

SCENARIOS = ROOT / "scenarios"
REFERENCE = (SCENARIOS / "reference" / "frontend_filter_list.md").read_text(encoding="utf-8")


def scripted(tmp_path: Path, name: str, replies: list[str]) -> Path:
    """A copy of a scenario whose model is the scripted one, with these replies and one attempt."""
    data = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text(encoding="utf-8"))
    data.update(model={"provider": "scripted", "replies": replies}, strategy={"attempts": 1},
                user_proxy={"max_consecutive_auto_reply": len(replies)})
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def run(path: Path, root: Path) -> tuple[Path, dict]:
    """`codeduet run PATH --json`: the run folder and its transcript."""
    proc = run_cli("run", str(path), "--workspace", str(root), "--json", timeout=600)
    assert proc.stdout.strip(), proc.stderr
    run_dir = Path(json.loads(proc.stdout)["run_dir"])
    return run_dir, load_transcript(run_dir)


def outcomes(transcript: dict) -> list[dict]:
    """The outcome of every turn that ran code, in order."""
    return [m["outcome"] for m in transcript["messages"] if (m.get("outcome") or {}).get("checks")]


def test_the_reference_page_succeeds_and_its_screenshot_is_in_the_run_folder_the_transcript_and_replay(tmp_path):
    run_dir, t = run(scripted(tmp_path, "frontend_filter_list", [REFERENCE]), tmp_path / "ws")
    assert t["status"] == "success", t["reason"]
    [check] = outcomes(t)[-1]["checks"]
    assert check["passed"] and check["name"] == "page: 'index.html' (9 steps)"
    [figure] = check["figures"]
    assert figure["path"] == "figures/page-1-1.png" and (figure["width"], figure["height"]) == (800, 600)
    shot = run_dir / "workspace" / "figures" / "page-1-1.png"
    assert png_info(shot)["width"] == 800 and shot.stat().st_size == figure["size"]
    shown = run_cli("replay", str(run_dir)).stdout
    assert "✔ check page: 'index.html' (9 steps)\n  🖼 screenshot figures/page-1-1.png (800x600 px" in shown


def test_a_wrong_page_fails_naming_its_step_with_expected_against_actual(tmp_path):
    wrong = REFERENCE.replace("`${shown} shown`", "`${shown} items`")
    run_dir, t = run(scripted(tmp_path, "frontend_filter_list", [wrong]), tmp_path / "ws")
    assert t["status"] != "success"
    [check] = outcomes(t)[0]["checks"]
    step = 'step 3 text of "#count": expected "6 shown", got "6 items" (2 steps before it passed; 6 after it not run)'
    assert check["detail"].startswith(step)
    assert check["figures"][0]["path"] == "figures/page-1-1.png"  # the page as it was at the failed step
    report = next(m["content"] for m in t["messages"] if (m.get("outcome") or {}).get("checks"))
    assert step in report  # what the model reads


def test_a_reply_that_writes_no_page_is_told_the_page_is_missing(tmp_path):
    nothing = "```python\nprint('the page is ready')\n```"
    run_dir, t = run(scripted(tmp_path, "frontend_filter_list", [nothing]), tmp_path / "ws")
    assert t["status"] != "success"
    [check] = outcomes(t)[0]["checks"]
    assert check["detail"].startswith("index.html does not exist in the workspace (it holds: ")
    assert "figures" not in check or not check["figures"]


def test_the_served_table_demo_fails_on_a_text_sort_of_prices_then_succeeds(tmp_path):
    run_dir, t = run(SCENARIOS / "frontend_scripted.yaml", tmp_path / "ws")
    assert t["status"] == "success", t["reason"]
    first, second = (o["checks"][0] for o in outcomes(t))
    assert first["detail"].startswith('step 5 text of "#products tbody tr:last-child td": expected "Backpack", '
                                      'got "Calculator"')
    assert second["passed"] and second["figures"][0]["path"] == "figures/page-1-2.png"  # each reply's own page
    assert all((run_dir / "workspace" / "figures" / f"page-1-{k}.png").is_file() for k in (1, 2))


def test_a_react_component_in_jsx_passes_hidden_jest_tests_in_the_jsdom_environment(tmp_path):
    run_dir, t = run(SCENARIOS / "react_jest_scripted.yaml", tmp_path / "ws")
    assert t["status"] == "success", t["reason"]
    [check] = outcomes(t)[-1]["checks"]
    assert check["passed"] and (check["tests_passed"], check["tests"]) == (4, 4)
