"""The sandbox image: built locally (never pulled), hardened at run time, with actionable errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.loop.errors import EXIT_ENVIRONMENT, DockerUnavailable, ImageMissing
from agents.sandbox import image as img

MISSING = "codeduet-sandbox:no-such-tag-for-tests"
HARDENING = {
    "network_mode": "none",
    "read_only": True,
    "tmpfs": {"/tmp": "rw,size=64m"},
    "user": "1000:1000",
    "cap_drop": ["ALL"],
    "security_opt": ["no-new-privileges"],
    "mem_limit": "512m",
    "pids_limit": 128,
}


@pytest.fixture(scope="module")
def client():
    """A pinged Docker client, or skip when no daemon is reachable."""
    try:
        return img.docker_client()
    except DockerUnavailable as err:
        pytest.skip(str(err))


@pytest.fixture(scope="module")
def image_id(client) -> str:
    """The local sandbox image, built first if absent (offline, via mmdebstrap when installed)."""
    try:
        return img.ensure_image(img.IMAGE_DEFAULT, client)
    except ImageMissing:
        return img.build_image(img.IMAGE_DEFAULT)


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    """A host folder the sandbox user (uid 1000) may write to."""
    tmp_path.chmod(0o777)
    return tmp_path


def run(client, command: str, workspace: Path) -> tuple[int, str]:
    """Run `sh -c command` in a hardened container with `workspace` at /workspace; (exit code, output)."""
    volumes = {str(workspace): {"bind": "/workspace", "mode": "rw"}}
    container = client.containers.run(img.IMAGE_DEFAULT, ["sh", "-c", command], detach=True,
                                      volumes=volumes, **HARDENING)
    try:
        code = container.wait(timeout=60)["StatusCode"]
        return code, container.logs().decode().strip()
    finally:
        container.remove(force=True)


@pytest.mark.docker
def test_runs_as_uid_1000(client, image_id, workspace):
    assert run(client, "id -u; id -g", workspace) == (0, "1000\n1000")


@pytest.mark.docker
def test_python_has_numpy_pandas_pytest(client, image_id, workspace):
    code, out = run(client, "python -c 'import numpy, pandas, pytest; print(numpy.__name__)'", workspace)
    assert (code, out) == (0, "numpy")


@pytest.mark.docker
def test_workspace_writable_and_root_read_only(client, image_id, workspace):
    code, out = run(client, "pwd; echo hi > /workspace/out.txt && echo ok; touch /x 2>/dev/null || echo ro", workspace)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "/workspace" and "ok" in lines and lines[-1] == "ro"
    assert (workspace / "out.txt").read_text() == "hi\n"


@pytest.mark.docker
def test_tools_for_scripts(client, image_id, workspace):
    code, out = run(client, "timeout 1 sleep 5; echo $?; ps -o pid= -p 1 | tr -d ' '; echo $HOME", workspace)
    assert (code, out.splitlines()) == (0, ["124", "1", "/tmp"])


@pytest.mark.docker
def test_image_status_of_built_image(client, image_id):
    status = img.image_status(img.IMAGE_DEFAULT, client)
    assert status["exists"] and status["id"] == image_id and status["size"] > 0
    assert status["labels"][img.LABEL] == "1" and status["version"]
    assert status["python"].startswith("3.")


@pytest.mark.docker
def test_image_status_missing_tag(client):
    assert img.image_status(MISSING, client) == {"tag": MISSING, "exists": False}


@pytest.mark.docker
def test_ensure_image_missing_is_one_actionable_line(client):
    with pytest.raises(ImageMissing) as info:
        img.ensure_image(MISSING, client)
    assert str(info.value) == f"sandbox image {MISSING} not found: run `codeduet sandbox build --image {MISSING}`"
    assert info.value.exit_code == EXIT_ENVIRONMENT


def test_unreachable_daemon_is_one_actionable_line(monkeypatch, tmp_path):
    host = f"unix://{tmp_path}/no-docker.sock"
    monkeypatch.setenv("DOCKER_HOST", host)
    with pytest.raises(DockerUnavailable) as info:
        img.docker_client()
    assert str(info.value) == (f"Docker daemon not reachable at {host}: start it "
                               "(e.g. `sudo systemctl start docker`) or set DOCKER_HOST")


def test_base_tag_and_bad_method():
    assert img.base_tag("codeduet-sandbox:latest") == "codeduet-sandbox-base:latest"
    assert img.base_tag("localhost:5000/sandbox") == "localhost:5000/sandbox-base:latest"
    with pytest.raises(ValueError):
        img.build_image(method="podman")


@pytest.mark.docker
def test_a_layer_is_one_commit_with_its_files_settings_and_labels_and_a_failing_script_is_one_line(
        client, image_id, tmp_path):
    """agents/sandbox/layer.py: the script ran as root with no network, the files copied in and gone before the
    commit, the image below's user, folder and command kept, the labels set, one layer more; a failing script is
    one EnvironmentProblem with its last lines, no image and no container left."""
    from agents.loop.errors import EnvironmentProblem
    from agents.sandbox.layer import FILES, commit_layer

    (tmp_path / "note.txt").write_text("from the host\n")
    tag = "codeduet-layertest"  # no tag given: latest, as docker build
    script = f"id -u; cp {FILES}/note.txt /etc/codeduet-note; (getent hosts example.org || echo no network)"
    seen: list[str] = []
    try:
        new = commit_layer(client, tag, img.IMAGE_DEFAULT, script, {"org.codeduet.test": "1"}, seen.append,
                           files=tmp_path, settings=("ENV CODEDUET_LAYER=yes",))
        made = client.images.get(f"{tag}:latest")
        assert made.id == new and made.labels["org.codeduet.test"] == "1"
        assert made.labels[img.LABEL] == "1"  # the image below's labels are kept
        config = made.attrs["Config"]
        assert config["User"] == "sandbox" and config["WorkingDir"] == "/workspace" and config["Cmd"] == ["python3"]
        assert "CODEDUET_LAYER=yes" in config["Env"]
        assert len(made.history()) == len(client.images.get(img.IMAGE_DEFAULT).history()) + 1
        assert seen[:1] == ["0"] and "no network" in seen
        out = client.containers.run(tag, ["sh", "-c", f"cat /etc/codeduet-note; ls {FILES} 2>&1 || true"], remove=True,
                                    stderr=True, network_mode="none").decode()
        assert out.startswith("from the host") and "No such file" in out
        with pytest.raises(EnvironmentProblem) as failed:
            commit_layer(client, f"{tag}:broken", img.IMAGE_DEFAULT, "echo first\necho boom\nexit 3", {},
                         seen.append)
        assert str(failed.value) == (f"building {tag}:broken failed (exit 3 in the layer over {img.IMAGE_DEFAULT}): "
                                     "first | boom")
        assert not img.image_status(f"{tag}:broken", client)["exists"]
        left = [c for c in client.containers.list(all=True, ignore_removed=True)
                if "echo boom" in " ".join(c.attrs["Config"]["Cmd"] or [])]
        assert not left
    finally:
        img.remove_image(f"{tag}:latest", base=False)
