"""data_chart: the run drew a chart: a PNG image in the workspace (matplotlib saves shown figures under figures/)."""

import struct
from pathlib import Path


def pngs():
    return [p for p in Path(".").rglob("*.png") if p.is_file() and not p.is_symlink()]


def size(path):
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def test_a_chart_was_drawn():
    found = pngs()
    assert found, "no PNG chart in the working directory: draw it with matplotlib and call plt.show()"
    width, height = size(found[0])
    assert width >= 200 and height >= 150, f"{found[0]} is {width}x{height}: too small to be a chart"


def test_the_chart_has_the_title():
    titled = [p for p in pngs() if b"Revenue per month" in p.read_bytes()[:4096]]
    assert titled, 'no chart carries the title "Revenue per month" (set it with plt.title)'
