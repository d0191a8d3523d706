"""The workspace lives in the container: no host bind mount, a remote DOCKER_HOST works, files come back after
every block, and a hostile archive cannot write outside the run folder. Real Docker, scripted model."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import docker
import pytest

from agents.record.transcript import load_transcript
from agents.sandbox.archive import WorkspaceSync
from agents.sandbox.docker_executor import LABEL_WORKSPACE
from tests.conftest import py
from tests.helpers import ROOT, RUN_PY, containers_under, run_cli

pytestmark = pytest.mark.docker

WAIT_FOR_GO = """
import os, time
print('waiting', flush=True)
while not os.path.exists('go'):
    time.sleep(0.05)
print('released')
"""


def test_a_runs_container_has_no_bind_mount(scenario_file, workspaces, sandbox_image):
    path = scenario_file([py("open('kept.txt', 'w').write('kept'); print('one')"), py(WAIT_FOR_GO)],
                         files={"data/in.txt": "input"}, termination={"contains": "TERMINATE"})  # both blocks run
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, str(RUN_PY), "run", str(path), "--workspace", str(workspaces)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    client = docker.from_env()
    try:
        name = None
        while name is None and proc.poll() is None:
            names = containers_under(workspaces)
            name = names[0] if names else None
        assert name, proc.communicate()
        container = client.containers.get(name)
        deadline = time.monotonic() + 60  # the second block is running: a file put now is in its workspace
        while "waiting" not in container.logs().decode(errors="replace") and time.monotonic() < deadline:
            time.sleep(0.05)
        attrs = client.api.inspect_container(container.id)
        mounts = attrs["Mounts"]
        assert [m["Type"] for m in mounts] == ["volume"] and mounts[0]["Destination"] == "/workspace"
        assert not attrs["HostConfig"].get("Binds")
        assert all(m.get("Type") != "bind" for m in attrs["HostConfig"].get("Mounts") or [])
        assert str(workspaces) not in str(mounts)  # nothing of the host's folders is mounted
        assert attrs["Config"]["Labels"][LABEL_WORKSPACE].startswith(str(workspaces))
        volume = mounts[0]["Name"]
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.addfile(tarfile.TarInfo("go"), io.BytesIO(b""))
        assert container.put_archive("/workspace", buf.getvalue())  # releases the second block
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out + err
    run_dir = next(workspaces.glob("t/*/transcript.json")).parent
    ws = run_dir / "workspace"
    assert (ws / "kept.txt").read_text() == "kept" and (ws / "data" / "in.txt").read_text() == "input"
    assert (ws / "go").exists()  # what appeared in the container's workspace came back too
    assert volume not in [v.name for v in client.volumes.list()]  # the workspace volume went with the container


class DockerSocketProxy:
    """A TCP listener on 127.0.0.1 that forwards every connection to the local Docker socket, and counts them."""

    def __init__(self, target: str = "/var/run/docker.sock"):
        self.target = target
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(self.target)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            for s in (src, dst):
                try:
                    s.close()
                except OSError:
                    pass

    def close(self) -> None:
        self.server.close()


def test_a_scenario_runs_over_a_tcp_docker_host(scenario_file, workspaces, sandbox_image, tmp_path):
    (tmp_path / "test_out.py").write_text("def test_out():\n    assert open('out.txt').read() == 'INPUT'\n")
    path = scenario_file([py("open('out.txt', 'w').write(open('in.txt').read().upper()); print('done')")],
                         files={"in.txt": "input"}, checks=[{"pytest": "test_out.py"}, {"file_exists": "out.txt"}])
    proxy = DockerSocketProxy()
    try:
        proc = run_cli("run", str(path), "--workspace", str(workspaces),
                       env={"DOCKER_HOST": f"tcp://127.0.0.1:{proxy.port}"})
    finally:
        proxy.close()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proxy.connections > 0  # the run really talked to the engine through the proxy
    t = load_transcript(next(workspaces.glob("t/*/transcript.json")).parent)
    assert t["status"] == "success"
    ex = [m for m in t["messages"] if m["role"] == "execution"][0]["outcome"]
    assert [c["passed"] for c in ex["checks"]] == [True, True]
    assert (Path(t["run_dir"]) / "workspace" / "out.txt").read_text() == "INPUT"


# -- a hostile archive, extracted by the host ------------------------------------------------------

def _member(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"x", link: str = "") -> tuple:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, io.BytesIO(data) if kind == tarfile.REGTYPE else None


def test_a_crafted_archive_cannot_write_outside_the_run_folder(tmp_path):
    run_folder = tmp_path / "run" / "workspace"
    run_folder.mkdir(parents=True)
    (tmp_path / "run" / "escape.txt").write_text("host file")
    (run_folder / "was-a-file").write_text("old")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for info, data in (_member("workspace/../escape.txt", data=b"overwritten"),
                           _member("workspace/../../outside.txt"), _member("/etc/codeduet-abs.txt"),
                           _member("workspace/etc-link", tarfile.SYMTYPE, link="/etc"),
                           _member("workspace/up", tarfile.SYMTYPE, link="../.."),
                           _member("workspace/up/through-link.txt"),
                           _member("workspace/hard", tarfile.LNKTYPE, link="/etc/passwd"),
                           _member("workspace/tty", tarfile.CHRTYPE),
                           _member("workspace/fifo", tarfile.FIFOTYPE),
                           _member("workspace/was-a-file", tarfile.SYMTYPE, link="/etc/passwd"),
                           _member("workspace/ok/fine.txt", data=b"fine"),
                           _member("workspace/big.bin", data=b"b" * 5000),
                           _member("workspace/after-big.txt", data=b"never read")):
            tar.addfile(info, data)
    buf.seek(0)
    sync = WorkspaceSync(run_folder, (os.getuid(), os.getgid()), bound=4096, label="4k")
    from agents.sandbox.archive import CopyReport

    report = CopyReport(4096, "4k")
    assert sync._extract(buf, "", None, report, whole=True) is None  # stopped at the bound
    assert (tmp_path / "run" / "escape.txt").read_text() == "host file"
    assert not (tmp_path / "outside.txt").exists() and not Path("/etc/codeduet-abs.txt").exists()
    assert (run_folder / "ok" / "fine.txt").read_text() == "fine"
    assert (run_folder / "was-a-file").read_text() == "old"
    files = sorted(str(p.relative_to(run_folder)) for p in run_folder.rglob("*"))
    assert files == ["ok", "ok/fine.txt", "up", "up/through-link.txt", "was-a-file"]
    assert not any(p.is_symlink() for p in run_folder.rglob("*"))  # "up" is a real, empty-ish directory
    refused = " ".join(report.refused)
    for item in ("etc-link (", "up (", "hard (", "tty (", "fifo (", "was-a-file (", "path leaves the workspace"):
        assert item in refused, refused
    notes = "\n".join(report.notes())
    assert "big.bin (4.9 KiB)" in notes and "bounded to 4k per block" in notes and "not copied back" in notes
    assert not (run_folder / "after-big.txt").exists()
