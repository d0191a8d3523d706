"""What the host reads of a block's figures and tables, and the kernel session's settings (no Docker here)."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import pytest
from pydantic import ValidationError

from agents.feedback.figures import describe, figures_of, png_info, table_of
from agents.feedback.prompts import system_message
from agents.loop.protocols import ExecResult
from agents.sandbox.config import SandboxConfig
from agents.sandbox.kernel import VALUES_DIR, kernel_argv, kernel_history
from tests.helpers import run_cli


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(path: Path, width: int, height: int, **text: str) -> Path:
    body = chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    body += b"".join(chunk(b"tEXt", k.encode() + b"\0" + v.encode("latin-1")) for k, v in text.items())
    body += chunk(b"IDAT", zlib.compress(b"\0" * (width * 3 + 1) * height)) + chunk(b"IEND", b"")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + body)
    return path


def test_a_png_gives_its_size_and_the_titles_matplotlib_wrote(tmp_path: Path):
    png(tmp_path / "figures/block03-1.png", 640, 480, Title="Sales", Description="title: Sales, x: month")
    png(tmp_path / "plain.png", 20, 10)
    (tmp_path / "notes.txt").write_text("not an image")
    files = [{"path": p, "change": c} for p, c in (("figures/block03-1.png", "created"), ("plain.png", "changed"),
                                                   ("notes.txt", "created"), ("gone.png", "deleted"))]
    found = figures_of(tmp_path, files)
    assert [f["path"] for f in found] == ["figures/block03-1.png", "plain.png"]
    assert describe(found[0]).startswith("figures/block03-1.png (640x480 px, ")
    assert describe(found[0]).endswith("; title: Sales, x: month)")  # the axes line says the title once
    assert png_info(tmp_path / "notes.txt") == {}


def test_a_kernel_table_is_read_once_and_every_cell_is_text(tmp_path: Path):
    values = tmp_path / VALUES_DIR
    values.mkdir(parents=True)
    (values / "block02.json").write_text(json.dumps({"kind": "dataframe", "shape": [2, 1], "columns": ["x"],
                                                     "index": [0, 1], "rows": [[1], ["<b>"]]}))
    assert table_of(tmp_path, "block02.py") == {"kind": "dataframe", "shape": [2, 1], "columns": ["x"],
                                                "index": ["0", "1"], "rows": [["1"], ["<b>"]]}
    assert table_of(tmp_path, "block02.py") is None


def test_the_kernel_history_restarts_with_the_kernel_and_skips_a_timed_out_block():
    ok = ExecResult(exit_code=0, output="", duration_s=0.1)
    assert kernel_history(["a.py"], "b.py", ok) == ["a.py", "b.py"]
    assert kernel_history(["a.py"], "b.py", ExecResult(exit_code=124, output="", duration_s=5, timed_out=True)) \
        == ["a.py"]
    died = ExecResult(exit_code=3, output="[codeduet: the Python kernel died during this block (x)]", duration_s=0)
    assert kernel_history(["a.py"], "b.py", died) == []
    fresh = ExecResult(exit_code=0, output="[codeduet: a fresh Python kernel: ...]", duration_s=0)
    assert kernel_history(["a.py"], "b.py", fresh) == ["b.py"]


def test_the_kernel_is_a_docker_session_and_its_prompt_says_state_persists():
    assert SandboxConfig().session == "process"
    with pytest.raises(ValidationError, match="session: kernel needs the docker sandbox"):
        SandboxConfig(kind="local", session="kernel")
    assert "same interpreter" in system_message(kernel=True)
    assert "same interpreter" not in system_message()
    argv = kernel_argv("python3", "block01.py", True)
    compile(argv[3], "client", "exec")  # the client, with the kernel's source in it, is valid Python
    assert argv[-2:] == ["/tmp/.codeduet-kernel", "block01.py"]


def test_a_bad_session_is_one_line_and_exit_2():
    result = run_cli("chat", "--session", "notebook")
    assert result.returncode == 2 and "--session is kernel or process, not 'notebook'" in result.stderr


def test_what_sandboxed_code_writes_cannot_blow_up_the_host(tmp_path: Path):
    """A PNG whose text chunk inflates to gigabytes is read only so far; a table with a made-up shape gets its real
    one; a thousand images are listed by the first FIGURE_MAX."""
    bomb = zlib.compress(b"x" * (64 << 20))
    body = chunk(b"IHDR", struct.pack(">IIBBBBB", 10, 10, 8, 2, 0, 0, 0)) + chunk(b"zTXt", b"Title\0\0" + bomb)
    (tmp_path / "bomb.png").write_bytes(b"\x89PNG\r\n\x1a\n" + body + chunk(b"IEND", b""))
    assert len(png_info(tmp_path / "bomb.png")["title"]) <= 300
    for i in range(30):
        png(tmp_path / f"many/{i}.png", 2, 2)
    assert len(figures_of(tmp_path, [{"path": f"many/{i}.png", "change": "created"} for i in range(30)])) == 12
    values = tmp_path / VALUES_DIR
    values.mkdir(parents=True)
    (values / "block01.json").write_text(json.dumps({"rows": [["1"]], "shape": 5, "columns": "x", "kind": "<b>"}))
    assert table_of(tmp_path, "block01.py") == {"kind": "dataframe", "shape": [1, 0], "columns": [], "index": [],
                                                "rows": [["1"]]}
