"""The run folder a Ray node sends back is an untrusted archive: it lands only inside its own run folder."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from agents.cli.scaleout.archive import UnsafeArchive, pack_folder, safe_extract

RUN = "demo/20260101-000000-abcdef"


def archive(*members: tuple[str, str, str]) -> bytes:
    """A gzipped tar of (kind, name, data-or-link-target) entries: kind is file|dir|sym|hard|fifo."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for kind, name, data in members:
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(data.encode())
                tar.addfile(info, io.BytesIO(data.encode()))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE,
                         "fifo": tarfile.FIFOTYPE}[kind]
            info.linkname = data
            tar.addfile(info)
    return buf.getvalue()


def tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def test_a_packed_run_folder_comes_back_whole_with_its_inner_links(tmp_path):
    src = tmp_path / "node" / RUN
    (src / "workspace" / "sub").mkdir(parents=True)
    (src / "events.jsonl").write_text('{"type": "run_started"}\n')
    (src / "workspace" / "sub" / "data.txt").write_text("hello")
    os.symlink("sub/data.txt", src / "workspace" / "alias")
    dest = tmp_path / "caller"
    assert safe_extract(pack_folder(tmp_path / "node", RUN), dest, RUN) == []
    assert tree(dest / RUN) == tree(src)
    assert (dest / RUN / "workspace" / "alias").read_text() == "hello"
    assert tree(dest) == {"demo", RUN, *(f"{RUN}/{p}" for p in tree(src))}  # no staging folder left


@pytest.mark.parametrize("name", ["/etc/evil", f"{RUN}/../../evil", "other/run/evil", f"{RUN}/..\\evil"])
def test_an_entry_outside_the_run_folder_rejects_the_whole_archive(tmp_path, name):
    dest = tmp_path / "caller"
    data = archive(("file", f"{RUN}/events.jsonl", "{}"), ("file", name, "owned"))
    with pytest.raises(UnsafeArchive, match="nothing was extracted"):
        safe_extract(data, dest, RUN)
    assert not (dest / RUN).exists() and not (tmp_path / "evil").exists() and not Path("/etc/evil").exists()
    assert tree(dest) == set()


@pytest.mark.parametrize("kind,target", [("sym", "/etc/passwd"), ("sym", "../../../outside"),
                                         ("sym", "../../other-run/x"), ("hard", "/etc/passwd"),
                                         ("hard", "demo/other-run/x"), ("fifo", "")])
def test_links_leaving_the_run_folder_and_special_files_are_dropped_the_rest_kept(tmp_path, kind, target):
    dest = tmp_path / "caller"
    data = archive(("file", f"{RUN}/events.jsonl", "{}"), (kind, f"{RUN}/workspace/link", target),
                   ("file", f"{RUN}/workspace/after.txt", "kept"))
    skipped = safe_extract(data, dest, RUN)
    assert skipped == [f"{RUN}/workspace/link"]
    assert not os.path.lexists(dest / RUN / "workspace" / "link")
    assert (dest / RUN / "workspace" / "after.txt").read_text() == "kept"
    assert (dest / RUN / "events.jsonl").read_text() == "{}"


def test_a_file_written_through_an_inner_link_chain_cannot_climb_out(tmp_path):
    # "up" points at the run folder itself (allowed: it stays inside); "up/.." would climb, and is refused
    dest = tmp_path / "caller"
    data = archive(("dir", f"{RUN}/workspace", ""), ("sym", f"{RUN}/workspace/up", "."),
                   ("sym", f"{RUN}/workspace/out", "up/.."), ("file", f"{RUN}/workspace/up/ok.txt", "fine"))
    skipped = safe_extract(data, dest, RUN)
    assert skipped == [f"{RUN}/workspace/out"]
    assert (dest / RUN / "workspace" / "ok.txt").read_text() == "fine"
    assert tree(tmp_path) - {"caller"} == {f"caller/{p}" for p in tree(dest)}


def test_a_bomb_is_refused_before_anything_is_written(tmp_path):
    dest = tmp_path / "caller"
    data = archive(("file", f"{RUN}/a", "x" * 600), ("file", f"{RUN}/b", "x" * 600))
    with pytest.raises(UnsafeArchive, match="more than 1000 bytes"):
        safe_extract(data, dest, RUN, max_bytes=1000)
    many = archive(*[("file", f"{RUN}/f{i}", "") for i in range(20)])
    with pytest.raises(UnsafeArchive, match="more than 10 entries"):
        safe_extract(many, dest, RUN, max_members=10)
    assert tree(dest) == set()


def test_an_existing_run_folder_is_never_overwritten(tmp_path):
    dest = tmp_path / "caller"
    (dest / RUN).mkdir(parents=True)
    (dest / RUN / "events.jsonl").write_text("mine")
    with pytest.raises(UnsafeArchive, match="already exists"):
        safe_extract(archive(("file", f"{RUN}/events.jsonl", "theirs")), dest, RUN)
    assert (dest / RUN / "events.jsonl").read_text() == "mine"


def test_garbage_is_one_clear_error(tmp_path):
    with pytest.raises(UnsafeArchive, match="does not unpack"):
        safe_extract(b"not a tar at all", tmp_path / "caller", RUN)
