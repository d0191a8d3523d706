"""Shared fixtures: the locally built sandbox image, scratch workspaces, scripted scenarios."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.loop.defaults import SANDBOX_IMAGE  # noqa: E402  (after the worktree root is on sys.path)
from tests.helpers import py  # noqa: E402,F401  (tests import py from here too)

pytest_plugins = ["tests.plugins.leak_guard", "pytester"]  # leak guard: see tests/plugins/leak_guard.py

# Property tests (tests/test_properties.py): 200 examples each in the suite; `--hypothesis-profile thorough` for
# 2,000. No deadline (2 shared cores), no example database left in the checkout.
settings.register_profile("codeduet", max_examples=200, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.register_profile("thorough", parent=settings.get_profile("codeduet"), max_examples=2000)
settings.load_profile("codeduet")

IMAGE = os.environ.get("CODEDUET_TEST_IMAGE", SANDBOX_IMAGE)


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    """The sandbox image, built locally if it is missing (never pulled)."""
    from agents.sandbox.image import build_image, image_status

    if not image_status(IMAGE).get("exists"):
        build_image(IMAGE)
    return IMAGE


@pytest.fixture
def workspaces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private workspaces root for the test's run folders."""
    root = tmp_path / "workspaces"
    root.mkdir()
    monkeypatch.setenv("CODEDUET_WORKSPACES", str(root))
    return root


ScenarioFactory = Callable[..., Path]


@pytest.fixture
def scenario_file(tmp_path: Path) -> ScenarioFactory:
    """Write a scripted scenario YAML: scenario_file(replies, **top_level_overrides) -> path."""

    def make(replies: list[str], name: str = "t", **overrides: Any) -> Path:
        data: dict[str, Any] = {
            "name": name,
            "task": "Print the answer.",
            "model": {"provider": "scripted", "replies": replies},
            "user_proxy": {"max_consecutive_auto_reply": 5},
            "sandbox": {"image": IMAGE, "timeout": 10},
            "strategy": {"attempts": 1},  # one conversation unless a test is about fresh attempts
        }
        for key, value in overrides.items():
            if isinstance(value, dict) and isinstance(data.get(key), dict):
                data[key] = {**data[key], **value}
            else:
                data[key] = value
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        return path

    return make


@pytest.fixture
def loop_file(scenario_file: ScenarioFactory) -> ScenarioFactory:
    """scenario_file for tests of the loop itself: the same AG2 conversation with the local executor (a subprocess
    in the run's workspace, no container), so they run in `make check`; the sandbox has its own Docker tests."""

    def make(replies: list[str], name: str = "t", **overrides: Any) -> Path:
        sandbox = {"kind": "local", **overrides.pop("sandbox", {})}
        return scenario_file(replies, name=name, sandbox=sandbox, **overrides)

    return make


