"""Figures and tables a block made: the images among the files it wrote (a matplotlib figure the image's backend
saved under figures/, or one the code saved itself), read for their size and the titles the backend wrote into the
PNG; and a kernel block's DataFrame value (agents/sandbox/kernel.py). The model is told what was drawn, never the
pixels; the terminal names the file, and the page and the HTML export show the image and the table."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

from agents.sandbox.archive import human
from agents.sandbox.kernel import VALUES_DIR

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".svg")
FIGURE_MAX = 12
"""The most figures one block reports (a loop that saves a thousand plots is listed by count)."""
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TEXT_KEYS = {"Title": "title", "Description": "axes"}


def png_info(path: Path) -> dict[str, Any]:
    """Width, height and the Title/Description text chunks of a PNG ({} when it is not one); reads the chunks
    before the image data only."""
    info: dict[str, Any] = {}
    try:
        with path.open("rb") as fh:
            if fh.read(8) != PNG_SIGNATURE:
                return {}
            for _ in range(64):
                head = fh.read(8)
                if len(head) < 8:
                    break
                length, kind = struct.unpack(">I4s", head)
                if kind == b"IDAT" or length > 1 << 20:
                    break
                data = fh.read(length)
                fh.read(4)  # CRC
                if kind == b"IHDR" and len(data) >= 8:
                    info["width"], info["height"] = struct.unpack(">II", data[:8])
                elif kind in (b"tEXt", b"zTXt", b"iTXt"):
                    key, text = _text_chunk(kind, data)
                    if key in TEXT_KEYS and text:
                        info[TEXT_KEYS[key]] = text[:300]
    except (OSError, struct.error, zlib.error, UnicodeDecodeError):
        return info
    return info


TEXT_MAX = 600
"""The most of a text chunk read (a compressed one is inflated no further: the PNG comes from sandboxed code)."""


def _text_chunk(kind: bytes, data: bytes) -> tuple[str, str]:
    key, _, rest = data.partition(b"\0")
    if kind == b"zTXt":
        rest = zlib.decompressobj().decompress(rest[1:], TEXT_MAX)
    elif kind == b"iTXt":  # compression flag, method, language\0, translated keyword\0, text
        flag, rest = rest[:1], rest[2:]
        rest = rest.split(b"\0", 2)[-1]
        rest = zlib.decompressobj().decompress(rest, TEXT_MAX) if flag == b"\1" else rest[:TEXT_MAX]
    return key.decode("latin-1"), rest.decode("utf-8" if kind == b"iTXt" else "latin-1")


def figures_of(workspace: Path, files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The images among a block's created or changed files: {path, size, width, height, title, axes}."""
    found = []
    for entry in files:
        path = str(entry.get("path", ""))
        if entry.get("change") == "deleted" or not path.lower().endswith(IMAGE_SUFFIXES):
            continue
        if len(found) == FIGURE_MAX:
            break
        full = workspace / path
        if not full.is_file() or full.is_symlink():
            continue
        found.append({"path": path, "size": full.stat().st_size, **png_info(full)})
    return found


def describe(figure: dict[str, Any]) -> str:
    """One line for a figure: `figures/block03-1.png (640x480 px, 21.3 KB; title: Sales; x: month, y: total)`."""
    parts = [f"{figure['width']}x{figure['height']} px" if figure.get("width") else "",
             human(int(figure.get("size") or 0))]
    axes, title = figure.get("axes") or "", figure.get("title") or ""
    detail = "; ".join(p for p in (", ".join(x for x in parts if x),
                                   f"title: {title}" if title and not axes.startswith(f"title: {title}") else "",
                                   axes) if p)
    return f"{figure['path']} ({detail})"


def table_of(workspace: Path, filename: str | None) -> dict[str, Any] | None:
    """The table a kernel block's last expression left (its DataFrame or Series value), or None."""
    if not filename:
        return None
    stem = Path(filename).stem
    path = workspace / VALUES_DIR / f"{stem}.json"
    try:
        if path.is_symlink() or path.stat().st_size > 2 << 20:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    finally:
        path.unlink(missing_ok=True)  # read once: the transcript keeps it, and the next block's is its own
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        return None
    rows = [[str(v) for v in row] for row in data["rows"] if isinstance(row, list)]
    columns = [str(c) for c in data.get("columns") or []] if isinstance(data.get("columns"), list) else []
    index = [str(i) for i in data.get("index") or []] if isinstance(data.get("index"), list) else []
    shape = data.get("shape")  # written in the sandbox: only two whole numbers are taken as its shape
    if not (isinstance(shape, list) and len(shape) == 2 and all(type(n) is int and n >= 0 for n in shape)):
        shape = [len(rows), len(columns)]
    return {"kind": "series" if data.get("kind") == "series" else "dataframe", "shape": shape, "columns": columns,
            "index": index, "rows": rows}
