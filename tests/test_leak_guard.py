"""The leak guard itself (tests/plugins/leak_guard.py), run on a small inner suite with real containers."""

from __future__ import annotations

import docker
import pytest

from tests.conftest import IMAGE, ROOT
from tests.plugins.leak_guard import containers_under

pytestmark = pytest.mark.docker

INNER = f'''
import pytest
from agents.sandbox.docker_executor import DockerExecutor
from agents.sandbox.config import SandboxConfig


def start(tmp_path, stop=True):
    ex = DockerExecutor(SandboxConfig(image={IMAGE!r}), tmp_path / "ws")
    ex.start()
    if stop:
        ex.stop()


def test_unmarked_but_starts_a_container(tmp_path):
    start(tmp_path)


@pytest.mark.docker
def test_leaves_its_container(tmp_path):
    start(tmp_path, stop=False)


@pytest.mark.docker
def test_clean(tmp_path):
    start(tmp_path)


def test_no_container_at_all(tmp_path):
    assert True
'''


def test_guard_fails_unmarked_and_leaking_tests_only(pytester: pytest.Pytester, sandbox_image: str):
    pytester.makeconftest(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
                          "pytest_plugins = ['tests.plugins.leak_guard']\n")
    pytester.makeini("[pytest]\nmarkers =\n    docker: needs docker\n")
    pytester.makepyfile(test_inner=INNER)
    try:
        result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
        result.assert_outcomes(passed=4, errors=2)
        text = result.stdout.str()
        assert "started sandbox container(s)" in text and "mark it @pytest.mark.docker" in text
        assert "sandbox container(s) left behind" in text
        assert len(containers_under(pytester.path)) == 1  # the leaking test's container, found by its label
    finally:
        client = docker.from_env()
        for name in containers_under(pytester.path):
            client.containers.get(name).remove(force=True, v=True)
