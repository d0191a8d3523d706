"""codeduet's matplotlib backend inside the sandbox image (MPLBACKEND=module://codeduet_figures): Agg, with no
display, and every figure a program shows (`plt.show()`) or leaves open when it ends is saved as a PNG under
/workspace/figures/, named after the script (block03-1.png). The Python kernel (agents/sandbox/kernel.py) calls
`save_open()` after each block. The PNG carries the figure's titles and axis labels as text chunks, which the host
reads to tell the model what was drawn (agents/feedback/figures.py). A figure the program saved itself with savefig and
did
not change since is not saved twice.

Every PNG matplotlib writes in the sandbox carries the figure's titles and axis labels as text chunks.

This file is copied into the image; it runs only there, under the sandbox's limits."""

import atexit
import os
import sys

from matplotlib.backends.backend_agg import FigureCanvasAgg

FOLDER = os.environ.get("CODEDUET_FIGURES") or os.path.join(os.getcwd(), "figures")
prefix = ""
"""The stem of the next figures' names; empty: the running script's name."""
_counts: dict = {}


class FigureCanvas(FigureCanvasAgg):
    """Agg, remembering that the program saved the figure itself."""

    def print_figure(self, filename, *args, **kwargs):
        ours = kwargs.pop("_codeduet", False)
        fmt = kwargs.get("format") or os.path.splitext(str(getattr(filename, "name", filename)))[1][1:] or "png"
        if str(fmt).lower() == "png" and not kwargs.get("metadata"):  # a PNG says what it shows, whoever saves it
            kwargs["metadata"] = _describe(self.figure)
        result = super().print_figure(filename, *args, **kwargs)
        self.figure._codeduet_saved = not ours
        self.figure.stale = False
        return result


def _name():
    stem = prefix or os.path.splitext(os.path.basename(sys.argv[0] or ""))[0] or "figure"
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem) or "figure"
    _counts[stem] = _counts.get(stem, 0) + 1
    return os.path.join(FOLDER, "%s-%d.png" % (stem, _counts[stem]))


def _describe(fig):
    """The figure's title and, axis by axis, its title and labels (short text, for the PNG's text chunks)."""
    suptitle = getattr(fig, "_suptitle", None)
    titles = [suptitle.get_text()] if suptitle is not None and suptitle.get_text() else []
    axes = []
    for ax in fig.axes:
        parts = [("title", ax.get_title()), ("x", ax.get_xlabel()), ("y", ax.get_ylabel())]
        axes.append(", ".join("%s: %s" % (k, v) for k, v in parts if v))
        if not titles and ax.get_title():
            titles.append(ax.get_title())
    return {"Title": (titles[0] if titles else "")[:200], "Description": " | ".join(a for a in axes if a)[:500]}


def save_open():
    """Save every open figure that has something on it (and that the program did not just save itself) as a PNG
    under FOLDER, then close them all; the paths saved."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return []
    saved = []
    for num in pyplot.get_fignums():
        fig = pyplot.figure(num)
        if not (fig.axes or fig.texts or fig.images) or (getattr(fig, "_codeduet_saved", False) and not fig.stale):
            continue
        try:
            os.makedirs(FOLDER, exist_ok=True)
            path = _name()
            fig.canvas.print_figure(path, format="png", _codeduet=True)
            saved.append(path)
        except Exception as exc:  # a full disk, a figure that cannot draw: said, never fatal
            print("[codeduet: figure %s could not be saved: %s]" % (num, exc), file=sys.stderr)
    pyplot.close("all")
    return saved


def show(*args, **kwargs):
    """plt.show(): there is no display, so the figures are saved."""
    save_open()


atexit.register(save_open)
